//! How many events a run will take, estimated from the workload before it starts, so that
//! a run that would take hours (50 tasks with 1 ns run/sleep phases) can be refused with
//! the figure instead of silently running, and a long one can show progress.
//!
//! An order of magnitude, not a count: each source is counted at the rate it would
//! produce events if nothing delayed it (a job or phase that waits for a CPU produces its
//! events later, or not at all before the end of the run).

use schedlab_model::{Ns, Phase, Workload};

/// Events per periodic job: its release, its completion, and about one more (a deadline
/// check, a budget timer or a preemption); measured 2.7 on the bench's `simso-64x8`.
const EVENTS_PER_JOB: f64 = 3.0;

/// The estimated events of a run, in total and by source.
#[derive(Debug, Clone, PartialEq)]
pub struct EventEstimate {
    /// All sources together.
    pub total: f64,
    /// `(source, events)`, largest first; sources with no events are left out.
    pub parts: Vec<(&'static str, f64)>,
}

impl EventEstimate {
    /// `1.0e10 events (run/sleep phases 1.0e10, ticks 2.0e2)`: the total and its
    /// sources.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(name, n)| format!("{name} {n:.1e}"))
            .collect();
        format!("{:.1e} events ({})", self.total, parts.join(", "))
    }
}

/// Estimate the events a simulation of `w` processes: periodic jobs, run/sleep phases,
/// latency probes, interrupts and ticks.
pub fn estimate_events(w: &Workload) -> EventEstimate {
    let span = |offset: Ns| w.duration.saturating_sub(offset) as f64;
    let (mut jobs, mut phases, mut probes) = (0.0, 0.0, 0.0);
    for t in &w.tasks {
        let steps = t.phases.len() as f64;
        if let Some(p) = t.probe {
            probes += 2.0 * span(t.offset) / p.interval.max(1) as f64;
        } else if let Some(period) = t.period {
            jobs += (EVENTS_PER_JOB + steps) * span(t.offset) / period.max(1) as f64;
        } else if !t.phases.is_empty() {
            let cycle: Ns = t
                .phases
                .iter()
                .map(|p| match *p {
                    Phase::Run(n) | Phase::Sleep(n) => n,
                })
                .sum();
            phases += steps * span(t.offset) / cycle.max(1) as f64;
        }
    }
    let irqs: f64 = w
        .platform
        .irqs
        .iter()
        .map(|i| {
            let cpus = if i.per_cpu { i.cpus.len().max(1) } else { 1 };
            2.0 * cpus as f64 * span(i.offset) / i.period.max(1) as f64
        })
        .sum();
    // One event per tick for all CPUs at once.
    let ticks = w.duration as f64 * w.platform.hz as f64 / 1e9;
    let mut parts: Vec<(&'static str, f64)> = [
        ("periodic jobs", jobs),
        ("run/sleep phases", phases),
        ("probes", probes),
        ("interrupts", irqs),
        ("ticks", ticks),
    ]
    .into_iter()
    .filter(|p| p.1 > 0.0)
    .collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    EventEstimate {
        total: parts.iter().map(|p| p.1).sum(),
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::Overrides;
    use std::path::Path;

    fn load(y: &str) -> Workload {
        Workload::parse_str(y, Path::new("w.yaml"), &Overrides::default()).unwrap()
    }

    /// Hand-counted: 2 tasks × 100 jobs × 3 events + 1000 ticks.
    #[test]
    fn periodic_jobs_and_ticks() {
        let w = load(
            "platform: { cpus: 2, hz: 1000 }\nduration: 1s\ntasks:\n\
             - { name: a, runtime: 1ms, period: 10ms }\n\
             - { name: b, runtime: 2ms, period: 10ms }\n",
        );
        let e = estimate_events(&w);
        assert_eq!(e.total, 1600.0);
        assert_eq!(e.parts, vec![("ticks", 1000.0), ("periodic jobs", 600.0)]);
    }

    /// The case: 50 tasks with 1 ns run and sleep phases for 200 ms make two
    /// events every 2 ns each: 50 × 2 × 10^8.
    #[test]
    fn nanosecond_phases_are_counted_per_phase() {
        let mut y = "platform: { cpus: 2, hz: 0 }\nduration: 200ms\ntasks:\n".to_string();
        for i in 0..50 {
            y += &format!("  - {{ name: t{i}, run: 1ns, sleep: 1ns }}\n");
        }
        let e = estimate_events(&load(&y));
        assert_eq!(e.total, 1e10);
        assert_eq!(e.describe(), "1.0e10 events (run/sleep phases 1.0e10)");
    }
}
