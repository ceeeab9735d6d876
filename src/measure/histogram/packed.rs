//! A histogram as it is kept between wakes: its V2 encoding, behind the latest values not
//! yet folded into it.
//!
//! Recording into an encoded histogram means decoding it (8 KiB of counters allocated and
//! zeroed), recording, and encoding it again; four series a wake made that most of the
//! state machine's cost. Here a recorded value is appended, and the histogram is decoded
//! and encoded once per [`FOLD_AFTER`] values, when they are folded in. Whoever reads it
//! unpacks it with the values it has not folded yet, so nothing read depends on when a
//! fold happened.
//!
//! Layout: one byte `n`, then `n` little-endian `u32` values, then the V2 encoding (empty
//! for a histogram that has only unfolded values).

use super::{HistogramError, LatencyHistogram};

/// Values appended before they are folded into the encoding: 32 of them are 128 bytes,
/// against the 8 KiB decode and the encode they save.
pub const FOLD_AFTER: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedHistogram(Box<[u8]>);

impl Default for PackedHistogram {
    fn default() -> Self {
        Self(Box::new([0]))
    }
}

impl PackedHistogram {
    pub fn pack(h: &LatencyHistogram) -> Result<Self, HistogramError> {
        let mut bytes = vec![0];
        bytes.extend(h.encode()?);
        Ok(Self(bytes.into_boxed_slice()))
    }

    fn pending(&self) -> impl Iterator<Item = u64> + '_ {
        let n = usize::from(self.0[0]);
        self.0[1..1 + 4 * n]
            .chunks_exact(4)
            .map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
    }

    fn encoded(&self) -> &[u8] {
        &self.0[1 + 4 * usize::from(self.0[0])..]
    }

    /// The histogram with every value recorded into it.
    pub fn unpack(&self) -> Result<LatencyHistogram, HistogramError> {
        let mut h = match self.encoded() {
            [] => LatencyHistogram::new(),
            blob => LatencyHistogram::decode(blob)?,
        };
        for v in self.pending() {
            h.record(v);
        }
        Ok(h)
    }

    /// Records one latency (clamped as [`LatencyHistogram::record`] does).
    pub fn record(&mut self, ms: u64) -> Result<(), HistogramError> {
        let n = usize::from(self.0[0]);
        if n + 1 >= FOLD_AFTER {
            let mut h = self.unpack()?;
            h.record(ms);
            *self = Self::pack(&h)?;
            return Ok(());
        }
        let v = ms.min(u64::from(u32::MAX)) as u32;
        let mut bytes = Vec::with_capacity(self.0.len() + 4);
        bytes.push(self.0[0] + 1);
        bytes.extend_from_slice(&self.0[1..1 + 4 * n]);
        bytes.extend_from_slice(&v.to_le_bytes());
        bytes.extend_from_slice(self.encoded());
        self.0 = bytes.into_boxed_slice();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacked_the_same_as_recorded_directly_across_folds() {
        let mut packed = PackedHistogram::default();
        let mut direct = LatencyHistogram::new();
        for i in 0..(3 * FOLD_AFTER as u64 + 5) {
            let ms = [0, 1, 7, 150, 2_500, 9_999_999][i as usize % 6] + i;
            packed.record(ms).unwrap();
            direct.record(ms);
            let got = packed.unpack().unwrap();
            assert_eq!(got.len(), direct.len(), "after {} values", i + 1);
            assert_eq!(
                got.percentiles(),
                direct.percentiles(),
                "after {} values",
                i + 1
            );
            assert_eq!(got.buckets(), direct.buckets(), "after {} values", i + 1);
        }
        assert!(
            usize::from(packed.0[0]) < FOLD_AFTER,
            "values are folded, not kept"
        );
    }

    #[test]
    fn an_empty_one_unpacks_empty_and_a_packed_one_round_trips() {
        assert!(PackedHistogram::default().unpack().unwrap().is_empty());
        let mut h = LatencyHistogram::new();
        h.record(42);
        let packed = PackedHistogram::pack(&h).unwrap();
        assert_eq!(packed.unpack().unwrap().percentiles(), h.percentiles());
    }
}
