//! Example values for the OpenAPI document, one per response.
//!
//! They are built from the typed structs rather than written as JSON, so an example cannot
//! drift from the schema it illustrates: a renamed field fails to compile here.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};

use crate::*;

fn at(ms: i64) -> DateTime<Utc> {
    // 2026-11-30T09:00:00Z plus `ms`.
    Utc.timestamp_millis_opt(1_764_493_200_000 + ms)
        .single()
        .expect("a valid instant")
}

pub fn scaling() -> Scaling {
    Scaling {
        min_instances: 0,
        idle_timeout_seconds: 90.0,
        expected_cold_start_seconds: Some(2.437),
        serving_since: None,
    }
}

pub fn runtime() -> Runtime {
    Runtime {
        release: "steady.demo".into(),
        state: RuntimeState::Waking,
        retry_after_ms: Some(1_250),
        runtime_presence: RuntimePresence {
            phase: Phase::PullingImage,
            desired_replicas: 1,
            actual_replicas: 0,
            wake: Some(WakeProgress {
                requested_at: at(0),
                deadline_at: at(630_000),
                elapsed_ms: 1_187,
            }),
            failure: None,
        },
        scaling: scaling(),
        idle_timeout_upper_bound_seconds: 120.0,
        active_revisions: vec![ActiveRevision {
            name: "steady-00001".into(),
            percent: 100,
        }],
        observed_at: at(1_180),
        stale: false,
    }
}

pub fn batch_request() -> BatchScalingRequest {
    BatchScalingRequest {
        releases: vec!["steady.demo".into(), "gone.demo".into()],
    }
}

pub fn batch_response() -> BatchScalingResponse {
    BatchScalingResponse {
        scaling: BTreeMap::from([("steady.demo".into(), scaling())]),
        unknown: vec!["gone.demo".into()],
    }
}

fn percentiles(count: u64, p50: u64) -> Percentiles {
    Percentiles {
        count,
        p50_ms: p50,
        p90_ms: p50 * 12 / 10,
        p95_ms: p50 * 13 / 10,
        p99_ms: p50 * 15 / 10,
        max_ms: p50 * 16 / 10,
    }
}

pub fn cold_starts() -> ColdStarts {
    ColdStarts {
        release: "steady.demo".into(),
        revisions: vec![RevisionColdStarts {
            revision: "steady-00001".into(),
            revision_uid: "6b1f3c1e-0d4a-4c55-9a57-3f1e2b7d9c10".into(),
            active: true,
            counts: OutcomeCounts {
                served: 14,
                aborted: 1,
                failed: 0,
                initial: 1,
            },
            served: Some(percentiles(14, 2_310)),
            phases: PhaseBreakdown {
                provisioning: Some(percentiles(14, 120)),
                pulling_image: Some(percentiles(14, 1_650)),
                starting: Some(percentiles(14, 540)),
            },
            buckets: vec![
                HistogramBucket {
                    le_ms: 2_047,
                    count: 3,
                },
                HistogramBucket {
                    le_ms: 4_095,
                    count: 11,
                },
            ],
            recent: vec![WakeRecord {
                release: "steady.demo".into(),
                revision: "steady-00001".into(),
                revision_uid: "6b1f3c1e-0d4a-4c55-9a57-3f1e2b7d9c10".into(),
                kind: WakeKind::Wake,
                outcome: Outcome::Served,
                requested_at: at(0),
                start_second: 1_764_493_200,
                serving_at: Some(at(2_402)),
                duration_ms: 2_402,
                phases: PhaseDurations {
                    provisioning_ms: Some(131),
                    pulling_image_ms: Some(1_702),
                    starting_ms: Some(569),
                },
                precision: Precision::Ms,
                failure_reason: None,
                failure_message: None,
                caused_by: None,
            }],
        }],
    }
}

pub fn config_update() -> ConfigUpdate {
    ConfigUpdate {
        min_instances: 1,
        idle_timeout_seconds: 300,
    }
}

pub fn config_view() -> ConfigView {
    ConfigView {
        release: "steady.demo".into(),
        desired: Some(DesiredView {
            min_instances: 1,
            idle_timeout_seconds: 300,
            updated_by: "release-editor".into(),
            updated_at: at(0),
        }),
        apply: Some(ApplyView {
            state: ApplyState::Applied,
            message: None,
            attempts: 1,
            last_attempt_at: Some(at(35)),
        }),
        applied: Some(AppliedView {
            min_scale: "1".into(),
            retention: "240s".into(),
            applied_at: at(35),
        }),
        template: TemplateView {
            min_scale: Some("1".into()),
            retention: Some("240s".into()),
        },
        drift: false,
        effective: EffectiveView {
            min_instances: 1,
            idle_timeout_seconds: 300.0,
        },
        in_sync: true,
        audit: vec![AuditView {
            actor: "release-editor".into(),
            request_id: "3f0c2b8e-2f1e-4a7d-bb1e-9d2c4a6e8f01".into(),
            changed_at: at(0),
            old: None,
            new: ConfigValues {
                min_instances: 1,
                idle_timeout_seconds: 300,
            },
            apply_state: ApplyState::Applied,
            apply_message: None,
        }],
    }
}

pub fn release_list() -> ReleaseList {
    ReleaseList {
        releases: vec![ReleaseSummary {
            release: "steady.demo".into(),
            namespace: "demo".into(),
            service: "steady".into(),
            state: RuntimeState::Idle,
            phase: Phase::Idle,
        }],
        refused_claims: vec![RefusedClaim {
            release: "steady.demo".into(),
            namespace: "sandbox".into(),
            service: "steady-copy".into(),
            owner_namespace: "demo".into(),
            owner_service: "steady".into(),
        }],
    }
}

/// An event stream as it appears on the wire.
pub fn event_stream() -> String {
    let data = serde_json::to_string(&runtime()).expect("plain data");
    format!("event: runtime\nid: 42\ndata: {data}\n\nevent: removed\nid: 43\ndata: gone.demo\n\n")
}

pub fn alive() -> Alive {
    Alive {
        status: AliveStatus::Alive,
    }
}

fn warmup() -> Vec<WarmupReport> {
    vec![WarmupReport {
        task: "history".into(),
        outcome: WarmupOutcome::Ok,
        took_ms: Some(38),
    }]
}

pub fn ready() -> ReadyReport {
    ReadyReport {
        ready: true,
        warmup: warmup(),
    }
}

pub fn not_ready() -> ReadyReport {
    ReadyReport {
        ready: false,
        warmup: vec![WarmupReport {
            task: "history".into(),
            outcome: WarmupOutcome::Pending,
            took_ms: None,
        }],
    }
}

pub fn health() -> HealthReport {
    HealthReport {
        status: HealthStatus::Ok,
        ready: true,
        releases: 7,
        store: StoreCheck {
            status: StoreStatus::Up,
            backend: "sqlite".into(),
            latency_ms: 0,
            error: None,
        },
        watch: WatchCheck {
            connected: true,
            last_heard: Some(at(0)),
            stale: false,
            kinds: [
                "services",
                "revisions",
                "podautoscalers",
                "deployments",
                "pods",
                "configmaps/config-autoscaler",
                "configmaps/config-deployment",
            ]
            .into_iter()
            .map(|kind| KindCheck {
                kind: kind.into(),
                listed: true,
                healthy: true,
                errors: 0,
                last_event: Some(at(0)),
            })
            .collect(),
        },
        history: HistoryCheck {
            status: HistoryStatus::Loaded,
            wakes: 1_204,
            error: None,
        },
        writes: WritesCheck {
            status: WritesStatus::Ok,
            queued: 0,
            behind_ms: 0,
            spool_bytes: 0,
            rejected: 0,
            error: None,
        },
        warmup: warmup(),
        refused_claims: 0,
        lease: crate::LeaseCheck {
            role: crate::ReplicaRole::Leader,
            holder: None,
            renewed_ago_ms: Some(1_204),
            held_wakes: 0,
        },
    }
}

pub fn degraded() -> HealthReport {
    let mut report = health();
    report.status = HealthStatus::Degraded;
    report.store = StoreCheck {
        status: StoreStatus::Down,
        backend: "postgres".into(),
        latency_ms: 500,
        error: Some("no answer within 500 ms".into()),
    };
    report.writes = WritesCheck {
        status: WritesStatus::Behind,
        queued: 3,
        behind_ms: 42_000,
        spool_bytes: 1_870,
        rejected: 0,
        error: Some("cannot connect to the database: connection refused".into()),
    };
    report
}

/// An error body with a message typical of `code`.
pub fn error(code: ErrorCode) -> ErrorBody {
    let message = match code {
        ErrorCode::UnknownRelease => "no release \"gone.demo\" is known",
        ErrorCode::NotFound => "no route /v1/releasez",
        ErrorCode::MethodNotAllowed => "method not allowed on this route",
        ErrorCode::Unauthenticated => "a bearer token with the read scope is required",
        ErrorCode::Forbidden => "this token lacks the scope write or write:steady.demo",
        ErrorCode::InvalidField => {
            "idle_timeout_seconds: must be between 60 and 3660, got 5: at least 60, since the idle \
             window cannot be shorter than the stable window (60 s) plus the scale-down delay \
             (0 s), which Knative always waits before removing the last pod"
        }
        ErrorCode::ApplyConflict => {
            "the desired values of steady.demo are stored but not applied: another field manager \
             owns what the apply would change: Apply failed with 1 conflict: conflict with \
             \"kubectl-edit\" using serving.knative.dev/v1: \
             .spec.template.metadata.annotations.autoscaling.knative.dev/min-scale"
        }
        ErrorCode::InvalidJson => {
            "request body is not valid JSON: min_instances: invalid type: string \"one\", expected u32"
        }
        ErrorCode::BadRequest => "the request was not understood",
        ErrorCode::BodyTooLarge => "request body exceeds 65536 bytes",
        ErrorCode::UnsupportedMediaType => "request body must be application/json",
        ErrorCode::TooManyStreams => {
            "this token has 100 event streams open, its limit; close one or retry later"
        }
        ErrorCode::Timeout => "the request took too long; try again",
        ErrorCode::StoreUnavailable => "the store is unavailable; try again",
        ErrorCode::Internal | ErrorCode::Unrecognized => "internal error",
    };
    ErrorBody {
        error_code: code,
        message: message.into(),
        request_id: "3f0c2b8e-2f1e-4a7d-bb1e-9d2c4a6e8f01".into(),
    }
}
