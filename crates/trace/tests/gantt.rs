//! The terminal Gantt chart shows who ran in each bucket and where deadlines passed.
use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, SimOptions};
use schedlab_trace::{gantt, Schedule};
use std::path::Path;

fn schedule(yaml: &str) -> Schedule {
    let w = Workload::parse_str(yaml, Path::new("w.yaml"), &Overrides::default()).unwrap();
    let r = simulate(&w, &SimOptions { trace: true }).unwrap();
    Schedule::from_sim(&w, &r).unwrap()
}

fn rows(chart: &str) -> Vec<&str> {
    chart
        .lines()
        .filter(|l| l.starts_with("cpu") || l.starts_with("miss "))
        .collect()
}

#[test]
fn one_letter_per_bucket_and_dots_for_idle() {
    // EDF on one CPU: a [0,2) b [2,3) idle [3,4) a [4,6) idle [6,8); columns of 500us.
    let s = schedule(
        "platform: { cpus: 1 }\nduration: 8ms\ntasks:\n  - { name: a, runtime: 2ms, period: 4ms }\n  - { name: b, runtime: 1ms, period: 8ms }\n",
    );
    let chart = gantt::render(&s, 0, 8_000_000, 16);
    assert_eq!(rows(&chart), vec!["cpu0  AAAABB..AAAA...."], "{chart}");
    assert!(chart.contains("A a  B b  . idle"), "{chart}");
    assert!(!chart.contains("miss"), "{chart}");
    // 2ms..6ms in columns of 400us: the column half b, half idle goes to b.
    let chart = gantt::render(&s, 2_000_000, 6_000_000, 10);
    assert_eq!(rows(&chart)[0], "cpu0  BBB..AAAAA", "{chart}");
    assert!(
        chart.starts_with("Gantt 2ms..6ms: 10 columns of 400us"),
        "{chart}"
    );
}

#[test]
fn a_bucket_goes_to_whoever_ran_longest() {
    let s = schedule(
        "platform: { cpus: 1 }\nduration: 8ms\ntasks:\n  - { name: a, runtime: 2ms, period: 4ms }\n  - { name: b, runtime: 1ms, period: 8ms }\n",
    );
    // Columns of 3ms: [0,3) a 2ms b 1ms -> A; [3,6) idle 1ms a 2ms -> A; [6,8) idle.
    let chart = gantt::render(&s, 0, 9_000_000, 10);
    assert!(rows(&chart)[0].starts_with("cpu0  "), "{chart}");
    let occ = gantt::occupancy(&s, 0, 9_000_000, 3);
    assert_eq!(occ, vec![vec![Some(0), Some(0), None]]);
}

#[test]
fn missed_deadlines_are_marked_with_the_task_letter() {
    // RM on one CPU, utilisation 1.1: the slow task misses every 35ms deadline.
    let s = schedule(
        "platform: { cpus: 1 }\nduration: 70ms\nscheduler: { deadline: rm }\ntasks:\n  - { name: fast, runtime: 3ms, period: 5ms }\n  - { name: slow, runtime: 18ms, period: 35ms }\n",
    );
    let misses: Vec<u64> = s
        .jobs
        .iter()
        .filter(|j| j.missed)
        .map(|j| j.deadline)
        .collect();
    assert!(!misses.is_empty());
    let chart = gantt::render(&s, 0, 70_000_000, 70);
    let miss_row = rows(&chart)
        .into_iter()
        .find(|l| l.starts_with("miss"))
        .unwrap()
        .to_string();
    for d in misses.iter().filter(|&&d| d < 70_000_000) {
        let col = 6 + (d / 1_000_000) as usize;
        assert_eq!(miss_row.as_bytes()[col], b'B', "{chart}");
    }
    assert!(chart.contains("miss row:"));
}
