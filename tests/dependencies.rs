//! Declared dependencies woken with the release that calls them, against the simulator:
//! `web` declares `cart` and `pay` (and itself, and a release that does not exist), and
//! `cart` declares `web`, a cycle. One request wakes `web`; `cart` and `pay` start waking
//! with it, through the simulator's activator, so the three cost about the slowest start;
//! none wakes twice.

mod common;

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use scaling_facts_api::{RuntimeState, WakeKind};
use scaling_facts_sim::resources;

use common::{RunningService, TestDb, api_resource, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 8
services:
  - namespace: d
    name: web
    timing: {provisioning_ms: 100, pulling_image_ms: 300, starting_ms: 200}
  - namespace: d
    name: cart
    timing: {provisioning_ms: 100, pulling_image_ms: 600, starting_ms: 200}
  - namespace: d
    name: pay
    timing: {provisioning_ms: 100, pulling_image_ms: 900, starting_ms: 200}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waking_release_wakes_what_it_declares_once() {
    let (sim, client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let template = format!("{}/activator/{{namespace}}/{{service}}", sim.url());
    let service = RunningService::start(&sim, &db.url, |c| {
        c.act.dependency_wake_url = Some(template);
    })
    .await;
    let services: Api<DynamicObject> =
        Api::namespaced_with(client, "d", &api_resource(resources::SERVICE));
    for (name, declared) in [("web", "cart.d, pay.d, web.d, ghost.x"), ("cart", "web.d")] {
        let patch = serde_json::json!({"metadata": {"annotations": {"scaling-facts.io/depends-on": declared}}});
        services
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    let cluster = sim.cluster.clone();
    for svc in ["web", "cart", "pay"] {
        let rev = format!("{svc}-00001");
        eventually(20, "initial start", || {
            (common::fault_run::pods_of(&cluster, "d", &rev) > 0).then_some(())
        })
        .await;
        cluster.force_idle("d", &rev);
    }
    let book = service.state.book.clone();
    eventually(30, "all three at zero", || {
        ["web.d", "cart.d", "pay.d"]
            .iter()
            .all(|r| {
                book.get(r)
                    .is_some_and(|e| e.facts.state == RuntimeState::Idle)
            })
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;

    let started = std::time::Instant::now();
    cluster
        .activate("d", "web", Duration::ZERO, None)
        .await
        .expect("web served");
    let wakes = eventually(20, "cart and pay woken", || {
        let wakes: Vec<_> = cluster
            .truth
            .wakes()
            .into_iter()
            .filter(|w| w.kind == WakeKind::Wake && w.ended_at.is_some())
            .collect();
        (wakes.len() >= 3).then_some(wakes)
    })
    .await;
    let chain = started.elapsed();
    // Let anything doubled show itself.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let all: Vec<_> = cluster
        .truth
        .wakes()
        .into_iter()
        .filter(|w| w.kind == WakeKind::Wake)
        .collect();
    for svc in ["web", "cart", "pay"] {
        assert_eq!(
            all.iter().filter(|w| w.service == svc).count(),
            1,
            "{svc} woken once: {all:#?}"
        );
    }
    // The dependencies started with web, not after it served.
    let web = wakes.iter().find(|w| w.service == "web").unwrap();
    for w in wakes.iter().filter(|w| w.service != "web") {
        let lag = (w.started_at - web.started_at).num_milliseconds();
        assert!(
            (0..1_000).contains(&lag),
            "{} started {lag} ms after web",
            w.service
        );
    }
    assert_eq!(service.state.metrics.dependency_wakes.get(), 2);
    // Each recorded wake names its cause: web's a caller, cart's and pay's web.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let stored = loop {
        let wakes: Vec<_> = service
            .state
            .store
            .wakes_since(chrono::DateTime::UNIX_EPOCH)
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|w| w.kind == WakeKind::Wake)
            .collect();
        if wakes.len() >= 3 {
            break wakes;
        }
        assert!(std::time::Instant::now() < deadline, "three wakes stored");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for w in &stored {
        let expected = (w.release != "web.d").then_some("web.d");
        assert_eq!(w.caused_by.as_deref(), expected, "{w:#?}");
    }
    eprintln!("chain of three served in {chain:?}");
    service.stop().await;
}
