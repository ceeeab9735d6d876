//! The writer's Lease ([`scaling_facts::watch::lease`]) against the simulator's
//! `coordination.k8s.io/v1` Leases, which refuse a replace carrying a stale
//! `resourceVersion` as an API server does.
//!
//! - Three candidates: exactly one leads at any sample; a holder killed (nothing
//!   released) is replaced only once its Lease has expired; a holder that stops cleanly
//!   releases it and another takes it within a retry period.
//! - A holder partitioned from the API server stops leading before its Lease expires,
//!   and before anyone else leads.
//! - Clocks that disagree: a holder whose `renewTime` is an hour behind keeps the Lease
//!   while it renews; one an hour ahead loses it a duration after it stops.

mod common;

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use scaling_facts::watch::lease::{Elector, LeaseSettings, Standing};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use common::proxy::Proxy;
use common::{kube_client, start_sim};

const SCENARIO: &str = "seed: 5\nservices: []\n";
const LEASE: &str = "scaling-facts-writer";
const NAMESPACE: &str = "default";
const DURATION: Duration = Duration::from_secs(2);
const DEADLINE: Duration = Duration::from_millis(1_300);
const RETRY: Duration = Duration::from_millis(250);

struct Candidate {
    name: &'static str,
    standing: watch::Receiver<Standing>,
    task: JoinHandle<()>,
    stop: CancellationToken,
}

fn candidate(client: kube::Client, name: &'static str) -> Candidate {
    let elector = Elector::new(
        client,
        LeaseSettings {
            name: LEASE.into(),
            namespace: Some(NAMESPACE.into()),
            identity: name.into(),
            duration: DURATION,
            renew_deadline: DEADLINE,
            retry: RETRY,
        },
    );
    let (tx, standing) = watch::channel(Standing::Unknown);
    let stop = CancellationToken::new();
    let task = tokio::spawn(elector.run(tx, stop.clone()));
    Candidate {
        name,
        standing,
        task,
        stop,
    }
}

/// Indices of the candidates that may write now.
fn leaders(candidates: &[Option<Candidate>]) -> Vec<usize> {
    let now = Instant::now();
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.as_ref().is_some_and(|c| c.standing.borrow().leading(now)))
        .map(|(i, _)| i)
        .collect()
}

/// Samples every 10 ms until exactly one candidate leads (asserting never two).
async fn one_leader(candidates: &[Option<Candidate>], within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let now = leaders(candidates);
        assert!(now.len() <= 1, "two leaders at once: {now:?}");
        if let [one] = now[..] {
            return one;
        }
        assert!(Instant::now() < deadline, "no leader within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn api(client: &kube::Client) -> Api<Lease> {
    Api::namespaced(client.clone(), NAMESPACE)
}

/// The Lease's holder and when its hold runs out by its own timestamps.
async fn lease(client: &kube::Client) -> (Option<String>, Option<DateTime<Utc>>) {
    let spec = api(client)
        .get(LEASE)
        .await
        .unwrap()
        .spec
        .unwrap_or_default();
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
    let mut candidates: Vec<Option<Candidate>> = ["replica-a", "replica-b", "replica-c"]
        .into_iter()
        .map(|n| Some(candidate(client.clone(), n)))
        .collect();
    let name = |c: &[Option<Candidate>], i: usize| c[i].as_ref().unwrap().name;
    let first = one_leader(&candidates, Duration::from_secs(10)).await;
    // It keeps the Lease through renewals: three durations, one leader throughout.
    let until = Instant::now() + 3 * DURATION;
    while Instant::now() < until {
        assert_eq!(
            leaders(&candidates),
            [first],
            "the leader changed while renewing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        lease(&client).await.0.as_deref(),
        Some(name(&candidates, first))
    );

    // Killed: its task stops, nothing is released. The others wait out the Lease.
    let killed = candidates[first].take().unwrap();
    killed.task.abort();
    let _ = killed.task.await;
    let (holder, expiry) = lease(&client).await;
    assert_eq!(holder.as_deref(), Some(killed.name));
    let expiry = expiry.expect("a held Lease has a renewal time and duration");
    let second = one_leader(&candidates, 4 * DURATION).await;
    let taken = Utc::now();
    assert!(
        taken >= expiry,
        "{} took the Lease at {taken}, before it expired at {expiry}",
        name(&candidates, second)
    );
    assert_eq!(
        lease(&client).await.0.as_deref(),
        Some(name(&candidates, second))
    );

    // Letting go: the holder releases the Lease as it stops; the last one takes it at once,
    // not a duration later.
    let leaving = candidates[second].take().unwrap();
    leaving.stop.cancel();
    leaving.task.await.unwrap();
    let released = Instant::now();
    let third = one_leader(&candidates, 4 * DURATION).await;
    assert!(
        released.elapsed() < DURATION,
        "a released Lease was taken only after {:?}",
        released.elapsed()
    );
    assert_eq!(
        lease(&client).await.0.as_deref(),
        Some(name(&candidates, third))
    );
    sim.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_holder_stops_leading_before_its_lease_expires() {
    let (sim, client) = start_sim(SCENARIO).await;
    let proxy = Proxy::start(sim.url().trim_start_matches("http://").parse().unwrap()).await;
    let cut_off = kube_client(&sim.kubeconfig_yaml().replace(&sim.url(), &proxy.url())).await;
    // The partitioned one starts first and takes the Lease.
    let mut candidates = vec![Some(candidate(cut_off, "replica-a"))];
    assert_eq!(one_leader(&candidates, Duration::from_secs(10)).await, 0);
    candidates.push(Some(candidate(client.clone(), "replica-b")));
    tokio::time::sleep(2 * DURATION).await;
    assert_eq!(leaders(&candidates), [0], "the holder kept the Lease");

    proxy.cut();
    let cut = Instant::now();
    let (_, expiry) = lease(&client).await;
    let expiry = expiry.unwrap();
    // Sampled every 10 ms: never both; the holder stops first, within its deadline.
    let stopped = loop {
        let now = leaders(&candidates);
        assert!(now.len() <= 1, "two leaders at once: {now:?}");
        if now.is_empty() {
            break (Instant::now(), Utc::now());
        }
        assert_eq!(now, [0]);
        assert!(
            cut.elapsed() < DEADLINE + RETRY,
            "still leading {:?} after the cut",
            cut.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(
        stopped.1 < expiry,
        "the partitioned holder stopped at {}, after its Lease expired at {expiry}",
        stopped.1
    );
    let second = one_leader(&candidates, 4 * DURATION).await;
    assert_eq!(second, 1);
    assert!(
        stopped.0.elapsed() > DURATION - DEADLINE - RETRY,
        "the other led {:?} after the holder stopped",
        stopped.0.elapsed()
    );
    // Healed, the old holder finds the Lease taken and follows.
    proxy.heal();
    tokio::time::sleep(3 * RETRY + DEADLINE).await;
    assert_eq!(leaders(&candidates), [1]);
    let standing = candidates[0].as_ref().unwrap().standing.borrow().clone();
    assert!(
        matches!(&standing, Standing::Following { holder: Some(h), .. } if h == "replica-b"),
        "{standing:?}"
    );
    sim.stop().await;
}

/// A holder elsewhere, renewing with its own clock `skew` away from this machine's.
async fn foreign_holder(client: kube::Client, skew: chrono::TimeDelta, stop: CancellationToken) {
    let api = api(&client);
    let stamp = || {
        let t = Utc::now() + skew;
        k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
            k8s_openapi::jiff::Timestamp::from_microsecond(t.timestamp_micros()).unwrap(),
        )
    };
    while !stop.is_cancelled() {
        let mut lease = match api.get_opt(LEASE).await.unwrap() {
            Some(l) => l,
            None => Lease {
                metadata: kube::api::ObjectMeta {
                    name: Some(LEASE.into()),
                    ..Default::default()
                },
                spec: None,
            },
        };
        let spec = lease.spec.get_or_insert_default();
        spec.holder_identity = Some("elsewhere".into());
        spec.lease_duration_seconds = Some(DURATION.as_secs() as i32);
        spec.renew_time = Some(stamp());
        let pp = kube::api::PostParams::default();
        if lease.metadata.resource_version.is_some() {
            api.replace(LEASE, &pp, &lease).await.unwrap();
        } else {
            api.create(&pp, &lease).await.unwrap();
        }
        tokio::time::sleep(RETRY).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_that_disagree_change_nothing() {
    let (sim, client) = start_sim(SCENARIO).await;
    // An hour behind: by this machine's clock its Lease expired long ago, yet it renews.
    let behind = CancellationToken::new();
    let holder = tokio::spawn(foreign_holder(
        client.clone(),
        chrono::TimeDelta::hours(-1),
        behind.clone(),
    ));
    tokio::time::sleep(RETRY).await;
    let candidates = vec![Some(candidate(client.clone(), "replica-a"))];
    tokio::time::sleep(3 * DURATION).await;
    assert!(
        leaders(&candidates).is_empty(),
        "took a Lease that is being renewed"
    );
    behind.cancel();
    holder.await.unwrap();

    // An hour ahead, then gone: by its timestamps the Lease runs for an hour more, yet
    // it is taken a duration after it last changed.
    let ahead = CancellationToken::new();
    let holder = tokio::spawn(foreign_holder(
        client.clone(),
        chrono::TimeDelta::hours(1),
        ahead.clone(),
    ));
    tokio::time::sleep(3 * RETRY).await;
    ahead.cancel();
    holder.await.unwrap();
    let gone = Instant::now();
    one_leader(&candidates, 3 * DURATION).await;
    assert!(
        gone.elapsed() >= DURATION - RETRY,
        "taken after {:?}",
        gone.elapsed()
    );
    sim.stop().await;
}
