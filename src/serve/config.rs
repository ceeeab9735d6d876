//! The editor's write: `min_instances` and `idle_timeout_seconds` per release, validated,
//! stored with an audit entry, applied to the Knative Service when applying is on
//! ([`crate::service::apply`]), and reported next to what was applied, what the Service's
//! template says now (drift), and the effective values Knative runs with.

use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use chrono::Utc;
use scaling_facts_api::{
    AppliedView, ApplyView, AuditView, ConfigUpdate, ConfigValues, ConfigView, DesiredView,
    EffectiveView, TemplateView, examples,
};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::ApiJson;
use super::openapi::{ConfigWriteErrors, StoredReadErrors};
use super::request::RequestId;
use crate::measure::facts::IdleWindowParts;
use crate::store::apply::ApplyOutcome;
use crate::store::config::{ConfigAudit, DesiredConfig};

/// Highest `min_instances` an editor may ask for: a guard against typos that would pin
/// thousands of pods, well above any release's real need.
pub const MAX_MIN_INSTANCES: u32 = 1_000;
/// Knative's largest pod retention period: the idle window can exceed W + D by at most this.
pub const MAX_RETENTION_SECONDS: u32 = 3_600;
const AUDIT_ENTRIES_SHOWN: u32 = 20;

fn values(d: DesiredConfig) -> ConfigValues {
    ConfigValues {
        min_instances: d.min_instances,
        idle_timeout_seconds: d.idle_timeout_seconds,
    }
}

async fn view(state: &AppState, release: &str) -> Result<ConfigView, ApiError> {
    let entry = state
        .book
        .get(release)
        .ok_or_else(|| ApiError::UnknownRelease {
            release: release.to_owned(),
        })?;
    let stored = state.store.config(release).await?;
    let audit = state
        .store
        .config_audit(release, AUDIT_ENTRIES_SHOWN)
        .await?;
    let effective = EffectiveView {
        min_instances: entry.facts.scaling.min_instances,
        idle_timeout_seconds: entry.facts.scaling.idle_timeout_seconds,
    };
    let in_sync = stored.as_ref().is_none_or(|s| {
        s.desired.min_instances == effective.min_instances
            && f64::from(s.desired.idle_timeout_seconds) == effective.idle_timeout_seconds
    });
    let template = TemplateView {
        min_scale: entry.facts.template.min_scale.clone(),
        retention: entry.facts.template.retention.clone(),
    };
    let drift = state.applier.as_ref().is_some_and(|a| a.drift(release));
    Ok(ConfigView {
        release: release.to_owned(),
        apply: stored.as_ref().map(|s| ApplyView {
            state: s.apply.state,
            message: s.apply.message.clone(),
            attempts: s.apply.attempts,
            last_attempt_at: s.apply.tried_at,
        }),
        applied: stored
            .as_ref()
            .and_then(|s| s.apply.applied.as_ref())
            .map(|a| AppliedView {
                min_scale: a.min_scale.clone(),
                retention: a.retention.clone(),
                applied_at: a.at,
            }),
        template,
        drift,
        desired: stored.map(|s| DesiredView {
            min_instances: s.desired.min_instances,
            idle_timeout_seconds: s.desired.idle_timeout_seconds,
            updated_by: s.updated_by,
            updated_at: s.updated_at,
        }),
        effective,
        in_sync,
        audit: audit.into_iter().map(audit_view).collect(),
    })
}

fn audit_view(a: ConfigAudit) -> AuditView {
    AuditView {
        actor: a.actor,
        request_id: a.request_id,
        changed_at: a.changed_at,
        old: a.old.map(values),
        new: values(a.new),
        apply_state: a.apply_state,
        apply_message: a.apply_message,
    }
}

/// Checks a desired configuration against the limits of the revision it will land on.
pub fn validate(update: &ConfigUpdate, parts: IdleWindowParts) -> Result<DesiredConfig, ApiError> {
    if update.min_instances > MAX_MIN_INSTANCES {
        return Err(ApiError::invalid(
            "min_instances",
            format!(
                "must be between 0 and {MAX_MIN_INSTANCES}, got {}",
                update.min_instances
            ),
        ));
    }
    let floor = parts.stable_window_seconds + parts.scale_down_delay_seconds;
    let ceiling = floor + MAX_RETENTION_SECONDS;
    let idle = update.idle_timeout_seconds;
    if idle < floor {
        // The retention applied is T - W - D: below W + D there is no retention to ask for.
        return Err(ApiError::invalid(
            "idle_timeout_seconds",
            format!(
                "must be between {floor} and {ceiling}, got {idle}: at least {floor}, since the idle \
                 window cannot be shorter than the stable window ({} s) plus the scale-down delay \
                 ({} s), which Knative always waits before removing the last pod",
                parts.stable_window_seconds, parts.scale_down_delay_seconds
            ),
        ));
    }
    if idle > ceiling {
        return Err(ApiError::invalid(
            "idle_timeout_seconds",
            format!(
                "must be between {floor} and {ceiling}, got {idle}: the idle window is the stable \
                 window ({} s) plus the scale-down delay ({} s) plus a pod retention of 0 to {MAX_RETENTION_SECONDS} s",
                parts.stable_window_seconds, parts.scale_down_delay_seconds
            ),
        ));
    }
    Ok(DesiredConfig {
        min_instances: update.min_instances,
        idle_timeout_seconds: idle,
    })
}

/// Desired and effective configuration, with the audit trail.
#[utoipa::path(
    get, path = "/v1/releases/{release}/config", tag = "config", operation_id = "getConfig",
    params(("release" = String, Path, description = "Release key", example = "steady.demo")),
    responses(
        (status = 200, description = "Desired, effective, audit", body = ConfigView, example = examples::config_view),
        StoredReadErrors,
    ),
    security(("bearer" = []), ())
)]
pub async fn get_config(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Json<ConfigView>, ApiError> {
    caller.require_read(&state)?;
    Ok(Json(view(&state, &release).await?))
}

/// Sets the desired `min_instances` and `idle_timeout_seconds` of a release.
#[utoipa::path(
    put, path = "/v1/releases/{release}/config", tag = "config", operation_id = "putConfig",
    params(("release" = String, Path, description = "Release key", example = "steady.demo")),
    request_body(content = ConfigUpdate, example = examples::config_update),
    responses(
        (status = 200, description = "Stored and audited", body = ConfigView, example = examples::config_view),
        ConfigWriteErrors,
    ),
    security(("bearer" = []))
)]
pub async fn put_config(
    State(state): State<AppState>,
    caller: Caller,
    request_id: RequestId,
    Path(release): Path<String>,
    body: Request,
) -> Result<Json<ConfigView>, ApiError> {
    // Credentials are checked before the body is read, so an unauthorised caller learns
    // nothing about what a valid body looks like.
    caller.require_write(&release)?;
    let ApiJson(update) = ApiJson::<ConfigUpdate>::from_request(body, &state).await?;
    let entry = state
        .book
        .get(&release)
        .ok_or_else(|| ApiError::UnknownRelease {
            release: release.clone(),
        })?;
    let desired = validate(&update, entry.facts.idle_window_parts)?;
    let audit = state
        .store
        .set_config(
            &release,
            desired,
            caller.name(),
            request_id.as_str(),
            Utc::now(),
            state.applier.is_some(),
        )
        .await?;
    tracing::info!(
        release = %release, actor = %audit.actor, request_id = %audit.request_id,
        min_instances = desired.min_instances, idle_timeout_seconds = desired.idle_timeout_seconds,
        "desired configuration changed"
    );
    // A follower leaves the change pending: the replica that writes applies it.
    if let Some(applier) = state
        .applier
        .as_ref()
        .filter(|_| state.leadership.leading())
    {
        // The first attempt, now, so the editor usually learns the outcome in the answer;
        // what fails for a passing reason is retried in the background.
        match applier.apply(&release, audit.id, desired).await? {
            Some(ApplyOutcome::Conflict(message)) => {
                return Err(ApiError::ApplyConflict { release, message });
            }
            // The API server has just stored these on the template; the watch may not
            // have brought that change yet, and the answer must not say `applied` beside
            // the template as it was before.
            Some(ApplyOutcome::Applied {
                min_scale,
                retention,
            }) => {
                let mut v = view(&state, &release).await?;
                v.template = TemplateView {
                    min_scale: Some(min_scale),
                    retention: Some(retention),
                };
                return Ok(Json(v));
            }
            _ => {}
        }
    }
    Ok(Json(view(&state, &release).await?))
}
