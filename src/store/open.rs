//! The wakes underway: a row per wake while it lasts, so that a service killed mid-wake
//! continues the wake after its restart. Without it, a wake whose end falls in the
//! downtime leaves nothing in the cluster that tells when it began. A revision has one,
//! or several while older ones that ended during an outage wait for their verdicts; its
//! rows are numbered oldest first and always replaced together.

use sqlx::Row;

use super::{Store, StoreError, time_of};
use crate::measure::wake::{OpenChange, OpenWake};
use scaling_facts_api::Failure;

impl Store {
    /// Notes that a wake began (or that what is known of it changed), or that it ended.
    pub async fn apply_open(&self, change: &OpenChange) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM open_wakes WHERE revision_uid = $1")
            .bind(change.revision_uid())
            .execute(&mut *tx)
            .await?;
        for (ordinal, w) in change.wakes().iter().enumerate() {
            insert(w, ordinal).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Makes `open` the wakes underway, and only them: a new writer's own view, stored as
    /// it begins writing, over whatever the last writer left.
    pub async fn replace_open(&self, open: &[OpenWake]) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM open_wakes")
            .execute(&mut *tx)
            .await?;
        // Each revision's rows (together, oldest first) numbered as they come.
        for rows in open.chunk_by(|a, b| a.revision_uid == b.revision_uid) {
            for (ordinal, w) in rows.iter().enumerate() {
                insert(w, ordinal).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Every wake underway when the last process stopped, each revision's oldest first.
    pub async fn open_wakes(&self) -> Result<Vec<OpenWake>, StoreError> {
        let rows = sqlx::query(
            "SELECT revision_uid, kind, start_second, requested_ms, ended_ms, trouble_reason, \
             trouble_message, ended_undated FROM open_wakes \
             ORDER BY revision_uid, ordinal",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(OpenWake {
                    revision_uid: row.try_get(0)?,
                    kind: row
                        .try_get::<String, _>(1)?
                        .parse()
                        .map_err(|e| StoreError::corrupt("open_wakes.kind", e))?,
                    start_second: row.try_get(2)?,
                    requested_at: time_of("open_wakes.requested_ms", row.try_get(3)?)?,
                    ended_at: row
                        .try_get::<Option<i64>, _>(4)?
                        .map(|ms| time_of("open_wakes.ended_ms", ms))
                        .transpose()?,
                    ended_undated: row.try_get::<Option<i64>, _>(7)? == Some(1),
                    trouble: match (
                        row.try_get::<Option<String>, _>(5)?,
                        row.try_get::<Option<String>, _>(6)?,
                    ) {
                        (Some(reason), message) => Some(Failure {
                            reason,
                            message: message.unwrap_or_default(),
                        }),
                        (None, _) => None,
                    },
                })
            })
            .collect()
    }
}

fn insert(
    w: &OpenWake,
    ordinal: usize,
) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(
        "INSERT INTO open_wakes \
         (revision_uid, ordinal, kind, start_second, requested_ms, ended_ms, trouble_reason, \
         trouble_message, ended_undated) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&w.revision_uid)
    .bind(i64::try_from(ordinal).unwrap_or(i64::MAX))
    .bind(w.kind.as_str())
    .bind(w.start_second)
    .bind(w.requested_at.timestamp_millis())
    .bind(w.ended_at.map(|e| e.timestamp_millis()))
    .bind(w.trouble.as_ref().map(|t| t.reason.as_str()))
    .bind(w.trouble.as_ref().map(|t| t.message.as_str()))
    .bind(i64::from(w.ended_undated))
}
