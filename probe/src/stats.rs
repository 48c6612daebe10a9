//! Distributions: HdrHistogram wrappers for unsigned and signed nanosecond values, and the
//! summary objects that go into the JSON (every field carries its unit).

use hdrhistogram::Histogram;
use serde::Serialize;

fn new_hist() -> Histogram<u64> {
    // 3 significant digits (0.1 %), auto-resizing: any range of ns values.
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// Distribution of non-negative ns values with exact min/max/mean and 0.1 % percentiles.
#[derive(Clone)]
pub struct NsHist {
    h: Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: f64,
}

impl Default for NsHist {
    fn default() -> Self {
        Self::new()
    }
}

/// Summary of an unsigned ns distribution.
#[derive(Serialize, Debug, Clone, Default)]
pub struct NsSummary {
    /// Number of values.
    pub count: u64,
    /// Smallest value, ns (exact).
    pub min_ns: Option<u64>,
    /// Mean, ns.
    pub mean_ns: Option<f64>,
    /// Median, ns.
    pub p50_ns: Option<u64>,
    /// 90th percentile, ns.
    pub p90_ns: Option<u64>,
    /// 99th percentile, ns.
    pub p99_ns: Option<u64>,
    /// 99.9th percentile, ns.
    pub p999_ns: Option<u64>,
    /// Largest value, ns (exact).
    pub max_ns: Option<u64>,
    /// Population standard deviation, ns.
    pub stddev_ns: Option<f64>,
}

/// A distribution of packet counts (reorder extents, packets per burst), from an [`NsHist`] of
/// counts: the same percentiles, named in packets.
#[derive(Serialize, Debug, Default)]
pub struct PacketsSummary {
    /// Number of values.
    pub count: u64,
    /// Smallest value, packets.
    pub min_packets: Option<u64>,
    /// Mean, packets.
    pub mean_packets: Option<f64>,
    /// Median, packets.
    pub p50_packets: Option<u64>,
    /// 99th percentile, packets.
    pub p99_packets: Option<u64>,
    /// Largest value, packets.
    pub max_packets: Option<u64>,
}

impl From<NsSummary> for PacketsSummary {
    fn from(s: NsSummary) -> Self {
        PacketsSummary {
            count: s.count,
            min_packets: s.min_ns,
            mean_packets: s.mean_ns,
            p50_packets: s.p50_ns,
            p99_packets: s.p99_ns,
            max_packets: s.max_ns,
        }
    }
}

impl NsHist {
    /// Empty.
    pub fn new() -> Self {
        NsHist {
            h: new_hist(),
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0.0,
        }
    }

    /// Add one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        // With auto-resize recording cannot fail for u64 values below 2^63.
        let _ = self.h.record(v.min(i64::MAX as u64));
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
        self.sum_sq += (v as f64) * (v as f64);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Value at quantile q (0..=1), None if empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count() == 0 {
            None
        } else {
            Some(self.h.value_at_quantile(q).clamp(self.min, self.max))
        }
    }

    /// The JSON summary.
    pub fn summary(&self) -> NsSummary {
        let n = self.count();
        if n == 0 {
            return NsSummary::default();
        }
        let mean = self.sum as f64 / n as f64;
        let var = (self.sum_sq / n as f64 - mean * mean).max(0.0);
        NsSummary {
            count: n,
            min_ns: Some(self.min),
            mean_ns: Some(mean),
            p50_ns: self.quantile(0.5),
            p90_ns: self.quantile(0.9),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: Some(self.max),
            stddev_ns: Some(var.sqrt()),
        }
    }
}

/// Distribution of signed ns values (two histograms: negative magnitudes and non-negative
/// values), so precision is relative to each value, not to an offset.
#[derive(Clone)]
pub struct SignedHist {
    neg: Histogram<u64>,
    pos: Histogram<u64>,
    min: i64,
    max: i64,
    sum: i128,
    sum_sq: f64,
}

impl Default for SignedHist {
    fn default() -> Self {
        Self::new()
    }
}

/// Summary of a signed ns distribution.
#[derive(Serialize, Debug, Clone, Default)]
pub struct SignedSummary {
    /// Number of values.
    pub count: u64,
    /// Smallest value, ns (exact).
    pub min_ns: Option<i64>,
    /// 1st percentile, ns.
    pub p1_ns: Option<i64>,
    /// Median, ns.
    pub p50_ns: Option<i64>,
    /// 99th percentile, ns.
    pub p99_ns: Option<i64>,
    /// Largest value, ns (exact).
    pub max_ns: Option<i64>,
    /// Mean, ns.
    pub mean_ns: Option<f64>,
    /// Population standard deviation, ns.
    pub stddev_ns: Option<f64>,
}

impl SignedHist {
    /// Empty.
    pub fn new() -> Self {
        SignedHist {
            neg: new_hist(),
            pos: new_hist(),
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            sum_sq: 0.0,
        }
    }

    /// Add one value.
    #[inline]
    pub fn record(&mut self, v: i64) {
        if v < 0 {
            let _ = self.neg.record(v.unsigned_abs().min(i64::MAX as u64));
        } else {
            let _ = self.pos.record(v as u64);
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as i128;
        self.sum_sq += (v as f64) * (v as f64);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.neg.len() + self.pos.len()
    }

    /// Smallest value.
    pub fn min(&self) -> Option<i64> {
        (self.count() > 0).then_some(self.min)
    }

    /// Value at quantile q (0..=1).
    pub fn quantile(&self, q: f64) -> Option<i64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let nneg = self.neg.len();
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let v = if rank <= nneg {
            // rank-th smallest signed value = the (nneg - rank + 1)-th smallest magnitude, negated
            let qq = (nneg - rank + 1) as f64 / nneg as f64;
            -(self.neg.value_at_quantile(qq) as i64)
        } else {
            let npos = self.pos.len();
            let qq = (rank - nneg) as f64 / npos as f64;
            self.pos.value_at_quantile(qq) as i64
        };
        Some(v.clamp(self.min, self.max))
    }

    /// The JSON summary, each value shifted by `offset` (e.g. to turn delays relative to a base
    /// into absolute ones).
    pub fn summary_shifted(&self, offset: i64) -> SignedSummary {
        let n = self.count();
        if n == 0 {
            return SignedSummary::default();
        }
        let mean = self.sum as f64 / n as f64;
        let var = (self.sum_sq / n as f64 - mean * mean).max(0.0);
        SignedSummary {
            count: n,
            // saturating: a garbage stamp in the data must not overflow the report
            min_ns: Some(self.min.saturating_add(offset)),
            p1_ns: self.quantile(0.01).map(|v| v.saturating_add(offset)),
            p50_ns: self.quantile(0.5).map(|v| v.saturating_add(offset)),
            p99_ns: self.quantile(0.99).map(|v| v.saturating_add(offset)),
            max_ns: Some(self.max.saturating_add(offset)),
            mean_ns: Some(mean + offset as f64),
            stddev_ns: Some(var.sqrt()),
        }
    }

    /// The JSON summary.
    pub fn summary(&self) -> SignedSummary {
        self.summary_shifted(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_summary() {
        let mut h = NsHist::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ns, Some(1000));
        assert_eq!(s.max_ns, Some(1_000_000));
        let p50 = s.p50_ns.unwrap() as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.002, "{p50}");
        let p99 = s.p99_ns.unwrap() as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.002, "{p99}");
    }

    #[test]
    fn signed_quantiles() {
        let mut h = SignedHist::new();
        for v in -500i64..500 {
            h.record(v * 100);
        }
        let s = h.summary();
        assert_eq!(s.min_ns, Some(-50_000));
        assert_eq!(s.max_ns, Some(49_900));
        let p50 = s.p50_ns.unwrap();
        assert!((-200..=100).contains(&p50), "{p50}");
        let p1 = s.p1_ns.unwrap();
        assert!((p1 - -49_100).abs() < 100, "{p1}");
        let p99 = s.p99_ns.unwrap();
        assert!((p99 - 48_900).abs() < 100, "{p99}");
        assert!(s.mean_ns.unwrap().abs() < 100.0);
    }

    #[test]
    fn signed_all_negative_and_shift() {
        let mut h = SignedHist::new();
        for v in [-3i64, -2, -1] {
            h.record(v * 1000);
        }
        let s = h.summary_shifted(10_000);
        assert_eq!(s.min_ns, Some(7000));
        assert_eq!(s.max_ns, Some(9000));
        assert_eq!(s.p50_ns, Some(8000));
    }

    #[test]
    fn empty() {
        assert_eq!(NsHist::new().summary().count, 0);
        assert!(SignedHist::new().summary().p50_ns.is_none());
    }
}
