//! Random periodic task sets, written in the workload format.
//!
//! A [`GenSpec`] says how many tasks, their total utilisation, the sampler, the periods and
//! the deadlines; [`generate`] draws one [`TaskSet`] from a seed (ChaCha8, so the same
//! seed gives the same set everywhere), and [`TaskSet::to_yaml`] / [`TaskSet::to_json`]
//! write it as a workload file that `schedlab simulate` reads.

use crate::utilisation;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::{format_ns, Ns};
use serde::Serialize;
use std::fmt::Write as _;

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
    /// ConvolutionalFixedSum (numeric): uniform on the bounded simplex, per-task bounds.
    Cfs,
}

/// Every method, in the order `--help` lists them.
pub const METHODS: [Method; 4] = [
    Method::Uunifast,
    Method::UunifastDiscard,
    Method::Randfixedsum,
    Method::Cfs,
];

impl Method {
    /// The name on the command line and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Method::Uunifast => "uunifast",
            Method::UunifastDiscard => "uunifast-discard",
            Method::Randfixedsum => "randfixedsum",
            Method::Cfs => "cfs",
        }
    }

    /// Parse a method name (case-insensitive; `_` for `-` accepted).
    pub fn parse(text: &str) -> Result<Method, String> {
        let t = text.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match t.as_str() {
            "convolutionalfixedsum" | "convolutional-fixed-sum" => "cfs",
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
    /// Check the spec; the message names the field and the problem.
    pub fn validate(&self) -> Result<(), String> {
        let u = self.utilization;
        if !u.is_finite() {
            return Err(format!("utilization {u} is not a number"));
        }
        if u < 0.0 {
            return Err(format!("utilization {u} is negative"));
        }
        if self.tasks == 0 {
            return Err("tasks must be at least 1".into());
        }
        if self.tasks > 100_000 {
            return Err(format!("tasks {} is more than 100000", self.tasks));
        }
        if self.cpus == 0 {
            return Err("cpus must be at least 1".into());
        }
        let b = self.max_task_utilization;
        if !(b.is_finite() && b > 0.0) {
            return Err(format!(
                "max_task_utilization {b} must be a positive number"
            ));
        }
        let room = b * self.tasks as f64;
        if u > room * (1.0 + 1e-12) {
            return Err(format!(
                "utilization {u} cannot be split over {} tasks of at most {b} each (at most {room}); use more tasks or a larger max_task_utilization",
                self.tasks
            ));
        }
        if self.method == Method::Uunifast && u > b {
            return Err(format!(
                "uunifast has no per-task bound, so utilization {u} above max_task_utilization {b} may give a task above it; use uunifast-discard, randfixedsum or cfs"
            ));
        }
        match &self.periods {
            Periods::LogUniform {
                min,
                max,
                granularity,
            } => {
                if *min == 0 || min > max {
                    return Err(format!(
                        "periods {}..{}: need 0 < min ≤ max",
                        format_ns(*min),
                        format_ns(*max)
                    ));
                }
                if *granularity > 0 && *granularity > *max {
                    return Err(format!(
                        "period granularity {} is longer than the longest period {}",
                        format_ns(*granularity),
                        format_ns(*max)
                    ));
                }
            }
            Periods::Choice(list) => {
                if list.is_empty() || list.contains(&0) {
                    return Err("the period list must hold at least one period, all > 0".into());
                }
            }
        }
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

/// Draw one period.
fn draw_period<R: Rng + ?Sized>(rng: &mut R, p: &Periods) -> Ns {
    match p {
        Periods::LogUniform {
            min,
            max,
            granularity,
        } => {
            let g = *granularity;
            let top = if g > 0 { max + g } else { *max } as f64;
            let lo = (*min as f64).ln();
            let x = (lo + rng.random::<f64>() * (top.ln() - lo)).exp();
            let t = x as Ns;
            let t = t.checked_div(g).map_or(t, |q| q * g);
            t.clamp(*min, *max).max(1)
        }
        Periods::Choice(list) => list[rng.random_range(0..list.len())],
    }
}

/// Draw the utilisations of `spec` (no period or deadline).
pub fn draw_utilisations<R: Rng + ?Sized>(rng: &mut R, spec: &GenSpec) -> Result<Vec<f64>, String> {
    spec.validate()?;
    let (n, u, b) = (spec.tasks, spec.utilization, spec.max_task_utilization);
    let v = match spec.method {
        Method::Uunifast => utilisation::uunifast(rng, n, u),
        Method::UunifastDiscard => utilisation::uunifast_discard(rng, n, u, b, DISCARD_TRIES)
            .ok_or_else(|| {
                format!(
                    "uunifast-discard: none of {DISCARD_TRIES} draws of {n} tasks summing to {u} kept every task at or below {b}; use randfixedsum or cfs"
                )
            })?,
        Method::Randfixedsum => utilisation::rand_fixed_sum(rng, n, u.min(b * n as f64), b),
        Method::Cfs => utilisation::convolutional_fixed_sum(rng, &vec![b; n], u.min(b * n as f64)),
    };
    Ok(v)
}

/// Draw one task set from `spec` (its own seed).
pub fn generate(spec: &GenSpec) -> Result<TaskSet, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    generate_with(&mut rng, spec)
}

/// Draw one task set from `spec` with the caller's generator: utilisations first, then
/// each task's period and deadline.
pub fn generate_with<R: Rng + ?Sized>(rng: &mut R, spec: &GenSpec) -> Result<TaskSet, String> {
    let utils = draw_utilisations(rng, spec)?;
    let mut tasks = Vec::with_capacity(utils.len());
    for (i, &u) in utils.iter().enumerate() {
        let period = draw_period(rng, &spec.periods);
        let runtime = ((u * period as f64).round() as Ns).clamp(1, period);
        let deadline = match spec.deadlines {
            Deadlines::Implicit => period,
            Deadlines::Constrained { min_ratio } => {
                let lo = runtime as f64 + min_ratio * (period - runtime) as f64;
                let d = lo + rng.random::<f64>() * (period as f64 - lo);
                (d.round() as Ns).clamp(runtime, period)
            }
        };
        tasks.push(GenTask {
            name: format!("t{}", i + 1),
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

    /// The set as a YAML workload file, one task a line. Runtimes are whole nanoseconds
    /// (the drawn utilisation times the period, rounded), so each task's utilisation is
    /// within 0.5 ns / period of the drawn one.
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

    /// Sum of the drawn utilisations.
    pub fn utilisation(&self) -> f64 {
        self.tasks.iter().map(|t| t.utilization).sum()
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
}
