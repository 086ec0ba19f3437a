//! Every shipped workload in `examples/` must load, and the key facts its header comment
//! states (task counts, names, utilisation, platform) must hold.

use schedlab_model::time::MS;
use schedlab_model::{ExecModel, Overrides, Placement, Policy, Release, Workload};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn load_all() -> BTreeMap<String, Workload> {
    let mut all = BTreeMap::new();
    let entries = std::fs::read_dir(examples_dir()).expect("examples/ exists");
    for entry in entries {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "yaml" | "yml" | "json") {
            continue;
        }
        let w = Workload::load(&path, &Overrides::default())
            .unwrap_or_else(|e| panic!("example does not load: {e}"));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        all.insert(stem, w);
    }
    all
}

fn get<'a>(all: &'a BTreeMap<String, Workload>, name: &str) -> &'a Workload {
    all.get(name)
        .unwrap_or_else(|| panic!("examples/{name}.yaml is missing"))
}

fn names(w: &Workload) -> Vec<&str> {
    w.tasks.iter().map(|t| t.name.as_str()).collect()
}

fn close(a: f64, b: f64, eps: f64) -> bool {
    (a - b).abs() <= eps
}

#[test]
fn every_example_loads_and_the_expected_ones_exist() {
    let all = load_all();
    for name in [
        "dhall",
        "dhall-m2",
        "e2",
        "table1",
        "partitionable",
        "fixed-priority",
        "rm-overload",
        "sporadic",
    ] {
        get(&all, name);
    }
    for (name, w) in &all {
        assert!(!w.tasks.is_empty(), "{name}");
        // Every shipped example states what it reproduces in a comment header.
        let text = std::fs::read_to_string(examples_dir().join(format!("{name}.yaml")))
            .unwrap_or_default();
        assert!(
            text.starts_with('#'),
            "examples/{name}.yaml should start with a comment"
        );
    }
}

#[test]
fn dhall_m4() {
    let all = load_all();
    let w = get(&all, "dhall");
    assert_eq!(w.platform.cpus, 4);
    assert_eq!(w.platform.hz, 1000);
    assert_eq!(w.duration, 1_000 * MS);
    assert_eq!(w.tasks.len(), 5);
    assert_eq!(names(w), ["heavy", "light1", "light2", "light3", "light4"]);
    assert_eq!(w.tasks[0].runtime, 100 * MS);
    assert_eq!(w.tasks[0].deadline, 100 * MS);
    assert!(w.tasks[1..]
        .iter()
        .all(|t| t.runtime == MS && t.deadline == 99 * MS));
    assert!(close(w.utilisation(), 1.0 + 4.0 / 99.0, 1e-9));
    assert_eq!(w.scheduler.policy, Policy::Edf);
    assert_eq!(w.scheduler.placement, Placement::Global);
}

#[test]
fn dhall_m2() {
    let all = load_all();
    let w = get(&all, "dhall-m2");
    assert_eq!(w.platform.cpus, 2);
    assert_eq!(names(w), ["heavy", "light1", "light2"]);
    assert_eq!(w.tasks[0].period, Some(10 * MS));
    assert!(w.tasks[1..]
        .iter()
        .all(|t| t.runtime == MS && t.period == Some(9 * MS)));
    assert!(close(w.utilisation(), 1.0 + 2.0 / 9.0, 1e-9));
}

#[test]
fn e2() {
    let all = load_all();
    let w = get(&all, "e2");
    assert_eq!(w.platform.cpus, 1);
    assert_eq!(w.platform.hz, 1000);
    assert_eq!(names(w), ["t1", "t2", "t3"]);
    assert_eq!((w.tasks[0].runtime, w.tasks[0].deadline), (5 * MS, 50 * MS));
    assert_eq!(
        (w.tasks[2].runtime, w.tasks[2].deadline),
        (60 * MS, 100 * MS)
    );
    assert!(close(w.utilisation(), 0.8, 1e-9));
}

#[test]
fn table1() {
    let all = load_all();
    let w = get(&all, "table1");
    assert_eq!(w.platform.cpus, 4);
    assert_eq!(w.platform.hz, 1000);
    assert_eq!(w.duration, 3_000 * MS);
    assert_eq!(w.tasks.len(), 12);
    assert_eq!(w.scheduler.placement, Placement::Linux);
    assert!(w.scheduler.cbs);
    assert!(
        close(w.utilisation(), 3.0667, 1e-4),
        "U = {}",
        w.utilisation()
    );
    // T1, T5, T9 of the paper.
    assert_eq!(w.tasks[0].name, "big1");
    assert_eq!(w.tasks[4].name, "small1");
    assert_eq!(w.tasks[8].name, "small5");
    assert_eq!(w.tasks[11].name, "small8");
}

#[test]
fn partitionable() {
    let all = load_all();
    let w = get(&all, "partitionable");
    assert_eq!(w.platform.cpus, 2);
    assert_eq!(w.scheduler.placement, Placement::Partitioned);
    assert!(close(w.utilisation(), 1.8, 1e-9));
    // The header's first-fit-decreasing assignment: cpu0 {a, c}, cpu1 {b, d, e}.
    let mut by_u: Vec<(f64, &str)> = w
        .tasks
        .iter()
        .map(|t| (t.utilisation(), t.name.as_str()))
        .collect();
    by_u.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut load = [0.0f64; 2];
    let mut cpu_of = BTreeMap::new();
    for (u, name) in by_u {
        let cpu = (0..2).find(|&c| load[c] + u <= 1.0 + 1e-12).expect("fits");
        load[cpu] += u;
        cpu_of.insert(name, cpu);
    }
    assert_eq!(cpu_of["a"], 0);
    assert_eq!(cpu_of["c"], 0);
    assert_eq!(cpu_of["b"], 1);
    assert_eq!(cpu_of["d"], 1);
    assert_eq!(cpu_of["e"], 1);
    assert!(close(load[0], 0.9, 1e-9) && close(load[1], 0.9, 1e-9));
}

/// Worst-case response time of task `i` under fixed priorities (index order = priority),
/// deadlines equal to periods; None when it exceeds the period.
fn rta(tasks: &[(u64, u64)], i: usize) -> Option<u64> {
    let (c, t) = tasks[i];
    let mut r = c;
    loop {
        let next = c + tasks[..i]
            .iter()
            .map(|&(cj, tj)| r.div_ceil(tj) * cj)
            .sum::<u64>();
        if next > t {
            return None;
        }
        if next == r {
            return Some(r);
        }
        r = next;
    }
}

fn rm_ordered(w: &Workload) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = w
        .tasks
        .iter()
        .map(|t| (t.runtime / MS, t.period.unwrap() / MS))
        .collect();
    v.sort_by_key(|&(_, p)| p);
    v
}

#[test]
fn fixed_priority_is_rm_schedulable_above_the_liu_layland_bound() {
    let all = load_all();
    let w = get(&all, "fixed-priority");
    assert_eq!(w.platform.cpus, 1);
    assert_eq!(w.scheduler.policy, Policy::Rm);
    let n = w.tasks.len() as f64;
    assert!(w.utilisation() > n * (2f64.powf(1.0 / n) - 1.0));
    let ts = rm_ordered(w);
    let r: Vec<Option<u64>> = (0..ts.len()).map(|i| rta(&ts, i)).collect();
    assert_eq!(
        r,
        [Some(1), Some(3), Some(10)],
        "the header's response times"
    );
}

#[test]
fn rm_overload_misses_under_rm_only() {
    let all = load_all();
    let w = get(&all, "rm-overload");
    assert_eq!(w.scheduler.policy, Policy::Rm);
    let u = w.utilisation();
    assert!(u > 2.0 * (2f64.sqrt() - 1.0) && u <= 1.0, "U = {u}");
    let ts = rm_ordered(w);
    assert_eq!(rta(&ts, 0), Some(2));
    assert_eq!(rta(&ts, 1), None, "slow is not RM-schedulable");
    assert_eq!(w.duration, 350 * MS);
}

#[test]
fn sporadic() {
    let all = load_all();
    let w = get(&all, "sporadic");
    assert!(w
        .tasks
        .iter()
        .any(|t| matches!(t.release, Release::Sporadic { jitter } if jitter > 0)));
    let control = w.tasks.iter().find(|t| t.name == "control").unwrap();
    assert_eq!(
        control.exec,
        ExecModel::Uniform {
            min: 2 * MS,
            max: 5 * MS
        }
    );
    let density: f64 = w
        .tasks
        .iter()
        .map(|t| t.runtime as f64 / t.deadline as f64)
        .sum();
    assert!(close(density, 0.425, 1e-9));
}
