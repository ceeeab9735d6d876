//! Releases and revisions as the watcher last saw them, so that reports can name a
//! revision after it is gone and a restarted service knows what it measured before.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, time_of};

/// A release (Knative Service) as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseRow {
    pub release: String,
    pub namespace: String,
    pub service: String,
    pub service_uid: String,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

/// A revision as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionRow {
    pub revision_uid: String,
    pub release: String,
    pub namespace: String,
    pub name: String,
    pub created: DateTime<Utc>,
}

impl Store {
    /// Records that a release exists; `first_seen` of an existing row is kept.
    pub async fn upsert_release(&self, r: &ReleaseRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO releases (release_key, namespace, service, service_uid, first_seen_ms, last_seen_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (release_key) DO UPDATE SET namespace = excluded.namespace, \
             service = excluded.service, service_uid = excluded.service_uid, \
             last_seen_ms = excluded.last_seen_ms",
        )
        .bind(&r.release)
        .bind(&r.namespace)
        .bind(&r.service)
        .bind(&r.service_uid)
        .bind(r.first_seen.timestamp_millis())
        .bind(r.last_seen.timestamp_millis())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn releases(&self) -> Result<Vec<ReleaseRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT release_key, namespace, service, service_uid, first_seen_ms, last_seen_ms \
             FROM releases ORDER BY release_key",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ReleaseRow {
                    release: row.try_get(0)?,
                    namespace: row.try_get(1)?,
                    service: row.try_get(2)?,
                    service_uid: row.try_get(3)?,
                    first_seen: time_of("releases.first_seen_ms", row.try_get(4)?)?,
                    last_seen: time_of("releases.last_seen_ms", row.try_get(5)?)?,
                })
            })
            .collect()
    }

    pub async fn upsert_revision(&self, r: &RevisionRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO revisions (revision_uid, release_key, namespace, name, created_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (revision_uid) DO NOTHING",
        )
        .bind(&r.revision_uid)
        .bind(&r.release)
        .bind(&r.namespace)
        .bind(&r.name)
        .bind(r.created.timestamp_millis())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Revisions of a release, oldest first.
    pub async fn revisions_of(&self, release: &str) -> Result<Vec<RevisionRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT revision_uid, release_key, namespace, name, created_ms FROM revisions \
             WHERE release_key = $1 ORDER BY created_ms, name",
        )
        .bind(release)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(RevisionRow {
                    revision_uid: row.try_get(0)?,
                    release: row.try_get(1)?,
                    namespace: row.try_get(2)?,
                    name: row.try_get(3)?,
                    created: time_of("revisions.created_ms", row.try_get(4)?)?,
                })
            })
            .collect()
    }
}
