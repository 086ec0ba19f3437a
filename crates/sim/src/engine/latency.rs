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
///
/// One cache line holds all that a sample of 0 ns touches (a job dispatched at its
/// release, the usual case on a machine with free CPUs): with 100,000 tasks the records
/// do not fit the caches, and such a sample then costs one miss instead of the record's
/// and its bucket list's.
#[repr(C, align(64))]
pub(super) struct LatencyRec {
    /// Samples of exactly 0 ns: the first HDR bucket (its lowest value is 0), kept apart
    /// from `buckets` so that recording them does not read the list.
    zeros: u64,
    samples: u64,
    min: Ns,
    max: Ns,
    sum: u128,
    /// Latency probes only.
    probe: Option<Box<Probe>>,
    /// (lowest value of an HDR bucket, samples in it), by bucket, for samples above 0 ns.
    buckets: Vec<(Ns, u64)>,
}

/// What a latency probe records besides the HDR buckets.
struct Probe {
    /// Added to every sample (the probe's `platform.wakeup_cost`).
    extra: Ns,
    /// Samples per whole microsecond.
    per_us: BTreeMap<u64, u64>,
    /// Periods skipped because the previous wake-up was still pending.
    overruns: u64,
}

impl LatencyRec {
    /// A recorder; `probe` is the wake-up cost to add when the task is a latency probe.
    pub(super) fn new(probe: Option<Ns>) -> LatencyRec {
        LatencyRec {
            zeros: 0,
            samples: 0,
            min: Ns::MAX,
            max: 0,
            sum: 0,
            probe: probe.map(|extra| {
                Box::new(Probe {
                    extra,
                    per_us: BTreeMap::new(),
                    overruns: 0,
                })
            }),
            buckets: Vec::new(),
        }
    }

    /// A release came while the previous one had not run yet: a probe counts an overrun
    /// and skips it (returns true); any other task queues it (false).
    pub(super) fn overrun(&mut self) -> bool {
        match self.probe.as_mut() {
            Some(p) => {
                p.overruns += 1;
                true
            }
            None => false,
        }
    }

    /// One sample: release to first dispatch.
    pub(super) fn record(&mut self, lat: Ns) {
        let extra = self.probe.as_ref().map_or(0, |p| p.extra);
        let v = lat.saturating_add(extra);
        self.samples += 1;
        self.min = self.min.min(v);
        if v == 0 {
            self.zeros += 1;
        } else {
            let low = hdr_lowest_equivalent(v);
            match self.buckets.binary_search_by_key(&low, |b| b.0) {
                Ok(i) => self.buckets[i].1 += 1,
                Err(i) => self.buckets.insert(i, (low, 1)),
            }
            self.max = self.max.max(v);
            self.sum += v as u128;
        }
        if let Some(p) = self.probe.as_mut() {
            *p.per_us.entry(v / 1000).or_insert(0) += 1;
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
                    .probe
                    .as_ref()
                    .map(|p| p.per_us.iter().map(|(&us, &c)| [us, c]).collect()),
                overruns: self.probe.as_ref().map(|p| p.overruns),
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
        // The 0 ns bucket comes first: no bucket's lowest value is below 0.
        let zero = (self.zeros > 0).then_some((0, self.zeros));
        for (low, count) in zero.into_iter().chain(self.buckets.iter().copied()) {
            seen += count;
            if seen >= target {
                return low;
            }
        }
        0
    }
}

// A zero sample touches only the first 64 bytes (`zeros`, `samples`, `min`, `probe`).
const _: () = {
    assert!(std::mem::offset_of!(LatencyRec, probe) + 8 <= 64);
    assert!(std::mem::size_of::<LatencyRec>() == 128);
};

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
                // Zeros are kept apart from the other buckets: mix many in.
                let v = match rng.random_range(0..4) {
                    3 => 0,
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

    /// Samples of 0 ns (counted apart from the bucket list) come first in the
    /// percentiles, and leave the sum and the maximum alone.
    #[test]
    fn zero_samples_are_the_lowest_bucket() {
        let mut rec = LatencyRec::new(None);
        for v in [0, 5000, 0, 0] {
            rec.record(v);
        }
        let s = rec.stats().unwrap();
        assert_eq!((s.samples, s.min_ns, s.max_ns), (4, 0, 5000));
        assert_eq!(s.mean_ns, 1250.0);
        assert_eq!((s.p50_ns, s.p99_ns), (0, 5000));
        // A probe's wake-up cost is added first: 0 ns latency is then no zero sample.
        let mut probe = LatencyRec::new(Some(700));
        probe.record(0);
        probe.record(0);
        let s = probe.stats().unwrap();
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns), (700, 700, 700));
        assert_eq!(s.histogram_us, Some(vec![[0, 2]]));
    }
}
