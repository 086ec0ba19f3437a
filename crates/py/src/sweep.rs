//! Sweep cells: generate a task set, analyse it and simulate it under each policy, in one
//! call for many cells so that the per-cell overhead is a few microseconds.
//!
//! A cell is one (utilisation, sample) point of a sweep grid; its task set's seed is
//! derived from the sweep's seed, the utilisation and the sample number only, so a cell
//! gives the same numbers whichever batch, worker or machine runs it.

use schedlab_analysis::{analyze, from_workload, generate, GenSpec, Method, Periods, TESTS};
use schedlab_model::{parse_duration, Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate, SimError, SimOptions};
use serde::{Deserialize, Serialize};
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
    /// Simulated time, e.g. `1s`.
    pub duration: String,
    /// Generator.
    #[serde(default = "default_method")]
    pub method: String,
    /// Periods, `MIN..MAX` (log-uniform) or `P,P,...`.
    #[serde(default = "default_periods")]
    pub periods: String,
    /// Granularity of a period range.
    #[serde(default = "default_granularity")]
    pub granularity: String,
    /// Policies, each `POLICY` (global placement) or `POLICY@PLACEMENT`.
    pub policies: Vec<String>,
    /// Run the schedulability tests too (their columns are empty without).
    #[serde(default = "yes")]
    pub analysis: bool,
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
    /// No deadline missed (false when partitioning failed).
    pub schedulable: bool,
    /// Deadline misses (None when the tasks could not be partitioned).
    pub deadline_misses: Option<u64>,
    /// context switches / CPUs / simulated seconds (None when not simulated).
    pub context_switches_per_cpu_per_s: Option<f64>,
    /// Preemptions.
    pub preemptions: Option<u64>,
    /// Migrations.
    pub migrations: Option<u64>,
    /// Engine events.
    pub events: Option<u64>,
    /// Each test's verdict: accepted (true), not (false), not applicable (None).
    pub analysis: Vec<(String, Option<bool>)>,
}

/// Rows as columns (what the Python side turns into a DataFrame without a loop per row):
/// each field of [`Row`] as one list, and `analysis_<test>` for each test.
pub fn columns(rows: &[Row]) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let mut m = Map::new();
    m.insert(
        "utilization".into(),
        json!(rows.iter().map(|r| r.utilization).collect::<Vec<_>>()),
    );
    m.insert(
        "policy".into(),
        json!(rows.iter().map(|r| &r.policy).collect::<Vec<_>>()),
    );
    m.insert(
        "sample".into(),
        json!(rows.iter().map(|r| r.sample).collect::<Vec<_>>()),
    );
    m.insert(
        "set_seed".into(),
        json!(rows.iter().map(|r| r.set_seed).collect::<Vec<_>>()),
    );
    m.insert(
        "schedulable".into(),
        json!(rows.iter().map(|r| r.schedulable).collect::<Vec<_>>()),
    );
    m.insert(
        "deadline_misses".into(),
        json!(rows.iter().map(|r| r.deadline_misses).collect::<Vec<_>>()),
    );
    m.insert(
        "context_switches_per_cpu_per_s".into(),
        json!(rows
            .iter()
            .map(|r| r.context_switches_per_cpu_per_s)
            .collect::<Vec<_>>()),
    );
    m.insert(
        "preemptions".into(),
        json!(rows.iter().map(|r| r.preemptions).collect::<Vec<_>>()),
    );
    m.insert(
        "migrations".into(),
        json!(rows.iter().map(|r| r.migrations).collect::<Vec<_>>()),
    );
    m.insert(
        "events".into(),
        json!(rows.iter().map(|r| r.events).collect::<Vec<_>>()),
    );
    for (k, test) in TESTS.iter().enumerate() {
        let col: Vec<Value> = rows
            .iter()
            .map(|r| match r.analysis.get(k) {
                Some((name, v)) if name == test => json!(v),
                _ => Value::Null,
            })
            .collect();
        m.insert(format!("analysis_{test}"), Value::Array(col));
    }
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

fn spec_of(c: &Cell) -> Result<GenSpec, String> {
    let duration = parse_duration(&c.duration).map_err(|e| format!("duration: {e}"))?;
    let granularity = parse_duration(&c.granularity).map_err(|e| format!("granularity: {e}"))?;
    let periods = if let Some((a, b)) = c.periods.split_once("..") {
        Periods::LogUniform {
            min: parse_duration(a).map_err(|e| format!("periods: {e}"))?,
            max: parse_duration(b).map_err(|e| format!("periods: {e}"))?,
            granularity,
        }
    } else {
        Periods::Choice(
            c.periods
                .split(',')
                .map(|p| parse_duration(p).map_err(|e| format!("periods: {e}")))
                .collect::<Result<_, _>>()?,
        )
    };
    Ok(GenSpec {
        name: format!("u{}-s{}", c.utilization, c.sample),
        tasks: c.tasks,
        cpus: c.cpus,
        utilization: c.utilization,
        method: Method::parse(&c.method)?,
        periods,
        seed: set_seed(c.seed, c.utilization, c.sample),
        duration,
        ..GenSpec::default()
    })
}

/// Check a cell's parameters without running it (so a bad grid fails before any work).
pub fn check(c: &Cell) -> Result<(), String> {
    let spec = spec_of(c)?;
    spec.validate()?;
    if c.policies.is_empty() {
        return Err("policies: name at least one policy".into());
    }
    for p in &c.policies {
        let (policy, _) = parse_policy(p)?;
        if policy.class() != schedlab_model::PolicyClass::Deadline
            && policy.class() != schedlab_model::PolicyClass::Rt
        {
            return Err(format!(
                "policy `{p}` schedules fair tasks; a sweep generates periodic tasks (use edf, llf, illf, edzl, rm, dm)"
            ));
        }
    }
    Ok(())
}

/// Run one cell: one row per policy.
pub fn run_cell(c: &Cell) -> Result<Vec<Row>, String> {
    let spec = spec_of(c)?;
    let set = generate(&spec)?;
    // Parsed once (JSON: the faster reader), validated once per policy, as `simulate`
    // with `--policy` and `--placement` does.
    let parsed = schedlab_model::workload::parse_spec(&set.to_json(), Path::new("sweep-cell.json"))
        .map_err(|e| e.to_string())?;
    let mut rows = Vec::with_capacity(c.policies.len());
    let mut analysis: Option<Vec<(String, Option<bool>)>> = None;
    for p in &c.policies {
        let (policy, placement) = parse_policy(p)?;
        let ov = Overrides {
            policy: Some(policy),
            placement: Some(placement),
            ..Overrides::default()
        };
        let w = Workload::from_spec(parsed.clone(), &ov)?;
        if analysis.is_none() && c.analysis {
            let ts = from_workload(&w)?;
            let verdicts = analyze(&ts, c.cpus);
            debug_assert_eq!(verdicts.len(), TESTS.len());
            analysis = Some(
                verdicts
                    .iter()
                    .map(|v| (v.test.to_string(), v.outcome.accepted()))
                    .collect(),
            );
        }
        let base = Row {
            utilization: c.utilization,
            policy: p.clone(),
            sample: c.sample,
            set_seed: spec.seed,
            schedulable: false,
            deadline_misses: None,
            context_switches_per_cpu_per_s: None,
            preemptions: None,
            migrations: None,
            events: None,
            analysis: analysis.clone().unwrap_or_default(),
        };
        match simulate(&w, &SimOptions::default()) {
            Ok(r) => rows.push(Row {
                schedulable: r.deadline_misses == 0,
                deadline_misses: Some(r.deadline_misses),
                context_switches_per_cpu_per_s: Some(r.context_switches_per_cpu_per_s),
                preemptions: Some(r.preemptions),
                migrations: Some(r.migrations),
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
