//! Quantities a policy derives from its parameters, for whoever predicts a policy's
//! behaviour by hand (the experiments' "by hand" columns, analyses) without reaching into
//! a policy's implementation: the functions here are the stable, documented surface;
//! the policies under [`crate::policy`] may change how they use them.

use schedlab_model::Ns;

/// BFS: the virtual-deadline offset of a task at nice `nice` (clamped to −20..19) with
/// `rr_interval` = `rr_interval_ms`, in ns: `prio_ratios[nice + 20] × rr_interval / 128`,
/// the ratios growing ×1.1 per nice level from 128 at nice −20 (BFS 0.512's
/// `prio_deadline_diff`). A refilled deadline is `now +` this offset.
pub fn bfs_deadline_offset(nice: i8, rr_interval_ms: u64) -> Ns {
    crate::policy::bfs::prio_deadline_diff(nice, rr_interval_ms)
}

/// BFS: a task's time slice with `rr_interval` = `rr_interval_ms`, in ns
/// (`timeslice()`: `rr_interval << 10` BFS microseconds of 1024 ns each).
pub fn bfs_timeslice(rr_interval_ms: u64) -> Ns {
    crate::policy::bfs::timeslice_ns(rr_interval_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: 6 ms << 10 = 6144 BFS µs × 1024 ns; at nice −20 the ratio is 128,
    /// so the offset is rr_interval in BFS milliseconds of 2^20 ns (6 × 1048576); at
    /// nice −19 the ratio is 128 × 11 / 10 = 140 (integer).
    #[test]
    fn hand_worked_values() {
        assert_eq!(bfs_timeslice(6), 6_291_456);
        assert_eq!(bfs_deadline_offset(-20, 6), 6_291_456);
        assert_eq!(bfs_deadline_offset(-19, 6), 140 * 6 * 8192);
        assert_eq!(bfs_deadline_offset(-21, 6), 6_291_456, "clamped");
        assert!(bfs_deadline_offset(19, 6) > bfs_deadline_offset(0, 6));
        assert_eq!(
            bfs_deadline_offset(19, 6),
            bfs_deadline_offset(25, 6),
            "clamped"
        );
    }
}
