//! Policies: one file each, implementing [`crate::class::SchedClass`].

pub mod bfs;
pub mod cfs;
pub mod edf;
pub mod edzl;

// Quantum-based (Pfair and boundary-fair) schedulers, sharing `pfair`.
pub mod bf;
pub mod epdf;
pub mod er_pd2;
pub mod pd2;
pub mod pfair;

pub mod eevdf;
pub mod illf;
pub mod llf;
pub mod rt;
