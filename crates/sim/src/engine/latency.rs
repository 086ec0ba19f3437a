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
//!
//! A sample above 0 ns is appended to the list, unsorted, in the room its allocation has
//! spare; the appended samples are merged into the sorted buckets only when that room runs
//! out (and for a summary). A binary search of the list at every sample cost a cache miss
//! per step with 100,000 tasks (a quarter of the `linux` row's time); an append touches
//! the list's last line, and a merge reads the list once, in order.

use std::borrow::Cow;

/// Buckets up to which a sample is counted in place by a binary search (a sorted list
/// this short is a few cache lines); longer lists take the appended samples.
const SEARCHED: usize = 16;

use crate::result::LatencyStats;
use schedlab_model::Ns;
use std::collections::BTreeMap;

/// Samples of one task.
///
/// One cache line holds all that a sample touches besides its bucket (a job dispatched at
/// its release, 0 ns, touches nothing else): with 100,000 tasks the records do not fit
/// the caches, and each line a sample reads is a miss. So the sample count is not stored
/// (it is the zeros plus the buckets' counts) and the sum keeps its low 64 bits here, its
/// carries and the probe's fields in a box that ordinary tasks never allocate.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(super) struct LatencyRec {
    /// Samples of exactly 0 ns: the first HDR bucket (its lowest value is 0), kept apart
    /// from `buckets` so that recording them does not read the list.
    zeros: u64,
    min: Ns,
    max: Ns,
    /// Sum of the samples, modulo 2^64 (the carries are in `cold`).
    sum: u64,
    /// Latency probes, and sums beyond 2^64 ns.
    cold: Option<Box<Cold>>,
    /// (lowest value of an HDR bucket, samples in it), by bucket, for samples above 0 ns;
    /// then the samples not merged yet, each `(lowest value of its bucket, 0)` (see
    /// [`merge_pending`]).
    buckets: Vec<(Ns, u64)>,
}

/// The rarely used part of a [`LatencyRec`].
#[derive(Debug, Clone, Default)]
struct Cold {
    /// Latency probes only.
    probe: Option<Probe>,
    /// Carries out of [`LatencyRec::sum`]: the sum is `carries × 2^64 + sum`.
    carries: u64,
}

/// What a latency probe records besides the HDR buckets.
#[derive(Debug, Clone)]
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
            min: Ns::MAX,
            max: 0,
            sum: 0,
            cold: probe.map(|extra| {
                Box::new(Cold {
                    probe: Some(Probe {
                        extra,
                        per_us: BTreeMap::new(),
                        overruns: 0,
                    }),
                    carries: 0,
                })
            }),
            buckets: Vec::new(),
        }
    }

    fn probe(&self) -> Option<&Probe> {
        self.cold.as_ref().and_then(|c| c.probe.as_ref())
    }

    /// A release came while the previous one had not run yet: a probe counts an overrun
    /// and skips it (returns true); any other task queues it (false).
    pub(super) fn overrun(&mut self) -> bool {
        match self.cold.as_mut().and_then(|c| c.probe.as_mut()) {
            Some(p) => {
                p.overruns += 1;
                true
            }
            None => false,
        }
    }

    /// One sample: release to first dispatch.
    #[inline]
    pub(super) fn record(&mut self, lat: Ns) {
        // Most samples of a lightly loaded system are 0 (a free CPU at the release): a
        // count, without the probe's look-ups (a probe's record has its cold part).
        if lat == 0 && self.cold.is_none() {
            self.min = 0;
            self.zeros += 1;
            return;
        }
        self.record_slow(lat);
    }

    /// [`LatencyRec::record`] for a sample above 0 or a record with its cold part.
    fn record_slow(&mut self, lat: Ns) {
        let extra = self.probe().map_or(0, |p| p.extra);
        let v = lat.saturating_add(extra);
        self.min = self.min.min(v);
        if v == 0 {
            self.zeros += 1;
        } else if self.buckets.len() <= SEARCHED && self.buckets.last().is_none_or(|b| b.1 != 0) {
            // A short list with no sample pending: searched in place, as it is in cache
            // anyway and a merge's sort would cost more than the search.
            let low = hdr_lowest_equivalent(v);
            match self.buckets.binary_search_by_key(&low, |b| b.0) {
                Ok(i) => self.buckets[i].1 += 1,
                Err(i) => self.buckets.insert(i, (low, 1)),
            }
            self.note_above_zero(v);
        } else {
            if self.buckets.len() == self.buckets.capacity() {
                merge_pending(&mut self.buckets);
                // Keep room for a quarter of the buckets again, so that merges (each a
                // pass over the list) come at most once per that many samples.
                let (len, cap) = (self.buckets.len(), self.buckets.capacity());
                if cap - len < len / 4 + 4 {
                    self.buckets.reserve_exact(len / 2 + 4);
                }
            }
            self.buckets.push((hdr_lowest_equivalent(v), 0));
            self.note_above_zero(v);
        }
        if let Some(p) = self.cold.as_mut().and_then(|c| c.probe.as_mut()) {
            *p.per_us.entry(v / 1000).or_insert(0) += 1;
        }
    }

    /// The maximum and the exact sum of a sample above 0 ns.
    #[inline]
    fn note_above_zero(&mut self, v: Ns) {
        self.max = self.max.max(v);
        let (sum, carry) = self.sum.overflowing_add(v);
        self.sum = sum;
        if carry {
            self.cold.get_or_insert_with(Box::default).carries += 1;
        }
    }

    /// Number of samples: the zeros, every bucket's count and the samples not merged.
    fn samples(&self) -> u64 {
        self.zeros + self.buckets.iter().map(|b| b.1.max(1)).sum::<u64>()
    }

    /// The buckets in order, with the samples not merged yet merged in.
    fn sorted_buckets(&self) -> Cow<'_, [(Ns, u64)]> {
        if self.buckets.last().is_some_and(|b| b.1 == 0) {
            let mut all = self.buckets.clone();
            merge_pending(&mut all);
            Cow::Owned(all)
        } else {
            Cow::Borrowed(&self.buckets)
        }
    }

    /// Sum of the samples, exact.
    fn sum(&self) -> u128 {
        let carries = self.cold.as_ref().map_or(0, |c| c.carries);
        (u128::from(carries) << 64) | u128::from(self.sum)
    }

    /// The summary (None without samples). Percentiles are the lower bounds of the HDR
    /// histogram's buckets (3 significant figures: within 0.1% below the true value, and
    /// exact when the samples are round numbers), kept within the exact min and max.
    pub(super) fn stats(&self) -> Option<LatencyStats> {
        let n = self.samples();
        (n > 0).then(|| {
            let buckets = self.sorted_buckets();
            let q = |x: f64| self.quantile_in(&buckets, x, n).clamp(self.min, self.max);
            LatencyStats {
                samples: n,
                min_ns: self.min,
                mean_ns: self.sum() as f64 / n as f64,
                p50_ns: q(0.5),
                p99_ns: q(0.99),
                p999_ns: q(0.999),
                max_ns: self.max,
                histogram_us: self
                    .probe()
                    .map(|p| p.per_us.iter().map(|(&us, &c)| [us, c]).collect()),
                overruns: self.probe().map(|p| p.overruns),
            }
        })
    }
}

impl LatencyRec {
    /// The lowest value of the bucket holding quantile `q`, as `hdrhistogram`'s
    /// `value_at_quantile` followed by `lowest_equivalent`: the first bucket whose
    /// cumulative count reaches `max(1, ceil(q × samples))` (`samples` of them in all).
    #[cfg(test)]
    fn quantile(&self, q: f64, samples: u64) -> Ns {
        self.quantile_in(&self.sorted_buckets(), q, samples)
    }

    /// [`LatencyRec::quantile`] over `buckets`, the record's buckets in order.
    fn quantile_in(&self, buckets: &[(Ns, u64)], q: f64, samples: u64) -> Ns {
        let target = ((q.min(1.0) * samples as f64).ceil() as u64).max(1);
        let mut seen = 0;
        // The 0 ns bucket comes first: no bucket's lowest value is below 0.
        let zero = (self.zeros > 0).then_some((0, self.zeros));
        for (low, count) in zero.into_iter().chain(buckets.iter().copied()) {
            seen += count;
            if seen >= target {
                return low;
            }
        }
        0
    }
}

/// Merge the samples at the end of `buckets` (entries `(low, 0)`, one sample each, in
/// any order) into the sorted buckets before them (`(low, count)`, count ≥ 1, strictly
/// increasing lows): the samples are sorted and counted by bucket, then merged with the
/// buckets from the back.
fn merge_pending(buckets: &mut Vec<(Ns, u64)>) {
    let b = buckets.as_mut_slice();
    let n = b.iter().rposition(|e| e.1 != 0).map_or(0, |i| i + 1);
    if n == b.len() {
        return;
    }
    #[cfg(debug_assertions)]
    let want: u64 = b.iter().map(|e| e.1.max(1)).sum();
    b[n..].sort_unstable_by_key(|e| e.0);
    // Count the samples by bucket: b[n..w] then holds each bucket once, in order.
    let mut w = n;
    let mut r = n;
    while r < b.len() {
        let low = b[r].0;
        let start = r;
        while r < b.len() && b[r].0 == low {
            r += 1;
        }
        b[w] = (low, (r - start) as u64);
        w += 1;
    }
    // From the back, the samples' buckets (a copy: the merged list grows over them)
    // with the sorted ones, whose unread part always lies below the output position.
    let pending = b[n..w].to_vec();
    let new = {
        let (mut i, mut new) = (0, 0);
        for p in &pending {
            while i < n && b[i].0 < p.0 {
                i += 1;
            }
            new += usize::from(i == n || b[i].0 != p.0);
        }
        new
    };
    let total = n + new;
    let (mut i, mut o) = (n, total);
    for &p in pending.iter().rev() {
        while i > 0 && b[i - 1].0 > p.0 {
            o -= 1;
            i -= 1;
            b[o] = b[i];
        }
        o -= 1;
        if i > 0 && b[i - 1].0 == p.0 {
            i -= 1;
            b[o] = (p.0, b[i].1 + p.1);
        } else {
            b[o] = p;
        }
    }
    debug_assert_eq!(o, i, "the buckets below every sample stay where they are");
    buckets.truncate(total);
    #[cfg(debug_assertions)]
    {
        assert!(
            buckets.windows(2).all(|w| w[0].0 < w[1].0),
            "buckets out of order"
        );
        assert!(buckets.iter().all(|e| e.1 > 0), "an empty bucket");
        assert_eq!(
            buckets.iter().map(|e| e.1).sum::<u64>(),
            want,
            "samples lost"
        );
    }
}

// A sample touches one line of its record (and its bucket, when above 0 ns).
const _: () = {
    assert!(std::mem::size_of::<LatencyRec>() == 64);
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
            // The count is derived (zeros + buckets), not stored: it must be every sample.
            assert_eq!(sparse.samples(), n as u64, "n {n}");
            assert_eq!(sparse.stats().unwrap().samples, dense.len(), "n {n}");
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let want = dense.lowest_equivalent(dense.value_at_quantile(q));
                assert_eq!(sparse.quantile(q, n as u64), want, "n {n} q {q}");
            }
        }
    }

    /// `merge_pending` against a B-tree of counts: sorted buckets (none, some) and
    /// samples (none, some, all in one bucket, all new, mixed), merged in place.
    #[test]
    fn pending_samples_merge_into_the_buckets() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for round in 0..2000 {
            let spread: u64 = [1, 3, 20, 1000][round % 4];
            let mut want = BTreeMap::new();
            for _ in 0..rng.random_range(0..12) {
                *want.entry(rng.random_range(0..spread) * 8).or_insert(0u64) +=
                    rng.random_range(1..5);
            }
            let mut list: Vec<(Ns, u64)> = want.iter().map(|(&k, &c)| (k, c)).collect();
            for _ in 0..rng.random_range(0..12) {
                let low = rng.random_range(0..spread + 2) * 8;
                *want.entry(low).or_insert(0) += 1;
                list.push((low, 0));
            }
            merge_pending(&mut list);
            let want: Vec<(Ns, u64)> = want.into_iter().collect();
            assert_eq!(list, want, "round {round}");
        }
    }

    /// Summaries taken between samples (the samples not merged yet merged in a copy)
    /// agree with a dense histogram at every step.
    #[test]
    fn summaries_between_samples_see_every_sample() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut dense = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        let mut sparse = LatencyRec::new(None);
        for n in 1..=3000u64 {
            let v = rng.random_range(1..[3_000, 5_000_000][(n / 700 % 2) as usize]);
            dense.record(v).unwrap();
            sparse.record(v);
            if n % 97 == 0 || n < 20 {
                let s = sparse.stats().unwrap();
                assert_eq!(s.samples, n);
                let want = dense.lowest_equivalent(dense.value_at_quantile(0.5));
                assert_eq!(sparse.quantile(0.5, n), want, "n {n}");
                assert_eq!(s.p50_ns, want.clamp(s.min_ns, s.max_ns), "n {n}");
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

    /// The sum keeps its low 64 bits in the record and its carries in the cold box: a
    /// mean over samples summing beyond 2^64 ns is the exact sum's, as with a `u128`.
    #[test]
    fn sums_beyond_64_bits_stay_exact() {
        let mut rec = LatencyRec::new(None);
        let big = u64::MAX - 5;
        for v in [big, big, 7, big] {
            rec.record(v);
        }
        let exact = 3 * u128::from(big) + 7;
        assert_eq!(rec.sum(), exact);
        assert_eq!(rec.cold.as_ref().map(|c| c.carries), Some(2));
        let s = rec.stats().unwrap();
        assert_eq!((s.samples, s.min_ns, s.max_ns), (4, 7, big));
        assert_eq!(s.mean_ns, exact as f64 / 4.0);
        // No probe was made for the carries: no histogram, no overruns.
        assert_eq!((s.histogram_us, s.overruns), (None, None));
        assert!(!rec.overrun());
    }
}
