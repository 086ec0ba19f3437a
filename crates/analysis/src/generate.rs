//! Random periodic task sets, written in the workload format.
//!
//! A [`GenSpec`] says how many tasks, their total utilisation, the sampler, the periods and
//! the deadlines; [`generate`] draws one [`TaskSet`] from a seed (ChaCha8, so the same
//! seed gives the same set everywhere), and [`TaskSet::to_yaml`] / [`TaskSet::to_json`]
//! write it as a workload file that `schedlab simulate` reads.

use crate::utilisation;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rounding::Dyadic;
use schedlab_model::spec::{Dur, PlatformSpec, SimDur, TaskSpec, WorkloadSpec};
use schedlab_model::time::check_time;
use schedlab_model::{format_ns, Ns, PeriodicTask, SimDuration, Workload};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

mod periods;
mod rounding;

pub use periods::MAX_DIVISOR_QUOTIENT;

/// How the utilisations are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// UUniFast: uniform on the simplex, no per-task bound (so total ≤ the bound).
    Uunifast,
    /// UUniFast-discard: UUniFast redrawn until no task exceeds the bound.
    UunifastDiscard,
    /// RandFixedSum: uniform on the bounded simplex without rejection.
    Randfixedsum,
    /// Exponentially tilted rejection: exactly uniform on the bounded simplex, O(n)
    /// memory, for any n and total (replaces the grid-based ConvolutionalFixedSum, which
    /// was biased in the tails; `cfs` is accepted as an alias).
    Tilted,
}

/// Every method, in the order `--help` lists them.
pub const METHODS: [Method; 4] = [
    Method::Uunifast,
    Method::UunifastDiscard,
    Method::Randfixedsum,
    Method::Tilted,
];

impl Method {
    /// The name on the command line and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Method::Uunifast => "uunifast",
            Method::UunifastDiscard => "uunifast-discard",
            Method::Randfixedsum => "randfixedsum",
            Method::Tilted => "tilted",
        }
    }

    /// Parse a method name (case-insensitive; `_` for `-` accepted).
    pub fn parse(text: &str) -> Result<Method, String> {
        let t = text.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match t.as_str() {
            // Older spellings of the bounded-simplex sampler this one replaced.
            "cfs" | "convolutionalfixedsum" | "convolutional-fixed-sum" | "tilted-fixed-sum" => {
                "tilted"
            }
            "rfs" | "rand-fixed-sum" => "randfixedsum",
            other => other,
        };
        METHODS
            .iter()
            .copied()
            .find(|m| m.name() == alias)
            .ok_or_else(|| {
                format!(
                    "unknown generator `{text}` (known: {})",
                    METHODS.map(Method::name).join(", ")
                )
            })
    }
}

/// How periods are drawn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Periods {
    /// Log-uniform in `[min, max]`, rounded down to a multiple of `granularity` (0: none),
    /// drawn over `[min, max + granularity)` so that `max` is as likely as its neighbours
    /// (Emberson, Stafford & Davis 2010).
    LogUniform {
        /// Shortest period.
        min: Ns,
        /// Longest period.
        max: Ns,
        /// Periods are multiples of this (e.g. 1 ms); 0 for none.
        granularity: Ns,
    },
    /// Each period drawn uniformly from this list (e.g. a harmonic set 10, 20, 40 ms).
    Choice(Vec<Ns>),
    /// Each period drawn uniformly from the divisors of `hyperperiod` that are multiples
    /// of `granularity` (0: 1 ns) and lie in `[min, max]`, so the set's hyperperiod
    /// divides `hyperperiod` (Goossens & Macq 2001). Spelled
    /// `divisors:HYPERPERIOD[:MIN..MAX]` (see [`Periods::parse`]).
    Divisors {
        /// Every period divides this.
        hyperperiod: Ns,
        /// Shortest period.
        min: Ns,
        /// Longest period.
        max: Ns,
        /// Periods are multiples of this; 0 for none.
        granularity: Ns,
    },
}

/// How relative deadlines are set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Deadlines {
    /// Deadline = period.
    Implicit,
    /// Deadline uniform in `[C + min_ratio·(T − C), T]` (constrained, D ≤ T).
    Constrained {
        /// 0 draws deadlines down to the runtime, 1 gives implicit deadlines.
        min_ratio: f64,
    },
}

/// Everything [`generate`] needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenSpec {
    /// Workload name.
    pub name: String,
    /// Number of tasks.
    pub tasks: usize,
    /// CPUs of the platform written in the workload.
    pub cpus: usize,
    /// Total utilisation (sum of runtime/period).
    pub utilization: f64,
    /// Largest utilisation of one task (1 for a task that fits on a CPU).
    pub max_task_utilization: f64,
    /// Sampler.
    pub method: Method,
    /// Periods.
    pub periods: Periods,
    /// Deadlines.
    pub deadlines: Deadlines,
    /// Seed of the set (and of the workload's `seed:`).
    pub seed: u64,
    /// Simulated time written in the workload.
    pub duration: Ns,
    /// `scheduler:` of the workload: deadline-class policy and placement names, if any.
    pub policy: Option<String>,
    /// Placement name, if any.
    pub placement: Option<String>,
}

impl Default for GenSpec {
    fn default() -> GenSpec {
        GenSpec {
            name: "generated".into(),
            tasks: 16,
            cpus: 4,
            utilization: 2.0,
            max_task_utilization: 1.0,
            method: Method::UunifastDiscard,
            periods: Periods::LogUniform {
                min: 10_000_000,
                max: 1_000_000_000,
                granularity: 1_000_000,
            },
            deadlines: Deadlines::Implicit,
            seed: 1,
            duration: 1_000_000_000,
            policy: None,
            placement: None,
        }
    }
}

/// One generated task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenTask {
    /// Name (`t1`, `t2`, ...).
    pub name: String,
    /// Drawn utilisation (before rounding the runtime to whole ns).
    pub utilization: f64,
    /// Worst-case execution time, ns (≥ 1).
    pub runtime: Ns,
    /// Period, ns.
    pub period: Ns,
    /// Relative deadline, ns.
    pub deadline: Ns,
}

/// A generated task set with the spec that made it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSet {
    /// The spec.
    pub spec: GenSpec,
    /// The tasks, in generation order.
    pub tasks: Vec<GenTask>,
}

/// UUniFast-discard draws before giving up.
pub const DISCARD_TRIES: usize = 10_000;

impl GenSpec {
    /// Check the spec; the message names the field and the problem. A spec that passes
    /// can be met exactly: every task fits its bound and at least 1 ns, and the total
    /// fits the tasks' bounds.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.chars().any(char::is_control) {
            return Err(format!(
                "name {}: a control character is not allowed in a workload name",
                json_str(&self.name)
            ));
        }
        let u = self.utilization;
        if !u.is_finite() {
            return Err(format!("utilization {u} is not a number"));
        }
        if u < 0.0 {
            return Err(format!("utilization {u} is negative"));
        }
        if u == 0.0 {
            return Err(
                "utilization 0: every task runs at least 1 ns, so the total must be above 0".into(),
            );
        }
        if self.tasks == 0 {
            return Err("tasks must be at least 1".into());
        }
        let max_tasks = schedlab_model::limits::MAX_TASKS as usize;
        if self.tasks > max_tasks {
            return Err(format!("tasks {} is more than {max_tasks}", self.tasks));
        }
        if self.cpus == 0 {
            return Err("cpus must be at least 1".into());
        }
        let max_cpus = schedlab_model::limits::MAX_CPUS as usize;
        if self.cpus > max_cpus {
            return Err(format!("cpus {} is more than {max_cpus}", self.cpus));
        }
        let b = self.max_task_utilization;
        if !(b.is_finite() && b > 0.0) {
            return Err(format!(
                "max_task_utilization {} must be a positive number",
                num(b)
            ));
        }
        if b > 1.0 {
            return Err(format!(
                "max_task_utilization {} is above 1: a task whose runtime exceeds its period is not a periodic task",
                num(b)
            ));
        }
        // Exactly: the f64 values as the rationals they are, not n·b rounded.
        if Dyadic::of(u) > Dyadic::of(b).times(self.tasks as u64) {
            return Err(format!(
                "utilization {} cannot be split over {} tasks of at most {b} each (at most {}); use more tasks or a larger max_task_utilization",
                num(u),
                self.tasks,
                b * self.tasks as f64
            ));
        }
        if self.method == Method::Uunifast && u > b {
            return Err(format!(
                "uunifast has no per-task bound, so utilization {u} above max_task_utilization {b} may give a task above it; use uunifast-discard, randfixedsum or tilted"
            ));
        }
        if self.method == Method::Randfixedsum && self.tasks > utilisation::RFS_MAX_TASKS {
            return Err(format!(
                "randfixedsum keeps an n×n/2 table (O(n²) memory and time), so it takes at most {} tasks, not {}; use tilted (the same uniform law, O(n) memory)",
                utilisation::RFS_MAX_TASKS,
                self.tasks
            ));
        }
        self.periods
            .validate()
            .map_err(|e| format!("periods: {e}"))?;
        if let Deadlines::Constrained { min_ratio } = self.deadlines {
            if !(0.0..=1.0).contains(&min_ratio) {
                return Err(format!(
                    "deadline ratio {min_ratio} must be between 0 and 1"
                ));
            }
        }
        if self.duration == 0 {
            return Err("duration must be longer than 0".into());
        }
        Ok(())
    }
}

/// Draw the utilisations of `spec` (no period or deadline).
pub fn draw_utilisations<R: Rng + ?Sized>(rng: &mut R, spec: &GenSpec) -> Result<Vec<f64>, String> {
    spec.validate()?;
    let (n, u, b) = (spec.tasks, spec.utilization, spec.max_task_utilization);
    if Dyadic::of(u) == Dyadic::of(b).times(n as u64) {
        // The polytope is the single point where every task is at its bound.
        return Ok(vec![b; n]);
    }
    let v = match spec.method {
        Method::Uunifast => utilisation::uunifast(rng, n, u),
        Method::UunifastDiscard => utilisation::uunifast_discard(rng, n, u, b, DISCARD_TRIES)
            .ok_or_else(|| {
                format!(
                    "uunifast-discard: none of {DISCARD_TRIES} draws of {n} tasks summing to {u} kept every task at or below {b}; use tilted (or randfixedsum, up to {} tasks)",
                    utilisation::RFS_MAX_TASKS
                )
            })?,
        Method::Randfixedsum => utilisation::rand_fixed_sum(rng, n, u, b),
        Method::Tilted => utilisation::tilted_fixed_sum(rng, &vec![b; n], u).ok_or_else(|| {
            format!(
                "tilted: none of {} proposals of {n} tasks summing to {u} was accepted",
                utilisation::TILTED_TRIES
            )
        })?,
    };
    Ok(v)
}

/// `t1`, `t2`, ...: the name of the generated task `i` (from 0). Written by `itoa`: through
/// `format!` a sweep cell's 16 names cost about 9,000 instructions, more than several of
/// its schedulability tests.
fn task_name(i: usize) -> String {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(i as u64 + 1);
    let mut name = String::with_capacity(1 + digits.len());
    name.push('t');
    name.push_str(digits);
    name
}

/// Draw one task set from `spec` (its own seed).
pub fn generate(spec: &GenSpec) -> Result<TaskSet, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    generate_with(&mut rng, spec)
}

/// Draw one task set from `spec` with the caller's generator: utilisations, then the
/// periods, then the runtimes rounded to whole nanoseconds (exactly: never above the
/// target or a task's bound, see `rounding`), then the deadlines.
pub fn generate_with<R: Rng + ?Sized>(rng: &mut R, spec: &GenSpec) -> Result<TaskSet, String> {
    let utils = draw_utilisations(rng, spec)?;
    let draw = spec.periods.sampler()?;
    let periods: Vec<Ns> = utils.iter().map(|_| draw.draw(rng)).collect();
    let runtimes = rounding::runtimes(
        &utils,
        &periods,
        spec.max_task_utilization,
        spec.utilization,
    )?;
    let mut tasks = Vec::with_capacity(utils.len());
    for (i, ((&u, &period), &runtime)) in utils.iter().zip(&periods).zip(&runtimes).enumerate() {
        let deadline = match spec.deadlines {
            Deadlines::Implicit => period,
            Deadlines::Constrained { min_ratio } => {
                let lo = runtime as f64 + min_ratio * (period - runtime) as f64;
                let d = lo + rng.random::<f64>() * (period as f64 - lo);
                (d.round() as Ns).clamp(runtime, period)
            }
        };
        tasks.push(GenTask {
            name: task_name(i),
            utilization: u,
            runtime,
            period,
            deadline,
        });
    }
    Ok(TaskSet {
        spec: spec.clone(),
        tasks,
    })
}

impl TaskSet {
    /// The tasks as the schedulability tests take them (runtime, period, deadline as
    /// generated; the same numbers the written file holds).
    pub fn rt_tasks(&self) -> Vec<crate::RtTask> {
        self.tasks
            .iter()
            .map(|t| crate::RtTask::new(&t.name, t.runtime, t.period, t.deadline))
            .collect()
    }

    /// The workload spec that [`TaskSet::to_json`]'s text reads back as, built without
    /// the text (a sweep cell's workload, at a fraction of the cost of writing and
    /// parsing it). `None` when the text path must decide: a `scheduler:` block
    /// (`policy` or `placement` set), or a time the reader would refuse (above the
    /// model's limit), so that the message is the reader's own.
    pub fn to_spec(&self) -> Option<WorkloadSpec> {
        let s = &self.spec;
        if s.policy.is_some() || s.placement.is_some() {
            return None;
        }
        // The text holds each time as `format_ns` writes it, which `parse_duration` reads
        // back exactly when it is within the limit.
        let dur = |ns: Ns| check_time(ns).ok().map(Dur);
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            tasks.push(TaskSpec {
                name: Some(t.name.clone()),
                runtime: Some(dur(t.runtime)?),
                period: Some(dur(t.period)?),
                deadline: if t.deadline != t.period {
                    Some(dur(t.deadline)?)
                } else {
                    None
                },
                ..TaskSpec::default()
            });
        }
        Some(WorkloadSpec {
            name: Some(s.name.clone()),
            platform: Some(PlatformSpec {
                cpus: Some(s.cpus as u64),
                ..PlatformSpec::default()
            }),
            duration: Some(SimDur(SimDuration::Fixed(check_time(s.duration).ok()?))),
            seed: Some(s.seed),
            tasks,
            ..WorkloadSpec::default()
        })
    }

    /// What [`Workload::from_spec`] builds from [`TaskSet::to_spec`] with the overrides
    /// that built `template` from another set's spec of the same CPUs and duration, made
    /// without the spec ([`Workload::with_periodic_tasks`]: `template`'s platform and
    /// scheduler, this set's tasks). `None` when `to_spec` is, when the CPUs or duration
    /// differ from `template`'s, or when `from_spec` might refuse the set: the caller then
    /// takes the spec's path.
    pub fn to_workload(&self, template: &Workload) -> Option<Workload> {
        let tasks = self.periodic_tasks(template)?;
        template.with_periodic_tasks(&self.spec.name, self.spec.seed, &tasks)
    }

    /// [`TaskSet::to_workload`] with the tasks' names moved into the workload instead of
    /// copied (a sweep cell's last use of its set: 16 allocations and frees less). The
    /// names are taken only when the workload is made: on `None` the set is untouched,
    /// for the caller's spec path.
    pub fn take_workload(&mut self, template: &Workload) -> Option<Workload> {
        if !template.periodic_tasks_fit(&self.periodic_tasks(template)?) {
            return None;
        }
        let tasks = self
            .tasks
            .iter_mut()
            .map(|t| (std::mem::take(&mut t.name), t.runtime, t.period, t.deadline));
        Some(template.with_fitting_periodic_tasks(&self.spec.name, self.spec.seed, tasks))
    }

    /// The tasks as [`Workload::with_periodic_tasks`] takes them, or `None` when
    /// [`TaskSet::to_workload`] must be: `to_spec`'s path would differ (a policy or
    /// placement, other CPUs or duration than `template`'s, a time the text reader
    /// refuses).
    fn periodic_tasks(&self, template: &Workload) -> Option<Vec<PeriodicTask<'_>>> {
        let s = &self.spec;
        if s.policy.is_some()
            || s.placement.is_some()
            || template.platform.cpus != s.cpus
            || template.duration != s.duration
            || check_time(s.duration).is_err()
        {
            return None;
        }
        // `to_spec`'s times: each within the limit the text reader holds.
        let ok = |ns: Ns| check_time(ns).is_ok();
        let mut tasks: Vec<PeriodicTask<'_>> = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            if !(ok(t.runtime) && ok(t.period) && ok(t.deadline)) {
                return None;
            }
            tasks.push((&t.name, t.runtime, t.period, t.deadline));
        }
        Some(tasks)
    }

    fn scheduler_json(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(p) = &self.spec.policy {
            parts.push(format!("\"deadline\": {}", json_str(p)));
        }
        if let Some(p) = &self.spec.placement {
            parts.push(format!("\"placement\": {}", json_str(p)));
        }
        (!parts.is_empty()).then(|| format!("{{{}}}", parts.join(", ")))
    }

    /// The set as a YAML workload file, one task a line. Runtimes are whole nanoseconds:
    /// the file's total utilisation is at most the spec's and less than one nanosecond
    /// per task below it, and no task is above its bound.
    pub fn to_yaml(&self) -> String {
        let s = &self.spec;
        let mut y = String::with_capacity(80 * (self.tasks.len() + 8));
        let _ = writeln!(
            y,
            "# {} tasks, utilization {} ({}, seed {}); schedlab generate",
            s.tasks,
            s.utilization,
            s.method.name(),
            s.seed
        );
        let _ = writeln!(y, "name: {}", json_str(&s.name));
        let _ = writeln!(y, "platform: {{ cpus: {} }}", s.cpus);
        let _ = writeln!(y, "duration: {}", format_ns(s.duration));
        let _ = writeln!(y, "seed: {}", s.seed);
        if let Some(sch) = self.scheduler_json() {
            let _ = writeln!(y, "scheduler: {sch}");
        }
        y.push_str("tasks:\n");
        for t in &self.tasks {
            let _ = write!(
                y,
                "  - {{ name: {}, runtime: {}, period: {}",
                t.name,
                format_ns(t.runtime),
                format_ns(t.period)
            );
            if t.deadline != t.period {
                let _ = write!(y, ", deadline: {}", format_ns(t.deadline));
            }
            y.push_str(" }\n");
        }
        y
    }

    /// The set as a JSON workload file (one object, one task a line).
    pub fn to_json(&self) -> String {
        let s = &self.spec;
        let mut y = String::with_capacity(80 * (self.tasks.len() + 8));
        y.push_str("{\n");
        let _ = writeln!(y, "  \"name\": {},", json_str(&s.name));
        let _ = writeln!(y, "  \"platform\": {{\"cpus\": {}}},", s.cpus);
        let _ = writeln!(y, "  \"duration\": \"{}\",", format_ns(s.duration));
        let _ = writeln!(y, "  \"seed\": {},", s.seed);
        if let Some(sch) = self.scheduler_json() {
            let _ = writeln!(y, "  \"scheduler\": {sch},");
        }
        y.push_str("  \"tasks\": [\n");
        for (i, t) in self.tasks.iter().enumerate() {
            let _ = write!(
                y,
                "    {{\"name\": \"{}\", \"runtime\": \"{}\", \"period\": \"{}\"",
                t.name,
                format_ns(t.runtime),
                format_ns(t.period)
            );
            if t.deadline != t.period {
                let _ = write!(y, ", \"deadline\": \"{}\"", format_ns(t.deadline));
            }
            y.push('}');
            y.push_str(if i + 1 < self.tasks.len() {
                ",\n"
            } else {
                "\n"
            });
        }
        y.push_str("  ]\n}\n");
        y
    }

    /// The file [`TaskSet::to_json`] (`json`) or [`TaskSet::to_yaml`] writes, after
    /// reading it back with the rules of `schedlab simulate` (the workload model's
    /// parser and validation), so that a generated file is never one `simulate` refuses.
    pub fn checked_text(&self, json: bool) -> Result<String, String> {
        let (text, name) = if json {
            (self.to_json(), "generated.json")
        } else {
            (self.to_yaml(), "generated.yaml")
        };
        let back = schedlab_model::Workload::parse_str(
            &text,
            Path::new(name),
            &schedlab_model::Overrides::default(),
        )
        .map_err(|e| format!("the generated workload would be refused by simulate: {e}"))?;
        if back.tasks.len() != self.tasks.len() {
            return Err(format!(
                "the generated workload reads back with {} tasks instead of {}",
                back.tasks.len(),
                self.tasks.len()
            ));
        }
        Ok(text)
    }

    /// Sum of the drawn utilisations.
    pub fn utilisation(&self) -> f64 {
        self.tasks.iter().map(|t| t.utilization).sum()
    }
}

/// A number for a message: plain in the usual range, scientific outside it (1e300).
fn num(x: f64) -> String {
    if x == 0.0 || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A JSON string literal (also a valid YAML flow scalar).
fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_set_and_periods_on_the_grid() {
        let spec = GenSpec {
            seed: 9,
            ..GenSpec::default()
        };
        let a = generate(&spec).unwrap();
        assert_eq!(a, generate(&spec).unwrap());
        assert_ne!(
            a.tasks,
            generate(&GenSpec { seed: 10, ..spec }).unwrap().tasks
        );
        for t in &a.tasks {
            assert_eq!(t.period % 1_000_000, 0, "{t:?}");
            assert!((10_000_000..=1_000_000_000).contains(&t.period), "{t:?}");
            assert!(t.runtime >= 1 && t.runtime <= t.period);
        }
    }

    #[test]
    fn bad_specs_are_refused_with_the_field() {
        let bad = |s: GenSpec| generate(&s).unwrap_err();
        assert!(bad(GenSpec {
            utilization: -0.5,
            ..GenSpec::default()
        })
        .contains("utilization -0.5 is negative"));
        assert!(bad(GenSpec {
            utilization: 5.0,
            tasks: 4,
            ..GenSpec::default()
        })
        .contains("cannot be split over 4 tasks"));
        assert!(bad(GenSpec {
            utilization: 3.9,
            tasks: 4,
            ..GenSpec::default()
        })
        .contains("none of 10000 draws"));
        assert!(Method::parse("gauss")
            .unwrap_err()
            .contains("unknown generator `gauss`"));
        assert_eq!(Method::parse("RandFixedSum"), Ok(Method::Randfixedsum));
    }

    /// Generated tasks are named `t1`, `t2`, ... as `format!("t{}", i + 1)` writes them,
    /// one digit to twenty.
    #[test]
    fn task_names_are_t_and_the_number() {
        assert_eq!(task_name(0), "t1");
        assert_eq!(task_name(9), "t10");
        assert_eq!(task_name(99_999), "t100000");
        for i in (0..2_000).chain([usize::MAX - 1]) {
            assert_eq!(task_name(i), format!("t{}", i as u64 + 1), "{i}");
        }
    }

    /// `to_spec` is the spec `to_json`'s text reads back as (compared field by field
    /// through `Debug`, every field of the spec included), over implicit and constrained
    /// deadlines, period lists and ranges with their ns/us/ms/s spellings, and names that
    /// JSON escapes; `None` where the reader must speak (a time over the limit, a
    /// `scheduler:` block).
    #[test]
    fn to_spec_is_what_the_json_reads_back_as() {
        let read = |set: &TaskSet| {
            schedlab_model::workload::parse_spec(&set.to_json(), Path::new("g.json")).unwrap()
        };
        for seed in 0..60u64 {
            let periods = match seed % 3 {
                0 => Periods::parse("10ms..1000ms", 1_000_000).unwrap(),
                1 => Periods::parse("1us..3s", 1).unwrap(),
                _ => Periods::parse("700ns,2us,5ms,1s", 1).unwrap(),
            };
            let spec = GenSpec {
                name: format!("set \"{seed}\"/ü"),
                tasks: 2 + (seed as usize % 8),
                cpus: 1 + (seed as usize % 4),
                utilization: 0.4 + (seed % 5) as f64 * 0.3,
                periods,
                deadlines: if seed % 2 == 0 {
                    Deadlines::Implicit
                } else {
                    Deadlines::Constrained { min_ratio: 0.2 }
                },
                seed,
                duration: [1_000_000_000, 1_500_000, 7, 2_000_000_000_000][seed as usize % 4],
                ..GenSpec::default()
            };
            let set = generate(&spec).unwrap();
            let direct = set.to_spec().expect("within the limits");
            assert_eq!(format!("{direct:?}"), format!("{:?}", read(&set)));
        }
        let mut set = generate(&GenSpec::default()).unwrap();
        set.spec.duration = schedlab_model::limits::MAX_TIME_NS + 1;
        assert!(set.to_spec().is_none());
        set.spec.duration = 1;
        set.spec.policy = Some("edf".into());
        assert!(set.to_spec().is_none());
    }
}
