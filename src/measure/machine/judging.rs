//! A wake that ended while a watch was down, kept from its verdict until every watch is
//! back.
//!
//! A wake ends when its streams fall, or when the next one begins; whether it served is
//! told by its pods turning ready or the PA turning `Active`. After an outage each watch
//! brings its backlog back on its own schedule, so the Deployment's fall, or the next
//! wake's live rise, can end a wake before the pods or the PA that say it served have
//! arrived. Such a wake is not recorded as aborted then: it waits here, and every later
//! evaluation looks for serving evidence dated inside it (a pod created by its end that
//! turned ready by the end's second, the PA `Active` since a second inside it). Found, it
//! is recorded as served at that evidence, to the second; once no watch is down and none
//! was found, it gets the verdict it would have had at once.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};

use scaling_facts_api::{Outcome, WakeKind};

use super::dating::At;
use super::evidence::{failure, gave_up, why_not_serving};
use super::{Finished, Machine, Pod, Wake};

/// A wake ended with no verdict yet.
#[derive(Debug, Clone)]
pub struct Unjudged {
    pub wake: Box<Wake>,
    pub end: At,
    /// The PA's `TimedOut` within it, as it went by: Knative gave up on it.
    pub gave_up: Option<At>,
}

impl Machine {
    /// Whether `w`, ending unserved at `end`, must wait for its verdict: a watch is down.
    pub(super) fn hold_verdict(&mut self, w: &Wake, end: At) -> bool {
        if !self.behind || w.failed.is_some() {
            return false;
        }
        // Each waits in turn, the oldest first: a backlog may still bring what an earlier
        // one needs after a later one ended.
        // A `TimedOut` that went by while it was open: Knative gave up on it, though the
        // PA has moved on since.
        let gave_up = (w.gave_up_seen)
            .filter(|(since, _)| since.timestamp() > w.start_second())
            .map(|(_, at)| at);
        self.unjudged.get_or_insert_default().push_back(Unjudged {
            wake: Box::new(w.clone()),
            end,
            gave_up,
        });
        true
    }

    /// A wake recorded as served from `start` on: a wake waiting for its verdict that
    /// nothing showed was requested, whose undated rise and fall (a backlog's) bound a
    /// window around that start, was that serving period seen by its Deployment alone.
    /// Knative runs one period at a time, so it was no wake of its own, and is let go
    /// (kept, it would be recorded again, as aborted, by a process restarted from it).
    pub(super) fn served_inside_unjudged(&mut self, start: i64) {
        if let Some(queue) = self.unjudged.as_deref_mut() {
            queue.retain(|u| {
                u.wake.evidence
                    || !u.end.undated
                    || !(u.wake.start_second()..=u.end.second()).contains(&start)
            });
        }
    }

    /// The oldest wake waiting for its verdict.
    pub(super) fn oldest_unjudged(&self) -> Option<&Unjudged> {
        self.unjudged.as_deref().and_then(VecDeque::front)
    }

    /// Judges the wakes waiting for their verdict, oldest first, while the evidence is in.
    pub(super) fn judge(&mut self, out: &mut Vec<Finished>) {
        self.first_pods_claimed();
        while self.oldest_unjudged().is_some() {
            if !self.judge_oldest(out) {
                return;
            }
        }
        self.unjudged = None;
    }

    /// A Deployment that rises makes its pods at once (within a second, which they may
    /// straddle), and Knative keeps a woken revision up for far longer: so the first pod
    /// made in the start second of a wake waiting for its verdict (or the next), before
    /// the second its end was seen in, and those of the same second or the next, are that
    /// wake's. The wake after it, when
    /// only its arrival bounds its start (a backlog's rise), began after them: otherwise
    /// the older wake's pods, late in the same backlog, would date the newer one and
    /// serve it.
    fn first_pods_claimed(&mut self) {
        let gone = self.gone_made();
        let Some(queue) = self.unjudged.as_deref_mut() else {
            return;
        };
        // Each wake's bound is told again from the one before it as that stands now: the
        // PA's backlog may since have dated that one before the pods it seemed to own.
        // (Outer None: no wake before it waits here; inner: that wake has no pod.)
        let mut before: Option<Option<i64>> = None;
        for u in queue.iter_mut() {
            if let Some(made) = before {
                u.wake.begins_after_pods_of(made);
            }
            before = Some(first_pod_made(&self.pods, gone, &u.wake, u.end));
        }
        if let (Some(w), Some(made)) = (self.wake.as_deref_mut(), before) {
            w.begins_after_pods_of(made);
        }
    }

    /// The creation second of the last pod gone that showed why it did not serve.
    fn gone_made(&self) -> Option<i64> {
        (self.gone.as_deref())
            .and_then(|g| g.trouble.as_ref())
            .map(|t| t.0)
    }

    /// A start only a backlog's arrival bounded, taken back to the rest it followed when
    /// it ended: its first pod, come since (and perhaps gone since), dates it better.
    pub(super) fn first_pod_dates(&self, w: &Wake, end: At) -> Option<DateTime<Utc>> {
        if !w.opened.undated || w.queued.is_some() {
            return None;
        }
        let unserved = (self.gone.as_deref())
            .and_then(|g| g.unserved)
            .map(|(made, _)| made.timestamp());
        let gone = [self.gone_made(), unserved].into_iter().flatten().min();
        let first = first_pod_made(&self.pods, gone, w, end)?;
        DateTime::from_timestamp(first, 0)
            .filter(|f| *f > w.requested.wall && f.timestamp() <= w.began_by())
    }

    /// Judges the oldest wake waiting for its verdict, if the evidence is in; false when
    /// it must wait on.
    fn judge_oldest(&mut self, out: &mut Vec<Finished>) -> bool {
        let Some((floor, end)) = self
            .oldest_unjudged()
            .map(|u| (u.wake.floor, u.end.second()))
        else {
            return false;
        };
        // Its pods were made by its end; those made since the next wake began are that
        // wake's, whatever an end known only from above allows.
        let next = (self.unjudged.as_deref())
            .and_then(|q| q.get(1))
            .map(|u| &*u.wake)
            .or(self.wake.as_deref());
        let made_by = next.map_or(end, |w| end.min(w.lower_bound().timestamp() - 1));
        let gone = self.trouble_gone(floor..=made_by);
        let Some(u) = self.unjudged.as_deref_mut().and_then(VecDeque::front_mut) else {
            return false;
        };
        // Why its pods did not serve, as the latest of them says: the reason of a failure.
        if let Some(shown) = self
            .pods
            .iter()
            .filter(|p| (floor..=made_by).contains(&p.created_second()))
            .find_map(|p| why_not_serving(&p.snap))
        {
            u.wake.trouble = Some(failure(shown));
        }
        if u.wake.trouble.is_none() {
            u.wake.trouble = gone;
        }
        // A start known only from below takes the PA's `Queued` inside it, which its
        // replay may bring after the fall that ended it; so does one seen live, from the
        // few seconds its stream may have trailed the PA (as for a wake still open).
        let queued_from = if u.wake.requested.exact {
            u.wake.requested.second() - 3
        } else {
            floor
        };
        if let Some((since, _)) = self
            .pa
            .as_ref()
            .and_then(|p| p.queued())
            .filter(|(since, _)| (queued_from..=end).contains(&since.timestamp()))
        {
            let queued = *u.wake.queued.get_or_insert(since.timestamp());
            // Knative's own record of the request: a wake, whatever else went by unseen
            // (its pods may have come and gone before this replay).
            u.wake.evidence = true;
            // And its date: a start known only from below (the rest it followed, see
            // `Machine::close`) began when the PA queued, in that second.
            if let Some(q) = DateTime::from_timestamp(queued, 0)
                && !u.wake.requested.exact
                && u.wake.requested.wall < q
            {
                u.wake.requested = u.wake.requested.shifted(q);
            }
        }
        // The PA's `NoTraffic` within it dates its end better than an undated fall.
        if let Some((_, at)) = self
            .pa
            .as_ref()
            .and_then(|p| p.idle())
            .filter(|(since, _)| (u.wake.start_second() + 1..=end).contains(&since.timestamp()))
        {
            u.end = u.end.earliest(at);
        }
        if let Some((_, at)) = self
            .pa
            .as_ref()
            .and_then(|p| p.timed_out())
            .filter(|(since, _)| (floor + 1..=end + 1).contains(&since.timestamp()))
        {
            u.gave_up.get_or_insert(at);
        }
        // While a watch is still down, an end known only from above may reach past the
        // next wake's unseen start: only the pods of its own scale-up (its start's second
        // or the next) say it served; the PA's `NoTraffic`, on its way, will bound the rest.
        // The end as now bounded: a `NoTraffic` may have brought it before the next
        // wake's pods.
        let end = u.end.second();
        // Knative gave up on it: what turned ready after served a later wake (the PA's
        // backlog may bring that wake's `Active` before this one is judged).
        let given_up = u.gave_up.map_or(i64::MAX, |g| g.second());
        let made_by = made_by.min(end);
        let pods_by = if u.end.undated && self.behind {
            made_by.min(u.wake.began_by() + 1)
        } else {
            made_by
        };
        let pod = self
            .pods
            .iter()
            .filter(|p| !p.accounted && (floor..=pods_by).contains(&p.created_second()))
            .filter_map(|p| p.ready)
            .chain(self.gone_served(floor..=pods_by).map(|(_, ready)| ready))
            .filter(|r| r.second() <= (end + 1).min(given_up))
            .reduce(At::earliest);
        let pa = self
            .pa
            .as_ref()
            .and_then(|p| p.active())
            .filter(|(since, _)| (floor..=end.min(given_up)).contains(&since.timestamp()))
            .map(|(_, at)| at);
        let served = [pod, pa].into_iter().flatten().reduce(At::earliest);
        if served.is_none() && self.behind {
            return false;
        }
        let mut u = (self.unjudged.as_deref_mut())
            .and_then(VecDeque::pop_front)
            .expect("looked at above");
        let gave_up_at = u.gave_up;
        // (Before serving accounts for its pods.)
        let gone = self.gone_made();
        let made = first_pod_made(&self.pods, gone, &u.wake, u.end);
        let first = self.first_pod_dates(&u.wake, u.end);
        self.forget_gone_trouble(floor..=made_by); // its reason is this wake's
        if let Some(first) = first {
            u.wake.requested = u.wake.requested.shifted(first);
        }
        match served {
            Some(at) => {
                let phases = self.phases(&u.wake);
                out.extend(self.finish(&u.wake, Outcome::Served, at, None, phases));
                self.account_serving();
                // Its other pods, made with the first but not ready yet, are of the same
                // period: turning ready later, they serve no wake of their own.
                for p in (self.pods.iter_mut())
                    .filter(|p| (floor..=made_by).contains(&p.created_second()))
                {
                    p.accounted = true;
                }
                self.served_before = true;
                self.failure = None;
                self.last_recorded_serving = Some(at.wall);
                // The wake open now began after this one ended: pods made before are not its
                // (of an end known only as an upper bound, only that it came after it served).
                let ended = if u.end.undated {
                    at.second() + 1
                } else {
                    u.end.second()
                };
                // An end known only from above left the next wake's floor at this one's
                // start as it stood then; the PA's backlog may have dated it earlier since.
                let mut lowered = None;
                if let Some(l) = self.last.as_deref_mut().filter(|l| l.id == u.wake.id) {
                    l.served = true;
                    if !u.end.undated {
                        l.next_floor = l.next_floor.max(l.end_second + 1);
                    } else if ended < l.next_floor {
                        lowered = Some(l.next_floor);
                        l.next_floor = ended;
                    }
                }
                // What began after a start that served is a wake, not the initial start.
                if let Some(w) = self.wake.as_mut().filter(|w| w.kind == WakeKind::Initial) {
                    w.kind = WakeKind::Wake;
                    w.requested = w.opened;
                }
                let next = match self.unjudged.as_deref_mut().and_then(VecDeque::front_mut) {
                    Some(n) => Some(&mut *n.wake),
                    None => self.wake.as_deref_mut(),
                };
                if let Some(w) = next {
                    w.forget_pods_bump();
                    if lowered == Some(w.floor) {
                        w.floor = ended;
                    }
                    w.begins_after_pods_of(made);
                    w.floor = w.floor.max(ended.min(w.requested.second() - 1));
                }
            }
            // Knative gave up on it (its deadline passed, or the PA says `TimedOut` within
            // it): failed, for the reason its pods gave; not on an end that proves nothing
            // (see `Machine::close_unserved`).
            None if gave_up_at.is_some()
                || u.end.wall >= u.wake.deadline_at && !u.wake.end_unproven(u.end) =>
            {
                let end = gave_up_at.unwrap_or_else(|| u.end.shifted(u.wake.deadline_at));
                let f = u.wake.trouble.clone().unwrap_or_else(gave_up);
                let phases = self.phases(&u.wake);
                out.extend(self.finish(&u.wake, Outcome::Failed, end, Some(f.clone()), phases));
                self.failure = Some(Box::new(f));
            }
            None if u.wake.evidence => {
                let phases = self.phases(&u.wake);
                out.extend(self.finish(&u.wake, Outcome::Aborted, u.end, None, phases));
            }
            None => {}
        }
        true
    }
}

/// The first pod of `w`'s own scale-up, ended at `end`: made in its start second or the
/// next, before that end (a pod made later may be the next wake's, its own gone). For a
/// start known only from above (a backlog's undated rise), from its floor: its stream
/// rose before the next wake's, and Knative makes a rise's pods at once. `gone`: the
/// creation second of the last pod removed that showed why it did not serve, one of its
/// pods as well as those still here.
fn first_pod_made(pods: &[Pod], gone: Option<i64>, w: &Wake, end: At) -> Option<i64> {
    let start = w.start_second();
    let from = if w.requested.undated && w.queued.is_none() {
        w.floor
    } else {
        w.floor.max(start)
    };
    let to = end.second().min(w.began_by() + 2);
    pods.iter()
        .filter(|p| !p.accounted && (from..to).contains(&p.created_second()))
        .map(Pod::created_second)
        .chain(gone.filter(|g| (from..to).contains(g)))
        .min()
}
