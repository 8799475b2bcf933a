//! An HDR histogram with the exact sum Prometheus wants beside it.

use hdrhistogram::Histogram;

#[derive(Clone, Debug)]
pub struct Hist {
    hist: Histogram<u64>,
    sum: u64,
}

/// Largest value recorded as itself; larger ones are clamped (an hour in µs, a second in ns).
const HIGHEST: u64 = 3_600_000_000;
/// Two significant figures: 1% resolution is plenty for latency buckets, and keeps a
/// histogram at a few KB.
const SIGFIG: u8 = 2;

impl Default for Hist {
    fn default() -> Self {
        Hist::new()
    }
}

impl Hist {
    pub fn new() -> Hist {
        // Invariant: the bounds are constants hdrhistogram accepts (1 ≤ low, high ≥ 2·low, sigfig ≤ 5).
        let hist = Histogram::new_with_bounds(1, HIGHEST, SIGFIG).expect("valid histogram bounds");
        Hist { hist, sum: 0 }
    }

    pub fn record(&mut self, value: u64) {
        self.hist.saturating_record(value.max(1));
        self.sum = self.sum.saturating_add(value);
    }

    pub fn add(&mut self, other: &Hist) {
        // Same bounds on both sides: adding cannot fail; clamp if it somehow did.
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                self.hist.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.sum = self.sum.saturating_add(other.sum);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// Cumulative counts at each upper bound (same unit as the recorded values), Prometheus
    /// style: `out[i]` counts values ≤ `bounds[i]`. Values are bucketed by their HDR bucket's
    /// lowest equivalent value, so a bound splits at the histogram's 1% resolution.
    pub fn cumulative(&self, bounds: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; bounds.len()];
        for v in self.hist.iter_recorded() {
            let value = self.hist.lowest_equivalent(v.value_iterated_to());
            if let Some(first) = bounds.iter().position(|&b| value <= b) {
                out[first] += v.count_at_value();
            }
        }
        let mut running = 0;
        for c in &mut out {
            running += *c;
            *c = running;
        }
        out
    }

    pub fn quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_buckets_and_merge() {
        let mut a = Hist::new();
        for v in [5, 50, 500, 5000] {
            a.record(v);
        }
        let mut b = Hist::new();
        b.record(50);
        a.add(&b);
        assert_eq!(a.count(), 5);
        assert_eq!(a.sum(), 5605);
        assert_eq!(a.cumulative(&[10, 100, 1000]), vec![1, 3, 4]);
    }
}
