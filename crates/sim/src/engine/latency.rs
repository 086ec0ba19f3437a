//! Wake-up latency of one task: an HDR histogram for the percentiles, exact min / max /
//! mean beside it, and for latency probes the modelled wake-up cost added to every
//! sample plus exact 1 µs buckets (cyclictest's `-h` histogram).

use crate::result::LatencyStats;
use schedlab_model::Ns;
use std::collections::BTreeMap;

/// Samples of one task.
pub(super) struct LatencyRec {
    hist: hdrhistogram::Histogram<u64>,
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
            hist: hdrhistogram::Histogram::new(3).expect("3 significant figures"),
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
        let _ = self.hist.record(v);
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
        let n = self.hist.len();
        (n > 0).then(|| {
            let q = |x: f64| {
                let v = self.hist.value_at_quantile(x);
                self.hist.lowest_equivalent(v).clamp(self.min, self.max)
            };
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
