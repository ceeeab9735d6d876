//! One row per wake. The unique key (revision UID, start second) makes recording
//! idempotent: whoever records the same wake again, after a restart, a relist or from a
//! second replica, changes nothing and learns that it was already there.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError, time_of, to_i64, to_u64};
use scaling_facts_api::{PhaseDurations, WakeRecord};

/// The columns of a [`WakeRecord`], in the order [`wake_of`] reads them.
macro_rules! columns {
    () => {
        "release_key, revision, revision_uid, kind, outcome, requested_ms, serving_ms, \
         duration_ms, provisioning_ms, pulling_image_ms, starting_ms, precision, \
         failure_reason, failure_message, start_second, caused_by"
    };
}

impl Store {
    /// Records a wake; returns false when a wake with the same revision UID and start
    /// second was already recorded (the stored one is kept).
    pub async fn record_wake(
        &self,
        w: &WakeRecord,
        recorded_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let opt = |v: Option<u64>| v.map(to_i64);
        let done = sqlx::query(concat!(
            "INSERT INTO wakes (",
            columns!(),
            ", recorded_ms) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
             ON CONFLICT (revision_uid, start_second) DO NOTHING"
        ))
        .bind(&w.release)
        .bind(&w.revision)
        .bind(&w.revision_uid)
        .bind(w.kind.as_str())
        .bind(w.outcome.as_str())
        .bind(w.requested_at.timestamp_millis())
        .bind(w.serving_at.map(|t| t.timestamp_millis()))
        .bind(to_i64(w.duration_ms))
        .bind(opt(w.phases.provisioning_ms))
        .bind(opt(w.phases.pulling_image_ms))
        .bind(opt(w.phases.starting_ms))
        .bind(w.precision.as_str())
        .bind(w.failure_reason.as_deref())
        .bind(w.failure_message.as_deref())
        .bind(w.start_second)
        .bind(w.caused_by.as_deref())
        .bind(recorded_at.timestamp_millis())
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes one wake (a second record of a wake stored under a neighbouring second).
    pub async fn delete_wake(
        &self,
        revision_uid: &str,
        start_second: i64,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM wakes WHERE revision_uid = $1 AND start_second = $2")
            .bind(revision_uid)
            .bind(start_second)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The newest `limit` wakes of a revision, newest first.
    pub async fn recent_wakes(
        &self,
        revision_uid: &str,
        limit: u32,
    ) -> Result<Vec<WakeRecord>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM wakes WHERE revision_uid = $1 ORDER BY requested_ms DESC, id DESC LIMIT $2"
        ))
        .bind(revision_uid)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(wake_of).collect()
    }

    /// Every wake requested at or after `since`, oldest first: what a starting service
    /// replays to rebuild its windows.
    pub async fn wakes_since(&self, since: DateTime<Utc>) -> Result<Vec<WakeRecord>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM wakes WHERE requested_ms >= $1 ORDER BY requested_ms, id"
        ))
        .bind(since.timestamp_millis())
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(wake_of).collect()
    }

    /// Deletes the wakes requested before `before`; returns how many.
    pub async fn prune_wakes(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM wakes WHERE requested_ms < $1")
            .bind(before.timestamp_millis())
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    pub async fn count_wakes(&self, revision_uid: &str) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query("SELECT COUNT(*) FROM wakes WHERE revision_uid = $1")
            .bind(revision_uid)
            .fetch_one(self.pool())
            .await?
            .try_get(0)?;
        to_u64("wakes count", n)
    }
}

fn wake_of(row: &AnyRow) -> Result<WakeRecord, StoreError> {
    let opt = |i: usize| -> Result<Option<u64>, StoreError> {
        row.try_get::<Option<i64>, _>(i)?
            .map(|v| to_u64("wakes phase", v))
            .transpose()
    };
    let text = |i: usize| -> Result<String, StoreError> { Ok(row.try_get(i)?) };
    Ok(WakeRecord {
        release: text(0)?,
        revision: text(1)?,
        revision_uid: text(2)?,
        kind: text(3)?
            .parse()
            .map_err(|e| StoreError::corrupt("wakes.kind", e))?,
        outcome: text(4)?
            .parse()
            .map_err(|e| StoreError::corrupt("wakes.outcome", e))?,
        requested_at: time_of("wakes.requested_ms", row.try_get(5)?)?,
        serving_at: row
            .try_get::<Option<i64>, _>(6)?
            .map(|ms| time_of("wakes.serving_ms", ms))
            .transpose()?,
        duration_ms: to_u64("wakes.duration_ms", row.try_get(7)?)?,
        phases: PhaseDurations {
            provisioning_ms: opt(8)?,
            pulling_image_ms: opt(9)?,
            starting_ms: opt(10)?,
        },
        precision: text(11)?
            .parse()
            .map_err(|e| StoreError::corrupt("wakes.precision", e))?,
        failure_reason: row.try_get(12)?,
        failure_message: row.try_get(13)?,
        start_second: row.try_get(14)?,
        caused_by: row.try_get(15)?,
    })
}
