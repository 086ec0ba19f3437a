//! Experiments build their workloads as values (`workloads::Draft`) and validate them as
//! `simulate` validates a user's file: a typed change is judged, and refused, exactly as
//! the same change written in the file.

use schedlab_experiments::workloads::Draft;
use schedlab_experiments::{reproduce, NoProgress, Options, EXPERIMENTS};
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;

const TABLE1_2CPU: &str = include_str!("../../../examples/table1-2cpu.yaml");

/// `text` with `from` replaced: the file a user would write for the same change.
fn written(from: &str, to: &str) -> String {
    assert!(TABLE1_2CPU.contains(from), "{from}");
    TABLE1_2CPU.replacen(from, to, 1)
}

#[test]
fn a_typed_change_is_refused_with_the_message_simulate_gives_for_the_file() {
    let d = Draft::parse(TABLE1_2CPU, "examples/table1-2cpu.yaml")
        .unwrap()
        .with_count("small", 0)
        .unwrap();
    let typed = d.workload(&Overrides::default()).unwrap_err();
    let file = Workload::parse_str(
        &written("count: 4", "count: 0"),
        Path::new("examples/table1-2cpu.yaml"),
        &Overrides::default(),
    )
    .unwrap_err();
    assert_eq!(typed.message, file.to_string());
    assert!(typed.message.contains("small"), "{}", typed.message);
}

#[test]
fn a_typed_change_simulates_as_the_same_change_written_in_the_file() {
    let d = Draft::parse(TABLE1_2CPU, "t")
        .unwrap()
        .with_hz(1000)
        .with_duration(500_000_000)
        .with_count("big", 1)
        .unwrap();
    let mut typed = d.simulate(Policy::Edf, false).unwrap();
    let text = written("hz: 250", "hz: 1000")
        .replacen("duration: 3s", "duration: 500ms", 1)
        .replacen("count: 2", "count: 1", 1);
    let ov = Overrides {
        policy: Some(Policy::Edf),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&text, Path::new("t"), &ov).unwrap();
    let file = simulate(&w, &SimOptions::default()).unwrap();
    // Everything but the time the run took.
    typed.wall_s = file.wall_s;
    assert_eq!(typed.tasks.len(), 5);
    assert_eq!(typed, file);
}

#[test]
fn a_change_to_a_task_the_file_does_not_have_is_an_error_naming_it() {
    let e = Draft::parse(TABLE1_2CPU, "t")
        .unwrap()
        .with_count("huge", 3)
        .unwrap_err();
    assert!(e.message.contains("no task `huge`"), "{}", e.message);
}

/// Every experiment's workloads pass `simulate`'s validation: each is built as a
/// `Draft` (or parsed as a file) and validated by `Workload::from_spec`, and an invalid
/// one fails its experiment. Run without measuring this machine.
#[test]
fn every_experiment_runs_on_valid_workloads() {
    for e in EXPERIMENTS {
        let r = reproduce(e.name, &Options::default(), &NoProgress)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert!(!r.cases.is_empty(), "{}", e.name);
        assert!(
            r.cases.iter().all(|c| !c.case.simulated.is_null()),
            "{}: a case without simulated figures",
            e.name
        );
    }
}
