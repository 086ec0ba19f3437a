//! The PM QoS CPU latency request of `schedlab latency` (docs/latency.md, "Idle states and
//! PM QoS"): held for the run and said so, released when the process ends — SIGKILL
//! included — and a refusal names what is missing.

mod common;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
const DEVICE: &str = "/dev/cpu_dma_latency";
/// One at a time: each reads the system-wide limit the others' requests would change.
static SERIAL: Mutex<()> = Mutex::new(());

/// The system-wide CPU latency limit now (µs), read from the device.
fn limit() -> u32 {
    let b = std::fs::read(DEVICE).unwrap();
    i32::from_ne_bytes([b[0], b[1], b[2], b[3]]).max(0) as u32
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn the_request_is_held_during_the_run_and_reported() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |extra: &[&str]| -> Value {
        let out = Command::new(BIN)
            .args(["latency", "--duration", "300ms", "--cpus", "0", "--json"])
            .args(extra)
            .output()
            .unwrap();
        common::json_of(&out)
    };
    let v = run(&[]);
    assert_eq!(
        v["pm_qos"]["dma_latency_us"], 0,
        "the default is cyclictest's 0"
    );
    assert_eq!(v["pm_qos"]["limit_us"], 0, "held: the system limit is 0");
    let v = run(&["--laptop"]);
    assert!(v["pm_qos"]["dma_latency_us"].is_null(), "{}", v["pm_qos"]);
    let v = run(&["--dma-latency", "5"]);
    assert_eq!(v["pm_qos"]["dma_latency_us"], 5);
    assert!(v["pm_qos"]["limit_us"].as_u64().unwrap() <= 5);
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn a_killed_run_releases_its_request() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const US: u32 = 1234;
    if limit() < US {
        eprintln!(
            "skipped: another process holds a stricter request ({} us)",
            limit()
        );
        return;
    }
    let mut child = Command::new(BIN)
        .args([
            "latency",
            "--duration",
            "20s",
            "--cpus",
            "0",
            "--policy",
            "other",
        ])
        .args(["--dma-latency", &US.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while limit() != US {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the request never showed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: nothing of schedlab's runs after it
    child.wait().unwrap();
    assert_ne!(limit(), US, "the kernel dropped the request with the file");
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn without_write_access_the_message_names_the_device() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // As nobody (setpriv, util-linux): the device is root's, mode 0600.
    let sh = |extra: &str| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args([
                "latency",
                "--duration",
                "200ms",
                "--cpus",
                "0",
                "--policy",
                "other",
            ])
            .args(extra.split_whitespace())
            .output()
            .unwrap()
    };
    let out = sh("--dma-latency 0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/cpu_dma_latency") && err.contains("permission denied"),
        "{err}"
    );
    // The default request is best effort: the run goes on without it and says so.
    let out = sh("--json");
    let v: Value = common::json_of(&out);
    assert!(v["pm_qos"]["dma_latency_us"].is_null());
    assert!(
        v["warnings"].to_string().contains("measured without it"),
        "{}",
        v["warnings"]
    );
}
