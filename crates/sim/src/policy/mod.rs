//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod bfs;
pub mod cfs;
pub mod dp_wrap;
pub mod edf;
pub mod edzl;
pub mod eevdf;
pub mod fluid;
pub mod illf;
pub mod llf;
pub mod llref;
pub mod lre_tl;
pub mod rt;
