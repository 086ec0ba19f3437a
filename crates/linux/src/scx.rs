//! `schedlab run --backend scx`: the periodic tasks become SCHED_EXT threads scheduled
//! by one of schedlab's sched_ext BPF schedulers (`scx/`: illf, llf, edf) on a kernel
//! with sched_ext (Linux >= 6.12, CONFIG_SCHED_CLASS_EXT=y). See docs/scx.md.
//!
//! The schedulers are loaded by the static C loader `scx_schedlab` (built by
//! `scx/build.sh`), run as a child process: it prints `ready ...` once the scheduler
//! is attached, takes `task TID RUNTIME DEADLINE PERIOD INDEX` lines on its stdin (the
//! BPF map of per-thread parameters) and unloads the scheduler when its stdin closes,
//! on SIGINT/SIGTERM, and — since the kernel drops the struct_ops link with the last
//! file descriptor — whenever it dies. So every exit path of `schedlab run` unloads:
//! the normal one closes the pipe ([`Session::finish`]), an error or a panic drops the
//! [`Session`] (same), a crash closes the pipe by exiting. sched_ext's own watchdog
//! (a runnable task not scheduled for 30 s ejects the BPF scheduler) is the last line.
//!
//! Partial mode: only the workload's SCHED_EXT threads are scheduled by BPF; everything
//! else stays in the fair class, which the kernel ranks above sched_ext.
//!
//! A workload without periodic tasks whose `scheduler.fair` is `bfs` or `cfs` loads a
//! fair scheduler instead ([`FairScheduler`]): scx_bfs or scx_cfsw, with the workload's
//! rr_interval / CFS tunables and weight table; its fair tasks become SCHED_EXT threads
//! registered with `fair TID LEVEL CLASS INDEX` ([`Session::register_fair`]).

use schedlab_model::{IllfOptions, LlfOptions, Policy, TaskClass, WeightTable, Workload};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The SCHED_EXT policy number (include/uapi/linux/sched.h, Linux >= 6.12).
pub const SCHED_EXT: u32 = 7;

/// sched_ext's state file.
pub const STATE_FILE: &str = "/sys/kernel/sched_ext/state";

/// How long loading (BPF verification included) may take.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long unloading may take before the loader is killed (which unloads too).
const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// What the scx backend reports with a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScxReport {
    /// BPF scheduler (`illf`, `llf`, `edf`).
    pub scheduler: String,
    /// The loader used.
    pub loader: String,
    /// Its options as it echoed them (`rules=1111 ...`).
    pub options: String,
    /// /sys/kernel/sched_ext/state while the workload ran (`enabled`).
    pub state_during: String,
    /// The same after unloading (`disabled`).
    pub state_after: String,
    /// Why the scheduler exited, as sched_ext reported it.
    pub exit: String,
    /// The loader's exit status (0 = unloaded cleanly; 2 = the kernel ejected it).
    pub loader_status: Option<i32>,
    /// The scheduler's counters (laxity_evaluations, swaps, zero_laxity_preemptions...).
    pub stats: BTreeMap<String, u64>,
    /// Fair schedulers: per registered thread (tid), its own accounting (`cpu_ns`,
    /// `runs`, `preempted`, `weight`, `diff`...), as the loader printed it on exit.
    pub fair_tasks: BTreeMap<u32, BTreeMap<String, i64>>,
}

impl ScxReport {
    /// The `scx` key of `schedlab run --json`.
    pub fn to_json(&self) -> Value {
        json!({
            "scheduler": self.scheduler,
            "loader": self.loader,
            "options": self.options,
            "state_during": self.state_during,
            "state_after": self.state_after,
            "exit": self.exit,
            "loader_status": self.loader_status,
            "stats": self.stats,
            "fair_tasks": self.fair_tasks,
        })
    }

    /// Problems worth a warning in the run's output.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.state_during != "enabled" {
            w.push(format!(
                "sched_ext state was `{}` while the workload ran (expected enabled): the threads may have run in the fair class",
                self.state_during
            ));
        }
        if self.state_after != "disabled" {
            w.push(format!(
                "sched_ext state is `{}` after unloading (expected disabled)",
                self.state_after
            ));
        }
        if self.loader_status != Some(0) {
            w.push(format!(
                "the scx loader exited with {:?}: {}",
                self.loader_status, self.exit
            ));
        }
        w
    }
}

/// `/sys/kernel/sched_ext/state`, trimmed (`none` when there is no sched_ext).
pub fn state() -> String {
    std::fs::read_to_string(STATE_FILE)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "none".into())
}

/// Can this kernel run a sched_ext scheduler now?
pub fn check_kernel() -> Result<(), String> {
    match state().as_str() {
        "none" => Err(format!(
            "this kernel ({}) has no sched_ext ({STATE_FILE} is missing): --backend scx needs Linux >= 6.12 with CONFIG_SCHED_CLASS_EXT=y (see docs/scx.md)",
            crate::policy::kernel_release()
        )),
        "disabled" => Ok(()),
        other => Err(format!(
            "another sched_ext scheduler is active (state `{other}`, {}); unload it first",
            std::fs::read_to_string("/sys/kernel/sched_ext/root/ops")
                .map(|s| format!("ops `{}`", s.trim()))
                .unwrap_or_else(|_| "ops unknown".into())
        )),
    }
}

/// The loader: `$SCHEDLAB_SCX_LOADER`, else `scx_schedlab` next to this executable, in
/// `target/scx/` of a source checkout above it, or on PATH.
pub fn find_loader() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SCHEDLAB_SCX_LOADER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("SCHEDLAB_SCX_LOADER={} is not a file", p.display()))
        };
    }
    let mut tried = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent().map(Path::to_path_buf);
        if let Some(d) = &dir {
            tried.push(d.join("scx_schedlab"));
        }
        // target/<profile>/schedlab or target/<triple>/<profile>/schedlab
        for _ in 0..3 {
            dir = dir.and_then(|d| d.parent().map(Path::to_path_buf));
            if let Some(d) = &dir {
                tried.push(d.join("scx").join("scx_schedlab"));
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        tried.extend(std::env::split_paths(&path).map(|d| d.join("scx_schedlab")));
    }
    tried.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        "cannot find the sched_ext loader scx_schedlab: build it with scx/build.sh, then put it on PATH or set SCHEDLAB_SCX_LOADER".to_string()
    })
}

/// The loader's arguments for `policy` with the workload's options.
pub fn loader_args(
    policy: Policy,
    illf: &IllfOptions,
    llf: &LlfOptions,
) -> Result<Vec<String>, String> {
    let mut a = vec!["--policy".to_string()];
    match policy {
        Policy::Illf => {
            if illf.exact {
                return Err("the scx illf scheduler sees zero laxity at ticks; `illf: { mode: exact }` has no sched_ext version".into());
            }
            a.push("illf".into());
            let rules: Vec<String> = (0..4)
                .filter(|&i| illf.rules[i])
                .map(|i| (i + 1).to_string())
                .collect();
            a.push("--rules".into());
            a.push(if rules.is_empty() {
                "none".into()
            } else {
                rules.join(",")
            });
            if illf.swap_at_activation_only {
                a.push("--swap-at-activation-only".into());
            }
            if illf.strict {
                a.push("--strict".into());
            }
        }
        Policy::Llf => {
            if llf.exact {
                return Err("the scx llf scheduler decides at ticks; `llf: { mode: exact }` has no sched_ext version".into());
            }
            a.push("llf".into());
            if !llf.lrs_tie {
                a.push("--fifo-tie".into());
            }
        }
        Policy::Edf => a.push("edf".into()),
        other => {
            return Err(format!(
                "the scx backend schedules {}, not `{}`",
                schedlab_model::registry::and_list(&crate::Backend::Scx.policies()),
                other.name()
            ))
        }
    }
    Ok(a)
}

/// The fair-share sched_ext schedulers (`scx/src/scx_bfs.bpf.c`, `scx_cfsw.bpf.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairScheduler {
    /// BFS 0.440: one queue by virtual deadline (`fair: bfs`).
    Bfs,
    /// CFS's weighted vruntime with the workload's weight table (`fair: cfs`).
    Cfsw,
}

impl FairScheduler {
    /// The scheduler `--backend scx` loads for `w`: a fair one when `w` has fair tasks,
    /// no periodic ones (one sched_ext scheduler at a time) and `fair: bfs` or `cfs`.
    pub fn for_workload(w: &Workload) -> Option<FairScheduler> {
        let fair = w.tasks.iter().any(|t| t.class.is_fair());
        let periodic = w.tasks.iter().any(|t| t.class == TaskClass::Deadline);
        if !fair || periodic {
            return None;
        }
        match w.scheduler.fair {
            Policy::Bfs => Some(FairScheduler::Bfs),
            Policy::Cfs => Some(FairScheduler::Cfsw),
            _ => None,
        }
    }

    /// The loader's `--policy` name.
    pub fn name(self) -> &'static str {
        match self {
            FairScheduler::Bfs => "bfs",
            FairScheduler::Cfsw => "cfsw",
        }
    }

    /// The loader's arguments: the workload's tunables and table, and its CPU count
    /// (CFS's slices are per-CPU loads).
    pub fn loader_args(self, w: &Workload) -> Vec<String> {
        let sc = &w.scheduler;
        let mut a = vec!["--policy".to_string(), self.name().to_string()];
        let us = |ns: u64| (ns / 1000).max(1).to_string();
        match self {
            FairScheduler::Bfs => {
                a.push("--rr-interval-ms".into());
                a.push((sc.bfs.rr_interval / 1_000_000).max(1).to_string());
                if sc.bfs.locality {
                    a.push("--locality".into());
                }
            }
            FairScheduler::Cfsw => {
                a.extend([
                    "--weights".into(),
                    sc.weights.name().into(),
                    "--latency-us".into(),
                    us(sc.cfs.latency),
                    "--min-gran-us".into(),
                    us(sc.cfs.min_granularity),
                    "--wakeup-gran-us".into(),
                    us(sc.cfs.wakeup_granularity),
                ]);
            }
        }
        a.push("--fair-cpus".into());
        a.push(w.platform.cpus.to_string());
        a
    }

    /// The loader's class word for a fair task class (None: not scheduled by it).
    pub fn class_word(class: TaskClass) -> Option<&'static str> {
        match class {
            TaskClass::Normal => Some("normal"),
            TaskClass::Batch => Some("batch"),
            TaskClass::Idle => Some("idle"),
            _ => None,
        }
    }
}

/// What the loader answered for a registered fair thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairRegistration {
    /// The level's weight in the loaded table (scx_cfsw; 0 for scx_bfs).
    pub weight: u64,
    /// BFS's prio_deadline_diff of the level, ns (scx_bfs; 0 for scx_cfsw).
    pub diff: u64,
}

impl FairRegistration {
    /// Parse `ok fair TID weight=W diff=D`.
    pub fn parse(line: &str) -> Option<FairRegistration> {
        let mut weight = None;
        let mut diff = None;
        for kv in line.split_whitespace() {
            match kv.split_once('=') {
                Some(("weight", v)) => weight = v.parse().ok(),
                Some(("diff", v)) => diff = v.parse().ok(),
                _ => {}
            }
        }
        Some(FairRegistration {
            weight: weight?,
            diff: diff?,
        })
    }

    /// Whether the loader's weight is the model's `want` for `nice` in `table` (scx_cfsw:
    /// the C loader has its own copy of the tables; a difference would be a bug there).
    pub fn check_weight(&self, table: WeightTable, nice: i8, want: u64) -> Result<(), String> {
        if self.weight == want {
            Ok(())
        } else {
            Err(format!(
                "the sched_ext loader gives nice {nice} weight {} in table {}, schedlab's model {want}",
                self.weight,
                table.name()
            ))
        }
    }
}

/// A loaded scheduler.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    report: ScxReport,
}

impl Session {
    /// Start the loader and wait until the scheduler is attached.
    pub fn start(loader: &Path, args: &[String]) -> Result<Session, String> {
        let mut child = Command::new(loader)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", loader.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("sl-scx-loader".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot create the loader reader thread: {e}"))?;
        let stdin = child.stdin.take();
        let mut s = Session {
            child,
            stdin,
            lines: rx,
            report: ScxReport {
                scheduler: args.get(1).cloned().unwrap_or_default(),
                loader: loader.display().to_string(),
                ..ScxReport::default()
            },
        };
        let ready = s.expect("ready", READY_TIMEOUT).map_err(|e| {
            format!("the sched_ext scheduler did not load: {e} (run {} {} by hand to see the verifier's log)", loader.display(), args.join(" "))
        })?;
        s.report.options = ready
            .split_whitespace()
            .filter(|w| !w.starts_with("state=") && !w.starts_with("policy=") && *w != "ready")
            .collect::<Vec<_>>()
            .join(" ");
        Ok(s)
    }

    /// Wait for a line starting with `prefix` (an `err` line fails).
    fn expect(&mut self, prefix: &str, timeout: Duration) -> Result<String, String> {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return Ok(l),
                Ok(l) if l.starts_with("err") => return Err(l),
                Ok(l) => self.absorb(&l),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no `{prefix}` from the loader within {timeout:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let st = self.child.wait().ok().and_then(|s| s.code());
                    return Err(format!("the loader exited (status {st:?})"));
                }
            }
        }
    }

    fn absorb(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("stats ") {
            for kv in rest.split_whitespace() {
                if let Some((k, v)) = kv.split_once('=') {
                    if let Ok(v) = v.parse() {
                        self.report.stats.insert(k.to_string(), v);
                    }
                }
            }
        } else if let Some(rest) = line.strip_prefix("fair tid=") {
            let mut it = rest.split_whitespace();
            if let Some(Ok(tid)) = it.next().map(str::parse::<u32>) {
                let kv = it
                    .filter_map(|w| w.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                    .collect();
                self.report.fair_tasks.insert(tid, kv);
            }
        } else if let Some(rest) = line.strip_prefix("exit ") {
            self.report.exit = rest.to_string();
        } else if let Some(rest) = line.strip_prefix("unloaded state=") {
            self.report.state_after = rest.trim().to_string();
        }
    }

    /// Give thread `tid` its parameters (ns). `index`: workload order.
    pub fn register(
        &mut self,
        tid: i32,
        runtime: u64,
        deadline: u64,
        period: u64,
        index: usize,
    ) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the loader's stdin is closed")?;
        writeln!(stdin, "task {tid} {runtime} {deadline} {period} {index}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot talk to the loader: {e}"))?;
        self.expect(&format!("ok task {tid}"), Duration::from_secs(10))
            .map(|_| ())
    }

    /// Register fair thread `tid` (scx_bfs, scx_cfsw): nice `level`, class word
    /// ([`FairScheduler::class_word`]), workload order `index`.
    pub fn register_fair(
        &mut self,
        tid: i32,
        level: i8,
        class: &str,
        index: usize,
    ) -> Result<FairRegistration, String> {
        let stdin = self.stdin.as_mut().ok_or("the loader's stdin is closed")?;
        writeln!(stdin, "fair {tid} {level} {class} {index}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot talk to the loader: {e}"))?;
        let line = self.expect(&format!("ok fair {tid} "), Duration::from_secs(10))?;
        FairRegistration::parse(&line)
            .ok_or_else(|| format!("the loader answered `{line}` (expected weight= and diff=)"))
    }

    /// Note the sched_ext state while the workload runs.
    pub fn note_state(&mut self) {
        self.report.state_during = state();
    }

    /// Unload (close the loader's stdin), collect its report, reap it.
    pub fn finish(mut self) -> ScxReport {
        if self.report.state_during.is_empty() {
            self.report.state_during = state();
        }
        if let Some(mut s) = self.stdin.take() {
            let _ = writeln!(s, "stats");
            let _ = s.flush();
        }
        let end = Instant::now() + EXIT_TIMEOUT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.absorb(&l),
                Err(_) => break,
            }
        }
        self.report.loader_status = match self.child.try_wait() {
            Ok(Some(st)) => st.code(),
            _ => {
                let _ = self.child.kill();
                self.child.wait().ok().and_then(|s| s.code())
            }
        };
        if self.report.state_after.is_empty() {
            self.report.state_after = state();
        }
        std::mem::take(&mut self.report)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the pipe unloads; a loader that does not exit is killed (which unloads).
        drop(self.stdin.take());
        let end = Instant::now() + EXIT_TIMEOUT;
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_gives_scx_exactly_the_policies_the_loader_has() {
        for e in &schedlab_model::POLICIES {
            let args = loader_args(e.policy, &IllfOptions::default(), &LlfOptions::default());
            assert_eq!(e.real.scx, args.is_ok(), "{}: {args:?}", e.name);
        }
    }

    #[test]
    fn loader_args_follow_the_workload_options() {
        let illf = IllfOptions {
            rules: [true, true, true, false],
            swap_at_activation_only: true,
            strict: true,
            exact: false,
        };
        let a = loader_args(Policy::Illf, &illf, &LlfOptions::default()).unwrap();
        assert_eq!(
            a,
            [
                "--policy",
                "illf",
                "--rules",
                "1,2,3",
                "--swap-at-activation-only",
                "--strict"
            ]
        );
        let llf = LlfOptions {
            exact: false,
            lrs_tie: false,
        };
        let a = loader_args(Policy::Llf, &IllfOptions::default(), &llf).unwrap();
        assert_eq!(a, ["--policy", "llf", "--fifo-tie"]);
        assert!(loader_args(
            Policy::Llf,
            &IllfOptions::default(),
            &LlfOptions {
                exact: true,
                lrs_tie: true
            }
        )
        .is_err());
        let exact_illf = IllfOptions {
            exact: true,
            ..IllfOptions::default()
        };
        let e = loader_args(Policy::Illf, &exact_illf, &LlfOptions::default()).unwrap_err();
        assert!(e.contains("illf: { mode: exact }"), "{e}");
        assert!(loader_args(Policy::Rm, &IllfOptions::default(), &LlfOptions::default()).is_err());
    }

    fn load(yaml: &str) -> Workload {
        Workload::parse_str(
            yaml,
            Path::new("w.yaml"),
            &schedlab_model::Overrides::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_fair_workload_loads_the_fair_scheduler_with_its_table_and_tunables() {
        let w = load(
            "platform: { cpus: 1 }\nscheduler: { fair: cfs, weights: extended-60, cfs: { latency: 6ms, min_granularity: 750us, wakeup_granularity: 1ms } }\ntasks: [{ name: a, nice: -25 }, { name: b }]\n",
        );
        let f = FairScheduler::for_workload(&w).unwrap();
        assert_eq!(f, FairScheduler::Cfsw);
        assert_eq!(
            f.loader_args(&w),
            [
                "--policy",
                "cfsw",
                "--weights",
                "extended-60",
                "--latency-us",
                "6000",
                "--min-gran-us",
                "750",
                "--wakeup-gran-us",
                "1000",
                "--fair-cpus",
                "1"
            ]
        );
        let w = load(
            "platform: { cpus: 2 }\nscheduler: { fair: bfs, bfs: { rr_interval: 10ms, locality: false } }\ntasks: [{ name: a }]\n",
        );
        assert_eq!(
            FairScheduler::for_workload(&w).unwrap().loader_args(&w),
            [
                "--policy",
                "bfs",
                "--rr-interval-ms",
                "10",
                "--fair-cpus",
                "2"
            ]
        );
        // EEVDF has no sched_ext version; periodic tasks take the one scheduler.
        let w = load("scheduler: { fair: eevdf }\ntasks: [{ name: a }]\n");
        assert_eq!(FairScheduler::for_workload(&w), None);
        let w = load(
            "scheduler: { fair: bfs }\ntasks: [{ name: a }, { name: p, runtime: 1ms, period: 10ms }]\n",
        );
        assert_eq!(FairScheduler::for_workload(&w), None);
        assert_eq!(FairScheduler::class_word(TaskClass::Idle), Some("idle"));
        assert_eq!(FairScheduler::class_word(TaskClass::Iso), None);
    }

    #[test]
    fn a_fair_registration_is_checked_against_the_models_table() {
        let r = FairRegistration::parse("ok fair 12 weight=2095 diff=0").unwrap();
        assert_eq!(r.weight, 2095);
        assert!(r
            .check_weight(WeightTable::Grouped5, -5, WeightTable::Grouped5.weight(-5))
            .is_ok());
        let e = r
            .check_weight(WeightTable::Linux, -5, WeightTable::Linux.weight(-5))
            .unwrap_err();
        assert!(
            e.contains("weight 2095 in table linux, schedlab's model 3121"),
            "{e}"
        );
        assert_eq!(FairRegistration::parse("ok fair 12 weight=x diff=0"), None);
    }

    #[test]
    fn report_warns_unless_enabled_then_disabled() {
        let mut r = ScxReport {
            state_during: "enabled".into(),
            state_after: "disabled".into(),
            loader_status: Some(0),
            ..ScxReport::default()
        };
        assert!(r.warnings().is_empty());
        r.state_after = "enabled".into();
        assert_eq!(r.warnings().len(), 1);
    }

    #[test]
    fn a_session_with_a_fake_loader_registers_and_unloads() {
        // A shell script speaking the loader's protocol stands in for scx_schedlab.
        let dir = std::env::temp_dir().join(format!("sl-scx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("fake_loader");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho \"ready policy=$2 state=enabled rules=1111\"\n\
             while read -r cmd tid rest; do\n\
               case $cmd in task) echo \"ok task $tid\";; fair) echo \"ok fair $tid weight=1024 diff=0\";;\n\
               stats) echo 'stats swaps=3 laxity_evaluations=10';; esac\n\
             done\necho 'fair tid=77 index=1 level=0 weight=1024 cpu_ns=5000 runs=2'\n\
             echo 'exit kind=1025 code=0 reason=\"unregistered\" msg=\"\"'\n\
             echo 'unloaded state=disabled'\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut s = Session::start(&fake, &["--policy".into(), "illf".into()]).unwrap();
        s.register(1234, 5, 60, 60, 0).unwrap();
        let reg = s.register_fair(77, 0, "normal", 1).unwrap();
        assert_eq!((reg.weight, reg.diff), (1024, 0));
        let r = s.finish();
        assert_eq!(r.fair_tasks[&77]["cpu_ns"], 5000);
        assert_eq!(r.scheduler, "illf");
        assert_eq!(r.options, "rules=1111");
        assert_eq!(r.stats.get("swaps"), Some(&3));
        assert_eq!(r.state_after, "disabled");
        assert_eq!(r.loader_status, Some(0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
