//! The jobs a worker thread releases: release instants, execution times and absolute
//! deadlines, drawn from the model's [`ReleaseStream`] exactly as the simulator draws
//! them, so a workload and seed give the same jobs for real and simulated.

use schedlab_model::release::task_seed;
use schedlab_model::{Ns, ReleaseStream, Task, Workload};

/// One job, in ns after the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedJob {
    /// Release instant.
    pub release: Ns,
    /// Execution time (CPU time to burn; `Ns::MAX` for an endless CPU-bound task).
    pub exec: Ns,
    /// Absolute deadline (`Ns::MAX` for a task without one).
    pub deadline: Ns,
}

/// The jobs of one task, in release order: endless for a periodic task, a single job
/// (its `work`, or endless CPU use) for an aperiodic one.
#[derive(Debug, Clone)]
pub struct JobPlan {
    /// Draws of a periodic task (None: aperiodic).
    stream: Option<ReleaseStream>,
    /// Next release; None once an aperiodic task's job was handed out.
    next: Option<Ns>,
    /// Relative deadline of a periodic task's jobs.
    rel_deadline: Ns,
    /// Execution time of an aperiodic task's job.
    work: Ns,
}

impl JobPlan {
    /// The plan of task `task` (its index in `w.tasks`) under the workload's seed.
    pub fn new(w: &Workload, task: usize) -> JobPlan {
        JobPlan::for_task(&w.tasks[task], task_seed(w.seed, task))
    }

    /// The plan of `t` with its stream seeded by `seed` (see [`task_seed`]).
    pub fn for_task(t: &Task, seed: u64) -> JobPlan {
        let rel_deadline = match (t.deadline, t.period) {
            (0, Some(p)) => p,
            (0, None) => Ns::MAX,
            (d, _) => d,
        };
        JobPlan {
            stream: t.period.map(|_| ReleaseStream::for_task(t, seed)),
            next: Some(t.offset),
            rel_deadline,
            work: t.work.unwrap_or(Ns::MAX),
        }
    }

    /// The next job (None when the task has no more).
    pub fn next_job(&mut self) -> Option<PlannedJob> {
        let release = self.next?;
        match &mut self.stream {
            Some(stream) => {
                let draw = stream.next_job();
                self.next = Some(release.saturating_add(draw.gap));
                Some(PlannedJob {
                    release,
                    exec: draw.exec,
                    deadline: release.saturating_add(self.rel_deadline),
                })
            }
            None => {
                self.next = None;
                Some(PlannedJob {
                    release,
                    exec: self.work,
                    deadline: Ns::MAX,
                })
            }
        }
    }
}

impl Iterator for JobPlan {
    type Item = PlannedJob;

    fn next(&mut self) -> Option<PlannedJob> {
        self.next_job()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::time::MS;
    use schedlab_model::Overrides;
    use schedlab_sim::result::SimEvent;
    use schedlab_sim::{simulate, SimOptions};
    use std::path::Path;

    const MIXED: &str = "\
seed: 20240611
platform: { cpus: 2 }
duration: 2s
tasks:
  - { name: spor, runtime: 4ms, period: 10ms, offset: 3ms, release: sporadic, jitter: 7ms,
      exec: { uniform: [1ms, 4ms] } }
  - { name: per, runtime: 2ms, period: 15ms }
  - { name: var, runtime: 6ms, period: 20ms, deadline: 18ms, exec: { uniform: [100us, 6ms] } }
  - { name: jit, runtime: 1ms, period: 7ms, release: sporadic, jitter: 2ms }
  - { name: hog, nice: 2, work: 30ms }
";

    fn workload() -> Workload {
        Workload::parse_str(MIXED, Path::new("mixed.yaml"), &Overrides::default()).unwrap()
    }

    /// (release, exec) of every job the simulator released for `task`.
    fn simulated(w: &Workload, task: usize) -> Vec<(Ns, Ns)> {
        let r = simulate(w, &SimOptions { trace: true }).unwrap();
        r.log
            .unwrap()
            .iter()
            .filter_map(|e| match *e {
                SimEvent::Release {
                    time,
                    task: t,
                    exec,
                    ..
                } if t == task => Some((time, exec)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_runner_releases_the_simulators_jobs() {
        let w = workload();
        for (i, t) in w
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.period.is_some())
        {
            let sim = simulated(&w, i);
            let planned: Vec<(Ns, Ns)> = JobPlan::new(&w, i)
                .take_while(|j| j.release < w.duration)
                .map(|j| (j.release, j.exec))
                .collect();
            assert!(sim.len() > 50, "{}: {} jobs", t.name, sim.len());
            assert_eq!(planned, sim, "task {}", t.name);
        }
    }

    #[test]
    fn sporadic_uniform_jobs_vary_and_stay_in_range() {
        let w = workload();
        let jobs: Vec<PlannedJob> = JobPlan::new(&w, 0).take(200).collect();
        assert_eq!(jobs[0].release, 3 * MS);
        for (j, next) in jobs.iter().zip(&jobs[1..]) {
            assert!((MS..=4 * MS).contains(&j.exec), "{j:?}");
            assert!((10 * MS..=17 * MS).contains(&(next.release - j.release)));
            assert_eq!(j.deadline, j.release + 10 * MS);
        }
        assert!(jobs.iter().any(|j| j.exec != jobs[0].exec));
    }

    #[test]
    fn an_aperiodic_task_has_one_job_without_deadline() {
        let w = workload();
        let jobs: Vec<PlannedJob> = JobPlan::new(&w, 4).collect();
        assert_eq!(
            jobs,
            [PlannedJob {
                release: 0,
                exec: 30 * MS,
                deadline: Ns::MAX
            }]
        );
    }
}
