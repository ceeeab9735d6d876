//! The editor's desired `min_instances` and `idle_timeout_seconds` per release, and the
//! audit trail of every change (who, when, old value, new value).
//!
//! The write and its audit row are one transaction, so the trail can never miss a change
//! or record one that did not happen, and the writes of one release are serialised, so each
//! audit row's `old` is the `new` of the one before.

use chrono::{DateTime, Utc};
use scaling_facts_api::ApplyState;
use sqlx::Row;

use super::apply::{AppliedRecord, ApplyRecord};
use super::{Backend, Store, StoreError, time_of, to_u64};

/// Desired values of a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesiredConfig {
    pub min_instances: u32,
    pub idle_timeout_seconds: u32,
}

/// Desired values with who set them and when.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredConfig {
    pub desired: DesiredConfig,
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
    /// How applying it to the Knative Service went.
    pub apply: ApplyRecord,
}

/// One audited change.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigAudit {
    pub id: u64,
    pub release: String,
    pub actor: String,
    pub request_id: String,
    pub changed_at: DateTime<Utc>,
    pub old: Option<DesiredConfig>,
    pub new: DesiredConfig,
    pub apply_state: ApplyState,
    pub apply_message: Option<String>,
}

pub(super) fn desired(
    what: &'static str,
    min: i64,
    idle: i64,
) -> Result<DesiredConfig, StoreError> {
    let min = to_u64(what, min)?;
    let idle = to_u64(what, idle)?;
    let narrow = |v: u64| u32::try_from(v).map_err(|e| super::StoreError::corrupt(what, e));
    Ok(DesiredConfig {
        min_instances: narrow(min)?,
        idle_timeout_seconds: narrow(idle)?,
    })
}

fn state_of(text: &str) -> Result<ApplyState, StoreError> {
    text.parse()
        .map_err(|e| StoreError::corrupt("release_config.apply_state", e))
}

impl Store {
    /// Stores new desired values and audits the change; returns the audit entry. With
    /// `apply`, the change waits to be applied to the Knative Service (`pending`), and a
    /// change still waiting is superseded by it.
    pub async fn set_config(
        &self,
        release: &str,
        new: DesiredConfig,
        actor: &str,
        request_id: &str,
        at: DateTime<Utc>,
        apply: bool,
    ) -> Result<ConfigAudit, StoreError> {
        let state = match apply {
            true => ApplyState::Pending,
            false => ApplyState::NotApplied,
        };
        // Read-then-write must not interleave with another write of the same release, or
        // two audit rows would share one `old`. SQLite: take the write lock at BEGIN, since
        // upgrading a read lock mid-transaction fails at once with "database is locked".
        // PostgreSQL: a row lock cannot lock the row a first write is about to create, so a
        // transaction-scoped advisory lock on the release key serialises every write of it.
        let mut tx = match self.backend() {
            Backend::Sqlite => self.pool().begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => {
                let mut tx = self.pool().begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                    .bind(release)
                    .execute(&mut *tx)
                    .await?;
                tx
            }
        };
        let old = sqlx::query(
            "SELECT min_instances, idle_timeout_seconds FROM release_config WHERE release_key = $1",
        )
        .bind(release)
        .fetch_optional(&mut *tx)
        .await?
        .map(|row| desired("release_config", row.try_get(0)?, row.try_get(1)?))
        .transpose()?;
        sqlx::query(
            "UPDATE release_config_audit SET apply_state = 'superseded' \
             WHERE release_key = $1 AND apply_state IN ('pending', 'retrying')",
        )
        .bind(release)
        .execute(&mut *tx)
        .await?;
        let id: i64 = sqlx::query(
            "INSERT INTO release_config_audit (release_key, actor, request_id, changed_ms, \
             old_min_instances, old_idle_timeout_seconds, new_min_instances, new_idle_timeout_seconds, \
             apply_state) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
        )
        .bind(release)
        .bind(actor)
        .bind(request_id)
        .bind(at.timestamp_millis())
        .bind(old.map(|o| i64::from(o.min_instances)))
        .bind(old.map(|o| i64::from(o.idle_timeout_seconds)))
        .bind(i64::from(new.min_instances))
        .bind(i64::from(new.idle_timeout_seconds))
        .bind(state.as_str())
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
        // What was applied before stays: it is what the Service's template is compared
        // with until this change is applied.
        sqlx::query(
            "INSERT INTO release_config (release_key, min_instances, idle_timeout_seconds, updated_by, \
             updated_ms, audit_id, apply_state, apply_message, apply_attempts, apply_tried_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, 0, NULL) ON CONFLICT (release_key) DO UPDATE SET \
             min_instances = excluded.min_instances, idle_timeout_seconds = excluded.idle_timeout_seconds, \
             updated_by = excluded.updated_by, updated_ms = excluded.updated_ms, \
             audit_id = excluded.audit_id, apply_state = excluded.apply_state, apply_message = NULL, \
             apply_attempts = 0, apply_tried_ms = NULL",
        )
        .bind(release)
        .bind(i64::from(new.min_instances))
        .bind(i64::from(new.idle_timeout_seconds))
        .bind(actor)
        .bind(at.timestamp_millis())
        .bind(id)
        .bind(state.as_str())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(ConfigAudit {
            id: to_u64("release_config_audit.id", id)?,
            release: release.to_owned(),
            actor: actor.to_owned(),
            request_id: request_id.to_owned(),
            changed_at: time_of("release_config_audit.changed_ms", at.timestamp_millis())?,
            old,
            new,
            apply_state: state,
            apply_message: None,
        })
    }

    pub async fn config(&self, release: &str) -> Result<Option<StoredConfig>, StoreError> {
        let row = sqlx::query(
            "SELECT min_instances, idle_timeout_seconds, updated_by, updated_ms, apply_state, \
             apply_message, apply_attempts, apply_tried_ms, applied_min_scale, applied_retention, \
             applied_ms, audit_id FROM release_config WHERE release_key = $1",
        )
        .bind(release)
        .fetch_optional(self.pool())
        .await?;
        row.map(|row| {
            let applied = match (
                row.try_get::<Option<String>, _>(8)?,
                row.try_get::<Option<String>, _>(9)?,
                row.try_get::<Option<i64>, _>(10)?,
            ) {
                (Some(min_scale), Some(retention), Some(ms)) => Some(AppliedRecord {
                    min_scale,
                    retention,
                    at: time_of("release_config.applied_ms", ms)?,
                }),
                _ => None,
            };
            Ok(StoredConfig {
                desired: desired("release_config", row.try_get(0)?, row.try_get(1)?)?,
                updated_by: row.try_get(2)?,
                updated_at: time_of("release_config.updated_ms", row.try_get(3)?)?,
                apply: ApplyRecord {
                    state: state_of(&row.try_get::<String, _>(4)?)?,
                    message: row.try_get(5)?,
                    attempts: to_u64("release_config.apply_attempts", row.try_get(6)?)?
                        .try_into()
                        .unwrap_or(u32::MAX),
                    tried_at: row
                        .try_get::<Option<i64>, _>(7)?
                        .map(|ms| time_of("release_config.apply_tried_ms", ms))
                        .transpose()?,
                    applied,
                    audit_id: row
                        .try_get::<Option<i64>, _>(11)?
                        .map(|id| to_u64("release_config.audit_id", id))
                        .transpose()?,
                },
            })
        })
        .transpose()
    }

    /// The newest `limit` changes of a release, newest first.
    pub async fn config_audit(
        &self,
        release: &str,
        limit: u32,
    ) -> Result<Vec<ConfigAudit>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, release_key, actor, request_id, changed_ms, old_min_instances, \
             old_idle_timeout_seconds, new_min_instances, new_idle_timeout_seconds, apply_state, \
             apply_message FROM release_config_audit WHERE release_key = $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(release)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let old_min: Option<i64> = row.try_get(5)?;
                let old_idle: Option<i64> = row.try_get(6)?;
                let old = match (old_min, old_idle) {
                    (Some(m), Some(i)) => Some(desired("release_config_audit", m, i)?),
                    _ => None,
                };
                Ok(ConfigAudit {
                    id: to_u64("release_config_audit.id", row.try_get(0)?)?,
                    release: row.try_get(1)?,
                    actor: row.try_get(2)?,
                    request_id: row.try_get(3)?,
                    changed_at: time_of("release_config_audit.changed_ms", row.try_get(4)?)?,
                    old,
                    new: desired("release_config_audit", row.try_get(7)?, row.try_get(8)?)?,
                    apply_state: state_of(&row.try_get::<String, _>(9)?)?,
                    apply_message: row.try_get(10)?,
                })
            })
            .collect()
    }
}
