//! What a recorded wake leaves outside the store: one structured log line, its counters
//! and histograms (by namespace and service, never revision or pod), and its span.

use scaling_facts_api::{Outcome, WakeRecord};

use super::metrics::{Metrics, PHASES, PhaseLabels, ServiceLabels, WakeLabels};
use crate::measure::observe::ServiceKey;

/// The one log line, the metrics and the span of a recorded wake.
pub fn observe(metrics: &Metrics, key: &ServiceKey, w: &WakeRecord) {
    super::traces::record_wake(key, w);
    tracing::info!(
        release = %w.release, revision = %w.revision, kind = %w.kind, outcome = %w.outcome,
        duration_ms = w.duration_ms, provisioning_ms = w.phases.provisioning_ms,
        pulling_image_ms = w.phases.pulling_image_ms, starting_ms = w.phases.starting_ms,
        precision = %w.precision, failure_reason = w.failure_reason.as_deref(),
        requested_at = %w.requested_at.to_rfc3339(), "wake recorded"
    );
    let (namespace, service) = (key.namespace.to_string(), key.name.to_string());
    metrics
        .wakes
        .get_or_create(&WakeLabels {
            namespace: namespace.clone(),
            service: service.clone(),
            kind: w.kind.to_string(),
            outcome: w.outcome.to_string(),
        })
        .inc();
    if w.outcome == Outcome::Served {
        let phases = [
            w.phases.provisioning_ms,
            w.phases.pulling_image_ms,
            w.phases.starting_ms,
        ];
        for (phase, ms) in PHASES.into_iter().zip(phases) {
            if let Some(ms) = ms {
                metrics
                    .wake_phase_duration
                    .get_or_create(&PhaseLabels {
                        namespace: namespace.clone(),
                        service: service.clone(),
                        phase: phase.to_owned(),
                    })
                    .observe(ms as f64 / 1000.0);
            }
        }
        metrics
            .wake_duration
            .get_or_create(&ServiceLabels { namespace, service })
            .observe(w.duration_ms as f64 / 1000.0);
    }
}
