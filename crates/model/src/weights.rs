//! Nice-to-weight tables of the fair class: the kernel's `sched_prio_to_weight` and the
//! three alternatives of seed 004 (grouped n = 2, grouped n = 5, extended to 60 levels).

use serde::Serialize;

/// `sched_prio_to_weight[40]` (kernel/sched/core.c), index 0 = nice −20.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `NICE_0_LOAD` (scaled down): the weight of a nice-0 task.
pub const NICE_0_LOAD: u64 = 1024;

/// Weight of SCHED_IDLE tasks (`WEIGHT_IDLEPRIO`).
pub const WEIGHT_IDLEPRIO: u64 = 3;

/// Which nice-to-weight table the fair class uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightTable {
    /// The kernel's 40 weights, ×1.25 per nice level.
    Linux,
    /// Seed 004's coarser table: consecutive pairs share the mean of their weights.
    Grouped2,
    /// Seed 004's coarser table: groups of five share the mean of their weights.
    Grouped5,
    /// Seed 004's finer table: nice −30..29, new levels `round(1024 / 1.25^nice)`.
    Extended60,
}

impl WeightTable {
    /// Parse `linux`, `grouped-2`, `grouped-5` or `extended-60`.
    pub fn parse(name: &str) -> Result<WeightTable, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "linux" => Ok(WeightTable::Linux),
            "grouped-2" => Ok(WeightTable::Grouped2),
            "grouped-5" => Ok(WeightTable::Grouped5),
            "extended-60" => Ok(WeightTable::Extended60),
            _ => Err(format!(
                "unknown weight table `{name}` (known: linux, grouped-2, grouped-5, extended-60)"
            )),
        }
    }

    /// The spec name.
    pub fn name(self) -> &'static str {
        match self {
            WeightTable::Linux => "linux",
            WeightTable::Grouped2 => "grouped-2",
            WeightTable::Grouped5 => "grouped-5",
            WeightTable::Extended60 => "extended-60",
        }
    }

    /// Valid nice values (inclusive).
    pub fn nice_range(self) -> (i8, i8) {
        match self {
            WeightTable::Extended60 => (-30, 29),
            _ => (-20, 19),
        }
    }

    /// Weight of `nice` (which must be in [`WeightTable::nice_range`]).
    ///
    /// Grouped tables use the mean of the group's kernel weights rounded half up to an
    /// integer (the kernel's arithmetic is integer; seed 004 does not say how it rounded),
    /// e.g. grouped-2 (−16, −15) = 32722.5 → 32723.
    pub fn weight(self, nice: i8) -> u64 {
        match self {
            WeightTable::Linux => PRIO_TO_WEIGHT[(nice + 20) as usize],
            WeightTable::Grouped2 => group_mean((nice + 20) as usize, 2),
            WeightTable::Grouped5 => group_mean((nice + 20) as usize, 5),
            WeightTable::Extended60 => {
                if (-20..=19).contains(&nice) {
                    PRIO_TO_WEIGHT[(nice + 20) as usize]
                } else {
                    // round(1024 / 1.25^nice), at least 2 (scale_load_down's clamp).
                    let w = (1024.0 / 1.25f64.powi(nice as i32)).round() as u64;
                    w.max(2)
                }
            }
        }
    }

    /// `2^32 / weight`, the kernel's `sched_prio_to_wmult` for the linux table.
    pub fn inv_weight(weight: u64) -> u64 {
        (1u64 << 32) / weight.max(1)
    }
}

fn group_mean(index: usize, n: usize) -> u64 {
    let start = index / n * n;
    let sum: u64 = PRIO_TO_WEIGHT[start..start + n].iter().sum();
    // Round half up.
    (2 * sum + n as u64) / (2 * n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_tables_share_the_rounded_group_mean() {
        assert_eq!(WeightTable::Grouped2.weight(-20), 80258);
        assert_eq!(WeightTable::Grouped2.weight(-19), 80258);
        assert_eq!(WeightTable::Grouped2.weight(-16), 32723); // 32722.5
        assert_eq!(WeightTable::Grouped2.weight(0), 922);
        assert_eq!(WeightTable::Grouped2.weight(1), 922);
        assert_eq!(WeightTable::Grouped2.weight(19), 17); // 16.5
        assert_eq!(WeightTable::Grouped5.weight(0), 690); // 689.6
        assert_eq!(WeightTable::Grouped5.weight(4), 690);
        assert_eq!(WeightTable::Grouped5.weight(-20), 59913); // 59912.6
        let distinct = |t: WeightTable| {
            let mut v: Vec<u64> = (-20..=19).map(|n| t.weight(n)).collect();
            v.dedup();
            v.len()
        };
        assert_eq!(distinct(WeightTable::Linux), 40);
        assert_eq!(distinct(WeightTable::Grouped2), 20);
        assert_eq!(distinct(WeightTable::Grouped5), 8);
    }

    #[test]
    fn extended_table_covers_minus_30_to_29_with_the_ratio_kept() {
        let t = WeightTable::Extended60;
        assert_eq!(t.nice_range(), (-30, 29));
        assert_eq!(t.weight(-30), 827181);
        assert_eq!(t.weight(-21), 111022);
        assert_eq!(t.weight(0), 1024);
        assert_eq!(t.weight(20), 12);
        assert_eq!(t.weight(29), 2);
        // Neighbours keep ≈ ×1.25 where the integers allow it (above weight 100).
        for n in -30..=9 {
            let r = t.weight(n) as f64 / t.weight(n + 1) as f64;
            assert!((r - 1.25).abs() < 0.04, "nice {n}: ratio {r}");
        }
    }

    #[test]
    fn inverse_weights_match_the_kernel_table() {
        assert_eq!(WeightTable::inv_weight(1024), 4194304);
        assert_eq!(WeightTable::inv_weight(88761), 48388);
        assert_eq!(WeightTable::inv_weight(15), 286331153);
    }
}
