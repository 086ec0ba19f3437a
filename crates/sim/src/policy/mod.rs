//! Policies: one file each, implementing [`crate::class::SchedClass`]. Each file also
//! says which registry policies its class runs and how it is built for a workload (its
//! `SIM` entries); the list below declares the files and collects those entries.

/// Declares each file and [`ALL`], their `SIM` entries.
macro_rules! classes {
    ($($file:ident),* $(,)?) => {
        $(pub mod $file;)*

        /// Every file's `SIM` entries, file by file.
        pub(crate) const ALL: &[&[crate::registry::SimPolicy]] = &[$($file::SIM),*];
    };
}

classes! {
    bfs, cfs, edf, edzl, eevdf, illf, llf, rt,
    // Quantum-based (Pfair and boundary-fair) schedulers, sharing `pfair`.
    bf, epdf, er_pd2, pd2,
    // Server-based optimal schedulers: RUN's reduction tree, U-EDF's allotments.
    run, u_edf,
    // Fluid / boundary schedulers (on the shared fluid.rs): DP-Wrap, LLREF, LRE-TL.
    dp_wrap, llref, lre_tl,
    // Priority-driven global schedulers (sharing job_prio.rs).
    edf_us, prid, g_fl, g_fl_zl,
    // Laxity-driven global schedulers (rules as in SimSo 0.8.5).
    mllf, edcl, nvnlf, edhs,
    // Semi-partitioned with slots between deadlines (on fluid.rs's Plan).
    ekg,
}

// Modules that serve a class file and are not classes themselves.
mod bfs_queue;
pub mod fluid;
pub mod global_queue;
pub mod job_prio;
pub mod pfair;
mod progress;
pub mod run_tree;
