//! `schedlab run`: the workload as real threads on this machine's kernel.
//!
//! These tests need CAP_SYS_NICE (root) and SCHED_DEADLINE; CI runs them as root on a
//! 2-CPU VM. Where the build finds no such capability (crates/cli/build.rs) the harness
//! reports them as ignored, with the reason. Real
//! runs never overlap (one lock), and they assert robust facts only — policies applied,
//! counts, misses with margins — printing the noisy figures (switch rates, response
//! times) instead of asserting them tightly: on these VMs busy loops drift 30-50% in
//! speed and wake-up latencies reach milliseconds.

mod common;
use common::Scratch;
use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, SimOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
static REAL: Mutex<()> = Mutex::new(());

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// Why real runs cannot happen here, if they cannot.
fn skip_reason() -> Option<String> {
    if common::cap_eff() & (1 << 23) == 0 {
        return Some("needs CAP_SYS_NICE (run as root)".into());
    }
    None
}

/// The test is built to run here (`cfg(real_kernel)`, see build.rs), so a missing
/// capability at run time is a failure, not a silent pass.
macro_rules! needs_root {
    () => {
        if let Some(why) = skip_reason() {
            panic!("built for real-kernel tests but cannot run them now: {why}");
        }
    };
}

/// Time the host took from this VM's CPUs so far (/proc/stat's steal column, in ns).
fn steal_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: u64 = stat
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|f| f.parse().ok())
        .unwrap_or(0);
    // USER_HZ is 100 on every Linux ABI that schedlab runs on.
    ticks * 10_000_000
}

/// CPU time spent on all CPUs so far by anything (/proc/stat's first line less its idle
/// and iowait columns, in ns).
fn busy_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cols: Vec<u64> = stat
        .lines()
        .next()
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .filter_map(|f| f.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let total: u64 = cols.iter().take(8).sum();
    let idle = cols.get(3).copied().unwrap_or(0) + cols.get(4).copied().unwrap_or(0);
    (total - idle) * 10_000_000 // USER_HZ, as in steal_ns
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn run(args: &[&str]) -> (Output, Value) {
    let out = Command::new(BIN).arg("run").args(args).output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn per_cpu_s(v: &Value) -> f64 {
    v["context_switches_per_cpu_per_s"].as_f64().unwrap()
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn edf_table1_analogue_meets_every_deadline_with_the_default_margin() {
    needs_root!();
    if cpus() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let file = example("table1-2cpu.yaml");
    let args = [
        file.to_str().unwrap(),
        "--policy",
        "edf",
        "--duration",
        "3s",
        "--json",
    ];
    // A VM can stall a vCPU for milliseconds; such a hiccup must not decide the test,
    // so a run with misses gets up to two more tries (all are reported). The claim is
    // zero misses against the 260 of 260 that margin 0 gives: if every try misses a few,
    // the host took time from this VM during each (steal time) and none missed more
    // than 10%, that is host noise, said and accepted; anything else fails.
    let mut tries = Vec::new();
    let (out, v) = loop {
        let steal0 = steal_ns();
        let (out, v) = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let (misses, steal) = (v["deadline_misses"].as_u64().unwrap(), steal_ns() - steal0);
        eprintln!(
            "run {}: {misses} misses, host steal time {steal} ns",
            tries.len() + 1
        );
        tries.push((misses, steal));
        if misses == 0 || tries.len() == 3 {
            break (out, v);
        }
    };
    assert!(out.status.success(), "{}", stderr(&out));
    if tries.iter().all(|&(m, _)| m > 0) {
        let noise = tries.iter().all(|&(m, steal)| steal > 0 && m <= 26);
        assert!(noise, "misses in every run (misses, steal ns): {tries:?}");
        eprintln!("every run missed a few deadlines while the host stole time: {tries:?}");
    }
    // 2 big tasks × 30 jobs + 4 small × 50 jobs.
    assert_eq!(v["jobs_released"], 260);
    assert_eq!(v["jobs_completed"], 260);
    assert_eq!(v["partial"], false);
    assert_eq!(v["restored"], true);
    for t in v["tasks"].as_array().unwrap() {
        assert_eq!(t["kernel_policy"], "SCHED_DEADLINE", "{t}");
        let c: u64 = if t["name"].as_str().unwrap().starts_with("big") {
            60_000_000
        } else {
            5_000_000
        };
        assert_eq!(t["budget_ns"].as_u64().unwrap(), c + c / 20, "{t}");
    }

    // Switches: the simulator's prediction for the same workload (SCHED_DEADLINE's
    // global EDF, linux placement, CBS with the same margin) against the kernel.
    let w = Workload::load(&file, &Overrides::default()).unwrap();
    let sim = simulate(&w, &SimOptions::default()).unwrap();
    let outs = v["thread_switches"].as_u64().unwrap() as f64;
    eprintln!(
        "switches/CPU/s: simulated {:.1}, measured {:.1} (perf, system-wide); \
         simulated total {}, worker threads switched out {} times",
        sim.context_switches_per_cpu_per_s,
        per_cpu_s(&v),
        sim.context_switches,
        outs
    );
    // Tolerance. The simulated count covers the workload only; every one of its
    // switches has a worker on at least one side, so it lies between the number of
    // times the workers were switched out (each worker→x switch) and twice that (each
    // out is followed by an in, and x→worker switches from idle count too). We allow 20%
    // on both bounds for what the kernel does and the model does not (a kernel thread
    // preempting a worker, a wake-up landing on the other CPU first).
    let s = sim.context_switches as f64;
    assert!(
        s >= 0.8 * outs && s <= 2.4 * outs,
        "simulated {s} switches, workers switched out {outs} times"
    );
    // The system-wide count includes the workload's switches.
    assert!(v["context_switches"].as_u64().unwrap() as f64 >= outs);
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn margin_zero_misses_on_the_kernel_and_the_simulator_with_overheads_predicts_it() {
    needs_root!();
    if cpus() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let file = example("table1-2cpu.yaml");
    let (out, v) = run(&[
        file.to_str().unwrap(),
        "--policy",
        "edf",
        "--margin",
        "0",
        "--duration",
        "3s",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let released = v["jobs_released"].as_u64().unwrap();
    let misses = v["deadline_misses"].as_u64().unwrap();
    eprintln!("margin 0 on the kernel: {misses} misses of {released} jobs");
    // Measured here: every job misses (each overruns its budget by its own wake-up and
    // clock costs, is throttled until its next period). Assert a robust half.
    assert!(misses * 2 >= released, "{misses} of {released}");

    // The idealised simulator (no overheads) sees no problem ...
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("dl_margin: 0.05", "dl_margin: 0");
    let ideal = Workload::parse_str(&text, &file, &Overrides::default()).unwrap();
    assert_eq!(ideal.scheduler.dl_margin, 0.0);
    let r = simulate(&ideal, &SimOptions::default()).unwrap();
    assert_eq!(r.deadline_misses, 0);
    // ... while the same simulator with CBS (linux placement) and a small per-switch
    // overhead charged to the incoming job (20 µs: the order of what `schedlab
    // calibrate` measures for a switch plus a timer wake-up on these VMs) predicts
    // misses, for the same reason as the kernel: the job needs more than its budget.
    let text = text.replace("hz: 250 }", "hz: 250, context_switch: 20us }");
    let real_ish = Workload::parse_str(&text, &file, &Overrides::default()).unwrap();
    assert_eq!(real_ish.platform.context_switch, 20_000);
    let r = simulate(&real_ish, &SimOptions::default()).unwrap();
    eprintln!(
        "simulator with 20us switch cost: {} misses, {} throttles",
        r.deadline_misses, r.throttles
    );
    assert!(r.deadline_misses > 0);
    assert!(r.throttles > 0);
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn an_overloaded_fifo_set_reports_misses_and_ends_normally() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("overload");
    let n = cpus();
    // U = 0.8 × (n + 1) > n: more demand than CPUs, on SCHED_FIFO (no admission).
    let file = s.file(
        "over.yaml",
        &format!(
            "name: overload\nplatform: {{ cpus: {n} }}\nduration: 2s\ntasks:\n  - {{ name: hog, count: {}, runtime: 80ms, period: 100ms }}\n",
            n + 1
        ),
    );
    let t = Instant::now();
    let (out, v) = run(&[file.to_str().unwrap(), "--policy", "fifo", "--json"]);
    let wall = t.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    eprintln!(
        "overload: {} misses of {} jobs, {} completed, wall {:?}",
        v["deadline_misses"], v["jobs_released"], v["jobs_completed"], wall
    );
    assert!(v["deadline_misses"].as_u64().unwrap() > 0);
    assert_eq!(v["partial"], false);
    assert_eq!(v["restored"], true);
    assert_eq!(v["tasks"][0]["kernel_policy"], "SCHED_FIFO 49");
    assert!(wall < Duration::from_secs(5), "{wall:?}");
    // Provenance, as every --json result has it: the version, the seed in effect (the
    // workload's default) and the options given (--policy only).
    assert_eq!(v["schedlab_version"], env!("CARGO_PKG_VERSION"));
    assert!(v["seed"].is_u64(), "{}", v["seed"]);
    assert_eq!(v["options"]["policy"], "fifo");
    assert_eq!(v["options"]["cpus"], serde_json::Value::Null);
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn llf_through_the_dispatcher_meets_deadlines_and_reports_decision_cost() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("llf");
    // U = 1.0 on 2 CPUs (0.5 on 1): easy for LLF.
    let n = cpus().min(2);
    let file = s.file(
        "easy.yaml",
        &format!(
            "name: easy\nplatform: {{ cpus: {n} }}\nduration: 2s\ntasks:\n  - {{ name: a, count: {n}, runtime: 10ms, period: 40ms }}\n  - {{ name: b, count: {n}, runtime: 25ms, period: 100ms }}\n"
        ),
    );
    let (out, v) = run(&[file.to_str().unwrap(), "--policy", "llf", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let d = &v["dispatcher"];
    eprintln!(
        "llf via the dispatcher: {} misses of {}, {} decisions, median {} ns, p99 {} ns, switches/CPU/s {:.1}",
        v["deadline_misses"], v["jobs_released"], d["decisions"], d["median_ns"], d["p99_ns"], per_cpu_s(&v)
    );
    assert_eq!(v["deadline_misses"], 0, "{v}");
    assert_eq!(v["placement"], "global");
    assert!(d["decisions"].as_u64().unwrap() > 1000, "{d}"); // ≥ one per 1 ms tick
    let (med, p99) = (
        d["median_ns"].as_u64().unwrap(),
        d["p99_ns"].as_u64().unwrap(),
    );
    assert!(med > 0 && p99 >= med, "{d}");
    assert!(v["laxity_evaluations"].as_u64().unwrap() > 0);
    assert!(v["tasks"][0]["kernel_policy"]
        .as_str()
        .unwrap()
        .starts_with("dispatched"));
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn sigint_ends_the_run_within_a_second_with_a_partial_result() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let file = example("table1-2cpu.yaml");
    let n = cpus().min(2).to_string();
    let child = Command::new(BIN)
        .args([
            "run",
            file.to_str().unwrap(),
            "--cpus",
            &n,
            "--policy",
            "rm",
        ])
        .args(["--duration", "20s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let t = Instant::now();
    // The shell's builtin kill: no procps needed.
    let k = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    assert!(k.success());
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    eprintln!("SIGINT to exit: {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted by SIGINT"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
    assert_eq!(v["stopped_by"], "SIGINT");
    assert_eq!(v["restored"], true);
    let d = v["duration_ns"].as_u64().unwrap();
    assert!(d > 500_000_000 && d < 5_000_000_000, "{d}");
}

/// Whether one of `pid`'s threads is SCHED_DEADLINE (policy 6 in /proc/PID/task/TID/sched).
fn has_deadline_thread(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("sched")).ok())
        .any(|s| {
            s.lines()
                .any(|l| l.starts_with("policy") && l.split(':').nth(1).map(str::trim) == Some("6"))
        })
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn sigint_during_sched_deadline_admission_retries_ends_them_at_once() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    // Other SCHED_DEADLINE tasks (util-linux's chrt, sleeping) hold 0.9 of a CPU each on
    // all CPUs but one, so the kernel admits table1-2cpu's big tasks (1.26) but refuses
    // the rest with EBUSY, and the runner retries for at least 3 s.
    let holders: Vec<_> = (1..cpus().max(2))
        .map(|_| {
            Command::new("chrt")
                .args(["-d", "--sched-runtime", "900000000", "--sched-deadline"])
                .args([
                    "1000000000",
                    "--sched-period",
                    "1000000000",
                    "0",
                    "sleep",
                    "30",
                ])
                .spawn()
                .expect("chrt (util-linux)")
        })
        .collect();
    let file = example("table1-2cpu.yaml");
    let child = Command::new(BIN)
        .args([
            "run",
            file.to_str().unwrap(),
            "--cpus",
            "2",
            "--policy",
            "edf",
        ])
        .args(["--duration", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first admitted task: the runner is then in its retries.
    let seen = Instant::now();
    while !has_deadline_thread(child.id()) && seen.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let retrying = has_deadline_thread(child.id());
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let k = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    for mut h in holders {
        let _ = h.kill();
        let _ = h.wait();
    }
    assert!(k.success());
    assert!(
        retrying,
        "no task of the run became SCHED_DEADLINE within 5 s: {}",
        stderr(&out)
    );
    eprintln!("SIGINT during the admission retries to exit: {took:?}");
    // The retries alone would take 3 s more.
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted by SIGINT while setting up, before any job ran"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn bandwidth_sched_deadline_refuses_is_named_with_asked_and_available() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("admission");
    // U = 0.95 per CPU: under the classic 0.95 × n, over n × (0.95 − 0.05 fair_server).
    let n = cpus();
    let file = s.file(
        "bw.yaml",
        &format!("name: bw\nplatform: {{ cpus: {n} }}\nduration: 1s\ntasks:\n  - {{ name: t, count: {n}, runtime: 95ms, period: 100ms }}\n"),
    );
    let (out, _) = run(&[file.to_str().unwrap(), "--policy", "edf", "--margin", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("SCHED_DEADLINE admission"), "{e}");
    let (asked, admits) = (0.95 * n as f64, 0.9 * n as f64);
    assert!(e.contains(&format!("ask for bandwidth {asked:.3}")), "{e}");
    assert!(e.contains(&format!("admits at most {admits:.3}")), "{e}");
    assert!(e.contains("fair_server"), "{e}");
    assert!(out.stdout.is_empty());
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
#[cfg_attr(
    all(real_kernel, not(capsh)),
    ignore = "needs capsh to drop the capability (apt-get install libcap2-bin)"
)]
fn without_cap_sys_nice_the_missing_capability_is_named() {
    needs_root!();
    let capsh = common::capsh();
    let file = example("table1-2cpu.yaml");
    let out = Command::new(capsh)
        .args(["--drop=cap_sys_nice", "--", "-c"])
        .arg(format!("exec {BIN} run {} --duration 1s", file.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("missing capability CAP_SYS_NICE"), "{e}");
    assert!(out.stdout.is_empty());
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn calibrate_writes_a_platform_the_simulator_uses_and_compare_real_pairs_columns() {
    needs_root!();
    if cpus() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("calibrate");
    let pf = s.0.join("platform.yaml");
    let out = Command::new(BIN)
        .args(["calibrate", "-o", pf.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&pf).unwrap();
    eprintln!("{text}");
    assert!(
        text.contains("platform:") && text.contains("context_switch:"),
        "{text}"
    );
    assert!(text.contains("migration:"), "{text}");

    // The calibrated simulator predicts the margin-0 misses too.
    let file = example("table1-2cpu.yaml");
    let out = Command::new(BIN)
        .args([
            "compare",
            file.to_str().unwrap(),
            "--policies",
            "edf",
            "--margin",
            "0",
        ])
        .args(["--platform", pf.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sim = &v["results"][0];
    eprintln!(
        "calibrated simulator, margin 0: {} misses, {} throttles",
        sim["deadline_misses"], sim["throttles"]
    );
    assert!(sim["deadline_misses"].as_u64().unwrap() > 0, "{sim}");
    assert!(v["real"].is_null());

    // compare --real: a simulated and a measured object per policy.
    let out = Command::new(BIN)
        .args([
            "compare",
            file.to_str().unwrap(),
            "--real",
            "--policies",
            "edf,illf",
        ])
        .args([
            "--duration",
            "1s",
            "--platform",
            pf.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (sims, reals) = (
        v["results"].as_array().unwrap(),
        v["real"].as_array().unwrap(),
    );
    assert_eq!((sims.len(), reals.len()), (2, 2));
    assert_eq!(reals[0]["policy"], "edf");
    assert_eq!(reals[0]["real"], true);
    assert_eq!(reals[1]["policy"], "illf");
    assert!(reals[1]["dispatcher"]["decisions"].as_u64().unwrap() > 0);
    for (s, r) in sims.iter().zip(reals) {
        eprintln!(
            "{}: simulated {:.1} switches/CPU/s, {} misses; measured {:.1}, {} misses",
            s["policy"],
            per_cpu_s(s),
            s["deadline_misses"],
            per_cpu_s(r),
            r["deadline_misses"]
        );
        assert_eq!(s["jobs_released"], r["jobs_released"]);
    }
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn nice_mix_on_one_cpu_gets_the_simulated_eevdf_shares() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let file = example("nice-mix.yaml");
    let (out, v) = run(&[file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let w = Workload::load(&file, &Overrides::default()).unwrap();
    let sim = simulate(&w, &SimOptions::default()).unwrap();
    let real: Vec<f64> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu_time_ns"].as_f64().unwrap())
        .collect();
    let total: f64 = real.iter().sum();
    let sim_total: u64 = sim.tasks.iter().map(|t| t.cpu_time_ns).sum();
    for (i, t) in sim.tasks.iter().enumerate() {
        let (r, s) = (real[i] / total, t.cpu_time_ns as f64 / sim_total as f64);
        eprintln!("{}: real share {r:.4}, simulated eevdf {s:.4}", t.name);
        // Shares are relative among the three, so other load on CPU 0 cancels out;
        // 3 points absolute leaves room for a VM's stolen ticks.
        assert!(
            (r - s).abs() < 0.03,
            "{}: real {r:.4} vs simulated {s:.4}",
            t.name
        );
    }
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn backend_scx_names_what_is_missing_on_a_kernel_without_sched_ext() {
    needs_root!();
    let file = example("table1-2cpu.yaml");
    let file = file.to_str().unwrap();
    // Policies the BPF schedulers do not have are refused before anything runs.
    let o = Command::new(BIN)
        .args(["run", file, "--backend", "scx", "--policy", "rm"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("edf, llf and illf"), "{}", stderr(&o));
    if Path::new("/sys/kernel/sched_ext").exists() {
        eprintln!(
            "skipped the rest: this kernel has sched_ext (scx/guest/run.sh runs --backend scx)"
        );
        return;
    }
    let o = Command::new(BIN)
        .args(["run", file, "--backend", "scx", "--policy", "illf"])
        .args(["--duration", "100ms"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("has no sched_ext") && e.contains("CONFIG_SCHED_CLASS_EXT"),
        "{e}"
    );
}

/// An interactive mix: `ui` (run 2 ms / sleep 8 ms) and `ui2` (phases with a leading
/// sleep) beside one hog on 2 CPUs, so the interactive tasks always have CPU to spare.
const INTERACTIVE_MIX: &str = "\
name: interactive-mix
platform: { cpus: 2, hz: 250 }
duration: 3s
tasks:
  - { name: hog }
  - { name: ui, run: 2ms, sleep: 8ms }
  - { name: ui2, phases: [{ sleep: 5ms }, { run: 1ms }, { sleep: 4ms }] }
  - { name: batch, work: 200ms, run: 4ms, sleep: 6ms }
";

#[test]
fn an_interactive_mix_wakes_as_often_as_simulated_and_gets_its_demand() {
    needs_root!();
    if cpus() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("interactive-mix");
    let file = dir.file("mix.yaml", INTERACTIVE_MIX);
    let w = Workload::load(&file, &Overrides::default()).unwrap();
    let sim = serde_json::to_value(simulate(&w, &SimOptions::default()).unwrap()).unwrap();
    let hog_share = |v: &Value| v["tasks"][0]["fair"]["share"].as_f64().unwrap_or(0.0);
    // "Spare CPU" needs a machine not busy with other work: the fair tasks get their own
    // CPU group weighted far above other sessions (--fair-group), and the hog, which the
    // simulator gives a whole CPU, shows how much of it the run got. Up to three tries;
    // the least disturbed one is checked, or the test says why it cannot be.
    // Other work also shows as CPU time the run's tasks did not use: a build beside the
    // test can leave the hog its share yet delay every burst of `ui` (seen: 274 wake-ups
    // of 300 with the hog at 93 %). More than 15 % of a CPU used by others over the run
    // means no CPU to spare.
    let secs = 3.0;
    let others = |busy: u64, v: &Value| {
        let ours: f64 = v["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["cpu_time_ns"].as_f64().unwrap_or(0.0))
            .sum();
        (busy as f64 - ours).max(0.0) / (secs * 1e9)
    };
    let spare_in = |v: &Value, other: f64| hog_share(v) >= 0.9 * hog_share(&sim) && other < 0.15;
    let mut best: Option<(Value, f64)> = None;
    for _ in 0..3 {
        let busy0 = busy_ns();
        let (out, v) = run(&[file.to_str().unwrap(), "--fair-group", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let other = others(busy_ns() - busy0, &v);
        eprintln!(
            "hog share {:.3} (simulated {:.3}); other work {:.2} CPUs",
            hog_share(&v),
            hog_share(&sim),
            other
        );
        if best.as_ref().is_none_or(|(b, bo)| {
            (spare_in(&v, other), hog_share(&v) - other) > (spare_in(b, *bo), hog_share(b) - bo)
        }) {
            best = Some((v, other));
        }
        if best.as_ref().is_some_and(|(b, bo)| spare_in(b, *bo)) {
            break;
        }
    }
    let (v, other) = best.unwrap();
    // Without a CPU to spare only what does not depend on timing is checked (keys,
    // samples, entitlements, the makespan's identity), and the test says so.
    let spare = spare_in(&v, other);
    if !spare {
        eprintln!(
            "counts and shares not checked: the machine is busy with other work (the hog got {:.0}% of a CPU, simulated {:.0}%; other work used {:.2} CPUs): no CPU to spare",
            100.0 * hog_share(&v),
            100.0 * hog_share(&sim),
            other
        );
    }
    for (i, name) in [(1, "ui"), (2, "ui2"), (3, "batch")] {
        let (r, s) = (&v["tasks"][i], &sim["tasks"][i]);
        assert_eq!(r["name"], name);
        let (rw, sw) = (r["jobs"].as_f64().unwrap(), s["jobs"].as_f64().unwrap());
        let (rs, ss) = (
            r["fair"]["share"].as_f64().unwrap(),
            s["fair"]["share"].as_f64().unwrap(),
        );
        eprintln!(
            "{name}: wake-ups real {rw} simulated {sw}; share real {rs:.4} simulated {ss:.4}; latency real p50 {} p99 {} ns",
            r["latency"]["p50_ns"], r["latency"]["p99_ns"]
        );
        // Every wake-up has a latency sample, and the same fair keys as the simulator's.
        assert_eq!(r["latency"]["samples"].as_f64(), Some(rw));
        for key in s["fair"].as_object().unwrap().keys() {
            assert!(r["fair"].get(key).is_some(), "{name}: fair.{key} missing");
        }
        // With a CPU to spare a wake-up is late by tens of µs, not milliseconds, so the
        // count is the simulated one within a few per second (every late wake-up or
        // preempted burst shifts the rest: on a VM shared with other work ~3/s here).
        if spare {
            assert!(
                (rw - sw).abs() <= 5.0 * secs,
                "{name}: {rw} wake-ups for real, {sw} simulated"
            );
            // Its share is its demand (2 of every 10 ms ...), within 2 points.
            assert!((rs - ss).abs() < 0.02, "{name}: share {rs} vs {ss}");
        }
    }
    // `work:` finishes (200 ms of CPU in 4 ms bursts, 6 ms apart: 494 ms simulated; a
    // burst that shares a CPU with the hog for a while takes longer) and is the makespan;
    // the CPU-bound hog has an entitlement, the others none.
    let fin = v["tasks"][3]["fair"]["finished_ns"].as_f64().unwrap();
    let sim_fin = sim["tasks"][3]["fair"]["finished_ns"].as_f64().unwrap();
    eprintln!("batch finished at {fin} ns, simulated {sim_fin}");
    assert!(
        fin >= sim_fin && (!spare || fin < 1.5 * sim_fin),
        "finished {fin} vs {sim_fin}"
    );
    assert_eq!(v["fairness"]["makespan_ns"].as_f64(), Some(fin));
    assert_eq!(v["tasks"][0]["fair"]["entitled_share"].as_f64(), Some(1.0));
    assert!(v["tasks"][1]["fair"]["entitled_share"].is_null());
    assert!(v["fairness"]["decisions"].is_null());
}

#[test]
fn simulated_only_platform_fields_are_warned_about_for_real() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("warned-fields");
    let file = dir.file(
        "irqs.yaml",
        "platform: { cpus: 1, irqs: [{ name: eth0, period: 1ms, handler: 5us }] }
duration: 200ms
tasks: [{ name: ui, run: 1ms, sleep: 4ms }]
",
    );
    let (out, v) = run(&[file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("platform.irqs: the 1 simulated interrupt source(s) are not generated")),
        "{warnings:?}"
    );
    // Refusals happen before anything runs, with exit 2.
    std::fs::write(
        &file,
        "scheduler: { weights: grouped-5 }\ntasks: [{ name: hog }]\n",
    )
    .unwrap();
    let (out, _) = run(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("scheduler.weights: the kernel's nice-to-weight table is `linux`")
    );
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
#[cfg_attr(
    all(real_kernel, not(cgroup_v1_cpu)),
    ignore = "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu (run --fair-group needs one)"
)]
fn a_fair_group_left_by_sigkill_is_removed_by_the_next_run() {
    needs_root!();
    let cg = Path::new("/sys/fs/cgroup/cpu");
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("fair-group-kill");
    let file = dir.file(
        "hogs.yaml",
        "name: hogs\nplatform: { cpus: 1 }\nduration: 20s\ntasks:\n  - { name: hog, count: 2 }\n",
    );
    let mut child = Command::new(BIN)
        .args(["run", file.to_str().unwrap(), "--fair-group", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let group = cg.join(format!("schedlab-{}-0", child.id()));
    let t = Instant::now();
    while !group.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = group.exists();
    child.kill().unwrap(); // SIGKILL: no drop runs
    child.wait().unwrap();
    assert!(seen, "{} was never created", group.display());
    assert!(
        group.exists(),
        "the kill left nothing to recover: test proves nothing"
    );

    // The next real run, whatever it is, removes it before it starts and says so.
    let small = dir.file(
        "one.yaml",
        "name: one\nplatform: { cpus: 1 }\nduration: 200ms\ntasks:\n  - { name: t, runtime: 1ms, period: 10ms }\n",
    );
    let (out, v) = run(&[small.to_str().unwrap(), "--policy", "rm", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!group.exists(), "{} is still there", group.display());
    let note = stderr(&out);
    assert!(
        note.contains(&format!("removed the cpu cgroup schedlab-{}-0", child.id())),
        "{note}"
    );
    assert!(
        v["warnings"].to_string().contains("cpu cgroup"),
        "the recovery is in warnings: {}",
        v["warnings"]
    );
}

/// Outputs a real run could not write at its end are refused before it starts (no
/// capability needed: nothing runs): the workload file itself as `-o` (by another name
/// too), a device, a directory, a path under a regular file. The input is unchanged, no
/// run was announced, and it took far less than the workload's 3 s.
#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_run_starts() {
    let s = Scratch::new("run-outputs");
    let text = "name: w\nplatform: { cpus: 1 }\nduration: 3s\ntasks:\n  - { name: t, runtime: 1ms, period: 10ms }\n";
    let file = s.file("w.yaml", text);
    std::fs::hard_link(&file, s.0.join("alias.yaml")).unwrap();
    let under_file = s.0.join("w.yaml/out.json");
    let alias = s.0.join("alias.yaml");
    let cases: [(&str, &str); 5] = [
        (file.to_str().unwrap(), "refusing to overwrite it"),
        (alias.to_str().unwrap(), "refusing to overwrite it"),
        ("/dev/full", "not a regular file"),
        (s.0.to_str().unwrap(), "it is a directory"),
        (under_file.to_str().unwrap(), "Not a directory"),
    ];
    for (out_path, says) in cases {
        let started = Instant::now();
        let (out, _) = run(&[file.to_str().unwrap(), "-o", out_path]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "-o {out_path}: {e}");
        assert!(e.contains(&format!("cannot write {out_path}: ")), "{e}");
        assert!(e.contains(says), "-o {out_path}: {e}");
        assert!(!e.contains("for real"), "the run started: {e}");
        assert!(started.elapsed() < Duration::from_secs(2), "-o {out_path}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    // --trace-out and --jobs-csv are checked the same way.
    let (out, _) = run(&[file.to_str().unwrap(), "--jobs-csv", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("refusing to overwrite it"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// `SCHEDLAB_LOCK_WAIT` is a number of seconds from 0 to 86400 (fractions allowed);
/// anything else is refused with exit 2 before the run, naming the variable, instead of
/// meaning 600 s.
#[test]
fn a_bad_lock_wait_is_refused_before_the_run() {
    let s = Scratch::new("lock-wait");
    let file = s.file(
        "w.yaml",
        "name: w\nplatform: { cpus: 1 }\nduration: 3s\ntasks:\n  - { name: t, runtime: 1ms, period: 10ms }\n",
    );
    for bad in ["abc", "-1", "1e9", "nan", ""] {
        let out = Command::new(BIN)
            .args(["run", file.to_str().unwrap()])
            .env("SCHEDLAB_LOCK_WAIT", bad)
            .output()
            .unwrap();
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {e}");
        assert!(e.contains(&format!("SCHEDLAB_LOCK_WAIT={bad}: ")), "{e}");
        assert!(e.contains("from 0 to 86400"), "{e}");
        assert!(!e.contains("for real"), "the run started: {e}");
    }
}

/// A lock held by a process that is not a schedlab run (here this test, with `flock`)
/// is refused with exit 1 (docs/errors.md), naming that process from /proc/locks, not
/// the PID of an earlier run left in the lock file.
#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn a_lock_held_by_another_process_names_it_not_a_stale_pid() {
    use std::io::{Seek, Write};
    use std::os::unix::io::AsRawFd;
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("lock-holder");
    let file = s.file(
        "w.yaml",
        "name: w\nplatform: { cpus: 1 }\nduration: 1s\ntasks:\n  - { name: t, runtime: 1ms, period: 10ms }\n",
    );
    // A PID that has exited: an earlier run's, left in the file.
    let mut gone = Command::new("true").spawn().unwrap();
    let stale = gone.id();
    gone.wait().unwrap();
    std::fs::create_dir_all("/run/schedlab").unwrap();
    let mut lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open("/run/schedlab/machine.lock")
        .unwrap();
    // Another engineer's real run may hold it: wait for it (up to a minute).
    let deadline = Instant::now() + Duration::from_secs(60);
    // SAFETY: a valid open descriptor.
    while unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        assert!(Instant::now() < deadline, "the machine lock stayed busy");
        std::thread::sleep(Duration::from_millis(200));
    }
    lock.set_len(0).unwrap();
    lock.rewind().unwrap();
    write!(
        lock,
        "schedlab pid {stale} (start time 1) running `run old`"
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", file.to_str().unwrap()])
        .env("SCHEDLAB_LOCK_WAIT", "0")
        .output()
        .unwrap();
    lock.set_len(0).unwrap();
    drop(lock);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!("process {} (", std::process::id())),
        "{e}"
    );
    assert!(e.contains("not a schedlab run"), "{e}");
    assert!(e.contains("is using this machine for a real run"), "{e}");
    assert!(!e.contains(&format!("pid {stale}")), "{e}");
}

/// `compare --real`'s table and its prediction section give one count of a traced run's
/// misses, jobs and switches (the trace's): the summary's real column is not the runner's
/// count beside the trace's.
#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root (CAP_SYS_NICE, CAP_DAC_OVERRIDE) and 2 CPUs; see crates/cli/build.rs"
)]
fn compare_real_summary_and_prediction_agree_on_a_traced_run() {
    needs_root!();
    let _g = REAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = example("table1-2cpu.yaml");
    let out = Command::new(BIN)
        .args([
            "compare",
            w.to_str().unwrap(),
            "--real",
            "--policies",
            "illf",
        ])
        .args(["--duration", "1s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("real columns of traced runs") {
        eprintln!("not traced here, nothing to compare:\n{text}");
        return;
    }
    // "deadline misses   <sim>   <real>" and "jobs completed  c/r  c/r".
    let cells = |label: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` row:\n{text}"));
        line[line.find(label).unwrap() + label.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let misses = cells("deadline misses");
    let jobs = cells("jobs completed");
    let (released, completed, missed) = text
        .lines()
        .find_map(|l| {
            let rest = l.trim_start().strip_prefix("workload ")?;
            if !rest.contains(" jobs, ") {
                return None; // the header line
            }
            let n: Vec<u64> = rest
                .split([' ', ','])
                .filter_map(|w| w.parse().ok())
                .take(3)
                .collect();
            Some((n[0], n[1], n[2]))
        })
        .unwrap_or_else(|| panic!("no prediction `workload` line:\n{text}"));
    assert_eq!(misses[1], missed.to_string(), "{text}");
    assert_eq!(jobs[1], format!("{completed}/{released}"), "{text}");
}
