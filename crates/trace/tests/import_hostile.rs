//! Hostile and careless importer inputs: each is a clear user error (never the
//! "internal error ... please report" that means the importer made an invalid workload,
//! never a panic, never an allocation sized by the input).

use schedlab_model::{Overrides, Workload};
use schedlab_trace::import::{kernel, rtapp, ImportError, Imported};
use std::path::Path;

fn rt(text: &str) -> Result<Imported, ImportError> {
    rtapp::import(text, "t.json", &rtapp::Options::default())
}

fn ft(text: &str) -> Result<Imported, ImportError> {
    kernel::import(text, "t.txt", &kernel::Options::default())
}

fn user_error(r: Result<Imported, ImportError>, parts: &[&str]) {
    let e = match r {
        Ok(i) => panic!("expected an error, got:\n{}", i.yaml),
        Err(e) => {
            assert!(!e.internal, "{e}");
            e.to_string()
        }
    };
    for p in parts {
        assert!(e.contains(p), "`{p}` not in: {e}");
    }
}

fn valid(i: &Imported) -> Workload {
    Workload::parse_str(&i.yaml, Path::new("i.yaml"), &Overrides::default()).unwrap()
}

const SW: &str = "          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> a:1 [120]\n               a-1     [000]     1.001000: sched_switch:         a:1 [120] S ==> swapper/0:0 [120]\n";

#[test]
fn a_key_spelled_internal_error_is_the_users_error() {
    // The fuzz smoke pass once took this for the importer's own fault: the message
    // starts with the user's key, and the key began "internal error".
    user_error(
        rt(r#"{ "internal errortasks": { "a": { "run": 1000, "sleep": 1000 } } }"#),
        &["unknown top-level key `internal errortasks`"],
    );
}

#[test]
fn rtapp_instance_counts_are_bounded() {
    user_error(
        rt(r#"{ "tasks": { "a": { "instance": 100000000, "run": 1000, "sleep": 1000 } } }"#),
        &["tasks.a.instance", "between 1 and 100000", "100000000"],
    );
    user_error(
        rt(
            r#"{ "tasks": { "a": { "instance": 60000, "run": 1000, "sleep": 1000 },
                          "b": { "instance": 60000, "run": 1000, "sleep": 1000 } } }"#,
        ),
        &["tasks.b.instance", "120000 instances", "more than 100000"],
    );
}

#[test]
fn rtapp_empty_cpu_list_is_a_user_error() {
    user_error(
        rt(r#"{ "tasks": { "a": { "cpus": [], "run": 1000, "sleep": 1000 } } }"#),
        &["tasks.a.cpus", "empty CPU list"],
    );
}

#[test]
fn rtapp_names_that_clash_after_count_expansion_are_renamed() {
    // `a` × 2 expands to a1, a2, which a thread named `a1` would clash with.
    let i = rt(
        r#"{ "tasks": { "a": { "instance": 2, "run": 1000, "sleep": 1000 },
                               "a1": { "run": 1000, "sleep": 1000 },
                               "a2-2": { "run": 1000, "sleep": 1000 } } }"#,
    )
    .unwrap();
    let w = valid(&i);
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a1", "a2", "a1-2", "a2-2"]);
}

#[test]
fn rtapp_times_beyond_the_limit_are_user_errors() {
    user_error(
        rt(r#"{ "tasks": { "a": { "run": 1700000000000000, "sleep": 1000 } } }"#),
        &[
            "tasks.a.run",
            "above 1000000000000000 µs",
            "limit for any time",
        ],
    );
    user_error(
        rt(
            r#"{ "tasks": { "a": { "run": 1000, "sleep": 1000 } }, "global": { "duration": 999999999999999 } }"#,
        ),
        &["global.duration", "limit for any time"],
    );
    // Each event within the limit, their sum beyond it.
    let many = (0..12)
        .map(|k| format!("\"run{k}\": 999999999999999"))
        .collect::<Vec<_>>()
        .join(", ");
    user_error(
        rt(&format!(
            r#"{{ "tasks": {{ "a": {{ "policy": "SCHED_FIFO", {many}, "sleep": 1 }} }} }}"#
        )),
        &["a: its runtime would be", "limit for any time"],
    );
}

#[test]
fn trace_cpu_counts_are_bounded_before_allocating() {
    // `cpus=2000000000` allocated 16 GB; `cpus=18446744073709551615` panicked.
    for n in ["2000000000", "18446744073709551615", "0"] {
        user_error(
            ft(&format!("cpus={n}\n{SW}")),
            &["line 1:", &format!("cpus={n}"), "1 to 1024 CPUs"],
        );
    }
    // A trace line on CPU [99999]: once "internal error ... please report".
    let line = "               a-1     [99999]     1.002000: sched_switch:         a:1 [120] S ==> swapper/0:0 [120]\n";
    user_error(
        ft(&format!("{SW}{line}")),
        &["line 3:", "CPU [99999] is beyond the 1024 CPUs"],
    );
    // The largest CPU is fine (this trace once panicked in debug builds: a wake-up
    // inferred before the previous sleep made a negative gap).
    let line = line.replace("[99999]", "[1023]");
    let i = ft(&format!("{SW}{line}")).unwrap();
    assert_eq!(valid(&i).platform.cpus, 1024);
}

#[test]
fn a_trace_spanning_more_than_the_time_limit_is_a_user_error() {
    let late = "               a-1     [000] 1000000001.002000: sched_switch:         a:1 [120] S ==> swapper/0:0 [120]\n";
    user_error(ft(&format!("{SW}{late}")), &["the trace spans", "limit"]);
}

#[test]
fn control_characters_in_names_and_comments_do_not_break_the_workload() {
    // Found by the rtapp_import and ftrace_import fuzz targets: a DEL in an rt-app thread
    // name, control bytes in a comm, reached the YAML (names, comments) and made it
    // invalid ("internal error ... control characters are not allowed").
    let i = rt(
        "{ \"tasks\": { \"thre\u{7f}d\\u0001\": { \"run\": 1000, \"sleep\": 1000 },
                              \"x\u{2028}y\": { \"run\": 1000, \"sleep\": 1000 },
                              \"thre?d?\": { \"run\": 1000, \"sleep\": 1000 } } }",
    )
    .unwrap();
    let w = valid(&i);
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["thre?d?", "x?y", "thre?d?-2"]);
    let trace = SW.replace("a:1", "a\u{1}\u{85}b:1");
    let i = ft(&format!("cpus=1\n{trace}")).unwrap();
    assert_eq!(valid(&i).tasks[0].name, "a??b");
    // The input's own file name lands in a comment too.
    let i = rtapp::import(
        "{ \"tasks\": { \"a\": { \"run\": 1000, \"sleep\": 1000 } } }",
        "evil\u{7f}\u{2029}name.json",
        &rtapp::Options::default(),
    )
    .unwrap();
    valid(&i);
}
