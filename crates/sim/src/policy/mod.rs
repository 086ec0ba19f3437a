//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod bfs;
pub mod cfs;
pub mod edf;
pub mod edzl;
// SimSo's server-based optimal schedulers (issue 27).
pub mod eevdf;
pub mod illf;
pub mod llf;
pub mod rt;
pub mod run;
pub mod run_tree;
pub mod u_edf;
