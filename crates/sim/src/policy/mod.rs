//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod edf;
pub mod rt;
