//! Applying the editor's values to the Knative Service, and noticing when the Service is
//! edited by another hand afterwards (docs/operations.md, "Applying the editor's values").
//!
//! A `PUT config` stores the desired values (`pending`) and makes the first attempt at
//! once, so the editor usually sees `applied` in the answer. What the API server could not
//! take is `retrying`: [`ConfigApplier::run`] tries it again with a backoff that doubles
//! up to a minute, from the store, so a restart continues it. Every attempt sends the same
//! two annotations, and server-side apply of unchanged values changes nothing, so retries
//! cannot make Knative cut extra revisions. A conflict with another field manager, or a
//! refusal (the Service gone, RBAC), waits for a person.
//!
//! Drift is the Service's template no longer saying what was last applied. It is decided
//! when the release's facts change (the book's change stream), not per read: a drift
//! counts only once the template was seen to carry the applied values, so the moment
//! between an apply and the watch seeing it is no drift. Each change of drift sets
//! `scaling_facts_config_drift` and sends a `config_drift` event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use scaling_facts_api::{AppliedView, ConfigDrift, TemplateView};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::book::FactsBook;
use crate::measure::observe::TemplateScaling;
use crate::store::apply::{AppliedRecord, ApplyOutcome, DueApply};
use crate::store::config::DesiredConfig;
use crate::store::{Store, StoreError};
use crate::telemetry::ErrorChain;
use crate::telemetry::metrics::{ApplyLabels, Metrics, ServiceLabels};
use crate::watch::apply::{ApplyError, ServiceApplier, TemplateSettings};

/// How long one apply may take before it counts as failed (and is retried): within the
/// default request timeout (10 s), so a `PUT` learns its first attempt's outcome.
pub const APPLY_TIMEOUT: Duration = Duration::from_secs(5);
/// Retries back off from 1 s, doubling, up to this.
const MAX_BACKOFF: TimeDelta = TimeDelta::seconds(60);
/// How often the store is asked for changes still to apply.
const POLL: Duration = Duration::from_secs(1);

/// What drift is judged against, per release.
#[derive(Debug, Clone)]
struct Applied {
    settings: TemplateSettings,
    at: DateTime<Utc>,
    /// The template was seen carrying these values since they were applied.
    confirmed: bool,
    drifted: bool,
}

pub struct ConfigApplier {
    /// The process's Kubernetes client, connected at the first use.
    link: Arc<crate::watch::Link>,
    store: Store,
    book: Arc<FactsBook>,
    metrics: Arc<Metrics>,
    applied: Mutex<HashMap<String, Applied>>,
}

impl ConfigApplier {
    pub fn new(
        link: Arc<crate::watch::Link>,
        store: Store,
        book: Arc<FactsBook>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            link,
            store,
            book,
            metrics,
            applied: Mutex::default(),
        }
    }

    fn applied(&self) -> MutexGuard<'_, HashMap<String, Applied>> {
        self.applied.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the release's Service was edited away from what was applied.
    pub fn drift(&self, release: &str) -> bool {
        self.applied().get(release).is_some_and(|a| a.drifted)
    }

    async fn client(&self) -> Result<ServiceApplier, String> {
        self.link
            .get()
            .await
            .map(|(client, _)| ServiceApplier::new(client.clone()))
            .map_err(|e| ErrorChain(&e).to_string())
    }

    /// One attempt at the change `audit_id` of `release`; records and returns how it
    /// ended. `Ok(None)` when a newer change superseded it meanwhile.
    pub async fn apply(
        &self,
        release: &str,
        audit_id: u64,
        desired: DesiredConfig,
    ) -> Result<Option<ApplyOutcome>, StoreError> {
        let outcome = self.attempt(release, desired).await;
        let label = outcome.state().as_str().to_owned();
        self.metrics
            .config_applies
            .get_or_create(&ApplyLabels { outcome: label })
            .inc();
        let at = Utc::now();
        if !self
            .store
            .record_apply(release, audit_id, &outcome, at)
            .await?
        {
            return Ok(None);
        }
        match &outcome {
            ApplyOutcome::Applied {
                min_scale,
                retention,
            } => {
                tracing::info!(%release, %min_scale, %retention, "desired configuration applied to the Knative Service");
                let settings = TemplateSettings {
                    min_scale: min_scale.clone(),
                    retention: retention.clone(),
                };
                self.remember(release, settings, at, false);
            }
            ApplyOutcome::Retrying(m) => {
                tracing::warn!(%release, error = %m, "desired configuration not applied yet; retrying")
            }
            ApplyOutcome::Conflict(m) | ApplyOutcome::Failed(m) => {
                tracing::warn!(%release, error = %m, state = %outcome.state(), "desired configuration not applied")
            }
        }
        Ok(Some(outcome))
    }

    async fn attempt(&self, release: &str, desired: DesiredConfig) -> ApplyOutcome {
        // The release's Service and its stable window and delay, as the watch last saw them.
        let Some(entry) = self.book.get(release) else {
            return ApplyOutcome::Retrying(format!("{release} is not in the cluster as last seen"));
        };
        let parts = entry.facts.idle_window_parts;
        let floor = parts.stable_window_seconds + parts.scale_down_delay_seconds;
        let Some(retention) = desired.idle_timeout_seconds.checked_sub(floor) else {
            return ApplyOutcome::Failed(format!(
                "idle_timeout_seconds {} is now below the stable window plus the scale-down delay ({floor} s)",
                desired.idle_timeout_seconds
            ));
        };
        let settings = TemplateSettings::new(desired.min_instances, retention);
        let client = match self.client().await {
            Ok(c) => c,
            Err(e) => return ApplyOutcome::Retrying(e),
        };
        let (ns, name) = (&entry.facts.namespace, &entry.facts.service);
        match tokio::time::timeout(APPLY_TIMEOUT, client.apply(ns, name, &settings)).await {
            Ok(Ok(())) => ApplyOutcome::Applied {
                min_scale: settings.min_scale,
                retention: settings.retention,
            },
            Ok(Err(e @ ApplyError::Conflict { .. })) => ApplyOutcome::Conflict(e.to_string()),
            Ok(Err(e)) if e.is_transient() => ApplyOutcome::Retrying(ErrorChain(&e).to_string()),
            Ok(Err(e)) => ApplyOutcome::Failed(ErrorChain(&e).to_string()),
            Err(_) => ApplyOutcome::Retrying(format!(
                "no answer from the API server in {} s",
                APPLY_TIMEOUT.as_secs()
            )),
        }
    }

    fn remember(
        &self,
        release: &str,
        settings: TemplateSettings,
        at: DateTime<Utc>,
        confirmed: bool,
    ) {
        let was_drifted = {
            let mut applied = self.applied();
            let old = applied.insert(
                release.to_owned(),
                Applied {
                    settings,
                    at,
                    confirmed,
                    drifted: false,
                },
            );
            old.is_some_and(|o| o.drifted)
        };
        if was_drifted {
            // The new apply is what the template is judged against now.
            self.set_drift_metric(release, false);
        }
        if let Some(entry) = self.book.get(release) {
            self.check(release, &entry.facts.template);
        }
    }

    /// Judges a release's template against what was applied; reports a change of drift.
    fn check(&self, release: &str, template: &TemplateScaling) {
        let event = {
            let mut applied = self.applied();
            let Some(a) = applied.get_mut(release) else {
                return;
            };
            let matches = a.settings.matches(template);
            a.confirmed |= matches;
            let drifted = a.confirmed && !matches;
            if drifted == a.drifted {
                return;
            }
            a.drifted = drifted;
            ConfigDrift {
                release: release.to_owned(),
                drift: drifted,
                applied: AppliedView {
                    min_scale: a.settings.min_scale.clone(),
                    retention: a.settings.retention.clone(),
                    applied_at: a.at,
                },
                template: TemplateView {
                    min_scale: template.min_scale.clone(),
                    retention: template.retention.clone(),
                },
            }
        };
        match event.drift {
            true => tracing::warn!(
                %release, applied_min_scale = %event.applied.min_scale, applied_retention = %event.applied.retention,
                template_min_scale = ?event.template.min_scale, template_retention = ?event.template.retention,
                "the Knative Service was edited away from the applied configuration"
            ),
            false => {
                tracing::info!(%release, "the Knative Service carries the applied configuration again")
            }
        }
        self.set_drift_metric(release, event.drift);
        self.book.publish_drift(event);
    }

    fn set_drift_metric(&self, release: &str, drifted: bool) {
        if let Some(entry) = self.book.get(release) {
            let labels = ServiceLabels {
                namespace: entry.facts.namespace.clone(),
                service: entry.facts.service.clone(),
            };
            self.metrics
                .config_drift
                .get_or_create(&labels)
                .set(i64::from(drifted));
        }
    }

    /// Retries what is due and watches for drift, until `shutdown`.
    /// Watches for drift on every replica; retries changes only while `leadership` says
    /// this replica writes.
    pub async fn run(
        self: Arc<Self>,
        leadership: super::lead::Leadership,
        shutdown: CancellationToken,
    ) {
        let mut changes = self.book.subscribe();
        let mut loaded = false;
        let mut poll = tokio::time::interval(POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                change = changes.recv() => match change {
                    Ok(change) => {
                        if let Some(facts) = &change.facts {
                            self.check(&change.release, &facts.template);
                        }
                    }
                    Err(RecvError::Lagged(_)) => self.check_all(),
                    Err(RecvError::Closed) => return,
                },
                _ = poll.tick() => {
                    if !loaded {
                        loaded = self.load().await;
                    }
                    if leadership.leading() {
                        self.retry_due().await;
                    }
                }
            }
        }
    }

    /// What was applied before this process, judged as confirmed: the cluster carried
    /// it when it was recorded.
    async fn load(&self) -> bool {
        match self.store.applied_all().await {
            Ok(all) => {
                for (
                    release,
                    AppliedRecord {
                        min_scale,
                        retention,
                        at,
                    },
                ) in all
                {
                    if self.applied().contains_key(&release) {
                        continue;
                    }
                    self.remember(
                        &release,
                        TemplateSettings {
                            min_scale,
                            retention,
                        },
                        at,
                        true,
                    );
                }
                true
            }
            Err(e) => {
                tracing::debug!(error = %ErrorChain(&e), "applied configuration not loaded yet");
                false
            }
        }
    }

    fn check_all(&self) {
        let releases: Vec<String> = self.applied().keys().cloned().collect();
        for release in releases {
            if let Some(entry) = self.book.get(&release) {
                self.check(&release, &entry.facts.template);
            }
        }
    }

    async fn retry_due(&self) {
        let due = match self.store.applies_due().await {
            Ok(due) => due,
            Err(e) => {
                tracing::debug!(error = %ErrorChain(&e), "cannot read the changes to apply");
                return;
            }
        };
        let now = Utc::now();
        for d in due.into_iter().filter(|d| is_due(d, now)) {
            if let Err(e) = self.apply(&d.release, d.audit_id, d.desired).await {
                tracing::warn!(release = %d.release, error = %ErrorChain(&e), "apply outcome not recorded; tried again");
            }
        }
    }
}

/// A change never tried is left to its `PUT`'s own attempt for as long as that may take;
/// one tried is retried after 1 s, 2 s, 4 s ... up to a minute.
fn is_due(d: &DueApply, now: DateTime<Utc>) -> bool {
    let (since, wait) = match d.tried_at {
        None => (
            d.since,
            TimeDelta::from_std(APPLY_TIMEOUT).unwrap_or(MAX_BACKOFF) + TimeDelta::seconds(1),
        ),
        Some(t) => (
            t,
            TimeDelta::seconds(1_i64 << d.attempts.saturating_sub(1).min(6)).min(MAX_BACKOFF),
        ),
    };
    now - since >= wait
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(attempts: u32, tried_ms: Option<i64>) -> DueApply {
        DueApply {
            release: "r".into(),
            audit_id: 1,
            desired: DesiredConfig {
                min_instances: 1,
                idle_timeout_seconds: 90,
            },
            attempts,
            tried_at: tried_ms.and_then(DateTime::from_timestamp_millis),
            since: DateTime::from_timestamp_millis(0).unwrap(),
        }
    }

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(ms).unwrap()
    }

    #[test]
    fn retries_back_off_to_a_minute() {
        assert!(
            !is_due(&due(0, None), at(5_999)),
            "its PUT may still be trying"
        );
        assert!(is_due(&due(0, None), at(6_000)));
        assert!(!is_due(&due(1, Some(0)), at(999)));
        assert!(is_due(&due(1, Some(0)), at(1_000)));
        assert!(!is_due(&due(3, Some(0)), at(3_999)));
        assert!(is_due(&due(3, Some(0)), at(4_000)));
        assert!(!is_due(&due(30, Some(0)), at(59_999)));
        assert!(is_due(&due(30, Some(0)), at(60_000)));
    }
}
