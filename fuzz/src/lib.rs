//! What the simulate targets share: the caps that keep every input fast, and the checks
//! no schedule may break.

use schedlab_model::{Phase, Workload};
use schedlab_sim::{simulate_checked as simulate, SimError, SimOptions};

const US: u64 = 1_000;
/// Simulated time of one input.
pub const MAX_SIM_NS: u64 = 20_000 * US;
/// Shortest period, phase, interrupt period, timer or section interval simulated.
const MIN_STEP: u64 = 10 * US;

/// Whether `w` is small enough to simulate within milliseconds: at most 4 CPUs and 16
/// tasks, no period or phase under 10 µs, tick ≤ 10 kHz, ≤ 1000 wheel timers.
pub fn small_enough(w: &Workload) -> bool {
    let p = &w.platform;
    let short = |ns: u64| ns < MIN_STEP;
    p.cpus <= 4
        && w.tasks.len() <= 16
        && p.hz <= 10_000
        && !p.irqs.iter().any(|i| short(i.period))
        && p.timers.as_ref().is_none_or(|t| {
            t.groups
                .iter()
                .map(|g| g.count.saturating_mul(g.cpus.len() as u64))
                .sum::<u64>()
                <= 1000
                && t.groups.iter().all(|g| !short(g.timeout))
        })
        && p.kernel_sections.is_none_or(|k| !short(k.every))
        && !short(w.scheduler.rr_timeslice)
        && !w.tasks.iter().any(|t| {
            t.period.is_some_and(short)
                || t.phases
                    .iter()
                    .any(|ph| matches!(ph, Phase::Run(d) | Phase::Sleep(d) if short(*d)))
        })
}

/// Simulate `w` (its duration capped at [`MAX_SIM_NS`]) when it is small enough, with the
/// engine's invariant checker on, and panic on a violation or on a schedule that breaks
/// what every schedule keeps: jobs completed ≤ released,
/// segments inside the run and on the task's allowed CPUs, no CPU running two tasks at
/// once, CPU time ≤ CPUs × duration.
pub fn simulate_checked(mut w: Workload) {
    if !small_enough(&w) {
        return;
    }
    w.duration = w.duration.min(MAX_SIM_NS);
    // The engine's own invariant checker runs after every instant (class priority
    // order, work conservation under global placement, queue consistency, accounting).
    let r = match simulate(&w, &SimOptions { trace: true }) {
        Ok(r) => r,
        Err(SimError::Invariant(v)) => panic!("invariant violated {v}"),
        Err(_) => return,
    };
    let cpus = w.platform.cpus as u64;
    assert!(r.jobs_completed <= r.jobs_released, "{r:?}");
    let mut busy = vec![Vec::new(); w.platform.cpus];
    for s in r.trace.as_ref().expect("trace asked for") {
        assert!(s.start <= s.end && s.end <= w.duration, "{s:?}");
        assert!(s.cpu < w.platform.cpus && s.task < w.tasks.len(), "{s:?}");
        assert!(
            w.tasks[s.task].allowed_on(s.cpu),
            "{s:?} outside its affinity"
        );
        busy[s.cpu].push((s.start, s.end));
    }
    for segs in &mut busy {
        segs.sort_unstable();
        for pair in segs.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "two tasks on one CPU: {pair:?}");
        }
    }
    let total: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    assert!(
        total <= cpus * w.duration,
        "{total} > {cpus} × {}",
        w.duration
    );
}
