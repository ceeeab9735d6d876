//! Knative in miniature: the reconcilers and the kubelet, as far as a wake is concerned.
//!
//! A Service becomes a Revision, a PodAutoscaler and a Deployment; a changed template
//! makes the next revision and moves traffic to it. A request through the activator to a
//! revision at zero starts a wake, which writes the API changes docs/knative.md, "A wake's writes" describes, in
//! its order, and records the truth as it goes. After the idle window the revision scales
//! back to zero. Each wake runs as one task; an `epoch` per revision lets a scale-down
//! stop a wake in progress, which is how an aborted wake happens.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use super::cluster::Cluster;
use super::knative::{self as kn, RevisionIdentity, condition, set_condition};
use super::objects::k8s_time;
use super::resources::{CONFIG_MAP, DEPLOYMENT, POD_AUTOSCALER, REVISION, SERVICE};
use super::scenario::{FailureMode, Scenario, StartMode, Timing, WriteOrder};
use super::settings::Settings;
use scaling_facts_api::WakeKind;

/// Where a revision stands, as requests waiting in the activator see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Idle,
    Waking,
    Ready,
    Failed(String),
}

#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub timing: Timing,
    pub failure: Option<FailureMode>,
    /// Only this many starts of each revision fail; the rest serve. None: all fail.
    pub failing_starts: Option<u32>,
    pub start: StartMode,
}

struct Rev {
    id: RevisionIdentity,
    profile: Profile,
    readiness: watch::Sender<Readiness>,
    epoch: u64,
    in_flight: u32,
    last_request_end: Instant,
    pods: Vec<String>,
    truth: Option<usize>,
    /// Starts so far (initial and wakes), for `failing_starts`.
    starts: u32,
}

#[derive(Default)]
struct SvcState {
    profile: Profile,
    template_seen: Option<Value>,
    generation: u64,
    revisions: Vec<String>,
}

type Key = (String, String);

pub(crate) struct Control {
    state: Mutex<State>,
    pod_seq: AtomicU64,
}

struct State {
    rng: StdRng,
    write_order: WriteOrder,
    services: HashMap<Key, SvcState>,
    revisions: HashMap<Key, Rev>,
}

impl Control {
    pub fn new(seed: u64, write_order: WriteOrder) -> Self {
        Self {
            state: Mutex::new(State {
                rng: StdRng::seed_from_u64(seed),
                write_order,
                services: HashMap::new(),
                revisions: HashMap::new(),
            }),
            pod_seq: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this wake's KPA reconcile writes the Deployment before the PA status.
    pub fn deployment_first(&self) -> bool {
        let mut st = self.lock();
        match st.write_order {
            WriteOrder::DeploymentFirst => true,
            WriteOrder::AutoscalerFirst => false,
            WriteOrder::Random => rand::Rng::random_bool(&mut st.rng, 0.5),
        }
    }
}

/// Why the activator could not serve a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivateError {
    NoSuchService,
    NoRevision,
    /// The wake failed with this reason.
    Unavailable(String),
    /// The caller's deadline passed while the revision was waking.
    Timeout,
}

/// A served request.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Activated {
    pub revision: String,
    /// The request had to wait for a start.
    pub cold: bool,
    pub waited_ms: u64,
}

/// Decrements the in-flight count however the request ends, cancellation included.
struct InFlight {
    cluster: Arc<Cluster>,
    key: Key,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut st = self.cluster.control.lock();
        if let Some(rev) = st.revisions.get_mut(&self.key) {
            rev.in_flight = rev.in_flight.saturating_sub(1);
            rev.last_request_end = Instant::now();
        }
    }
}

impl Cluster {
    /// A revision's Knative settings, read from its annotations and the ConfigMaps.
    pub(crate) fn settings_of(&self, annotations: &BTreeMap<String, String>) -> Settings {
        let objects = self.lock();
        let data = |name: &str| -> BTreeMap<String, String> {
            objects
                .get(CONFIG_MAP, kn::SERVING_NS, name)
                .and_then(|cm| serde_json::from_value(cm["data"].clone()).ok())
                .unwrap_or_default()
        };
        Settings::resolve(
            annotations,
            &data("config-autoscaler"),
            &data("config-deployment"),
        )
    }

    /// Creates the ConfigMaps and services of a scenario and starts its traffic.
    pub(crate) fn load(self: &Arc<Self>, scenario: &Scenario) {
        for (name, data) in [
            ("config-autoscaler", &scenario.config_autoscaler),
            ("config-deployment", &scenario.config_deployment),
        ] {
            let mut data = kn::string_map(data);
            data["_example"] = json!("# documentation only; see the Knative docs");
            let cm = json!({"metadata": {"name": name}, "data": data});
            let _ = self.lock().create(CONFIG_MAP, kn::SERVING_NS, cm);
        }
        for spec in &scenario.services {
            let profile = Profile {
                timing: spec.timing.clone(),
                failure: spec.failure,
                failing_starts: spec.failing_starts,
                start: spec.start,
            };
            for name in spec.names() {
                self.create_service(
                    &spec.namespace,
                    &name,
                    &spec.labels,
                    &spec.service_annotations,
                    &spec.annotations,
                    profile.clone(),
                );
                for generation in 2..=spec.revisions {
                    let _ = self.lock().update(SERVICE, &spec.namespace, &name, |svc| {
                        svc["spec"]["template"]["metadata"]["annotations"]["sim.scaling-facts.io/generation"] =
                            json!(generation.to_string());
                    });
                    self.reconcile_service(&spec.namespace, &name);
                }
            }
        }
        for traffic in scenario.traffic.clone() {
            let cluster = self.clone();
            tokio::spawn(async move {
                let Some((ns, svc)) = traffic.service.split_once('/') else {
                    return;
                };
                tokio::time::sleep(Duration::from_millis(traffic.start_ms)).await;
                for _ in 0..traffic.count {
                    let c = cluster.clone();
                    let (ns, svc) = (ns.to_owned(), svc.to_owned());
                    let hold = Duration::from_millis(traffic.hold_ms);
                    tokio::spawn(async move { c.activate(&ns, &svc, hold, None).await });
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(traffic.every_ms)) => {}
                        () = cluster.shutdown.cancelled() => return,
                    }
                }
            });
        }
    }

    /// Creates a Knative Service with the given behaviour and reconciles it.
    pub fn create_service(
        self: &Arc<Self>,
        namespace: &str,
        name: &str,
        labels: &BTreeMap<String, String>,
        service_annotations: &BTreeMap<String, String>,
        annotations: &BTreeMap<String, String>,
        profile: Profile,
    ) {
        self.control
            .lock()
            .services
            .entry((namespace.to_owned(), name.to_owned()))
            .or_default()
            .profile = profile;
        let svc = json!({
            "metadata": {
                "name": name,
                "labels": kn::string_map(labels),
                "annotations": kn::string_map(service_annotations),
            },
            "spec": {
                "template": {
                    "metadata": {"annotations": kn::string_map(annotations)},
                    "spec": {"containers": [{"image": format!("registry.example/{name}:v1")}]},
                },
                "traffic": [{"latestRevision": true, "percent": 100}],
            },
        });
        if self.lock().create(SERVICE, namespace, svc).is_ok() {
            self.reconcile_service(namespace, name);
        }
    }

    /// Reacts to a write through the API, as Knative's controllers would.
    pub(crate) fn after_api_write(
        self: &Arc<Self>,
        kind: super::resources::Kind,
        namespace: &str,
        name: &str,
    ) {
        if kind == SERVICE {
            self.reconcile_service(namespace, name);
        }
    }

    /// Makes the next revision when the Service's template changed.
    pub fn reconcile_service(self: &Arc<Self>, namespace: &str, name: &str) {
        let Some(svc) = self.lock().get(SERVICE, namespace, name) else {
            return;
        };
        let template = svc["spec"]["template"].clone();
        let key = (namespace.to_owned(), name.to_owned());
        let (generation, profile) = {
            let mut st = self.control.lock();
            let s = st.services.entry(key.clone()).or_default();
            if s.template_seen.as_ref() == Some(&template) {
                return;
            }
            s.template_seen = Some(template.clone());
            s.generation += 1;
            (s.generation, s.profile.clone())
        };
        let rev_name = template["metadata"]["name"]
            .as_str()
            .map_or_else(|| format!("{name}-{generation:05}"), str::to_owned);
        let str_map = |v: &Value| -> BTreeMap<String, String> {
            serde_json::from_value(v.clone()).unwrap_or_default()
        };
        let mut container = template["spec"]["containers"][0].clone();
        if container["name"].is_null() {
            container["name"] = json!(kn::USER_CONTAINER);
        }
        let mut id = RevisionIdentity {
            namespace: namespace.to_owned(),
            service: name.to_owned(),
            service_uid: svc["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            name: rev_name.clone(),
            uid: String::new(),
            generation,
            labels: str_map(&template["metadata"]["labels"]),
            annotations: str_map(&template["metadata"]["annotations"]),
            container,
        };
        let now = Utc::now();
        let Ok(rev) = self
            .lock()
            .create_with_status(REVISION, namespace, kn::revision(&id, now))
        else {
            return;
        };
        id.uid = rev["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let settings = self.settings_of(&id.annotations);
        let idle_start = profile.start == StartMode::Idle;
        let replicas = if idle_start {
            0
        } else {
            settings.initial_replicas
        };
        {
            let mut objects = self.lock();
            let _ =
                objects.create_with_status(POD_AUTOSCALER, namespace, kn::pod_autoscaler(&id, now));
            let _ = objects.create_with_status(
                DEPLOYMENT,
                namespace,
                kn::deployment(&id, replicas, settings.progress_deadline_s),
            );
            let _ = objects.update(SERVICE, namespace, name, |s| {
                s["status"]["observedGeneration"] = s["metadata"]["generation"].clone();
                s["status"]["latestCreatedRevisionName"] = json!(rev_name);
                s["status"]["url"] = json!(format!("http://{name}.{namespace}.example.com"));
            });
        }
        let rev_key = (namespace.to_owned(), rev_name.clone());
        let (readiness, _) = watch::channel(Readiness::Idle);
        {
            let mut st = self.control.lock();
            st.services
                .entry(key)
                .or_default()
                .revisions
                .push(rev_name.clone());
            st.revisions.insert(
                rev_key.clone(),
                Rev {
                    id,
                    profile,
                    readiness,
                    epoch: 0,
                    in_flight: 0,
                    last_request_end: Instant::now(),
                    pods: Vec::new(),
                    truth: None,
                    starts: 0,
                },
            );
        }
        if idle_start {
            self.mark_scaled_to_zero(&rev_key, true);
            self.route_to(namespace, name, &rev_name);
        } else if replicas == 0 {
            // `initial-scale: 0`: born at zero, never served; its first rise is a wake.
            self.mark_scaled_to_zero(&rev_key, false);
            self.route_to(namespace, name, &rev_name);
        } else {
            self.start_wake(&rev_key, WakeKind::Initial, replicas);
        }
    }

    /// The state of a revision at zero, written at once: one that served once and went
    /// idle (large scenarios start this way), or one born at zero.
    fn mark_scaled_to_zero(&self, key: &Key, served_before: bool) {
        let (ns, name) = key;
        let now = Utc::now();
        let mut objects = self.lock();
        let _ = objects.update(POD_AUTOSCALER, ns, name, |pa| {
            pa["status"]["desiredScale"] = json!(0);
            pa["status"]["actualScale"] = json!(0);
            kn::pa_no_traffic(pa, now);
            let initialized = if served_before { "True" } else { "Unknown" };
            set_condition(
                pa,
                condition("ScaleTargetInitialized", initialized, None, None, now),
            );
        });
        let _ = objects.update(REVISION, ns, name, |rev| {
            rev["status"]["desiredReplicas"] = json!(0);
            rev["status"]["actualReplicas"] = json!(0);
            for c in ["ResourcesAvailable", "ContainerHealthy", "Ready"] {
                set_condition(rev, condition(c, "True", None, None, now));
            }
            set_condition(
                rev,
                kn::revision_active("False", Some("NoTraffic"), Some(kn::NO_TRAFFIC), Utc::now()),
            );
        });
    }

    /// Sends all traffic of a service to `revision`, which becomes reachable, and every
    /// other revision unreachable. As Knative's latest-ready tracking does, a revision
    /// older than the one routed to (an initial start that ends after its successor's)
    /// takes nothing.
    pub(crate) fn route_to(&self, namespace: &str, service: &str, revision: &str) {
        let revisions: Vec<String> = self
            .control
            .lock()
            .services
            .get(&(namespace.to_owned(), service.to_owned()))
            .map(|s| s.revisions.clone())
            .unwrap_or_default();
        let now = Utc::now();
        let mut objects = self.lock();
        let routed = objects.get(SERVICE, namespace, service).and_then(|s| {
            s["status"]["latestReadyRevisionName"]
                .as_str()
                .map(str::to_owned)
        });
        let position = |name: &str| revisions.iter().position(|r| r == name);
        if let (Some(routed), Some(new)) =
            (routed.as_deref().and_then(position), position(revision))
            && new < routed
        {
            return;
        }
        let _ = objects.update(SERVICE, namespace, service, |s| {
            s["status"]["traffic"] =
                json!([{"revisionName": revision, "percent": 100, "latestRevision": true}]);
            s["status"]["latestReadyRevisionName"] = json!(revision);
            for c in ["ConfigurationsReady", "RoutesReady", "Ready"] {
                set_condition(s, condition(c, "True", None, None, now));
            }
        });
        for name in &revisions {
            let (state, reachability) = match name == revision {
                true => ("active", "Reachable"),
                false => ("reserve", "Unreachable"),
            };
            let _ = objects.update(REVISION, namespace, name, |r| {
                if r["metadata"]["labels"]["serving.knative.dev/routingState"] == state {
                    return;
                }
                r["metadata"]["labels"]["serving.knative.dev/routingState"] = json!(state);
                r["metadata"]["annotations"]["serving.knative.dev/routingStateModified"] =
                    json!(k8s_time(now));
            });
            let _ = objects.update(POD_AUTOSCALER, namespace, name, |pa| {
                pa["spec"]["reachability"] = json!(reachability);
            });
        }
    }

    /// The revision that should take a request: a traffic target with percent > 0.
    fn target_revision(&self, namespace: &str, service: &str) -> Result<String, ActivateError> {
        let svc = self
            .lock()
            .get(SERVICE, namespace, service)
            .ok_or(ActivateError::NoSuchService)?;
        let targets: Vec<(String, u64)> = svc["status"]["traffic"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some((
                    t["revisionName"].as_str()?.to_owned(),
                    t["percent"].as_u64()?,
                ))
            })
            .filter(|(_, p)| *p > 0)
            .collect();
        if targets.is_empty() {
            return svc["status"]["latestCreatedRevisionName"]
                .as_str()
                .map(str::to_owned)
                .ok_or(ActivateError::NoRevision);
        }
        let total: u64 = targets.iter().map(|(_, p)| p).sum();
        let mut pick = rand::Rng::random_range(&mut self.control.lock().rng, 0..total);
        for (name, p) in &targets {
            if pick < *p {
                return Ok(name.clone());
            }
            pick -= p;
        }
        Ok(targets[0].0.clone())
    }

    /// A request through the activator: held while the revision wakes, then "served" for
    /// `hold`. Never returns before a pod is ready, unless the wake fails or the deadline
    /// passes.
    pub async fn activate(
        self: &Arc<Self>,
        namespace: &str,
        service: &str,
        hold: Duration,
        deadline: Option<Duration>,
    ) -> Result<Activated, ActivateError> {
        self.truth.count_request();
        let started = Instant::now();
        let revision = self.target_revision(namespace, service)?;
        let key = (namespace.to_owned(), revision.clone());
        let (mut rx, cold, annotations) = {
            let mut st = self.control.lock();
            let rev = st
                .revisions
                .get_mut(&key)
                .ok_or(ActivateError::NoRevision)?;
            rev.in_flight += 1;
            let rx = rev.readiness.subscribe();
            let state = rx.borrow().clone();
            (rx, state != Readiness::Ready, rev.id.annotations.clone())
        };
        let settings = self.settings_of(&annotations);
        let _in_flight = InFlight {
            cluster: self.clone(),
            key: key.clone(),
        };
        if matches!(*rx.borrow(), Readiness::Idle | Readiness::Failed(_)) {
            self.start_wake(&key, WakeKind::Wake, 1);
        }
        let limit = deadline.unwrap_or(Duration::from_secs(settings.activation_timeout_s() + 60));
        let outcome = {
            let waited =
                tokio::time::timeout(limit, rx.wait_for(|r| *r != Readiness::Waking)).await;
            match waited {
                Ok(Ok(r)) => r.clone(),
                Ok(Err(_)) => return Err(ActivateError::NoRevision),
                Err(_) => return Err(ActivateError::Timeout),
            }
        };
        match outcome {
            Readiness::Failed(reason) => return Err(ActivateError::Unavailable(reason)),
            // Scaled back to zero before a pod was ready: the wake was aborted.
            Readiness::Idle => return Err(ActivateError::Unavailable("aborted".into())),
            _ => {}
        }
        let waited_ms = started.elapsed().as_millis() as u64;
        tokio::time::sleep(hold).await;
        Ok(Activated {
            revision,
            cold,
            waited_ms,
        })
    }

    /// Starts a wake of a revision at zero (or one whose last wake failed).
    pub(crate) fn start_wake(self: &Arc<Self>, key: &Key, kind: WakeKind, replicas: u32) {
        let epoch = {
            let mut st = self.control.lock();
            let Some(rev) = st.revisions.get_mut(key) else {
                return;
            };
            if matches!(
                *rev.readiness.borrow(),
                Readiness::Waking | Readiness::Ready
            ) {
                return;
            }
            rev.epoch += 1;
            rev.readiness.send_replace(Readiness::Waking);
            rev.epoch
        };
        let cluster = self.clone();
        let key = key.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = cluster.run_wake(&key, epoch, kind, replicas) => {}
                () = cluster.shutdown.cancelled() => {}
            }
        });
    }
}

/// What a scale-down has to clean up.
pub(crate) struct Stopped {
    pub pods: Vec<String>,
    /// The truth index of the wake the scale-down ends, if any.
    pub truth: Option<usize>,
    pub was_waking: bool,
    pub deployment: String,
    pub terminating_ms: u64,
}

/// Small accessors to the control state, each under one short lock.
impl Cluster {
    pub(crate) fn control_epoch(&self, key: &Key) -> Option<u64> {
        self.control.lock().revisions.get(key).map(|r| r.epoch)
    }

    pub(crate) fn control_wake_inputs(
        &self,
        key: &Key,
    ) -> Option<(RevisionIdentity, Profile, (u64, u64, u64))> {
        let mut st = self.control.lock();
        let State { rng, revisions, .. } = &mut *st;
        let rev = revisions.get_mut(key)?;
        rev.starts += 1;
        let t = &rev.profile.timing;
        let samples = (
            t.provisioning_ms.sample(rng),
            t.pulling_image_ms.sample(rng),
            t.starting_ms.sample(rng),
        );
        let mut profile = rev.profile.clone();
        if profile.failing_starts.is_some_and(|n| rev.starts > n) {
            profile.failure = None;
        }
        Some((rev.id.clone(), profile, samples))
    }

    pub(crate) fn control_set_truth(&self, key: &Key, index: usize) {
        if let Some(rev) = self.control.lock().revisions.get_mut(key) {
            rev.truth = Some(index);
        }
    }

    pub(crate) fn control_set_pods(&self, key: &Key, pods: Vec<String>) {
        if let Some(rev) = self.control.lock().revisions.get_mut(key) {
            rev.pods = pods;
        }
    }

    pub(crate) fn next_pod_name(&self, id: &RevisionIdentity) -> String {
        let n = self.control.pod_seq.fetch_add(1, Ordering::AcqRel);
        // The low digits: FNV-1a leaves the high ones unchanged for nearby inputs.
        let suffix = &kn::short_hash(&format!("{}-{n}", id.uid))[5..];
        format!(
            "{}-{}-{suffix}",
            id.deployment_name(),
            &kn::short_hash(&id.uid)[..8]
        )
    }

    /// Marks the wake served; false when it was superseded meanwhile.
    pub(crate) fn control_served(&self, key: &Key, epoch: u64) -> bool {
        let mut st = self.control.lock();
        match st.revisions.get_mut(key) {
            Some(rev) if rev.epoch == epoch => {
                rev.readiness.send_replace(Readiness::Ready);
                rev.last_request_end = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// None when the epoch moved on; Some(None) while requests are in flight; else when
    /// the last request ended.
    pub(crate) fn control_idle_since(&self, key: &Key, epoch: u64) -> Option<Option<Instant>> {
        let st = self.control.lock();
        let rev = st.revisions.get(key).filter(|r| r.epoch == epoch)?;
        Some((rev.in_flight == 0).then_some(rev.last_request_end))
    }

    /// Ends the current epoch, for a scale-down.
    pub(crate) fn control_stop(&self, key: &Key, failure: Option<String>) -> Option<Stopped> {
        let mut st = self.control.lock();
        let rev = st.revisions.get_mut(key)?;
        rev.epoch += 1;
        let was_waking = *rev.readiness.borrow() == Readiness::Waking;
        rev.readiness.send_replace(match failure {
            Some(reason) => Readiness::Failed(reason),
            None => Readiness::Idle,
        });
        Some(Stopped {
            pods: std::mem::take(&mut rev.pods),
            truth: rev.truth.take(),
            was_waking,
            deployment: rev.id.deployment_name(),
            terminating_ms: rev.profile.timing.terminating_ms,
        })
    }

    /// Scales a revision to zero now, as if its idle window had passed; a wake in progress
    /// is aborted.
    pub fn force_idle(self: &Arc<Self>, namespace: &str, revision: &str) -> bool {
        let key = (namespace.to_owned(), revision.to_owned());
        if self.control_epoch(&key).is_none() {
            return false;
        }
        self.scale_down(&key, None);
        true
    }

    /// Where a revision stands now.
    pub fn readiness(&self, namespace: &str, revision: &str) -> Option<Readiness> {
        self.control
            .lock()
            .revisions
            .get(&(namespace.to_owned(), revision.to_owned()))
            .map(|r| r.readiness.borrow().clone())
    }
}
