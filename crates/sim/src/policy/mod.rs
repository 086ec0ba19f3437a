//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod edf;
pub mod illf;
pub mod llf;
pub mod rt;
