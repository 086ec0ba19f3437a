//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod bfs;
mod bfs_queue;
pub mod cfs;
pub mod edf;
pub mod edzl;
pub mod eevdf;
pub mod illf;
pub mod llf;
pub mod rt;
