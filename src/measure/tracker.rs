//! Every revision's state machine and statistics, and the release facts they add up to.
//!
//! The tracker turns observations into recorded wakes (for the store) and into changed
//! release facts (for the book). It is single-threaded by design: one task feeds it, in
//! the order the watchers delivered, so no lock is ever held across the measuring.

mod across;
mod behind;
mod causes;
mod follow;
pub use follow::one_wake;
pub use history::{Stored, end_ms};
mod history;
mod hold;
mod lists;
mod merge;
mod pending;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::facts::ReleaseFacts;
use super::knobs::{ClusterDefaults, Knobs};
use super::machine::{ABORT_GRACE, Ctx, Finished, Machine, Thresholds};
use super::observe::{Observation, RevisionSnap, ServiceKey, ServiceSnap, Stamp};
use super::owners::{Owners, Refused};
use super::stats::{RevisionStats, WindowSettings};
use super::wake::{OpenChange, OpenWake, Rest, Underway};
use across::Across;
use scaling_facts_api::{
    ActiveRevision, ColdStarts, Failure, RuntimePresence, Scaling, WakeProgress,
};
use scaling_facts_api::{WakeKind, WakeRecord};

#[derive(Debug, Clone, Copy, Default)]
pub struct TrackerSettings {
    pub window: WindowSettings,
    pub thresholds: Thresholds,
    /// Count only what the store holds ([`Tracker::absorb`]), not what this tracker
    /// measures: with more than one replica, so that every replica counts the one writer's
    /// rows and serves the same facts ([`follow`]).
    pub stats_from_store: bool,
}

#[derive(Debug, Default)]
struct Rev {
    name: Box<str>,
    /// The Service it belongs to, the same key `by_service` holds (so shared); None
    /// until its Revision object is in.
    service: Option<ServiceKey>,
    /// Its autoscaling annotations; None when it has none, as most revisions. Boxed on
    /// purpose: the few with some pay an allocation so that the rest cost 8 bytes, not 24.
    #[allow(clippy::box_collection)]
    annotations: Option<Box<BTreeMap<String, String>>>,
    reachable: bool,
    knobs: Option<Knobs>,
    machine: Machine,
    /// None until its first wake is recorded: most revisions of a fleet never wake.
    stats: Option<Box<RevisionStats>>,
    /// The wake underway as last handed to the store (kind, request, start second): what
    /// a process killed now would continue from. Kept apart from the machine's, which
    /// can move between evaluations (a list, a restore), so every difference is written.
    stored_open: Option<Box<Underway>>,
    /// Its objects' observations while its Revision is not in ([`pending`]). Boxed: most
    /// revisions never have any.
    #[allow(clippy::box_collection)]
    pending: Option<Box<Vec<(Observation, Stamp, behind::Then)>>>,
}

impl Rev {
    /// Its Service; only called on a revision whose Revision object is in.
    fn service_key(&self) -> ServiceKey {
        self.service
            .clone()
            .expect("a measured revision has a Service")
    }
}

/// A deleted revision's last word: nothing more of it will come, so an abort's grace is
/// over for it.
fn last_word(stamp: Stamp) -> Stamp {
    Stamp {
        mono: stamp.mono + ABORT_GRACE,
        ..stamp
    }
}

/// A wake to store, and the Knative Service it is a wake of (for metric labels, which
/// are by namespace and service, whatever the release key).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub service: ServiceKey,
    pub wake: WakeRecord,
}

/// What one observation produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Wakes to store and log, in the order they ended.
    pub wakes: Vec<Recorded>,
    /// Wakes that began or ended, for the store's list of wakes underway.
    pub open: Vec<OpenChange>,
    /// Stored wakes found to be another record of a wake stored under a neighbouring
    /// second: to delete, by (revision UID, start second).
    pub retracted: Vec<(String, i64)>,
    /// Revisions whose last rest changed, for the store.
    pub rests: Vec<Rest>,
    /// The service first synced, with nothing stored of an earlier sync: for the store,
    /// which keeps the earliest.
    pub watching_since: Option<DateTime<Utc>>,
}

impl Output {
    /// Appends what a later step produced, in order.
    pub fn extend(&mut self, later: Output) {
        self.wakes.extend(later.wakes);
        self.open.extend(later.open);
        self.retracted.extend(later.retracted);
        self.rests.extend(later.rests);
        self.watching_since = self.watching_since.or(later.watching_since);
    }
}

/// The tracker's maps. Keys are names from the cluster, which its users choose, so the
/// hash is seeded; foldhash rather than SipHash because every watch event looks up a few.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

#[derive(Debug, Default)]
pub struct Tracker {
    settings: TrackerSettings,
    autoscaler_cm: BTreeMap<String, String>,
    deployment_cm: BTreeMap<String, String>,
    defaults: ClusterDefaults,
    /// By UID, shared with `by_service`. Boxed, so the map's spare slots cost little.
    revisions: Map<Arc<str>, Box<Rev>>,
    /// Revision UIDs of each service, so a release's revisions are found without a scan.
    by_service: Map<ServiceKey, Vec<Arc<str>>>,
    /// Boxed, so the map's spare slots cost a pointer each rather than a snapshot.
    services: Map<ServiceKey, Box<ServiceSnap>>,
    owners: Owners,
    /// Releases whose facts may have changed since the last `changed_facts`.
    dirty: BTreeSet<ServiceKey>,
    /// Releases whose cold-start report must be rebuilt.
    dirty_reports: BTreeSet<ServiceKey>,
    /// A hash of each release's last published facts (without `updated_at`): enough to
    /// tell a change, at a fraction of the memory of a copy.
    last_facts: Map<String, u64>,
    /// Releases whose Service disappeared since the last `changed`.
    removed: Vec<String>,
    /// Services deleted since the last `changed`, whatever became of their release: their
    /// per-service metric series go with them.
    services_gone: Vec<ServiceKey>,
    synced: bool,
    /// Wakes the last process had underway, continued once the lists are in.
    restored_open: Vec<OpenWake>,
    /// The store's history has been merged in (or there is none to wait for).
    history_merged: bool,
    /// Since when the service has watched (its first process's first sync, as stored):
    /// a revision created after is this service's to see start, even one whose whole
    /// initial start went by while no process watched ([`Ctx::watched_since`]).
    watching_since: Option<DateTime<Utc>>,
    /// The wakes this process recorded before the history merged: the history may hold
    /// them too (under the same key, or, for one found from timestamps, a neighbouring
    /// second), and each counts once.
    live: Vec<WakeRecord>,
    /// Everything fed in before the history merged, to feed again to a tracker that has
    /// it (None once merged, or when it outgrew [`history::MAX_REPLAY`]).
    replay: Option<Vec<history::Fed>>,
    /// Kinds whose (re)list is underway, and the revisions their objects touched.
    listing: BTreeSet<&'static str>,
    deferred: BTreeSet<String>,
    /// Wake requests sent to declared dependencies, until their wakes begin.
    causes: causes::Causes,
    /// The measuring watches that are down.
    behind: behind::Behind,
    /// While observations that waited for their Revision are evaluated: the watches that
    /// were down when the one evaluated arrived.
    then: Option<behind::Then>,
    /// Revisions deleted while a measuring watch was down: removed once it is back, so
    /// that their objects' backlog is measured first.
    gone_later: Vec<String>,
    /// What arrived for revisions while a watch was down ([`hold`]).
    held: hold::Held,
}

/// What changed for the book since the last call.
#[derive(Debug, Default)]
pub struct Changes {
    pub facts: Vec<ReleaseFacts>,
    /// Services whose cold-start report changed. [`Tracker::report`] renders each, one at a
    /// time: a first sync of a large fleet would otherwise hold every report at once.
    pub reports: Vec<ServiceKey>,
    pub removed: Vec<String>,
    /// Services deleted from the cluster.
    pub services_gone: Vec<ServiceKey>,
    /// Every refused claim on a release key, when they changed.
    pub refused: Option<Vec<Refused>>,
}

impl Tracker {
    pub fn new(settings: TrackerSettings) -> Self {
        Self {
            settings,
            replay: Some(Vec::new()),
            ..Default::default()
        }
    }

    fn ctx(&self, knobs: &Knobs, now: Stamp) -> Ctx {
        let then = self.then.unwrap_or_else(|| self.behind.then(now.mono));
        Ctx {
            behind: then.any,
            pa_behind: then.pa,
            thresholds: self.settings.thresholds,
            activation_timeout: std::time::Duration::from_secs(knobs.activation_timeout_seconds()),
            born_at_zero: knobs.initial_replicas == 0,
            watched_since: self.watching_since,
        }
    }

    fn knobs(&self, rev: &Rev) -> Knobs {
        rev.knobs.unwrap_or_else(|| {
            static NONE: BTreeMap<String, String> = BTreeMap::new();
            let annotations = rev.annotations.as_deref().unwrap_or(&NONE);
            Knobs::resolve(annotations, &self.defaults, rev.reachable)
        })
    }

    /// Applies one observation.
    pub fn apply(&mut self, obs: Observation, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Apply(Box::new(obs.clone()), stamp));
        let mut out = Output::default();
        self.hold(&obs, stamp);
        let uid = match obs {
            Observation::Service(s) => {
                let key = ServiceKey::new(&s.namespace, &s.name);
                let before = self.services.get(&key).map(|p| p.release.clone());
                for k in self.owners.claim(&key, &s.release, s.created) {
                    self.dirty.insert(k.clone());
                    self.dirty_reports.insert(k);
                }
                // A relabelled Service leaves its old key; gone, unless another claims it.
                if let Some(old) = before.filter(|old| *old != s.release)
                    && self.owners.owner(&old).is_none()
                {
                    self.last_facts.remove(&old);
                    self.removed.push(old);
                }
                self.services.insert(key, Box::new(s));
                return out;
            }
            Observation::ServiceGone { namespace, name } => {
                let key = ServiceKey::new(&namespace, &name);
                if self.services.remove(&key).is_some() {
                    self.services_gone.push(key.clone());
                    match self.owners.remove(&key) {
                        // The next claimant speaks for the release now.
                        Some((_, Some(next))) => {
                            self.dirty.insert(next.clone());
                            self.dirty_reports.insert(next);
                        }
                        Some((release, None)) => {
                            self.last_facts.remove(&release);
                            self.removed.push(release);
                        }
                        // A refused claimant: nothing was served under its claim.
                        None => {}
                    }
                }
                return out;
            }
            Observation::ConfigMap { name, data } => {
                match name.as_str() {
                    "config-autoscaler" => self.autoscaler_cm = data,
                    "config-deployment" => self.deployment_cm = data,
                    _ => return out,
                }
                self.defaults =
                    ClusterDefaults::from_config_maps(&self.autoscaler_cm, &self.deployment_cm);
                for rev in self.revisions.values_mut() {
                    rev.knobs = None;
                }
                let keys: Vec<_> = self.services.keys().cloned().collect();
                self.dirty.extend(keys);
                return out;
            }
            Observation::Revision(r) => {
                let uid = self.revision_seen(r, stamp);
                self.replay_pending(&uid, &mut out);
                uid
            }
            Observation::RevisionGone { uid } => {
                // Its objects' backlog may still be on its way, with whole wakes in it.
                if self.behind.holding(stamp.mono) && self.revisions.contains_key(uid.as_str()) {
                    self.judge_gone_now(&uid, stamp, &mut out);
                    self.gone_later.push(uid);
                    return out;
                }
                self.revision_gone(&uid, stamp, &mut out);
                return out;
            }
            obs @ (Observation::Deployment { .. }
            | Observation::Autoscaler { .. }
            | Observation::Pod { .. }
            | Observation::PodGone { .. }) => match self.take_in(obs, stamp) {
                Some(uid) => uid,
                None => return out,
            },
        };
        if self.synced && !self.defer(&uid, stamp) {
            self.evaluate(&uid, stamp, &mut out);
        }
        out
    }

    /// A revision deleted while a watch is down is judged at once on what came of it, as
    /// if every watch were back: provisionally, as everything measured while one is down
    /// ([`hold`]). A process killed before the backlogs are in then restarts with the
    /// verdict stored, not a wake underway that no list will show again.
    fn judge_gone_now(&mut self, uid: &str, stamp: Stamp, out: &mut Output) {
        if !self.synced {
            return;
        }
        self.then = Some(behind::Then {
            any: false,
            pa: false,
        });
        self.evaluate(uid, last_word(stamp), out);
        self.then = None;
    }

    /// A revision is deleted: a wake of it that ended is judged now, as nothing more of it
    /// will come to wait for (the abort's grace is over for it); a wake still underway
    /// goes from the store; its release's facts change.
    fn revision_gone(&mut self, uid: &str, stamp: Stamp, out: &mut Output) {
        if self.synced {
            self.evaluate(uid, last_word(stamp), out);
        }
        self.held.remove(uid);
        if let Some(rev) = self.revisions.remove(uid) {
            if rev.stored_open.is_some() {
                out.open.push(OpenChange::Closed {
                    revision_uid: uid.to_owned(),
                });
            }
            if let Some(key) = rev.service {
                if let Some(uids) = self.by_service.get_mut(&key) {
                    uids.retain(|u| **u != *uid);
                }
                self.dirty.insert(key.clone());
                self.dirty_reports.insert(key);
            }
        }
    }

    fn revision_seen(&mut self, r: RevisionSnap, stamp: Stamp) -> String {
        let probe = ServiceKey::new(&r.namespace, &r.service);
        let key = match self.by_service.get_key_value(&probe) {
            Some((key, _)) => key.clone(),
            None => probe,
        };
        let rev = rev_entry(&mut self.revisions, &r.uid);
        rev.machine
            .revision_seen(r.created, stamp, &self.settings.thresholds);
        rev.name = r.name.into();
        rev.reachable = r.reachable;
        rev.annotations = (!r.annotations.is_empty()).then(|| Box::new(r.annotations));
        rev.knobs = None;
        rev.service = Some(key.clone());
        let (uid, _) = self
            .revisions
            .get_key_value(r.uid.as_str())
            .expect("entered above");
        let uids = self.by_service.entry(key.clone()).or_default();
        if !uids.contains(uid) {
            uids.push(uid.clone());
        }
        self.dirty.insert(key.clone());
        self.dirty_reports.insert(key);
        r.uid
    }

    fn evaluate(&mut self, uid: &str, stamp: Stamp, out: &mut Output) {
        // A revision is measured once its Revision object is in: until then its wakes
        // would have no name or release, an initial start no creation to start from, and
        // its knobs no annotations. Watches keep no common order, so its Deployment, PA
        // and pods can come first; they wait in its machine, edges in order.
        let Some(rev) = self
            .revisions
            .get(uid)
            .filter(|r| r.machine.created().is_some())
        else {
            return;
        };
        let knobs = self.knobs(rev);
        let ctx = self.ctx(&knobs, stamp);
        let rev = self.revisions.get_mut(uid).expect("looked up above");
        rev.knobs = Some(knobs);
        let finished = rev.machine.evaluate(stamp, &ctx);
        let open_after = rev.machine.open_wake();
        if rev.stored_open.as_deref() != open_after.as_ref() {
            rev.stored_open = open_after.clone().map(Box::new);
            out.open.push(match open_after {
                Some(u) => OpenChange::Opened(OpenWake::new(uid, u)),
                None => OpenChange::Closed {
                    revision_uid: uid.to_owned(),
                },
            });
        }
        // Not before the store's history is in: the rest it holds is the last process's,
        // which the lists are yet to be compared with (see `merge_history`).
        if self.history_merged
            && let Some(at) = rev.machine.take_rest()
        {
            out.rests.push(Rest {
                revision_uid: uid.to_owned(),
                at,
            });
        }
        let service = rev.service_key();
        // Any observation may change what the release looks like; unchanged facts are
        // filtered by their fingerprint before they reach the book.
        if !self.dirty.contains(&service) {
            self.dirty.insert(service.clone());
        }
        if finished.is_empty() {
            return;
        }
        let rev = self.revisions.get(uid).expect("looked up above");
        let release = self.release_of(rev);
        let rev = self.revisions.get_mut(uid).expect("looked up above");
        for f in finished {
            let mut record = to_record(f, release.clone(), rev, uid);
            if record.kind != WakeKind::Initial {
                record.caused_by = self.causes.take(&release, record.requested_at);
            }
            if !self.settings.stats_from_store {
                rev.stats.get_or_insert_default().record(
                    &record,
                    &self.settings.window,
                    stamp.wall,
                );
                if !self.history_merged {
                    self.live.push(record.clone());
                }
            }
            if let Some(shadow) = self.held.get_mut(uid) {
                shadow.provisional(&record);
            }
            out.wakes.push(Recorded {
                service: service.clone(),
                wake: record,
            });
        }
        self.dirty_reports.insert(service);
    }

    /// Every observation so far reflects the cluster: evaluate every revision once.
    pub fn mark_synced(&mut self, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Synced(stamp));
        self.synced = true;
        let mut out = Output::default();
        if self.watching_since.is_none() {
            self.watching_since = Some(stamp.wall);
            out.watching_since = Some(stamp.wall);
        }
        for o in std::mem::take(&mut self.restored_open) {
            if !self.continue_open(&o, stamp) {
                out.open.push(OpenChange::Closed {
                    revision_uid: o.revision_uid,
                });
            }
        }
        for rev in self.revisions.values_mut() {
            rev.machine.listed();
        }
        let uids: Vec<Arc<str>> = self.revisions.keys().cloned().collect();
        for uid in uids {
            self.evaluate(&uid, stamp, &mut out);
        }
        let keys: Vec<_> = self.services.keys().cloned().collect();
        self.dirty.extend(keys.iter().cloned());
        self.dirty_reports.extend(keys);
        out
    }

    /// Continues a wake the last process had underway; false when its revision is gone.
    fn continue_open(&mut self, o: &OpenWake, stamp: Stamp) -> bool {
        let Some(rev) = self.revisions.get(o.revision_uid.as_str()) else {
            return false;
        };
        let ctx = self.ctx(&self.knobs(rev), stamp);
        let rev = self
            .revisions
            .get_mut(o.revision_uid.as_str())
            .expect("looked up above");
        rev.machine.restore_open(o.underway(), stamp, &ctx);
        rev.stored_open = Some(Box::new(o.underway()));
        true
    }

    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// Every wake underway as the store should hold it: the machines' own, and before the
    /// sync the stored ones still waiting to be continued. After any output is written,
    /// the store's wakes underway are these, so a process killed then loses none.
    pub fn open_wakes(&self) -> Vec<OpenWake> {
        let mut open: Vec<OpenWake> = self
            .revisions
            .iter()
            .filter_map(|(uid, r)| Some(OpenWake::new(uid, r.machine.open_wake()?)))
            .collect();
        open.extend(
            self.restored_open
                .iter()
                .filter(|o| !open.iter().any(|m| m.revision_uid == o.revision_uid))
                .cloned()
                .collect::<Vec<_>>(),
        );
        open.sort_by(|a, b| a.revision_uid.cmp(&b.revision_uid));
        open
    }

    /// Time passing: failure thresholds of wakes in progress, and the window's age limit.
    pub fn tick(&mut self, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Tick(stamp));
        self.causes.expire(stamp.wall);
        // A watch down too long holds nothing any more.
        let mut out = Output::default();
        self.release_held(stamp, &mut out);
        out.extend(self.evaluate_waking(stamp));
        // A watch down too long no longer holds anything back.
        self.gone_now(stamp, &mut out);
        out
    }

    /// Evaluates every revision with a wake open (or one to record), once synced.
    fn evaluate_waking(&mut self, stamp: Stamp) -> Output {
        let mut out = Output::default();
        if !self.synced {
            return out;
        }
        let waking: Vec<Arc<str>> = self
            .revisions
            .iter()
            .filter(|(_, r)| r.machine.waking())
            .map(|(uid, _)| uid.clone())
            .collect();
        for uid in waking {
            self.evaluate(&uid, stamp, &mut out);
        }
        out
    }

    /// The release a revision's wakes are recorded under: its Service's key when the
    /// Service owns it, else the Service's own `<name>.<namespace>`.
    fn release_of(&self, rev: &Rev) -> String {
        let key = rev.service_key();
        match self.services.get(&key) {
            Some(s) if self.owners.owns(&key) => s.release.clone(),
            _ => key.default_release(),
        }
    }

    /// Every refused claim on a release key.
    pub fn refused(&self) -> Vec<Refused> {
        self.owners.refused()
    }

    /// Facts of releases that changed since the last call, cold-start reports to replace,
    /// and releases that are gone.
    pub fn changed(&mut self, now: DateTime<Utc>) -> Changes {
        let dirty = std::mem::take(&mut self.dirty);
        // Sized to what may change: a `Vec` of these grown from empty asks for four.
        let mut facts = Vec::with_capacity(dirty.len());
        for key in dirty {
            let Some(f) = self.facts_of(&key, now) else {
                continue;
            };
            let hash = f.fingerprint();
            let changed = match self.last_facts.get_mut(&f.release) {
                Some(last) => std::mem::replace(last, hash) != hash,
                None => {
                    self.last_facts.insert(f.release.clone(), hash);
                    true
                }
            };
            if changed {
                facts.push(f);
            }
        }
        Changes {
            facts,
            reports: std::mem::take(&mut self.dirty_reports)
                .into_iter()
                .collect(),
            removed: std::mem::take(&mut self.removed),
            services_gone: std::mem::take(&mut self.services_gone),
            refused: self.owners.take_changed().then(|| self.owners.refused()),
        }
    }

    /// The releases `release` declares it calls: its owning Service's declaration.
    pub fn declared_dependencies(&self, release: &str) -> &[String] {
        self.owners
            .owner(release)
            .and_then(|k| self.services.get(k))
            .map_or(&[], |s| s.depends_on.as_slice())
    }

    fn revisions_of<'a>(
        &'a self,
        key: &'a ServiceKey,
    ) -> impl Iterator<Item = (&'a str, &'a Rev)> + 'a {
        self.by_service
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|uid| self.revisions.get_key_value(uid).map(|(u, r)| (&**u, &**r)))
    }

    /// The active revisions: traffic targets with percent > 0, else the newest revision.
    fn active_of<'a>(&'a self, key: &'a ServiceKey) -> Vec<(&'a str, u32)> {
        let svc = &self.services[key];
        if !svc.traffic.is_empty() {
            return svc.traffic.iter().map(|(n, p)| (n.as_str(), *p)).collect();
        }
        self.revisions_of(key)
            .max_by_key(|(_, r)| r.machine.created())
            .map(|(_, r)| vec![(&*r.name, 100)])
            .unwrap_or_default()
    }

    fn facts_of(&self, key: &ServiceKey, now: DateTime<Utc>) -> Option<ReleaseFacts> {
        if !self.owners.owns(key) {
            return None;
        }
        let svc = self.services.get(key)?;
        let mut f = ReleaseFacts::idle(&svc.release, &svc.namespace, &svc.name, now);
        // Shared with the snapshot: deriving facts copies no annotation.
        if let Some(t) = &svc.template {
            f.template = t.clone();
        }
        let active = self.active_of(key);
        f.active_revisions = active
            .iter()
            .map(|(name, percent)| ActiveRevision {
                name: (*name).to_owned(),
                percent: *percent,
            })
            .collect();
        // Among the service's own revisions, by name: no key to build per lookup. One pass,
        // with nothing allocated: this runs after nearly every event.
        let mut acc: Option<Across> = None;
        for (name, _) in &active {
            let Some((_, r)) = self.revisions_of(key).find(|(_, r)| *r.name == **name) else {
                continue;
            };
            let (k, s) = (self.knobs(r), r.machine.summary());
            let expected = r.stats.as_ref().and_then(|st| st.expected_ms());
            match acc.as_mut() {
                None => acc = Some(Across::first(k, s, expected)),
                Some(a) => a.add(k, s, expected),
            }
        }
        let Some(a) = acc else {
            return Some(f);
        };
        f.scaling = Scaling {
            min_instances: a.min_instances,
            idle_timeout_seconds: a.idle as f64,
            expected_cold_start_seconds: a.expected_ms.map(|ms| ms as f64 / 1000.0),
            serving_since: a.serving_since,
        };
        f.idle_timeout_upper_bound_seconds = a.upper as f64;
        f.idle_window_parts = a.parts;
        let (desired_replicas, actual_replicas) = (a.desired, a.actual);
        let (state, lead) = a.lead();
        f.state = state;
        f.presence = RuntimePresence {
            phase: lead.phase,
            desired_replicas,
            actual_replicas,
            wake: lead.wake.map(|(requested_at, deadline_at)| WakeProgress {
                requested_at,
                deadline_at,
                elapsed_ms: 0,
            }),
            failure: lead.failure,
        };
        Some(f)
    }

    /// The cold-start report of a Service's release; None when it is gone or does not own
    /// its release key.
    pub fn report(&self, key: &ServiceKey) -> Option<ColdStarts> {
        if !self.owners.owns(key) {
            return None;
        }
        let svc = self.services.get(key)?;
        let active = self.active_of(key);
        let mut revisions: Vec<_> = self
            .revisions_of(key)
            .map(|(uid, r)| {
                let is_active = active.iter().any(|(n, _)| **n == *r.name);
                match &r.stats {
                    Some(stats) => stats.report(&r.name, uid, is_active),
                    None => RevisionStats::default().report(&r.name, uid, is_active),
                }
            })
            .collect();
        revisions.sort_by(|a, b| b.revision.cmp(&a.revision));
        Some(ColdStarts {
            release: svc.release.clone(),
            revisions,
        })
    }

    pub fn revision_count(&self) -> usize {
        self.revisions.len()
    }
}

/// The revision of `uid`, created empty when unknown: its objects come in any order,
/// and the Revision itself may be the last. The key is allocated only for a new
/// revision, not per event.
fn rev_entry<'a>(revisions: &'a mut Map<Arc<str>, Box<Rev>>, uid: &str) -> &'a mut Rev {
    if !revisions.contains_key(uid) {
        revisions.insert(uid.into(), Box::default());
    }
    revisions.get_mut(uid).expect("inserted above")
}

fn to_record(f: Finished, release: String, rev: &Rev, uid: &str) -> WakeRecord {
    let (failure_reason, failure_message) = match f.failure {
        Some(Failure { reason, message }) => (Some(reason), Some(message)),
        None => (None, None),
    };
    WakeRecord {
        release,
        revision: rev.name.to_string(),
        revision_uid: uid.to_owned(),
        kind: f.kind,
        outcome: f.outcome,
        requested_at: f.requested_at,
        start_second: f.start_second,
        serving_at: f.serving_at,
        duration_ms: f.duration_ms,
        phases: f.phases,
        precision: f.precision,
        failure_reason,
        failure_message,
        caused_by: None,
    }
}
