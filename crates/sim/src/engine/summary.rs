//! A run's headline counts without the full result: what a sweep's row keeps of a
//! simulation. [`Engine::run`] builds a [`SimResult`] (per-task results, latency
//! statistics, per-CPU figures, names cloned), about 28,000 instructions for a set of
//! 16 tasks, of which a sweep reads eight numbers.

use super::*;

/// The numbers of a finished run that a sweep's row keeps; each is computed as
/// [`Engine::run`]'s [`SimResult`] computes the field of the same name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSummary {
    /// [`SimResult::duration_ns`].
    pub duration_ns: Ns,
    /// [`SimResult::horizon_complete`].
    pub horizon_complete: bool,
    /// [`SimResult::deadline_misses`] (jobs unfinished past their deadline included).
    pub deadline_misses: u64,
    /// [`SimResult::context_switches_per_cpu_per_s`].
    pub context_switches_per_cpu_per_s: f64,
    /// [`SimResult::preemptions`].
    pub preemptions: u64,
    /// [`SimResult::migrations`].
    pub migrations: u64,
    /// [`SimResult::scheduler_invocations`].
    pub scheduler_invocations: u64,
    /// [`SimResult::events`].
    pub events: u64,
}

impl RunSummary {
    /// The same numbers read from a full result.
    pub fn of(r: &SimResult) -> Self {
        RunSummary {
            duration_ns: r.duration_ns,
            horizon_complete: r.horizon_complete,
            deadline_misses: r.deadline_misses,
            context_switches_per_cpu_per_s: r.context_switches_per_cpu_per_s,
            preemptions: r.preemptions,
            migrations: r.migrations,
            scheduler_invocations: r.scheduler_invocations,
            events: r.events,
        }
    }
}

impl Engine {
    /// Run to the end as [`Engine::run`] does (the same schedule) and return only the
    /// [`RunSummary`]. Debug builds also build the full result and compare.
    pub fn run_summary(mut self) -> RunSummary {
        self.run_to(self.duration, true);
        self.advance_all(self.duration);
        let end = self.duration;
        // As `finish`: jobs still unfinished whose deadline has passed count as misses.
        let deadline_misses = self
            .tasks
            .iter()
            .map(|ts| ts.stats.misses + metrics::late_at_end(ts, end))
            .sum();
        let switches: u64 = self.cpus.iter().map(|c| c.switches).sum();
        let secs = end as f64 / S as f64;
        let summary = RunSummary {
            duration_ns: end,
            horizon_complete: self.feasibility.complete(end),
            deadline_misses,
            context_switches_per_cpu_per_s: switches as f64 / self.cpus.len() as f64 / secs,
            preemptions: self.tasks.iter().map(|t| t.stats.preemptions).sum(),
            migrations: self.tasks.iter().map(|t| t.stats.migrations).sum(),
            scheduler_invocations: self.invocations,
            events: self.events_processed + self.ticks_counted,
        };
        if cfg!(debug_assertions) {
            let full = RunSummary::of(&self.finish(0.0));
            // Bit for bit, the float included (NaN for a zero duration compares unequal).
            assert!(
                format!("{full:?}") == format!("{summary:?}"),
                "run_summary {summary:?} differs from finish's {full:?}"
            );
        }
        summary
    }
}
