//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod bfs;
pub mod cfs;
pub mod edf;
pub mod edzl;
// SimSo's priority-driven global schedulers (issue 27).
pub mod edf_us;
pub mod eevdf;
pub mod g_fl;
pub mod g_fl_zl;
pub mod illf;
pub mod job_prio;
pub mod llf;
pub mod prid;
pub mod rt;
// SimSo's laxity-driven global schedulers (issue 27, item 2).
pub mod edcl;
pub mod edhs;
pub mod mllf;
pub mod nvnlf;
