//! A Knative cluster's history as its objects change, written from docs/knative.md alone: every
//! write the controllers and the kubelet make, with its true time, and the truth of every
//! wake. Nothing here knows how the service measures.
//!
//! The writes follow the real order within one reconcile (§b): the KPA scales the
//! Deployment and writes the PA status in either order, pods follow, a ready pod makes the
//! PA `Active=True`. Status is absent on create (§f), conditions linger from the last wake
//! (a `TimedOut` stays until a later reconcile), revisions are born at scale, and the
//! timestamps are whole seconds of the one clock the truth uses.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use scaling_facts::measure::observe::{
    Cond, CondStatus, Container, DeploymentSnap, Observation, PaSnap, PodSnap, RevisionSnap,
    ServiceSnap,
};
use scaling_facts_api::{Outcome, WakeKind};

/// Knative's activation timeout for the revisions here: a 1 s progress deadline + 30 s.
pub const ACTIVATION_TIMEOUT_MS: i64 = 31_000;
/// How long after a pod turns ready the KPA writes `Active=True`: a service that sees the
/// PA first is late by up to this much, whatever the watches' lag.
pub const PA_FOLLOWS_READY_MS: i64 = 10;
/// The most the KPA's two writes of one reconcile (Deployment scale, PA status) are
/// apart: a service that sees only the second as it happens starts that much late.
pub const KPA_WRITE_GAP_MS: i64 = 30;
/// The stable window: a served pod is kept at least this long.
const STABLE_WINDOW_MS: i64 = 6_000;
pub const NAMESPACE: &str = "ns";
pub const SERVICE: &str = "svc";

/// What happens next to the revision receiving traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Episode {
    Served,
    Aborted,
    FailedPull,
    FailedCrash,
    FailedTimedOut,
    FailedUnschedulable,
    /// More pods while one serves: not a wake.
    ScaleUp,
    /// A new revision, born at scale, takes the traffic; the old one is deleted.
    Replace,
}

/// The object kinds, each its own watch stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Service,
    Revision,
    Autoscaler,
    Deployment,
    Pod,
}

pub const KINDS: [Kind; 5] = [
    Kind::Service,
    Kind::Revision,
    Kind::Autoscaler,
    Kind::Deployment,
    Kind::Pod,
];

/// One write: the object's new state, or None when it was deleted.
#[derive(Debug, Clone)]
pub struct Write {
    pub t: i64,
    pub kind: Kind,
    pub key: String,
    pub obs: Option<Observation>,
    /// What the watch layer reports when the object is gone.
    pub gone: Option<Observation>,
}

/// A wake as it really happened.
#[derive(Debug, Clone)]
pub struct TrueWake {
    pub revision_uid: String,
    pub kind: WakeKind,
    pub outcome: Outcome,
    /// Any of these reasons is right (an image pull alternates two).
    pub reasons: &'static [&'static str],
    pub start: i64,
    pub end: i64,
    /// From the start to the first pod's creation.
    pub pod_delay: i64,
}

struct Rev {
    uid: String,
    name: String,
    generation: i64,
    pa: PaSnap,
    pods: BTreeMap<String, PodSnap>,
    next_pod: u32,
    scale: u32,
}

pub struct World {
    /// Milliseconds since the epoch at t = 0.
    pub base_ms: i64,
    pub writes: Vec<Write>,
    pub truth: Vec<TrueWake>,
    rng: StdRng,
    version: u64,
    revs: Vec<Rev>,
    /// The write order of the KPA's reconcile: Deployment first, or PA status first.
    pub deployment_first: Option<bool>,
    /// The next request may come right after a scale to zero, before every watch shows
    /// the fall; else there is a quiet gap of some seconds.
    quick: bool,
}

impl World {
    pub fn new(seed: u64, deployment_first: Option<bool>, quick: bool) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let base_ms = 1_800_000_000_000 + rng.random_range(0..1_000);
        Self {
            base_ms,
            writes: Vec::new(),
            truth: Vec::new(),
            rng,
            version: 0,
            revs: Vec::new(),
            deployment_first,
            quick,
        }
    }

    /// The whole second `t` falls in.
    pub fn sec(&self, t: i64) -> DateTime<Utc> {
        let ms = self.base_ms + t;
        Utc.timestamp_opt(ms.div_euclid(1_000), 0).unwrap()
    }

    fn r(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi)
    }

    /// The quiet time after a scale to zero before what comes next.
    fn after_zero(&mut self) -> i64 {
        if self.quick { self.r(0, 2_500) } else { 2_500 }
    }

    fn cond(&self, status: CondStatus, reason: Option<&str>, t: i64) -> Cond {
        Cond {
            status,
            reason: reason.map(Into::into),
            message: None,
            since: Some(self.sec(t)),
        }
    }

    fn push(
        &mut self,
        t: i64,
        kind: Kind,
        key: String,
        obs: Option<Observation>,
        gone: Option<Observation>,
    ) {
        self.writes.push(Write {
            t,
            kind,
            key,
            obs,
            gone,
        });
    }

    fn service(&mut self, t: i64, traffic: Vec<(String, u32)>) {
        let snap = ServiceSnap {
            namespace: NAMESPACE.into(),
            name: SERVICE.into(),
            uid: "svc-uid".into(),
            release: format!("{SERVICE}.{NAMESPACE}"),
            created: None,
            traffic,
            depends_on: Vec::new(),
            template: Default::default(),
        };
        let gone = Observation::ServiceGone {
            namespace: NAMESPACE.into(),
            name: SERVICE.into(),
        };
        self.push(
            t,
            Kind::Service,
            SERVICE.into(),
            Some(Observation::Service(snap)),
            Some(gone),
        );
    }

    fn write_pa(&mut self, i: usize, t: i64) {
        self.version += 1;
        let rev = &mut self.revs[i];
        rev.pa.version = self.version;
        let obs = Observation::Autoscaler {
            revision_uid: rev.uid.clone(),
            pa: rev.pa.clone(),
        };
        let key = rev.uid.clone();
        self.push(t, Kind::Autoscaler, key, Some(obs), None);
    }

    fn write_dep(&mut self, i: usize, t: i64, replicas: u32) {
        self.version += 1;
        let rev = &mut self.revs[i];
        rev.generation += 1;
        let dep = DeploymentSnap {
            version: self.version,
            replicas,
            generation: rev.generation,
        };
        let obs = Observation::Deployment {
            revision_uid: rev.uid.clone(),
            dep,
        };
        let key = rev.uid.clone();
        self.push(t, Kind::Deployment, key, Some(obs), None);
    }

    fn write_pod(&mut self, i: usize, name: &str, t: i64, f: impl FnOnce(&mut PodSnap)) {
        self.version += 1;
        let rev = &mut self.revs[i];
        let pod = rev.pods.get_mut(name).expect("created");
        f(pod);
        pod.version = self.version;
        let obs = Observation::Pod {
            revision_uid: rev.uid.clone(),
            pod: pod.clone(),
        };
        let gone = Observation::PodGone {
            revision_uid: rev.uid.clone(),
            name: name.to_owned(),
        };
        self.push(t, Kind::Pod, name.to_owned(), Some(obs), Some(gone));
    }

    fn new_pod(&mut self, i: usize, t: i64) -> String {
        let created = self.sec(t);
        let rev = &mut self.revs[i];
        rev.next_pod += 1;
        let name = format!("{}-pod-{}", rev.name, rev.next_pod);
        rev.pods.insert(
            name.clone(),
            PodSnap {
                name: name.clone(),
                version: 0,
                created,
                deleting: None,
                running: false,
                scheduled: None,
                ready: None,
                container: Container::Absent,
                restarts: 0,
                last_exit_code: None,
            },
        );
        self.write_pod(i, &name, t, |_| {});
        name
    }

    fn delete_pods(&mut self, i: usize, t: i64) {
        let names: Vec<String> = self.revs[i].pods.keys().cloned().collect();
        for name in names {
            let tt = t + self.r(0, 20);
            let ready_false = self.cond(CondStatus::False, Some("ContainersNotReady"), tt);
            let asked = self.sec(tt);
            self.write_pod(i, &name, tt, |p| {
                p.deleting = Some(asked);
                p.ready = Some(ready_false);
            });
            let gone_at = tt + self.r(300, 2_000);
            let rev = &mut self.revs[i];
            rev.pods.remove(&name);
            let gone = Observation::PodGone {
                revision_uid: rev.uid.clone(),
                name: name.clone(),
            };
            self.push(gone_at, Kind::Pod, name, None, Some(gone));
        }
    }

    /// A pod through scheduling, image pull and start to ready at `t + ready`; returns
    /// when it was ready.
    fn pod_to_ready(&mut self, i: usize, name: &str, t: i64) -> i64 {
        let scheduled = t + self.r(30, 1_500);
        let c = self.cond(CondStatus::True, None, scheduled);
        self.write_pod(i, name, scheduled, |p| {
            p.scheduled = Some(c);
            p.container = Container::Waiting {
                reason: "ContainerCreating".into(),
                message: None,
            };
        });
        let running = scheduled + self.r(30, 3_000);
        let started = Some(self.sec(running));
        self.write_pod(i, name, running, |p| {
            p.running = true;
            p.container = Container::Running {
                started_at: started,
            };
        });
        let ready = running + self.r(20, 1_000);
        let c = self.cond(CondStatus::True, None, ready);
        self.write_pod(i, name, ready, |p| p.ready = Some(c));
        ready
    }

    /// Adds a revision of the service; `scale` pods at creation, or none.
    pub fn create(&mut self, t: i64, scale: u32) -> i64 {
        let n = self.revs.len() + 1;
        let name = format!("{SERVICE}-{n:05}");
        let uid = format!("uid-{n}");
        self.revs.push(Rev {
            uid: uid.clone(),
            name: name.clone(),
            generation: 0,
            pa: PaSnap::default(),
            pods: BTreeMap::new(),
            next_pod: 0,
            scale: scale.max(1),
        });
        let i = n - 1;
        let mut annotations = vec![(
            "serving.knative.dev/progress-deadline".to_owned(),
            "1s".to_owned(),
        )];
        if scale == 0 {
            // Born at zero: Knative allows it only by this setting (docs/knative.md, "Settings").
            annotations.push((
                "autoscaling.knative.dev/initial-scale".to_owned(),
                "0".to_owned(),
            ));
        }
        let snap = RevisionSnap {
            uid: uid.clone(),
            name,
            namespace: NAMESPACE.into(),
            service: SERVICE.into(),
            created: self.sec(t),
            annotations: annotations.into_iter().collect(),
            reachable: true,
        };
        let gone = Observation::RevisionGone { uid: uid.clone() };
        self.push(
            t,
            Kind::Revision,
            uid,
            Some(Observation::Revision(snap)),
            Some(gone),
        );
        // Created without status, as the API server stores every Knative object.
        self.write_pa(i, t + 1);
        self.write_dep(i, t + 2, scale);
        let status_at = t + self.r(3, 40);
        self.revs[i].pa.desired = Some(scale as i32);
        self.revs[i].pa.actual = Some(0);
        self.revs[i].pa.active = Some(if scale > 0 {
            self.cond(CondStatus::Unknown, Some("Queued"), status_at)
        } else {
            self.cond(CondStatus::False, Some("NoTraffic"), status_at)
        });
        self.write_pa(i, status_at);
        if scale == 0 {
            return status_at;
        }
        let ready = self.start_pods(i, t, scale);
        self.truth.push(TrueWake {
            revision_uid: self.revs[i].uid.clone(),
            kind: WakeKind::Initial,
            outcome: Outcome::Served,
            reasons: &[],
            start: t,
            end: ready.0,
            pod_delay: ready.1 - t,
        });
        ready.0
    }

    /// `n` pods to ready after `t`, then the PA; returns the first ready and first creation.
    fn start_pods(&mut self, i: usize, t: i64, n: u32) -> (i64, i64) {
        let mut first = (i64::MAX, i64::MAX);
        for _ in 0..n {
            let created = t + self.r(20, 200);
            let name = self.new_pod(i, created);
            let ready = self.pod_to_ready(i, &name, created);
            first = (first.0.min(ready), first.1.min(created));
        }
        let at = first.0 + self.r(0, PA_FOLLOWS_READY_MS);
        let active = self.cond(CondStatus::True, None, first.0);
        let rev = &mut self.revs[i];
        rev.pa.actual = Some(n as i32);
        rev.pa.initialized = true;
        if rev.pa.initialized_since.is_none() {
            rev.pa.initialized_since = active.since;
        }
        rev.pa.active = Some(active);
        self.write_pa(i, at);
        first
    }

    fn kpa_scale(&mut self, i: usize, t: i64, replicas: u32, active: Cond) {
        let first = self
            .deployment_first
            .unwrap_or_else(|| self.rng.random_bool(0.5));
        let gap = self.r(1, KPA_WRITE_GAP_MS);
        let (dep_at, pa_at) = if first { (t, t + gap) } else { (t + gap, t) };
        self.write_dep(i, dep_at, replicas);
        let rev = &mut self.revs[i];
        rev.pa.desired = Some(replicas as i32);
        if replicas == 0 {
            rev.pa.actual = Some(0);
        }
        rev.pa.active = Some(active);
        self.write_pa(i, pa_at);
    }

    fn scale_to_zero(&mut self, i: usize, t: i64, reason: &str) {
        let c = self.cond(CondStatus::False, Some(reason), t);
        self.kpa_scale(i, t, 0, c);
        self.delete_pods(i, t);
    }

    /// The next episode on the newest revision, starting at `t`; returns when it is over.
    pub fn episode(&mut self, e: Episode, t: i64) -> i64 {
        let i = self.revs.len() - 1;
        let uid = self.revs[i].uid.clone();
        if e == Episode::Replace {
            let scale = 1 + self.r(0, 1) as u32;
            let ready = self.create(t, scale);
            let name = self.revs[i + 1].name.clone();
            let routed = ready + self.r(5, 50);
            self.service(routed, vec![(name, 100)]);
            let end = ready + 2_000;
            if !self.revs[i].pods.is_empty() {
                self.scale_to_zero(i, end, "NoTraffic");
            }
            let down = ready + STABLE_WINDOW_MS + self.r(500, 3_000);
            self.scale_to_zero(i + 1, down, "NoTraffic");
            let gone = end + 4_000;
            let rev_gone = Observation::RevisionGone { uid: uid.clone() };
            self.push(gone, Kind::Revision, uid.clone(), None, Some(rev_gone));
            self.push(gone, Kind::Autoscaler, uid.clone(), None, None);
            self.push(gone, Kind::Deployment, uid, None, None);
            return gone.max(down) + 3_000;
        }
        if e == Episode::ScaleUp {
            // Needs a serving revision: wake it first.
            let served = self.wake(i, t, Episode::Served, false);
            let more = self.revs[i].scale + 2;
            let up = served + self.r(500, 2_000);
            let c = self.cond(CondStatus::True, None, served);
            self.kpa_scale(i, up, more, c.clone());
            for _ in 0..2 {
                let created = up + self.r(20, 200);
                let name = self.new_pod(i, created);
                self.pod_to_ready(i, &name, created);
            }
            let down = up + STABLE_WINDOW_MS + self.r(0, 3_000);
            self.scale_to_zero(i, down, "NoTraffic");
            return down + 2_500;
        }
        self.wake(i, t, e, true)
    }

    /// A wake from zero ending as `e`; with `scale_down` a served wake goes back to zero
    /// after the stable window. Returns when it is over (or served, without scale-down).
    fn wake(&mut self, i: usize, t: i64, e: Episode, scale_down: bool) -> i64 {
        let n = self.revs[i].scale;
        let queued = self.cond(CondStatus::Unknown, Some("Queued"), t);
        self.kpa_scale(i, t, n, queued);
        let created = t + self.r(20, 200);
        let name = self.new_pod(i, created);
        let uid = self.revs[i].uid.clone();
        let mut truth = TrueWake {
            revision_uid: uid,
            kind: WakeKind::Wake,
            outcome: Outcome::Failed,
            reasons: &[],
            start: t,
            end: 0,
            pod_delay: created - t,
        };
        let give_up = t + ACTIVATION_TIMEOUT_MS;
        let over = match e {
            Episode::Served => {
                let mut ready = self.pod_to_ready(i, &name, created);
                for _ in 1..n {
                    let c = t + self.r(20, 200);
                    let other = self.new_pod(i, c);
                    ready = ready.min(self.pod_to_ready(i, &other, c));
                }
                let active = self.cond(CondStatus::True, None, ready);
                let rev = &mut self.revs[i];
                rev.pa.actual = Some(n as i32);
                rev.pa.active = Some(active);
                let at = ready + self.r(0, PA_FOLLOWS_READY_MS);
                self.write_pa(i, at);
                truth.outcome = Outcome::Served;
                truth.end = ready;
                self.truth.push(truth);
                if !scale_down {
                    return ready;
                }
                let down = ready + STABLE_WINDOW_MS + self.r(500, 6_000);
                self.scale_to_zero(i, down, "NoTraffic");
                return down + self.after_zero();
            }
            Episode::Aborted => {
                let abort = t + self.r(1_500, 5_000);
                let scheduled = created + self.r(30, 1_000);
                if scheduled < abort {
                    let c = self.cond(CondStatus::True, None, scheduled);
                    self.write_pod(i, &name, scheduled, |p| p.scheduled = Some(c));
                }
                self.scale_to_zero(i, abort, "NoTraffic");
                truth.outcome = Outcome::Aborted;
                truth.end = abort;
                self.truth.push(truth);
                return abort + self.after_zero();
            }
            Episode::FailedCrash => {
                let running = created + self.r(100, 2_000);
                let started = Some(self.sec(running));
                self.write_pod(i, &name, running, |p| {
                    p.running = true;
                    p.scheduled = Some(Cond {
                        status: CondStatus::True,
                        reason: None,
                        message: None,
                        since: started,
                    });
                    p.container = Container::Running {
                        started_at: started,
                    };
                });
                let crash = running + self.r(100, 800);
                self.write_pod(i, &name, crash, |p| {
                    p.container = Container::Waiting {
                        reason: "CrashLoopBackOff".into(),
                        message: None,
                    };
                    p.restarts = 1;
                    p.last_exit_code = Some(1);
                });
                truth.reasons = &["CrashLoopBackOff"];
                truth.end = crash;
                give_up
            }
            Episode::FailedPull => {
                let scheduled = created + self.r(30, 500);
                let c = self.cond(CondStatus::True, None, scheduled);
                self.write_pod(i, &name, scheduled, |p| p.scheduled = Some(c));
                let mut at = scheduled + self.r(100, 800);
                truth.end = at + 5_000;
                let mut back_off = false;
                while at < give_up {
                    let reason = if back_off {
                        "ImagePullBackOff"
                    } else {
                        "ErrImagePull"
                    };
                    self.write_pod(i, &name, at, |p| {
                        p.container = Container::Waiting {
                            reason: reason.into(),
                            message: None,
                        };
                    });
                    back_off = !back_off;
                    at += 2_000;
                }
                truth.reasons = &["ErrImagePull", "ImagePullBackOff"];
                give_up
            }
            Episode::FailedUnschedulable => {
                let at = created + self.r(10, 100);
                let c = self.cond(CondStatus::False, Some("Unschedulable"), at);
                self.write_pod(i, &name, at, |p| p.scheduled = Some(c));
                truth.reasons = &["Unschedulable"];
                truth.end = at + 5_000;
                give_up
            }
            Episode::FailedTimedOut => {
                let running = created + self.r(100, 2_000);
                let started = Some(self.sec(running));
                self.write_pod(i, &name, running, |p| {
                    p.running = true;
                    p.container = Container::Running {
                        started_at: started,
                    };
                });
                truth.reasons = &["TimedOut"];
                truth.end = give_up;
                give_up
            }
            Episode::ScaleUp | Episode::Replace => unreachable!("handled by episode"),
        };
        self.truth.push(truth);
        // Knative gives up: the KPA scales to zero with `TimedOut`, which lingers until a
        // later reconcile replaces it, or not at all before the next wake.
        self.scale_to_zero(i, over, "TimedOut");
        if self.rng.random_bool(0.5) {
            let later = over + self.r(2_000, 6_000);
            let c = self.cond(CondStatus::False, Some("NoTraffic"), later);
            self.revs[i].pa.active = Some(c);
            self.write_pa(i, later);
            return later + 1_000;
        }
        over + 2_500
    }

    /// A history: the service, its first revision, then the episodes with idle gaps.
    pub fn history(
        seed: u64,
        born_at_zero: bool,
        initial_scale: u32,
        episodes: &[Episode],
        deployment_first: Option<bool>,
        quick: bool,
    ) -> Self {
        let mut w = World::new(seed, deployment_first, quick);
        w.service(0, Vec::new());
        let ready = w.create(100, if born_at_zero { 0 } else { initial_scale });
        w.service(ready.max(100) + 20, vec![(format!("{SERVICE}-00001"), 100)]);
        let mut t = ready + 3_000;
        if !born_at_zero {
            // Nobody calls it: back to zero after the stable window.
            let down = ready + STABLE_WINDOW_MS + w.r(500, 3_000);
            w.scale_to_zero(0, down, "NoTraffic");
            t = down + 2_500;
        }
        for e in episodes {
            t = w.episode(*e, t);
            t += if quick {
                w.r(50, 4_000)
            } else {
                w.r(500, 4_000)
            };
        }
        w.writes.sort_by_key(|x| x.t);
        w
    }
}
