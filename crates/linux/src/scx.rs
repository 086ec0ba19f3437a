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

use schedlab_model::{IllfOptions, LlfOptions, Policy};
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
        assert!(loader_args(Policy::Rm, &IllfOptions::default(), &LlfOptions::default()).is_err());
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
               case $cmd in task) echo \"ok task $tid\";; stats) echo 'stats swaps=3 laxity_evaluations=10';; esac\n\
             done\necho 'exit kind=1025 code=0 reason=\"unregistered\" msg=\"\"'\n\
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
        let r = s.finish();
        assert_eq!(r.scheduler, "illf");
        assert_eq!(r.options, "rules=1111");
        assert_eq!(r.stats.get("swaps"), Some(&3));
        assert_eq!(r.state_after, "disabled");
        assert_eq!(r.loader_status, Some(0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
