//! The open wake moves on: evidence attached by its timestamps, served, failed or
//! aborted, and the finished wake with its bounds.

use chrono::{DateTime, Utc};

use super::dating::At;
use super::evidence::{Pod, classify, failure, gave_up, standing_since, why_not_serving};
use super::{ABORT_GRACE, Closed, Ctx, Finished, Machine, Stream, Wake, remember};
use crate::measure::observe::Stamp;
use scaling_facts_api::Failure;
use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind};

impl Machine {
    /// Moves the open wake on with what the objects show now.
    /// `quiet_falls`: falls of this evaluation owed to no wake, see
    /// [`Machine::settle_quiet`].
    pub(super) fn settle(
        &mut self,
        now: Stamp,
        ctx: &Ctx,
        quiet_falls: [Option<At>; 2],
        out: &mut Vec<Finished>,
    ) {
        self.notice_requeued(now);
        if let Some(end) = self.wake.as_ref().and_then(|w| w.superseded) {
            self.close_superseded(end, now, out);
        }
        if self.wake.is_none() {
            self.settle_quiet(now, ctx, quiet_falls, out);
        }
        let Some(mut w) = self.wake.take() else {
            return;
        };
        // A `Queued` names this wake when it began with it: within the few seconds a live
        // start may trail its PA, or, for a start its arrival does not date (a list, a
        // catch-up burst), at any time since the revision was last known at rest.
        let queued_from = if w.requested.exact {
            w.requested.second() - 3
        } else {
            w.floor.min(w.requested.second() - 3)
        };
        if let Some((since, _)) = self.pa.as_ref().and_then(|p| p.queued())
            && since.timestamp() >= queued_from
            && self
                .last()
                .is_none_or(|l| since.timestamp() > l.start_second)
        {
            w.queued.get_or_insert(since.timestamp());
            w.evidence = true;
            w.floor = w.floor.min(since.timestamp() - 1);
            // A start not seen as it happened is bounded by the objects' own seconds.
            if !w.requested.exact {
                w.requested = w.requested.earliest(w.requested.shifted(since));
            }
        }
        if w.kind == WakeKind::Initial
            && let Some(created) = self.created_at(w.requested)
        {
            w.requested = created;
            w.floor = w.floor.min(created.second() - 1);
        }
        // Knative scales a revision to zero only when it stops waking it: once a stream
        // fell for this wake, a pod created or a PA turned active in a later second is the
        // next wake's, whose rise (and this wake's end) a watch gap hid. This wake ended
        // at the fall, served only if what dates its serving came before.
        // A stream's fall, or else its pods' (see `Machine::remove_pod`).
        // A pod of it that never served, gone before a backlog showed the wake, ended it
        // by its removal, as one removed while it was open would have (see
        // `Machine::remove_pod`).
        if w.pods_fell.is_none()
            && w.first_fall.is_some_and(|f| f.undated)
            && !standing_since(&self.pods, w.floor)
            && let Some((_, fell)) = self.gone_unserved(w.floor..=i64::MAX)
        {
            w.pods_fell = Some(fell);
        }
        let fall = w.fall().or(w.pods_fell);
        let fell = fall.map(|f| f.second());
        let next_began = fell.filter(|&f| {
            let pa = self.pa.as_ref();
            let later = |c: Option<(DateTime<Utc>, At)>| c.is_some_and(|(s, _)| s.timestamp() > f);
            later(pa.and_then(|p| p.active()))
                || later(pa.and_then(|p| p.queued()))
                || self
                    .pods
                    .iter()
                    .any(|p| !p.snap.terminating() && p.created_second() > f)
        });
        let cut = next_began.unwrap_or(i64::MAX);
        let floor = w.floor;
        // The pods created for this wake; `mine` are those not being removed. (Not one
        // of a serving period already explained: a scale-up of it.)
        let tried = move |p: &&Pod| !p.accounted && (floor..=cut).contains(&p.created_second());
        let mine = move |p: &&Pod| !p.snap.terminating() && tried(p);
        let first = self.pods.iter().filter(mine).map(|p| p.snap.created).min();
        // One already being removed that never ran was still made for this wake: it
        // tells the wake happened, and began by then, when an outage hid all but its
        // removal. One that ran may have served a period no stream showed.
        let first_made = self
            .pods
            .iter()
            .filter(tried)
            .filter(|p| !p.snap.terminating() || (!p.snap.running && p.ready.is_none()))
            .map(|p| p.snap.created)
            .chain(self.gone_unserved(floor..=cut).map(|(made, _)| made))
            .min();
        w.evidence |= first_made.is_some();
        if !w.requested.exact
            && let Some(first) = first_made
        {
            w.requested = w.requested.earliest(w.requested.shifted(first));
        }
        // Knative gives up counting from the wake's start, wherever its evidence put it.
        if !w.requested.exact {
            w.deadline_at = w.deadline_at.min(w.requested.wall + ctx.activation_timeout);
        }
        let pa = self.pa.as_ref();
        // A wake found already served by a list of its PA alone (an outage hid the rest)
        // has no start yet: the arrival is after it, and its streams last seen at zero
        // may be long before. Its first pod's creation will bound it, so the PA's word
        // that it serves waits for the pods.
        // So does the PA's word from a list (an outage hid the pods) when only a live
        // arrival dates the start: the wake is then known to the second only, and its
        // start must bound it, but a rise arrives as late as its stream lags, maybe after
        // the first pod was created. If the wake ends before the pods come, it served at
        // the PA's word.
        let pa_serving = pa.and_then(|p| {
            let (since, at) = p.active()?;
            let s = since.timestamp();
            (s >= w.floor && s <= cut && p.actual().unwrap_or(0) > 0).then_some(at)
        });
        let bounded = w.queued.is_some() || first.is_some();
        let pa_word = pa_serving.filter(|at| bounded || (w.requested.exact && at.exact));
        if let Some(at) = pa_serving.filter(|_| pa_word.is_none() && w.requested.exact) {
            w.pa_served.get_or_insert(at);
        }
        // A pod of it already leaving served it too, if it turned ready before the wake's
        // fall: its readiness was taken in before the wake was judged (the lists not all
        // in, or a backlog), and a removed one counts the same way below.
        let served_before_fall = |p: &&Pod| {
            p.snap.terminating()
                && p.ready
                    .is_some_and(|r| fall.is_some_and(|f| r.wall <= f.wall))
        };
        let served = self
            .pods
            .iter()
            .filter(tried)
            .filter(|p| p.snap.serving() || served_before_fall(p))
            .filter_map(|p| p.ready)
            .chain(pa_word)
            .chain(self.gone_served(floor..=cut).map(|(_, ready)| ready))
            .reduce(At::earliest);
        if let Some(end) = served {
            self.wake = Some(w);
            return self.close(Some(Outcome::Served), end, now, out);
        }
        if let Some(end) = fall.filter(|_| next_began.is_some()) {
            self.wake = Some(w);
            self.close_unserved(end, now, out);
            return self.settle_quiet(now, ctx, quiet_falls, out);
        }
        // A start only bounded from above (a backlog's arrival, a restored wake's) may be
        // long after the true one. Knative gives up one activation timeout after a wake
        // began: a `TimedOut` not before this wake's floor, and whose wake began after the
        // last one's (a failure's record ends at the service's threshold, before
        // Knative's), is this wake's.
        let last = self
            .last()
            .map_or((i64::MIN, i64::MIN), |l| (l.start_second, l.end_second));
        let began_after_last = |since: DateTime<Utc>| {
            let began = ctx.began_before_timeout(since).timestamp();
            began > last.0.saturating_add(2) && began > last.1
        };
        // Knative's give-up says why only with the pods' word; while their watch (or
        // another) is down, that word may still be coming.
        let timed_out = pa
            .and_then(|p| p.timed_out())
            .or(w.gave_up_seen)
            .filter(|(since, _)| {
                let s = since.timestamp();
                s > w.start_second()
                    || (!w.requested.exact && s >= w.floor && began_after_last(*since))
            })
            .filter(|_| !ctx.behind);
        if let Some((since, _)) = timed_out.filter(|_| !w.requested.exact) {
            let began = ctx.began_before_timeout(since);
            if began < w.requested.wall && began_after_last(since) {
                w.requested = w.requested.shifted(began);
                w.floor = w.floor.min(began.timestamp() - 1);
                w.queued = w.queued.map(|q| q.min(began.timestamp()));
            }
        }
        // The pods Knative's timeout deletes still say why they never served, and so do
        // those gone before the PA's `TimedOut` arrived.
        if let Some(shown) = self
            .pods
            .iter()
            .filter(tried)
            .find_map(|p| why_not_serving(&p.snap))
            && w.trouble
                .as_ref()
                .is_none_or(|t| (t.reason.as_str(), t.message.as_str()) != shown)
        {
            w.trouble = Some(failure(shown));
        }
        // (From its floor as the give-up may have moved it back.)
        if w.trouble.is_none() {
            w.trouble = self.trouble_gone(w.floor.min(floor)..=cut);
        }
        if w.failed.is_none()
            && let Some(f) = classify(
                self.pods
                    .iter()
                    .filter(|p| tried(p) && (timed_out.is_some() || !p.snap.terminating())),
                timed_out.is_some(),
                w.trouble.as_ref(),
                now.mono,
                &ctx.thresholds,
            )
        {
            let end = timed_out.map_or(At::arrival(now), |(_, at)| at);
            let phases = self.phases(&w);
            out.extend(self.finish(&w, Outcome::Failed, end, Some(f.clone()), phases));
            self.failure = Some(Box::new(f.clone()));
            w.failed = Some(f);
        }
        if self.wants() {
            w.ending = None;
            self.wake = Some(w);
            return;
        }
        // The end is the first fall seen, or the PA's own `NoTraffic` stamp when the fall
        // came by a list or fell in a restart.
        let idle = self
            .pa
            .as_ref()
            .and_then(|p| p.idle())
            // After the start second: a scale-down just before a quick re-wake leaves a
            // `NoTraffic` of the same second, which is the last wake's end.
            .filter(|(since, _)| since.timestamp() > w.start_second())
            .map(|(_, at)| at);
        // A pod's removal dates a fall a replay showed undated (see `Machine::remove_pod`).
        let first = [w.fall(), idle].into_iter().flatten().reduce(At::earliest);
        // The earliest of what dates it: a PA's `NoTraffic` that arrives after an undated
        // fall (a replayed Deployment's) bounds the end better.
        if let (Some(e), Some(f)) = (w.ending, first) {
            w.ending = Some(e.earliest(f));
        }
        // No stream has said a word since this wake began: their last, at zero, is older
        // than its first pod, so their watches are behind (silently, or a relist is on its
        // way), not at zero for it. The wake waits for them, until Knative's deadline, and
        // its end is not yet known: the streams, when they speak, will date it.
        let silent = [Stream::Deployment, Stream::Autoscaler].iter().all(|s| {
            !w.fell[*s as usize] && self.zero_seen[*s as usize].is_none_or(|z| z < w.requested.wall)
        }) && now.wall < w.deadline_at;
        if silent && first.is_none() {
            self.wake = Some(w);
            return;
        }
        let ending = *w.ending.get_or_insert(first.unwrap_or(At::arrival(now)));
        let certain = w.certain_abort;
        if ctx.behind
            || silent
            || !certain && now.mono.saturating_duration_since(ending.mono) < ABORT_GRACE
        {
            self.wake = Some(w);
            return;
        }
        self.wake = Some(w);
        self.close_unserved(ending, now, out);
    }

    /// Closes the open wake, which ended unserved at `end`: given up on by Knative if it
    /// was still unserved at the deadline, whether or not its `TimedOut` was seen (a
    /// later reconcile replaces it, maybe before a list shows it, and the next wake's
    /// rise may come before the abort grace has passed); else aborted.
    pub(super) fn close_unserved(&mut self, end: At, now: Stamp, out: &mut Vec<Finished>) {
        let Some(w) = self.wake.take() else {
            return;
        };
        if let Some(at) = w.pa_served.filter(|_| w.failed.is_none()) {
            self.wake = Some(w);
            return self.close(Some(Outcome::Served), at, now, out);
        }
        // The PA turned `Active` inside it and has moved on since (all of it taken in
        // before the wake was evaluated, while the lists were not all in): it served by
        // the end of that second. Not an `Active` of the second the last wake ended in:
        // that may be the last wake's, and the condition keeps it until the next turn.
        if let Some(since) = (self.pa.as_ref())
            .and_then(|p| p.last_active())
            .filter(|s| (w.start_second()..=end.second()).contains(&s.timestamp()))
            .filter(|s| self.last().is_none_or(|l| s.timestamp() > l.end_second))
            .filter(|_| w.failed.is_none())
        {
            self.wake = Some(w);
            let at = At::back_from(now, (since + chrono::Duration::seconds(1)).min(end.wall));
            return self.close(Some(Outcome::Served), at, now, out);
        }
        // While a watch is down, the pods that say why Knative gave up may still be
        // coming: the verdict waits ([`super::judging`]). An end known only from above
        // (a replayed fall) past the deadline says nothing of how long the wake lasted:
        // without a reason or a `TimedOut` to say it failed, it is an abort.
        let unproven = w.end_unproven(end) && w.gave_up_seen.is_none();
        if w.failed.is_none() && end.wall >= w.deadline_at && !self.behind && !unproven {
            let end = end.shifted(w.deadline_at);
            // For the reason its pods showed last, if they did.
            let f = w.trouble.clone().unwrap_or_else(gave_up);
            self.wake = Some(w);
            return self.fail_open(f, end, now, out);
        }
        self.wake = Some(w);
        self.close(None, end, now, out);
    }

    /// Records the open wake failed for `f` at `end`, then closes it there.
    pub(super) fn fail_open(&mut self, f: Failure, end: At, now: Stamp, out: &mut Vec<Finished>) {
        let Some(mut w) = self.wake.take() else {
            return;
        };
        let phases = self.phases(&w);
        out.extend(self.finish(&w, Outcome::Failed, end, Some(f.clone()), phases));
        self.failure = Some(Box::new(f.clone()));
        w.failed = Some(f);
        self.wake = Some(w);
        self.close(None, end, now, out);
    }

    /// A PA `Queued` newer than the open wake's own: the PA left `Queued` and came back,
    /// so the wake ended and another began, both unseen (a relist, or a watch that was
    /// down across a quick abort and re-request). Knative writes a wake's `Queued` in the
    /// reconcile that scales its Deployment, so within a second of the start; within one
    /// wake the condition keeps its `lastTransitionTime`.
    fn notice_requeued(&mut self, now: Stamp) {
        let Some((since, _)) = self.pa.as_ref().and_then(|p| p.queued()) else {
            return;
        };
        let Some(w) = self.wake.as_mut().filter(|w| w.superseded.is_none()) else {
            return;
        };
        let own = w.queued.unwrap_or(i64::MIN).max(w.start_second() + 1);
        // An initial start's first `Queued` may come late: it was created without status.
        if w.kind == WakeKind::Wake && since.timestamp() > own {
            w.superseded = Some(At::back_from(now, since));
        }
    }

    /// Ends the open wake at `end`; records it with `outcome` unless it was already
    /// recorded as failed.
    pub(super) fn close(
        &mut self,
        outcome: Option<Outcome>,
        end: At,
        now: Stamp,
        out: &mut Vec<Finished>,
    ) {
        let Some(mut w) = self.wake.take() else {
            return;
        };
        // Its first pod's creation dates a start that came late when there is one;
        // without a stamp, the wake began after its streams were last seen at zero, which
        // is also the second that names it.
        if let Some(start) = self.late_start(&w, end) {
            w.requested = w.requested.shifted(start);
        }
        let outcome = match (&w.failed, outcome) {
            (Some(_), Some(Outcome::Served)) => {
                // Recorded as failed; it recovered on its own.
                self.served_before = true;
                None
            }
            (Some(_), _) => None,
            (None, o @ Some(Outcome::Served)) => o,
            (None, _) if !w.evidence => None,
            (None, o) => Some(o.unwrap_or(Outcome::Aborted)),
        };
        let held = outcome != Some(Outcome::Served) && self.hold_verdict(&w, end);
        // A pod of this wake, gone, told why it did not serve: that was this wake's reason,
        // not the next one's, whose floor may reach back past it. A wake that served had
        // no reason: a pod made before its start second is an older wake's, which a PA's
        // backlog may yet record.
        let own_from = match outcome {
            Some(Outcome::Served) => w.floor.max(w.start_second() - 1),
            _ => w.floor,
        };
        if !held {
            self.forget_gone_trouble(own_from..=i64::MAX);
        }
        if let Some(outcome) = outcome.filter(|_| !held) {
            let phases = self.phases(&w);
            out.extend(self.finish(&w, outcome, end, None, phases));
            if outcome == Outcome::Served {
                self.account_serving();
                self.served_before = true;
                self.failure = None;
                self.last_recorded_serving = Some(end.wall);
                self.served_inside_unjudged(w.start_second());
            }
        }
        // A wake the last process left underway, closed after this one restored a newer
        // recorded wake: that one stays the last, whose serving explains what serves now;
        // it takes the id, as what the streams did for either is over.
        if let Some(newer) = self.last.as_deref_mut()
            && newer.start_second > w.start_second()
        {
            newer.id = w.id;
            return;
        }
        self.last = Some(Box::new(Closed {
            id: w.id,
            start_second: w.start_second().min(w.requested.second()),
            end_second: end.second(),
            next_floor: if end.undated && w.requested.undated {
                w.floor + 1
            } else if end.undated {
                w.start_second().min(w.requested.second()) + 1
            } else {
                end.second() + i64::from(outcome == Some(Outcome::Served))
            },
            served: outcome == Some(Outcome::Served),
            closed: Some(now.mono),
            initial: w.kind == WakeKind::Initial,
        }));
    }

    /// The start of a wake whose start came late (see [`Wake::began_after_if_late`]): its
    /// first pod's creation, or else the rest it followed.
    pub(super) fn late_start(&self, w: &Wake, end: At) -> Option<DateTime<Utc>> {
        let after = w.began_after_if_late(end)?;
        let dated = self
            .start_bound(w)
            .filter(|b| (after..=end.wall).contains(b));
        Some(dated.unwrap_or(after))
    }

    /// The earliest object second that bounds the wake's start: the `Queued` transition,
    /// its first pod's creation, the revision's creation for an initial start.
    pub(super) fn start_bound(&self, w: &Wake) -> Option<DateTime<Utc>> {
        let queued = w.queued.and_then(|q| DateTime::from_timestamp(q, 0));
        // Not a pod that served an earlier period, whatever its second.
        let pod = self
            .pods
            .iter()
            .filter(|p| p.created_second() >= w.floor && !p.accounted)
            .map(|p| p.snap.created)
            .min();
        let created = self.created.filter(|_| w.kind == WakeKind::Initial);
        let gone = self.gone_served(w.floor..=i64::MAX).map(|(c, _)| c.wall);
        let gone_unserved = self.gone_unserved(w.floor..=i64::MAX).map(|(made, _)| made);
        [queued, pod, created, gone, gone_unserved]
            .into_iter()
            .flatten()
            .min()
    }

    /// Every pod serving now belongs to a serving period already explained, and so does
    /// the one gone that served.
    pub(super) fn account_serving(&mut self) {
        for p in self.pods.iter_mut().filter(|p| p.snap.serving()) {
            p.accounted = true;
        }
        if let Some(g) = self.gone.as_deref_mut() {
            g.served = None;
        }
    }

    /// The pod gone that served unexplained, when it was made in `seconds`: its creation
    /// and when it turned ready.
    pub(super) fn gone_served(&self, seconds: std::ops::RangeInclusive<i64>) -> Option<(At, At)> {
        (self.gone.as_deref())
            .and_then(|g| g.served)
            .filter(|(created, _)| seconds.contains(&created.second()))
    }

    /// The last pod gone that never served, when it was made in `seconds`: its creation
    /// and when it was asked to go.
    pub(super) fn gone_unserved(
        &self,
        seconds: std::ops::RangeInclusive<i64>,
    ) -> Option<(DateTime<Utc>, At)> {
        (self.gone.as_deref())
            .and_then(|g| g.unserved)
            .filter(|(made, _)| seconds.contains(&made.timestamp()))
    }

    /// When the wake's first pod was scheduled and started running.
    pub(super) fn phases(&self, w: &Wake) -> (Option<At>, Option<At>) {
        let mine = || {
            self.pods
                .iter()
                .filter(|p| p.created_second() >= w.floor && !p.accounted)
        };
        (
            mine().filter_map(|p| p.scheduled).reduce(At::earliest),
            mine().filter_map(|p| p.running).reduce(At::earliest),
        )
    }

    pub(super) fn finish(
        &mut self,
        w: &Wake,
        outcome: Outcome,
        end: At,
        failure: Option<Failure>,
        (scheduled, running): (Option<At>, Option<At>),
    ) -> Option<Finished> {
        // Known to the second only: the duration is an upper bound, so its start is the
        // earliest whole second the objects give for it, or the start of the second its
        // arrival came in: a stream's event arrives as late as the stream lags, so an
        // arrival bounds nothing to the millisecond once the end is known to the second.
        let start = if w.requested.exact && end.exact {
            w.requested
        } else {
            let arrival_second = DateTime::from_timestamp(w.requested.wall.timestamp(), 0);
            match [self.start_bound(w), arrival_second]
                .into_iter()
                .flatten()
                .min()
            {
                Some(b) if b < w.requested.wall => w.requested.shifted(b),
                _ => w.requested,
            }
        };
        // Evidence dated before the start it was found at (a replayed end of a wake opened
        // by an undated arrival): the start is then only known from below.
        let start = if !start.exact && start.wall > end.wall {
            start.shifted(w.lower_bound().min(end.wall))
        } else {
            start
        };
        // A start known only as a replay's arrival is named by the second its evidence gave.
        let start_second = match w.queued {
            None if w.requested.undated => start.second(),
            _ => w.start_second(),
        };
        if self.recorded.contains(&start_second) {
            return None; // recorded before a restart or a relist
        }
        remember(&mut self.recorded, start_second);
        // The last wake is known by that second from now on.
        if let Some(l) = self.last.as_deref_mut().filter(|l| l.id == w.id) {
            l.start_second = l.start_second.min(start_second);
        }
        let served = outcome == Outcome::Served;
        Some(Finished {
            kind: w.kind,
            outcome,
            requested_at: start.wall,
            start_second,
            serving_at: served.then_some(end.wall),
            // Known to the millisecond, or an upper bound: never 0.
            duration_ms: end.ms_since(&start).max(1),
            phases: PhaseDurations {
                provisioning_ms: scheduled.map(|s| s.ms_since(&start)),
                pulling_image_ms: scheduled.zip(running).map(|(s, r)| r.ms_since(&s)),
                starting_ms: running.filter(|_| served).map(|r| end.ms_since(&r)),
            },
            precision: if start.exact && end.exact {
                Precision::Ms
            } else {
                Precision::S
            },
            failure,
        })
    }
}
