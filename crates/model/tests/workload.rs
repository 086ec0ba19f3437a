//! Integration tests for workload parsing and validation: every good path the format
//! promises, and one test per kind of bad input asserting that the message names the
//! place (task / field, line:column where the format gives one) and the problem.

use proptest::prelude::*;
use schedlab_model::limits::MAX_TIME_NS;
use schedlab_model::spec::{Dur, PlatformSpec, TaskSpec, WorkloadSpec};
use schedlab_model::time::{MS, S, US};
use schedlab_model::{
    format_ns, parse_duration, ExecModel, ModelError, OnMiss, Overrides, Placement, Policy,
    Release, TaskClass, Workload,
};
use std::path::{Path, PathBuf};

const YAML: &str = "w.yaml";
const JSON: &str = "w.json";

fn parse(text: &str) -> Result<Workload, ModelError> {
    Workload::parse_str(text, Path::new(YAML), &Overrides::default())
}

fn parse_ok(text: &str) -> Workload {
    parse(text).unwrap_or_else(|e| panic!("expected a valid workload, got: {e}"))
}

/// The full message of a rejected workload (never a panic, never a half result).
fn err(text: &str) -> String {
    err_at(text, YAML)
}

fn err_at(text: &str, path: &str) -> String {
    match Workload::parse_str(text, Path::new(path), &Overrides::default()) {
        Ok(w) => panic!("expected an error, got a workload: {w:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message `{msg}` should contain `{p}`");
    }
}

/// `file:line:col:` prefix of a syntax error.
fn assert_line_col(msg: &str, file: &str, line: usize, col: usize) {
    let want = format!("{file}:{line}:{col}: ");
    assert!(
        msg.starts_with(&want),
        "message `{msg}` should start with `{want}`"
    );
}

fn one_task(fields: &str) -> String {
    format!("tasks:\n  - {{ {fields} }}\n")
}

// ---------------------------------------------------------------- good input

#[test]
fn minimal_workload_gets_documented_defaults() {
    let w = parse_ok(&one_task("name: a, runtime: 1ms, period: 10ms"));
    assert_eq!(w.name, "workload");
    assert_eq!(w.platform.cpus, 1);
    assert_eq!(w.platform.hz, 1000);
    assert_eq!(w.platform.context_switch, 0);
    assert_eq!(w.platform.migration, 0);
    assert_eq!(w.platform.tick, 0);
    assert!(!w.platform.hrtick);
    assert_eq!(w.duration, S);
    assert_eq!(w.seed, 0);
    assert_eq!(w.on_miss, OnMiss::Continue);
    assert_eq!(w.scheduler.policy, Policy::Edf);
    assert_eq!(w.scheduler.fair, Policy::Cfs);
    assert_eq!(w.scheduler.placement, Placement::Linux);
    assert!(w.scheduler.cbs, "CBS is on by default with linux placement");
    assert_eq!(w.scheduler.rr_timeslice, 100 * MS);
    assert_eq!(w.scheduler.dl_margin, 0.0);

    let t = &w.tasks[0];
    assert_eq!(t.name, "a");
    assert_eq!(
        t.class,
        TaskClass::Deadline,
        "a task with a period is deadline class"
    );
    assert_eq!(t.runtime, MS);
    assert_eq!(t.period, Some(10 * MS));
    assert_eq!(t.offset, 0);
    assert_eq!(t.priority, None);
    assert_eq!(t.nice, 0);
    assert_eq!(t.affinity, None);
    assert_eq!(t.release, Release::Periodic);
    assert_eq!(t.exec, ExecModel::Wcet);
    assert!((w.utilisation() - 0.1).abs() < 1e-12);
}

#[test]
fn deadline_defaults_to_period() {
    let w = parse_ok(&one_task("name: a, runtime: 2ms, period: 7ms"));
    assert_eq!(w.tasks[0].deadline, 7 * MS);
    let w = parse_ok(&one_task(
        "name: a, runtime: 2ms, period: 7ms, deadline: 5ms",
    ));
    assert_eq!(w.tasks[0].deadline, 5 * MS);
}

#[test]
fn durations_accept_every_unit_and_integer_nanoseconds() {
    let w = parse_ok(
        "duration: 1.5s\ntasks:\n  - { name: a, runtime: 250us, period: 1000000, \
         deadline: 0.5ms, offset: 7ns }\n",
    );
    assert_eq!(w.duration, 1_500 * MS);
    let t = &w.tasks[0];
    assert_eq!(t.runtime, 250 * US);
    assert_eq!(t.period, Some(MS));
    assert_eq!(t.deadline, 500 * US);
    assert_eq!(t.offset, 7);
}

#[test]
fn count_expands_to_numbered_names() {
    let w = parse_ok(
        "tasks:\n  - { name: big, count: 4, runtime: 60ms, period: 100ms }\n  \
         - { name: small, count: 2, runtime: 5ms, period: 60ms }\n  \
         - { name: solo, runtime: 1ms, period: 10ms }\n",
    );
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["big1", "big2", "big3", "big4", "small1", "small2", "solo"]
    );
    assert!(w.tasks[..4]
        .iter()
        .all(|t| t.runtime == 60 * MS && t.period == Some(100 * MS)));
}

#[test]
fn count_one_still_numbers_the_name() {
    let w = parse_ok(&one_task("name: big, count: 1, runtime: 1ms, period: 10ms"));
    assert_eq!(w.tasks[0].name, "big1");
}

#[test]
fn unnamed_tasks_are_named_by_position() {
    let w = parse_ok(
        "tasks:\n  - { runtime: 1ms, period: 10ms }\n  - { runtime: 1ms, period: 10ms }\n",
    );
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t1", "t2"]);
}

#[test]
fn full_workload_with_every_block() {
    let w = parse_ok(
        r#"
name: everything
platform: { cpus: 4, hz: 250, context_switch: 2us, migration: 10us, tick: 1us, hrtick: true }
duration: 2s
seed: 42
on_miss: abort
scheduler: { deadline: illf, rt: fifo, fair: eevdf, placement: global, partition: ffd,
             rr_timeslice: 10ms, dl_margin: 0.05, cbs: false }
tasks:
  - { name: p, runtime: 1ms, period: 10ms, deadline: 8ms, offset: 3ms, affinity: [3, 1, 1] }
  - { name: f, class: fifo, priority: 80, runtime: 1ms, period: 5ms }
  - { name: r, class: rr, priority: 10, runtime: 1ms, period: 5ms }
  - { name: hog, class: normal, nice: -5 }
  - { name: b, class: batch, work: 5s }
  - { name: i, class: idle }
  - name: s
    runtime: 5ms
    period: 20ms
    release: sporadic
    jitter: 3ms
    exec: { uniform: [2ms, 5ms] }
"#,
    );
    assert_eq!(w.name, "everything");
    assert_eq!(w.platform.cpus, 4);
    assert_eq!(w.platform.hz, 250);
    assert_eq!(w.platform.context_switch, 2 * US);
    assert_eq!(w.platform.migration, 10 * US);
    assert_eq!(w.platform.tick, US);
    assert!(w.platform.hrtick);
    assert_eq!(w.duration, 2 * S);
    assert_eq!(w.seed, 42);
    assert_eq!(w.on_miss, OnMiss::Abort);
    assert_eq!(w.scheduler.policy, Policy::Illf);
    assert_eq!(w.scheduler.fair, Policy::Eevdf);
    assert_eq!(w.scheduler.placement, Placement::Global);
    assert_eq!(w.scheduler.rr_timeslice, 10 * MS);
    assert!((w.scheduler.dl_margin - 0.05).abs() < 1e-12);
    assert!(!w.scheduler.cbs);

    let by = |n: &str| w.tasks.iter().find(|t| t.name == n).unwrap();
    let p = by("p");
    assert_eq!(p.offset, 3 * MS);
    assert_eq!(
        p.affinity,
        Some(vec![1, 3]),
        "affinity is sorted and deduplicated"
    );
    assert!(p.allowed_on(1) && p.allowed_on(3) && !p.allowed_on(0));
    assert_eq!(by("f").class, TaskClass::Fifo);
    assert_eq!(by("f").priority, Some(80));
    assert_eq!(by("r").class, TaskClass::Rr);
    let hog = by("hog");
    assert_eq!(hog.class, TaskClass::Normal);
    assert_eq!(hog.nice, -5);
    assert_eq!(hog.period, None);
    assert_eq!(
        hog.work, None,
        "a normal task without work is CPU-bound for the run"
    );
    assert_eq!(hog.utilisation(), 0.0);
    assert_eq!(by("b").class, TaskClass::Batch);
    assert_eq!(by("b").work, Some(5 * S));
    assert_eq!(by("i").class, TaskClass::Idle);
    let s = by("s");
    assert_eq!(s.release, Release::Sporadic { jitter: 3 * MS });
    assert_eq!(
        s.exec,
        ExecModel::Uniform {
            min: 2 * MS,
            max: 5 * MS
        }
    );
}

#[test]
fn fifo_and_rr_tasks_may_leave_the_priority_to_the_default() {
    // The simulator gives such tasks rt priority 50 (docs/format.md).
    let w = parse_ok(&one_task("name: f, class: rr, runtime: 1ms, period: 10ms"));
    assert_eq!(w.tasks[0].class, TaskClass::Rr);
    assert_eq!(w.tasks[0].priority, None);
}

#[test]
fn cbs_defaults_off_without_linux_placement() {
    let w = parse_ok(
        "scheduler: { placement: partitioned }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n",
    );
    assert_eq!(w.scheduler.placement, Placement::Partitioned);
    assert!(!w.scheduler.cbs);
}

#[test]
fn exec_model_accepts_wcet_map_and_tag_forms() {
    let w = parse_ok(&one_task("name: a, runtime: 5ms, period: 10ms, exec: wcet"));
    assert_eq!(w.tasks[0].exec, ExecModel::Wcet);
    let w = parse_ok(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: !uniform [1ms, 2ms]",
    ));
    assert_eq!(
        w.tasks[0].exec,
        ExecModel::Uniform {
            min: MS,
            max: 2 * MS
        }
    );
}

#[test]
fn json_is_accepted_by_extension_and_as_yaml_text() {
    let text = r#"{"name": "j", "platform": {"cpus": 2}, "duration": "100ms",
        "scheduler": {"deadline": "llf"},
        "tasks": [{"name": "a", "count": 2, "runtime": "1ms", "period": 10000000,
                   "exec": {"uniform": ["500us", "1ms"]}}]}"#;
    let as_json = Workload::parse_str(text, Path::new(JSON), &Overrides::default()).unwrap();
    let as_yaml = Workload::parse_str(text, Path::new(YAML), &Overrides::default()).unwrap();
    assert_eq!(as_json, as_yaml);
    assert_eq!(as_json.platform.cpus, 2);
    assert_eq!(as_json.duration, 100 * MS);
    assert_eq!(as_json.scheduler.policy, Policy::Llf);
    assert_eq!(as_json.tasks.len(), 2);
    assert_eq!(as_json.tasks[1].name, "a2");
    assert_eq!(as_json.tasks[0].period, Some(10 * MS));
    assert_eq!(
        as_json.tasks[0].exec,
        ExecModel::Uniform {
            min: 500 * US,
            max: MS
        }
    );
    // The extension test is case-insensitive.
    assert!(Workload::parse_str(text, Path::new("W.JSON"), &Overrides::default()).is_ok());
}

#[test]
fn load_reads_files_of_both_formats() {
    let dir = std::env::temp_dir().join(format!("schedlab-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let y = dir.join("a.yaml");
    let j = dir.join("a.json");
    std::fs::write(&y, one_task("name: a, runtime: 1ms, period: 10ms")).unwrap();
    std::fs::write(
        &j,
        r#"{"tasks": [{"name": "a", "runtime": "1ms", "period": "10ms"}]}"#,
    )
    .unwrap();
    let wy = Workload::load(&y, &Overrides::default()).unwrap();
    let wj = Workload::load(&j, &Overrides::default()).unwrap();
    assert_eq!(wy, wj);
    // Errors from load name the file.
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, one_task("name: a, runtime: 1ms, period: 0")).unwrap();
    let msg = Workload::load(&bad, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with(&bad.display().to_string()), "{msg}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn from_spec_validates_a_spec_built_in_code() {
    let spec = WorkloadSpec {
        platform: Some(PlatformSpec {
            cpus: Some(2),
            ..Default::default()
        }),
        tasks: vec![TaskSpec {
            name: Some("x".into()),
            count: Some(3),
            runtime: Some(Dur(MS)),
            period: Some(Dur(4 * MS)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let w = Workload::from_spec(spec.clone(), &Overrides::default()).unwrap();
    assert_eq!(w.tasks.len(), 3);
    assert!((w.utilisation() - 0.75).abs() < 1e-12);

    let mut bad = spec;
    bad.tasks[0].deadline = Some(Dur(MS / 2));
    let msg = Workload::from_spec(bad, &Overrides::default()).unwrap_err();
    assert_eq!(msg, "runtime 1ms exceeds deadline 500us in task x1");
}

// ---------------------------------------------------------------- overrides

const OVERRIDABLE: &str = r#"
platform: { cpus: 4 }
duration: 1s
seed: 7
on_miss: continue
scheduler: { deadline: illf, fair: cfs, placement: global }
tasks:
  - { name: a, runtime: 1ms, period: 10ms }
"#;

fn with(ov: Overrides) -> Workload {
    Workload::parse_str(OVERRIDABLE, Path::new(YAML), &ov).unwrap()
}

#[test]
fn no_overrides_keep_the_file_values() {
    let w = with(Overrides::default());
    assert_eq!(w.platform.cpus, 4);
    assert_eq!(w.duration, S);
    assert_eq!(w.seed, 7);
    assert_eq!(w.on_miss, OnMiss::Continue);
    assert_eq!(w.scheduler.policy, Policy::Illf);
    assert_eq!(w.scheduler.placement, Placement::Global);
}

#[test]
fn override_policy_replaces_the_deadline_policy() {
    for p in [
        Policy::Edf,
        Policy::Llf,
        Policy::Rm,
        Policy::Dm,
        Policy::Fifo,
        Policy::Rr,
    ] {
        let w = with(Overrides {
            policy: Some(p),
            ..Default::default()
        });
        assert_eq!(w.scheduler.policy, p);
        assert_eq!(w.scheduler.fair, Policy::Cfs);
    }
}

#[test]
fn override_with_a_fair_policy_replaces_the_fair_policy() {
    let w = with(Overrides {
        policy: Some(Policy::Bfs),
        ..Default::default()
    });
    assert_eq!(w.scheduler.fair, Policy::Bfs);
    assert_eq!(w.scheduler.policy, Policy::Illf);
    let w = with(Overrides {
        policy: Some(Policy::Eevdf),
        ..Default::default()
    });
    assert_eq!(w.scheduler.fair, Policy::Eevdf);
}

#[test]
fn override_placement_cpus_duration_seed_on_miss() {
    let w = with(Overrides {
        placement: Some(Placement::Linux),
        cpus: Some(2),
        duration: Some((250 * MS).into()),
        seed: Some(99),
        on_miss: Some(OnMiss::Abort),
        ..Default::default()
    });
    assert_eq!(w.scheduler.placement, Placement::Linux);
    assert!(
        w.scheduler.cbs,
        "the cbs default follows the overridden placement"
    );
    assert_eq!(w.platform.cpus, 2);
    assert_eq!(w.duration, 250 * MS);
    assert_eq!(w.seed, 99);
    assert_eq!(w.on_miss, OnMiss::Abort);
}

#[test]
fn overrides_are_applied_before_validation() {
    let text = "platform: { cpus: 4 }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms, affinity: [3] }\n";
    let ov = Overrides {
        cpus: Some(2),
        ..Default::default()
    };
    let msg = Workload::parse_str(text, Path::new(YAML), &ov)
        .unwrap_err()
        .to_string();
    assert_has(&msg, &["task a", "affinity names CPU 3", "CPUs 0..1"]);

    let ov = Overrides {
        cpus: Some(0),
        ..Default::default()
    };
    let msg = Workload::parse_str(text, Path::new(YAML), &ov)
        .unwrap_err()
        .to_string();
    assert_has(&msg, &["--cpus", "at least 1"]);

    let ov = Overrides {
        duration: Some(0.into()),
        ..Default::default()
    };
    let msg = Workload::parse_str(text, Path::new(YAML), &ov)
        .unwrap_err()
        .to_string();
    assert_has(&msg, &["--duration", "longer than 0"]);
}

#[test]
fn file_names_are_checked_even_when_overridden() {
    // A typo in the file stays an error although the command line replaces the value.
    let t = "tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n";
    let all = Overrides {
        policy: Some(Policy::Edf),
        placement: Some(Placement::Partitioned),
        on_miss: Some(OnMiss::Abort),
        ..Default::default()
    };
    for (file, want) in [
        (
            "on_miss: sometimes\n",
            "on_miss: unknown on_miss `sometimes`",
        ),
        (
            "scheduler: { placement: nowhere }\n",
            "scheduler.placement: unknown placement",
        ),
        (
            "scheduler: { deadline: edff }\n",
            "scheduler.deadline: unknown policy `edff`",
        ),
    ] {
        let e = Workload::parse_str(&format!("{file}{t}"), Path::new(YAML), &all).unwrap_err();
        assert_has(&e.to_string(), &[want]);
    }
}

#[test]
fn ranges_are_checked_on_the_value_actually_used() {
    // The file's out-of-range cpus / duration are replaced before the range check.
    let text =
        "platform: { cpus: 0 }\nduration: 0\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n";
    let ov = Overrides {
        cpus: Some(2),
        duration: Some(S.into()),
        ..Default::default()
    };
    let w = Workload::parse_str(text, Path::new(YAML), &ov).unwrap();
    assert_eq!((w.platform.cpus, w.duration), (2, S));
}

#[test]
fn unknown_policy_name_for_overrides_lists_the_known_names() {
    // The CLI builds Overrides with Policy::parse; its error is what the user sees.
    let msg = Policy::parse("edff").unwrap_err();
    assert_has(
        &msg,
        &[
            "unknown policy `edff`",
            "edf",
            "llf",
            "illf",
            "rm",
            "dm",
            "cfs",
            "bfs",
        ],
    );
    assert_eq!(Policy::parse(" ILLF "), Ok(Policy::Illf));
    for (p, name) in Policy::ALL {
        assert_eq!(Policy::parse(name), Ok(p));
        assert_eq!(p.name(), name);
    }
    let msg = Placement::parse("everywhere").unwrap_err();
    assert_has(
        &msg,
        &[
            "unknown placement `everywhere`",
            "global",
            "partitioned",
            "linux",
        ],
    );
    let msg = OnMiss::parse("retry").unwrap_err();
    assert_has(&msg, &["unknown on_miss `retry`", "continue", "abort"]);
}

// ---------------------------------------------------------------- bad values

#[test]
fn runtime_exceeding_deadline_names_task_and_values() {
    let msg = err(
        "tasks:\n  - { name: big, count: 2, runtime: 10ms, period: 100ms }\n  \
         - { name: small, count: 3, runtime: 70ms, period: 100ms, deadline: 60ms }\n",
    );
    assert_eq!(
        msg,
        "w.yaml: runtime 70ms exceeds deadline 60ms in task small1"
    );
}

#[test]
fn runtime_exceeding_period_is_reported_against_the_defaulted_deadline() {
    let msg = err(&one_task("name: a, runtime: 11ms, period: 10ms"));
    assert_eq!(msg, "w.yaml: runtime 11ms exceeds deadline 10ms in task a");
}

#[test]
fn deadline_after_period_is_rejected() {
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, deadline: 20ms",
    ));
    assert_has(&msg, &["deadline 20ms exceeds period 10ms in task a"]);
}

#[test]
fn zero_period_is_rejected() {
    let msg = err(&one_task("name: a, runtime: 1ms, period: 0"));
    assert_eq!(msg, "w.yaml: task a: period must be longer than 0");
    let msg = err(&one_task("name: a, runtime: 1ms, period: 0ms"));
    assert_eq!(msg, "w.yaml: task a: period must be longer than 0");
}

#[test]
fn zero_runtime_and_zero_deadline_are_rejected() {
    let msg = err(&one_task("name: a, runtime: 0ms, period: 10ms"));
    assert_has(&msg, &["task a", "runtime must be longer than 0"]);
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, deadline: 0",
    ));
    assert_has(&msg, &["task a", "deadline must be longer than 0"]);
}

#[test]
fn missing_runtime_or_period_is_rejected() {
    let msg = err(&one_task("name: a, period: 10ms"));
    assert_has(&msg, &["task a", "runtime is missing"]);
    let msg = err(&one_task("name: Big, class: deadline, runtime: 1ms"));
    assert_eq!(msg, "w.yaml: task Big: a deadline task needs a period");
}

#[test]
fn negative_duration_is_rejected_with_its_location() {
    let msg = err(&one_task("name: a, runtime: -5ms, period: 10ms"));
    assert_line_col(&msg, YAML, 2, 25);
    assert_has(&msg, &["tasks[0] (a).runtime", "negative duration `-5ms`"]);
    let msg = err(&one_task("name: a, runtime: -5, period: 10ms"));
    assert_has(&msg, &["tasks[0] (a).runtime", "negative duration -5"]);
}

#[test]
fn unitless_nonsense_is_rejected() {
    let msg = err(&one_task("name: a, runtime: 10 parsecs, period: 10ms"));
    assert_line_col(&msg, YAML, 2, 25);
    assert_has(
        &msg,
        &[
            "tasks[0] (a).runtime",
            "unknown unit `parsecs`",
            "`10 parsecs`",
            "ns, us, ms or s",
        ],
    );
    let msg = err(&one_task("name: a, runtime: soon, period: 10ms"));
    assert_has(&msg, &["tasks[0] (a).runtime", "`soon` is not a duration"]);
}

#[test]
fn float_without_unit_is_rejected() {
    let msg = err(&one_task("name: a, runtime: 1.5, period: 10ms"));
    assert_line_col(&msg, YAML, 2, 25);
    assert_has(
        &msg,
        &["tasks[0] (a).runtime", "`1.5` has no unit", "`1.5ms`"],
    );
}

#[test]
fn fraction_of_a_nanosecond_is_rejected() {
    let msg = err(&one_task("name: a, runtime: 1.5ns, period: 10ms"));
    assert_has(
        &msg,
        &["tasks[0] (a).runtime", "whole number of nanoseconds"],
    );
}

#[test]
fn duration_overflowing_u64_ns_is_rejected_naming_the_limit() {
    // 18446744074 s is just above u64::MAX ns (≈ 18446744073.7 s).
    let msg = err(&one_task("name: a, runtime: 1ms, period: 18446744074s"));
    assert_line_col(&msg, YAML, 2, 38);
    assert_has(
        &msg,
        &[
            "tasks[0] (a).period",
            "`18446744074s` is above the limit of 1000000000s",
        ],
    );
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 18446744073709551616",
    ));
    assert_has(
        &msg,
        &["tasks[0]", ".period", "above the limit of 1000000000s"],
    );
    let msg = err("duration: 99999999999999999999999999999999999999999s\ntasks: []\n");
    assert_has(&msg, &["duration", "above the limit"]);
}

#[test]
fn unknown_top_level_field_is_named() {
    let msg = err("colour: red\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n");
    assert_line_col(&msg, YAML, 1, 1);
    assert_has(
        &msg,
        &["unknown field `colour`", "expected one of", "`tasks`"],
    );
}

#[test]
fn unknown_task_field_is_named_with_its_task() {
    let msg = err("tasks:\n  - name: a\n    runtime: 1ms\n    perod: 5ms\n");
    assert_line_col(&msg, YAML, 4, 5);
    assert_has(
        &msg,
        &["tasks[0] (a).perod", "unknown field `perod`", "`period`"],
    );
}

#[test]
fn unknown_field_in_platform_and_scheduler_is_named() {
    let msg = err("platform: { cpus: 2, cpu: 3 }\ntasks: []\n");
    assert_has(&msg, &["platform.cpu", "unknown field `cpu`", "`cpus`"]);
    let msg = err("scheduler: { policy: edf }\ntasks: []\n");
    assert_has(
        &msg,
        &["scheduler.policy", "unknown field `policy`", "`deadline`"],
    );
}

#[test]
fn unknown_policy_in_scheduler_is_rejected() {
    let msg =
        err("scheduler: { deadline: edfx }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n");
    assert_has(
        &msg,
        &[
            "scheduler.deadline",
            "unknown policy `edfx`",
            "known: edf, llf, illf",
        ],
    );
}

#[test]
fn policy_in_the_wrong_slot_is_rejected() {
    let t = "tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n";
    let msg = err(&format!("scheduler: {{ deadline: cfs }}\n{t}"));
    assert_has(
        &msg,
        &["scheduler.deadline", "`cfs` is not a real-time policy"],
    );
    let msg = err(&format!("scheduler: {{ fair: edf }}\n{t}"));
    assert_has(
        &msg,
        &["scheduler.fair", "`edf` is not a fair-share policy"],
    );
    let msg = err(&format!("scheduler: {{ rt: rm }}\n{t}"));
    assert_has(&msg, &["scheduler.rt", "must be fifo or rr"]);
}

#[test]
fn other_bad_scheduler_values_are_rejected() {
    let t = "tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n";
    let msg = err(&format!("scheduler: {{ placement: clustered }}\n{t}"));
    assert_has(
        &msg,
        &["scheduler.placement", "unknown placement `clustered`"],
    );
    let msg = err(&format!("scheduler: {{ partition: worst-fit }}\n{t}"));
    assert_has(
        &msg,
        &["scheduler.partition", "unknown heuristic `worst-fit`"],
    );
    let msg = err(&format!("scheduler: {{ rr_timeslice: 0 }}\n{t}"));
    assert_has(&msg, &["scheduler.rr_timeslice", "longer than 0"]);
    let msg = err(&format!("scheduler: {{ dl_margin: -0.1 }}\n{t}"));
    assert_has(&msg, &["scheduler.dl_margin", "outside 0..10"]);
    let msg = err(&format!("on_miss: retry\n{t}"));
    assert_has(&msg, &["on_miss", "unknown on_miss `retry`"]);
}

#[test]
fn zero_cpus_is_rejected() {
    let msg = err("platform: { cpus: 0 }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n");
    assert_eq!(msg, "w.yaml: platform.cpus: must be at least 1, got 0");
}

#[test]
fn too_many_cpus_and_negative_cpus_are_rejected() {
    let msg =
        err("platform: { cpus: 100000 }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n");
    assert_has(&msg, &["platform.cpus", "100000 is more than 1024"]);
    let msg = err("platform: { cpus: -1 }\ntasks: []\n");
    assert_line_col(&msg, YAML, 1, 19);
    assert_has(
        &msg,
        &[
            "platform.cpus",
            "integer `-1`",
            "expected a non-negative integer",
        ],
    );
}

#[test]
fn bad_platform_tick_values_are_rejected() {
    let t = "tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n";
    let msg = err(&format!("platform: {{ hz: 1000000 }}\n{t}"));
    assert_has(&msg, &["platform.hz", "above 100000"]);
    let msg = err(&format!("platform: {{ hz: 1000, tick: 1ms }}\n{t}"));
    assert_has(&msg, &["platform.tick", "not shorter than the tick period"]);
    // hz: 0 means no tick at all, so any tick cost is irrelevant and accepted.
    let w = parse_ok(&format!("platform: {{ hz: 0 }}\n{t}"));
    assert_eq!(w.platform.hz, 0);
}

#[test]
fn affinity_to_a_missing_cpu_is_rejected() {
    let msg = err("platform: { cpus: 2 }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms, affinity: [0, 2] }\n");
    assert_eq!(
        msg,
        "w.yaml: task a: affinity names CPU 2, but the platform has CPUs 0..1"
    );
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, affinity: [-1]",
    ));
    assert_has(&msg, &["task a", "affinity names CPU -1"]);
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, affinity: []",
    ));
    assert_has(&msg, &["task a", "affinity is empty"]);
}

#[test]
fn empty_task_list_is_rejected() {
    let want = "w.yaml: tasks: the task list is empty (a workload needs at least one task)";
    assert_eq!(err("tasks: []\n"), want);
    assert_eq!(err("name: nothing\n"), want);
    assert_eq!(err(""), want);
}

#[test]
fn duplicate_task_names_are_rejected() {
    let msg = err(
        "tasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n  - { name: a, runtime: 2ms, period: 10ms }\n",
    );
    assert_has(&msg, &["tasks: two tasks are named `a`"]);
    // count: expansion can collide with an explicit name.
    let msg = err(
        "tasks:\n  - { name: big, count: 2, runtime: 1ms, period: 10ms }\n  - { name: big2, runtime: 1ms, period: 10ms }\n",
    );
    assert_has(&msg, &["two tasks are named `big2`", "count: n"]);
}

#[test]
fn bad_count_and_bad_name_are_rejected() {
    let msg = err(&one_task("name: big, count: 0, runtime: 1ms, period: 10ms"));
    assert_eq!(
        msg,
        "w.yaml: tasks[0] (big).count: must be between 1 and 100000, got 0"
    );
    let msg = err(&one_task("name: '', runtime: 1ms, period: 10ms"));
    assert_has(&msg, &["tasks[0].name", "empty name"]);
}

#[test]
fn bad_priority_nice_and_class_are_rejected() {
    let msg = err(&one_task(
        "name: f, class: fifo, priority: 100, runtime: 1ms, period: 10ms",
    ));
    assert_has(&msg, &["task f", "priority 100 is outside 1..99"]);
    let msg = err(&one_task("name: n, class: normal, priority: 5"));
    assert_has(&msg, &["task n", "priority applies only to fifo/rr tasks"]);
    let msg = err(&one_task("name: n, class: normal, nice: 20"));
    assert_has(&msg, &["task n", "nice 20 is outside -20..19"]);
    let msg = err(&one_task("name: n, class: realtime"));
    assert_has(&msg, &["task n", "unknown class `realtime`"]);
}

#[test]
fn bad_release_and_exec_models_are_rejected() {
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, jitter: 1ms",
    ));
    assert_has(&msg, &["task a", "jitter needs `release: sporadic`"]);
    let msg = err(&one_task(
        "name: a, runtime: 1ms, period: 10ms, release: bursty",
    ));
    assert_has(&msg, &["task a", "release `bursty` is unknown"]);
    let msg = err(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: { uniform: [2ms, 6ms] }",
    ));
    assert_has(
        &msg,
        &["task a", "exec uniform [2ms, 6ms]", "max <= runtime 5ms"],
    );
    let msg = err(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: { uniform: [3ms, 2ms] }",
    ));
    assert_has(&msg, &["task a", "min <= max"]);
    let msg = err(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: { lognormal: [1ms, 2ms] }",
    ));
    assert_has(
        &msg,
        &[
            "tasks[0] (a).exec",
            "unknown execution-time model `lognormal`",
        ],
    );
    let msg = err(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: { uniform: [1ms] }",
    ));
    assert_has(&msg, &["tasks[0] (a).exec", "exactly two bounds", "got 1"]);
    let msg = err(&one_task(
        "name: a, runtime: 5ms, period: 10ms, exec: uniform",
    ));
    assert_has(&msg, &["tasks[0] (a).exec", "`uniform` needs its bounds"]);
}

#[test]
fn wrong_types_are_reported_in_words() {
    let msg = err("tasks: 5\n");
    assert_has(
        &msg,
        &["tasks: invalid type: integer `5`, expected a sequence"],
    );
    let msg = err("platform: [1]\ntasks: []\n");
    assert_has(&msg, &["platform", "expected a mapping of platform fields"]);
    let msg = err("just a string\n");
    assert_has(&msg, &["expected a mapping of workload fields"]);
    assert!(
        !msg.contains("WorkloadSpec"),
        "no Rust type names in messages: {msg}"
    );
}

// ---------------------------------------------------------------- broken text

#[test]
fn malformed_yaml_reports_line_and_column() {
    let msg = err("tasks:\n  - name: a\n   runtime: 1ms\n");
    assert_line_col(&msg, YAML, 3, 4);
    assert_has(&msg, &["did not find expected '-' indicator"]);
    assert!(
        !msg.contains(" at line "),
        "location is given once, as file:line:col: {msg}"
    );

    let msg = err("tasks:\n  - { name: a, runtime: 1ms\n");
    assert_line_col(&msg, YAML, 3, 1);
    assert_has(&msg, &["did not find expected ',' or '}'"]);

    let msg = err("name: \"abc\ntasks: []\n");
    assert_has(&msg, &["w.yaml:", "unexpected end of stream"]);
}

#[test]
fn duplicate_yaml_key_is_rejected() {
    let msg = err(&one_task("name: a, name: b, runtime: 1ms, period: 10ms"));
    assert_has(&msg, &["w.yaml:2:", "duplicate field `name`"]);
}

#[test]
fn malformed_json_reports_line_and_column() {
    let msg = err_at("{\"tasks\": [ {\"name\": \"a\", }]}", JSON);
    assert_line_col(&msg, JSON, 1, 27);
    assert_has(&msg, &["trailing comma"]);
    assert!(!msg.contains(" at line "), "{msg}");
    assert!(!msg.contains('?'), "no placeholder path segments: {msg}");

    let msg = err_at(
        "{\"tasks\": [\n  {\"name\": \"a\", \"runtime\": \"1ms\" \"period\": 3}\n]}",
        JSON,
    );
    assert_line_col(&msg, JSON, 2, 34);
    assert_has(&msg, &["tasks[0]", "expected `,` or `}`"]);

    let msg = err_at("{\"tasks\": [", JSON);
    assert_has(&msg, &["w.json:1:", "EOF"]);
}

#[test]
fn json_trailing_text_is_rejected() {
    let msg = err_at(
        r#"{"tasks": [{"name": "a", "runtime": "1ms", "period": "3ms"}]} extra"#,
        JSON,
    );
    assert_line_col(&msg, JSON, 1, 63);
    assert_has(&msg, &["trailing characters"]);
}

#[test]
fn json_value_errors_name_the_field_and_task() {
    let msg = err_at(
        r#"{"tasks": [{"name": "a", "runtime": "-1ms", "period": "3ms"}]}"#,
        JSON,
    );
    assert_line_col(&msg, JSON, 1, 42);
    assert_has(&msg, &["tasks[0] (a).runtime", "negative duration `-1ms`"]);
    let msg = err_at(r#"{"tasks": [{"name": "a", "runtim": "1ms"}]}"#, JSON);
    assert_has(&msg, &["tasks[0] (a).runtim", "unknown field `runtim`"]);
    let msg = err_at(
        r#"{"tasks": [{"name": "a", "runtime": 1.5, "period": "3ms"}]}"#,
        JSON,
    );
    assert_has(&msg, &["tasks[0] (a).runtime", "has no unit"]);
}

#[test]
fn missing_file_is_an_io_error_naming_the_file() {
    let path = PathBuf::from("/nonexistent/schedlab/no-such-workload.yaml");
    let e = Workload::load(&path, &Overrides::default()).unwrap_err();
    assert!(matches!(e, ModelError::Io { .. }), "{e:?}");
    let msg = e.to_string();
    assert_has(
        &msg,
        &[
            "/nonexistent/schedlab/no-such-workload.yaml",
            "cannot read workload",
        ],
    );
}

#[test]
fn error_kinds_match_the_stage() {
    let e = parse("tasks: [").unwrap_err();
    assert!(matches!(e, ModelError::Syntax { .. }), "{e:?}");
    let e = parse(&one_task("name: a, runtime: 1ms, period: 0")).unwrap_err();
    assert!(matches!(e, ModelError::Invalid { .. }), "{e:?}");
}

#[test]
fn arbitrary_garbage_never_panics() {
    let inputs = [
        "",
        "\0",
        "---",
        "- 1\n- 2",
        "tasks: [[[]]]",
        "{",
        "}",
        "tasks:\n  - ~\n",
        "tasks:\n  - name: [1, 2]\n",
        "tasks: !!binary aGVsbG8=",
        "&a [*a]",
        "*x",
        "tasks:\n  - { runtime: 1ms, period: 10ms, exec: !normal 3 }\n",
        "tasks: []\n---\ntasks: []\n",
    ];
    for text in inputs {
        for path in [YAML, JSON] {
            let _ = Workload::parse_str(text, Path::new(path), &Overrides::default());
        }
    }
}

// ---------------------------------------------------------------- time

#[test]
fn format_ns_uses_the_largest_exact_unit() {
    assert_eq!(format_ns(0), "0");
    assert_eq!(format_ns(60 * MS), "60ms");
    assert_eq!(format_ns(1_001 * US), "1001us");
    assert_eq!(format_ns(3 * S), "3s");
    assert_eq!(format_ns(u64::MAX), "18446744073709551615ns");
}

proptest! {
    #[test]
    fn format_then_parse_round_trips(ns in any::<u64>()) {
        // Every time up to the limit round-trips; every time above it is refused, naming it.
        if ns <= MAX_TIME_NS {
            prop_assert_eq!(parse_duration(&format_ns(ns)), Ok(ns));
        } else {
            let e = parse_duration(&format_ns(ns)).unwrap_err();
            prop_assert!(e.contains("above the limit of 1000000000s"), "{}", e);
        }
    }

    #[test]
    fn every_unit_round_trips_when_it_fits(v in 0u64..=MAX_TIME_NS / 1_000_000_000) {
        prop_assert_eq!(parse_duration(&format!("{v}s")), Ok(v * S));
        prop_assert_eq!(parse_duration(&format!("{v}ms")), Ok(v * MS));
        prop_assert_eq!(parse_duration(&format!("{v}us")), Ok(v * US));
        prop_assert_eq!(parse_duration(&format!("{v}ns")), Ok(v));
    }

    #[test]
    fn parse_duration_never_panics(s in "\\PC{0,24}") {
        let _ = parse_duration(&s);
    }
}
