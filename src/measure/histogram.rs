//! Wake latencies in an HDR histogram: milliseconds from 1 ms to 1 h at two significant
//! digits, u32 counters (2,048 of them, 8 KiB), kept in memory in HdrHistogram's V2
//! encoding (runs of zeros collapse: a sparse histogram is tens of bytes).
//!
//! Not V2 + deflate: for histograms this sparse, deflate saves a few bytes and costs the
//! setting up of its tables on every encode and decode, which was most of the time it took
//! to record a wake.
//!
//! Percentiles scan the counters, so callers compute them when a wake is recorded and keep
//! the result; nothing here is meant for the per-request read path.

mod packed;
pub use packed::PackedHistogram;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

use scaling_facts_api::{HistogramBucket, Percentiles};

thread_local! {
    /// The encoder and decoder, kept: each holds a scratch buffer sized for the largest
    /// encoding (18 KiB for the serializer), which a new one allocates and zeroes, and
    /// which took most of the time of recording a wake when made per histogram.
    static CODEC: std::cell::RefCell<(V2Serializer, Deserializer)> =
        std::cell::RefCell::new((V2Serializer::new(), Deserializer::new()));
}

/// Lowest recordable latency.
pub const LOWEST_MS: u64 = 1;
/// Highest recordable latency; longer wakes are recorded as one hour.
pub const HIGHEST_MS: u64 = 3_600_000;
const SIGFIG: u8 = 2;

/// Bucket bounds for plotting: 1-2-5 steps from 10 ms to one hour.
const PLOT_BOUNDS_MS: [u64; 18] = [
    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000, 1_000_000, 2_000_000, 3_600_000,
];

#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram blob could not be decoded")]
    Decode(#[source] hdrhistogram::serialization::DeserializeError),
    #[error("histogram could not be encoded")]
    Encode(#[source] hdrhistogram::serialization::V2SerializeError),
    #[error("histogram has other bounds than 1 ms to 1 h")]
    Bounds,
}

/// A latency histogram in milliseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u32>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(LOWEST_MS, HIGHEST_MS, SIGFIG)
            .expect("constant bounds are valid");
        Self { inner }
    }

    /// Records one latency, clamped into 1 ms to 1 h so that no wake is ever dropped.
    pub fn record(&mut self, ms: u64) {
        self.inner
            .saturating_record(ms.clamp(LOWEST_MS, HIGHEST_MS));
    }

    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Adds another histogram's counts (merging time buckets into a window).
    pub fn add(&mut self, other: &LatencyHistogram) {
        self.inner
            .add(&other.inner)
            .expect("histograms share bounds, so adding cannot fail");
    }

    /// The latency at percentile `p` (0 to 100) of `values`, in milliseconds, as a histogram
    /// of them would give it, without building one (8 KiB of counters to zero, then scan):
    /// the value at the same rank, rounded up to the top of its bucket. None when empty.
    pub fn percentile_of(mut values: Vec<u64>, p: f64) -> Option<u64> {
        if values.is_empty() {
            return None;
        }
        /// No counts, only the bucket layout that rounding needs.
        static LAYOUT: std::sync::LazyLock<Histogram<u32>> = std::sync::LazyLock::new(|| {
            Histogram::new_with_bounds(LOWEST_MS, HIGHEST_MS, SIGFIG).expect("constant bounds")
        });
        let q = (p / 100.0).clamp(0.0, 1.0);
        let rank = ((q * values.len() as f64).ceil() as usize).max(1);
        let (_, v, _) = values.select_nth_unstable(rank - 1);
        let v = (*v).clamp(LOWEST_MS, HIGHEST_MS);
        Some(if q == 0.0 {
            LAYOUT.lowest_equivalent(v)
        } else {
            LAYOUT.highest_equivalent(v)
        })
    }

    pub fn percentiles(&self) -> Option<Percentiles> {
        if self.inner.is_empty() {
            return None;
        }
        // One pass for the four, rather than a scan of the counters each.
        let mut at = self.inner.value_at_quantiles([0.50, 0.90, 0.95, 0.99]);
        let mut next = || at.next().expect("one value per quantile");
        Some(Percentiles {
            count: self.inner.len(),
            p50_ms: next(),
            p90_ms: next(),
            p95_ms: next(),
            p99_ms: next(),
            max_ms: self.inner.max(),
        })
    }

    /// Counts in 1-2-5 buckets up to the largest non-empty one. A bucket `(low, le]`
    /// counts every recorded value whose equivalence range reaches into it, as
    /// `count_between(low, le)` does, but in one pass over what was recorded instead of a
    /// scan of the counters per bucket.
    pub fn buckets(&self) -> Vec<HistogramBucket> {
        if self.inner.is_empty() {
            return Vec::new();
        }
        let max = self.inner.max();
        let shown = PLOT_BOUNDS_MS
            .iter()
            .position(|&le| le >= max)
            .map_or(PLOT_BOUNDS_MS.len(), |i| i + 1);
        let mut out: Vec<HistogramBucket> = PLOT_BOUNDS_MS[..shown]
            .iter()
            .map(|&le| HistogramBucket {
                le_ms: le,
                count: 0,
            })
            .collect();
        for v in self.inner.iter_recorded() {
            let (lowest, highest) = (
                self.inner.lowest_equivalent(v.value_iterated_to()),
                self.inner.highest_equivalent(v.value_iterated_to()),
            );
            let mut low = LOWEST_MS;
            for b in &mut out {
                if highest >= low && lowest <= b.le_ms {
                    b.count += v.count_since_last_iteration();
                }
                low = b.le_ms + 1;
            }
        }
        out
    }

    /// The V2 encoding, as kept.
    pub fn encode(&self) -> Result<Vec<u8>, HistogramError> {
        let mut buf = Vec::with_capacity(64);
        CODEC.with_borrow_mut(|(serializer, _)| {
            serializer
                .serialize(&self.inner, &mut buf)
                .map_err(HistogramError::Encode)
        })?;
        Ok(buf)
    }

    pub fn decode(blob: &[u8]) -> Result<Self, HistogramError> {
        let inner: Histogram<u32> = CODEC
            .with_borrow_mut(|(_, deserializer)| {
                deserializer.deserialize(&mut std::io::Cursor::new(blob))
            })
            .map_err(HistogramError::Decode)?;
        if inner.low() != LOWEST_MS || inner.high() != HIGHEST_MS {
            return Err(HistogramError::Bounds);
        }
        Ok(Self { inner })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_two_significant_digits() {
        let mut h = LatencyHistogram::new();
        for ms in 1..=1000u64 {
            h.record(ms * 10);
        }
        let p = h.percentiles().unwrap();
        assert_eq!(p.count, 1000);
        assert!((p.p95_ms as f64 - 9500.0).abs() <= 9500.0 * 0.01, "{p:?}");
        assert!((p.max_ms as f64 - 10_000.0).abs() <= 100.0, "{p:?}");
    }

    #[test]
    fn out_of_range_values_are_clamped_not_dropped() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(10 * HIGHEST_MS);
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn encoding_round_trips_and_is_small() {
        let mut h = LatencyHistogram::new();
        for i in 0..1000u64 {
            h.record(800 + (i * 37) % 4000);
        }
        let blob = h.encode().unwrap();
        assert!(blob.len() < 2048, "{} bytes", blob.len());
        let back = LatencyHistogram::decode(&blob).unwrap();
        assert_eq!(back.percentiles(), h.percentiles());
    }

    /// The one-pass figures are the ones hdrhistogram's own scans give.
    #[test]
    fn one_pass_figures_match_the_scans() {
        let mut h = LatencyHistogram::new();
        for i in 0..5_000u64 {
            h.record(1 + (i * i * 7919) % 900_000);
        }
        for ms in [1, 10, 11, 999, 1_000, 1_001, 3_600_000] {
            h.record(ms);
        }
        let p = h.percentiles().unwrap();
        let at = |q| h.inner.value_at_quantile(q);
        assert_eq!(
            (p.p50_ms, p.p90_ms, p.p95_ms, p.p99_ms),
            (at(0.5), at(0.9), at(0.95), at(0.99))
        );
        let mut low = LOWEST_MS;
        for b in h.buckets() {
            assert_eq!(b.count, h.inner.count_between(low, b.le_ms), "{b:?}");
            low = b.le_ms + 1;
        }
    }

    /// A percentile of a handful of values is the histogram's, for any handful.
    #[test]
    fn percentile_of_values_matches_the_histogram() {
        let mut seed = 7u64;
        for n in 1..150 {
            let values: Vec<u64> = (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 33) % 4_000_000
                })
                .collect();
            let mut h = LatencyHistogram::new();
            for v in &values {
                h.record(*v);
            }
            for p in [0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
                assert_eq!(
                    LatencyHistogram::percentile_of(values.clone(), p),
                    Some(h.inner.value_at_percentile(p)),
                    "{n} values, p{p}"
                );
            }
        }
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(LatencyHistogram::decode(b"not a histogram").is_err());
    }

    #[test]
    fn buckets_cover_every_sample() {
        let mut h = LatencyHistogram::new();
        for ms in [5, 150, 150, 2_500, 70_000] {
            h.record(ms);
        }
        let b = h.buckets();
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(b.last().unwrap().le_ms, 100_000);
    }
}
