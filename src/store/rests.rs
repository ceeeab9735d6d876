//! Each revision's last rest (see [`crate::measure::wake::Rest`]): one row per revision,
//! replaced whenever it changes, read once at start. And since when the service has
//! watched, which tells a restarted process which revisions were born in its time.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, time_of};
use crate::measure::wake::{PaRest, Rest, RestAt};

const NO_TRAFFIC: &str = "NoTraffic";
const TIMED_OUT: &str = "TimedOut";

impl Store {
    /// Keeps these rests, each replacing its revision's last, in one transaction: a list
    /// of a large fleet brings them by the ten thousand.
    pub async fn put_rests(&self, rests: &[Rest]) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        for r in rests {
            let pa = r.at.autoscaler;
            sqlx::query(
                "INSERT INTO rests (revision_uid, generation, deployment_ms, pa_reason, \
                 pa_since_ms, pa_seen_ms, pa_initialized, after_start_second) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                 ON CONFLICT (revision_uid) DO UPDATE SET generation = excluded.generation, \
                 deployment_ms = excluded.deployment_ms, pa_reason = excluded.pa_reason, \
                 pa_since_ms = excluded.pa_since_ms, pa_seen_ms = excluded.pa_seen_ms, \
                 pa_initialized = excluded.pa_initialized, \
                 after_start_second = excluded.after_start_second",
            )
            .bind(&r.revision_uid)
            .bind(r.at.deployment.map(|(g, _)| g))
            .bind(r.at.deployment.map(|(_, at)| at.timestamp_millis()))
            .bind(pa.map(|p| if p.timed_out { TIMED_OUT } else { NO_TRAFFIC }))
            .bind(pa.map(|p| p.since.timestamp_millis()))
            .bind(pa.map(|p| p.seen.timestamp_millis()))
            .bind(pa.map(|p| i64::from(p.initialized)))
            .bind(r.at.after_start)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Every revision's last rest.
    pub async fn rests(&self) -> Result<Vec<Rest>, StoreError> {
        let rows = sqlx::query(
            "SELECT revision_uid, generation, deployment_ms, pa_reason, pa_since_ms, pa_seen_ms, \
             pa_initialized, after_start_second FROM rests ORDER BY revision_uid",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let deployment = match (
                    row.try_get::<Option<i64>, _>(1)?,
                    row.try_get::<Option<i64>, _>(2)?,
                ) {
                    (Some(g), Some(ms)) => Some((g, time_of("rests.deployment_ms", ms)?)),
                    _ => None,
                };
                let autoscaler = match (
                    row.try_get::<Option<String>, _>(3)?,
                    row.try_get::<Option<i64>, _>(4)?,
                    row.try_get::<Option<i64>, _>(5)?,
                    row.try_get::<Option<i64>, _>(6)?,
                ) {
                    (Some(reason), Some(since), Some(seen), initialized) => Some(PaRest {
                        timed_out: reason == TIMED_OUT,
                        initialized: initialized == Some(1),
                        since: time_of("rests.pa_since_ms", since)?,
                        seen: time_of("rests.pa_seen_ms", seen)?,
                    }),
                    _ => None,
                };
                Ok(Rest {
                    revision_uid: row.try_get(0)?,
                    at: RestAt {
                        deployment,
                        autoscaler,
                        after_start: row.try_get(7)?,
                    },
                })
            })
            .collect()
    }

    /// Keeps `since` as when the service began watching, unless an earlier time is kept:
    /// the earliest wins in the statement itself, so two processes telling theirs at once
    /// leave the earlier.
    pub async fn put_watching_since(&self, since: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO watching (id, since_ms) VALUES (1, $1) \
             ON CONFLICT (id) DO UPDATE SET since_ms = excluded.since_ms \
             WHERE excluded.since_ms < watching.since_ms",
        )
        .bind(since.timestamp_millis())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Since when the service has watched; None before its first sync.
    pub async fn watching_since(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let ms: Option<i64> = sqlx::query_scalar("SELECT since_ms FROM watching WHERE id = 1")
            .fetch_optional(self.pool())
            .await?;
        ms.map(|ms| time_of("watching.since_ms", ms)).transpose()
    }
}
