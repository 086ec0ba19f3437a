//! Wake-up latency of one task: HDR-histogram buckets for the percentiles, exact min /
//! max / mean beside them, and for latency probes the modelled wake-up cost added to every
//! sample plus exact 1 µs buckets (cyclictest's `-h` histogram).
//!
//! The buckets are those of an HDR histogram with 3 significant figures (2048
//! sub-buckets, doubling bucket widths; `hdrhistogram`'s layout), but only the buckets
//! that received a sample are stored, as a sorted list: a task's record costs nothing
//! until it is sampled and a few hundred bytes after, instead of the 16 KB a dense
//! histogram allocates up front (100,000 tasks: 1.6 GB). Percentiles are computed exactly
//! as the dense histogram computes them.

use crate::result::LatencyStats;
use schedlab_model::Ns;
use std::collections::BTreeMap;

/// Samples of one task.
pub(super) struct LatencyRec {
    /// (lowest value of an HDR bucket, samples in it), by bucket.
    buckets: Vec<(Ns, u64)>,
    samples: u64,
    min: Ns,
    max: Ns,
    sum: u128,
    /// Added to every sample (a probe's `platform.wakeup_cost`).
    extra: Ns,
    /// Probes only: samples per whole microsecond.
    per_us: Option<BTreeMap<u64, u64>>,
    /// Probes only: periods skipped because the previous wake-up was still pending.
    overruns: u64,
}

impl LatencyRec {
    /// A recorder; `probe` is the wake-up cost to add when the task is a latency probe.
    pub(super) fn new(probe: Option<Ns>) -> LatencyRec {
        LatencyRec {
            buckets: Vec::new(),
            samples: 0,
            min: Ns::MAX,
            max: 0,
            sum: 0,
            extra: probe.unwrap_or(0),
            per_us: probe.map(|_| BTreeMap::new()),
            overruns: 0,
        }
    }

    /// A release came while the previous one had not run yet: a probe counts an overrun
    /// and skips it (returns true); any other task queues it (false).
    pub(super) fn overrun(&mut self) -> bool {
        if self.per_us.is_none() {
            return false;
        }
        self.overruns += 1;
        true
    }

    /// One sample: release to first dispatch.
    pub(super) fn record(&mut self, lat: Ns) {
        let v = lat.saturating_add(self.extra);
        let low = hdr_lowest_equivalent(v);
        match self.buckets.binary_search_by_key(&low, |b| b.0) {
            Ok(i) => self.buckets[i].1 += 1,
            Err(i) => self.buckets.insert(i, (low, 1)),
        }
        self.samples += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
        if let Some(m) = self.per_us.as_mut() {
            *m.entry(v / 1000).or_insert(0) += 1;
        }
    }

    /// The summary (None without samples). Percentiles are the lower bounds of the HDR
    /// histogram's buckets (3 significant figures: within 0.1% below the true value, and
    /// exact when the samples are round numbers), kept within the exact min and max.
    pub(super) fn stats(&self) -> Option<LatencyStats> {
        let n = self.samples;
        (n > 0).then(|| {
            let q = |x: f64| self.quantile(x).clamp(self.min, self.max);
            LatencyStats {
                samples: n,
                min_ns: self.min,
                mean_ns: self.sum as f64 / n as f64,
                p50_ns: q(0.5),
                p99_ns: q(0.99),
                p999_ns: q(0.999),
                max_ns: self.max,
                histogram_us: self
                    .per_us
                    .as_ref()
                    .map(|m| m.iter().map(|(&us, &c)| [us, c]).collect()),
                overruns: self.per_us.as_ref().map(|_| self.overruns),
            }
        })
    }
}

impl LatencyRec {
    /// The lowest value of the bucket holding quantile `q`, as `hdrhistogram`'s
    /// `value_at_quantile` followed by `lowest_equivalent`: the first bucket whose
    /// cumulative count reaches `max(1, ceil(q × samples))`.
    fn quantile(&self, q: f64) -> Ns {
        let target = ((q.min(1.0) * self.samples as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &(low, count) in &self.buckets {
            seen += count;
            if seen >= target {
                return low;
            }
        }
        0
    }
}

/// The lowest value equivalent to `v` in an HDR histogram of 3 significant figures and
/// unit 1: 2048 sub-buckets (the smallest power of two ≥ 2 × 10³), so values below 2048
/// are exact and each doubling of the value doubles the bucket width.
fn hdr_lowest_equivalent(v: Ns) -> Ns {
    const SUB_BUCKET_MASK: u64 = 2047;
    const LEADING_ZERO_BASE: u32 = 64 - 10 - 1; // 64 − unit − log2(half the sub-buckets) − 1
    let bucket = LEADING_ZERO_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    (v >> bucket) << bucket
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The sparse buckets agree with `hdrhistogram` on bucket bounds and percentiles.
    #[test]
    fn matches_a_dense_hdr_histogram() {
        let hist = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in (0..70_000u64).chain([u64::MAX, u64::MAX / 3, 1 << 40, (1 << 40) - 1]) {
            assert_eq!(
                hdr_lowest_equivalent(v),
                hist.lowest_equivalent(v),
                "value {v}"
            );
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for n in [1usize, 2, 3, 10, 999, 5000] {
            let mut dense = hdrhistogram::Histogram::<u64>::new(3).unwrap();
            let mut sparse = LatencyRec::new(None);
            for _ in 0..n {
                let v = match rng.random_range(0..3) {
                    0 => rng.random_range(0..5_000),
                    1 => rng.random_range(0..10_000_000),
                    _ => rng.random_range(0..u64::MAX / 2),
                };
                dense.record(v).unwrap();
                sparse.record(v);
            }
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let want = dense.lowest_equivalent(dense.value_at_quantile(q));
                assert_eq!(sparse.quantile(q), want, "n {n} q {q}");
            }
        }
    }
}
