//! Import a kernel scheduler trace given as text: `trace-cmd report` output (the plugin
//! formats `comm:pid [prio] S ==> comm:pid [prio]` and `comm:pid [prio] CPU:001`, µs or
//! ns timestamps) or the raw ftrace `trace` file (`prev_comm=... prev_pid=...`), both with
//! the events `sched_switch`, `sched_wakeup`, `sched_wakeup_new`, `sched_waking` and
//! `sched_process_exit`.
//!
//! Rebuilding the schedule: every CPU is replayed switch by switch. The kernels this
//! was measured on do not emit every `sched_switch` (15-44% missing, mostly idle → task),
//! so when a switch says task P leaves a CPU that was believed to run something else, the
//! missing switch is inferred: P started there at its last wake-up if that falls after
//! the CPU's previous event, else right after that event. Inferred switches are counted
//! and reported.
//!
//! Recovering each task: its activations (a wake-up from sleep, then the CPU time it
//! used until it slept again), the gaps between activations, and its kernel `prio`
//! (-1: SCHED_DEADLINE; 0..99: SCHED_FIFO/RR with rt priority 99 − prio; 100..139:
//! SCHED_OTHER with nice prio − 120). A task is periodic when it has at least 4
//! activations and 80% of the gaps are within 15% of their median: the median becomes
//! its period and its largest activation (at most the period) its runtime. Periodic
//! tasks become `deadline` tasks (`fifo` with their priority when they were real-time),
//! the rest `normal` tasks with their median run and sleep (or CPU-bound).

use super::{ceil_us, finish, pretty, round_us, unique_names, ImportError, Imported, OutTask};
use regex::Regex;
use schedlab_model::limits::{MAX_CPUS, MAX_TIME_NS};
use schedlab_model::{Ns, SchedAttr};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

/// Import options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Workload name (default: "imported trace").
    pub name: Option<String>,
    /// Skip events other than the scheduler's instead of failing on them.
    pub ignore_unknown: bool,
    /// Keep only the tasks found periodic (the real-time part of the trace).
    pub periodic_only: bool,
    /// Drop tasks that used less CPU time than this.
    pub min_cpu: Ns,
}

/// The task state in a `sched_switch` (`prev_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// R / R+: still runnable (preempted).
    Runnable,
    /// Anything else: sleeping, blocked, dead.
    Asleep,
}

/// One event of a kernel trace, as read ([`events`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Ev {
    /// `sched_switch`.
    Switch {
        /// Pid switched out.
        prev: u32,
        /// Its comm.
        prev_comm: String,
        /// Its kernel prio.
        prev_prio: i32,
        /// Whether it was still runnable.
        left: Left,
        /// Pid switched in.
        next: u32,
        /// Its comm.
        next_comm: String,
        /// Its kernel prio.
        next_prio: i32,
    },
    /// `sched_wakeup` / `sched_wakeup_new` (or `sched_waking` in a trace without them).
    Wakeup {
        /// Pid woken.
        pid: u32,
        /// Its comm.
        comm: String,
        /// Its kernel prio.
        prio: i32,
    },
    /// `sched_process_exit`.
    Exit {
        /// Pid.
        pid: u32,
        /// Its comm.
        comm: String,
    },
    /// Any other event (interrupts, `sched_waking`, trace markers...), kept by [`events`]
    /// only.
    Other {
        /// Event name (`irq_handler_entry`, `tracing_mark_write`, ...).
        event: String,
        /// The rest of the line after `event:`, trimmed.
        body: String,
    },
}

/// One line of a kernel trace.
#[derive(Debug, Clone)]
pub struct Line {
    /// Line number (1-based).
    pub no: usize,
    /// Timestamp (ns, the trace's clock).
    pub ts: Ns,
    /// CPU it was recorded on.
    pub cpu: usize,
    /// Pid of the task running when it was recorded (0: idle).
    pub pid: u32,
    /// The event.
    pub ev: Ev,
}

/// What the parser saw besides events.
#[derive(Debug, Default)]
struct Meta {
    cpus: Option<usize>,
    /// `cpus=N` as the header says it, before it is checked against [`MAX_CPUS`].
    cpus_header: Option<u64>,
    trace_cmd: bool,
    raw: bool,
    ignored: BTreeMap<String, usize>,
    wakeups: usize,
    wakings: usize,
}

struct Patterns {
    line: Regex,
    sw_raw: Regex,
    sw_cmd: Regex,
    wk_raw: Regex,
    wk_cmd: Regex,
    exit_raw: Regex,
    exit_cmd: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("valid pattern");
        Patterns {
            line: re(
                r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:[\w.]{4,5}\s+)?(?P<s>\d+)\.(?P<f>\d{1,9}):\s+(?P<event>\w+):(?P<body>.*)$",
            ),
            sw_raw: re(
                r"^prev_comm=(?P<pc>.*) prev_pid=(?P<pp>\d+) prev_prio=(?P<ppr>-?\d+) prev_state=(?P<st>\S+) ==> next_comm=(?P<nc>.*) next_pid=(?P<np>\d+) next_prio=(?P<npr>-?\d+)$",
            ),
            sw_cmd: re(
                r"^(?P<pc>.*):(?P<pp>\d+) \[(?P<ppr>-?\d+)\] (?P<st>\S+) ==> (?P<nc>.*):(?P<np>\d+) \[(?P<npr>-?\d+)\]$",
            ),
            wk_raw: re(
                r"^comm=(?P<c>.*) pid=(?P<p>\d+) prio=(?P<pr>-?\d+)(?: success=\d+)?(?: target_cpu=(?P<t>\d+))?$",
            ),
            wk_cmd: re(r"^(?P<c>.*):(?P<p>\d+) \[(?P<pr>-?\d+)\](?: success=\d+)?(?: CPU:(?P<t>\d+))?$"),
            exit_raw: re(r"^comm=(?P<c>.*) pid=(?P<p>\d+) prio=(?P<pr>-?\d+)(?: group_dead=\w+)?$"),
            exit_cmd: re(r"^(?P<c>.*):(?P<p>\d+) \[(?P<pr>-?\d+)\]$"),
        }
    })
}

/// Scheduler events other than the ones read, skipped without complaint.
const OTHER_SCHED_EVENTS: &[&str] = &[
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exec",
    "sched_process_free",
    "sched_process_wait",
    "sched_process_hang",
    "sched_kthread_stop",
    "sched_kthread_stop_ret",
    "sched_kthread_work_execute_start",
    "sched_kthread_work_execute_end",
    "sched_kthread_work_queue_work",
    "sched_move_numa",
    "sched_pi_setprio",
    "sched_stat_blocked",
    "sched_stat_iowait",
    "sched_stat_runtime",
    "sched_stat_sleep",
    "sched_stat_wait",
    "sched_stick_numa",
    "sched_swap_numa",
    "sched_wait_task",
    "sched_wake_idle_without_ipi",
    "sched_skip_vma_numa",
    "sched_compute_energy",
    "sched_prepare_exec",
];

const READ_EVENTS: &str =
    "sched_switch, sched_wakeup, sched_wakeup_new, sched_waking, sched_process_exit";

fn num<T: std::str::FromStr>(s: &str, what: &str, no: usize) -> Result<T, ImportError> {
    s.parse()
        .map_err(|_| ImportError::at(no, format!("{what} `{s}` is out of range")))
}

/// A kernel `prio`; trace-cmd prints SCHED_DEADLINE's -1 as an unsigned 4294967295.
fn prio(s: &str, no: usize) -> Result<i32, ImportError> {
    let v: i64 = num(s, "prio", no)?;
    match v {
        -1_000_000..=1_000_000 => Ok(v as i32),
        0x8000_0000..=0xFFFF_FFFF => Ok((v as u32) as i32),
        _ => Err(ImportError::at(no, format!("prio `{s}` is out of range"))),
    }
}

fn clip(s: &str) -> String {
    let t: String = s.chars().take(100).collect();
    if t.len() < s.len() {
        format!("{t}...")
    } else {
        t
    }
}

/// Is this line part of a header (trace-cmd's `cpus=N`, ftrace's `#` comments, ...)?
fn header_line(t: &str, meta: &mut Meta) -> bool {
    if t.is_empty() || t.starts_with('#') {
        if t.starts_with("# tracer:") || t.contains("entries-in-buffer") {
            meta.raw = true;
        }
        return true;
    }
    if let Some(n) = t.strip_prefix("cpus=") {
        // Kept as written (bounded in `parse`, which knows the line number).
        if let Ok(n) = n.trim().parse::<u64>() {
            meta.cpus_header = Some(n);
            meta.trace_cmd = true;
            return true;
        }
    }
    (t.starts_with("CPU ") && (t.ends_with(" is empty") || t.contains("events lost")))
        || t.starts_with("version = ")
        || t.starts_with("trace-cmd: ")
}

/// Every event of a raw ftrace `trace` file or `trace-cmd report` text in time order:
/// the scheduler events as the importer reads them, every other event (including
/// `sched_waking`) as [`Ev::Other`]. For tools that rebuild a schedule themselves (the
/// real-kernel runner's traced runs).
pub fn events(text: &str) -> Result<Vec<Line>, ImportError> {
    Ok(parse_lines(text, &Options::default(), true)?.0)
}

fn parse(text: &str, opts: &Options) -> Result<(Vec<Line>, Meta), ImportError> {
    parse_lines(text, opts, false)
}

/// [`parse`]; with `keep_other`, events other than switches, wake-ups and exits come back
/// as [`Ev::Other`] instead of being skipped or refused.
fn parse_lines(
    text: &str,
    opts: &Options,
    keep_other: bool,
) -> Result<(Vec<Line>, Meta), ImportError> {
    let p = patterns();
    let mut meta = Meta::default();
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if header_line(t, &mut meta) {
            if let Some(n) = meta.cpus_header.take() {
                if n == 0 || n > MAX_CPUS {
                    return Err(ImportError::at(
                        no,
                        format!("cpus={n}: schedlab models 1 to {MAX_CPUS} CPUs"),
                    ));
                }
                meta.cpus = Some(n as usize);
            }
            continue;
        }
        let Some(m) = p.line.captures(raw) else {
            return Err(ImportError::at(
                no,
                format!(
                    "not an ftrace event line (truncated, or not `trace-cmd report` / ftrace text): `{}`",
                    clip(t)
                ),
            ));
        };
        let event = &m["event"];
        let body = m["body"].trim();
        let cpu: usize = num(&m["cpu"], "CPU number", no)?;
        let running: u32 = num(&m["pid"], "pid", no)?;
        if cpu as u64 >= MAX_CPUS {
            return Err(ImportError::at(
                no,
                format!(
                    "CPU [{}] is beyond the {MAX_CPUS} CPUs schedlab models (CPUs 0..{})",
                    &m["cpu"],
                    MAX_CPUS - 1
                ),
            ));
        }
        let secs: u64 = num(&m["s"], "timestamp", no)?;
        let frac = &m["f"];
        let frac_ns: u64 = num::<u64>(frac, "timestamp", no)? * 10u64.pow(9 - frac.len() as u32);
        let ts = secs
            .checked_mul(1_000_000_000)
            .and_then(|x| x.checked_add(frac_ns))
            .ok_or_else(|| ImportError::at(no, "timestamp does not fit in 64-bit nanoseconds"))?;
        let malformed = |what: &str| {
            ImportError::at(
                no,
                format!(
                    "malformed {event} event (truncated?): `{}` (expected {what})",
                    clip(body)
                ),
            )
        };
        let ev = match event {
            "sched_waking" if keep_other => Ev::Other {
                event: event.to_string(),
                body: body.to_string(),
            },
            "sched_switch" => {
                let c = if let Some(c) = p.sw_raw.captures(body) {
                    meta.raw = true;
                    c
                } else if let Some(c) = p.sw_cmd.captures(body) {
                    meta.trace_cmd = true;
                    c
                } else {
                    return Err(malformed(
                        "`prev_comm=.. prev_pid=.. prev_prio=.. prev_state=.. ==> next_comm=.. next_pid=.. next_prio=..` or `comm:pid [prio] STATE ==> comm:pid [prio]`",
                    ));
                };
                Ev::Switch {
                    prev: num(&c["pp"], "pid", no)?,
                    prev_comm: c["pc"].to_string(),
                    prev_prio: prio(&c["ppr"], no)?,
                    left: if c["st"].starts_with('R') {
                        Left::Runnable
                    } else {
                        Left::Asleep
                    },
                    next: num(&c["np"], "pid", no)?,
                    next_comm: c["nc"].to_string(),
                    next_prio: prio(&c["npr"], no)?,
                }
            }
            "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => {
                let c = p.wk_raw.captures(body).or_else(|| p.wk_cmd.captures(body));
                let Some(c) = c else {
                    return Err(malformed(
                        "`comm=.. pid=.. prio=.. target_cpu=..` or `comm:pid [prio] CPU:..`",
                    ));
                };
                if event == "sched_waking" {
                    meta.wakings += 1;
                } else {
                    meta.wakeups += 1;
                }
                let ev = Ev::Wakeup {
                    pid: num(&c["p"], "pid", no)?,
                    comm: c["c"].to_string(),
                    prio: prio(&c["pr"], no)?,
                };
                if event == "sched_waking" {
                    // Kept apart: used only when the trace has no sched_wakeup at all.
                    if let Ev::Wakeup { pid, comm, prio } = ev {
                        out.push(Line {
                            no,
                            ts,
                            cpu,
                            pid: running,
                            ev: Ev::Wakeup {
                                pid: pid | WAKING_BIT,
                                comm,
                                prio,
                            },
                        });
                    }
                    continue;
                }
                ev
            }
            "sched_process_exit" => {
                let c = p
                    .exit_raw
                    .captures(body)
                    .or_else(|| p.exit_cmd.captures(body));
                let Some(c) = c else {
                    return Err(malformed("`comm=.. pid=.. prio=..`"));
                };
                Ev::Exit {
                    pid: num(&c["p"], "pid", no)?,
                    comm: c["c"].to_string(),
                }
            }
            other if keep_other => Ev::Other {
                event: other.to_string(),
                body: body.to_string(),
            },
            other if OTHER_SCHED_EVENTS.contains(&other) || opts.ignore_unknown => {
                *meta.ignored.entry(other.to_string()).or_insert(0) += 1;
                continue;
            }
            other => {
                return Err(ImportError::at(
                    no,
                    format!(
                        "unknown event `{other}` (schedlab reads {READ_EVENTS}; \
                         pass --ignore-unknown to skip other events)"
                    ),
                ))
            }
        };
        out.push(Line {
            no,
            ts,
            cpu,
            pid: running,
            ev,
        });
    }
    // sched_waking stands in for sched_wakeup only when the trace has none.
    let use_waking = meta.wakeups == 0;
    out.retain_mut(|l| match &mut l.ev {
        Ev::Wakeup { pid, .. } if *pid & WAKING_BIT != 0 => {
            *pid &= !WAKING_BIT;
            use_waking
        }
        _ => true,
    });
    if !use_waking && meta.wakings > 0 {
        meta.ignored.insert("sched_waking".into(), meta.wakings);
    }
    out.sort_by_key(|l| (l.ts, l.no));
    Ok((out, meta))
}

/// Marks a `sched_waking` entry until the parser decides whether to use them.
const WAKING_BIT: u32 = 1 << 31;

#[derive(Debug, Clone, Copy, PartialEq)]
enum St {
    Unknown,
    Running(usize),
    Runnable,
    Asleep,
}

#[derive(Debug, Clone)]
struct Activation {
    /// Wake-up time (None: already active when the trace starts).
    wake: Option<Ns>,
    /// CPU time used until it slept.
    cpu: Ns,
    /// When it went to sleep (None: still active at the end).
    slept: Option<Ns>,
}

#[derive(Debug, Clone)]
struct Task {
    pid: u32,
    comm: String,
    comms: Vec<String>,
    prio: i32,
    state: St,
    /// Start of the current run, while running.
    run_start: Ns,
    last_wake: Option<Ns>,
    cpu_time: Ns,
    acts: Vec<Activation>,
    exit: Option<Ns>,
    runs: usize,
}

impl Task {
    fn new(pid: u32) -> Task {
        Task {
            pid,
            comm: String::new(),
            comms: Vec::new(),
            prio: 120,
            state: St::Unknown,
            run_start: 0,
            last_wake: None,
            cpu_time: 0,
            acts: Vec::new(),
            exit: None,
            runs: 0,
        }
    }

    fn saw(&mut self, comm: &str, prio: i32) {
        if self.comm != comm && !comm.is_empty() {
            if !self.comm.is_empty() && !self.comms.contains(&self.comm) {
                self.comms.push(self.comm.clone());
            }
            self.comm = comm.to_string();
        }
        self.prio = prio;
    }

    fn wake(&mut self, t: Ns) {
        if matches!(self.state, St::Asleep | St::Unknown) {
            self.acts.push(Activation {
                wake: Some(t),
                cpu: 0,
                slept: None,
            });
        }
        if !matches!(self.state, St::Running(_)) {
            self.state = St::Runnable;
        }
        self.last_wake = Some(t);
    }

    fn start(&mut self, cpu: usize, t: Ns) {
        if matches!(self.state, St::Asleep) {
            // Woken without a traced wake-up.
            self.acts.push(Activation {
                wake: Some(t),
                cpu: 0,
                slept: None,
            });
        } else if self.acts.is_empty() {
            // Active before its first traced event (or since the trace started).
            self.acts.push(Activation {
                wake: None,
                cpu: 0,
                slept: None,
            });
        }
        self.state = St::Running(cpu);
        self.run_start = t;
    }

    fn stop(&mut self, t: Ns, left: Left) {
        let ran = t.saturating_sub(self.run_start);
        self.cpu_time += ran;
        self.runs += 1;
        if let Some(a) = self.acts.last_mut() {
            a.cpu += ran;
            if left == Left::Asleep {
                a.slept = Some(t);
            }
        }
        self.state = match left {
            Left::Runnable => St::Runnable,
            Left::Asleep => St::Asleep,
        };
    }
}

/// What the replay found.
struct Replay {
    tasks: BTreeMap<u32, Task>,
    cpus: usize,
    start: Ns,
    end: Ns,
    switches: usize,
    inferred_idle_to_task: usize,
    inferred_task_to_task: usize,
    inferred_elsewhere: usize,
}

fn replay(lines: &[Line], cpus_hint: Option<usize>) -> Replay {
    let start = lines.first().map_or(0, |l| l.ts);
    let end = lines.last().map_or(0, |l| l.ts);
    let ncpu = lines
        .iter()
        .map(|l| l.cpu + 1)
        .max()
        .unwrap_or(1)
        .max(cpus_hint.unwrap_or(1));
    // Per CPU: the pid believed running (None: not known yet) and its last event time.
    let mut cur: Vec<Option<u32>> = vec![None; ncpu];
    let mut since: Vec<Ns> = vec![start; ncpu];
    let mut tasks: BTreeMap<u32, Task> = BTreeMap::new();
    let mut r = Replay {
        tasks: BTreeMap::new(),
        cpus: ncpu,
        start,
        end,
        switches: 0,
        inferred_idle_to_task: 0,
        inferred_task_to_task: 0,
        inferred_elsewhere: 0,
    };
    for l in lines {
        let (c, t) = (l.cpu, l.ts);
        match &l.ev {
            Ev::Wakeup { pid, comm, prio } => {
                if *pid == 0 {
                    continue;
                }
                let task = tasks.entry(*pid).or_insert_with(|| Task::new(*pid));
                task.saw(comm, *prio);
                task.wake(t);
            }
            Ev::Other { .. } => {}
            Ev::Exit { pid, comm } => {
                if let Some(task) = tasks.get_mut(pid) {
                    if task.comm.is_empty() {
                        task.comm = comm.clone();
                    }
                    task.exit = Some(t);
                }
            }
            Ev::Switch {
                prev,
                prev_comm,
                prev_prio,
                left,
                next,
                next_comm,
                next_prio,
            } => {
                r.switches += 1;
                let (p, n) = (*prev, *next);
                match cur[c] {
                    Some(k) if k != p => {
                        // A switch k -> p on this CPU is missing: p started at its last
                        // wake-up when that is after the CPU's previous event.
                        let x = tasks
                            .get(&p)
                            .and_then(|tp| tp.last_wake)
                            .filter(|&w| w >= since[c] && w <= t)
                            .unwrap_or(since[c]);
                        if k == 0 {
                            r.inferred_idle_to_task += 1;
                        } else {
                            r.inferred_task_to_task += 1;
                            if let Some(tk) = tasks.get_mut(&k) {
                                if tk.state == St::Running(c) {
                                    tk.stop(x, Left::Runnable);
                                }
                            }
                        }
                        if p != 0 {
                            let tp = tasks.entry(p).or_insert_with(|| Task::new(p));
                            if let St::Running(other) = tp.state {
                                if other != c {
                                    tp.stop(x, Left::Runnable);
                                    r.inferred_elsewhere += 1;
                                }
                            }
                            tp.start(c, x);
                        }
                    }
                    None if p != 0 => {
                        // First event on this CPU: p ran since the trace started.
                        let tp = tasks.entry(p).or_insert_with(|| Task::new(p));
                        if !matches!(tp.state, St::Running(_)) {
                            tp.start(c, start);
                        }
                    }
                    _ => {}
                }
                if p != 0 {
                    let tp = tasks.entry(p).or_insert_with(|| Task::new(p));
                    tp.saw(prev_comm, *prev_prio);
                    if tp.state != St::Running(c) {
                        // Believed elsewhere or unknown: it ran here since the last event.
                        tp.start(c, since[c]);
                    }
                    tp.stop(t, *left);
                }
                if n != 0 {
                    let tn = tasks.entry(n).or_insert_with(|| Task::new(n));
                    tn.saw(next_comm, *next_prio);
                    if let St::Running(other) = tn.state {
                        if other != c {
                            // Still believed on another CPU: that switch-out is missing.
                            tn.stop(t, Left::Runnable);
                            r.inferred_elsewhere += 1;
                            cur[other] = Some(0);
                            since[other] = t;
                        }
                    }
                    tn.start(c, t);
                }
                cur[c] = Some(n);
                since[c] = t;
            }
        }
    }
    for task in tasks.values_mut() {
        if let St::Running(_) = task.state {
            let until = task.exit.unwrap_or(end);
            task.stop(until.max(task.run_start), Left::Runnable);
        }
    }
    r.tasks = tasks;
    r
}

fn median(v: &mut [Ns]) -> Ns {
    v.sort_unstable();
    if v.is_empty() {
        0
    } else {
        v[v.len() / 2]
    }
}

/// The periodic pattern of a task, when it has one.
#[derive(Debug, Clone, PartialEq)]
struct Periodic {
    period: Ns,
    runtime: Ns,
    offset: Ns,
    gaps: usize,
    regular_share: f64,
}

/// Why a task is not periodic (for the notes), or its pattern.
fn periodicity(task: &Task, start: Ns) -> Result<Periodic, String> {
    let woken: Vec<&Activation> = task.acts.iter().filter(|a| a.wake.is_some()).collect();
    if woken.len() < 4 {
        return Err(format!(
            "{} wake-up(s), too few to see a period",
            woken.len()
        ));
    }
    let wakes: Vec<Ns> = woken.iter().filter_map(|a| a.wake).collect();
    let mut gaps: Vec<Ns> = wakes.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len();
    let m = median(&mut gaps);
    if m == 0 {
        return Err("wake-ups without gaps".into());
    }
    let regular = gaps
        .iter()
        .filter(|&&g| (g as f64 - m as f64).abs() <= 0.15 * m as f64)
        .count();
    let share = regular as f64 / n as f64;
    if share < 0.8 {
        return Err(format!(
            "inter-wake times vary (median {}, only {:.0}% within 15%)",
            pretty(round_us(m)),
            100.0 * share
        ));
    }
    // Runtime: the largest completed activation; a burst longer than the period (a
    // startup, a stall) falls back to the 95th percentile.
    let mut bursts: Vec<Ns> = woken
        .iter()
        .filter(|a| a.slept.is_some())
        .map(|a| a.cpu)
        .collect();
    bursts.sort_unstable();
    let Some(&max) = bursts.last() else {
        return Err("never went back to sleep".into());
    };
    let period = round_us(m);
    let mut runtime = ceil_us(max);
    if runtime > period {
        runtime = ceil_us(bursts[(bursts.len() * 95 / 100).min(bursts.len() - 1)]);
    }
    if runtime > period {
        return Err(format!(
            "its bursts ({}) are longer than its wake-up interval ({})",
            pretty(runtime),
            pretty(period)
        ));
    }
    let offset = (wakes[0].saturating_sub(start) + 500) / 1000 * 1000 % period;
    Ok(Periodic {
        period,
        runtime,
        offset: offset - offset % 1000,
        gaps: n,
        regular_share: share,
    })
}

fn policy_text(prio: i32) -> String {
    match prio {
        ..=-1 => "SCHED_DEADLINE".into(),
        0..=99 => format!("SCHED_FIFO/RR rt priority {}", 99 - prio),
        _ => format!("SCHED_OTHER nice {}", prio - 120),
    }
}

/// Import a trace. `source` names the input in the workload's header comment.
pub fn import(text: &str, source: &str, opts: &Options) -> Result<Imported, ImportError> {
    if text.as_bytes().starts_with(b"\x17\x08\x44tracing") {
        return Err(ImportError::new(
            "this is a trace-cmd binary file (trace.dat); convert it first: trace-cmd report -i FILE > trace.txt",
        ));
    }
    let (lines, meta) = parse(text, opts)?;
    let switches = lines
        .iter()
        .filter(|l| matches!(l.ev, Ev::Switch { .. }))
        .count();
    if switches == 0 {
        return Err(ImportError::new(
            "no sched_switch event in the trace: record with `trace-cmd record -e sched:sched_switch -e sched:sched_wakeup ...` (or enable events/sched/sched_switch in tracefs)",
        ));
    }
    let (first, last) = (
        lines.first().map_or(0, |l| l.ts),
        lines.last().map_or(0, |l| l.ts),
    );
    if last - first > MAX_TIME_NS - 1_000 {
        return Err(ImportError::new(format!(
            "the trace spans {}, more than {}, schedlab's limit for any time",
            pretty(last - first),
            pretty(MAX_TIME_NS)
        )));
    }
    let r = replay(&lines, meta.cpus);
    let duration = (r.end - r.start).max(1_000_000);

    let mut notes = Vec::new();
    let inferred = r.inferred_idle_to_task + r.inferred_task_to_task + r.inferred_elsewhere;
    if inferred > 0 {
        notes.push(format!(
            "{inferred} context switches were missing from the trace and were inferred from wake-ups and the next switch on the CPU ({} idle → task, {} task → task, {} on another CPU); run times around them are estimates",
            r.inferred_idle_to_task, r.inferred_task_to_task, r.inferred_elsewhere
        ));
    }
    if meta.wakeups == 0 && meta.wakings == 0 {
        notes.push(
            "the trace has no sched_wakeup events: wake-ups were taken from the switches that started each run (periods may be late by the scheduling latency)".into(),
        );
    }
    for (event, n) in &meta.ignored {
        notes.push(format!("{n} {event} event(s) were skipped"));
    }

    // Tasks worth a line, most CPU time first.
    let mut tasks: Vec<&Task> = r.tasks.values().filter(|t| t.pid != 0).collect();
    tasks.sort_by(|a, b| b.cpu_time.cmp(&a.cpu_time).then(a.pid.cmp(&b.pid)));
    let never_ran = tasks.iter().filter(|t| t.cpu_time == 0).count();
    if never_ran > 0 {
        notes.push(format!(
            "{never_ran} task(s) woke up but never ran in the trace; left out"
        ));
    }
    let small = tasks
        .iter()
        .filter(|t| t.cpu_time > 0 && t.cpu_time < opts.min_cpu)
        .count();
    if small > 0 {
        notes.push(format!(
            "{small} task(s) used less than {} of CPU time; left out (--min-cpu)",
            pretty(opts.min_cpu)
        ));
    }
    tasks.retain(|t| t.cpu_time > 0 && t.cpu_time >= opts.min_cpu.max(1));

    let names = unique_names(
        tasks
            .iter()
            .map(|t| (t.comm.clone(), format!("{}-{}", t.comm, t.pid)))
            .collect(),
    );
    let mut out = Vec::new();
    let mut rt_kind_noted = false;
    let mut dropped_aperiodic = 0;
    for (task, name) in tasks.iter().zip(&names) {
        let lifetime = task.exit.unwrap_or(r.end).saturating_sub(r.start).max(1);
        let policy = policy_text(task.prio);
        let renamed = if task.comms.is_empty() {
            String::new()
        } else {
            format!(", earlier named {}", task.comms.join(", "))
        };
        match periodicity(task, r.start) {
            Ok(p) => {
                let mut o = OutTask::new(
                    name,
                    format!(
                        "pid {}: {policy}{renamed}; woke every {} ({} gaps, {:.0}% within 15% of the median), longest burst {}, {} of CPU in total",
                        task.pid,
                        pretty(p.period),
                        p.gaps,
                        100.0 * p.regular_share,
                        pretty(p.runtime),
                        pretty(round_us(task.cpu_time))
                    ),
                );
                if (0..=99).contains(&task.prio) {
                    if !rt_kind_noted {
                        notes.push("the trace does not tell SCHED_FIFO from SCHED_RR: real-time tasks are imported as fifo".into());
                        rt_kind_noted = true;
                    }
                    let rt_priority = SchedAttr::from_kernel_prio(task.prio).rt_priority();
                    o.field("class", "fifo")
                        .field("priority", rt_priority.to_string());
                }
                o.dur("runtime", p.runtime).dur("period", p.period);
                if p.offset > 0 {
                    o.dur("offset", p.offset);
                }
                out.push(o);
            }
            Err(why) => {
                if opts.periodic_only {
                    dropped_aperiodic += 1;
                    continue;
                }
                if (0..=99).contains(&task.prio) || task.prio < 0 {
                    notes.push(format!(
                        "{name} is {policy} but not periodic ({why}); the workload format needs a period for real-time tasks, so it is imported as a normal task"
                    ));
                }
                let mut o = OutTask::new(name, String::new());
                o.field("class", "normal");
                let nice = task.prio - 120;
                if nice != 0 && (-20..=19).contains(&nice) {
                    o.field("nice", nice.to_string());
                }
                let mut runs: Vec<Ns> = task
                    .acts
                    .iter()
                    .filter(|a| a.slept.is_some() && a.cpu > 0)
                    .map(|a| a.cpu)
                    .collect();
                let mut sleeps: Vec<Ns> = task
                    .acts
                    .windows(2)
                    .filter_map(|w| Some(w[1].wake?.saturating_sub(w[0].slept?)))
                    .collect();
                let busy_share = task.cpu_time as f64 / lifetime as f64;
                let pattern = if runs.len() >= 2 && !sleeps.is_empty() && busy_share < 0.95 {
                    let (run, sleep) = (ceil_us(median(&mut runs)), round_us(median(&mut sleeps)));
                    o.dur("run", run).dur("sleep", sleep);
                    format!(
                        "ran {} in {} bursts (median {}), slept median {}",
                        pretty(round_us(task.cpu_time)),
                        task.acts.len(),
                        pretty(run),
                        pretty(sleep)
                    )
                } else if let Some(exit) = task.exit {
                    o.dur("work", ceil_us(task.cpu_time));
                    format!(
                        "CPU-bound, ran {} and exited at {}",
                        pretty(round_us(task.cpu_time)),
                        pretty(round_us(exit - r.start))
                    )
                } else {
                    format!(
                        "CPU-bound ({:.0}% of the trace)",
                        100.0 * busy_share.min(1.0)
                    )
                };
                o.comment = format!(
                    "pid {}: {policy}{renamed}; not periodic ({why}); {pattern}",
                    task.pid
                );
                out.push(o);
            }
        }
    }
    if dropped_aperiodic > 0 {
        notes.push(format!(
            "{dropped_aperiodic} task(s) without a regular period were left out (--periodic-only)"
        ));
    }
    notes.push(
        "not in a scheduler trace: CPU affinity, cgroup limits, SCHED_DEADLINE's own runtime/deadline/period (estimated from the observed pattern), execution-time variation (runtime is the longest observed burst)".into(),
    );

    let format = match (meta.trace_cmd, meta.raw) {
        (true, false) => "trace-cmd report text",
        (false, true) => "raw ftrace text",
        _ => "ftrace text",
    };
    let header = vec![
        format!("Imported by `schedlab trace import` from {source} ({format})."),
        format!(
            "{} CPU{}, {} traced, {} sched_switch events ({} more inferred), {} of the {} tasks seen kept.",
            r.cpus,
            if r.cpus == 1 { "" } else { "s" },
            pretty(round_us(duration)),
            r.switches,
            inferred,
            out.len(),
            r.tasks.len().saturating_sub(usize::from(r.tasks.contains_key(&0)))
        ),
    ];
    let name = opts.name.clone().unwrap_or_else(|| "imported trace".into());
    finish(&header, &name, r.cpus, ceil_us(duration), &out, notes)
}

/// Per-task CPU time (ns) by pid, as the replay rebuilt it (for tests and tools).
pub fn cpu_time_by_pid(text: &str) -> Result<HashMap<u32, Ns>, ImportError> {
    let (lines, meta) = parse(
        text,
        &Options {
            ignore_unknown: true,
            ..Options::default()
        },
    )?;
    let r = replay(&lines, meta.cpus);
    Ok(r.tasks.values().map(|t| (t.pid, t.cpu_time)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(ns: u64) -> String {
        format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
    }

    fn sw(ns: u64, cpu: usize, p: (&str, u32, i32, &str), n: (&str, u32, i32)) -> String {
        format!(
            "{:>16}-{:<5} [{cpu:03}] {}: sched_switch:         {}:{} [{}] {} ==> {}:{} [{}]\n",
            if p.1 == 0 { "<idle>" } else { p.0 },
            p.1,
            stamp(ns),
            p.0,
            p.1,
            p.2,
            p.3,
            n.0,
            n.1,
            n.2
        )
    }

    fn wk(ns: u64, cpu: usize, t: (&str, u32, i32)) -> String {
        format!(
            "          <idle>-0     [{cpu:03}] {}: sched_wakeup:         {}:{} [{}] CPU:{cpu:03}\n",
            stamp(ns),
            t.0,
            t.1,
            t.2
        )
    }

    const MS: u64 = 1_000_000;

    /// A periodic fifo task (prio 19 = rt priority 80) every 10ms for 2.01ms, on one CPU.
    fn periodic_trace(drop_idle_to_task: bool) -> String {
        let mut s = String::from("cpus=1\n");
        for k in 0..10u64 {
            let t0 = 100 * MS + 10 * MS * k;
            s += &wk(t0, 0, ("ctl", 42, 19));
            if !drop_idle_to_task {
                s += &sw(t0 + 10_000, 0, ("swapper/0", 0, 120, "R"), ("ctl", 42, 19));
            }
            s += &sw(
                t0 + 2_010_000,
                0,
                ("ctl", 42, 19, "S"),
                ("swapper/0", 0, 120),
            );
        }
        s
    }

    #[test]
    fn a_periodic_fifo_task_is_recovered() {
        let t = periodic_trace(false);
        let imp = import(&t, "t.txt", &Options::default()).unwrap();
        assert!(
            imp.yaml.contains(
                "{ name: \"ctl\", class: fifo, priority: 80, runtime: 2ms, period: 10ms }"
            ),
            "{}",
            imp.yaml
        );
        let cpu = cpu_time_by_pid(&t).unwrap();
        assert_eq!(cpu[&42], 10 * 2 * MS);
    }

    #[test]
    fn missing_idle_to_task_switches_are_inferred_from_wakeups() {
        let t = periodic_trace(true);
        let imp = import(&t, "t.txt", &Options::default()).unwrap();
        assert!(
            imp.yaml.contains("class: fifo, priority: 80"),
            "{}",
            imp.yaml
        );
        assert!(
            imp.yaml.contains("runtime: 2.01ms, period: 10ms"),
            "{}",
            imp.yaml
        );
        assert!(
            imp.notes
                .iter()
                .any(|n| n.contains("were missing from the trace")),
            "{:?}",
            imp.notes
        );
        let cpu = cpu_time_by_pid(&t).unwrap();
        assert_eq!(cpu[&42], 10 * 2_010_000);
    }

    #[test]
    fn bad_lines_name_their_line_number() {
        let good = sw(1_000 * MS, 0, ("swapper/0", 0, 120, "R"), ("a", 1, 120))
            + &sw(1_001 * MS, 0, ("a", 1, 120, "S"), ("swapper/0", 0, 120));
        for (bad, want) in [
            ("garbage here\n", "line 4: not an ftrace event line"),
            (
                "   a-1 [000] 1.000100: sched_switch: a:1 [120] S ==> \n",
                "line 4: malformed sched_switch event (truncated?)",
            ),
            (
                "   a-1 [000] 1.000100: irq_handler_entry: irq=5 name=x\n",
                "line 4: unknown event `irq_handler_entry`",
            ),
            ("   a-1 [000] 1.0001", "line 4: not an ftrace event line"),
        ] {
            let text = format!("cpus=1\n{good}{bad}");
            let e = import(&text, "t", &Options::default()).unwrap_err();
            assert!(e.to_string().starts_with(want), "{e}");
        }
        let e = import("cpus=1\n", "t", &Options::default()).unwrap_err();
        assert!(e.to_string().contains("no sched_switch event"), "{e}");
        let text = format!("cpus=1\n{good}   a-1 [000] 1.000100: irq_handler_entry: irq=5\n");
        let ok = import(
            &text,
            "t",
            &Options {
                ignore_unknown: true,
                ..Options::default()
            },
        );
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn raw_ftrace_lines_parse() {
        let text = "# tracer: nop\n#\n            bash-13285   [000] d..2.  1673.155582: sched_switch: prev_comm=bash prev_pid=13285 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n          <idle>-0       [001] d..2.  1673.156029: sched_wakeup: comm=opt cgu.02 pid=77 prio=100 target_cpu=001\n          <idle>-0       [001] d..2.  1673.156039: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=opt cgu.02 next_pid=77 next_prio=100\n       opt cgu.02-77     [001] d..2.  1673.157039: sched_switch: prev_comm=opt cgu.02 prev_pid=77 prev_prio=100 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120\n           sleep-13289   [001] .....  1673.457923: sched_process_exit: comm=sleep pid=13289 prio=120 group_dead=true\n";
        let (lines, meta) = parse(text, &Options::default()).unwrap();
        assert!(meta.raw);
        assert_eq!(lines.len(), 5);
        let cpu = cpu_time_by_pid(text).unwrap();
        assert_eq!(cpu[&77], 1_000_000);
        let imp = import(text, "t", &Options::default()).unwrap();
        assert!(
            imp.yaml
                .contains("name: \"opt cgu.02\", class: normal, nice: -20"),
            "{}",
            imp.yaml
        );
    }

    #[test]
    fn trace_cmd_prints_deadline_prio_unsigned() {
        let text = "cpus=2\n        schedlab-14527 [000]  3354.259885: sched_wakeup:         sl-rt:14532 [4294967295] CPU:001\n          <idle>-0     [001]  3354.259985: sched_switch:         swapper/1:0 [120] R ==> sl-rt:14532 [4294967295]\n           sl-rt-14532 [001]  3354.260985: sched_switch:         sl-rt:14532 [4294967295] S ==> swapper/1:0 [120]\n";
        let (lines, _) = parse(text, &Options::default()).unwrap();
        assert!(matches!(lines[0].ev, Ev::Wakeup { prio: -1, .. }));
        let imp = import(text, "t", &Options::default()).unwrap();
        assert!(imp.yaml.contains("SCHED_DEADLINE"), "{}", imp.yaml);
    }

    #[test]
    fn trace_dat_is_recognised() {
        let e = import("\u{17}\u{8}Dtracing6", "t", &Options::default()).unwrap_err();
        assert!(e.to_string().contains("trace-cmd report -i"), "{e}");
    }
}
