//! Benchmarks of the measurement budgets (README, "Benchmarks"):
//!
//! 1. throughput of the state machine on a replayed event stream, without and with the
//!    JSON decoding of watch events;
//! 2. memory per tracked revision, never woken and with 100 served wakes.
//!
//! The service's sync of a large fleet, its time and resident memory, is `benches/scale.rs`.
//!
//! Each throughput figure is the median of several rounds, run in alternating order, as
//! these 2-core machines vary by about 15% from run to run.
//! Run with `cargo bench --bench measure`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use chrono::Utc;
use serde_json::{Value, json};

use scaling_facts::measure::observe::{DeploymentSnap, Observation, ServiceSnap, Stamp, Via};
use scaling_facts::measure::tracker::{Stored, Tracker, TrackerSettings};
use scaling_facts::service::engine::BURST;
use scaling_facts::watch::{convert, types};
use scaling_facts_sim::knative::{
    self as kn, RevisionIdentity, condition, container_statuses, set_condition,
};
use scaling_facts_sim::objects::k8s_time;

#[path = "common/figures.rs"]
mod figures;
use figures::median;

/// Counts live heap bytes, for the memory figures.
struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

#[derive(Clone, Copy)]
enum Kind {
    Deployment,
    Pa,
    Pod,
}

fn identity(i: usize) -> RevisionIdentity {
    RevisionIdentity {
        namespace: format!("ns{}", i % 20),
        service: format!("svc{i}"),
        service_uid: format!("svc-uid-{i:08}"),
        name: format!("svc{i}-00001"),
        uid: format!("rev-uid-{i:08}-0000-0000-000000000000"),
        generation: 1,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        container: kn::user_container("registry.example/app:v1"),
    }
}

/// A watch event as the simulator's API server writes it, `type` before `object` as a
/// real one does (the other way round, serde buffers the whole object before it knows
/// the variant, and decoding alone runs at about half the speed).
fn event(kind: &str, obj: &Value) -> Vec<u8> {
    scaling_facts_sim::api::event_line(kind, obj).to_vec()
}

/// The watch events of one wake and its scale-down, as an API server sends them.
fn wake_events(id: &RevisionIdentity, wake: usize) -> Vec<(Kind, Vec<u8>)> {
    // One wake a minute: a wake's identity is its revision and start second. The stream is
    // replayed at once, so its object stamps are never behind their arrival: the machine
    // dates by arrival only what is not late.
    let now = Utc::now() + chrono::Duration::minutes(wake as i64);
    let mut out = Vec::new();
    let mut dep = kn::deployment(id, 1, 600);
    dep["metadata"]["namespace"] = json!(id.namespace);
    out.push((Kind::Deployment, event("MODIFIED", &dep)));
    let mut pa = kn::pod_autoscaler(id, now);
    pa["metadata"]["namespace"] = json!(id.namespace);
    pa["status"]["desiredScale"] = json!(1);
    set_condition(
        &mut pa,
        condition("ScaleTargetInitialized", "True", None, None, now),
    );
    out.push((Kind::Pa, event("MODIFIED", &pa)));
    let name = format!("{}-deployment-abc-{wake:05}", id.name);
    let mut pod = kn::pod(id, &name, now);
    pod["metadata"]["namespace"] = json!(id.namespace);
    pod["metadata"]["creationTimestamp"] = json!(k8s_time(now));
    out.push((Kind::Pod, event("ADDED", &pod)));
    set_condition(&mut pod, condition("PodScheduled", "True", None, None, now));
    pod["status"]["containerStatuses"] = container_statuses(
        "user-container",
        json!({"waiting": {"reason": "ContainerCreating"}}),
        false,
        0,
        None,
    );
    out.push((Kind::Pod, event("MODIFIED", &pod)));
    pod["status"]["phase"] = json!("Running");
    pod["status"]["containerStatuses"] = container_statuses(
        "user-container",
        json!({"running": {"startedAt": k8s_time(now)}}),
        false,
        0,
        None,
    );
    out.push((Kind::Pod, event("MODIFIED", &pod)));
    set_condition(&mut pod, condition("Ready", "True", None, None, now));
    out.push((Kind::Pod, event("MODIFIED", &pod)));
    pa["status"]["actualScale"] = json!(1);
    set_condition(&mut pa, condition("Active", "True", None, None, now));
    out.push((Kind::Pa, event("MODIFIED", &pa)));
    dep["spec"]["replicas"] = json!(0);
    out.push((Kind::Deployment, event("MODIFIED", &dep)));
    pa["status"]["desiredScale"] = json!(0);
    pa["status"]["actualScale"] = json!(0);
    set_condition(
        &mut pa,
        condition("Active", "False", Some("NoTraffic"), None, now),
    );
    out.push((Kind::Pa, event("MODIFIED", &pa)));
    pod["metadata"]["deletionTimestamp"] = json!(k8s_time(now + chrono::Duration::seconds(30)));
    pod["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    out.push((Kind::Pod, event("MODIFIED", &pod)));
    out.push((Kind::Pod, event("DELETED", &pod)));
    out
}

fn decode(kind: Kind, line: &[u8]) -> Option<Observation> {
    use kube::core::WatchEvent;
    fn obj<K: serde::de::DeserializeOwned>(line: &[u8]) -> Option<(bool, K)> {
        match serde_json::from_slice::<WatchEvent<K>>(line).ok()? {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => Some((false, o)),
            WatchEvent::Deleted(o) => Some((true, o)),
            _ => None,
        }
    }
    match kind {
        Kind::Deployment => convert::deployment(&obj::<types::Deployment>(line)?.1),
        Kind::Pa => convert::autoscaler(&obj::<types::PodAutoscaler>(line)?.1),
        Kind::Pod => {
            let (deleted, p) = obj::<types::Pod>(line)?;
            let (uid, pod) = convert::pod(&p)?;
            Some(if deleted {
                Observation::PodGone {
                    revision_uid: uid,
                    name: pod.name,
                }
            } else {
                Observation::Pod {
                    revision_uid: uid,
                    pod,
                }
            })
        }
    }
}

/// How many revisions each Service of the idle fleet has, as in the scale scenarios.
const FLEET_REVISIONS_PER_SERVICE: usize = 5;

/// Revision `i` of a fleet whose Services have `per_service` revisions each.
fn fleet_identity(i: usize, per_service: usize) -> RevisionIdentity {
    let s = i / per_service;
    RevisionIdentity {
        service: format!("svc{s}"),
        service_uid: format!("svc-uid-{s:08}"),
        name: format!("svc{s}-{:05}", i % per_service + 1),
        ..identity(i)
    }
}

/// A synced tracker that knows `n` idle revisions, `per_service` to a Service, each as
/// a cluster shows one at rest: its Revision, its Deployment at zero, its PodAutoscaler
/// at zero with `Active=False NoTraffic`.
fn tracker_with(n: usize, per_service: usize) -> Tracker {
    let mut t = Tracker::new(TrackerSettings::default());
    t.merge_history(Stored::default(), Stamp::now(Via::Listed));
    let day_ago = Utc::now() - chrono::Duration::days(1);
    for i in 0..n {
        let id = fleet_identity(i, per_service);
        if i % per_service == 0 {
            t.apply(
                Observation::Service(ServiceSnap {
                    namespace: id.namespace.clone(),
                    name: id.service.clone(),
                    uid: id.service_uid.clone(),
                    release: format!("{}.{}", id.service, id.namespace),
                    created: None,
                    traffic: vec![(fleet_identity(i + per_service - 1, per_service).name, 100)],
                    depends_on: Vec::new(),
                    template: Default::default(),
                }),
                Stamp::now(Via::Listed),
            );
        }
        t.apply(
            Observation::Revision(scaling_facts::measure::observe::RevisionSnap {
                uid: id.uid.clone(),
                name: id.name.clone(),
                namespace: id.namespace.clone(),
                service: id.service.clone(),
                created: day_ago,
                annotations: BTreeMap::new(),
                reachable: true,
            }),
            Stamp::now(Via::Listed),
        );
        t.apply(
            Observation::Deployment {
                revision_uid: id.uid.clone(),
                dep: DeploymentSnap {
                    version: 1,
                    replicas: 0,
                    generation: 2,
                },
            },
            Stamp::now(Via::Listed),
        );
        let mut pa = kn::pod_autoscaler(&id, day_ago);
        pa["metadata"]["namespace"] = json!(id.namespace);
        pa["metadata"]["resourceVersion"] = json!("7");
        pa["status"]["desiredScale"] = json!(0);
        for c in ["Active", "Ready"] {
            set_condition(
                &mut pa,
                condition(c, "False", Some("NoTraffic"), Some(kn::NO_TRAFFIC), day_ago),
            );
        }
        set_condition(
            &mut pa,
            condition("ScaleTargetInitialized", "True", None, None, day_ago),
        );
        let line = event("ADDED", &pa);
        t.apply(
            decode(Kind::Pa, &line).expect("decodes"),
            Stamp::now(Via::Listed),
        );
    }
    t.mark_synced(Stamp::now(Via::Listed));
    t.changed(Utc::now());
    t
}

fn throughput() {
    const REVISIONS: usize = 200;
    const WAKES: usize = 20;
    let mut stream: Vec<(Kind, Vec<u8>)> = Vec::new();
    for w in 0..WAKES {
        for i in 0..REVISIONS {
            stream.extend(wake_events(&identity(i), w));
        }
    }
    let decoded: Vec<Observation> = stream
        .iter()
        .map(|(k, l)| decode(*k, l).expect("decodes"))
        .collect();
    let bytes: usize = stream.iter().map(|(_, l)| l.len()).sum();
    println!(
        "replayed stream: {} events ({} wakes), {:.1} MB of JSON",
        decoded.len(),
        REVISIONS * WAKES,
        bytes as f64 / 1e6
    );
    let (mut machine_rates, mut json_rates, mut burst_rates, mut decode_rates) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..6 {
        let run_machine = |rates: &mut Vec<f64>| {
            let mut t = tracker_with(REVISIONS, 1);
            let obs: Vec<Observation> = decoded.to_vec();
            let start = Instant::now();
            let mut recorded = 0;
            for o in obs {
                recorded += t.apply(o, Stamp::now(Via::Watched)).wakes.len();
            }
            assert!(recorded >= REVISIONS * WAKES, "{recorded} wakes");
            rates.push(decoded.len() as f64 / start.elapsed().as_secs_f64());
        };
        // Decoding, the state machine, then the facts and the reports of releases whose
        // cold starts changed, as the engine derives them: after every `burst` events.
        let run_json = |rates: &mut Vec<f64>, burst: usize| {
            let mut t = tracker_with(REVISIONS, 1);
            let start = Instant::now();
            for events in stream.chunks(burst) {
                for (kind, line) in events {
                    let obs = decode(*kind, line).expect("decodes");
                    t.apply(obs, Stamp::now(Via::Watched));
                }
                let changes = t.changed(Utc::now());
                for key in &changes.reports {
                    std::hint::black_box(t.report(key));
                }
            }
            rates.push(stream.len() as f64 / start.elapsed().as_secs_f64());
        };
        let run_decode = |rates: &mut Vec<f64>| {
            let start = Instant::now();
            let mut kept = 0;
            for (kind, line) in &stream {
                kept += usize::from(std::hint::black_box(decode(*kind, line)).is_some());
            }
            assert_eq!(kept, stream.len());
            rates.push(stream.len() as f64 / start.elapsed().as_secs_f64());
        };
        if round % 2 == 0 {
            run_machine(&mut machine_rates);
            run_decode(&mut decode_rates);
            run_json(&mut json_rates, 1);
            run_json(&mut burst_rates, BURST);
        } else {
            run_json(&mut burst_rates, BURST);
            run_json(&mut json_rates, 1);
            run_decode(&mut decode_rates);
            run_machine(&mut machine_rates);
        }
    }
    let ratio = |rates: &[f64]| -> f64 {
        median(
            rates
                .iter()
                .zip(&decode_rates)
                .map(|(j, d)| j / d)
                .collect(),
        )
    };
    let (json_ratio, burst_ratio) = (ratio(&json_rates), ratio(&burst_rates));
    println!(
        "state machine (tracker.apply):               median {:>9.0} events/s (budget 50,000 per core)",
        median(machine_rates)
    );
    println!(
        "JSON decode alone (into slim types):         median {:>9.0} events/s",
        median(decode_rates)
    );
    println!(
        "JSON decode + state machine + facts after every event: median {:>9.0} events/s (budget 10,000), {json_ratio:.2} of decoding alone",
        median(json_rates),
    );
    println!(
        "the same as the engine takes a burst (facts once per {BURST} queued): median {:>9.0} events/s, {burst_ratio:.2} of decoding alone (budget 0.8)",
        median(burst_rates),
    );
}

fn memory() {
    const N: usize = 10_000;
    let before = live();
    let mut t = tracker_with(N, FLEET_REVISIONS_PER_SERVICE);
    let idle = (live() - before) as f64 / N as f64;
    println!(
        "memory per revision never woken: {idle:>7.0} bytes (budget 1,024), {N} revisions, {FLEET_REVISIONS_PER_SERVICE} to a Service, with its Deployment and PodAutoscaler"
    );
    const WOKEN: usize = 500;
    let before = live();
    for w in 0..100 {
        for i in 0..WOKEN {
            for (kind, line) in wake_events(&fleet_identity(i, FLEET_REVISIONS_PER_SERVICE), w) {
                t.apply(decode(kind, &line).unwrap(), Stamp::now(Via::Watched));
            }
        }
        t.changed(Utc::now());
    }
    let woken = idle + (live() - before) as f64 / WOKEN as f64;
    println!(
        "memory per revision with 100 served wakes and histograms: {woken:>7.0} bytes (budget 16,384)"
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if want("throughput") {
        throughput();
    }
    if want("memory") {
        memory();
    }
}
