//! A workload whose tasks are plain periodic tasks (name, runtime, period and deadline,
//! nothing else), built on another workload's platform and scheduler without reading a
//! spec: a sweep builds one such workload per generated set, thousands a second, and
//! [`Workload::from_spec`]'s general path (a spec per task, every optional field looked
//! at) was about a twentieth of a cell's work outside the simulation.

use crate::limits::{MAX_TASKS, MAX_TASK_CPUS};
use crate::time::Ns;
use crate::workload::{ExecModel, Release, Task, TaskClass, Workload};

/// One plain periodic task: name, runtime, period, deadline (ns).
pub type PeriodicTask<'a> = (&'a str, Ns, Ns, Ns);

impl Workload {
    /// The workload [`Workload::from_spec`] builds from a spec that differs from the one
    /// that built `self` only in its `name`, its `seed` and its tasks, each of which sets
    /// only `name`, `runtime`, `period` and `deadline`: `self`'s platform, duration,
    /// miss rule and scheduler with these tasks (class `deadline`, released
    /// periodically from 0, running for their runtime).
    ///
    /// The caller vouches that `self` came from such a spec with the same overrides
    /// (none for the seed) and a fixed duration (a hyperperiod depends on the tasks).
    /// `None` whenever `from_spec` could refuse the new spec or answer otherwise (an empty
    /// or blank name, a time that is 0, runtime > deadline > period, two tasks with one
    /// name, the task limits): the caller then takes `from_spec`'s path, whose message is
    /// the reference.
    pub fn with_periodic_tasks(
        &self,
        name: &str,
        seed: u64,
        tasks: &[PeriodicTask<'_>],
    ) -> Option<Workload> {
        self.periodic_tasks_fit(tasks).then(|| {
            self.with_fitting_periodic_tasks(
                name,
                seed,
                tasks.iter().map(|&(t, r, p, d)| (t.to_string(), r, p, d)),
            )
        })
    }

    /// Whether [`Workload::with_periodic_tasks`] would give a workload for `tasks` (else
    /// `from_spec` could refuse the spec or answer otherwise).
    pub fn periodic_tasks_fit(&self, tasks: &[PeriodicTask<'_>]) -> bool {
        let n = tasks.len() as u64;
        if n == 0 || n > MAX_TASKS || n.saturating_mul(self.platform.cpus as u64) > MAX_TASK_CPUS {
            return false;
        }
        // `build_task`'s checks for a task with a period and no class (a deadline task):
        // a period, a runtime and a deadline above 0, runtime ≤ deadline ≤ period; no
        // priority, nice, affinity, phases, jitter or exec model given.
        let valid = |&(task, runtime, period, deadline): &PeriodicTask<'_>| {
            !blank(task) && runtime > 0 && runtime <= deadline && deadline <= period
        };
        tasks.iter().all(valid) && unique(tasks)
    }

    /// [`Workload::with_periodic_tasks`] for tasks that [`Workload::periodic_tasks_fit`]
    /// accepted, their names given owned (a sweep moves its generated names in rather
    /// than copying them: 16 allocations and frees a cell).
    pub fn with_fitting_periodic_tasks(
        &self,
        name: &str,
        seed: u64,
        tasks: impl ExactSizeIterator<Item = (String, Ns, Ns, Ns)>,
    ) -> Workload {
        let mut out = Vec::with_capacity(tasks.len());
        for (task, runtime, period, deadline) in tasks {
            out.push(Task {
                name: task,
                class: TaskClass::Deadline,
                runtime,
                period: Some(period),
                deadline,
                offset: 0,
                priority: None,
                nice: 0,
                affinity: None,
                release: Release::Periodic,
                exec: ExecModel::Wcet,
                work: None,
                phases: Vec::new(),
                probe: None,
            });
        }
        Workload {
            name: name.to_string(),
            platform: self.platform.clone(),
            duration: self.duration,
            seed,
            on_miss: self.on_miss,
            scheduler: self.scheduler.clone(),
            tasks: out,
        }
    }
}

/// Sets of at most this many tasks have their short names compared pair by pair.
const PAIRWISE: usize = 16;

/// `name.trim().is_empty()`, without trimming a name that starts with a visible
/// character (every generated one).
fn blank(name: &str) -> bool {
    match name.as_bytes().first() {
        Some(b) if b.is_ascii_graphic() => false,
        _ => name.trim().is_empty(),
    }
}

/// No two tasks share a name, as `from_spec` requires. Names of at most 7 bytes (a
/// generated set's `t1`, `t2`, ...) are compared as one integer each (length and bytes);
/// any longer name sorts the strings. Up to [`PAIRWISE`] short names are compared pair by
/// pair in place (a sweep cell's 16: no vector allocated and sorted).
fn unique(tasks: &[PeriodicTask<'_>]) -> bool {
    let short = |name: &str| {
        let b = name.as_bytes();
        (b.len() <= 7).then(|| {
            let mut key = [0u8; 8];
            key[0] = b.len() as u8;
            key[1..=b.len()].copy_from_slice(b);
            u64::from_be_bytes(key)
        })
    };
    if tasks.len() <= PAIRWISE {
        let mut keys = [0u64; PAIRWISE];
        let all_short = tasks
            .iter()
            .zip(&mut keys)
            .all(|(t, k)| short(t.0).map(|s| *k = s).is_some());
        if all_short {
            let keys = &keys[..tasks.len()];
            return (1..keys.len()).all(|i| !keys[..i].contains(&keys[i]));
        }
    }
    if let Some(mut keys) = tasks
        .iter()
        .map(|t| short(t.0))
        .collect::<Option<Vec<u64>>>()
    {
        keys.sort_unstable();
        return keys.windows(2).all(|w| w[0] != w[1]);
    }
    let mut names: Vec<&str> = tasks.iter().map(|t| t.0).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}
