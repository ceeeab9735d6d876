//! Every Service of a large cluster is in the book after the first sync, each time.
//!
//! A sync of 10,000 revisions queues thousands of observations at once; one lost among
//! them (as the engine's burst once dropped the item after its 256th) leaves a release
//! missing for good, with no error anywhere. Each round starts the service afresh on an
//! empty SQLite store against the simulator's `scale-10k.yaml` and compares the book with
//! the Services the API server lists, naming any that are missing.
//! `SYNC_ROUNDS` sets the rounds (default 3); `cargo bench --bench scale` runs 50.

mod common;

use std::collections::BTreeSet;

use kube::Api;
use kube::api::{DynamicObject, ListParams};
use scaling_facts_sim::resources;

use common::{RunningService, api_resource, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_service_of_ten_thousand_revisions_is_in_the_book_after_each_sync() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/scaling-facts-sim/scenarios/scale-10k.yaml"
    ))
    .unwrap();
    let (sim, client) = start_sim(&text).await;
    let services = Api::<DynamicObject>::all_with(client, &api_resource(resources::SERVICE));
    let listed = services.list(&ListParams::default()).await.unwrap();
    let expected: BTreeSet<String> = listed
        .items
        .iter()
        .map(|s| {
            let (ns, name) = (s.metadata.namespace.clone(), s.metadata.name.clone());
            format!("{}.{}", name.unwrap(), ns.unwrap())
        })
        .collect();
    assert_eq!(expected.len(), 2_000);
    let rounds: usize = std::env::var("SYNC_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for round in 1..=rounds {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/sync.db?mode=rwc", dir.path().display());
        let svc = RunningService::start(&sim, &db, |_| {}).await;
        // Readiness opens once the lists are in and their facts derived; a release the
        // sync lost never comes, so after a grace the book is what it is.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while svc.state.book.len() < 2_000 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let have: BTreeSet<String> = svc.state.book.release_keys().into_iter().collect();
        let missing: Vec<&String> = expected.difference(&have).collect();
        println!("round {round}: {} of 2000 releases in the book", have.len());
        assert!(
            missing.is_empty(),
            "round {round}: {} of 2000 releases in the book; missing {missing:?}",
            have.len()
        );
        svc.stop().await;
    }
    sim.stop().await;
}
