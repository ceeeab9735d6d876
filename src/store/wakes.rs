//! One row per wake. The unique key (revision UID, start second) makes recording
//! idempotent: whoever records the same wake again, after a restart, a relist or from a
//! second replica, changes nothing and learns that it was already there.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError, time_of, to_i64, to_u64};
use crate::measure::tracker::end_ms;
use scaling_facts_api::{PhaseDurations, Precision, WakeRecord};

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
        let query = sqlx::query(concat!(
            "INSERT INTO wakes (",
            columns!(),
            ", recorded_ms) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
             ON CONFLICT (revision_uid, start_second) DO NOTHING"
        ));
        let done = bind_wake(query, w, recorded_at)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a wake unless the store holds the same wake under another start second:
    /// one of the same revision and kind whose request and whose end are each within a
    /// second of this one's (two when either record is known only to the second), as
    /// another replica measures it by its own arrival times, or a restarted one from
    /// timestamps. Two real wakes of a revision are never that close at both ends: the next
    /// begins only after the last has ended and its revision has scaled back to zero.
    /// Returns whether it was recorded.
    pub async fn record_wake_once(
        &self,
        w: &WakeRecord,
        recorded_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let query = sqlx::query(concat!(
            "INSERT INTO wakes (",
            columns!(),
            ", recorded_ms) SELECT \
             $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 \
             WHERE NOT EXISTS (SELECT 1 FROM wakes WHERE revision_uid = $3 AND kind = $4 \
             AND ABS(requested_ms - $6) <= (CASE WHEN precision = 's' THEN 2000 ELSE $18 END) \
             AND ABS(COALESCE(serving_ms, requested_ms + duration_ms) - $19) \
                 <= (CASE WHEN precision = 's' THEN 2000 ELSE $18 END)) \
             ON CONFLICT (revision_uid, start_second) DO NOTHING"
        ));
        let done = bind_wake(query, w, recorded_at)
            .bind(same_wake_within_ms(w.precision))
            .bind(end_ms(w))
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The wakes stored after row `after`, in the order they were stored, at most
    /// `limit`: how every replica follows what the writer stores.
    pub async fn wakes_after(
        &self,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(u64, WakeRecord)>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            ", id FROM wakes WHERE id > $1 ORDER BY id LIMIT $2"
        ))
        .bind(to_i64(after))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| Ok((to_u64("wakes.id", row.try_get(16)?)?, wake_of(row)?)))
            .collect()
    }

    /// The newest row's id (0 for none): where following the store begins.
    pub async fn last_wake_id(&self) -> Result<u64, StoreError> {
        let id: Option<i64> = sqlx::query("SELECT MAX(id) FROM wakes")
            .fetch_one(self.pool())
            .await?
            .try_get(0)?;
        to_u64("wakes.id", id.unwrap_or(0))
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
        self.wakes_since_upto(since, u64::MAX).await
    }

    /// [`Store::wakes_since`], of the rows up to id `upto` only: with [`Store::last_wake_id`]
    /// read first, a history that [`Store::wakes_after`] continues with no row twice.
    pub async fn wakes_since_upto(
        &self,
        since: DateTime<Utc>,
        upto: u64,
    ) -> Result<Vec<WakeRecord>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM wakes WHERE requested_ms >= $1 AND id <= $2 ORDER BY requested_ms, id"
        ))
        .bind(since.timestamp_millis())
        .bind(to_i64(upto))
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

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds a wake's columns as `$1` to `$17`, in [`columns!`]' order and then `recorded_ms`.
fn bind_wake<'q>(query: Query<'q>, w: &'q WakeRecord, recorded_at: DateTime<Utc>) -> Query<'q> {
    let opt = |v: Option<u64>| v.map(to_i64);
    query
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
}

/// How far apart two records' requests may be and still be one wake, for a record of
/// this precision against one known to the millisecond ([`Store::record_wake_once`]).
pub fn same_wake_within_ms(precision: Precision) -> i64 {
    match precision {
        Precision::S => 2_000,
        Precision::Ms => 1_000,
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
