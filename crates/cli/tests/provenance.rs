//! Every `--json` result says where it came from: `schedlab_version`, the `seed` in effect
//! and the `options` that produced it, appended after the result's own keys (which keep
//! their names, meanings and order).

mod common;
use common::{json_of, schedlab, Scratch};
use serde_json::{json, Value};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn ok(args: &[&str]) -> Value {
    let o = schedlab(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// The last three keys are the provenance; the ones before are the result's own.
fn assert_appended(v: &Value) {
    let k = keys(v);
    assert_eq!(
        k[k.len() - 3..],
        ["schedlab_version", "seed", "options"],
        "{k:?}"
    );
    assert_eq!(v["schedlab_version"], VERSION);
}

const SET: &str = "name: p\nplatform: { cpus: 2 }\nduration: 200ms\nseed: 11\nscheduler: { deadline: edf, placement: global }\ntasks:\n  - { name: a, runtime: 3ms, period: 10ms }\n  - { name: b, runtime: 9ms, period: 20ms }\n";

#[test]
fn simulate_json_carries_version_seed_and_options() {
    let d = Scratch::new("provenance-sim");
    let f = d.file("set.yaml", SET);
    let f = f.to_str().unwrap();
    let v = ok(&[
        "simulate",
        f,
        "--json",
        "--policy",
        "llf",
        "--cpus",
        "1",
        "--seed",
        "5",
        "--duration",
        "300ms",
        "--on-miss",
        "abort",
    ]);
    assert_appended(&v);
    assert_eq!(v["seed"], 5);
    assert_eq!(
        v["options"],
        json!({"policy": "llf", "placement": null, "cpus": 1, "duration": "300ms",
               "seed": 5, "on_miss": "abort", "platform": null})
    );
    // The result's own keys are unchanged and come first.
    assert_eq!(keys(&v)[..3], ["workload", "policy", "placement"]);
    assert_eq!(
        (v["policy"].as_str(), v["cpus"].as_u64()),
        (Some("llf"), Some(1))
    );

    // Nothing overridden: the file's seed, every option null.
    let v = ok(&["simulate", f, "--json"]);
    assert_appended(&v);
    assert_eq!(v["seed"], 11);
    assert!(
        v["options"]
            .as_object()
            .unwrap()
            .values()
            .all(Value::is_null),
        "{}",
        v["options"]
    );

    // Same input, same seed: the same object (wall_s aside).
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_s");
        v
    };
    assert_eq!(
        strip(ok(&["simulate", f, "--json", "--seed", "3"])),
        strip(ok(&["simulate", f, "--json", "--seed", "3"]))
    );
}

#[test]
fn compare_json_stamps_each_result_and_the_whole() {
    let d = Scratch::new("provenance-compare");
    let f = d.file("set.yaml", SET);
    let v = ok(&[
        "compare",
        f.to_str().unwrap(),
        "--policies",
        "edf,rm",
        "--placement",
        "partitioned",
        "--json",
    ]);
    assert_eq!(keys(&v)[0], "results");
    assert_appended(&v);
    assert_eq!(v["seed"], 11);
    assert_eq!(v["options"]["policies"], json!(["edf", "rm"]));
    assert_eq!(v["options"]["placement"], "partitioned");
    assert_eq!(v["options"]["policy"], Value::Null);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (r, p) in results.iter().zip(["edf", "rm"]) {
        assert_appended(r);
        assert_eq!(r["policy"], p);
        assert_eq!(r["options"]["policy"], p);
        assert_eq!(r["options"]["placement"], "partitioned");
        assert_eq!(r["seed"], 11);
    }
}

#[test]
fn analyze_json_carries_version_seed_and_options() {
    let d = Scratch::new("provenance-analyze");
    let f = d.file("set.yaml", SET);
    let v = ok(&["analyze", f.to_str().unwrap(), "--cpus", "1", "--json"]);
    assert_eq!(
        keys(&v)[..6],
        [
            "workload",
            "cpus",
            "tasks",
            "utilization",
            "density",
            "tests"
        ]
    );
    assert_appended(&v);
    assert_eq!(v["seed"], 11);
    assert_eq!(v["cpus"], 1);
    assert_eq!(v["options"]["cpus"], 1);
    assert_eq!(v["options"]["policy"], Value::Null);
}

#[test]
fn reproduce_json_carries_version_and_options() {
    let d = Scratch::new("provenance-reproduce");
    let out = d.path("out");
    let v = ok(&[
        "reproduce",
        "interactive",
        "--no-real",
        "--json",
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(keys(&v)[..2], ["experiment", "cases"]);
    assert_appended(&v);
    // Every case's workload fixes its own seeds; the command takes none.
    assert_eq!(v["seed"], Value::Null);
    assert_eq!(
        v["options"],
        json!({"experiment": "interactive", "no_real": true, "guest": false,
               "guest_results": null})
    );
}

#[test]
fn compare_with_a_platform_file_is_stamped_too() {
    let d = Scratch::new("provenance-compare-platform");
    let f = d.file("set.yaml", SET);
    let pf = d.file("platform.yaml", "platform:\n  cpus: 2\n  hz: 250\n");
    let pf = pf.to_str().unwrap();
    let v = ok(&[
        "compare",
        f.to_str().unwrap(),
        "--policies",
        "edf,rm",
        "--platform",
        pf,
        "--json",
    ]);
    assert_eq!(keys(&v)[..4], ["results", "real", "platform", "prediction"]);
    assert_appended(&v);
    assert_eq!(v["seed"], 11);
    assert_eq!(v["options"]["policies"], json!(["edf", "rm"]));
    assert_eq!(v["options"]["platform"], pf);
    assert_eq!(v["options"]["real"], false);
    // The default margin (the file sets none), as the real runs would use it.
    assert_eq!(v["options"]["margin"], 0.05);
    for (r, p) in v["results"].as_array().unwrap().iter().zip(["edf", "rm"]) {
        assert_appended(r);
        assert_eq!(r["options"]["policy"], p);
        assert_eq!(r["options"]["platform"], pf);
    }
}
