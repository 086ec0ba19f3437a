//! The whole simulate path on small parsed workloads: parse, validate, build the
//! classes, run, and check what no schedule may break. Inputs are capped before
//! simulating (at most 4 CPUs, 16 tasks, 20 ms of simulated time, no period or phase
//! under 10 µs, no tick above 10 kHz, 1000 wheel timers) so every input runs in
//! milliseconds and a libFuzzer timeout means a hang, not a big workload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_model::{Overrides, Phase, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;

const US: u64 = 1_000;
const MAX_SIM_NS: u64 = 20_000 * US;
const MIN_STEP: u64 = 10 * US;

fn small_enough(w: &Workload) -> bool {
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

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut w) = Workload::parse_str(text, Path::new("f.yaml"), &Overrides::default()) else {
        return;
    };
    if !small_enough(&w) {
        return;
    }
    w.duration = w.duration.min(MAX_SIM_NS);
    let Ok(r) = simulate(&w, &SimOptions { trace: true }) else {
        return;
    };
    let cpus = w.platform.cpus as u64;
    assert!(r.jobs_completed <= r.jobs_released, "{r:?}");
    let mut busy = vec![Vec::new(); w.platform.cpus];
    for s in r.trace.as_ref().expect("trace asked for") {
        assert!(s.start <= s.end && s.end <= w.duration, "{s:?}");
        assert!(s.cpu < w.platform.cpus && s.task < w.tasks.len(), "{s:?}");
        assert!(w.tasks[s.task].allowed_on(s.cpu), "{s:?} outside its affinity");
        busy[s.cpu].push((s.start, s.end));
    }
    // No CPU runs two tasks at once.
    for segs in &mut busy {
        segs.sort_unstable();
        for pair in segs.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "overlap {pair:?}");
        }
    }
    let total: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    assert!(total <= cpus * w.duration, "{total} > {cpus} × {}", w.duration);
});
