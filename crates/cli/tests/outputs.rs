//! Output files under attack and failure: planted symbolic links, devices, the input as
//! the output, failures after some outputs were produced, `-` for standard output.

mod common;
use common::{schedlab, Scratch};
use std::fs;
use std::os::unix::fs::symlink;

const W: &str = "platform: { cpus: 2 }\nduration: 100ms\n\
                 tasks:\n  - { name: a, runtime: 2ms, period: 10ms }\n";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp_files(s: &Scratch) -> Vec<String> {
    fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_symlink_planted_at_the_old_temporary_name_is_not_followed() {
    let s = Scratch::new("out-symlink");
    let w = s.file("w.yaml", W);
    let victim = s.file("victim", "root's file\n");
    symlink(&victim, s.path("r.html.tmp")).unwrap();
    symlink(&victim, s.path("r.json.tmp")).unwrap();
    let o = schedlab(&[
        "report",
        w.to_str().unwrap(),
        "-o",
        s.path("r.html").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = schedlab(&[
        "simulate",
        w.to_str().unwrap(),
        "--json",
        "-o",
        s.path("r.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "root's file\n");
    assert!(fs::read_to_string(s.path("r.html"))
        .unwrap()
        .contains("<html"));
    assert!(fs::read_to_string(s.path("r.json"))
        .unwrap()
        .contains("\"deadline_misses\""));
    // Only the planted links remain as *.tmp.
    let mut left = tmp_files(&s);
    left.sort();
    assert_eq!(left, ["r.html.tmp", "r.json.tmp"]);
}

#[test]
fn the_input_is_never_overwritten_by_its_result() {
    let s = Scratch::new("out-input");
    let w = s.file("w.yaml", W);
    let ws = w.to_str().unwrap();
    for args in [
        vec!["simulate", ws, "-o", ws],
        vec!["simulate", ws, "--jobs-csv", ws],
        vec!["report", ws, "-o", ws],
    ] {
        let o = schedlab(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("refusing to overwrite"),
            "{}",
            stderr(&o)
        );
        assert_eq!(fs::read_to_string(&w).unwrap(), W, "{args:?}");
    }
    // The same file by another name (a hard link) is the same file.
    let alias = s.path("alias.yaml");
    fs::hard_link(&w, &alias).unwrap();
    let o = schedlab(&["simulate", ws, "-o", alias.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(fs::read_to_string(&w).unwrap(), W);
}

#[test]
fn devices_and_directories_are_refused_not_replaced() {
    let s = Scratch::new("out-device");
    let w = s.file("w.yaml", W);
    let o = schedlab(&["simulate", w.to_str().unwrap(), "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    let m = fs::metadata("/dev/null").unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &m.file_type()
    ));
    let o = schedlab(&["simulate", w.to_str().unwrap(), "-o", s.0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("a directory"), "{}", stderr(&o));
}

#[test]
fn a_failed_run_leaves_no_output_and_changes_none() {
    let s = Scratch::new("out-fail");
    let w = s.file("w.yaml", W);
    let old_csv = s.file("jobs.csv", "old\n");
    // The trace and the CSV are produced, then the main output is refused.
    let o = schedlab(&[
        "simulate",
        w.to_str().unwrap(),
        "--trace-out",
        s.path("t.txt").to_str().unwrap(),
        "--jobs-csv",
        old_csv.to_str().unwrap(),
        "-o",
        "/dev/full",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!s.path("t.txt").exists());
    assert_eq!(fs::read_to_string(&old_csv).unwrap(), "old\n");
    assert!(tmp_files(&s).is_empty(), "{:?}", tmp_files(&s));
}

#[test]
fn missing_directories_are_created_and_dash_is_stdout() {
    let s = Scratch::new("out-mkdir");
    let w = s.file("w.yaml", W);
    let deep = s.path("out/deeper/dhall.json");
    let o = schedlab(&[
        "simulate",
        w.to_str().unwrap(),
        "--json",
        "-o",
        deep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read_to_string(&deep)
        .unwrap()
        .contains("\"deadline_misses\""));
    let o = schedlab(&["simulate", w.to_str().unwrap(), "--json", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"deadline_misses\""));
    assert!(!std::path::Path::new("-").exists());
}
