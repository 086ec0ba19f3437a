//! Seed 004's review: its findings across the choices that decide them — which tables
//! are compared (Fig. 2's "finer weights, smaller vruntime"), which mix of tasks shares
//! a nice value (the pick-order invariance), which nice values the batch jobs have (the
//! "batch programs performed better" result) — and every claim with a number or a
//! direction checked, the table sizes included.

use super::cfs_weights::{
    draft, fibo_app_sysbench, fibo_sysbench, fibo_sysbench_4cpu, finished_ms, mix, order_vs, run,
    run_draft, share, vruntime_s, weight, TABLES,
};
use super::r2;
use super::review::{row, Review, Verdict};
use crate::Error;
use crate::Progress;
use schedlab_model::WeightTable;
use schedlab_sim::SimResult;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Distinct weights of a table over its nice range.
fn distinct(table: &str) -> usize {
    let Ok(t) = WeightTable::parse(table) else {
        return 0;
    };
    let (lo, hi) = t.nice_range();
    (lo..=hi)
        .map(|n| t.weight(n))
        .collect::<BTreeSet<_>>()
        .len()
}

/// Batch jobs (fibo, c-ray, 1 s each) at nice `batch` beside four sysbench-like threads
/// at nice 0 on one CPU, 20 s.
fn batch_mix(batch: i8) -> String {
    mix(
        1,
        "20s",
        "cfs",
        &format!(
            "  - {{ name: fibo, work: 1s, nice: {batch} }}\n  - {{ name: cray, work: 1s, nice: {batch} }}\n  - {{ name: sysbench, count: 4, run: 3ms, sleep: 7ms, nice: 0 }}\n"
        ),
    )
}

/// When the last batch job (tasks 0 and 1) finished, ms.
fn batch_done(yaml: &str, table: &str) -> Result<f64, Error> {
    Ok(batch_finished(&run(yaml, table)?))
}

/// When the later of the two batch jobs finished (ms; infinite if one did not).
fn batch_finished(r: &SimResult) -> f64 {
    [0, 1]
        .iter()
        .map(|&i| finished_ms(r, i).as_f64().unwrap_or(f64::INFINITY))
        .fold(0.0, f64::max)
}

/// Seed 004's review.
pub fn review(progress: &dyn Progress) -> Result<Review, Error> {
    let mut rv = Review::default();

    // Fig. 2: finer weights, smaller vruntime — fibo in the shared-nice-0 mix, for each
    // step from a coarser to a finer table.
    progress.step("cfs-weights review: Fig. 2");
    let y = fibo_sysbench(0, 0);
    let mut vr = Map::new();
    for t in TABLES {
        vr.insert(t.into(), json!(vruntime_s(&run(&y, t)?, 0)));
    }
    let v = |t: &str| vr[t].as_f64().unwrap_or(0.0);
    let mut rows = Vec::new();
    for (choice, coarse, fine) in [
        ("default", "grouped-2", "linux"),
        ("tables compared", "grouped-5", "grouped-2"),
        ("tables compared", "linux", "extended-60"),
    ] {
        rows.push(row(
            choice,
            &format!("{coarse} -> {fine}"),
            json!({
                "w0_coarse": weight(coarse, 0),
                "w0_fine": weight(fine, 0),
                "fibo_vruntime_coarse_s": v(coarse),
                "fibo_vruntime_fine_s": v(fine),
            }),
            v(fine) < v(coarse),
        ));
    }
    rv.headline(
        "Fig. 2: with finer weights (a wider range) a task's vruntime is smaller (fibo beside c-ray and 2 sysbench threads, all nice 0, 10 s)",
        "finer weights, smaller vruntime (an image: no numbers)",
        rows,
        "the finer table keeps the kernel's 40 weights inside nice -20..19, so a task there has exactly the kernel's vruntime; only coarser tables (smaller w(0)) change it",
    );

    // Pick order with shared nice values, by mix.
    let mixes: [(&str, &str, String); 5] = [
        (
            "default",
            "fibo + c-ray + 2 sysbench, nice 0",
            fibo_sysbench(0, 0),
        ),
        (
            "mix",
            "fibo + an application + 2 sysbench, nice 0",
            fibo_app_sysbench(),
        ),
        (
            "mix",
            "fibo + c-ray + 2 sysbench, nice -5",
            fibo_sysbench(-5, -5),
        ),
        (
            "mix",
            "3 CPU-bound tasks, nice 0",
            mix(
                1,
                "10s",
                "cfs",
                "  - { name: a }\n  - { name: b }\n  - { name: c }\n",
            ),
        ),
        (
            "mix",
            "2 fibo + 2 c-ray + 8 sysbench, nice 0, 4 CPUs",
            fibo_sysbench_4cpu(),
        ),
    ];
    let mut rows = Vec::new();
    for (choice, setting, y) in mixes {
        progress.step(&format!("cfs-weights review: pick order, {setting}"));
        let base = run(&y, "linux")?;
        let mut vals = Map::new();
        let mut same = true;
        for t in &TABLES[1..] {
            let o = order_vs(&base, &run(&y, t)?);
            same &= o.starts_with("identical");
            vals.insert((*t).into(), json!(o));
        }
        rows.push(row(choice, setting, Value::Object(vals), same));
    }
    let order_held = rows.iter().filter(|r| r.holds).count();
    let order_mixes = rows.len();
    rv.headline(
        "with one nice value shared by every task, the next task picked does not change with the table",
        "scheduling quantities change with the weights, the next task picked does not",
        rows,
        "check_preempt_tick compares a vruntime distance with a CPU-time slice and rounding breaks ties: neither is scale-free when w(0) < 1024 (the grouped tables at nice 0)",
    );

    // Shares (Fig. 3): nice -5/0/5 on one CPU, 10 s, against the weight shares.
    progress.step("cfs-weights review: shares");
    let y = mix(
        1,
        "10s",
        "cfs",
        "  - { name: n-5, nice: -5 }\n  - { name: n0, nice: 0 }\n  - { name: n5, nice: 5 }\n",
    );
    let mut rows = Vec::new();
    for (k, t) in TABLES.iter().enumerate() {
        let r = run(&y, t)?;
        let ws: Vec<u64> = [-5, 0, 5].iter().map(|&n| weight(t, n)).collect();
        let total: u64 = ws.iter().sum();
        let worst = (0..3)
            .map(|i| (share(&r, i) / (ws[i] as f64 / total as f64) - 1.0).abs())
            .fold(0.0, f64::max);
        rows.push(row(
            if k == 0 { "default" } else { "table" },
            t,
            json!({ "share_0": (share(&r, 1) * 1e4).round() / 1e4, "worst_error_pct": r2(worst * 100.0) }),
            worst < 0.01,
        ));
    }
    let shares_robust = rows.iter().all(|r| r.holds);
    rv.headline(
        "Fig. 3: CFS shares the CPU in proportion to the weights under every table (within 1%)",
        "CFS still shares fairly between interactive and batch tasks, range reduced or extended",
        rows,
        "",
    );

    // Batch programs performed better: which nice values make it so.
    let mut rows = Vec::new();
    let mut better_any = Vec::new();
    for (k, b) in [3i8, 1, 2, 4, 5].into_iter().enumerate() {
        progress.step(&format!("cfs-weights review: batch at nice {b}"));
        let y = batch_mix(b);
        let lin = batch_done(&y, "linux")?;
        let mut vals = Map::new();
        vals.insert("linux_ms".into(), json!(r2(lin)));
        let mut better = Vec::new();
        for t in &TABLES[1..] {
            let d = batch_done(&y, t)?;
            vals.insert(format!("{t}_ms"), json!(r2(d)));
            if d < lin {
                better.push(*t);
            }
        }
        if !better.is_empty() {
            better_any.push(format!("nice {b}: {}", better.join(", ")));
        }
        rows.push(row(
            if k == 0 { "default" } else { "batch nice" },
            &format!("batch at nice {b}, 4 sysbench at nice 0"),
            Value::Object(vals),
            !better.is_empty(),
        ));
    }
    rv.headline(
        "Table 7 / Fig. 4: under a modified range some batch programs (fibo, c-ray) finish earlier",
        "some batch programs performed better (an image: no numbers; nice values not given)",
        rows,
        "only a grouped table that puts the batch jobs' nice value in the same group as the interactive threads' (nice 0) raises their weight relative to them; the scenario is ours, the seed gives no nice values",
    );

    // Claims.
    let d = TABLES.map(distinct);
    rv.claim(
        "eq. 2: weight ≈ 1024 / 1.25^nice (Table 1 is the kernel's prio_to_weight)",
        Verdict::of(weight("linux", 5) == 335 && weight("linux", -5) == 3121),
        "the kernel's table is used as is: w(-5) = 3121, w(0) = 1024, w(5) = 335",
    );
    rv.claim(
        "grouping by 2 gives 20 distinct weights (Table 2), by 5 gives 8 (Table 3)",
        Verdict::of(d[1] == 20 && d[2] == 8),
        format!("{} and {} distinct weights", d[1], d[2]),
    );
    rv.claim(
        "the extended table has 60 weights, nice -30..29 (Table 4)",
        Verdict::of(d[3] == 60),
        format!(
            "60 nice levels but {} distinct weights: round(1024 / 1.25^nice) clamped to the kernel's minimum of 2 gives nice 27, 28 and 29 the same weight",
            d[3]
        ),
    );
    rv.claim(
        "eq. 3: tslice = w / W × latency; two equal tasks over 100 ms get 50 ms each",
        Verdict::of((share(&run(&mix(1, "2s", "cfs", "  - { name: a }\n  - { name: b }\n"), "linux")?, 0) - 0.5).abs() < 0.01),
        "the slice is eq. 3, enforced at ticks: a task runs until the first tick after it (51 ms at HZ 1000; time-slices case)",
    );
    rv.claim(
        "Fig. 2: as the weight range grows (finer weights) a task's vruntime decreases",
        Verdict::DoesNotHold,
        format!(
            "fibo's vruntime after 10 s: grouped-5 {} s, grouped-2 {} s, linux {} s, extended-60 {} s: coarser tables raise it; the finer table leaves it equal to the kernel's (headline)",
            v("grouped-5"), v("grouped-2"), v("linux"), v("extended-60")
        ),
    );
    rv.claim(
        "with shared nice values the next task picked does not change with the table",
        Verdict::of(order_held == order_mixes),
        format!(
            "identical in {order_held} of {order_mixes} mixes (fibo + c-ray + 2 sysbench at nice 0 and -5, the 4-CPU mix); the grouped tables change it for other nice-0 mixes, the kernel's arithmetic not being scale-free below w = 1024 (headline)"
        ),
    );
    rv.claim(
        "Fig. 3: CFS still shares the CPU fairly between interactive and batch tasks whatever the range",
        Verdict::of(shares_robust),
        "shares equal the weight shares within 1% under every table (headline)",
    );
    rv.claim(
        "Table 7 / Fig. 4: some batch programs (fibo, c-ray) performed better under the modified ranges",
        Verdict::of(!better_any.is_empty()),
        format!(
            "earlier under: {} (headline); the nice values are ours",
            if better_any.is_empty() { "none".to_string() } else { better_any.join("; ") }
        ),
    );
    let y2 = fibo_sysbench(0, 0);
    let d4 = draft(&y2)?.with_count("sysbench", 4)?.with_weights("linux");
    let (t2, t4) = (batch_done(&y2, "linux")?, batch_finished(&run_draft(&d4)?));
    let spread = TABLES
        .iter()
        .map(|t| batch_done(&y2, t))
        .collect::<Result<Vec<_>, _>>()?;
    let (lo, hi) = spread
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    rv.claim(
        "the slowdown of concurrently run applications comes from the number of runnable tasks per core, not from the weight values",
        Verdict::of(t4 - t2 > hi - lo),
        format!(
            "fibo + c-ray at nice 0 finish at {} ms beside 2 sysbench threads and {} ms beside 4; across the four tables {}-{} ms",
            r2(t2), r2(t4), r2(lo), r2(hi)
        ),
    );
    rv.claim(
        "the extended range shrinks the RT priorities (Table 5: MAX_RT_PRIO 80 by our inference)",
        Verdict::NotTestable,
        "no experiment of the seed uses RT tasks, and Table 5 is an image; the model keeps RT priorities 1-99",
    );
    rv.assume(&[
        "one CPU at HZ 1000 with the kernel's one-CPU CFS tunables (latency 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms); one mix on 4 CPUs",
        "grouped means rounded half up to integers (the seed does not say how it rounded)",
        "extended-60 keeps the kernel's 40 weights and adds round(1024 / 1.25^nice), at least 2, for nice -30..-21 and 20..29",
        "fibo and c-ray: CPU-bound jobs with 1 s of work; sysbench: threads running 3 ms and sleeping 7 ms, treated as interactive as the seed does",
        "the batch-completion scenario (batch at nice 1-5, sysbench at nice 0) is ours: the seed gives no nice values",
    ]);
    rv.not_modelled(&[
        ("Table 5's smaller RT priority range", "the seed's experiments run no RT task; the table is an image"),
        ("Phoronix MFLOPS and the seed's machines (Table 6)", "images without numbers; the model has no floating-point throughput"),
        ("a kernel built with the modified tables", "this host's table is compiled in; one cgroup per task with cpu.weight could stand in (not done)"),
    ]);
    Ok(rv)
}
