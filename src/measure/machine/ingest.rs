//! What each stream shows, taken in: snapshots newer than the last of their own stream
//! replace it, and a change of scale from a known value becomes a rise or a fall for
//! [`Machine::evaluate`] to place.

use chrono::{DateTime, Utc};

use super::dating::{At, Side};
use super::evidence::{Autoscaler, Pod, failure, standing_since, why_not_serving};
use super::underway::Wake;
use super::{Closed, Edge, Machine, PaThen, Stream, Thresholds, Unseen};
use crate::measure::observe::{DeploymentSnap, PaSnap, PodSnap, Stamp, Via};
use scaling_facts_api::WakeKind;

impl Machine {
    /// The Revision object was seen.
    pub fn revision_seen(&mut self, created: DateTime<Utc>, stamp: Stamp, t: &Thresholds) {
        if self.created.is_none() {
            let at = At::date(stamp, Some(created), Side::Start, t.late_event_tolerance);
            self.created_live = at.exact.then(|| Box::new(at));
            // Kept in the store before anything else of it: a restart in an outage that
            // hid its whole initial start still knows the start was this service's.
            if at.exact && !self.seen_born {
                self.seen_born = true;
                self.rest_changed = true;
            }
        }
        self.created = Some(created);
    }

    /// The Deployment's replicas and the PA's desired scale, as last seen.
    pub fn scales(&self) -> (Option<u32>, Option<i32>) {
        (
            self.deployment.map(|d| d.replicas),
            self.pa
                .as_ref()
                .and_then(|p| p.snap.desired)
                .filter(|d| *d >= 0),
        )
    }

    pub fn set_deployment(&mut self, dep: DeploymentSnap, stamp: Stamp) {
        let prev = self.deployment;
        if prev.is_some_and(|p| dep.version != 0 && dep.version <= p.version) {
            return; // a replay of what this stream already showed
        }
        let created_at_scale = prev.is_none() && dep.generation == 1 && dep.replicas > 0;
        self.deployment_seen_before |= prev.is_some();
        // First seen now, after an initial start recorded (by a process that died before it
        // saw the fall): born at scale, it fell to zero at generation 2 after that start
        // served, as far as anything tells (a scale-up inside the start's period would
        // move it once more).
        let after_initial = (self.last())
            .filter(|l| prev.is_none() && l.initial && l.served)
            .map(|l| l.end_second);
        // Or after wakes recorded since the store's last rest: at zero again after them,
        // as far as anything tells.
        let behind = (self.rest_behind)
            .zip(self.last())
            .filter(|_| prev.is_none())
            .map(|(generation, l)| (generation, l.end_second));
        let compared = prev.or(behind
            .or(after_initial.map(|s| (2, s)))
            .map(|(generation, _)| DeploymentSnap {
                version: 0,
                replicas: 0,
                generation,
            }));
        // At zero then and now, its scale changed at least twice in between: it rose and
        // fell unseen (a relist after an outage forgets the events, not the generation).
        let rose_and_fell = compared.is_some_and(|p| {
            p.replicas == 0 && dep.replicas == 0 && dep.generation >= p.generation + 2
        });
        // At zero then and wanting pods now, three changes at least: a whole wake rose and
        // fell unseen before the rise it shows (a process that died while the API server
        // was away, and a list after the next request).
        let and_rose_again = compared.is_some_and(|p| {
            p.replicas == 0 && dep.replicas > 0 && dep.generation >= p.generation + 3
        });
        if (rose_and_fell || and_rose_again) && stamp.via != Via::Resumed {
            let floor = (behind.map(|(_, s)| s).or(after_initial))
                .and_then(|s| DateTime::from_timestamp(s, 0));
            let told = if and_rose_again {
                DeploymentTold::BeforeRise
            } else {
                DeploymentTold::RoseAndFell
            };
            self.missed_deployment_wake(stamp, told, floor);
            if let (Some(u), Some(p)) = (self.unseen.as_deref_mut(), compared) {
                u.changes = dep.generation - p.generation;
            }
        }
        match prev.map(|p| p.replicas) {
            Some(0) if dep.replicas > 0 && stamp.via == Via::Listed && self.pa_rested_since() => {
                // The PA's trace tells that wake only when the condition its `NoTraffic`
                // replaced was a rest too; after a `TimedOut` it is the rise that does,
                // confirmed by a pod of it leaving (a `NoTraffic` may replace a `TimedOut`
                // with no wake between, and a rise be the next wake's).
                self.missed_deployment_wake(stamp, DeploymentTold::RisenPastRest, None);
            }
            Some(0) if dep.replicas > 0 => {
                self.edge(Stream::Deployment, true, At::arrival(stamp), stamp)
            }
            Some(n) if n > 0 && dep.replicas == 0 => {
                self.edge(Stream::Deployment, false, At::arrival(stamp), stamp)
            }
            None if created_at_scale => self.born_at_scale = true,
            _ => {}
        }
        // A replayed event shows a past state, and a Deployment has no timestamp to say
        // when: it was at zero then, not at its arrival. A list's state is current.
        if dep.replicas == 0 && stamp.via != Via::Resumed {
            self.rest_changed |=
                prev.is_none_or(|p| p.replicas > 0 || p.generation != dep.generation);
            self.deployment_rest = self.next_id + 1;
            self.zero_seen[Stream::Deployment as usize] = Some(stamp.wall);
            self.saw_zero(stamp.wall.timestamp());
        }
        self.deployment = Some(dep);
        // Created at scale for the initial start already open: its rise. Or already over
        // (a backlog brought the PA's word first, and perhaps a pod of the next wake's):
        // its fall is then that start's, and the rise after it the next wake, not an echo
        // of the start.
        let initial = match self.wake.as_ref() {
            Some(w) if w.kind == WakeKind::Initial => Some(w.id),
            _ => self.last().filter(|l| l.initial).map(|l| l.id),
        };
        // Or long over, the backlog replayed from the Deployment's creation: its first
        // want was that start's (wake 1, when this machine saw it), and the rises it
        // replays next pair with the wakes after.
        let initial = initial.or((stamp.via == Via::Resumed && self.first_initial).then_some(1));
        if created_at_scale && let Some(id) = initial {
            self.claim_unrisen_deployment(id);
        }
    }

    pub fn set_pa(&mut self, snap: PaSnap, stamp: Stamp, t: &Thresholds) {
        if self
            .pa
            .as_ref()
            .is_some_and(|p| snap.version != 0 && snap.version <= p.snap.version)
        {
            return; // a replay of what this stream already showed
        }
        let mut pa = self.pa.take().unwrap_or_default();
        let before = pa.desired();
        // When the want that may now fall began, by the PA's own word.
        let period = pa
            .queued()
            .or(pa.active())
            .map(|(since, _)| since.timestamp());
        let ended_before = pa.ended_since();
        let gave_up = pa.timed_out();
        pa.update(snap, stamp, t);
        if let Some(g) = gave_up.filter(|g| self.behind && pa.timed_out() != Some(*g))
            && let Some(w) = self.wake.as_deref_mut()
        {
            w.gave_up_seen.get_or_insert(g);
        }
        match (before, pa.desired()) {
            (Some(0), Some(n)) if n > 0 => {
                // A list or a replay that finds it serving already: it rose by then, and
                // a stream's rest seen since is no bound on that wake's start.
                let at = (pa.queued())
                    .or_else(|| pa.active().filter(|_| stamp.via != Via::Watched))
                    .map_or(At::arrival(stamp), |(_, at)| at);
                self.pa_edge(true, at, stamp, &pa);
            }
            (Some(b), Some(0)) if b > 0 => {
                // A fall found by a list is dated by the condition that changed with it
                // (not one lingering from an earlier wake).
                let at = pa
                    .ended()
                    .into_iter()
                    .zip(ended_before)
                    .find_map(|(c, before)| c.filter(|(since, _)| Some(*since) != before))
                    .map_or(At::arrival(stamp), |(_, at)| at);
                self.pa_edge(false, at, stamp, &pa);
                if let Some(e) = self.edges.last_mut() {
                    e.period = period;
                }
            }
            (Some(0), Some(0)) => self.missed_pa_wake(&pa, ended_before[0], stamp),
            _ => {}
        }
        let idle = pa
            .snap
            .active
            .as_ref()
            .is_some_and(|c| c.reason_is("NoTraffic"));
        // At zero as of its arrival, or for a replayed event as of the condition that
        // says so: the state it shows is a past one.
        let zero_at = match stamp.via {
            Via::Resumed => pa.ended_since().into_iter().flatten().max(),
            _ => Some(stamp.wall),
        };
        if pa.desired() == Some(0)
            && let Some(at) = zero_at
        {
            let seen = &mut self.zero_seen[Stream::Autoscaler as usize];
            *seen = Some(seen.map_or(at, |s| s.max(at)));
            self.rest_changed |= pa.ended_since() != ended_before || before != Some(0);
            if idle {
                self.saw_zero(at.timestamp());
            }
        }
        self.pa = Some(pa);
        self.note_gave_up();
    }

    /// Knative gave up on the wake that went by unseen: a `TimedOut` newer than the rest
    /// it followed. Kept, as a later `NoTraffic` replaces the condition.
    fn note_gave_up(&mut self) {
        // (Every PA event passes here; most revisions have no unseen wake to look at.)
        let Some(u) = self.unseen.as_deref_mut() else {
            return;
        };
        if (self.pa.as_ref())
            .and_then(|p| p.timed_out())
            .is_some_and(|(since, _)| since > u.after)
        {
            u.gave_up = true;
        }
    }

    pub fn set_pod(&mut self, snap: PodSnap, stamp: Stamp, t: &Thresholds) {
        match self.pods.iter_mut().find(|p| p.snap.name == snap.name) {
            Some(p) if snap.version != 0 && snap.version <= p.snap.version => {}
            // A name can come back: another pod, created later, whose old namesake's
            // deletion fell in a watch gap. It inherits nothing.
            Some(p) if p.snap.created != snap.created => *p = Pod::new(snap, stamp, t),
            Some(p) => p.update(snap, stamp, t),
            None => {
                let mut pod = Pod::new(snap, stamp, t);
                // Made while a pod whose serving is already explained was serving since an
                // earlier second: more pods of that period (a scale-up), not a wake's. (Not
                // one a relist brings: the pods it no longer shows are removed only after
                // it, so that period may be over.)
                pod.accounted = stamp.via != Via::Listed
                    && self.pods.iter().any(|p| {
                        p.accounted
                            && p.snap.serving()
                            && (p.snap.ready.as_ref().and_then(|c| c.since))
                                .is_some_and(|r| r.timestamp() < pod.created_second())
                    });
                self.pods.push(pod);
            }
        }
    }

    pub fn remove_pod(&mut self, name: &str, stamp: Stamp) {
        let Some(gone) = self.pods.iter().find(|p| p.snap.name == name) else {
            return;
        };
        // Why it did not serve outlives it: a backlog may bring a pod's whole life before
        // the PA's, which alone opens the wake it failed and says Knative gave up.
        if let Some(shown) = why_not_serving(&gone.snap) {
            self.gone.get_or_insert_default().trouble =
                Some((gone.created_second(), failure(shown)));
        }
        // So does its serving, when no recorded wake explains it yet.
        if let Some(ready) = gone.ready.filter(|_| !gone.accounted) {
            let g = self.gone.get_or_insert_default();
            // Knative removes a period's pods together, at its end: one made before the
            // last removed was asked to go is of that period (a scale-up of it), which
            // began with the first of them made.
            let same_period = g
                .served_until
                .is_some_and(|until| gone.snap.created <= until);
            g.served = match g.served {
                Some((made, up)) if same_period => {
                    Some((made.earliest(gone.created), up.earliest(ready)))
                }
                _ => Some((gone.created, ready)),
            };
            g.served_until = gone.snap.deleting;
        }
        // Never served: seen in every state it had (only streamed) and never ready, or
        // never running at all. A pod a list showed that ran may have served unseen (its
        // `Ready=True` lost to the relist).
        let never_ran =
            gone.ready.is_none() && (!gone.listed || gone.running.is_none() && !gone.snap.running);
        let made = gone.created_second();
        // The removal's request dates it to its second when the pod was seen terminating;
        // else only the arrival bounds it.
        let fell = (gone.snap.deleting).map_or(At::arrival(stamp), |asked| {
            At::by_stamp(stamp, asked, Side::End)
        });
        let dated = gone.snap.deleting.is_some();
        if never_ran && !gone.accounted {
            self.gone.get_or_insert_default().unserved = Some((gone.snap.created, fell));
        }
        // The whole wake noticed from its trace waits for its pods to go; one of them
        // dates its start better than the rest it began after.
        if let Some(u) = self.unseen.as_deref_mut()
            && made >= u.after.timestamp()
            && made <= u.end.second()
        {
            u.first_pod = Some(
                u.first_pod
                    .map_or(gone.created, |f| f.earliest(gone.created)),
            );
        }
        self.pods.retain(|p| p.snap.name != name);
        // Knative removes a woken revision's pods only when it scales it to zero: the last
        // of the open wake's going before it ran is its end, which the PA's and the Deployment's
        // backlogs have not shown yet while their watches are down, or which a replayed
        // Deployment showed undated (its removal's stamp dates it better). A pod made
        // later is the next wake's (see `settle`).
        let behind = self.behind;
        let unknown_fall = |w: &Wake| w.first_fall.map_or(behind, |f| f.undated && dated);
        if let Some(w) = self
            .wake
            .as_deref_mut()
            .filter(|w| unknown_fall(w) && never_ran && made >= w.floor)
            && !standing_since(&self.pods, w.floor)
        {
            w.pods_fell.get_or_insert(fell);
        }
    }

    /// The PA is at zero with a `NoTraffic` newer than the Deployment's last rest: a list
    /// that finds the Deployment still wanting pods meets a wake already over, mid-fall,
    /// and its want is that wake's, which the PA's trace and the pods tell, not a rise.
    fn pa_rested_since(&self) -> bool {
        let dep_rest = self.zero_seen[Stream::Deployment as usize];
        self.pa
            .as_ref()
            .filter(|p| p.desired() == Some(0))
            .and_then(Autoscaler::idle)
            .zip(dep_rest)
            .is_some_and(|((since, _), rest)| since > rest)
    }

    /// Seen wanting zero pods at `second`; it counts only before the first serving.
    pub(super) fn saw_zero(&mut self, second: i64) {
        if !self.served_before {
            self.seen_at_zero.get_or_insert(second);
        }
    }

    /// The PA was at zero and is at zero, but its `NoTraffic` is newer: Knative changes
    /// the condition's `lastTransitionTime` only when it changes, so the PA rose and fell
    /// between the two snapshots, unseen (an outage, a relist). If it did so after the
    /// open wake began and had not risen for it, that was this wake's rise and fall: it
    /// joins the wake and ends it, so that the PA's next rise starts the next wake instead
    /// of joining this one. Neither edge counts as streamed: whether the PA showed
    /// `Active=True` between is not known.
    ///
    /// With no wake open, a whole wake rose and fell unseen (every write of it inside an
    /// outage): it is noted, for [`Machine::settle_quiet`] to record if no pod of it
    /// turns up to say more.
    fn missed_pa_wake(&mut self, pa: &Autoscaler, before: Option<DateTime<Utc>>, stamp: Stamp) {
        let Some(((since, at), before)) = pa.idle().zip(before).filter(|((s, _), b)| s > b) else {
            return;
        };
        let Some(w) = self.wake.as_ref() else {
            // A fall seen on another stream and its `NoTraffic` may straddle a second:
            // a condition no newer than that is the last wake's own.
            self.note_unseen(before, at, since.timestamp(), stamp);
            return;
        };
        if self.claimed[Stream::Autoscaler as usize] == w.id
            || since.timestamp() <= w.start_second()
        {
            return;
        }
        let unseen = Stamp {
            via: Via::Listed,
            ..stamp
        };
        self.pa_edge(true, at, unseen, pa);
        self.pa_edge(false, at, unseen, pa);
    }

    /// The Deployment rose and fell unseen, with no wake open: a whole wake went by in an
    /// outage, its pods gone before the relist. It began after the Deployment was last
    /// seen at zero, and ended by the PA's `NoTraffic` if that is newer, else by now. It is
    /// noted like one the PA's trace shows ([`Machine::missed_pa_wake`]).
    fn missed_deployment_wake(
        &mut self,
        stamp: Stamp,
        told: DeploymentTold,
        floor: Option<DateTime<Utc>>,
    ) {
        let Some(dep_zero) = self.zero_seen[Stream::Deployment as usize].or(floor) else {
            return;
        };
        if self.wake.is_some() || self.unseen.is_some() {
            return;
        }
        // The PA seen at zero later still bounds it, unless that is the state a list shows
        // now (a `NoTraffic` newer than the rest may be this very wake's end); the rest a
        // restart restored (version 0) is older than any list.
        let pa_zero = self.zero_seen[Stream::Autoscaler as usize].filter(|_| {
            (self.pa.as_ref()).is_some_and(|p| p.desired() != Some(0) || p.snap.version == 0)
        });
        let after = pa_zero.map_or(dep_zero, |z| z.max(dep_zero));
        // A wake recorded since that rest rose and fell too (a backlog's replay of the
        // Deployment leaves no rest to store): it is the rise and fall, unless the PA, whose
        // condition every wake moves, changed after it ended.
        let pa_moved = |l: &Closed| {
            (self.pa.as_ref())
                .and_then(Autoscaler::changed_since)
                .is_none_or(|since| since.timestamp() > l.end_second + 1)
        };
        if self
            .last()
            .is_some_and(|l| l.start_second >= after.timestamp() && !pa_moved(&l))
        {
            return;
        }
        let end = (self.pa.as_ref())
            .and_then(|p| p.idle())
            .filter(|(since, _)| *since > after)
            .map_or(At::arrival(stamp), |(_, at)| at);
        self.note_unseen(after, end, end.second(), stamp);
        if let Some(u) = self.unseen.as_deref_mut() {
            u.before_rise = told == DeploymentTold::BeforeRise;
            u.pod_leaving = told == DeploymentTold::RisenPastRest;
        }
    }

    /// Notes a whole wake that went by unseen after `after`, ended at `end`, unless its
    /// end (`second`) is no later than the last wake's: a fall and what dates it may
    /// straddle a second, so that is the last wake's own.
    pub(super) fn note_unseen(&mut self, after: DateTime<Utc>, end: At, second: i64, stamp: Stamp) {
        if self.last().is_none_or(|l| second > l.end_second + 1) {
            self.unseen = Some(Box::new(Unseen {
                after,
                end,
                noticed: stamp.mono,
                first_pod: None,
                gave_up: false,
                before_rise: false,
                pod_leaving: false,
                changes: 0,
            }));
            self.note_gave_up();
        }
    }

    /// A rise or fall dated `at`, brought by the observation of `stamp`.
    fn edge(&mut self, stream: Stream, rise: bool, at: At, stamp: Stamp) {
        let pa = PaThen::of(self.pa.as_ref());
        self.push_edge(stream, rise, at, stamp, pa);
    }

    /// The same for the PA's own edge: as `pa`, not yet kept, shows it.
    fn pa_edge(&mut self, rise: bool, at: At, stamp: Stamp, pa: &Autoscaler) {
        self.push_edge(Stream::Autoscaler, rise, at, stamp, PaThen::of(Some(pa)));
    }

    fn push_edge(&mut self, stream: Stream, rise: bool, at: At, stamp: Stamp, pa: PaThen) {
        self.edges.push(Edge {
            stream,
            rise,
            at,
            streamed: stamp.via != Via::Listed,
            period: None,
            pa,
        });
    }
}

/// How the Deployment told a whole wake that went by unseen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeploymentTold {
    /// At zero then and now, its generation moved twice or more.
    RoseAndFell,
    /// At zero then and wanting pods now, three changes or more: the wake came before the
    /// rise it shows.
    BeforeRise,
    /// Risen past its rest with the PA at rest since, after a `TimedOut`: a pod of it
    /// leaving (or gone) must confirm it.
    RisenPastRest,
}
