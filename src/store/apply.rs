//! Where applying each release's desired values to its Knative Service stands: the state
//! of the current change, the two annotations last applied (what drift is measured
//! against), and the outcome written on the change's audit row, so the trail says whether
//! each change reached the cluster and why not.
//!
//! An outcome is recorded against the audit row the current desired values came from: an
//! attempt that finishes after a newer `PUT` changes nothing, since the newer change is
//! what must be applied now.

use chrono::{DateTime, Utc};
use scaling_facts_api::ApplyState;
use sqlx::Row;

use super::config::{DesiredConfig, desired};
use super::{Store, StoreError, time_of, to_i64, to_u64};

/// The two annotations as applied, verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedRecord {
    pub min_scale: String,
    pub retention: String,
    pub at: DateTime<Utc>,
}

/// A release's apply, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyRecord {
    pub state: ApplyState,
    pub message: Option<String>,
    /// Attempts at the current change.
    pub attempts: u32,
    pub tried_at: Option<DateTime<Utc>>,
    /// The last values that reached the cluster, whichever change they came from.
    pub applied: Option<AppliedRecord>,
    /// The audit row of the current desired values.
    pub audit_id: Option<u64>,
}

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyOutcome {
    Applied {
        min_scale: String,
        retention: String,
    },
    Retrying(String),
    Conflict(String),
    Failed(String),
}

impl ApplyOutcome {
    pub fn state(&self) -> ApplyState {
        match self {
            Self::Applied { .. } => ApplyState::Applied,
            Self::Retrying(_) => ApplyState::Retrying,
            Self::Conflict(_) => ApplyState::Conflict,
            Self::Failed(_) => ApplyState::Failed,
        }
    }

    fn message(&self) -> Option<&str> {
        match self {
            Self::Applied { .. } => None,
            Self::Retrying(m) | Self::Conflict(m) | Self::Failed(m) => Some(m),
        }
    }
}

/// A change waiting to be applied.
#[derive(Debug, Clone, PartialEq)]
pub struct DueApply {
    pub release: String,
    pub audit_id: u64,
    pub desired: DesiredConfig,
    pub attempts: u32,
    pub tried_at: Option<DateTime<Utc>>,
    /// When the change was made.
    pub since: DateTime<Utc>,
}

impl Store {
    /// Records how an attempt at the change `audit_id` ended; false when a newer change
    /// superseded it, in which case nothing is written.
    pub async fn record_apply(
        &self,
        release: &str,
        audit_id: u64,
        outcome: &ApplyOutcome,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let (min_scale, retention) = match outcome {
            ApplyOutcome::Applied {
                min_scale,
                retention,
            } => (Some(min_scale.as_str()), Some(retention.as_str())),
            _ => (None, None),
        };
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(
            "UPDATE release_config SET apply_state = $1, apply_message = $2, \
             apply_attempts = apply_attempts + 1, apply_tried_ms = $3, \
             applied_min_scale = COALESCE($4, applied_min_scale), \
             applied_retention = COALESCE($5, applied_retention), \
             applied_ms = CASE WHEN $4 IS NULL THEN applied_ms ELSE $3 END \
             WHERE release_key = $6 AND audit_id = $7",
        )
        .bind(outcome.state().as_str())
        .bind(outcome.message())
        .bind(at.timestamp_millis())
        .bind(min_scale)
        .bind(retention)
        .bind(release)
        .bind(to_i64(audit_id))
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE release_config_audit SET apply_state = $1, apply_message = $2 WHERE id = $3",
        )
        .bind(outcome.state().as_str())
        .bind(outcome.message())
        .bind(to_i64(audit_id))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every change waiting to be applied: not tried yet, or tried and worth trying again.
    pub async fn applies_due(&self) -> Result<Vec<DueApply>, StoreError> {
        let rows = sqlx::query(
            "SELECT release_key, audit_id, min_instances, idle_timeout_seconds, apply_attempts, \
             apply_tried_ms, updated_ms FROM release_config \
             WHERE apply_state IN ('pending', 'retrying') AND audit_id IS NOT NULL \
             ORDER BY release_key",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(DueApply {
                    release: row.try_get(0)?,
                    audit_id: to_u64("release_config.audit_id", row.try_get(1)?)?,
                    desired: desired("release_config", row.try_get(2)?, row.try_get(3)?)?,
                    attempts: u32::try_from(to_u64(
                        "release_config.apply_attempts",
                        row.try_get(4)?,
                    )?)
                    .map_err(|e| StoreError::corrupt("release_config.apply_attempts", e))?,
                    tried_at: row
                        .try_get::<Option<i64>, _>(5)?
                        .map(|ms| time_of("release_config.apply_tried_ms", ms))
                        .transpose()?,
                    since: time_of("release_config.updated_ms", row.try_get(6)?)?,
                })
            })
            .collect()
    }

    /// What was last applied to each release that ever had an apply, for drift.
    pub async fn applied_all(&self) -> Result<Vec<(String, AppliedRecord)>, StoreError> {
        let rows = sqlx::query(
            "SELECT release_key, applied_min_scale, applied_retention, applied_ms \
             FROM release_config WHERE applied_ms IS NOT NULL",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get(0)?,
                    AppliedRecord {
                        min_scale: row.try_get(1)?,
                        retention: row.try_get(2)?,
                        at: time_of("release_config.applied_ms", row.try_get(3)?)?,
                    },
                ))
            })
            .collect()
    }
}
