//! One run of wakes under dense watch faults, compared with the simulator's truth: shared
//! by the test in `tests/measure.rs` (one run, asserted) and the `watch_faults` soak bench
//! (many runs, reported).
//!
//! Three services wake twelve times each, serving 2.5 s before going back to zero, while
//! the API server drops every watch, answers `410 Gone`, restarts, slows down, refuses
//! connections, and (with `api_away`) goes away for four seconds, long enough for a fast
//! service's whole wake, its watches then resuming with the backlog; one fault every
//! 0.7-1.5 s.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use scaling_facts_api::{Outcome, Precision, WakeKind, WakeRecord};
use scaling_facts_sim::faults::Fault;
use scaling_facts_sim::truth::TruthWake;
use scaling_facts_sim::{Cluster, admin, resources};

use super::{RunningService, TestDb, eventually, start_sim};

pub const SCENARIO: &str = r#"
seed: 11
bookmark_interval_ms: 500
config_autoscaler: {stable-window: 6s}
config_deployment: {progress-deadline: 1s}
services:
  - {namespace: shop, name: s0, timing: {provisioning_ms: 100, pulling_image_ms: 200, starting_ms: 100, terminating_ms: 50}}
  - {namespace: shop, name: s3, labels: {scaling-facts.io/release-uid: rel-s3}, timing: {provisioning_ms: 20, pulling_image_ms: 60, starting_ms: 40, terminating_ms: 50}}
  - {namespace: pay, name: s6, timing: {provisioning_ms: {min: 10, max: 100}, pulling_image_ms: {min: 10, max: 100}, starting_ms: {min: 10, max: 100}, terminating_ms: 50}}
"#;

const SERVICES: [(&str, &str); 3] = [("shop", "s0"), ("shop", "s3"), ("pay", "s6")];
pub const WAKES: usize = 12;

/// What one run found.
#[derive(Debug, Default)]
pub struct Report {
    /// True wakes measured not at all, more than once; measured wakes that match none.
    pub lost: usize,
    pub doubled: usize,
    pub phantom: usize,
    /// True served wakes recorded as aborted or failed.
    pub wrong_outcome: usize,
    /// |measured - true| of the wakes measured to the millisecond.
    pub live_errors_ms: Vec<u64>,
    /// Measured - true of the second-precision wakes (an upper bound: never negative).
    pub bound_errors_ms: Vec<i64>,
    pub by_precision: BTreeMap<String, usize>,
    pub faults: usize,
    /// What went wrong, wake by wake, for the failure message.
    pub detail: Vec<String>,
}

pub fn pods_of(cluster: &Cluster, ns: &str, revision: &str) -> usize {
    let sel = scaling_facts_sim::selector::Selector::parse(&format!(
        "serving.knative.dev/revision={revision}"
    ))
    .unwrap();
    cluster
        .lock()
        .list(resources::POD, Some(ns), &sel, None)
        .count()
}

/// A wake that keeps its pod serving for `serving` before going back to zero. Wakes of
/// one revision start at least a second apart, as they always do in Knative, because a
/// wake's identity is its revision and start second.
pub async fn wake_and_serve(cluster: &Arc<Cluster>, ns: &str, svc: &str, serving: Duration) {
    let rev = format!("{svc}-00001");
    let started = std::time::Instant::now();
    cluster
        .activate(ns, svc, Duration::ZERO, None)
        .await
        .expect("served");
    tokio::time::sleep(serving).await;
    cluster.force_idle(ns, &rev);
    eventually(20, "pods gone", || {
        (pods_of(cluster, ns, &rev) == 0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1_100).saturating_sub(started.elapsed())).await;
}

/// Runs the wakes under faults drawn from `seed` and compares them with the truth.
pub async fn run(seed: u64, api_away: bool) -> Report {
    let (sim, _client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let service = RunningService::start(&sim, &db.url, |_| {}).await;
    let cluster = sim.cluster.clone();
    eventually(30, "initial starts", || {
        let done = cluster
            .truth
            .wakes()
            .iter()
            .filter(|w| w.kind == WakeKind::Initial && w.outcome.is_some())
            .count();
        (done >= SERVICES.len()).then_some(())
    })
    .await;
    for (ns, svc) in SERVICES {
        cluster.force_idle(ns, &format!("{svc}-00001"));
    }
    // A wake is known by its revision and start second, and Knative never wakes a
    // revision in the second its last start began (scaling to zero takes the stable
    // window): the first wake comes more than a second after the initial start.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let stop_faults = tokio_util::sync::CancellationToken::new();
    let faults = {
        let c = cluster.clone();
        let stop = stop_faults.clone();
        let book = service.state.book.clone();
        tokio::spawn(async move {
            let plan = [
                Fault::DropWatches,
                Fault::GoneNext { count: 2 },
                Fault::DropWatches,
                Fault::Restart,
                Fault::Delay { ms: 150 },
                Fault::DropWatches,
                Fault::Delay { ms: 0 },
                Fault::Refuse { ms: 800 },
                Fault::DropWatches,
                Fault::Unavailable { ms: 4_000 },
            ];
            let plan = &plan[..if api_away { plan.len() } else { plan.len() - 1 }];
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut applied = 0;
            for f in plan.iter().cycle() {
                admin::apply(&c, f);
                applied += 1;
                if let Fault::Unavailable { ms } = f {
                    // The next faults wait until every watch has resumed with its backlog:
                    // a restart or a 410 before then makes the API server forget the gap,
                    // and wakes wholly inside a forgotten gap leave no trace to count
                    // (docs/outages.md). The outage's shape is a gap remembered.
                    tokio::time::sleep(Duration::from_millis(*ms + 200)).await;
                    while !book.watch().connected && !stop.is_cancelled() {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                let pause = Duration::from_millis(rng.random_range(700..=1_500));
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = stop.cancelled() => break,
                }
            }
            admin::apply(&c, &Fault::Delay { ms: 0 });
            applied
        })
    };
    let mut tasks = Vec::new();
    for (ns, svc) in SERVICES {
        let c = cluster.clone();
        tasks.push(tokio::spawn(async move {
            // Knative keeps a woken pod for at least its stable window (6 s or more);
            // 2.5 s here still outlasts every watch outage the faults cause.
            for _ in 0..WAKES {
                wake_and_serve(&c, ns, svc, Duration::from_millis(2_500)).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    stop_faults.cancel();
    let mut report = Report {
        faults: faults.await.unwrap(),
        ..Report::default()
    };
    // Let the watches catch up after the last fault: after an outage each comes back on
    // its own backoff, and the service says when every one is healthy again.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let book = service.state.book.clone();
    eventually(60, "every watch back", || {
        book.watch().connected.then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let truth = cluster.truth.wakes();
    for (_, svc) in SERVICES {
        let rev = format!("{svc}-00001");
        let t: Vec<&TruthWake> = truth
            .iter()
            .filter(|w| w.revision == rev && w.kind == WakeKind::Wake && w.outcome.is_some())
            .collect();
        let Some(uid) = t.first().map(|w| w.revision_uid.clone()) else {
            report.lost += WAKES;
            continue;
        };
        let mut measured: Vec<WakeRecord> = db.store.recent_wakes(&uid, 10_000).await.unwrap();
        measured.retain(|w| w.kind == WakeKind::Wake);
        let mut matched = vec![false; measured.len()];
        for tw in &t {
            let hits: Vec<usize> = measured
                .iter()
                .enumerate()
                .filter(|(_, m)| same_wake(tw, m))
                .map(|(i, _)| i)
                .collect();
            match hits.len() {
                0 => {
                    report.lost += 1;
                    report.detail.push(format!("lost {svc}: {tw:?}"));
                }
                1 => {}
                _ => {
                    report.doubled += 1;
                    report.detail.push(format!("doubled {svc}: {tw:?}"));
                }
            }
            for &i in &hits {
                matched[i] = true;
            }
            let Some(&i) = hits.first() else { continue };
            let m = &measured[i];
            if m.outcome != Outcome::Served {
                report.wrong_outcome += 1;
                report.detail.push(format!(
                    "{svc} served wake recorded {:?}: {tw:?} {m:?}",
                    m.outcome
                ));
                continue;
            }
            *report
                .by_precision
                .entry(format!("{:?}", m.precision))
                .or_insert(0) += 1;
            let truth_ms = tw.duration_ms().unwrap_or(0) as i64;
            let err = m.duration_ms as i64 - truth_ms;
            let odd = match m.precision {
                Precision::Ms => err.abs() > 10,
                Precision::S => !(-50..=2_000).contains(&err),
            };
            if odd {
                report.detail.push(format!(
                    "{svc} off by {err} ms: true {} .. {:?} ({:?} {:?}), measured {} .. {:?} {:?} key {}",
                    tw.started_at, tw.ended_at, tw.scheduled_at, tw.running_at,
                    m.requested_at, m.serving_at, m.precision, m.start_second
                ));
            }
            match m.precision {
                Precision::Ms => report.live_errors_ms.push(err.unsigned_abs()),
                Precision::S => report.bound_errors_ms.push(err),
            }
        }
        for (m, _) in measured.iter().zip(&matched).filter(|(_, hit)| !**hit) {
            report.phantom += 1;
            report.detail.push(format!("phantom {svc}: {m:?}"));
        }
    }
    service.stop().await;
    sim.stop().await;
    db.finish().await;
    report
}

/// Whether a recorded wake is this true one, by its start: within half a second when it
/// was timed live, and when known only to the second, dated at the start of the second it
/// began in (or of its first pod's, a little later), never after.
pub fn same_wake(t: &TruthWake, m: &WakeRecord) -> bool {
    let ms = (m.requested_at - t.started_at).num_milliseconds();
    match m.precision {
        Precision::Ms => ms.abs() < 500,
        Precision::S => (-1_000..=300).contains(&ms),
    }
}

/// The `p`th percentile of `values` (sorted here).
pub fn percentile(values: &[u64], p: f64) -> u64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}
