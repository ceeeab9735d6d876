//! No wake is open: what the objects show may still be a wake underway (found by a list
//! or after a restart), one served or given up on while this process was not looking, or
//! more pods of a serving period already explained; and whether a new period of wanting
//! pods is a wake or the revision's initial start.

use chrono::{DateTime, Utc};

use super::dating::At;
use super::evidence::{Pod, gave_up};
use super::{ABORT_GRACE, Ctx, Finished, INITIAL_POD_WITHIN_SECONDS, Machine, Stream};
use crate::measure::observe::{CondStatus, Stamp};
use scaling_facts_api::{Outcome, WakeKind};

impl Machine {
    /// No rise explains what the objects show: a wake underway, or one already served.
    pub(super) fn settle_quiet(
        &mut self,
        now: Stamp,
        ctx: &Ctx,
        quiet_falls: [Option<At>; 2],
        out: &mut Vec<Finished>,
    ) {
        // The initial start went by unseen before the wake the objects show now.
        self.settle_initial_unseen(now, ctx, out, true);
        if self.pods.iter().any(|p| p.snap.serving()) {
            return self.settle_serving(now, ctx, out);
        }
        if self.settle_leaving(now, ctx, out) || self.settle_initial_unseen(now, ctx, out, false) {
            return;
        }
        // Knative gave up on a wake while this process was not looking: its TimedOut is
        // newer than anything recorded (or, before any wake, than the revision first seen
        // at rest), and came one activation timeout after the start.
        if let Some((since, at)) = self.pa.as_ref().and_then(|p| p.timed_out())
            && self
                .last()
                .map(|l| l.end_second)
                .or(self.seen_at_zero)
                .is_some_and(|quiet| since.timestamp() > quiet)
            && !self.wants()
        {
            let start = ctx.began_before_timeout(since);
            let near =
                (start.timestamp() - 2..=start.timestamp() + 2).any(|s| self.recorded.contains(&s));
            if !near {
                self.open_as(WakeKind::Wake, At::back_from(now, start), ctx);
                // Why, if a pod of it showed why before it went.
                let failure = self
                    .trouble_gone(start.timestamp() - 1..=since.timestamp())
                    .unwrap_or_else(gave_up);
                return self.fail_open(failure, at, now, out);
            }
        }
        // A wake that began and was given up while this process was not looking (or
        // whose end fell in its downtime): Knative went back to `NoTraffic` after the last
        // wake (or after the revision was first seen at zero, for one never woken), and a
        // pod that never served is being removed.
        if let Some(quiet) = self.last().map(|l| l.end_second).or(self.seen_at_zero)
            && let Some(idle) = self.pa.as_ref().and_then(|p| p.snap.active.clone())
            && idle.reason_is("NoTraffic")
            && let Some(since) = idle.since.filter(|s| s.timestamp() > quiet)
            && !self.wants()
            && let Some(first) = self
                .pods
                .iter()
                .filter(|p| {
                    // A pod that ran may have served unseen: only one that never ran
                    // tells an abort. One created after the `NoTraffic` is a later
                    // wake's: that condition ended an earlier serving period.
                    p.snap.terminating()
                        && p.ready.is_none()
                        && !p.snap.running
                        && p.created_second() > quiet
                        && p.created_second() <= since.timestamp()
                })
                .map(|p| p.created)
                .reduce(At::earliest)
            && !self.recorded.contains(&first.second())
        {
            self.open_as(WakeKind::Wake, first, ctx);
            if let Some(w) = self.wake.as_mut() {
                w.evidence = true;
            }
            let end = At::back_from(now, since + chrono::Duration::seconds(1));
            return self.close(Some(Outcome::Aborted), end, now, out);
        }
        // A wake known only by its trace waits the abort's grace for a pod of it in a
        // later list, which would date it better.
        if !ctx.behind
            && self
                .unseen
                .as_ref()
                .is_some_and(|u| now.mono.saturating_duration_since(u.noticed) >= ABORT_GRACE)
        {
            return self.record_unseen(now, ctx, out, None);
        }
        let after_last = |second: i64| self.last().is_none_or(|l| second > l.end_second);
        let queued = self
            .pa
            .as_ref()
            .and_then(|p| p.queued())
            // Not one dated before a next wake could follow the last: that one's own,
            // replayed after it was recorded from other streams.
            .filter(|(since, _)| {
                self.last().is_none_or(|l| {
                    since.timestamp() > l.start_second && since.timestamp() >= l.next_floor
                })
            });
        // A PA active since the last wake ended (its serving period, not a new one) says
        // the revision never went back to zero: new pods are a scale-up of that period
        // (the pods that served it may just not have been seen ready), not a wake.
        let still_active = self
            .pa
            .as_ref()
            .and_then(|p| p.active())
            .is_some_and(|(since, _)| {
                self.last()
                    .is_some_and(|l| since.timestamp() <= l.end_second + 1)
            });
        let pending = self
            .pods
            .iter()
            .filter(|_| queued.is_some() || !still_active)
            .filter(|p| !p.snap.terminating() && after_last(p.created_second()))
            // A pod comes after the scale-up that began its wake: seen first, it bounds
            // the start by its creation second, it does not time it.
            .map(|p| p.created.shifted(p.snap.created))
            .reduce(At::earliest);
        let initial = self.kind_of_new(None) == WakeKind::Initial && self.wants();
        let start = match (queued.map(|q| q.1), pending) {
            (Some(q), Some(p)) => Some(q.earliest(p)),
            (q, p) => q.or(p),
        };
        // When the first pod of the wake was seen as it happened: a scale-up its own watch
        // saw earlier still times the start (see `Machine::rise`).
        let pod_seen = self
            .pods
            .iter()
            .filter(|p| !p.snap.terminating() && after_last(p.created_second()) && p.created.exact)
            .map(|p| p.created)
            .reduce(At::earliest);
        // Its first pod, when one is made: made soon after the revision was, it is the
        // revision's initial start (a PA already initialized may have been so by it).
        let made = self
            .pods
            .iter()
            .filter(|p| !p.snap.terminating() && after_last(p.created_second()))
            .map(|p| p.snap.created)
            .min();
        if let Some(start) = start.or(initial.then(|| At::arrival(now))) {
            // A wake known only by its trace, over before this one began (or before the
            // rise the Deployment shows, which this is), is not this one.
            if (self.unseen.as_ref())
                .is_some_and(|u| u.before_rise || u.end.second() < start.second())
            {
                self.record_unseen(now, ctx, out, Some(start.second()));
            }
            // With no pod of it here, its start says whether it began after the revision
            // was first seen at zero (a wake) or before (the period that sight ended).
            self.open_as(self.kind_of_new(made.or(Some(start.wall))), start, ctx);
            if let Some(w) = self.wake.as_mut() {
                w.pod_seen = pod_seen;
            }
            // Found underway: the streams that want pods now rose for this wake before
            // it was seen, so their next fall ends it and a rise after that is the next.
            // Not a stream that rose for the last wake (or an earlier one) and has shown
            // no fall since: its want is still that wake's (a list read it before its
            // watch caught up, or its watch is down with the falls in its backlog), and
            // the fall and rise it has yet to show are that wake's end and this one's
            // start. A PA that queued after the last wake began wants for this one.
            let id = self.next_id;
            let last = self.last().map(|l| l.id);
            let stale =
                |m: &Self, s: Stream| m.owed(s) && last.is_some_and(|l| m.claimed[s as usize] <= l);
            let dep = self.stream_wants(Stream::Deployment) && !stale(self, Stream::Deployment);
            let pa = self.stream_wants(Stream::Autoscaler)
                && (queued.is_some() || !stale(self, Stream::Autoscaler));
            if dep {
                self.claimed[Stream::Deployment as usize] = id;
            }
            if pa {
                self.claimed[Stream::Autoscaler as usize] = id;
            }
            // A stream at zero that fell, owed to no wake, since this wake began: a list
            // showed it wanting pods for this wake and its watch the fall, which ended it.
            // Its next rise is the next wake's, not this one's joining late.
            let start_second = self.wake.as_ref().map_or(i64::MAX, |w| w.start_second());
            for stream in [Stream::Deployment, Stream::Autoscaler] {
                let s = stream as usize;
                let Some(fall) = quiet_falls[s]
                    .filter(|f| f.second() >= start_second && !self.stream_wants(stream))
                else {
                    continue;
                };
                self.claimed[s] = id;
                self.fell_during[s] = id;
                if let Some(w) = self.wake.as_mut() {
                    w.fell[s] = true;
                    w.fell_at(fall);
                }
            }
        }
    }

    /// A wake whose every write fell in an outage and whose pods were gone before the
    /// lists: only its `NoTraffic` tells of it, and it began after the condition that one
    /// replaced, so its duration is the upper bound that leaves. Recorded once the grace
    /// has passed, or when the next wake begins (in `next_second`, when the caller
    /// knows it before the PA's `Queued` shows it).
    pub(super) fn record_unseen(
        &mut self,
        now: Stamp,
        ctx: &Ctx,
        out: &mut Vec<Finished>,
        next_second: Option<i64>,
    ) {
        let Some(u) = self.unseen.take() else {
            return;
        };
        // A request newer than the rest it followed came after it: it ended by then, and
        // pods made since are that request's.
        let next = (self.pa.as_ref())
            .and_then(|p| p.queued())
            .filter(|(since, _)| *since > u.after);
        let before_next = next
            .map(|(since, _)| since.timestamp())
            .into_iter()
            .chain(next_second)
            .min()
            .unwrap_or(i64::MAX)
            // Nor a pod made after it ended: a later wake's, come before its PA's `Queued`.
            .min(u.end.second() + 1);
        let ours = |p: &&Pod| (u.after.timestamp()..before_next).contains(&p.created_second());
        // Its own pods still here: they date it better, and the rules before this one
        // record it from them. (Not, before a rise the Deployment shows now, one that is
        // not leaving: that is the rise's.) Not one told only by a rise with the PA at
        // rest since: its pods ran and are leaving, which none of those rules takes (they
        // say nothing of serving), so they date it here; and with none left or gone, that
        // rise was no wake's. Nor one that ran and is leaving with the PA no longer
        // `Active`: no rule before this one takes it either (a leaving pod is theirs only
        // when it never ran, or when the PA still says the period it served is on).
        let leaving = (self.pods.iter())
            .filter(ours)
            .filter(|p| p.snap.terminating())
            .map(|p| p.created)
            .reduce(At::earliest);
        let pa_active = self.pa.as_ref().and_then(|p| p.active()).is_some();
        let ran_leaving = |p: &Pod| p.snap.terminating() && p.snap.running && !pa_active;
        let start = if u.pod_leaving {
            let Some(first) = u.first_pod.into_iter().chain(leaving).reduce(At::earliest) else {
                return;
            };
            first
        } else {
            let leftovers = (self.pods.iter())
                .filter(ours)
                .filter(|p| !ran_leaving(p))
                .any(|p| p.snap.terminating() || !u.before_rise);
            if leftovers {
                return;
            }
            // Their creation dates the start only if they are its first pods: more
            // changes of the Deployment's scale than a rise and a fall say it scaled
            // inside the wake, and the pods left may be that scale-up's, made later; the
            // start is then known only from below, by the rest.
            let first_pods = u.changes <= 2;
            let ran = (self.pods.iter())
                .filter(ours)
                .filter(|p| ran_leaving(p))
                .map(|p| p.created);
            (u.first_pod.into_iter().chain(ran).reduce(At::earliest))
                .filter(|_| first_pods)
                .unwrap_or(At::back_from(now, u.after))
        };
        if self.recorded.contains(&start.second()) {
            return;
        }
        self.open_as(WakeKind::Wake, start, ctx);
        if let Some(w) = self.wake.as_mut() {
            w.evidence = true;
        }
        // Each stream at zero now rose and fell for it, unseen: its next rise is the next
        // wake's, not this one's arriving late.
        let id = self.next_id;
        for stream in [Stream::Deployment, Stream::Autoscaler] {
            if !self.stream_wants(stream) {
                self.claimed[stream as usize] = id;
                self.fell_during[stream as usize] = id;
            }
        }
        let end = match next {
            Some((_, at)) if at.wall < u.end.wall => at,
            _ => u.end,
        };
        // Over before the newer period's first pod was made, too.
        let newer = (self.pods.iter())
            .filter(|p| !p.snap.terminating() && p.snap.created > u.after)
            .map(|p| p.snap.created)
            .min();
        let end = newer.map_or(end.wall, |made| made.min(end.wall));
        let end = At::back_from(now, end.max(u.after));
        // Knative gave up on it: it failed, for the reason a pod of it showed before it
        // went, if one did.
        if u.gave_up {
            let f = self
                .trouble_gone(u.after.timestamp()..=end.second())
                .unwrap_or_else(gave_up);
            return self.fail_open(f, end, now, out);
        }
        self.close(Some(Outcome::Aborted), end, now, out);
    }

    /// Pods serve and no wake is open: a serving period already explained, or one this
    /// process did not see begin, rebuilt from timestamps.
    pub(super) fn settle_serving(&mut self, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) {
        // The PA turned `Active=True` after the last wake ended: the revision was inactive
        // in between, so this serving is new even if a stale pod still looks ready.
        let pa_active = self
            .pa
            .as_ref()
            .and_then(|p| p.active())
            .map(|(s, _)| s.timestamp());
        let new_period = match (self.last(), pa_active) {
            (Some(l), Some(since)) => since > l.end_second + 1,
            _ => false,
        };
        // What continuity explained before is undone by a PA that shows a new period.
        let explained = |p: &Pod| {
            (p.accounted && !new_period)
                || self
                    .last_recorded_serving
                    .is_some_and(|l| p.snap.created <= l)
                || self.last().is_some_and(|l| {
                    (l.start_second - 1..=l.end_second).contains(&p.created_second())
                })
        };
        // The PA `Active` since the last wake says the revision stayed up, unless its
        // watch is down: then that is only the last the service heard, and a pod made since
        // may be a wake's whose PA news is still to come.
        let continuing = !new_period
            && (self.pods.iter().any(|p| p.snap.serving() && explained(p))
                || !ctx.pa_behind
                    && self
                        .last()
                        .is_some_and(|l| pa_active.is_some_and(|s| s <= l.end_second + 1)));
        // A serving pod nothing explains is a period this process did not see begin; it
        // served when its first pod did, even one already being removed (a list can meet
        // the scale-down that ends it).
        let unseen = self
            .pods
            .iter()
            .any(|p| p.snap.serving() && !explained(p))
            .then(|| {
                self.pods
                    .iter()
                    .filter(|p| p.ready.is_some() && !explained(p))
                    .min_by_key(|p| p.ready.map(|r| r.wall))
                    .map(|p| (p.snap.created, p.ready))
            })
            .flatten();
        // A serving pod while the PA says it is inactive is one that is being removed:
        // after a known wake, a pod of its serving period. With no wake known, it is
        // still the only sign of the one that made it.
        // Unless both streams were seen at rest after that wake, and the pod made after
        // the earlier of the two: then it served a period of its own, which the PA's
        // condition says is over.
        let rested = match self.zero_seen {
            [Some(d), Some(p)] => Some(d.min(p)),
            _ => None,
        }
        .filter(|z| self.last().is_some_and(|l| z.timestamp() >= l.end_second));
        let pa_says_idle = self.last().is_some()
            && self.pa.as_ref().is_some_and(|p| {
                p.snap
                    .active
                    .as_ref()
                    .is_some_and(|c| c.is(CondStatus::False))
            })
            && unseen.is_none_or(|(created, _)| rested.is_none_or(|r| created <= r));
        let Some((created, Some(ready))) = unseen.filter(|_| !continuing && !pa_says_idle) else {
            if unseen.is_none() || continuing {
                self.served_before = true;
                self.failure = None;
                self.account_serving();
            }
            return;
        };
        let Some(kind) = self.kind_if_known(Some(created)) else {
            return; // the Revision or its Deployment will tell
        };
        self.open_period(kind, At::back_from(now, created), ctx);
        // The first pod that served may be gone, or no longer ready: the PA's last turn
        // to `Active`, after this period's first pod, bounds its serving by the end of
        // that second.
        let by_pa = (self.pa.as_ref())
            .and_then(|p| p.last_active())
            .map(|s| s.timestamp())
            .filter(|s| *s >= created.timestamp())
            .filter(|s| self.last().is_none_or(|l| *s > l.end_second + 1))
            .and_then(|s| DateTime::from_timestamp(s + 1, 0))
            .filter(|b| *b < ready.wall)
            .map(|b| At::back_from(now, b));
        self.close(Some(Outcome::Served), by_pa.unwrap_or(ready), now, out);
    }

    /// Opens a serving period this process did not see begin. The streams that want
    /// pods now rose for it: their next fall ends it, not a wake that opens before a
    /// lagging stream shows that fall.
    fn open_period(&mut self, kind: WakeKind, start: At, ctx: &Ctx) {
        self.open_as(kind, start, ctx);
        let id = self.next_id;
        for s in [Stream::Deployment, Stream::Autoscaler] {
            if self.stream_wants(s) && !self.owed(s) {
                self.claimed[s as usize] = id;
            }
        }
    }

    /// A list met the scale-down of a serving period this process never saw: its pods
    /// ran and are leaving, none ready any more, yet the PA still says `Active` since that
    /// period began. It served by the end of that second (the PA follows the first pod's
    /// `Ready`); its first pod bounds its start.
    fn settle_leaving(&mut self, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) -> bool {
        let Some((since, _)) = self.pa.as_ref().and_then(|p| p.active()) else {
            return false;
        };
        let since_second = since.timestamp();
        if self
            .last()
            .is_some_and(|l| since_second <= l.end_second + 1)
        {
            return false;
        }
        let Some(created) = self
            .pods
            .iter()
            .filter(|p| {
                p.snap.running && p.snap.terminating() && p.created_second() <= since_second
            })
            .filter(|p| {
                self.last()
                    .is_none_or(|l| p.created_second() > l.end_second)
            })
            .map(|p| p.snap.created)
            .min()
        else {
            return false;
        };
        if self.recorded.contains(&created.timestamp()) {
            return false;
        }
        let Some(kind) = self.kind_if_known(Some(created)) else {
            return false;
        };
        self.open_period(kind, At::back_from(now, created), ctx);
        let end = (since + chrono::Duration::seconds(1)).min(now.wall);
        self.close(Some(Outcome::Served), At::back_from(now, end), now, out);
        true
    }

    /// The revision's creation as a start, as seen from `at`'s clock.
    pub(super) fn created_at(&self, at: At) -> Option<At> {
        self.created_live.as_deref().copied().or_else(|| {
            let c = self.created?;
            let back = (at.wall - c).to_std().unwrap_or_default();
            Some(At {
                mono: at.mono.checked_sub(back).unwrap_or(at.mono),
                wall: c,
                exact: false,
                undated: false,
            })
        })
    }

    /// Whether a new period of wanting pods is a wake or the initial start; None when it
    /// cannot be told yet. `pod_created` is the serving pod of a period seen only once
    /// serving.
    pub(super) fn kind_of_new(&self, pod_created: Option<DateTime<Utc>>) -> WakeKind {
        self.kind_if_known(pod_created).unwrap_or(WakeKind::Initial)
    }

    pub(super) fn kind_if_known(&self, pod_created: Option<DateTime<Utc>>) -> Option<WakeKind> {
        // Seen at zero before ever serving: what wants pods after that is a wake, but
        // not a period whose pod is older than that sight (a list found it serving while
        // the scale to zero that ended it was already written).
        let after_zero = self
            .seen_at_zero
            .is_some_and(|z| pod_created.is_none_or(|p| p.timestamp() >= z));
        // A want after one that awaits its verdict is not the first.
        if self.served_before || self.born_at_zero || after_zero || self.oldest_unjudged().is_some()
        {
            return Some(WakeKind::Wake);
        }
        if self.born_at_scale || self.created_live.is_some() {
            return Some(WakeKind::Initial);
        }
        let near_creation = match (pod_created, self.created) {
            (Some(p), Some(c)) => Some((p - c).num_seconds() <= INITIAL_POD_WITHIN_SECONDS),
            _ => None,
        };
        match (self.deployment, near_creation) {
            (_, Some(true)) => Some(WakeKind::Initial),
            (_, Some(false)) => Some(WakeKind::Wake),
            (Some(d), None) if d.generation > 1 => Some(WakeKind::Wake),
            (None, None) if pod_created.is_some() => None,
            _ if self.pa.as_ref().is_some_and(|p| p.snap.initialized) => Some(WakeKind::Wake),
            _ => Some(WakeKind::Initial),
        }
    }
}
