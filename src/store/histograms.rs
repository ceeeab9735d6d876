//! Histogram blobs (HdrHistogram V2 + deflate) per revision, series and time bucket.
//!
//! A series names what was measured: `served` for whole wakes, or a phase name. The
//! measuring side decides the bucket width; the store only keeps and returns blobs, and
//! decodes them so that a corrupt row is reported here rather than deep in a read.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, time_of};
use crate::measure::histogram::LatencyHistogram;

/// One stored histogram.
#[derive(Debug, Clone)]
pub struct StoredHistogram {
    pub revision_uid: String,
    pub series: String,
    pub bucket_start: DateTime<Utc>,
    pub histogram: LatencyHistogram,
}

impl Store {
    /// Writes (or replaces) the histogram of one revision, series and bucket.
    pub async fn save_histogram(
        &self,
        revision_uid: &str,
        series: &str,
        bucket_start: DateTime<Utc>,
        histogram: &LatencyHistogram,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let blob = histogram
            .encode()
            .map_err(|e| StoreError::corrupt("histogram", e))?;
        sqlx::query(
            "INSERT INTO histograms (revision_uid, series, bucket_start_ms, sample_count, blob, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (revision_uid, series, bucket_start_ms) \
             DO UPDATE SET sample_count = excluded.sample_count, blob = excluded.blob, \
             updated_ms = excluded.updated_ms",
        )
        .bind(revision_uid)
        .bind(series)
        .bind(bucket_start.timestamp_millis())
        .bind(super::to_i64(histogram.len()))
        .bind(blob)
        .bind(at.timestamp_millis())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every histogram whose bucket starts at or after `since`, oldest bucket first.
    pub async fn histograms_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<StoredHistogram>, StoreError> {
        let rows = sqlx::query(
            "SELECT revision_uid, series, bucket_start_ms, blob FROM histograms \
             WHERE bucket_start_ms >= $1 ORDER BY bucket_start_ms, revision_uid, series",
        )
        .bind(since.timestamp_millis())
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let blob: Vec<u8> = row.try_get(3)?;
                Ok(StoredHistogram {
                    revision_uid: row.try_get(0)?,
                    series: row.try_get(1)?,
                    bucket_start: time_of("histograms.bucket_start_ms", row.try_get(2)?)?,
                    histogram: LatencyHistogram::decode(&blob)
                        .map_err(|e| StoreError::corrupt("histograms.blob", e))?,
                })
            })
            .collect()
    }

    /// Deletes buckets that started before `before`; returns how many.
    pub async fn prune_histograms(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM histograms WHERE bucket_start_ms < $1")
            .bind(before.timestamp_millis())
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }
}
