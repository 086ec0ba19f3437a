//! The simulator on workloads built from the fuzzer's bytes rather than parsed from
//! mutated text, so nearly every input is valid and reaches the engine: 1-4 CPUs, every
//! registry policy × placement × fair policy, up to 8 entries of periodic (deadline,
//! fifo, rr) and fair (CPU-bound, run/sleep) tasks with small times, affinities,
//! sporadic releases, uniform execution times, overheads, per-job costs and delayed
//! wake-ups (`platform.job_costs`). The text goes through the
//! parser like a user's file, then schedlab_fuzz::simulate_checked.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedlab_model::{Overrides, Policy, Workload};
use std::fmt::Write;
use std::path::Path;

fn us(u: &mut Unstructured, lo: u32, hi: u32) -> Result<u32> {
    u.int_in_range(lo..=hi)
}

fn workload(u: &mut Unstructured) -> Result<String> {
    let cpus: u32 = u.int_in_range(1..=4)?;
    let periodic: Vec<&str> = Policy::ALL
        .iter()
        .filter(|(p, _)| p.is_periodic())
        .map(|(_, n)| *n)
        .collect();
    let fair: Vec<&str> = Policy::ALL
        .iter()
        .filter(|(p, _)| !p.is_periodic())
        .map(|(_, n)| *n)
        .collect();
    let mut y = String::new();
    let hz = *u.choose(&[0u32, 100, 250, 1000])?;
    let mut platform = format!(
        "cpus: {cpus}, hz: {hz}, context_switch: {}us, migration: {}us",
        us(u, 0, 3)?,
        us(u, 0, 3)?
    );
    let _ = writeln!(y, "duration: {}ms", us(u, 1, 20)?);
    let _ = writeln!(y, "seed: {}", u.arbitrary::<u8>()?);
    let _ = writeln!(
        y,
        "on_miss: {}",
        if u.arbitrary()? { "abort" } else { "continue" }
    );
    let _ = writeln!(
        y,
        "scheduler: {{ deadline: {}, fair: {}, placement: {}, cbs: {} }}",
        u.choose(&periodic)?,
        u.choose(&fair)?,
        u.choose(&["global", "partitioned", "linux"])?,
        u.arbitrary::<bool>()?
    );
    let _ = writeln!(y, "tasks:");
    let n = u.int_in_range(1..=8)?;
    for i in 0..n {
        let mut f = vec![format!("name: t{i}")];
        let count: u32 = u.int_in_range(1..=3)?;
        if count > 1 {
            f.push(format!("count: {count}"));
        }
        match u.int_in_range(0..=4)? {
            k @ 0..=2 => {
                let period = us(u, 50, 20_000)?;
                let deadline = us(u, 20, period)?;
                let runtime = us(u, 10, deadline.max(10))?.min(deadline);
                f.push(format!("runtime: {runtime}us, period: {period}us"));
                if deadline != period {
                    f.push(format!("deadline: {deadline}us"));
                }
                if k > 0 {
                    f.push(format!(
                        "class: {}, priority: {}",
                        if k == 1 { "fifo" } else { "rr" },
                        us(u, 1, 99)?
                    ));
                }
                if u.arbitrary()? {
                    f.push(format!("offset: {}us", us(u, 0, 5_000)?));
                }
                if u.arbitrary()? {
                    f.push(format!("release: sporadic, jitter: {}us", us(u, 0, 2_000)?));
                }
                if u.arbitrary()? {
                    f.push(format!(
                        "exec: {{ uniform: [{}us, {runtime}us] }}",
                        us(u, 1, runtime)?
                    ));
                }
            }
            3 => f.push(format!("nice: {}", u.int_in_range(-20i32..=19)?)),
            _ => f.push(format!(
                "class: {}, run: {}us, sleep: {}us",
                u.choose(&["normal", "batch", "idle"])?,
                us(u, 10, 5_000)?,
                us(u, 10, 5_000)?
            )),
        }
        if u.arbitrary()? {
            let mask: u8 = u.int_in_range(1..=((1u32 << cpus) - 1) as u8)?;
            let list: Vec<String> = (0..cpus)
                .filter(|c| mask & (1 << c) != 0)
                .map(|c| c.to_string())
                .collect();
            f.push(format!("affinity: [{}]", list.join(", ")));
        }
        let _ = writeln!(y, "  - {{ {} }}", f.join(", "));
    }
    // Drawn last so that inputs written before these fields existed mean what they did.
    if u.arbitrary::<bool>()? {
        let _ = write!(
            platform,
            ", job_costs: {{ per_job: {}us, reads_cpu_clock: {}, wakeup_latency: {}us, wakeup_jitter: {}us, wakeup_from_idle: {}us }}",
            us(u, 0, 60)?,
            u.arbitrary::<bool>()?,
            us(u, 0, 40)?,
            us(u, 0, 30)?,
            us(u, 0, 60)?
        );
    }
    Ok(format!("platform: {{ {platform} }}\n{y}"))
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(text) = workload(&mut u) else {
        return;
    };
    // Triage: FUZZ_PRINT=1 shows the workload an artifact stands for.
    if std::env::var_os("FUZZ_PRINT").is_some() {
        eprintln!("{text}");
    }
    // Valid by construction except where validation is stricter than the generator (a
    // combination such as a probe-less priority); those are skipped, not failures.
    if let Ok(w) = Workload::parse_str(&text, Path::new("gen.yaml"), &Overrides::default()) {
        schedlab_fuzz::simulate_checked(w);
    }
});
