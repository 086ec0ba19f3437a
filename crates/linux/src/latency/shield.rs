//! `--shield CPU`: a CPU shield for the run (seed 003's CPU Shield), undone afterwards.
//!
//! What moves off the shielded CPU, each recorded before it is changed:
//! - every thread of every other process whose affinity includes the CPU and another
//!   CPU (`sched_setaffinity`; per-CPU kernel threads refuse with EINVAL and stay);
//! - every IRQ's affinity (`/proc/irq/N/smp_affinity_list`; managed IRQs refuse with
//!   EIO/EPERM and stay, reported), and `/proc/irq/default_smp_affinity` for new IRQs;
//! - the unbound workqueues' cpumask (`/sys/devices/virtual/workqueue/cpumask`).
//!
//! [`Shield::restore`] puts every recorded value back (threads only if the same thread
//! still exists: its start time is checked), also giving threads created during the run
//! by a moved process (or children of one) their creator's original affinity. It runs on
//! every exit path: normally, on an error (Drop), after SIGINT/SIGTERM (the controller
//! collects them). Against SIGKILL, a journal in [`JOURNAL_DIR`] holds the original
//! values until they are restored; the next `--shield` run restores a dead run's journal
//! first.

use crate::policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Where journals of shields in force are kept.
pub use crate::machine_lock::JOURNAL_DIR;

/// One thread moved off the CPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MovedTask {
    tid: i32,
    tgid: i32,
    start: u64,
    cpus: Vec<usize>,
}

/// Everything changed, with the values to put back.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Journal {
    pid: u32,
    /// The run's start time (/proc/PID/stat field 22): a live process with the same PID
    /// but another start time is not the run that wrote the journal.
    #[serde(default)]
    start: Option<u64>,
    cpu: usize,
    irqs: BTreeMap<u32, String>,
    default_irq_affinity: Option<String>,
    workqueue_cpumask: Option<String>,
    tasks: Vec<MovedTask>,
}

/// What the shield did (reported in the result).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ShieldReport {
    /// The shielded CPU.
    pub cpu: usize,
    /// IRQs whose affinity was moved off it.
    pub irqs_moved: Vec<u32>,
    /// IRQs that refused (number, reason): managed interrupts, per-CPU ones.
    pub irqs_refused: Vec<(u32, String)>,
    /// Threads moved off it.
    pub tasks_moved: usize,
    /// Threads that could not move (per-CPU kernel threads and the like).
    pub tasks_pinned: usize,
    /// Whether the default IRQ affinity and the workqueue cpumask were changed.
    pub default_irq_affinity: bool,
    /// Whether the unbound-workqueue cpumask was changed.
    pub workqueue_cpumask: bool,
    /// Everything was put back.
    pub restored: bool,
    /// What could not be put back.
    pub restore_errors: Vec<String>,
    /// A journal of an earlier, killed run that was restored first.
    pub recovered: Option<String>,
}

/// Parse a CPU list (`0-3,6`).
pub fn parse_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.trim().parse() {
                    v.push(a);
                }
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Format a CPU list (`0-3,6`).
pub fn format_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// Parse a hex CPU mask (`3`, `ffffffff,00000001`).
pub fn parse_mask(s: &str) -> Vec<usize> {
    let hex: String = s.trim().chars().filter(|c| *c != ',').collect();
    let mut v = Vec::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let d = c.to_digit(16).unwrap_or(0);
        for b in 0..4 {
            if d & (1 << b) != 0 {
                v.push(i * 4 + b);
            }
        }
    }
    v
}

/// Format a hex CPU mask in the kernel's 32-bit comma-separated groups.
pub fn format_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c / 32] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = w.iter().rev().map(|x| format!("{x:08x}")).collect();
    // The kernel prints the first group without leading zeros when it is the only one.
    if parts.len() == 1 {
        parts[0] = format!("{:x}", w[0]);
    }
    parts.join(",")
}

/// `/proc/TID/stat` start time (field 22), if the thread exists.
fn task_start(tid: i32) -> Option<u64> {
    crate::machine_lock::start_time(u32::try_from(tid).ok()?)
}

fn ppid_of(pid: i32) -> Option<i32> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every (tgid, tid) on the system.
fn all_threads() -> Vec<(i32, i32)> {
    let mut v = Vec::new();
    let Ok(procs) = fs::read_dir("/proc") else {
        return v;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(tasks) = fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                v.push((pid, tid));
            }
        }
    }
    v.sort_unstable();
    v
}

fn irq_numbers() -> Vec<u32> {
    let mut v: Vec<u32> = fs::read_dir("/proc/irq")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

fn write(path: &str, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| {
        // The kernel's own words for the usual refusals.
        match e.raw_os_error() {
            Some(libc::EIO) => "EIO (the kernel does not allow moving it)".to_string(),
            Some(libc::EPERM) => "EPERM".to_string(),
            Some(libc::EINVAL) => "EINVAL".to_string(),
            _ => e.to_string(),
        }
    })
}

fn journal_path(pid: u32) -> PathBuf {
    Path::new(JOURNAL_DIR).join(format!("shield-{pid}.json"))
}

/// A CPU shield in force.
pub struct Shield {
    journal: Journal,
    report: ShieldReport,
    done: bool,
}

impl Shield {
    /// Restore the journals of earlier runs that were killed before they could restore.
    pub fn recover_stale() -> Option<String> {
        let mut said = Vec::new();
        for (pid, path, text) in crate::machine_lock::dead_journals("shield-") {
            let Ok(j) = serde_json::from_str::<Journal>(&text) else {
                continue;
            };
            let mut s = Shield {
                journal: j,
                report: ShieldReport::default(),
                done: false,
            };
            s.restore();
            let _ = fs::remove_file(path);
            said.push(format!(
                "restored the shield of CPU {} left by killed run {pid}",
                s.journal.cpu
            ));
        }
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// Move what can be moved off `cpu` (`online` = the online CPUs); this process's own
    /// threads stay where they are. With `tasks` false only interrupts move (an IRQ
    /// affinity set-up, not a shield).
    pub fn apply(cpu: usize, online: &[usize], tasks: bool) -> Result<Shield, String> {
        let recovered = Shield::recover_stale();
        let rest: Vec<usize> = online.iter().copied().filter(|&c| c != cpu).collect();
        if rest.is_empty() || !online.contains(&cpu) {
            return Err(format!(
                "--shield {cpu}: needs CPU {cpu} online and at least one other CPU (online: {})",
                format_list(online)
            ));
        }
        let pid = std::process::id();
        let mut s = Shield {
            journal: Journal {
                pid,
                start: crate::machine_lock::start_time(pid),
                cpu,
                ..Journal::default()
            },
            report: ShieldReport {
                cpu,
                recovered,
                ..ShieldReport::default()
            },
            done: false,
        };
        // 1. Record everything first (the journal is written before anything changes).
        for irq in irq_numbers() {
            if let Ok(v) = fs::read_to_string(format!("/proc/irq/{irq}/smp_affinity_list")) {
                s.journal.irqs.insert(irq, v.trim().to_string());
            }
        }
        s.journal.default_irq_affinity = fs::read_to_string("/proc/irq/default_smp_affinity")
            .ok()
            .map(|v| v.trim().to_string());
        s.journal.workqueue_cpumask = fs::read_to_string("/sys/devices/virtual/workqueue/cpumask")
            .ok()
            .map(|v| v.trim().to_string());
        let own = pid as i32;
        let mut pinned = 0;
        for (tgid, tid) in all_threads() {
            if tgid == own || !tasks {
                continue;
            }
            let Ok(cpus) = policy::get_affinity(tid) else {
                continue;
            };
            if !cpus.contains(&cpu) {
                continue;
            }
            if cpus.iter().all(|&c| c == cpu) {
                pinned += 1;
                continue;
            }
            if let Some(start) = task_start(tid) {
                s.journal.tasks.push(MovedTask {
                    tid,
                    tgid,
                    start,
                    cpus,
                });
            }
        }
        s.write_journal()?;
        // 2. Move.
        let mut moved = Vec::new();
        for t in &s.journal.tasks {
            let new: Vec<usize> = t.cpus.iter().copied().filter(|&c| c != cpu).collect();
            match policy::set_affinity(t.tid, &new) {
                Ok(()) => moved.push(t.clone()),
                Err(_) => pinned += 1, // per-CPU kthread (EINVAL) or gone (ESRCH)
            }
        }
        s.report.tasks_moved = moved.len();
        s.report.tasks_pinned = pinned;
        s.journal.tasks = moved;
        for (&irq, old) in &s.journal.irqs {
            let cur = parse_list(old);
            if !cur.contains(&cpu) {
                continue;
            }
            let mut new: Vec<usize> = cur.into_iter().filter(|&c| c != cpu).collect();
            if new.is_empty() {
                new = rest.clone();
            }
            match write(
                &format!("/proc/irq/{irq}/smp_affinity_list"),
                &format_list(&new),
            ) {
                Ok(()) => s.report.irqs_moved.push(irq),
                Err(e) => s.report.irqs_refused.push((irq, e)),
            }
        }
        if let Some(d) = &s.journal.default_irq_affinity {
            let new: Vec<usize> = parse_mask(d).into_iter().filter(|&c| c != cpu).collect();
            if !new.is_empty() && new.len() < parse_mask(d).len() {
                s.report.default_irq_affinity =
                    write("/proc/irq/default_smp_affinity", &format_mask(&new)).is_ok();
            }
        }
        if let Some(m) = s.journal.workqueue_cpumask.as_ref().filter(|_| tasks) {
            let new: Vec<usize> = parse_mask(m).into_iter().filter(|&c| c != cpu).collect();
            if !new.is_empty() && new.len() < parse_mask(m).len() {
                s.report.workqueue_cpumask =
                    write("/sys/devices/virtual/workqueue/cpumask", &format_mask(&new)).is_ok();
            }
        }
        s.write_journal()?;
        Ok(s)
    }

    fn write_journal(&self) -> Result<(), String> {
        let text = serde_json::to_string(&self.journal).map_err(|e| e.to_string())?;
        crate::machine_lock::write_journal(&journal_path(self.journal.pid), &text)
            .map_err(|e| format!("--shield: {e}"))
    }

    /// Put everything back; idempotent.
    pub fn restore(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let mut errors = Vec::new();
        let cpu = self.journal.cpu;
        // Threads, then those they created during the run (same thread group, or a child
        // process of a moved one) that still carry the shielded mask.
        let mut origin: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
        for t in &self.journal.tasks {
            origin.entry(t.tgid).or_insert_with(|| t.cpus.clone());
            if task_start(t.tid) != Some(t.start) {
                continue; // exited (and maybe reused): nothing to restore
            }
            if let Err(e) = policy::set_affinity(t.tid, &t.cpus) {
                if e.raw_os_error() != Some(libc::ESRCH) {
                    errors.push(format!("thread {}: {e}", t.tid));
                }
            }
        }
        // A thread inherits its creator's mask: the creator's original without the CPU.
        let known: Vec<i32> = self.journal.tasks.iter().map(|t| t.tid).collect();
        for (tgid, tid) in all_threads() {
            if known.contains(&tid) || tgid == self.journal.pid as i32 {
                continue;
            }
            let from = origin
                .get(&tgid)
                .or_else(|| ppid_of(tgid).and_then(|p| origin.get(&p)));
            let Some(cpus) = from else { continue };
            let inherited: Vec<usize> = cpus.iter().copied().filter(|&c| c != cpu).collect();
            if policy::get_affinity(tid).is_ok_and(|a| a == inherited) {
                let _ = policy::set_affinity(tid, cpus);
            }
        }
        for (irq, old) in &self.journal.irqs {
            let path = format!("/proc/irq/{irq}/smp_affinity_list");
            let cur = fs::read_to_string(&path).unwrap_or_default();
            if parse_list(&cur) == parse_list(old) {
                continue;
            }
            if let Err(e) = write(&path, old) {
                errors.push(format!("IRQ {irq}: {e}"));
            }
        }
        for (path, old) in [
            (
                "/proc/irq/default_smp_affinity",
                &self.journal.default_irq_affinity,
            ),
            (
                "/sys/devices/virtual/workqueue/cpumask",
                &self.journal.workqueue_cpumask,
            ),
        ] {
            let Some(old) = old else { continue };
            let cur = fs::read_to_string(path).unwrap_or_default();
            if parse_mask(&cur) != parse_mask(old) {
                if let Err(e) = write(path, old) {
                    errors.push(format!("{path}: {e}"));
                }
            }
        }
        self.report.restored = errors.is_empty();
        self.report.restore_errors = errors;
        if self.report.restored {
            let _ = fs::remove_file(journal_path(self.journal.pid));
        }
    }

    /// What was done (final after [`Shield::restore`]).
    pub fn report(&self) -> ShieldReport {
        self.report.clone()
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks_round_trip() {
        assert_eq!(parse_list("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_list("1\n"), vec![1]);
        assert_eq!(format_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_list(&[5]), "5");
        assert_eq!(parse_mask("3"), vec![0, 1]);
        assert_eq!(parse_mask("00000001,00000002"), vec![1, 32]);
        assert_eq!(format_mask(&[0, 1]), "3");
        assert_eq!(format_mask(&[1, 32]), "00000001,00000002");
        assert_eq!(parse_mask(&format_mask(&[0, 7, 40])), vec![0, 7, 40]);
    }

    #[test]
    fn stat_fields_are_read_past_the_command_name() {
        let me = std::process::id() as i32;
        assert!(task_start(me).is_some_and(|s| s > 0));
        assert!(ppid_of(me).is_some_and(|p| p > 0));
    }
}
