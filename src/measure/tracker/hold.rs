//! What arrives while a watch is down is measured twice: at once, provisionally, and
//! again once every watch is back, in the order the objects themselves give.
//!
//! After an API-server outage each watch resumes on its own backoff, up to seconds apart,
//! and its backlog arrives whole: the pods' watch may replay a wake's pods created, ready
//! and deleted before the PodAutoscalers' replays the `Queued` that began it, or the next
//! wake's pods before the `NoTraffic` that ended this one. Taken as they arrive, each
//! backlog is judged without the others, and a pod of the next wake can serve the wake
//! before it. So while a watch of a revision's objects is down, the revision's machine as
//! it was is kept aside with everything that arrives for it ([`Shadow`]); the arrivals
//! are still measured at once, so that what the store holds (the wake underway, its end)
//! is as current as before should the process be killed. Once every watch is back, the
//! kept machine takes the held observations merged into one order ([`order`]), one by
//! one, as if streamed with a lag of a second or so, which the machine is built for,
//! and the ticks that came meanwhile at their own times (a failure's threshold is crossed
//! when it was live, not at the next observation); its wakes replace the provisional
//! ones (those that differ are retracted and written anew, as the history's merge does),
//! and so do its statistics and its wakes underway.
//!
//! The order comes from the objects: an observation streamed live is placed at its
//! arrival, a replayed one at its newest timestamp (whole seconds, so at or before it was
//! written), never before the one its own stream sent before it. A Deployment's scale
//! carries no timestamp: each rise or fall is placed with the PodAutoscaler's own of the
//! same rank (the KPA writes both in one reconcile), a rise just before, a fall just
//! after; from one the PA's backlog has no match for on, they go last. A list is placed
//! at its arrival, and judged once whole, as when it came (see [`super::lists`]). Each
//! keeps its own stamp, so its dating does not change, but for one placed after another
//! that arrived later: it takes that arrival, so the replay's clock never runs back and
//! no end is bounded before the truth. A replayed Deployment change, which has no date,
//! is stamped by when it happened at the latest rather than by its arrival (maybe the
//! last of all): its PA turn's (a fall one reconcile's spread after), or its stream's
//! next change's, so that it holds back no live arrival after it.
//!
//! A watch down longer than [`super::behind::MAX_BEHIND`] holds nothing: what was kept
//! is settled at the next tick.

use std::collections::HashMap;
use std::sync::Arc;

use super::merge::arrange;
use super::{Output, Tracker, rev_entry};
use crate::measure::machine::Machine;
use crate::measure::observe::{Observation, Stamp, Via};
use crate::measure::stats::RevisionStats;
use crate::measure::wake::{OpenChange, Underway};
use scaling_facts_api::WakeRecord;

/// One revision while a watch is down: its measuring as it was before, what arrived
/// since, and the wakes recorded provisionally meanwhile.
#[derive(Debug, Default)]
pub struct Shadow {
    machine: Machine,
    stats: Option<Box<RevisionStats>>,
    stored_open: Vec<Underway>,
    #[allow(clippy::type_complexity, clippy::box_collection)]
    pending: Option<Box<Vec<(Observation, Stamp, super::behind::Then)>>>,
    held: Vec<(Observation, Stamp)>,
    /// The ticks since it was set aside: time alone judges a wake (a failure's
    /// threshold), and the replay must judge it when the live machine did, not at the
    /// next observation, perhaps a relist's, whose arrival dates nothing.
    ticks: Vec<Stamp>,
    recorded: Vec<WakeRecord>,
}

impl Shadow {
    /// Time passed while it was set aside.
    pub(super) fn tick(&mut self, stamp: Stamp) {
        self.ticks.push(stamp);
    }

    /// A wake recorded while its revision is kept aside: provisional.
    pub(super) fn provisional(&mut self, record: &WakeRecord) {
        self.recorded.push(record.clone());
    }
}

/// Every revision kept aside, by revision.
pub type Held = HashMap<Arc<str>, Box<Shadow>>;

impl Tracker {
    /// Keeps a copy of `obs` for the revision's replay when a watch of revisions' objects
    /// is down (see the module doc), setting its machine aside first. A revision's
    /// Revision is kept only once it is aside: its replay takes it first.
    pub(super) fn hold(&mut self, obs: &Observation, stamp: Stamp) {
        let holding = self.behind.holding(stamp.mono);
        if !holding && self.held.is_empty() {
            return;
        }
        let (uid, revision) = match obs {
            Observation::Revision(r) => (r.uid.as_str(), true),
            other => match other.revision_uid() {
                Some(uid) => (uid, false),
                None => return,
            },
        };
        if !self.held.contains_key(uid) && (revision || !holding) {
            return;
        }
        // A pod gone of a revision never seen: nothing to replay.
        if matches!(obs, Observation::PodGone { .. }) && !self.revisions.contains_key(uid) {
            return;
        }
        let shadow = match self.held.get_mut(uid) {
            Some(shadow) => shadow,
            None => {
                let rev = rev_entry(&mut self.revisions, uid);
                let shadow = Shadow {
                    machine: rev.machine.clone(),
                    stats: rev.stats.clone(),
                    stored_open: rev.stored_open.clone(),
                    pending: rev.pending.clone(),
                    ..Shadow::default()
                };
                self.held.entry(Arc::from(uid)).or_insert(Box::new(shadow))
            }
        };
        shadow.held.push((obs.clone(), stamp));
    }

    /// Every watch is back (or down too long to wait for): each revision kept aside is
    /// measured again from what it held, and that replaces the provisional.
    pub(super) fn release_held(&mut self, stamp: Stamp, out: &mut Output) {
        if self.held.is_empty() || self.behind.holding(stamp.mono) {
            return;
        }
        let mut held: Vec<_> = std::mem::take(&mut self.held).into_iter().collect();
        held.sort_by(|a, b| a.0.cmp(&b.0));
        for (uid, shadow) in held {
            self.settle_held(&uid, *shadow, out);
        }
    }

    /// A tick of the replay: the revision judged as [`Tracker::tick`] judges it.
    fn replay_tick(&mut self, uid: &str, tick: Stamp, out: &mut Output) {
        let waking = self.revisions.get(uid).is_some_and(|r| r.machine.waking());
        if self.synced && waking {
            self.evaluate(uid, tick, out);
        }
    }

    fn settle_held(&mut self, uid: &str, shadow: Shadow, out: &mut Output) {
        let Some(rev) = self.revisions.get_mut(uid) else {
            return;
        };
        let provisional_open = std::mem::take(&mut rev.stored_open);
        rev.machine = shadow.machine;
        rev.stats = shadow.stats;
        rev.stored_open = shadow.stored_open;
        rev.pending = shadow.pending;
        let prior = rev.machine.scales();
        let mut held: Vec<Option<(Observation, Stamp)>> =
            shadow.held.into_iter().map(Some).collect();
        let arranged = arrange(held.iter().flatten().map(|(o, s)| (o, *s)).collect(), prior);
        let mut again = Output::default();
        let mut clock: Option<Stamp> = None;
        let mut ticks = shadow.ticks.into_iter().peekable();
        for (at, &i) in arranged.order.iter().enumerate() {
            let Some((obs, stamp)) = held[i].take() else {
                continue;
            };
            // A list is judged whole, as when it came (see `lists`): while the next held
            // is of the same list, this one waits.
            let list_goes_on = stamp.via == Via::Listed
                && (arranged.order[at + 1..].iter())
                    .find_map(|&j| held[j].as_ref())
                    .is_some_and(|(next, s)| s.via == Via::Listed && same_list(&obs, next));
            // A Revision goes first for what it names, not for when it came: its arrival
            // (a relist's, perhaps the last of all) must not hold back the clock of the
            // objects streamed live before it, or their wakes lose their dates.
            if let Observation::Revision(r) = obs {
                let uid = self.revision_seen(r, stamp);
                self.replay_pending(&uid, &mut again);
                continue;
            }
            let stamp = arranged.by[i].unwrap_or(stamp);
            let stamp = match clock {
                Some(c) if c.mono > stamp.mono => Stamp {
                    mono: c.mono,
                    wall: c.wall.max(stamp.wall),
                    via: match stamp.via {
                        Via::Watched => Via::Resumed,
                        via => via,
                    },
                },
                _ => stamp,
            };
            clock = Some(stamp);
            while let Some(tick) = ticks.next_if(|t| t.mono < stamp.mono) {
                self.replay_tick(uid, tick, &mut again);
            }
            if let Some(uid) = self.take_in(obs, stamp)
                && self.synced
                && !list_goes_on
                && !self.defer(&uid, stamp)
            {
                self.evaluate(&uid, stamp, &mut again);
            }
        }
        // What time alone judged after the last observation held.
        for tick in ticks {
            self.replay_tick(uid, tick, &mut again);
        }
        // The replay's wakes replace the provisional ones: a differing record under a key
        // is retracted, then written (the store applies retractions first). The replay
        // noted its own among this process's records (`live`); the provisional ones go.
        for p in &shadow.recorded {
            if let Some(i) = self.live.iter().position(|w| w == p) {
                self.live.remove(i);
            }
            if !again.wakes.iter().any(|r| r.wake == *p) {
                out.retracted.push((uid.to_owned(), p.start_second));
            }
        }
        out.wakes.extend(
            again
                .wakes
                .into_iter()
                .filter(|r| !shadow.recorded.contains(&r.wake)),
        );
        out.retracted.extend(again.retracted);
        out.rests.extend(again.rests);
        // The store holds the provisional wake underway: it gets the replay's.
        let Some(rev) = self.revisions.get(uid) else {
            return;
        };
        if rev.stored_open != provisional_open {
            out.open.push(OpenChange::of(uid, &rev.stored_open));
        }
    }
}

/// Whether two listed observations may be of one list: of one kind of object (a pod
/// missing from a relist is gone by that list).
fn same_list(a: &Observation, b: &Observation) -> bool {
    list_kind(a).is_some() && list_kind(a) == list_kind(b)
}

/// The kind of object a revision's listed observation is of.
fn list_kind(o: &Observation) -> Option<&'static str> {
    match o {
        Observation::Deployment { .. } => Some("Deployment"),
        Observation::Autoscaler { .. } => Some("PodAutoscaler"),
        Observation::Pod { .. } | Observation::PodGone { .. } => Some("Pod"),
        _ => None,
    }
}
