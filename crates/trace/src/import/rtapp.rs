//! Import an rt-app JSON configuration (the format of Debian's `rt-app`: a `tasks`
//! object of threads, each with `instance`, `loop`, `policy`, `priority`, `cpus`,
//! `delay`, `dl-runtime`/`dl-period`/`dl-deadline` and either events or `phases` of
//! events; an optional `global` object; times in µs).
//!
//! rt-app files are json-c JSON: `/* */` and `//` comments, trailing commas and repeated
//! keys inside one object (an event sequence such as `run`, `resume`, `run`) are all
//! accepted and kept in order. Event keys are matched by prefix as rt-app does
//! (`runtime1`, `sleep2`, `timer0`).
//!
//! Mapping. One iteration of a thread's work is its phases in order, each repeated
//! `loop` times, when every phase has `loop: 1`; otherwise the phase with the highest
//! load stands for the thread (the others are reported). In that iteration, `run` and
//! `runtime` add CPU time, `sleep` adds sleep, and `timer` waits for the next period of
//! its timer. The iteration's length is its period. Then:
//! - SCHED_DEADLINE → a `deadline` task (runtime/period/deadline from `dl-*` when given,
//!   else from the iteration);
//! - SCHED_FIFO / SCHED_RR → `fifo` / `rr` with the thread's priority (default 10),
//!   runtime = the iteration's CPU time, period = its length (a thread that never sleeps
//!   gets runtime = period: a CPU hog);
//! - SCHED_OTHER / BATCH / IDLE → `normal` / `batch` / `idle` with `nice` = priority and
//!   `run`/`sleep` from the iteration (CPU-bound when it never sleeps; `work` when its
//!   `loop` is finite).
//!
//! Events and keys that change the schedule but have no equivalent in a workload
//! (mutexes, conditions, barriers, suspend/resume, memory and IO loads, per-phase
//! affinity, ...) are errors naming them, unless `ignore_unsupported` is set; then they
//! are dropped and listed in the notes. Keys that do not affect scheduling (log and
//! calibration settings) are ignored.

use super::{finish, pretty, quote, unique_names, ImportError, Imported, OutTask};
use schedlab_model::limits::{MAX_TASKS, MAX_TIME_NS};
use schedlab_model::Ns;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Import options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Workload name (default: "rt-app").
    pub name: Option<String>,
    /// Drop unsupported events and keys (listed in the notes) instead of failing.
    pub ignore_unsupported: bool,
    /// Number of CPUs (default: the highest CPU named in an affinity + 1, at least 1).
    pub cpus: Option<usize>,
}

/// A JSON value that keeps every key of an object, in order, duplicates included.
#[derive(Debug, Clone, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = J;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<J, E> {
                Ok(J::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<J, E> {
                Ok(J::Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<J, E> {
                Ok(J::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<J, E> {
                Ok(J::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<J, E> {
                Ok(J::Str(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = s.next_element()? {
                    v.push(x);
                }
                Ok(J::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = m.next_entry::<String, J>()? {
                    v.push((k, x));
                }
                Ok(J::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Blank out comments and trailing commas (json-c accepts them, serde_json does not),
/// keeping every newline so that error positions stay right.
fn relax(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
                i += 1;
            }
            '/' if b.get(i + 1) == Some(&'*') => {
                let mut j = i + 2;
                while j + 1 < b.len() && !(b[j] == '*' && b[j + 1] == '/') {
                    j += 1;
                }
                let end = (j + 2).min(b.len());
                for &x in &b[i..end] {
                    out.push(if x == '\n' { '\n' } else { ' ' });
                }
                i = end;
            }
            '/' if b.get(i + 1) == Some(&'/') => {
                while i < b.len() && b[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Trailing commas: a comma followed (past blanks) by } or ].
    let mut k = 0;
    let mut in_str = false;
    while k < out.len() {
        let c = out[k];
        if in_str {
            if c == '\\' {
                k += 2;
                continue;
            }
            if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else if c == ',' {
            let mut j = k + 1;
            while j < out.len() && out[j].is_whitespace() {
                j += 1;
            }
            if j < out.len() && (out[j] == '}' || out[j] == ']') {
                out[k] = ' ';
            }
        }
        k += 1;
    }
    out.into_iter().collect()
}

/// Global keys that do not change the schedule.
const GLOBAL_IGNORED: &[&str] = &[
    "calibration",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
    "frag",
];

/// Event prefixes with no workload equivalent.
const UNSUPPORTED_EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "barrier", "suspend", "resume", "mem",
    "iorun", "yield", "fork",
];

/// Thread keys with no workload equivalent.
const UNSUPPORTED_THREAD_KEYS: &[&str] = &[
    "taskgroup",
    "util_min",
    "util_max",
    "nodes_membind",
    "lock_order",
    "resources",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

fn parse_policy(s: &str, at: &str) -> Result<Policy, ImportError> {
    let u = s.trim().to_ascii_uppercase();
    let u = u.strip_prefix("SCHED_").unwrap_or(&u);
    Ok(match u {
        "OTHER" | "NORMAL" => Policy::Other,
        "BATCH" => Policy::Batch,
        "IDLE" => Policy::Idle,
        "FIFO" => Policy::Fifo,
        "RR" => Policy::Rr,
        "DEADLINE" => Policy::Deadline,
        _ => {
            return Err(ImportError::new(format!(
                "{at}: unknown policy `{s}` (known: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"
            )))
        }
    })
}

/// One event of an iteration.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Run(Ns),
    Sleep(Ns),
    Timer { reference: String, period: Ns },
}

/// A phase: its events and loop count.
#[derive(Debug, Clone)]
struct Phase {
    name: String,
    loops: i64,
    steps: Vec<Step>,
}

struct Ctx<'a> {
    opts: &'a Options,
    dropped: Vec<String>,
}

impl Ctx<'_> {
    /// An unsupported key: an error, or (with `ignore_unsupported`) a note.
    fn unsupported(&mut self, path: &str, key: &str, what: &str) -> Result<(), ImportError> {
        if self.opts.ignore_unsupported {
            self.dropped.push(format!("{path}.{key}"));
            Ok(())
        } else {
            Err(ImportError::new(format!(
                "{path}.{key}: unsupported rt-app {what} `{key}` (a workload has no equivalent; pass --ignore-unsupported to import without it)"
            )))
        }
    }
}

/// Largest rt-app time in µs: schedlab's limit for any time.
const MAX_US: f64 = (MAX_TIME_NS / 1_000) as f64;

fn us(v: &J, at: &str) -> Result<Ns, ImportError> {
    match v {
        J::Num(x) if *x > MAX_US => Err(ImportError::new(format!(
            "{at}: {x} µs is above {} µs (about 31.7 years), the limit for any time",
            MAX_TIME_NS / 1_000
        ))),
        J::Num(x) if *x >= 0.0 && x.fract() == 0.0 => Ok(*x as Ns * 1_000),
        J::Num(x) if *x >= 0.0 => Ok((*x * 1_000.0).round() as Ns),
        _ => Err(ImportError::new(format!(
            "{at}: `{}` expects a duration in microseconds (a number ≥ 0), got {}",
            key_of(at),
            show(v)
        ))),
    }
}

fn int(v: &J, at: &str) -> Result<i64, ImportError> {
    match v {
        J::Num(x) if x.fract() == 0.0 && x.abs() < 1e15 => Ok(*x as i64),
        _ => Err(ImportError::new(format!(
            "{at}: `{}` expects an integer, got {}",
            key_of(at),
            show(v)
        ))),
    }
}

/// The last key of a dotted path (`tasks.a.run` -> `run`).
fn key_of(at: &str) -> &str {
    at.rsplit('.').next().unwrap_or(at)
}

fn show(v: &J) -> String {
    match v {
        J::Null => "null".into(),
        J::Bool(b) => b.to_string(),
        J::Num(x) => x.to_string(),
        J::Str(s) => quote(s),
        J::Arr(_) => "a list".into(),
        J::Obj(_) => "an object".into(),
    }
}

fn obj<'j>(v: &'j J, at: &str) -> Result<&'j [(String, J)], ImportError> {
    match v {
        J::Obj(o) => Ok(o),
        _ => Err(ImportError::new(format!(
            "{at}: `{}` expects an object, got {}",
            key_of(at),
            show(v)
        ))),
    }
}

/// The event a key names (rt-app matches by prefix, `runtime` before `run`).
fn event_kind(key: &str) -> Option<&'static str> {
    const KNOWN: &[&str] = &[
        "runtime", "run", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "sync",
        "barrier", "suspend", "resume", "mem", "iorun", "yield", "fork",
    ];
    KNOWN.iter().copied().find(|k| key.starts_with(k))
}

/// Read the events of one object (a phase, or a thread without `phases`).
fn events(
    o: &[(String, J)],
    at: &str,
    ctx: &mut Ctx,
    skip: &[&str],
) -> Result<(i64, Vec<Step>), ImportError> {
    let mut loops = 1;
    let mut steps = Vec::new();
    for (k, v) in o {
        if skip.contains(&k.as_str()) {
            continue;
        }
        if k == "loop" {
            loops = int(v, &format!("{at}.loop"))?;
            continue;
        }
        let path = format!("{at}.{k}");
        match event_kind(k) {
            Some("run") | Some("runtime") => steps.push(Step::Run(us(v, &path)?)),
            Some("sleep") => steps.push(Step::Sleep(us(v, &path)?)),
            Some("timer") => {
                let t = obj(v, &path)?;
                let mut period = None;
                let mut reference = "unique".to_string();
                for (tk, tv) in t {
                    match tk.as_str() {
                        "period" => period = Some(us(tv, &format!("{path}.period"))?),
                        "ref" => {
                            if let J::Str(s) = tv {
                                reference = s.clone();
                            }
                        }
                        "mode" => {}
                        other => {
                            return Err(ImportError::new(format!(
                                "{path}.{other}: unknown timer key `{other}` (known: ref, period, mode)"
                            )))
                        }
                    }
                }
                let period = period
                    .ok_or_else(|| ImportError::new(format!("{path}: a timer needs a period")))?;
                steps.push(Step::Timer { reference, period });
            }
            Some(kind) if UNSUPPORTED_EVENTS.contains(&kind) => ctx.unsupported(at, k, "event")?,
            _ if k == "cpus" => ctx.unsupported(at, k, "per-phase key")?,
            _ if matches!(
                k.as_str(),
                "exec" | "period" | "deadline" | "lock_order" | "resources"
            ) =>
            {
                ctx.unsupported(at, k, "key of the old phase format")?
            }
            _ => {
                return Err(ImportError::new(format!(
                    "{path}: unknown rt-app key `{k}`"
                )))
            }
        }
    }
    Ok((loops, steps))
}

/// CPU time and length of one pass over `steps` repeated `loops` times, timers
/// included (a timer waits for its next period; timers with the same reference share
/// their clock).
fn iterate(parts: &[(&[Step], i64)]) -> (Ns, Ns, bool) {
    let mut t: Ns = 0;
    let mut cpu: Ns = 0;
    let mut waits = false;
    let mut timers: Vec<(String, Ns)> = Vec::new();
    for &(steps, loops) in parts {
        for _ in 0..loops.max(1) {
            for s in steps {
                match s {
                    Step::Run(d) => {
                        t = t.saturating_add(*d);
                        cpu = cpu.saturating_add(*d);
                    }
                    Step::Sleep(d) => {
                        t = t.saturating_add(*d);
                        waits |= *d > 0;
                    }
                    Step::Timer { reference, period } => {
                        waits = true;
                        let next = match timers.iter_mut().find(|(r, _)| r == reference) {
                            Some((_, at)) => {
                                *at = at.saturating_add(*period);
                                *at
                            }
                            None => {
                                timers.push((reference.clone(), *period));
                                *period
                            }
                        };
                        t = t.max(next);
                    }
                }
            }
        }
    }
    // A pass ends at the last timer boundary reached (timers keep their phase).
    if let Some(&(_, at)) = timers.iter().max_by_key(|(_, at)| *at) {
        t = t.max(at);
    }
    (cpu, t, waits)
}

/// Import an rt-app configuration. `source` names the input in the header comment.
pub fn import(text: &str, source: &str, opts: &Options) -> Result<Imported, ImportError> {
    let relaxed = relax(text);
    let mut de = serde_json::Deserializer::from_str(&relaxed);
    let root = J::deserialize(&mut de).map_err(|e| {
        let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
        let line: String = line.trim().chars().take(80).collect();
        ImportError::at(e.line(), format!("not valid rt-app JSON: {e}: `{line}`"))
    })?;
    de.end()
        .map_err(|e| ImportError::at(e.line(), format!("text after the JSON object: {e}")))?;
    let root = obj(&root, "the file")?;
    let mut ctx = Ctx {
        opts,
        dropped: Vec::new(),
    };
    let mut notes = Vec::new();

    let mut duration: Option<Ns> = None;
    let mut default_policy = Policy::Other;
    let mut tasks_obj = None;
    for (k, v) in root {
        match k.as_str() {
            "tasks" => tasks_obj = Some(v),
            "global" => {
                for (gk, gv) in obj(v, "global")? {
                    let at = format!("global.{gk}");
                    match gk.as_str() {
                        "duration" => {
                            let d = int(gv, &at)?;
                            if d as u64 > MAX_TIME_NS / 1_000_000_000 && d > 0 {
                                return Err(ImportError::new(format!(
                                    "{at}: {d} s is above {} s (about 31.7 years), the limit for any time",
                                    MAX_TIME_NS / 1_000_000_000
                                )));
                            }
                            duration = (d > 0).then(|| d as Ns * 1_000_000_000);
                        }
                        "default_policy" => {
                            let J::Str(s) = gv else {
                                return Err(ImportError::new(format!(
                                    "{at}: `default_policy` expects a policy name"
                                )));
                            };
                            default_policy = parse_policy(s, &at)?;
                        }
                        g if GLOBAL_IGNORED.contains(&g) => {}
                        other => {
                            return Err(ImportError::new(format!(
                                "{at}: unknown rt-app global key `{other}`"
                            )))
                        }
                    }
                }
            }
            "resources" => {
                // Kept by rt-app for compatibility; only the events that use them matter.
            }
            other => {
                return Err(ImportError::new(format!(
                    "{other}: unknown top-level key `{other}` (rt-app files have tasks, global, resources)"
                )))
            }
        }
    }
    let Some(tasks_v) = tasks_obj else {
        return Err(ImportError::new(
            "no `tasks` object: an rt-app configuration needs at least one thread",
        ));
    };
    let tasks = obj(tasks_v, "tasks")?;
    if tasks.is_empty() {
        return Err(ImportError::new("tasks: no thread defined"));
    }
    let duration = match duration {
        Some(d) => d,
        None => {
            notes.push("global.duration is not set (or -1): the workload runs 10s".into());
            10_000_000_000
        }
    };

    let names = unique_names(
        tasks
            .iter()
            .map(|(n, _)| (n.clone(), format!("{n}-2")))
            .collect(),
    );
    let mut out = Vec::new();
    let mut max_cpu = 0usize;
    let mut instances: u64 = 0;
    for ((tname, tv), name) in tasks.iter().zip(&names) {
        let at = format!("tasks.{tname}");
        let t = obj(tv, &at)?;
        let mut instance = 1i64;
        let mut policy = default_policy;
        let mut priority: Option<i64> = None;
        let mut cpus: Option<Vec<usize>> = None;
        let mut delay: Ns = 0;
        let (mut dl_runtime, mut dl_period, mut dl_deadline) = (None, None, None);
        let mut phases_v = None;
        let mut thread_loop: i64 = -1;
        // Old-style periodic threads (`exec`/`period`/`deadline`).
        let (mut exec, mut old_period, mut old_deadline) = (None, None, None);
        for (k, v) in t {
            let p = format!("{at}.{k}");
            match k.as_str() {
                "instance" => instance = int(v, &p)?,
                "policy" => {
                    let J::Str(s) = v else {
                        return Err(ImportError::new(format!(
                            "{p}: `policy` expects a policy name"
                        )));
                    };
                    policy = parse_policy(s, &p)?;
                }
                "priority" => priority = Some(int(v, &p)?),
                "cpus" => {
                    let J::Arr(list) = v else {
                        return Err(ImportError::new(format!(
                            "{p}: `cpus` expects a list of CPUs"
                        )));
                    };
                    if list.is_empty() {
                        return Err(ImportError::new(format!(
                            "{p}: empty CPU list (name at least one CPU, or leave `cpus` out for all)"
                        )));
                    }
                    let mut c = Vec::new();
                    for x in list {
                        let n = int(x, &p)?;
                        if !(0..1024).contains(&n) {
                            return Err(ImportError::new(format!("{p}: CPU {n} is out of range")));
                        }
                        c.push(n as usize);
                        max_cpu = max_cpu.max(n as usize);
                    }
                    cpus = Some(c);
                }
                "delay" => delay = us(v, &p)?,
                "dl-runtime" => dl_runtime = Some(us(v, &p)?),
                "dl-period" => dl_period = Some(us(v, &p)?),
                "dl-deadline" => dl_deadline = Some(us(v, &p)?),
                "phases" => phases_v = Some(v),
                "loop" => thread_loop = int(v, &p)?,
                "exec" => exec = Some(us(v, &p)?),
                "period" => old_period = Some(us(v, &p)?),
                "deadline" => old_deadline = Some(us(v, &p)?),
                k if UNSUPPORTED_THREAD_KEYS.contains(&k) => ctx.unsupported(&at, k, "key")?,
                _ => {}
            }
        }
        if instance < 1 || instance as u64 > MAX_TASKS {
            return Err(ImportError::new(format!(
                "{at}.instance: must be between 1 and {MAX_TASKS} (schedlab's limit on tasks), got {instance}"
            )));
        }
        instances = instances.saturating_add(instance as u64);
        if instances > MAX_TASKS {
            return Err(ImportError::new(format!(
                "{at}.instance: the threads add up to {instances} instances, more than {MAX_TASKS} (schedlab's limit on tasks)"
            )));
        }
        // The events: phases, or the thread object itself.
        const THREAD_KEYS: &[&str] = &[
            "instance",
            "policy",
            "priority",
            "cpus",
            "delay",
            "dl-runtime",
            "dl-period",
            "dl-deadline",
            "phases",
            "loop",
            "exec",
            "period",
            "deadline",
            "taskgroup",
            "util_min",
            "util_max",
            "nodes_membind",
            "lock_order",
            "resources",
        ];
        let mut phases = Vec::new();
        if let Some(pv) = phases_v {
            for (pname, pv) in obj(pv, &format!("{at}.phases"))? {
                let pat = format!("{at}.phases.{pname}");
                let (loops, steps) = events(obj(pv, &pat)?, &pat, &mut ctx, &[])?;
                phases.push(Phase {
                    name: pname.clone(),
                    loops,
                    steps,
                });
            }
            // Events beside `phases` are not rt-app's format.
            events(t, &at, &mut ctx, THREAD_KEYS)?;
        } else {
            let (_, steps) = events(t, &at, &mut ctx, THREAD_KEYS)?;
            phases.push(Phase {
                name: String::new(),
                loops: 1,
                steps,
            });
        }
        if let (Some(e), true) = (exec, phases.iter().all(|p| p.steps.is_empty())) {
            // Old format: a periodic thread described by exec/period/deadline.
            let period = old_period.unwrap_or(e);
            phases = vec![Phase {
                name: String::new(),
                loops: 1,
                steps: vec![
                    Step::Run(e),
                    Step::Timer {
                        reference: "unique".into(),
                        period,
                    },
                ],
            }];
            if policy == Policy::Deadline {
                dl_runtime = dl_runtime.or(Some(e));
                dl_period = dl_period.or(Some(period));
                dl_deadline = dl_deadline.or(old_deadline);
            }
        }

        // One iteration: all phases in order when each runs once, else the busiest.
        let all_once = phases.iter().all(|p| p.loops == 1);
        let (cpu, len, waits, picked) = if all_once || phases.len() == 1 {
            let parts: Vec<(&[Step], i64)> =
                phases.iter().map(|p| (p.steps.as_slice(), 1)).collect();
            let (c, l, w) = iterate(&parts);
            (c, l, w, None)
        } else {
            let mut best: Option<(f64, usize, (Ns, Ns, bool))> = None;
            for (i, p) in phases.iter().enumerate() {
                let r = iterate(&[(p.steps.as_slice(), 1)]);
                let load = if r.1 > 0 {
                    r.0 as f64 / r.1 as f64
                } else {
                    0.0
                };
                if best.as_ref().is_none_or(|b| load > b.0) {
                    best = Some((load, i, r));
                }
            }
            let (_, i, (c, l, w)) = best.expect("at least one phase");
            (c, l, w, Some(i))
        };
        if cpu == 0 && dl_runtime.is_none() {
            notes.push(format!(
                "{tname} never runs (no run or runtime event left): not imported"
            ));
            continue;
        }
        let loads: Vec<f64> = phases
            .iter()
            .map(|p| {
                let (c, l, _) = iterate(&[(p.steps.as_slice(), 1)]);
                if l > 0 {
                    c as f64 / l as f64
                } else {
                    0.0
                }
            })
            .collect();
        let spread = loads.iter().copied().fold(0.0, f64::max)
            - loads.iter().copied().fold(f64::MAX, f64::min);
        if let Some(i) = picked.filter(|_| spread > 0.005) {
            let others: Vec<String> = phases
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| {
                    let (c, l, _) = iterate(&[(p.steps.as_slice(), 1)]);
                    format!(
                        "{} ({:.0}%)",
                        p.name,
                        if l > 0 {
                            100.0 * c as f64 / l as f64
                        } else {
                            0.0
                        }
                    )
                })
                .collect();
            notes.push(format!(
                "{tname}: phases with different loads; imported as its busiest phase `{}` ({:.0}%), not {}",
                phases[i].name,
                if len > 0 { 100.0 * cpu as f64 / len as f64 } else { 0.0 },
                others.join(", ")
            ));
        }
        let total_loops = if thread_loop > 0 {
            let per = if all_once {
                1
            } else {
                phases.iter().map(|p| p.loops.max(1)).sum::<i64>()
            };
            Some(thread_loop.saturating_mul(per))
        } else {
            None
        };

        let mut o = OutTask::new(name, String::new());
        if instance > 1 {
            o.field("count", instance.to_string());
        }
        let describe = format!(
            "{}: {} of CPU every {}{}",
            match policy {
                Policy::Other => "SCHED_OTHER",
                Policy::Batch => "SCHED_BATCH",
                Policy::Idle => "SCHED_IDLE",
                Policy::Fifo => "SCHED_FIFO",
                Policy::Rr => "SCHED_RR",
                Policy::Deadline => "SCHED_DEADLINE",
            },
            pretty(cpu),
            pretty(len.max(1)),
            if waits { "" } else { " (never sleeps)" }
        );
        match policy {
            Policy::Deadline => {
                let runtime = dl_runtime.filter(|&r| r > 0).unwrap_or(cpu);
                let period = dl_period.filter(|&p| p > 0).or((len > 0).then_some(len));
                let Some(period) = period.filter(|_| runtime > 0) else {
                    return Err(ImportError::new(format!(
                        "{at}: a SCHED_DEADLINE thread needs dl-runtime and dl-period (or run and timer events)"
                    )));
                };
                let deadline = dl_deadline.filter(|&d| d > 0).unwrap_or(period);
                if runtime > deadline || deadline > period {
                    return Err(ImportError::new(format!(
                        "{at}: dl-runtime {} ≤ dl-deadline {} ≤ dl-period {} does not hold",
                        pretty(runtime),
                        pretty(deadline),
                        pretty(period)
                    )));
                }
                o.dur("runtime", runtime).dur("period", period);
                if deadline != period {
                    o.dur("deadline", deadline);
                }
            }
            Policy::Fifo | Policy::Rr => {
                let prio = priority.unwrap_or(10);
                if !(1..=99).contains(&prio) {
                    return Err(ImportError::new(format!(
                        "{at}.priority: {prio} is outside 1..99 for a real-time thread"
                    )));
                }
                let period = if waits { len.max(cpu) } else { cpu };
                if !waits {
                    notes.push(format!(
                        "{tname} is a real-time thread that never sleeps: imported with runtime = period = {} (a CPU hog)",
                        pretty(period)
                    ));
                }
                o.field("class", if policy == Policy::Fifo { "fifo" } else { "rr" })
                    .field("priority", prio.to_string())
                    .dur("runtime", cpu)
                    .dur("period", period);
            }
            Policy::Other | Policy::Batch | Policy::Idle => {
                o.field(
                    "class",
                    match policy {
                        Policy::Batch => "batch",
                        Policy::Idle => "idle",
                        _ => "normal",
                    },
                );
                if let Some(p) = priority.filter(|&p| p != 0) {
                    if !(-20..=19).contains(&p) {
                        return Err(ImportError::new(format!(
                            "{at}.priority: nice {p} is outside -20..19 for a SCHED_OTHER thread"
                        )));
                    }
                    o.field("nice", p.to_string());
                }
                if waits && cpu > 0 && len > cpu {
                    o.dur("run", cpu).dur("sleep", len - cpu);
                } else if let Some(n) = total_loops {
                    if cpu > 0 {
                        // Beyond any run's length it is the same as CPU-bound to the end.
                        o.dur("work", cpu.saturating_mul(n as Ns).min(MAX_TIME_NS));
                    }
                }
            }
        }
        if let Some(c) = &cpus {
            o.field(
                "affinity",
                format!(
                    "[{}]",
                    c.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if delay > 0 {
            if matches!(policy, Policy::Deadline | Policy::Fifo | Policy::Rr) {
                o.dur("offset", delay);
            } else {
                notes.push(format!(
                    "{tname}: delay {} ignored (fair tasks start at 0)",
                    pretty(delay)
                ));
            }
        }
        if let (Some(n), Policy::Deadline | Policy::Fifo | Policy::Rr) = (total_loops, policy) {
            notes.push(format!(
                "{tname} stops after {n} iteration(s) in rt-app; the workload runs it for the whole duration"
            ));
        }
        o.comment = format!("rt-app thread `{tname}` × {instance}, {describe}");
        out.push(o);
    }
    if !ctx.dropped.is_empty() {
        notes.push(format!(
            "dropped (no workload equivalent): {}",
            ctx.dropped.join(", ")
        ));
    }
    let cpus = opts.cpus.unwrap_or(max_cpu + 1).max(max_cpu + 1).max(1);
    if opts.cpus.is_none() {
        notes.push(format!(
            "rt-app files do not give the machine's size: platform.cpus = {cpus} (the highest CPU in an affinity + 1; change it with --cpus)"
        ));
    }
    let header = vec![format!(
        "Imported by `schedlab trace import` from {source} (rt-app JSON): {} thread kind(s), times converted from µs.",
        out.len()
    )];
    let name = opts.name.clone().unwrap_or_else(|| "rt-app".into());
    finish(&header, &name, cpus, duration, &out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(text: &str) -> Result<Imported, ImportError> {
        import(text, "t.json", &Options::default())
    }

    #[test]
    fn comments_trailing_commas_and_repeated_keys() {
        let text = "{ /* c */ \"tasks\": { \"a\": { \"run\": 1000, // x\n \"sleep\": 2000, \"run\": 500, \"sleep\": 6500, }, }, }";
        let i = imp(text).unwrap();
        assert!(
            i.yaml
                .contains("{ name: \"a\", class: normal, run: 1.5ms, sleep: 8.5ms }"),
            "{}",
            i.yaml
        );
        assert_eq!(relax("{\"a\":\"/*,}\"}"), "{\"a\":\"/*,}\"}");
    }

    #[test]
    fn timers_make_periods_and_policies_map() {
        let text = r#"{
          "tasks": {
            "t": { "policy": "SCHED_FIFO", "priority": 40, "instance": 2, "run": 3000,
                   "timer": { "ref": "unique", "period": 10000 } },
            "d": { "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 20000,
                   "dl-deadline": 10000, "run": 1500, "timer": { "ref": "x", "period": 20000 } },
            "o": { "priority": -5, "cpus": [1], "run": 1000, "timer": { "ref": "u", "period": 4000 } }
          },
          "global": { "duration": 3, "default_policy": "SCHED_OTHER", "calibration": "CPU0" }
        }"#;
        let i = imp(text).unwrap();
        for want in [
            "{ name: \"t\", count: 2, class: fifo, priority: 40, runtime: 3ms, period: 10ms }",
            "{ name: \"d\", runtime: 2ms, period: 20ms, deadline: 10ms }",
            "{ name: \"o\", class: normal, nice: -5, run: 1ms, sleep: 3ms, affinity: [1] }",
            "duration: 3s",
            "platform: { cpus: 2 }",
        ] {
            assert!(i.yaml.contains(want), "{want}\n{}", i.yaml);
        }
    }

    #[test]
    fn unsupported_events_are_named() {
        let text = r#"{ "tasks": { "a": { "run": 1000, "resume": "b", "sleep": 10 },
                                 "b": { "suspend": "b", "run": 10 } } }"#;
        let e = imp(text).unwrap_err().to_string();
        assert!(
            e.contains("tasks.a.resume: unsupported rt-app event `resume`"),
            "{e}"
        );
        let i = import(
            text,
            "t.json",
            &Options {
                ignore_unsupported: true,
                ..Options::default()
            },
        )
        .unwrap();
        assert!(
            i.notes
                .iter()
                .any(|n| n.contains("tasks.a.resume, tasks.b.suspend")),
            "{:?}",
            i.notes
        );
    }

    #[test]
    fn bad_json_names_the_line() {
        let e = imp("{\n \"tasks\": {\n \"a\": { \"run\": 10 \n }").unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        let e = imp("{ \"tasks\": { \"a\": { \"run\": \"fast\" } } }").unwrap_err();
        assert!(
            e.to_string()
                .contains("tasks.a.run: `run` expects a duration"),
            "{e}"
        );
        let e = imp("{ \"global\": {} }").unwrap_err();
        assert!(e.to_string().contains("no `tasks` object"), "{e}");
        let e = imp("{ \"tasks\": { \"a\": { \"runn\": 10, \"bogus\": 1 } } }").unwrap_err();
        assert!(
            e.to_string().contains("tasks.a.bogus: unknown rt-app key"),
            "{e}"
        );
    }

    #[test]
    fn busiest_phase_stands_for_the_thread() {
        let text = r#"{ "tasks": { "p": { "policy": "SCHED_FIFO", "loop": -1, "phases": {
            "light": { "loop": 10, "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
            "heavy": { "loop": 10, "run": 7000, "timer": { "ref": "unique", "period": 10000 } } } } } }"#;
        let i = imp(text).unwrap();
        assert!(i.yaml.contains("runtime: 7ms, period: 10ms"), "{}", i.yaml);
        assert!(i.notes.iter().any(|n| n.contains("busiest phase `heavy`")));
    }
}
