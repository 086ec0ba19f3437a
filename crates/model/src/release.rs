//! The random part of a periodic task's jobs: each job's execution time and the gap to
//! the next release, drawn from one deterministic stream per task.
//!
//! The simulator and the real runner both draw from [`ReleaseStream`], so the same
//! workload and seed give the same jobs on both sides. Per task `i` the stream is a
//! ChaCha8 generator seeded with `seed ^ i × 0x9E3779B97F4A7C15` ([`task_seed`]); per job
//! it draws first the execution time (`exec: { uniform: [min, max] }`: uniform in
//! `[min, max]`; `wcet`: the runtime, no draw), then the gap (`periodic`: the period, no
//! draw; `sporadic`: the period plus a uniform delay in `[0, jitter]`, no draw when the
//! jitter is 0).

use crate::time::Ns;
use crate::workload::{ExecModel, Release, Task, Workload};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The seed of task `task`'s stream in a workload seeded with `seed`.
pub fn task_seed(seed: u64, task: usize) -> u64 {
    seed ^ (task as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One job as drawn: how long it runs and when the next one comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobDraw {
    /// Execution time of this job (ns).
    pub exec: Ns,
    /// Time from this job's release to the next one's (ns).
    pub gap: Ns,
}

/// The jobs of one periodic task, in release order (an endless stream).
#[derive(Debug, Clone)]
pub struct ReleaseStream {
    /// Made at the first draw that needs it: a task whose jobs are all alike (the usual
    /// case) then costs no generator state (~300 bytes), and the sequence is the same.
    rng: Option<Box<ChaCha8Rng>>,
    seed: u64,
    exec: ExecModel,
    release: Release,
    runtime: Ns,
    period: Ns,
}

impl ReleaseStream {
    /// The stream of task `task` (its index in `w.tasks`) under the workload's seed.
    pub fn new(w: &Workload, task: usize) -> ReleaseStream {
        ReleaseStream::for_task(&w.tasks[task], task_seed(w.seed, task))
    }

    /// The stream of `t` from an explicit seed (see [`task_seed`]). A task without a
    /// period has an endless gap.
    pub fn for_task(t: &Task, seed: u64) -> ReleaseStream {
        ReleaseStream {
            rng: None,
            seed,
            exec: t.exec,
            release: t.release,
            runtime: t.runtime,
            period: t.period.unwrap_or(Ns::MAX),
        }
    }

    /// Draw the next job: its execution time, then the gap to the following release.
    pub fn next_job(&mut self) -> JobDraw {
        let exec = match self.exec {
            ExecModel::Wcet => self.runtime,
            ExecModel::Uniform { min, max } => self.rng().random_range(min..=max),
            ExecModel::Normal { mean, stddev } => {
                let runtime = self.runtime;
                normal_exec(self.rng(), mean, stddev, runtime)
            }
        };
        let gap = match self.release {
            Release::Periodic => self.period,
            Release::Sporadic { jitter: 0 } => self.period,
            Release::Sporadic { jitter } => self
                .period
                .saturating_add(self.rng().random_range(0..=jitter)),
        };
        JobDraw { exec, gap }
    }
}

/// A normal draw (Box–Muller on two uniform draws of `rng`) around `mean` with standard
/// deviation `stddev`, rounded to the nanosecond and clipped to [1 ns, `runtime`].
fn normal_exec(rng: &mut ChaCha8Rng, mean: Ns, stddev: Ns, runtime: Ns) -> Ns {
    // u1 in (0, 1] so its logarithm is finite.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    let x = (mean as f64 + stddev as f64 * z).round();
    if x < 1.0 {
        1
    } else if x >= runtime as f64 {
        runtime
    } else {
        x as Ns
    }
}

impl ReleaseStream {
    fn rng(&mut self) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.rng
            .get_or_insert_with(|| Box::new(ChaCha8Rng::seed_from_u64(seed)))
    }
}

impl Iterator for ReleaseStream {
    type Item = JobDraw;

    fn next(&mut self) -> Option<JobDraw> {
        Some(self.next_job())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};
    use crate::workload::{inline_path, Overrides};

    fn workload(seed: u64) -> Workload {
        let yaml = format!(
            "seed: {seed}\ntasks:
  - {{ name: plain, runtime: 2ms, period: 10ms }}
  - {{ name: spor, runtime: 2ms, period: 10ms, release: sporadic, jitter: 3ms,
      exec: {{ uniform: [500us, 2ms] }} }}
  - {{ name: nojit, runtime: 1ms, period: 5ms, release: sporadic, exec: {{ uniform: [1us, 1ms] }} }}
"
        );
        Workload::parse_str(&yaml, &inline_path(), &Overrides::default()).unwrap()
    }

    fn first(w: &Workload, task: usize, n: usize) -> Vec<(Ns, Ns)> {
        ReleaseStream::new(w, task)
            .take(n)
            .map(|j| (j.exec, j.gap))
            .collect()
    }

    #[test]
    fn first_draws_for_seed_42_are_pinned() {
        // The simulator's sequence (crates/linux tests compare it with the simulator's
        // event log); a change here changes every sporadic or uniform result.
        let w = workload(42);
        assert_eq!(first(&w, 0, 3), [(2 * MS, 10 * MS); 3]);
        assert_eq!(
            first(&w, 1, 4),
            [
                (1_729_327, 12_921_485),
                (532_344, 10_923_089),
                (1_560_545, 11_218_509),
                (1_951_763, 12_665_508),
            ]
        );
        // Sporadic without jitter: only the execution time is drawn.
        assert_eq!(
            first(&w, 2, 3),
            [(664_277, 5 * MS), (849_739, 5 * MS), (834_576, 5 * MS)]
        );
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let w = workload(7);
        for j in ReleaseStream::new(&w, 1).take(1000) {
            assert!((500 * US..=2 * MS).contains(&j.exec), "{j:?}");
            assert!((10 * MS..=13 * MS).contains(&j.gap), "{j:?}");
        }
    }

    #[test]
    fn tasks_and_seeds_get_their_own_streams() {
        let w = workload(42);
        assert_ne!(first(&w, 1, 8), first(&workload(43), 1, 8));
        assert_eq!(first(&w, 1, 8), first(&workload(42), 1, 8));
        assert_eq!(task_seed(42, 0), 42);
        assert_ne!(task_seed(42, 1), task_seed(42, 2));
    }
}
