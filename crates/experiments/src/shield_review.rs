//! Seed 003's review: the two headline numbers (a spike above 1,100 µs with the shield
//! alone, at most 60 µs with the timers moved) across the constants the seed does not
//! give — how many timers the RT core holds, what moving one costs, the wake-up cost,
//! the tick rate and the number of cores — with its claims checked.

use super::latency::probe_run;
use super::review::{row, Review, Verdict};
use super::shield::board;
use super::{r2, Case};
use crate::workloads::{dur, Draft};
use crate::Error;
use crate::Progress;
use schedlab_model::spec::TimerGroupSpec;
use schedlab_model::time::MS;
use schedlab_model::Overrides;
use serde_json::{json, Map, Value};

/// A variation of the board: (choice, setting, its change to the board).
type Variation = (
    &'static str,
    &'static str,
    fn(&mut Draft) -> Result<(), Error>,
);

/// The board's timer group `name`.
fn group<'a>(d: &'a mut Draft, name: &str) -> Result<&'a mut TimerGroupSpec, Error> {
    d.timers()
        .groups
        .iter_mut()
        .flatten()
        .find(|g| g.name.as_deref() == Some(name))
        .ok_or_else(|| {
            Error::bug(format!(
                "shield review: no timer group `{name}` in the board"
            ))
        })
}

/// The board on `cpus` CPUs with the RT core (isolated, the probe's) the last one.
fn cores(d: &mut Draft, cpus: u64) -> Result<(), Error> {
    let rt = cpus as i64 - 1;
    d.platform().cpus = Some(cpus);
    let isolated = d.platform().isolated.as_mut();
    *isolated.ok_or_else(|| Error::bug("shield review: the board has no shield"))? = vec![rt];
    d.task("rt")?.affinity = Some(vec![rt]);
    Ok(())
}

const VARIATIONS: [Variation; 9] = [
    (
        "default",
        "2200 timers x 0.5 us, wake-up 25 us, 4 cores, HZ 1000",
        |_| Ok(()),
    ),
    ("timers on the RT core", "1000", |d| {
        group(d, "connections")?.count = Some(1000);
        Ok(())
    }),
    ("timers on the RT core", "4000", |d| {
        group(d, "connections")?.count = Some(4000);
        Ok(())
    }),
    ("cost per timer moved", "0.25 us", |d| {
        d.timers().cascade_per_timer = dur(250);
        Ok(())
    }),
    ("cost per timer moved", "1 us", |d| {
        d.timers().cascade_per_timer = dur(1_000);
        Ok(())
    }),
    (
        "wake-up cost",
        "35 us (calibrate's median here: 25-35 us)",
        |d| {
            d.platform().wakeup_cost = dur(35_000);
            Ok(())
        },
    ),
    ("tick", "HZ 250", |d| {
        d.platform().hz = Some(250);
        Ok(())
    }),
    ("cores", "2 (RT core 1)", |d| cores(d, 2)),
    ("cores", "8 (RT core 7)", |d| cores(d, 8)),
];

/// The board (see [`board`]) as a draft.
fn board_draft(shield: bool, migrate: bool, wheel: &str) -> Result<Draft, Error> {
    Draft::parse(&board(shield, migrate, wheel), "seed-003.yaml")
}

/// The board with a variation applied.
fn varied(shield: bool, migrate: bool, v: &Variation) -> Result<Draft, Error> {
    varied_on(shield, migrate, v, "cascading")
}

/// [`varied`] with the timer wheel `wheel` (`cascading` or `hierarchical`).
fn varied_on(shield: bool, migrate: bool, v: &Variation, wheel: &str) -> Result<Draft, Error> {
    let mut d = board_draft(shield, migrate, wheel)?;
    (v.2)(&mut d)?;
    Ok(d)
}

/// (max µs, p99 µs, share ≤ 100 µs, largest cascade on the RT core in µs).
fn measure(d: &Draft) -> Result<(f64, f64, f64, f64), Error> {
    let w = d.workload(&Overrides::default())?;
    let (l, r) = probe_run(&w, "seed-003.yaml")?;
    let rt = r
        .kernel
        .as_ref()
        .and_then(|k| k.per_cpu.last())
        .map_or(0.0, |c| c.largest_cascade_ns as f64 / 1e3);
    let h = l.histogram_us.as_deref().unwrap_or(&[]);
    let le: u64 = h.iter().filter(|b| b[0] <= 100).map(|b| b[1]).sum();
    Ok((
        r2(l.max_ns as f64 / 1e3),
        r2(l.p99_ns as f64 / 1e3),
        (le as f64 / l.samples.max(1) as f64 * 1e4).round() / 1e4,
        r2(rt),
    ))
}

/// Seed 003's review.
pub fn review(progress: &dyn Progress) -> Result<Review, Error> {
    let mut rv = Review::default();
    let (mut spike, mut size, mut moved) = (Vec::new(), Vec::new(), Vec::new());
    for v in &VARIATIONS {
        progress.step(&format!("shield review: {}: {}", v.0, v.1));
        let a = measure(&varied(true, false, v)?)?;
        let b = measure(&varied(true, true, v)?)?;
        let va = json!({ "max_us": a.0, "p99_us": a.1, "share_le_100us": a.2, "cascade_us": a.3 });
        spike.push(row(v.0, v.1, va.clone(), a.2 >= 0.99 && a.0 > 1100.0));
        size.push(row(v.0, v.1, va, a.0 > 10.0 * a.1));
        moved.push(row(
            v.0,
            v.1,
            json!({ "max_us": b.0, "p99_us": b.1, "max_before_us": a.0 }),
            b.0 <= 60.0,
        ));
    }
    let (a0, b0) = (spike[0].values.clone(), moved[0].values.clone());
    let a_holds = spike[0].holds;
    let num = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    progress.step("shield review: no shield");
    let unshielded = measure(&board_draft(false, false, "cascading")?)?;
    let a_robust = size.iter().all(|r| r.holds);
    let b_robust = moved.iter().all(|r| r.holds);
    rv.headline(
        "scenario A (shield, timers still on the RT core): almost all samples at most 100 us, one above 1,100 us",
        "almost all <= 100 us, one sample > 1,100 us (Fig. 2)",
        spike,
        "the size of the spike is the chosen constants' (timers x cost per timer): the seed gives neither, so 1,144 us is made to match, not predicted",
    );
    rv.headline(
        "scenario A: the shield alone leaves a rare spike far above the rest (max more than 10 x p99)",
        "one outlier in an otherwise tight histogram",
        size,
        "a cascade of the RT core's long timers runs with interrupts off whatever the constants",
    );
    rv.headline(
        "scenario B (shield + timers moved): maximum at most 60 us",
        "max <= 60 us (Fig. 5)",
        moved,
        "what remains on the RT core is the wake-up cost and the per-CPU IPI (25 + 12 us), both assumed",
    );
    rv.claim(
        "with the CPU shield alone almost all samples are at most 100 us and one exceeds 1,100 us",
        Verdict::of(a_holds),
        format!(
            "{}% at most 100 us, max {} us; the 1,100 us is matched by choosing 2200 timers x 0.5 us, so only the spike's existence is evidence{}",
            r2(a0["share_le_100us"].as_f64().unwrap_or(0.0) * 100.0),
            a0["max_us"],
            if a_robust { ", and a spike far above p99 remains under every variation" } else { "" }
        ),
    );
    rv.claim(
        "the spike is timer-list cascading with interrupts off on the RT core",
        Verdict::of(num(&a0, "cascade_us") >= 0.9 * (num(&a0, "max_us") - num(&a0, "p99_us"))),
        format!(
            "the largest cascade on the RT core takes {} us; with the timers moved there is none",
            a0["cascade_us"]
        ),
    );
    rv.claim(
        "moving the timers (and forbidding new ones on the RT core) bounds the maximum at 60 us",
        Verdict::of(b_robust),
        format!(
            "max {} us with every timer armed at the start (moved by the first half); timers registered during the run are the next headline's",
            b0["max_us"]
        ),
    );
    rv.claim(
        "typical latency is the same with and without the technique; only the tail moves",
        Verdict::of(a0["p99_us"] == b0["p99_us"]),
        format!("p99 {} us in A and {} us in B", a0["p99_us"], b0["p99_us"]),
    );
    rv.claim(
        "general work's interrupt-off sections lengthen RT latency without a shield",
        Verdict::of(unshielded.1 > 4.0 * num(&a0, "p99_us")),
        format!(
            "no shield: p99 {} us, max {} us, against p99 {} us shielded",
            unshielded.1, unshielded.0, a0["p99_us"]
        ),
    );

    // The technique's second half: the RT application registers 2200 timers (300-500 ms
    // timeouts) on its core 500 ms into the run; moving the timers once does not keep
    // them off the core, forbidding new registrations there does.
    let mut rows = Vec::new();
    for (choice, setting, forbid, count) in [
        (
            "default",
            "both halves: timers moved, new registrations forbidden",
            true,
            2200,
        ),
        (
            "technique",
            "first half only: timers moved, new ones allowed",
            false,
            2200,
        ),
        (
            "technique",
            "first half only, 500 timers registered",
            false,
            500,
        ),
    ] {
        progress.step(&format!("shield review: {setting}"));
        // The application's timers, registered on the RT core 500 ms into the run.
        let mut d = board_draft(true, true, "cascading")?;
        d.timers().forbid_new = Some(forbid);
        d.timers()
            .groups
            .get_or_insert_with(Vec::new)
            .push(TimerGroupSpec {
                name: Some("application".into()),
                count: Some(count),
                timeout: dur(300 * MS),
                spread: dur(200 * MS),
                offset: dur(500 * MS),
                cpus: Some(vec![3]),
                ..TimerGroupSpec::default()
            });
        let y = d;
        let x = measure(&y)?;
        rows.push(row(
            choice,
            setting,
            json!({ "max_us": x.0, "p99_us": x.1, "cascade_us": x.3 }),
            x.0 <= 60.0,
        ));
    }
    let second_half = rows.iter().skip(1).all(|r| !r.holds) && rows[0].holds;
    rv.headline(
        "scenario B with timers registered on the RT core during the run: maximum at most 60 us",
        "max <= 60 us with both halves of the technique (Fig. 4, 5)",
        rows,
        "timers the RT application registers after the move land on its own core again unless registration there is forbidden; their cascade brings the spike back",
    );
    rv.claim(
        "both halves are needed: moving the registered timers empties the RT core's lists, forbidding new registrations keeps them empty",
        Verdict::of(second_half),
        "with 2200 timers registered on the RT core 500 ms into the run, the first half alone leaves a cascade spike; with the second half there is none (headline above)",
    );

    // The v4.8+ wheel for every variation's timer count: the spike needs the cascading
    // wheel, not the constants.
    let mut t = Map::new();
    for v in &VARIATIONS[..3] {
        progress.step(&format!("shield review: v4.8+ wheel, {}", v.1));
        let y = varied_on(true, false, v, "hierarchical")?;
        let x = measure(&y)?;
        t.insert(v.1.into(), json!({ "max_us": x.0, "p99_us": x.1 }));
    }
    rv.cases.push(Case {
        case: "scenario A on the v4.8+ wheel (no cascades) for 2200, 1000 and 4000 timers".into(),
        paper: Value::Null,
        simulated: Value::Object(t),
        real: Value::Null,
        expected: Value::Null,
        note: "without cascades the spike is gone whatever the timer count: on Linux >= 4.8 the technique is not needed for it".into(),
    });
    rv.assume(&[
        "a 4-core board at HZ 1000 with the RT patch and the pre-4.8 cascading wheel (the seed names neither the core count nor HZ; both are varied)",
        "2200 long one-shot timers (1.3-1.5 s) and 100 periodic ones per core; a cascade costs 2 us + 0.5 us per timer moved: chosen to make one cascade about the seed's 1.1 ms (no measurement of a cascading wheel exists on a >= 4.8 kernel)",
        "a 25 us wake-up cost: this host's `schedlab calibrate` median timer wake-up (25-35 us); 35 us is varied",
        "general work: 6 CPU-bound tasks whose interrupts-off sections last 20-600 us about every 2 ms; a NIC, an MMC and a per-CPU IPI (12 us)",
        "timer callbacks cost nothing on the RT core (with the RT patch they run in a thread below the RT task); the cascade itself runs with interrupts off",
        "the probe is released on the tick grid (the worst phase), 1 ms apart, for 2 s",
        "the technique's second half is exercised by the RT application registering 2200 timers (300-500 ms) on its core 500 ms into the run (`groups[].offset`); a registration happens at a tick",
    ]);
    rv.not_modelled(&[
        ("the seed's hardware-timer interrupt and its spread up to ~100 us", "the probe is a timer wake-up with a fixed cost; the spread needs sources the seed does not describe"),
    ]);
    Ok(rv)
}
