//! `schedlab._native`: the Rust core for the Python package `schedlab`.
//!
//! Each function takes plain values and returns JSON text (or CSV for jobs), produced by
//! the same code as the command line: a simulation's JSON is `serde_json` of the engine's
//! result, exactly what `schedlab simulate --json` prints; `analyze` returns the report
//! of `schedlab analyze --json`. The Python layer (python/schedlab) turns them into
//! objects and DataFrames. Errors are raised as `schedlab.SchedlabError` with the CLI's
//! message. Simulations and analyses run on a worker thread with the GIL released, and
//! Ctrl-C (any Python signal handler that raises) interrupts the call at once.
//!
//! No panic crosses into Python: every entry point runs under `catch_unwind` and turns a
//! panic into `SchedlabError` ("internal error ..."), which `except Exception` catches
//! (PyO3's own `PanicException` derives from `BaseException`).

mod cli;
pub mod sweep;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use schedlab_analysis::{generate as gen_set, Deadlines, GenSpec, Method, Periods};
use schedlab_model::{
    parse_duration, parse_sim_duration, OnMiss, Overrides, Placement, Policy, Workload,
};
use schedlab_sim::{simulate as sim, SimOptions};
use serde_json::Value;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

create_exception!(
    _native,
    SchedlabError,
    PyValueError,
    "A bad workload, argument or simulation: the message is the command line's."
);

fn err(msg: impl std::fmt::Display) -> PyErr {
    SchedlabError::new_err(msg.to_string())
}

/// A panic's payload as a `SchedlabError`.
fn panicked(payload: Box<dyn Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    err(format!(
        "internal error (a bug in schedlab: please report it with the call that caused it): {what}"
    ))
}

/// Run an entry point's body; a panic becomes a `SchedlabError` instead of crossing into
/// Python as a `PanicException`.
fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(panicked(p)))
}

/// How often a call waiting for its worker thread checks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Run `work` on its own thread while this one waits with the GIL released, checking
/// Python's signal handlers every [`SIGNAL_POLL`]: Ctrl-C raises `KeyboardInterrupt` at
/// once. An interrupted computation cannot be stopped from outside; it finishes on its
/// thread and its result is dropped.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> PyResult<T> {
    let (tx, mut rx) = channel();
    std::thread::Builder::new()
        .name("schedlab".into())
        // As much stack as a main thread (8 MiB on Linux), not a spawned thread's 2 MiB:
        // the work ran on the caller's thread before.
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(work)));
        })
        .map_err(|e| err(format!("cannot start a worker thread: {e}")))?;
    loop {
        // The receiver goes in and comes back: `&Receiver` may not cross threads.
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        match got {
            Ok(Ok(result)) => return result.map_err(err),
            Ok(Err(payload)) => return Err(panicked(payload)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(err(
                    "internal error: the worker thread ended without a result",
                ))
            }
        }
    }
}

/// The keys `schedlab_version`, `seed` and `options` that the command line's `--json`
/// results carry (the CLI's own [`schedlab_cli::Provenance`]), appended to `result`; a key
/// the result already has is kept. `options` are the overrides as given (null: the file's).
fn stamped(
    result: impl serde::Serialize,
    seed: u64,
    ov: &Overrides,
    extra: &[(&str, Value)],
) -> Result<String, String> {
    let encode = |e: serde_json::Error| format!("cannot encode JSON: {e}");
    let p = extra
        .iter()
        .fold(schedlab_cli::Provenance::of(seed, ov), |p, (k, x)| {
            p.with(k, x.clone())
        });
    serde_json::to_string(&p.stamp(result).map_err(encode)?).map_err(encode)
}

/// Overrides as the command line parses them (same messages).
fn overrides(
    policy: Option<&str>,
    placement: Option<&str>,
    cpus: Option<u64>,
    duration: Option<&str>,
    seed: Option<u64>,
    on_miss: Option<&str>,
) -> PyResult<Overrides> {
    Ok(Overrides {
        policy: policy.map(Policy::parse).transpose().map_err(err)?,
        placement: placement.map(Placement::parse).transpose().map_err(err)?,
        cpus,
        duration: duration
            .map(parse_sim_duration)
            .transpose()
            .map_err(|e| err(format!("duration: {e}")))?,
        seed,
        on_miss: on_miss.map(OnMiss::parse).transpose().map_err(err)?,
    })
}

/// Load a workload from a file path, or from text (YAML or JSON) labelled `label`.
fn load(source: &str, is_text: bool, label: &str, ov: &Overrides) -> PyResult<Workload> {
    if is_text {
        Workload::parse_str(source, Path::new(label), ov).map_err(err)
    } else {
        Workload::load(Path::new(source), ov).map_err(err)
    }
}

/// Simulate; returns (the `--json` object's text, the `--jobs-csv` text or None).
#[pyfunction]
#[pyo3(signature = (source, is_text, label, policy=None, placement=None, cpus=None, duration=None, seed=None, on_miss=None, jobs=true))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    source: &str,
    is_text: bool,
    label: &str,
    policy: Option<&str>,
    placement: Option<&str>,
    cpus: Option<u64>,
    duration: Option<&str>,
    seed: Option<u64>,
    on_miss: Option<&str>,
    jobs: bool,
) -> PyResult<(String, Option<String>)> {
    guard(|| {
        let ov = overrides(policy, placement, cpus, duration, seed, on_miss)?;
        let w = load(source, is_text, label, &ov)?;
        let where_ = if is_text { label } else { source }.to_string();
        interruptible(py, move || {
            let r = sim(&w, &SimOptions { trace: jobs }).map_err(|e| format!("{where_}: {e}"))?;
            // simulate() takes no --platform file: always null, as the CLI's without one.
            let json = stamped(&r, w.seed, &ov, &[("platform", Value::Null)])?;
            let csv = if jobs {
                schedlab_trace::Schedule::from_sim(&w, &r).map(|s| schedlab_trace::jobs::render(&s))
            } else {
                None
            };
            Ok((json, csv))
        })
    })
}

/// Every schedulability test; returns the `schedlab analyze --json` object's text.
#[pyfunction]
#[pyo3(signature = (source, is_text, label, cpus=None))]
fn analyze(
    py: Python<'_>,
    source: &str,
    is_text: bool,
    label: &str,
    cpus: Option<u64>,
) -> PyResult<String> {
    guard(|| {
        let ov = Overrides {
            cpus,
            ..Overrides::default()
        };
        let w = load(source, is_text, label, &ov)?;
        let where_ = if is_text { label } else { source }.to_string();
        interruptible(py, move || {
            let r = schedlab_analysis::report(&w).map_err(|e| format!("{where_}: {e}"))?;
            stamped(&r, w.seed, &ov, &[])
        })
    })
}

/// One random task set as a workload file (YAML, or JSON when `json`).
#[pyfunction]
#[pyo3(signature = (tasks, utilization, cpus, method, max_task_utilization, periods, granularity, deadlines, deadline_ratio, seed, duration, policy, placement, name, json))]
#[allow(clippy::too_many_arguments)]
fn generate(
    tasks: usize,
    utilization: f64,
    cpus: usize,
    method: &str,
    max_task_utilization: f64,
    periods: &str,
    granularity: &str,
    deadlines: &str,
    deadline_ratio: f64,
    seed: u64,
    duration: &str,
    policy: Option<String>,
    placement: Option<String>,
    name: &str,
    json: bool,
) -> PyResult<String> {
    guard(|| {
        let dur = |t: &str, what: &str| parse_duration(t).map_err(|e| err(format!("{what}: {e}")));
        let granularity = dur(granularity, "granularity")?;
        // The generator's own parser, as `schedlab generate --periods` (ranges, lists and
        // `divisors:H[:MIN..MAX]`).
        let periods =
            Periods::parse(periods, granularity).map_err(|e| err(format!("periods: {e}")))?;
        let deadlines = match deadlines {
            "implicit" => Deadlines::Implicit,
            "constrained" => Deadlines::Constrained {
                min_ratio: deadline_ratio,
            },
            other => {
                return Err(err(format!(
                    "deadlines: unknown kind `{other}` (implicit or constrained)"
                )))
            }
        };
        if let Some(p) = &policy {
            Policy::parse(p).map_err(err)?;
        }
        if let Some(p) = &placement {
            Placement::parse(p).map_err(err)?;
        }
        let spec = GenSpec {
            name: name.into(),
            tasks,
            cpus,
            utilization,
            max_task_utilization,
            method: Method::parse(method).map_err(err)?,
            periods,
            deadlines,
            seed,
            duration: dur(duration, "duration")?,
            policy,
            placement,
        };
        let set = gen_set(&spec).map_err(err)?;
        // Read back with simulate's rules, as `schedlab generate` does before it writes.
        set.checked_text(json).map_err(err)
    })
}

/// Check a sweep's cells (JSON list) without running them.
#[pyfunction]
fn check_cells(cells_json: &str) -> PyResult<()> {
    guard(|| {
        let cells: Vec<sweep::Cell> =
            serde_json::from_str(cells_json).map_err(|e| err(format!("sweep cells: {e}")))?;
        for c in &cells {
            sweep::check(c).map_err(err)?;
        }
        Ok(())
    })
}

/// Run a batch of sweep cells (JSON list); returns the rows as JSON columns
/// (`{"utilization": [...], "policy": [...], ...}`), the reference form of
/// [`run_cells_columns`]. GIL released.
#[pyfunction]
fn run_cells(py: Python<'_>, cells_json: &str) -> PyResult<String> {
    guard(|| {
        let rows = cell_rows(py, cells_json)?;
        serde_json::to_string(&sweep::columns(&rows)).map_err(err)
    })
}

/// The rows of a batch of sweep cells (a JSON list, or one cell and its points: see
/// [`sweep::Batch`]), computed with the GIL released.
fn cell_rows(py: Python<'_>, cells_json: &str) -> PyResult<Vec<sweep::Row>> {
    let batch = sweep::Batch::parse(cells_json).map_err(err)?;
    py.allow_threads(move || {
        // Inside: a panic must not unwind through allow_threads' GIL re-acquisition.
        catch_unwind(AssertUnwindSafe(|| batch.rows()))
    })
    .map_err(panicked)?
    .map_err(err)
}

/// [`run_cells`]' columns as a dict of Python lists (None where the JSON has null),
/// without the JSON text in between: the serial sweep's and a Dask worker's call.
#[pyfunction]
fn run_cells_columns<'py>(
    py: Python<'py>,
    cells_json: &str,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    guard(|| {
        let rows = cell_rows(py, cells_json)?;
        let d = pyo3::types::PyDict::new(py);
        for (name, c) in sweep::column_list(&rows) {
            match c {
                sweep::Column::F64(v) => d.set_item(name, v)?,
                // JSON writes a non-finite number as null: the same here.
                sweep::Column::OptF64(v) => d.set_item(
                    name,
                    v.into_iter()
                        .map(|x| x.filter(|x| x.is_finite()))
                        .collect::<Vec<_>>(),
                )?,
                sweep::Column::U64(v) => d.set_item(name, v)?,
                sweep::Column::OptU64(v) => d.set_item(name, v)?,
                sweep::Column::Bool(v) => d.set_item(name, v)?,
                sweep::Column::OptBool(v) => d.set_item(name, v)?,
                sweep::Column::Str(v) => d.set_item(name, v)?,
            }
        }
        Ok(d)
    })
}

/// The task-set seed of a sweep cell.
#[pyfunction]
fn set_seed(seed: u64, utilization: f64, sample: u64) -> PyResult<u64> {
    guard(|| Ok(sweep::set_seed(seed, utilization, sample)))
}

/// For the test suite: panics with `message`, to show that a panic in the core reaches
/// Python as `SchedlabError` (every entry point is guarded the same way).
#[pyfunction]
fn _raise_panic(message: &str) -> PyResult<()> {
    guard(|| panic!("{message}"))
}

/// Names of the schedulability tests, in report order.
#[pyfunction]
fn test_names() -> Vec<&'static str> {
    schedlab_analysis::TESTS.to_vec()
}

/// `schedlab reproduce EXPERIMENT --json` without writing the figures: the command
/// line's JSON text (figures listed by file name). `real`: measure this machine where an
/// experiment can (root); `guest_results`: the sched_ext guest lane's results file.
#[pyfunction]
#[pyo3(signature = (experiment, real=false, guest_results=None))]
fn reproduce(
    py: Python<'_>,
    experiment: String,
    real: bool,
    guest_results: Option<String>,
) -> PyResult<String> {
    interruptible(py, move || {
        let opts = schedlab_experiments::Options {
            real,
            record: None,
            guest: schedlab_experiments::scx_guest::GuestSource {
                results: guest_results.map(std::path::PathBuf::from),
                run: false,
            },
        };
        let report =
            schedlab_experiments::reproduce(&experiment, &opts, &schedlab_experiments::NoProgress)
                .map_err(|e| e.to_string())?;
        schedlab_cli::report_json(&report, !real, false, opts.guest.results.as_deref())
            .map_err(|f| f.message)
    })
}

/// Names of the experiments `reproduce` knows, in the order `all` runs them.
#[pyfunction]
fn experiment_names() -> Vec<&'static str> {
    schedlab_experiments::EXPERIMENTS
        .iter()
        .map(|e| e.name)
        .collect()
}

/// The Python module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SchedlabError", m.py().get_type::<SchedlabError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(check_cells, m)?)?;
    m.add_function(wrap_pyfunction!(run_cells, m)?)?;
    m.add_function(wrap_pyfunction!(run_cells_columns, m)?)?;
    m.add_function(wrap_pyfunction!(set_seed, m)?)?;
    m.add_function(wrap_pyfunction!(test_names, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_names, m)?)?;
    m.add_function(wrap_pyfunction!(_raise_panic, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
