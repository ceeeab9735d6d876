//! Leader election against the simulator's `coordination.k8s.io/v1` Leases, with the crate
//! the service will elect its writer with (kube-lease-manager): the groundwork of the
//! replicas issue. kube-lease-manager takes a free Lease by server-side apply, each
//! candidate under its own field manager, so that of two racing candidates the second
//! gets a conflict; the simulator's field ownership is what makes that hold here.
//!
//! Three candidates: exactly one holds the Lease at any sample; a holder that stops
//! renewing (killed, nothing released) is replaced only once its Lease has expired; a
//! holder that stops cleanly leaves the Lease without a holder, and the last candidate
//! takes it.

mod common;

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kube::Api;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use common::start_sim;

const SCENARIO: &str = "seed: 5\nservices: []\n";
const LEASE: &str = "scaling-facts-writer";
const NAMESPACE: &str = "scaling-facts";
const DURATION_SECONDS: u64 = 3;

type Candidate = (
    watch::Receiver<bool>,
    JoinHandle<kube_lease_manager::Result<LeaseManager>>,
);

async fn candidate(client: kube::Client, identity: &str) -> Candidate {
    LeaseManagerBuilder::new(client, LEASE)
        .with_namespace(NAMESPACE)
        .with_identity(identity)
        .with_duration(DURATION_SECONDS)
        .with_grace(1)
        .build()
        .await
        .expect("the lease manager starts")
        .watch()
        .await
}

/// Indices of the candidates that believe they lead.
fn leaders(candidates: &[Option<Candidate>]) -> Vec<usize> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.as_ref().is_some_and(|(rx, _)| *rx.borrow()))
        .map(|(i, _)| i)
        .collect()
}

/// Samples every 20 ms until exactly one candidate leads (asserting never two), and
/// returns it.
async fn one_leader(candidates: &[Option<Candidate>], within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let now = leaders(candidates);
        assert!(now.len() <= 1, "two leaders at once: {now:?}");
        if let [one] = now[..] {
            return one;
        }
        assert!(Instant::now() < deadline, "no leader within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The Lease's holder and when its hold runs out, as the API server has it.
async fn lease(client: &kube::Client) -> (Option<String>, Option<DateTime<Utc>>) {
    let api: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), NAMESPACE);
    let spec = api.get(LEASE).await.unwrap().spec.unwrap_or_default();
    let expiry = spec
        .renew_time
        .zip(spec.lease_duration_seconds)
        .map(|(t, d)| {
            let renewed = DateTime::<Utc>::from_timestamp_micros(t.0.as_microsecond()).unwrap();
            renewed + chrono::TimeDelta::seconds(i64::from(d))
        });
    (spec.holder_identity, expiry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_candidate_holds_the_lease_and_another_takes_it_only_when_free() {
    let (sim, client) = start_sim(SCENARIO).await;
    let names = ["replica-a", "replica-b", "replica-c"];
    let mut candidates = Vec::new();
    for name in names {
        candidates.push(Some(candidate(client.clone(), name).await));
    }
    let first = one_leader(&candidates, Duration::from_secs(15)).await;
    // It keeps the Lease through renewals: three lease durations, one leader throughout.
    let until = Instant::now() + Duration::from_secs(3 * DURATION_SECONDS);
    while Instant::now() < until {
        assert_eq!(
            leaders(&candidates),
            [first],
            "the leader changed while renewing"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(lease(&client).await.0.as_deref(), Some(names[first]));

    // Killed: its task stops, nothing is released. The others wait out the Lease.
    let (rx, task) = candidates[first].take().unwrap();
    task.abort();
    let _ = task.await;
    drop(rx);
    let (holder, expiry) = lease(&client).await;
    assert_eq!(holder.as_deref(), Some(names[first]));
    let expiry = expiry.expect("a held Lease has a renewal time and duration");
    let second = one_leader(&candidates, Duration::from_secs(4 * DURATION_SECONDS)).await;
    let taken = Utc::now();
    assert!(
        taken >= expiry,
        "{} took the Lease at {taken}, before it expired at {expiry}",
        names[second]
    );
    assert_eq!(lease(&client).await.0.as_deref(), Some(names[second]));

    // Letting go: the holder releases the Lease as it stops, and the last one takes it.
    let (rx, task) = candidates[second].take().unwrap();
    drop(rx);
    task.await.unwrap().expect("released");
    let (holder, _) = lease(&client).await;
    assert!(
        holder.is_none() || holder.as_deref() == Some(names[3 - first - second]),
        "released, or already taken by the last: {holder:?}"
    );
    let third = one_leader(&candidates, Duration::from_secs(4 * DURATION_SECONDS)).await;
    assert_eq!(third, 3 - first - second);
    assert_eq!(lease(&client).await.0.as_deref(), Some(names[third]));
    sim.stop().await;
}
