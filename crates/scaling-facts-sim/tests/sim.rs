//! The simulator against kube-rs: a wake seen through real watchers in the order
//! docs/knative.md gives, a request held until a pod is ready, and recovery from every fault.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use scaling_facts_api::{Outcome, WakeKind};
use scaling_facts_sim::faults::Fault;
use scaling_facts_sim::resources::{self, Kind};
use scaling_facts_sim::{Cluster, admin};
use serde_json::Value;

use common::{api_resource, eventually, start_sim};

const ONE_SERVICE: &str = r#"
seed: 3
bookmark_interval_ms: 200
config_autoscaler: {stable-window: 6s}
services:
  - namespace: shop
    name: cart
    timing: {provisioning_ms: 150, pulling_image_ms: 300, starting_ms: 200, terminating_ms: 100}
"#;

/// Waits until the initial start is served and the revision is forced back to zero.
async fn idle_after_initial(cluster: &Arc<Cluster>) {
    eventually(10, "initial start served", || {
        cluster
            .truth
            .wakes()
            .iter()
            .find(|w| w.outcome == Some(Outcome::Served))
            .map(|_| ())
    })
    .await;
    assert!(cluster.force_idle("shop", "cart-00001"));
    eventually(10, "pods gone", || {
        (cluster.lock().count(resources::POD) == 0).then_some(())
    })
    .await;
}

fn api(client: &kube::Client, kind: Kind) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), "shop", &api_resource(kind))
}

fn rv(obj: &DynamicObject) -> u64 {
    obj.metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

fn cond<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// Describes what a watch event says about the wake, or None when it says nothing new.
fn describe(kind: Kind, obj: &DynamicObject) -> Option<String> {
    let v = serde_json::to_value(obj).unwrap();
    match kind.kind {
        "Deployment" => Some(format!("deployment replicas={}", v["spec"]["replicas"])),
        "PodAutoscaler" => {
            let active = cond(&v, "Active")?;
            Some(format!(
                "pa desired={} actual={} active={}/{}",
                v["status"]["desiredScale"],
                v["status"]["actualScale"],
                active["status"].as_str()?,
                active["reason"].as_str().unwrap_or("")
            ))
        }
        "Revision" => Some(format!(
            "revision desired={} actual={}",
            v["status"]["desiredReplicas"], v["status"]["actualReplicas"]
        )),
        "Pod" => {
            let scheduled =
                cond(&v, "PodScheduled").map(|c| c["status"].as_str().unwrap_or("").to_owned());
            let ready = cond(&v, "Ready").map(|c| c["status"].as_str().unwrap_or("").to_owned());
            let user = &v["status"]["containerStatuses"][0]["state"];
            let state = user
                .as_object()
                .and_then(|m| m.keys().next().cloned())
                .unwrap_or_default();
            Some(format!(
                "pod phase={} scheduled={} container={} ready={}",
                v["status"]["phase"].as_str()?,
                scheduled.unwrap_or_default(),
                state,
                ready.unwrap_or_default()
            ))
        }
        _ => None,
    }
}

#[tokio::test]
async fn a_wake_through_the_activator_is_seen_by_kube_watchers_in_order() {
    let (sim, client) = start_sim(ONE_SERVICE).await;
    idle_after_initial(&sim.cluster).await;

    let seen: Arc<Mutex<Vec<(u64, String)>>> = Arc::default();
    let mut tasks = Vec::new();
    for kind in [
        resources::DEPLOYMENT,
        resources::POD_AUTOSCALER,
        resources::REVISION,
        resources::POD,
    ] {
        let api = api(&client, kind);
        let seen = seen.clone();
        tasks.push(tokio::spawn(async move {
            let cfg = watcher::Config::default().labels("serving.knative.dev/service=cart");
            let mut stream = watcher::watcher(api, cfg).default_backoff().boxed();
            while let Some(ev) = stream.next().await {
                if let Ok(Event::Apply(obj)) = ev
                    && let Some(d) = describe(kind, &obj)
                {
                    seen.lock().unwrap().push((rv(&obj), d));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await; // watchers are watching
    let sent = Instant::now();
    let served = sim
        .cluster
        .activate("shop", "cart", Duration::ZERO, None)
        .await
        .unwrap();
    let took = sent.elapsed();
    assert!(served.cold);
    assert!(
        took >= Duration::from_millis(650),
        "held for the start: {took:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    for t in tasks {
        t.abort();
    }
    let mut events = seen.lock().unwrap().clone();
    events.sort();
    let order: Vec<&str> = events.iter().map(|(_, d)| d.as_str()).collect();
    let expected = [
        "deployment replicas=1",
        "pa desired=1 actual=0 active=Unknown/Queued",
        "revision desired=1 actual=0",
        "pod phase=Pending scheduled= container= ready=",
        "pod phase=Pending scheduled=True container=waiting ready=False",
        "pod phase=Running scheduled=True container=running ready=False",
        "pod phase=Running scheduled=True container=running ready=True",
        "pa desired=1 actual=1 active=True/",
        "revision desired=1 actual=1",
    ];
    let mut at = 0;
    for want in expected {
        let found = order[at..].iter().position(|d| *d == want);
        assert!(
            found.is_some(),
            "missing or out of order: {want}\nseen: {order:#?}"
        );
        at += found.unwrap() + 1;
    }

    // The truth recorded the same wake.
    let truth = sim.cluster.truth.wakes();
    let wake = truth
        .iter()
        .find(|w| w.kind == WakeKind::Wake)
        .expect("a wake");
    assert_eq!(wake.outcome, Some(Outcome::Served));
    let d = wake.duration_ms().unwrap();
    assert!((600..1_200).contains(&d), "{d} ms");
    sim.stop().await;
}

#[tokio::test]
async fn a_held_request_is_answered_after_a_pod_is_ready() {
    let (sim, client) = start_sim(ONE_SERVICE).await;
    idle_after_initial(&sim.cluster).await;
    let before = sim.cluster.truth.counters();
    // Through the HTTP activator, as a caller would.
    let url = format!("{}/activator/shop/cart", sim.url());
    let response = reqwest::Client::new().post(&url).send().await.unwrap();
    let answered = chrono::Utc::now();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["cold"], true);
    let pods = api(&client, resources::POD)
        .list(&ListParams::default())
        .await
        .unwrap();
    let pod = serde_json::to_value(&pods.items[0]).unwrap();
    assert_eq!(cond(&pod, "Ready").unwrap()["status"], "True");
    let truth = sim.cluster.truth.wakes();
    let wake = truth
        .iter()
        .rev()
        .find(|w| w.kind == WakeKind::Wake)
        .unwrap();
    assert_eq!(wake.outcome, Some(Outcome::Served));
    assert!(
        wake.ended_at.unwrap() <= answered,
        "answered only after ready"
    );
    let after = sim.cluster.truth.counters();
    assert_eq!(after.activator_requests, before.activator_requests + 1);
    assert_eq!(after.scale_ups, before.scale_ups + 1);
    // A second request while warm is served at once, without a wake.
    let warm: Value = reqwest::Client::new()
        .post(&url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(warm["cold"], false);
    assert_eq!(sim.cluster.truth.counters().scale_ups, after.scale_ups);
    sim.stop().await;
}

#[tokio::test]
async fn the_idle_window_scales_back_to_zero() {
    let (sim, _client) = start_sim(ONE_SERVICE).await;
    let served = eventually(10, "initial start", || {
        sim.cluster.truth.wakes().first().and_then(|w| w.ended_at)
    })
    .await;
    // W = 6 s: the pod goes once no request came for 6 s.
    eventually(12, "scale to zero", || {
        (sim.cluster.lock().count(resources::POD) == 0).then_some(())
    })
    .await;
    let idle_for = chrono::Utc::now() - served;
    assert!(idle_for >= chrono::Duration::seconds(6), "{idle_for}");
    let pa = sim
        .cluster
        .lock()
        .get(resources::POD_AUTOSCALER, "shop", "cart-00001")
        .unwrap();
    assert_eq!(pa["status"]["desiredScale"], 0);
    assert_eq!(cond(&pa, "Active").unwrap()["reason"], "NoTraffic");
    sim.stop().await;
}

/// How many initial lists a watcher finished, and `name@desiredScale` of what it saw.
type Inits = Arc<Mutex<(u32, BTreeSet<String>)>>;

/// Counts how often a watcher finished an initial list, and what it saw.
fn count_inits(client: &kube::Client) -> (Inits, tokio::task::JoinHandle<()>) {
    let state: Inits = Arc::default();
    let api = api(client, resources::POD_AUTOSCALER);
    let s = state.clone();
    let task = tokio::spawn(async move {
        let mut stream = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(ev) = stream.next().await {
            let mut st = s.lock().unwrap();
            match ev {
                Ok(Event::InitDone) => st.0 += 1,
                Ok(Event::Apply(o) | Event::InitApply(o)) => {
                    let v = serde_json::to_value(&o).unwrap();
                    st.1.insert(format!(
                        "{}@{}",
                        o.metadata.name.unwrap(),
                        v["status"]["desiredScale"]
                    ));
                }
                _ => {}
            }
        }
    });
    (state, task)
}

#[tokio::test]
async fn watchers_recover_from_every_fault() {
    let (sim, client) = start_sim(ONE_SERVICE).await;
    idle_after_initial(&sim.cluster).await;
    let (state, task) = count_inits(&client);
    eventually(5, "first list", || {
        (state.lock().unwrap().0 == 1).then_some(())
    })
    .await;

    // A dropped watch resumes from its last version: no relist, no event lost.
    admin::apply(&sim.cluster, &Fault::DropWatches);
    let c = sim.cluster.clone();
    tokio::spawn(async move { c.activate("shop", "cart", Duration::ZERO, None).await });
    eventually(10, "wake seen after a drop", || {
        state
            .lock()
            .unwrap()
            .1
            .contains("cart-00001@1")
            .then_some(())
    })
    .await;
    assert_eq!(state.lock().unwrap().0, 1, "a drop needs no relist");

    // 410 Gone on the next watch: the watcher relists.
    admin::apply(&sim.cluster, &Fault::GoneNext { count: 1 });
    admin::apply(&sim.cluster, &Fault::DropWatches);
    eventually(10, "relist after 410", || {
        (state.lock().unwrap().0 == 2).then_some(())
    })
    .await;

    // An API server restart: history gone, versions jumped; the watcher relists and
    // still sees what happens next.
    admin::apply(&sim.cluster, &Fault::Restart);
    eventually(10, "relist after restart", || {
        (state.lock().unwrap().0 == 3).then_some(())
    })
    .await;
    sim.cluster.force_idle("shop", "cart-00001");
    eventually(10, "scale-down seen after restart", || {
        state
            .lock()
            .unwrap()
            .1
            .contains("cart-00001@0")
            .then_some(())
    })
    .await;

    // Refused connections and slow answers: the backoff carries it through.
    admin::apply(&sim.cluster, &Fault::Refuse { ms: 1_500 });
    admin::apply(&sim.cluster, &Fault::Delay { ms: 200 });
    admin::apply(&sim.cluster, &Fault::DropWatches);
    let c = sim.cluster.clone();
    tokio::spawn(async move { c.activate("shop", "cart", Duration::ZERO, None).await });
    eventually(20, "wake seen after refusals", || {
        let st = state.lock().unwrap();
        (st.1.iter().filter(|s| *s == "cart-00001@1").count() == 1
            && sim.cluster.truth.wakes().len() >= 3)
            .then_some(())
    })
    .await;
    admin::apply(&sim.cluster, &Fault::Delay { ms: 0 });
    task.abort();
    sim.stop().await;
}

#[tokio::test]
async fn the_ten_thousand_revision_scenario_lists_and_watches() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/scale-10k.yaml"
    ))
    .unwrap();
    let (sim, client) = start_sim(&text).await;
    let revisions =
        Api::<DynamicObject>::all_with(client.clone(), &api_resource(resources::REVISION));
    let started = Instant::now();
    let mut stream = watcher::watcher(revisions, watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut n = 0;
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            Event::InitApply(_) => n += 1,
            Event::InitDone => break,
            _ => {}
        }
    }
    let took = started.elapsed();
    assert_eq!(n, 10_000);
    println!("kube-rs listed 10,000 revisions and started watching in {took:?}");
    sim.stop().await;
}
