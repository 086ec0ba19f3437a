//! Hostile and oversized workloads: each limit of `schedlab_model::limits` is refused
//! with a message naming it, before the memory or time it protects is spent. The files
//! are the reproducers of the attacks that once exhausted memory, hung or panicked.

use schedlab_model::limits::{
    MAX_EXPANDED_NODES, MAX_LIST_LEN, MAX_NESTING, MAX_TASKS, MAX_TASK_CPUS, MAX_TIME_NS,
};
use schedlab_model::{Overrides, Workload};
use std::path::Path;
use std::time::Instant;

fn parse(text: &str, path: &str) -> Result<Workload, String> {
    Workload::parse_str(text, Path::new(path), &Overrides::default()).map_err(|e| e.to_string())
}

fn err(text: &str) -> String {
    match parse(text, "w.yaml") {
        Ok(w) => panic!("expected an error, got {} tasks", w.tasks.len()),
        Err(e) => e,
    }
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "`{p}` not in: {msg}");
    }
}

/// An anchor of `n` values and `n` aliases to it: 50 KB that would expand to n² values.
fn alias_square(n: usize, error_after: bool) -> String {
    let list = vec!["0"; n].join(",");
    let aliases = vec!["*b"; n].join(",");
    let mut y = format!(
        "tasks:\n  - name: t\n    runtime: 1ms\n    period: 10ms\n    affinity: &b [{list}]\n  - name: u\n    runtime: 1ms\n    period: 10ms\n    phases: [{aliases}]\n"
    );
    if error_after {
        y.push_str("  - { name: v, bogus: 1 }\n");
    }
    y
}

#[test]
fn an_alias_bomb_is_refused_by_its_expanded_size() {
    // 10,000 × 10,000 = 10^8 values from 50 KB; once ran the machine out of memory
    // (the second, lenient parse for the error message expanded every alias).
    for error_after in [false, true] {
        let text = alias_square(10_000, error_after);
        assert!(text.len() < 60_000);
        let msg = err(&text);
        assert_has(
            &msg,
            &[
                "w.yaml:",
                "tasks[1].phases[",
                &format!("more than {MAX_EXPANDED_NODES} values"),
                "the limit",
            ],
        );
    }
}

#[test]
fn many_tasks_sharing_one_aliased_affinity_are_bounded() {
    // 20,000 tasks with `affinity: *a` of 1,000 entries once needed gigabytes.
    let a = (0..1000)
        .map(|i| (i % 2).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut y = format!(
        "platform: {{ cpus: 2 }}\ntasks:\n  - {{ name: t0, runtime: 1ms, period: 100ms, affinity: &a [{a}] }}\n"
    );
    for i in 1..20_000 {
        y.push_str(&format!(
            "  - {{ name: t{i}, runtime: 1ms, period: 100ms, affinity: *a }}\n"
        ));
    }
    assert_has(&err(&y), &["affinity[", "more than 4000000 values"]);
    // The same tasks with a short list are fine, and each keeps only the CPUs it names.
    let y = y.replace(&format!("&a [{a}]"), "&a [1, 0, 1, 1]");
    let w = parse(&y, "w.yaml").unwrap();
    assert_eq!(w.tasks.len(), 20_000);
    let aff = w.tasks[19_999].affinity.as_ref().unwrap();
    assert_eq!(aff, &vec![0, 1]);
    assert!(aff.capacity() <= 2, "{}", aff.capacity());
}

#[test]
fn lists_longer_than_the_limit_are_refused() {
    let long = vec!["0"; MAX_LIST_LEN as usize + 1].join(",");
    let y = format!(
        "platform: {{ cpus: 1 }}\ntasks:\n  - {{ name: a, runtime: 1ms, period: 10ms, affinity: [{long}] }}\n"
    );
    assert_has(&err(&y), &["tasks[0].affinity", "more than 100000 entries"]);
}

#[test]
fn deep_nesting_is_refused_at_once_with_its_position() {
    // 100,000 nested lists (200 KB) took over a minute in the YAML scanner.
    let d = 100_000;
    let text = format!("tasks: {}{}\n", "[".repeat(d), "]".repeat(d));
    let start = Instant::now();
    let msg = err(&text);
    assert_eq!(
        msg,
        format!(
            "w.yaml:1:{}: lists and mappings nested more than {MAX_NESTING} levels deep (the limit; the format needs at most 6)",
            8 + MAX_NESTING
        )
    );
    // Not a speed test: only that the parser was never handed the text (it needs
    // minutes for it); a generous bound for a loaded machine.
    assert!(start.elapsed().as_secs() < 20);
    // JSON too.
    let json = format!("{{\"tasks\": {}{}}}", "[".repeat(d), "]".repeat(d));
    assert_has(
        &parse(&json, "w.json").unwrap_err(),
        &["w.json:1:", "nested more than 32 levels"],
    );
}

#[test]
fn count_beyond_the_task_ceiling_is_refused_before_expansion() {
    // `count: 1000000` was documented and needed ~18 GB.
    let msg = err("tasks:\n  - { name: t, count: 1000000, runtime: 1ms, period: 1s }\n");
    assert_eq!(
        msg,
        "w.yaml: tasks[0] (t).count: must be between 1 and 100000, got 1000000"
    );
    // Several entries within the count limit whose sum is beyond the task limit.
    let entry = "  - { name: tNAME, count: 60000, runtime: 1ms, period: 1s }\n";
    let y = format!(
        "tasks:\n{}{}",
        entry.replace("NAME", "a"),
        entry.replace("NAME", "b")
    );
    assert_eq!(
        err(&y),
        format!("w.yaml: tasks: 120000 tasks after `count:` expansion is more than {MAX_TASKS}, the limit")
    );
    // tasks × CPUs: its ceiling is the corner of the task and CPU limits.
    assert_eq!(MAX_TASK_CPUS, MAX_TASKS * 1024);
    // Right at the ceiling it is accepted.
    let y = format!(
        "platform: {{ cpus: 1024 }}\ntasks:\n  - {{ name: t, count: {MAX_TASKS}, runtime: 1ms, period: 1s }}\n"
    );
    assert_eq!(parse(&y, "w.yaml").unwrap().tasks.len(), MAX_TASKS as usize);
}

#[test]
fn times_above_the_limit_are_refused_in_every_field() {
    // `eevdf: { base_slice: 18446744073s }` once panicked in a clamp.
    let cases = [
        ("duration: 18446744073s\n", "duration"),
        (
            "scheduler: { fair: eevdf, eevdf: { base_slice: 18446744073s } }\n",
            "scheduler.eevdf.base_slice",
        ),
        (
            "scheduler: { cfs: { latency: 2000000000s } }\n",
            "scheduler.cfs.latency",
        ),
        (
            "scheduler: { rr_timeslice: 1000000000001s }\n",
            "scheduler.rr_timeslice",
        ),
        (
            "scheduler: { migration_cost: 1000000000000000001 }\n",
            "scheduler.migration_cost",
        ),
        (
            "platform: { context_switch: 9223372036854775807 }\n",
            "platform.context_switch",
        ),
        (
            "platform: { irqs: [{ period: 18446744073709551615, handler: 1us }] }\n",
            "platform.irqs[0].period",
        ),
    ];
    for (head, field) in cases {
        let y = format!("{head}tasks:\n  - {{ name: a, run: 1ms, sleep: 1ms }}\n");
        assert_has(&err(&y), &[field, "above the limit of 1000000000s"]);
    }
    for task in [
        "{ name: a, runtime: 1ms, period: 18446744073s }",
        "{ name: a, runtime: 1ms, period: 10ms, offset: 9000000000000000000 }",
        "{ name: a, runtime: 1ms, period: 10ms, release: sporadic, jitter: 1000000001s }",
        "{ name: a, work: 2000000000s }",
        "{ name: a, phases: [{ run: 1ms }, { sleep: 18446744073s }] }",
        "{ name: a, runtime: 1ms, period: 10ms, exec: { uniform: [1ms, 18446744073709551615] } }",
    ] {
        let y = format!("tasks:\n  - {task}\n");
        assert_has(&err(&y), &["w.yaml:2:", "tasks[0] (a).", "above the limit"]);
    }
    // Scheduler tunables have their own, lower limit (they are scaled into virtual time).
    for head in [
        "scheduler: { fair: eevdf, eevdf: { base_slice: 1001s } }",
        "scheduler: { cfs: { wakeup_granularity: 2000s } }",
        "scheduler: { rr_timeslice: 1000001ms }",
    ] {
        let y = format!("{head}\ntasks:\n  - {{ name: a, run: 1ms, sleep: 1ms }}\n");
        let e = parse(&y, "w.yaml").unwrap_err();
        assert_has(
            &e,
            &[
                "scheduler.",
                "above 1000s, the limit for a scheduler tunable",
            ],
        );
    }
    // The limit itself is a valid time.
    let y = "tasks:\n  - { name: a, runtime: 1ms, period: 1000000000s, offset: 1000000000s }\n";
    let w = parse(y, "w.yaml").unwrap();
    assert_eq!(w.tasks[0].period, Some(MAX_TIME_NS));
    // An override is held to the same limit.
    let ov = Overrides {
        duration: Some((MAX_TIME_NS + 1).into()),
        ..Overrides::default()
    };
    let e = Workload::parse_str(
        "tasks:\n  - { name: a, run: 1ms, sleep: 1ms }\n",
        Path::new("w.yaml"),
        &ov,
    )
    .unwrap_err()
    .to_string();
    assert_has(&e, &["--duration", "above the limit"]);
}

#[test]
fn yaml_tags_are_refused_where_they_mean_nothing() {
    for (text, field) in [
        (
            "tasks:\n  - { name: !uniform a, run: 1ms, sleep: 1ms }\n",
            "tasks[0].name",
        ),
        (
            "tasks: !list\n  - { name: a, run: 1ms, sleep: 1ms }\n",
            "tasks",
        ),
        (
            "platform: { cpus: !x 2 }\ntasks:\n  - { name: a, run: 1ms, sleep: 1ms }\n",
            "platform.cpus",
        ),
        (
            "tasks:\n  - { name: a, run: !uniform 1ms, sleep: 1ms }\n",
            "tasks[0].run",
        ),
    ] {
        assert_has(
            &err(text),
            &[field, "has no meaning here", "exec: !uniform [min, max]"],
        );
    }
    // Where a tag means something it still works.
    let w = parse(
        "tasks:\n  - { name: a, runtime: 2ms, period: 10ms, exec: !uniform [1ms, 2ms] }\n",
        "w.yaml",
    )
    .unwrap();
    assert_eq!(
        w.tasks[0].exec,
        schedlab_model::ExecModel::Uniform {
            min: 1_000_000,
            max: 2_000_000
        }
    );
}

#[test]
fn a_file_beyond_the_size_limit_is_not_read_whole() {
    let dir = std::env::temp_dir().join(format!("schedlab-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.yaml");
    let mut text = String::from("tasks:\n  - { name: a, run: 1ms, sleep: 1ms }\n");
    text.push_str(&"#".repeat(33 * 1024 * 1024));
    std::fs::write(&path, &text).unwrap();
    let e = Workload::load(&path, &Overrides::default())
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_has(&e, &["big.yaml", "larger than 33554432 bytes", "the limit"]);
}
