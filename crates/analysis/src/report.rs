//! Every test on a workload, as `schedlab analyze` prints it and Python's `analyze`
//! returns it.

use crate::{analyze, from_workload, Verdict};
use schedlab_model::Workload;
use serde::Serialize;

/// The set's summary and every test's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Workload name.
    pub workload: String,
    /// CPUs analysed for.
    pub cpus: usize,
    /// Number of periodic tasks.
    pub tasks: usize,
    /// Total utilisation.
    pub utilization: f64,
    /// Total density.
    pub density: f64,
    /// Every test, in [`crate::TESTS`] order.
    pub tests: Vec<Verdict>,
}

/// Run every test on the periodic tasks of `w` for its CPUs.
pub fn report(w: &Workload) -> Result<Report, String> {
    let ts = from_workload(w)?;
    let cpus = w.platform.cpus;
    Ok(Report {
        workload: w.name.clone(),
        cpus,
        tasks: ts.len(),
        utilization: ts.iter().map(|t| t.utilisation()).sum(),
        density: ts.iter().map(|t| t.density()).sum(),
        tests: analyze(&ts, cpus),
    })
}
