//! SimSo's execution-time models: `exec: { normal: [mean, stddev] }` (its ACET model,
//! clipped to (0, runtime]) and `platform.preemption` (its FixedPenalty model).
use schedlab_model::time::{MS, US};
use schedlab_model::{ExecModel, Overrides, ReleaseStream, Workload};
use std::path::Path;

fn parse(text: &str) -> Result<Workload, String> {
    Workload::parse_str(text, Path::new("w.yaml"), &Overrides::default()).map_err(|e| e.to_string())
}

fn draws(w: &Workload, task: usize, n: usize) -> Vec<u64> {
    ReleaseStream::new(w, task)
        .take(n)
        .map(|j| j.exec)
        .collect()
}

#[test]
fn normal_is_parsed_in_its_three_spellings() {
    for exec in ["{ normal: [3ms, 500us] }", "!normal [3ms, 500us]"] {
        let w = parse(&format!(
            "tasks:\n  - {{ name: a, runtime: 4ms, period: 10ms, exec: {exec} }}\n"
        ))
        .unwrap();
        assert_eq!(
            w.tasks[0].exec,
            ExecModel::Normal {
                mean: 3 * MS,
                stddev: 500 * US
            }
        );
    }
    let w: Workload = Workload::parse_str(
        r#"{"tasks": [{"name": "a", "runtime": "4ms", "period": "10ms",
                       "exec": {"normal": ["3ms", "500us"]}}]}"#,
        Path::new("w.json"),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(
        w.tasks[0].exec,
        ExecModel::Normal {
            mean: 3 * MS,
            stddev: 500 * US
        }
    );
}

#[test]
fn bad_normal_parameters_are_named() {
    let t = |exec: &str| {
        parse(&format!(
            "tasks:\n  - {{ name: a, runtime: 4ms, period: 10ms, exec: {exec} }}\n"
        ))
        .unwrap_err()
    };
    let e = t("{ normal: [5ms, 1ms] }");
    assert!(
        e.contains("exec normal mean 5ms must satisfy 0 < mean <= runtime 4ms"),
        "{e}"
    );
    let e = t("{ normal: [0ms, 1ms] }");
    assert!(e.contains("0 < mean"), "{e}");
    let e = t("{ normal: [1ms] }");
    assert!(
        e.contains("`normal` needs exactly two values [mean, stddev], got 1"),
        "{e}"
    );
    let e = t("{ gauss: [1ms, 1ms] }");
    assert!(e.contains("{ normal: [mean, stddev] }"), "{e}");
}

#[test]
fn normal_draws_are_seeded_clipped_and_centred() {
    let yaml = |seed: u64| {
        format!(
            "seed: {seed}\ntasks:\n  - {{ name: a, runtime: 4ms, period: 10ms, exec: {{ normal: [3ms, 1ms] }} }}\n  - {{ name: b, runtime: 4ms, period: 10ms, exec: {{ normal: [2ms, 0ms] }} }}\n"
        )
    };
    let w = parse(&yaml(7)).unwrap();
    let a = draws(&w, 0, 20_000);
    assert_eq!(
        a,
        draws(&parse(&yaml(7)).unwrap(), 0, 20_000),
        "same seed, same draws"
    );
    assert_ne!(
        a,
        draws(&parse(&yaml(8)).unwrap(), 0, 20_000),
        "another seed, other draws"
    );
    assert!(a.iter().all(|&x| (1..=4 * MS).contains(&x)));
    // N(3ms, 1ms) clipped at 4ms: P(x >= 4ms) = 1 - Φ(1) = 0.1587; the mean of the
    // clipped draw is 3 - σ·φ(1) + (4 - 3)·(1 - Φ(1)) = 3 - 0.2420 + 0.1587 = 2.9167 ms
    // (the clip at 0 is 3σ away: negligible).
    let at_max = a.iter().filter(|&&x| x == 4 * MS).count() as f64 / a.len() as f64;
    assert!((at_max - 0.1587).abs() < 0.01, "{at_max}");
    let mean = a.iter().sum::<u64>() as f64 / a.len() as f64 / MS as f64;
    assert!((mean - 2.9167).abs() < 0.02, "{mean}");
    // A zero deviation is the mean every time.
    assert!(draws(&w, 1, 100).iter().all(|&x| x == 2 * MS));
}

#[test]
fn preemption_penalty_is_a_platform_duration() {
    let w = parse("platform: { cpus: 2, preemption: 25us, migration: 40us }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n").unwrap();
    assert_eq!(
        (w.platform.preemption, w.platform.migration),
        (25 * US, 40 * US)
    );
    assert_eq!(
        parse("tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n")
            .unwrap()
            .platform
            .preemption,
        0
    );
    let e = parse("platform: { preemption: 1 furlong }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n").unwrap_err();
    assert!(e.contains("preemption"), "{e}");
}
