//! Every revision's state machine and statistics, and the release facts they add up to.
//!
//! The tracker turns observations into recorded wakes (for the store) and into changed
//! release facts (for the book). It is single-threaded by design: one task feeds it, in
//! the order the watchers delivered, so no lock is ever held across the measuring.

mod across;
mod behind;
mod causes;
mod facts;
mod follow;
pub use follow::one_wake;
pub use history::{Stored, end_ms};
mod history;
mod hold;
mod lists;
mod merge;
mod output;
pub use output::{Output, Recorded};
mod pending;
mod sync;

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
use scaling_facts_api::Failure;
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
    stored_open: Vec<Underway>,
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
            if !rev.stored_open.is_empty() {
                out.open.push(OpenChange::of(uid, &[]));
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
        let open_after = rev.machine.open_wakes();
        if rev.stored_open != open_after {
            out.open.push(OpenChange::of(uid, &open_after));
            rev.stored_open = open_after;
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

    /// Time passing: failure thresholds of wakes in progress, and the window's age limit.
    pub fn tick(&mut self, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Tick(stamp));
        self.causes.expire(stamp.wall);
        for shadow in self.held.values_mut() {
            shadow.tick(stamp);
        }
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
