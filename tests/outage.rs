//! Wakes lived wholly while the API server was away (issue: nothing the cluster shows is
//! lost). The simulator answers every request `503` and drops every watch; meanwhile a
//! wake happens from request to its pods deleted; then the API comes back and each watch
//! resumes from its version, receiving that whole wake at once, each kind on its own
//! backoff. Every true wake must be stored exactly once, served, within README's bound for
//! a wake known to the second (never below the truth, at most two seconds above).

mod common;

use std::time::Duration;

use scaling_facts_api::{Outcome, Precision, WakeKind};
use scaling_facts_sim::admin;
use scaling_facts_sim::faults::Fault;

use common::fault_run::{SCENARIO, pods_of, same_wake};
use common::{RunningService, TestDb, eventually, start_sim};

const WAKES: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_lived_during_an_outage_is_recorded_once_when_the_watches_resume() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let service = RunningService::start(&sim, &db.url, |_| {}).await;
    let cluster = sim.cluster.clone();
    let (ns, svc) = ("shop", "s0");
    let rev = format!("{svc}-00001");
    eventually(30, "the initial start", || {
        let truth = cluster.truth.wakes();
        truth
            .iter()
            .any(|w| w.revision == rev && w.kind == WakeKind::Initial && w.outcome.is_some())
            .then_some(())
    })
    .await;
    cluster.force_idle(ns, &rev);
    eventually(20, "back at zero", || {
        (pods_of(&cluster, ns, &rev) == 0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for i in 0..WAKES {
        // Away long enough for the whole wake, its pods deleted before it is back.
        admin::apply(&cluster, &Fault::Unavailable { ms: 4_000 });
        tokio::time::sleep(Duration::from_millis(200 + 100 * i as u64)).await;
        cluster
            .activate(ns, svc, Duration::ZERO, None)
            .await
            .expect("served");
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.force_idle(ns, &rev);
        eventually(10, "pods gone", || {
            (pods_of(&cluster, ns, &rev) == 0).then_some(())
        })
        .await;
        assert!(
            cluster.faults.unavailable(),
            "wake {i} outlasted the outage; lengthen it"
        );
        while cluster.faults.unavailable() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Each watch comes back on its own backoff (kube-rs': up to 30 s once it has
        // failed often); the service says when every one is healthy again.
        let book = service.state.book.clone();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        eventually(90, "every watch back", || {
            book.watch().connected.then_some(())
        })
        .await;
        tokio::time::sleep(Duration::from_millis(1_000)).await;
    }
    let truth: Vec<_> = cluster
        .truth
        .wakes()
        .into_iter()
        .filter(|w| w.revision == rev && w.kind == WakeKind::Wake && w.outcome.is_some())
        .collect();
    assert_eq!(truth.len(), WAKES);
    let uid = truth[0].revision_uid.clone();
    let store = db.store.clone();
    let measured = {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let m: Vec<_> = store
                .recent_wakes(&uid, 1_000)
                .await
                .unwrap()
                .into_iter()
                .filter(|w| w.kind == WakeKind::Wake)
                .collect();
            if m.len() >= WAKES || std::time::Instant::now() > deadline {
                break m;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let mut problems = Vec::new();
    for t in &truth {
        let hits: Vec<_> = measured.iter().filter(|m| same_wake(t, m)).collect();
        let [m] = hits.as_slice() else {
            problems.push(format!("{} records of {t:?}", hits.len()));
            continue;
        };
        let truth_ms = t.duration_ms().unwrap() as i64;
        let err = m.duration_ms as i64 - truth_ms;
        let ok = m.outcome == Outcome::Served
            && match m.precision {
                Precision::S => (0..=2_000).contains(&err),
                Precision::Ms => err.abs() <= 10,
            };
        println!(
            "true {} ms, recorded {} ms {:?} {:?}",
            truth_ms, m.duration_ms, m.precision, m.outcome
        );
        if !ok {
            problems.push(format!("{t:?} recorded as {m:?}"));
        }
    }
    let extra = measured.len().saturating_sub(truth.len());
    assert!(
        problems.is_empty() && extra == 0,
        "{} problems, {extra} records more than wakes: {problems:#?}\nmeasured: {measured:#?}",
        problems.len()
    );
    service.stop().await;
    sim.stop().await;
    db.finish().await;
}
