//! Sweep cells: generate a task set, analyse it and simulate it under each policy, in one
//! call for many cells so that the per-cell overhead is a few microseconds.
//!
//! A cell is one (utilisation, sample) point of a sweep grid; its task set's seed is
//! derived from the sweep's seed, the utilisation and the sample number only, so a cell
//! gives the same numbers whichever batch, worker or machine runs it.

use schedlab_analysis::{
    analyze_outcomes, from_workload_unnamed, generate, Deadlines, GenSpec, Method, Periods,
    TaskSet, TESTS,
};
use schedlab_model::spec::WorkloadSpec;
use schedlab_model::{
    parse_duration, parse_sim_duration, Overrides, Placement, Policy, SimDuration, Workload,
};
use schedlab_sim::{engine_for_owned, SimError, SimOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::path::Path;

/// The grid's fixed parameters and one cell's coordinates.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// CPUs.
    pub cpus: usize,
    /// Tasks per set.
    pub tasks: usize,
    /// Total utilisation.
    pub utilization: f64,
    /// Sample number within the utilisation.
    pub sample: u64,
    /// The sweep's seed.
    pub seed: u64,
    /// Simulated time, e.g. `1s`, `hyperperiod` or `hyperperiod<=20s`.
    pub duration: String,
    /// Generator.
    #[serde(default = "default_method")]
    pub method: String,
    /// Periods: `MIN..MAX` (log-uniform), `P,P,...`, or `divisors:H[:MIN..MAX]` (divisors of
    /// `H`, so the set's hyperperiod divides `H`).
    #[serde(default = "default_periods")]
    pub periods: String,
    /// Granularity of a period range.
    #[serde(default = "default_granularity")]
    pub granularity: String,
    /// Largest utilisation of one task (the generator's per-task bound).
    #[serde(default = "one")]
    pub max_task_utilization: f64,
    /// Constrained deadlines: each drawn in `[C + r(T - C), T]` with this `r`; None:
    /// implicit deadlines.
    #[serde(default)]
    pub deadline_min_ratio: Option<f64>,
    /// A `scheduler:` block merged into every generated workload (before the model
    /// validates it).
    #[serde(default)]
    pub scheduler: Option<Value>,
    /// A `platform:` block merged likewise.
    #[serde(default)]
    pub platform: Option<Value>,
    /// Every generated task's execution-time model, relative to its runtime: `wcet`,
    /// `{uniform: [a, b]}` or `{normal: [mean, stddev]}` (fractions of the runtime).
    #[serde(default)]
    pub exec: Option<Value>,
    /// Policies, each `POLICY` (global placement), `POLICY@PLACEMENT`, or an entry with
    /// its own label and scheduler options.
    pub policies: Vec<PolicyEntry>,
    /// Run the schedulability tests too (their columns are empty without).
    #[serde(default = "yes")]
    pub analysis: bool,
}

/// One policy of a grid: `edf@partitioned`, or `{policy, placement, label, scheduler}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PolicyEntry {
    /// `POLICY` or `POLICY@PLACEMENT`; the text is its label.
    Name(String),
    /// A policy with options.
    Options(PolicyOptions),
}

/// A policy entry with options.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyOptions {
    /// Policy name (`edf`, `illf`...), or `POLICY@PLACEMENT`.
    pub policy: String,
    /// Placement (`global` by default).
    #[serde(default)]
    pub placement: Option<String>,
    /// The `policy` column's value (default: `POLICY@PLACEMENT`, or `POLICY` when global).
    #[serde(default)]
    pub label: Option<String>,
    /// A `scheduler:` block merged over the grid's for this policy only.
    #[serde(default)]
    pub scheduler: Option<Value>,
    /// A `platform:` block merged over the grid's for this policy only (e.g. overheads).
    #[serde(default)]
    pub platform: Option<Value>,
}

impl PolicyEntry {
    /// The label (the `policy` column), the policy and its placement.
    pub fn resolve(&self) -> Result<(String, Policy, Placement), String> {
        match self {
            PolicyEntry::Name(t) => {
                let (p, pl) = parse_policy(t)?;
                Ok((t.clone(), p, pl))
            }
            PolicyEntry::Options(o) => {
                let text = match &o.placement {
                    Some(pl) if !o.policy.contains('@') => format!("{}@{pl}", o.policy),
                    Some(_) => {
                        return Err(format!(
                            "policy `{}`: give the placement once (in `policy` or `placement`)",
                            o.policy
                        ))
                    }
                    None => o.policy.clone(),
                };
                let (p, pl) = parse_policy(&text)?;
                Ok((o.label.clone().unwrap_or(text), p, pl))
            }
        }
    }

    fn scheduler(&self) -> Option<&Value> {
        match self {
            PolicyEntry::Name(_) => None,
            PolicyEntry::Options(o) => o.scheduler.as_ref(),
        }
    }

    fn platform(&self) -> Option<&Value> {
        match self {
            PolicyEntry::Name(_) => None,
            PolicyEntry::Options(o) => o.platform.as_ref(),
        }
    }
}

fn one() -> f64 {
    1.0
}

/// Merge `over` into `base`: mappings key by key (recursively), anything else replaced.
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// The generated workload's JSON with the grid's `platform:` and `scheduler:` blocks and
/// the policy's own `scheduler:` merged in.
fn workload_json(generated: &str, c: &Cell, entry: &PolicyEntry) -> Result<String, String> {
    let mut w = cell_value(generated, c)?;
    merge_entry(&mut w, entry);
    serde_json::to_string(&w).map_err(|e| e.to_string())
}

/// The generated workload as a JSON value with what the grid adds to every policy: the
/// `hyperperiod` duration, the grid's `platform:` and `scheduler:` blocks, and `exec`.
fn cell_value(generated: &str, c: &Cell) -> Result<Value, String> {
    let mut w: Value =
        serde_json::from_str(generated).map_err(|e| format!("generated workload: {e}"))?;
    let Value::Object(top) = &mut w else {
        return Err("generated workload is not a mapping".into());
    };
    if let SimDuration::Hyperperiod { .. } = sim_duration(c)? {
        top.insert(
            "duration".into(),
            Value::String(c.duration.trim().to_string()),
        );
    }
    for (key, block) in [
        ("platform", c.platform.as_ref()),
        ("scheduler", c.scheduler.as_ref()),
    ] {
        if let Some(b) = block {
            merge(top.entry(key).or_insert(Value::Object(Map::new())), b);
        }
    }
    if let Some(exec) = &c.exec {
        if let Some(Value::Array(tasks)) = top.get_mut("tasks") {
            for t in tasks {
                let runtime = t
                    .get("runtime")
                    .and_then(Value::as_str)
                    .ok_or("generated workload: a task without a runtime")?;
                let runtime = parse_duration(runtime)?;
                t["exec"] = scaled_exec(exec, runtime)?;
            }
        }
    }
    Ok(w)
}

/// A policy entry's own `platform:` and `scheduler:` blocks merged over the cell's (the
/// grid's blocks are merged first, key by key, so the entry's win).
fn merge_entry(w: &mut Value, entry: &PolicyEntry) {
    let Value::Object(top) = w else { return };
    for (key, block) in [
        ("platform", entry.platform()),
        ("scheduler", entry.scheduler()),
    ] {
        if let Some(b) = block {
            merge(top.entry(key).or_insert(Value::Object(Map::new())), b);
        }
    }
}

/// A grid's `exec` (fractions of the runtime) as one task's `exec:` (durations in ns):
/// `{uniform: [a, b]}` → `[a·C, b·C]`, `{normal: [m, s]}` → `[m·C, s·C]`, each rounded to
/// the nanosecond (the mean and the bounds at least 1 ns).
fn scaled_exec(exec: &Value, runtime: u64) -> Result<Value, String> {
    let bad = || {
        format!(
            "exec: give `wcet`, {{uniform: [a, b]}} or {{normal: [mean, stddev]}} as fractions of the runtime, not {exec}"
        )
    };
    if exec.as_str() == Some("wcet") {
        return Ok(Value::String("wcet".into()));
    }
    let Some(m) = exec.as_object().filter(|m| m.len() == 1) else {
        return Err(bad());
    };
    let (model, v) = m.iter().next().ok_or_else(bad)?;
    let pair: Vec<f64> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let [x, y] = pair[..] else {
        return Err(bad());
    };
    let ns = |f: f64, floor: u64| format!("{}ns", ((f * runtime as f64).round() as u64).max(floor));
    match model.as_str() {
        "uniform" if 0.0 < x && x <= y && y <= 1.0 => {
            Ok(serde_json::json!({ "uniform": [ns(x, 1), ns(y, 1)] }))
        }
        "normal" if 0.0 < x && x <= 1.0 && y >= 0.0 && y.is_finite() => {
            Ok(serde_json::json!({ "normal": [ns(x, 1), ns(y, 0)] }))
        }
        _ => Err(bad()),
    }
}

fn yes() -> bool {
    true
}

fn default_method() -> String {
    "uunifast-discard".into()
}
fn default_periods() -> String {
    "10ms..1000ms".into()
}
fn default_granularity() -> String {
    "1ms".into()
}

/// A batch of cells as JSON text: a list of cells, or `{"cell": CELL, "points": [[U, S],
/// ...]}`, the cells that differ from `CELL` only in their utilisation and sample (what
/// `schedlab.sweep` sends for the cells of one axis combination: the grid once, not once
/// a cell). Kept as sent and run without a cell cloned per point (seven allocations and
/// frees a cell: the texts and the policies).
pub enum Batch {
    /// One cell and the (utilisation, sample) points that differ from it only there
    /// (boxed: a cell is large, a list of cells is not).
    Points(Box<Cell>, Vec<(f64, u64)>),
    /// Cells given one by one.
    Cells(Vec<Cell>),
}

impl Batch {
    /// Read a batch in either form.
    pub fn parse(text: &str) -> Result<Batch, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Shared {
            cell: Cell,
            points: Vec<(f64, u64)>,
        }
        let bad = |e: serde_json::Error| format!("sweep cells: {e}");
        if text.trim_start().starts_with('{') {
            let Shared { cell, points } = serde_json::from_str(text).map_err(bad)?;
            Ok(Batch::Points(Box::new(cell), points))
        } else {
            serde_json::from_str(text).map(Batch::Cells).map_err(bad)
        }
    }

    /// Every cell's rows in order ([`run_cell_in`] with one [`Templates`]); a shared
    /// cell is given each point's utilisation and sample in turn.
    pub fn rows(self) -> Result<Vec<Row>, String> {
        let mut templates = Templates::default();
        match self {
            Batch::Points(mut cell, points) => {
                let mut rows = Vec::with_capacity(points.len() * cell.policies.len());
                for (utilization, sample) in points {
                    (cell.utilization, cell.sample) = (utilization, sample);
                    rows.extend(run_cell_in(&cell, &mut templates)?);
                }
                Ok(rows)
            }
            Batch::Cells(cells) => {
                let mut rows = Vec::with_capacity(cells.len() * 4);
                for c in &cells {
                    rows.extend(run_cell_in(c, &mut templates)?);
                }
                Ok(rows)
            }
        }
    }
}

/// One (cell, policy) result.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Total utilisation.
    pub utilization: f64,
    /// Policy as given (`edf`, `edf@partitioned`).
    pub policy: String,
    /// Sample number.
    pub sample: u64,
    /// The task set's seed.
    pub set_seed: u64,
    /// `status == "schedulable"`.
    pub schedulable: bool,
    /// `schedulable`: no miss over a complete horizon (the feasibility interval);
    /// `unschedulable`: a miss, or no partition; `undecided`: no miss, horizon incomplete.
    pub status: &'static str,
    /// Simulated time (None when not simulated).
    pub horizon_ns: Option<u64>,
    /// The run covered the set's feasibility interval (None when not simulated).
    pub horizon_complete: Option<bool>,
    /// Deadline misses (None when the tasks could not be partitioned).
    pub deadline_misses: Option<u64>,
    /// context switches / CPUs / simulated seconds (None when not simulated).
    pub context_switches_per_cpu_per_s: Option<f64>,
    /// Preemptions.
    pub preemptions: Option<u64>,
    /// Migrations.
    pub migrations: Option<u64>,
    /// Scheduling decisions the engine took (`scheduler_invocations`).
    pub scheduler_invocations: Option<u64>,
    /// Engine events.
    pub events: Option<u64>,
    /// Each test's verdict: accepted (true), not (false), not applicable (None).
    pub analysis: Vec<(&'static str, Option<bool>)>,
}

/// One column of the rows, typed: [`columns`] writes it as JSON, and the Python module
/// hands it over as a list.
pub enum Column<'a> {
    /// Floats.
    F64(Vec<f64>),
    /// Floats or missing (JSON writes a non-finite float as null too).
    OptF64(Vec<Option<f64>>),
    /// Integers.
    U64(Vec<u64>),
    /// Integers or missing.
    OptU64(Vec<Option<u64>>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Booleans or missing.
    OptBool(Vec<Option<bool>>),
    /// Strings.
    Str(Vec<&'a str>),
}

/// Rows as named columns, in the order the sweep's DataFrame has them: each field of
/// [`Row`] as one list, then `analysis_<test>` for each test (None where a row has no
/// verdict of that test).
pub fn column_list(rows: &[Row]) -> Vec<(String, Column<'_>)> {
    fn col<'a, T>(rows: &'a [Row], f: impl Fn(&'a Row) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    use Column::*;
    let mut out = vec![
        ("utilization".into(), F64(col(rows, |r| r.utilization))),
        ("policy".into(), Str(col(rows, |r| r.policy.as_str()))),
        ("sample".into(), U64(col(rows, |r| r.sample))),
        ("set_seed".into(), U64(col(rows, |r| r.set_seed))),
        ("schedulable".into(), Bool(col(rows, |r| r.schedulable))),
        ("status".into(), Str(col(rows, |r| r.status))),
        ("horizon_ns".into(), OptU64(col(rows, |r| r.horizon_ns))),
        (
            "horizon_complete".into(),
            OptBool(col(rows, |r| r.horizon_complete)),
        ),
        (
            "deadline_misses".into(),
            OptU64(col(rows, |r| r.deadline_misses)),
        ),
        (
            "context_switches_per_cpu_per_s".into(),
            OptF64(col(rows, |r| r.context_switches_per_cpu_per_s)),
        ),
        ("preemptions".into(), OptU64(col(rows, |r| r.preemptions))),
        ("migrations".into(), OptU64(col(rows, |r| r.migrations))),
        (
            "scheduler_invocations".into(),
            OptU64(col(rows, |r| r.scheduler_invocations)),
        ),
        ("events".into(), OptU64(col(rows, |r| r.events))),
    ];
    for (k, test) in TESTS.iter().enumerate() {
        let verdict = |r: &Row| match r.analysis.get(k) {
            Some((name, v)) if name == test => *v,
            _ => None,
        };
        out.push((format!("analysis_{test}"), OptBool(col(rows, verdict))));
    }
    out
}

/// Rows as columns in JSON (what the Python side turns into a DataFrame without a loop
/// per row): [`column_list`].
pub fn columns(rows: &[Row]) -> serde_json::Value {
    use serde_json::json;
    let m = column_list(rows)
        .into_iter()
        .map(|(name, c)| {
            let v = match c {
                Column::F64(v) => json!(v),
                Column::OptF64(v) => json!(v),
                Column::U64(v) => json!(v),
                Column::OptU64(v) => json!(v),
                Column::Bool(v) => json!(v),
                Column::OptBool(v) => json!(v),
                Column::Str(v) => json!(v),
            };
            (name, v)
        })
        .collect();
    Value::Object(m)
}

/// SplitMix64 finaliser: a well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The task set's seed of a cell: a hash of the sweep seed, the utilisation's bits and the
/// sample number, kept below 2^63 so that it is an exact int64 in pandas and Parquet.
pub fn set_seed(seed: u64, utilization: f64, sample: u64) -> u64 {
    mix(mix(mix(seed) ^ utilization.to_bits()) ^ sample) >> 1
}

/// Parse `POLICY` or `POLICY@PLACEMENT` (global by default) with the model's messages.
pub fn parse_policy(text: &str) -> Result<(Policy, Placement), String> {
    let (p, pl) = match text.split_once('@') {
        Some((p, pl)) => (p, Placement::parse(pl)?),
        None => (text, Placement::Global),
    };
    Ok((Policy::parse(p)?, pl))
}

/// The cell's simulated time: a fixed duration, or the hyperperiod up to a cap.
fn sim_duration(c: &Cell) -> Result<SimDuration, String> {
    parse_sim_duration(&c.duration).map_err(|e| format!("duration: {e}"))
}

fn spec_of(c: &Cell) -> Result<GenSpec, String> {
    Ok(spec_with(c, parsed_of(c)?))
}

/// A cell's generator settings read from their text: the fixed duration, the periods and
/// the method.
type ParsedSettings = (u64, Periods, Method);

/// The settings of `c` parsed, with `spec_of`'s messages in its order.
fn parsed_of(c: &Cell) -> Result<ParsedSettings, String> {
    // The generator writes a fixed duration; `hyperperiod` replaces it in the workload
    // (see `workload_json`), where the model works the horizon out.
    let duration = match sim_duration(c)? {
        SimDuration::Fixed(ns) => ns,
        SimDuration::Hyperperiod { cap } => cap,
    };
    let granularity = parse_duration(&c.granularity).map_err(|e| format!("granularity: {e}"))?;
    // The generator's own parser: `MIN..MAX`, `P1,P2,...` or `divisors:H[:MIN..MAX]`.
    let periods = Periods::parse(&c.periods, granularity).map_err(|e| format!("periods: {e}"))?;
    Ok((duration, periods, Method::parse(&c.method)?))
}

/// The spec of `c` with its settings parsed.
fn spec_with(c: &Cell, (duration, periods, method): ParsedSettings) -> GenSpec {
    GenSpec {
        name: format!("u{}-s{}", c.utilization, c.sample),
        tasks: c.tasks,
        cpus: c.cpus,
        utilization: c.utilization,
        method,
        periods,
        max_task_utilization: c.max_task_utilization,
        deadlines: match c.deadline_min_ratio {
            None => Deadlines::Implicit,
            Some(min_ratio) => Deadlines::Constrained { min_ratio },
        },
        seed: set_seed(c.seed, c.utilization, c.sample),
        duration,
        ..GenSpec::default()
    }
}

/// [`spec_of`], the settings' parse kept in `templates` for the batch's next cells (which
/// share the texts): parsing the duration, granularity, periods and method cost a sweep
/// cell about 4,500 instructions.
fn spec_in(c: &Cell, templates: &mut Templates) -> Result<GenSpec, String> {
    let texts = [&c.duration, &c.granularity, &c.periods, &c.method];
    let parsed = match &templates.settings {
        Some((kept, parsed)) if kept.iter().zip(texts).all(|(k, t)| k == t) => parsed.clone(),
        _ => {
            let parsed = parsed_of(c)?;
            templates.settings = Some((texts.map(String::clone), parsed.clone()));
            parsed
        }
    };
    let spec = spec_with(c, parsed);
    debug_assert_eq!(Ok(&spec), spec_of(c).as_ref());
    Ok(spec)
}

/// Check a cell's parameters without running it (so a bad grid fails before any work).
pub fn check(c: &Cell) -> Result<(), String> {
    let spec = spec_of(c)?;
    spec.validate()?;
    if c.policies.is_empty() {
        return Err("policies: name at least one policy".into());
    }
    let mut labels = std::collections::HashSet::new();
    for entry in &c.policies {
        let (label, policy, _) = entry.resolve()?;
        if !labels.insert(label.clone()) {
            return Err(format!(
                "policies: `{label}` is named twice (give each a `label`)"
            ));
        }
        if policy.class() != schedlab_model::PolicyClass::Deadline
            && policy.class() != schedlab_model::PolicyClass::Rt
        {
            return Err(format!(
                "policy `{label}` schedules fair tasks; a sweep generates periodic tasks (use edf, llf, illf, edzl, rm, dm)"
            ));
        }
    }
    // The generated workload with the grid's blocks, through the model's own validation
    // (so `platform: {hz: 250}` or a bad `scheduler:` option gets the model's message).
    let set = generate(&spec)?;
    let generated = set.to_json();
    for entry in &c.policies {
        let (label, policy, placement) = entry.resolve()?;
        let w = workload(&generated, c, entry, policy, placement)
            .map_err(|e| format!("policy `{label}`: {e}"))?;
        // The simulator's own rules (e.g. an exact laxity mode's placement), without
        // running it; a set that cannot be partitioned is a result, not a grid error.
        match schedlab_sim::engine_for(&w, &SimOptions::default()) {
            Ok(_) | Err(SimError::Partition(_)) => {}
            Err(e) => return Err(format!("policy `{label}`: {e}")),
        }
    }
    Ok(())
}

/// The cell's workload under one policy entry, validated by the model.
fn workload(
    generated: &str,
    c: &Cell,
    entry: &PolicyEntry,
    policy: Policy,
    placement: Placement,
) -> Result<Workload, String> {
    let text = workload_json(generated, c, entry)?;
    Workload::from_spec(spec_from_text(&text)?, &overrides(policy, placement))
}

/// The cell's workload under each policy entry, read once. The entries without blocks of
/// their own share one spec: built from the generated set directly ([`TaskSet::to_spec`])
/// when the grid adds nothing to it, else read from the generated set with the grid's
/// additions as one JSON value (no text in between). The JSON text and value are made
/// only when an entry or an error needs them.
struct CellWorkloads<'a> {
    /// (`&mut`: the last entry's workload takes the tasks' names.)
    set: &'a mut TaskSet,
    cell: &'a Cell,
    /// The generated set as `schedlab generate` writes it (the reference path).
    generated: OnceCell<String>,
    /// The generated set with the grid's additions.
    value: OnceCell<Result<Value, String>>,
    /// The spec of the entries without blocks (an error is only reported when one uses it:
    /// every entry might override a bad grid block).
    shared: OnceCell<Result<WorkloadSpec, String>>,
}

impl<'a> CellWorkloads<'a> {
    fn new(set: &'a mut TaskSet, cell: &'a Cell) -> Self {
        CellWorkloads {
            set,
            cell,
            generated: OnceCell::new(),
            value: OnceCell::new(),
            shared: OnceCell::new(),
        }
    }

    fn generated(&self) -> &str {
        self.generated.get_or_init(|| self.set.to_json())
    }

    fn value(&self) -> Result<&Value, String> {
        self.value
            .get_or_init(|| cell_value(self.generated(), self.cell))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the grid adds nothing to the generated set: no blocks, no `exec`, a fixed
    /// duration (then `cell_value` is the generated text as read).
    fn plain(&self) -> bool {
        let c = self.cell;
        c.platform.is_none()
            && c.scheduler.is_none()
            && c.exec.is_none()
            && matches!(sim_duration(c), Ok(SimDuration::Fixed(_)))
    }

    /// The shared spec: the generated set's own when the cell is [`CellWorkloads::plain`]
    /// (debug builds check that the two specs agree).
    fn shared(&self) -> Result<WorkloadSpec, String> {
        self.shared
            .get_or_init(|| {
                if let Some(spec) = self.plain().then(|| self.set.to_spec()).flatten() {
                    debug_assert_eq!(
                        format!("{spec:?}"),
                        format!(
                            "{:?}",
                            WorkloadSpec::deserialize(self.value().expect("plain cell"))
                                .expect("the generated text reads back")
                        )
                    );
                    return Ok(spec);
                }
                WorkloadSpec::deserialize(self.value()?).map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The workload under `entry`, validated by the model as [`workload`] does; any
    /// error is [`workload`]'s own, so a message never depends on this shortcut. For an
    /// entry without blocks in a plain cell, the batch's earlier workload of the same
    /// CPUs, duration, policy and placement (`templates`) lends its platform and scheduler
    /// to this set's tasks ([`TaskSet::to_workload`]; for the `last` entry
    /// [`TaskSet::take_workload`], the names moved: nothing reads them after); debug
    /// builds check the result against the spec's path.
    fn get(
        &mut self,
        entry: &PolicyEntry,
        policy: Policy,
        placement: Placement,
        templates: &mut Templates,
        last: bool,
    ) -> Result<Workload, String> {
        let plain_entry = entry.platform().is_none() && entry.scheduler().is_none();
        let key = (plain_entry && self.plain()).then_some((
            self.cell.cpus,
            self.set.spec.duration,
            policy,
            placement,
        ));
        if let Some(t) = key.and_then(|key| templates.find(key)) {
            // The spec's path, while the set still has its names.
            #[cfg(debug_assertions)]
            let expected = self
                .shared()
                .and_then(|spec| Workload::from_spec(spec, &overrides(policy, placement)));
            let w = if last {
                self.set.take_workload(t)
            } else {
                self.set.to_workload(t)
            };
            if let Some(w) = w {
                #[cfg(debug_assertions)]
                debug_assert_eq!(Ok(&w), expected.as_ref());
                return Ok(w);
            }
        }
        let w = self.get_by_spec(entry, policy, placement)?;
        if let Some(key) = key {
            templates.keep(key, &w);
        }
        Ok(w)
    }

    /// [`CellWorkloads::get`] through the spec.
    fn get_by_spec(
        &self,
        entry: &PolicyEntry,
        policy: Policy,
        placement: Placement,
    ) -> Result<Workload, String> {
        let spec = if entry.platform().is_none() && entry.scheduler().is_none() {
            self.shared()
        } else {
            self.value().and_then(|v| {
                let mut v = v.clone();
                merge_entry(&mut v, entry);
                WorkloadSpec::deserialize(&v).map_err(|e| e.to_string())
            })
        };
        spec.and_then(|spec| Workload::from_spec(spec, &overrides(policy, placement)))
            .or_else(|_| workload(self.generated(), self.cell, entry, policy, placement))
    }
}

/// What identifies a template: CPUs, the fixed duration, policy and placement.
type TemplateKey = (usize, u64, Policy, Placement);

/// The workloads of a batch's earlier plain cells (at most one per [`TemplateKey`], their
/// tasks dropped): the platform and scheduler a later cell's set is put on without
/// reading a spec. Kept for one batch.
///
/// Also the last cell's parsed generator settings, under their texts.
#[derive(Default)]
pub struct Templates {
    workloads: Vec<(TemplateKey, Workload)>,
    settings: Option<([String; 4], ParsedSettings)>,
}

impl Templates {
    fn find(&self, key: TemplateKey) -> Option<&Workload> {
        self.workloads
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, w)| w)
    }

    fn keep(&mut self, key: TemplateKey, w: &Workload) {
        if self.find(key).is_none() {
            self.workloads.push((
                key,
                Workload {
                    tasks: Vec::new(),
                    platform: w.platform.clone(),
                    scheduler: w.scheduler.clone(),
                    name: String::new(),
                    ..*w
                },
            ));
        }
    }
}

/// `--policy` and `--placement` as overrides.
fn overrides(policy: Policy, placement: Placement) -> Overrides {
    Overrides {
        policy: Some(policy),
        placement: Some(placement),
        ..Overrides::default()
    }
}

/// A workload's text parsed as `simulate` parses a file (the limits, the field's path in
/// a message).
fn spec_from_text(text: &str) -> Result<WorkloadSpec, String> {
    schedlab_model::workload::parse_spec(text, Path::new("sweep-cell.json"))
        .map_err(|e| e.to_string())
}

/// Run one cell: one row per policy. The set is generated and analysed once; each policy
/// gets its own validated workload and simulation.
pub fn run_cell(c: &Cell) -> Result<Vec<Row>, String> {
    run_cell_in(c, &mut Templates::default())
}

/// [`run_cell`] with the batch's [`Templates`] (the same rows; a batch's later cells
/// skip their workload spec).
pub fn run_cell_in(c: &Cell, templates: &mut Templates) -> Result<Vec<Row>, String> {
    let spec = spec_in(c, templates)?;
    let mut set = generate(&spec)?;
    let mut cell = CellWorkloads::new(&mut set, c);
    let mut rows = Vec::with_capacity(c.policies.len());
    let mut analysis: Option<Vec<(&'static str, Option<bool>)>> = None;
    for (i, entry) in c.policies.iter().enumerate() {
        let (label, policy, placement) = entry.resolve()?;
        // The grid's blocks merged, then validated as `simulate` with `--policy` and
        // `--placement` does.
        let last = i + 1 == c.policies.len();
        let w = cell.get(entry, policy, placement, templates, last)?;
        if analysis.is_none() && c.analysis {
            // The rows keep each test's outcome, not its reason: the tasks need no names
            // (debug builds check the outcomes against the named tasks').
            let ts = from_workload_unnamed(&w)?;
            let outcomes = analyze_outcomes(&ts, c.cpus);
            debug_assert_eq!(
                schedlab_analysis::from_workload(&w).map(|ts| analyze_outcomes(&ts, c.cpus)),
                Ok(outcomes.clone())
            );
            debug_assert_eq!(outcomes.len(), TESTS.len());
            analysis = Some(outcomes);
        }
        let base = Row {
            utilization: c.utilization,
            policy: label,
            sample: c.sample,
            set_seed: spec.seed,
            schedulable: false,
            status: "unschedulable",
            horizon_ns: None,
            horizon_complete: None,
            deadline_misses: None,
            context_switches_per_cpu_per_s: None,
            preemptions: None,
            migrations: None,
            scheduler_invocations: None,
            events: None,
            analysis: analysis.clone().unwrap_or_default(),
        };
        // The run's eight numbers only (`run_summary`: the same schedule and figures as
        // `simulate`'s result, without its per-task and per-CPU parts).
        // The workload is not needed after: its names move into the engine.
        match engine_for_owned(w, &SimOptions::default()).map(|e| e.run_summary()) {
            Ok(r) => rows.push(Row {
                status: status(r.deadline_misses, r.horizon_complete),
                schedulable: status(r.deadline_misses, r.horizon_complete) == "schedulable",
                horizon_ns: Some(r.duration_ns),
                horizon_complete: Some(r.horizon_complete),
                deadline_misses: Some(r.deadline_misses),
                context_switches_per_cpu_per_s: Some(r.context_switches_per_cpu_per_s),
                preemptions: Some(r.preemptions),
                migrations: Some(r.migrations),
                scheduler_invocations: Some(r.scheduler_invocations),
                events: Some(r.events),
                ..base
            }),
            // Tasks that first-fit cannot place: the set is not schedulable that way.
            Err(SimError::Partition(_)) => rows.push(base),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(rows)
}

/// A simulated cell's verdict: a miss decides `unschedulable`; no miss decides
/// `schedulable` only over a complete horizon, and is `undecided` otherwise.
pub fn status(misses: u64, horizon_complete: bool) -> &'static str {
    match (misses, horizon_complete) {
        (0, true) => "schedulable",
        (0, false) => "undecided",
        _ => "unschedulable",
    }
}
