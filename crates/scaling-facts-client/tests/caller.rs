//! The caller contract with paused time: every rule of the readiness limit, the warm-path
//! cache, the failure phases, the deadline, the idempotent retry, and the prewarm guard.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use scaling_facts_api::{
    Failure, Phase, Runtime, RuntimePresence, RuntimeState, Scaling, WakeProgress,
};
use scaling_facts_client::caller::{
    CacheEntry, Call, CallError, Caller, CallerConfig, Platform, Transport, TransportError,
    is_warm, readiness_limit, warm_margin,
};
use scaling_facts_client::prewarm::Prewarmer;
use tokio::time::Instant;

fn scaling(min: u32, idle: f64, expected: Option<f64>) -> Scaling {
    Scaling {
        min_instances: min,
        idle_timeout_seconds: idle,
        expected_cold_start_seconds: expected,
        serving_since: None,
    }
}

fn runtime(state: RuntimeState, phase: Phase, actual: u32) -> Runtime {
    Runtime {
        release: "r".into(),
        state,
        retry_after_ms: None,
        runtime_presence: RuntimePresence {
            phase,
            desired_replicas: 1,
            actual_replicas: actual,
            wake: (state == RuntimeState::Waking).then(|| WakeProgress {
                requested_at: Utc::now(),
                deadline_at: Utc::now(),
                elapsed_ms: 0,
            }),
            failure: (state == RuntimeState::Unavailable).then(|| Failure {
                reason: "ImagePullBackOff".into(),
                message: "cannot pull".into(),
            }),
        },
        scaling: scaling(0, 60.0, Some(5.0)),
        idle_timeout_upper_bound_seconds: 90.0,
        active_revisions: vec![],
        observed_at: Utc::now(),
        stale: false,
    }
}

/// A platform whose answers the test sets.
#[derive(Default)]
struct FakePlatform {
    scaling: Mutex<Option<Scaling>>,
    runtime: Mutex<Option<Runtime>>,
    scaling_reads: AtomicU32,
}

impl Platform for FakePlatform {
    async fn scaling(&self, _: &str) -> Option<Scaling> {
        self.scaling_reads.fetch_add(1, Ordering::SeqCst);
        self.scaling.lock().unwrap().clone()
    }
    async fn runtime(&self, _: &str) -> Option<Runtime> {
        self.runtime.lock().unwrap().clone()
    }
}

/// A release that answers after the given delays (one per send; the last repeats).
#[derive(Default)]
struct FakeTransport {
    delays: Mutex<Vec<Duration>>,
    fail: Mutex<Option<String>>,
    panic: AtomicBool,
    sends: AtomicU32,
    deadlines: Mutex<Vec<Option<u64>>>,
}

impl FakeTransport {
    fn answering_after(delays: &[u64]) -> Arc<Self> {
        Arc::new(Self {
            delays: Mutex::new(delays.iter().map(|ms| Duration::from_millis(*ms)).collect()),
            ..Default::default()
        })
    }
}

impl Transport for FakeTransport {
    async fn send(&self, _: &str, deadline_ms: Option<u64>) -> Result<(), TransportError> {
        let n = self.sends.fetch_add(1, Ordering::SeqCst) as usize;
        self.deadlines.lock().unwrap().push(deadline_ms);
        if self.panic.load(Ordering::SeqCst) {
            panic!("the release blew up");
        }
        let delay = {
            let d = self.delays.lock().unwrap();
            d.get(n).or(d.last()).copied().unwrap_or_default()
        };
        tokio::time::sleep(delay).await;
        match self.fail.lock().unwrap().clone() {
            Some(r) => Err(TransportError::Unavailable(r)),
            None => Ok(()),
        }
    }
}

fn caller(
    p: &Arc<FakePlatform>,
    t: &Arc<FakeTransport>,
) -> Caller<Arc<FakePlatform>, Arc<FakeTransport>> {
    Caller::new(p.clone(), t.clone(), CallerConfig::default())
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn readiness_limit_choices() {
    let floor = secs(30);
    let default = secs(300);
    assert_eq!(
        readiness_limit(
            Some(secs(7)),
            Some(&scaling(0, 60.0, Some(100.0))),
            floor,
            default
        ),
        secs(7)
    );
    assert_eq!(
        readiness_limit(None, Some(&scaling(0, 60.0, Some(40.0))), floor, default),
        secs(80)
    );
    assert_eq!(
        readiness_limit(None, Some(&scaling(0, 60.0, Some(5.0))), floor, default),
        secs(30),
        "floor"
    );
    assert_eq!(
        readiness_limit(None, Some(&scaling(0, 60.0, None)), floor, default),
        default,
        "unmeasured"
    );
    assert_eq!(
        readiness_limit(None, None, floor, default),
        default,
        "no scaling at all"
    );
}

#[tokio::test(start_paused = true)]
async fn warm_path_rule_and_its_margin() {
    assert_eq!(warm_margin(secs(60)), secs(12));
    assert_eq!(warm_margin(secs(30)), secs(10));
    let now = Instant::now() + secs(1_000);
    let at = |ago: u64| CacheEntry {
        scaling: Some(scaling(0, 60.0, None)),
        last_success: Some(now - secs(ago)),
        last_cold_start: None,
    };
    assert!(is_warm(&at(47), now, secs(60)), "47 s < 60 - 12");
    assert!(!is_warm(&at(49), now, secs(60)), "49 s > 60 - 12");
    let pinned = CacheEntry {
        scaling: Some(scaling(1, 60.0, None)),
        ..Default::default()
    };
    assert!(
        is_warm(&pinned, now, secs(60)),
        "min_instances 1 is always warm"
    );
    let unknown = CacheEntry {
        last_success: Some(now - secs(45)),
        ..Default::default()
    };
    assert!(
        is_warm(&unknown, now, secs(60)),
        "without scaling the default window applies"
    );
    assert!(!is_warm(&CacheEntry::default(), now, secs(60)));
}

#[tokio::test(start_paused = true)]
async fn a_warm_release_skips_the_readiness_read() {
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(0, 60.0, Some(2.0)));
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Ready, Phase::Serving, 1));
    let t = FakeTransport::answering_after(&[100]);
    let c = caller(&p, &t);
    c.call(
        "r",
        Call {
            timeout: secs(5),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(p.scaling_reads.load(Ordering::SeqCst), 1);
    tokio::time::advance(secs(40)).await;
    c.call(
        "r",
        Call {
            timeout: secs(5),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        p.scaling_reads.load(Ordering::SeqCst),
        1,
        "warm: no platform read"
    );
    tokio::time::advance(secs(50)).await; // 50 s > 60 - 12: not known warm any more
    c.call(
        "r",
        Call {
            timeout: secs(5),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(p.scaling_reads.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn readiness_timeout_names_the_last_phase() {
    let p = Arc::new(FakePlatform::default());
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Waking, Phase::PullingImage, 0));
    let t = FakeTransport::answering_after(&[3_600_000]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let c = caller(&p, &t).with_observer(Arc::new(move |_, phase| s.lock().unwrap().push(phase)));
    let err = c
        .call(
            "r",
            Call {
                timeout: secs(5),
                ready_timeout: Some(secs(8)),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    match err {
        CallError::ReadinessTimeout {
            limit,
            last_phase,
            requested_at,
            ..
        } => {
            assert_eq!(limit, secs(8));
            assert_eq!(last_phase, Phase::PullingImage);
            assert!(requested_at.is_some());
        }
        other => panic!("{other:?}"),
    }
    assert!(
        seen.lock().unwrap().contains(&Phase::PullingImage),
        "showed starting"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unavailable_release_fails_at_once_with_the_reason() {
    let p = Arc::new(FakePlatform::default());
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Unavailable, Phase::Failed, 0));
    let t = FakeTransport::answering_after(&[3_600_000]);
    let started = Instant::now();
    let err = caller(&p, &t)
        .call(
            "r",
            Call {
                timeout: secs(5),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Unavailable { reason, .. } if reason.contains("ImagePullBackOff")),
        "{err:?}"
    );
    assert!(started.elapsed() < secs(1));
}

#[tokio::test(start_paused = true)]
async fn timeouts_are_told_apart_by_asking_runtime() {
    // Warm (min_instances 1), the application takes 10 s, the timeout is 2 s.
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(1, 60.0, Some(4.0)));
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Ready, Phase::Serving, 1));
    let t = FakeTransport::answering_after(&[10_000]);
    let c = caller(&p, &t);
    c.call(
        "r",
        Call {
            timeout: secs(20),
            ..Default::default()
        },
    )
    .await
    .unwrap(); // learn scaling
    let err = c
        .call(
            "r",
            Call {
                timeout: secs(2),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::RequestTimeout { .. }),
        "serving: the application was slow: {err:?}"
    );
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Waking, Phase::Starting, 0));
    let err = c
        .call(
            "r",
            Call {
                timeout: secs(2),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::ColdStartTimeout { .. }),
        "waking: held by a start: {err:?}"
    );
    // A start that finished before the question: serving_since after the send.
    let mut rt = runtime(RuntimeState::Ready, Phase::Serving, 1);
    rt.scaling.serving_since = Some(Utc::now() + chrono::Duration::seconds(1));
    *p.runtime.lock().unwrap() = Some(rt);
    let err = c
        .call(
            "r",
            Call {
                timeout: secs(2),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::ColdStartTimeout { .. }), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn a_deadline_too_short_for_a_cold_start_fails_before_sending() {
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(0, 60.0, Some(10.0)));
    let t = FakeTransport::answering_after(&[100]);
    let err = caller(&p, &t)
        .call(
            "r",
            Call {
                timeout: secs(5),
                deadline: Some(secs(3)),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::DeadlineTooShort {
            release: "r".into(),
            remaining: secs(3),
            expected: secs(10)
        }
    );
    assert!(
        err.to_string().contains("r:")
            && err.to_string().contains("3s")
            && err.to_string().contains("10s")
    );
    assert_eq!(t.sends.load(Ordering::SeqCst), 0, "nothing sent");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_forwarded_and_shrinks() {
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(1, 60.0, Some(2.0)));
    let t = FakeTransport::answering_after(&[100]);
    let c = caller(&p, &t);
    c.call(
        "r",
        Call {
            timeout: secs(5),
            deadline: Some(secs(20)),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    c.call(
        "r",
        Call {
            timeout: secs(5),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let sent = t.deadlines.lock().unwrap().clone();
    assert_eq!(sent[0], Some(20_000));
    assert_eq!(sent[1], None, "no header without an incoming deadline");
}

#[tokio::test(start_paused = true)]
async fn only_idempotent_calls_are_retried_and_only_once() {
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(1, 60.0, Some(2.0)));
    *p.runtime.lock().unwrap() = Some(runtime(RuntimeState::Ready, Phase::Serving, 1));
    // First send hangs past the timeout, the second answers.
    let t = FakeTransport::answering_after(&[10_000, 100]);
    let c = caller(&p, &t);
    let done = c
        .call(
            "r",
            Call {
                timeout: secs(2),
                idempotent: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(done.retried);
    assert_eq!(t.sends.load(Ordering::SeqCst), 2);

    let t = FakeTransport::answering_after(&[10_000, 100]);
    let c = caller(&p, &t);
    let err = c
        .call(
            "r",
            Call {
                timeout: secs(2),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::RequestTimeout { .. }));
    assert_eq!(
        t.sends.load(Ordering::SeqCst),
        1,
        "never replayed without idempotent"
    );

    let t = FakeTransport::answering_after(&[10_000]);
    let c = caller(&p, &t);
    assert!(
        c.call(
            "r",
            Call {
                timeout: secs(2),
                idempotent: true,
                ..Default::default()
            }
        )
        .await
        .is_err()
    );
    assert_eq!(t.sends.load(Ordering::SeqCst), 2, "retried once, not twice");
}

#[tokio::test(start_paused = true)]
async fn prewarm_keeps_one_ping_in_flight_through_a_long_start() {
    // A 30 s cold start, a 5 s cooldown: prewarms every 2 s send one ping, not six.
    let t = FakeTransport::answering_after(&[30_000, 100]);
    let w = Prewarmer::new(t.clone(), secs(5));
    let releases = vec!["a".to_owned()];
    let mut tasks = Vec::new();
    for _ in 0..14 {
        tasks.extend(w.prewarm(&releases));
        tokio::time::sleep(secs(2)).await;
    }
    assert_eq!(t.sends.load(Ordering::SeqCst), 1);
    assert!(w.in_flight("a"));
    for task in tasks {
        task.await.unwrap();
    }
    assert!(!w.in_flight("a"), "cleared on completion");
    w.prewarm(&releases);
    tokio::task::yield_now().await;
    assert_eq!(
        t.sends.load(Ordering::SeqCst),
        2,
        "after the start and the cooldown, again"
    );
}

#[tokio::test(start_paused = true)]
async fn the_in_flight_flag_is_cleared_after_a_panic_and_a_cancellation() {
    let t = FakeTransport::answering_after(&[60_000]);
    t.panic.store(true, Ordering::SeqCst);
    let w = Prewarmer::new(t.clone(), Duration::ZERO);
    let a = vec!["a".to_owned()];
    let tasks = w.prewarm(&a);
    assert!(w.in_flight("a"));
    for task in tasks {
        assert!(task.await.unwrap_err().is_panic());
    }
    assert!(!w.in_flight("a"), "cleared after the panic");

    t.panic.store(false, Ordering::SeqCst);
    let tasks = w.prewarm(&a);
    tokio::time::sleep(secs(1)).await;
    assert!(w.in_flight("a"));
    for task in tasks {
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
    }
    assert!(!w.in_flight("a"), "cleared after the cancellation");
}

#[tokio::test(start_paused = true)]
async fn the_kill_switch_stops_prewarms_even_already_spawned() {
    let t = FakeTransport::answering_after(&[100]);
    let w = Prewarmer::new(t.clone(), Duration::ZERO);
    let a = vec!["a".to_owned()];
    // Spawned, then the switch is thrown before the task runs: the task checks again.
    let tasks = w.prewarm(&a);
    w.kill_switch().store(true, Ordering::SeqCst);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(t.sends.load(Ordering::SeqCst), 0);
    assert!(!w.in_flight("a"));
    assert!(w.prewarm(&a).is_empty(), "nothing spawned while killed");
    assert_eq!(t.sends.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_failed_start_reported_by_the_transport_is_unavailable() {
    let p = Arc::new(FakePlatform::default());
    *p.scaling.lock().unwrap() = Some(scaling(1, 60.0, None));
    let t = FakeTransport::answering_after(&[100]);
    *t.fail.lock().unwrap() = Some("CrashLoopBackOff".into());
    let err = caller(&p, &t)
        .call(
            "r",
            Call {
                timeout: secs(5),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Unavailable { reason, .. } if reason == "CrashLoopBackOff"));
}
