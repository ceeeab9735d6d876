//! How a stream's rise joins the wake underway, echoes the last one, or opens the next;
//! and what a wake opened by an arrival that does not date it may own.
//!
//! A rise is the one edge that can begin a wake, so every rule that tells a late or
//! replayed rise from a new wake's lives here: its object's date against the open (or
//! last) wake's, a Deployment's backlog rising once per wake in order, and the echo of
//! a wake just recorded from another stream.

use chrono::{DateTime, Utc};

use super::{At, Ctx, ECHO_WINDOW, Finished, KPA_WRITE_SPREAD_MS, Machine, Stream, Wake, WakeId};
use crate::measure::observe::Stamp;
use scaling_facts_api::WakeKind;

impl Machine {
    /// A stream rose: joins the wake underway, echoes the last one, or starts a new one.
    pub(super) fn rise(
        &mut self,
        (stream, at, streamed): (Stream, At, bool),
        pa: super::PaThen,
        now: Stamp,
        ctx: &Ctx,
        out: &mut Vec<Finished>,
    ) {
        let s = stream as usize;
        let (queued, timed_out) = (pa.queued, pa.timed_out);
        // A rise its object dates (replayed, or listed) more than a second before the open
        // wake, or the last, began is an older wake's, arriving late: it neither joins
        // nor starts one. (A second for the spread of one reconcile's stamps; a wake whose
        // start is known only from below has that bound, its floor, already.)
        let begun = self
            .wake
            .as_ref()
            .map(|w| w.lower_bound().timestamp() - i64::from(w.requested.exact))
            .or(self.last().map(|l| l.start_second - 1));
        if stream == Stream::Autoscaler
            && !at.exact
            && queued.is_some()
            && begun.is_some_and(|b| at.second() < b)
        {
            if streamed {
                self.late_rise(at);
            }
            return;
        }
        // A Deployment rise replayed late, on a stream that showed neither the last wake's
        // rise nor a fall since: its stream is ordered and rises once per wake, so this is
        // the rise of the oldest wake since the one it last rose for (the last, if it never
        // rose), however much later the backlog brings it, and whatever opened since from
        // other streams' backlogs.
        if let Some(l) = self.last().filter(|l| {
            stream == Stream::Deployment
                && at.undated
                && self.claimed[s] < l.id
                && self.fell_during[s] != l.id
        }) {
            // A stream never seen at zero and never risen: its first rise is the last's.
            let after_rest = self.deployment_rest;
            self.claimed[s] = match self.claimed[s] {
                0 if after_rest == 0 => l.id,
                c => (c + 1).max(after_rest).min(l.id),
            };
            return;
        }
        // The same for the PA's backlog, replayed in order, while the open wake's start is
        // known only from above: a rise dated no later than the last wake's start is that
        // wake's (or an older one's), not the open one's, however early the open one may
        // have begun.
        if let Some(l) = self.last().filter(|l| {
            stream == Stream::Autoscaler
                && streamed
                && !at.exact
                && self.claimed[s] < l.id
                && self.fell_during[s] != l.id
                && at.second() <= l.start_second
                && self.wake.as_ref().is_some_and(|w| !w.requested.exact)
        }) {
            self.claimed[s] = match self.claimed[s] {
                0 => l.id,
                c => (c + 1).min(l.id),
            };
            return;
        }
        if let Some(w) = self.wake.as_mut() {
            // A stream that had not risen for this wake joins it, unless the wake was
            // over already: Knative gave up on it, or the PA queued anew after it ended.
            let ended = w.ending.or(w.fall()).map(|e| e.second());
            let after_end = match (stream, queued, ended) {
                (Stream::Autoscaler, Some(q), Some(e)) => q > e,
                _ => false,
            };
            let given_up = timed_out.is_some_and(|t| t > w.start_second());
            // A Deployment rise replayed late has no date of its own: with no `Queued`
            // newer than this wake's, it is this wake's rise, however it ended since.
            let late_own = stream == Stream::Deployment
                && !at.exact
                && queued.is_none_or(|q| q <= w.start_second());
            let over = (given_up || after_end) && !late_own;
            if self.claimed[s] != w.id && !over {
                self.claimed[s] = w.id;
                w.ending = None;
                // Watches are merged in one queue, so a scale-up stamped on arrival before
                // the first pod may still be handled after it: then it times the start.
                if at.exact && w.pod_seen.is_some_and(|p| at.wall <= p.wall) {
                    w.requested = at;
                    w.pod_seen = None;
                }
                return;
            }
            if !w.fell[s] && !over {
                return; // rose twice: a relist merged the fall between, nothing to tell
            }
            // A wake is its revision and start second, and Knative never scales to zero
            // and back within one: a fall and rise inside the wake's own start second is
            // a stream catching up from an older state, not an abort and the next wake.
            // (Not a start known only as a replay's arrival: its second is an upper bound.)
            if !over && !w.requested.undated && at.second() <= w.start_second() {
                w.fell[s] = false;
                if !w.fell.contains(&true) {
                    w.first_fall = None;
                    w.certain_abort = false;
                }
                return;
            }
            // It rose and fell for this wake: this is the next wake, and this one ended
            // when a stream first fell, even if another had not shown its fall yet.
            let end = w.ending.or(w.fall()).unwrap_or(at);
            self.close_unserved(end, now, out);
        } else if let Some(l) = self.last()
            && self.claimed[s] < l.id
            && self.fell_during[s] != l.id
            && (l
                .closed
                .is_some_and(|c| at.mono.saturating_duration_since(c) < ECHO_WINDOW)
                || self.pods.iter().any(|p| p.snap.serving()))
        {
            self.claimed[s] = l.id;
            return;
        }
        self.record_unseen(now, ctx, out, Some(at.second()));
        self.open(at, ctx);
        self.claimed[s] = self.next_id;
        // A replayed rise with nothing known before it (no rest, no wake): it came at any
        // time before its backlog arrived, so nothing bounds its start from below, and a
        // `Queued` in the PA's backlog dates it however long before that arrival.
        if streamed
            && at.undated
            && self.last().is_none()
            && let Some(w) = self.wake.as_mut().filter(|w| w.after.is_none())
        {
            w.floor = 0;
        }
    }

    /// A Deployment that wants pods but never rose for any wake (created at scale, or
    /// first seen by a list) wants them for wake `id`.
    pub(super) fn claim_unrisen_deployment(&mut self, id: WakeId) {
        let dep = Stream::Deployment as usize;
        if self.claimed[dep] == 0 && self.deployment.is_some_and(|d| d.replicas > 0) {
            self.claimed[dep] = id;
        }
    }

    pub(super) fn open(&mut self, at: At, ctx: &Ctx) {
        self.open_as(self.kind_of_new(None), at, ctx);
    }

    pub(super) fn open_as(&mut self, kind: WakeKind, at: At, ctx: &Ctx) {
        let requested = match kind {
            WakeKind::Initial => self.created_at(at).unwrap_or(at),
            WakeKind::Wake => at,
        };
        let after = self.began_after(at);
        // Opened by an arrival that does not date it (a list): its pods may be older than
        // the arrival, back to when its streams were last seen at zero or the last wake
        // ended.
        let floor = match (at.exact, after, self.last()) {
            (false, Some(a), _) => a.timestamp(),
            (false, None, Some(l)) => l.next_floor,
            _ => requested.second() - 1,
        };
        self.next_id += 1;
        self.first_initial |= kind == WakeKind::Initial && self.next_id == 1;
        // A Deployment that wants pods and never rose (created at scale, or first seen
        // by a list) wants them for the start opening now, unless a period already
        // serves: its fall and its next rise are then told from it.
        if kind == WakeKind::Initial && self.born_at_scale
            || !self.pods.iter().any(|p| p.snap.serving())
        {
            self.claim_unrisen_deployment(self.next_id);
        }
        self.failure = None;
        // Whatever opens now explains, or supersedes, a wake noticed only by its trace.
        self.unseen = None;
        let mut w = Wake::new(self.next_id, kind, requested, ctx);
        w.floor = floor.min(requested.second() - 1);
        w.evidence = at.exact;
        w.opened = at;
        w.after = after;
        self.wake = Some(Box::new(w));
    }

    /// A wake opened at `at` began after its streams were last seen at zero since the last
    /// wake ended, less the spread of the KPA's two writes of one reconcile (the other
    /// stream may have risen that much before). A rise a backlog replays (the
    /// Deployment's, undated) happened before it arrived, maybe before the PA was last
    /// seen at zero: only the Deployment's own last sight at zero, earlier in its order,
    /// bounds it.
    pub(super) fn began_after(&self, at: At) -> Option<DateTime<Utc>> {
        let since = self.last().map_or(i64::MIN, |l| l.end_second);
        let streams = if at.undated {
            &self.zero_seen[..=Stream::Deployment as usize]
        } else {
            &self.zero_seen[..]
        };
        // (In the second the last wake ended too: its own fall, seen at zero then.)
        let after_end = |z: &DateTime<Utc>| z.timestamp() >= since && *z <= at.wall;
        let zero = streams
            .iter()
            .flatten()
            .filter(|z| after_end(z))
            .max()
            .map(|z| *z - chrono::Duration::milliseconds(KPA_WRITE_SPREAD_MS));
        // And, for an undated rise, the PA at rest as it happened: Knative decided that
        // rest in the second its condition names, and scales up only after it. (Not a
        // rest a backlog brought: that may be past the rise already. Unless both streams
        // fell for the last wake, in order, and neither rose since: the rest is that
        // wake's fall, one decision of Knative's with the Deployment's, which this rise
        // followed in the Deployment's own order.)
        let last_fell = self.last().is_some_and(|l| {
            [Stream::Deployment, Stream::Autoscaler]
                .iter()
                .all(|s| self.fell_during[*s as usize] == l.id && self.claimed[*s as usize] == l.id)
        });
        let pa_rest = (self.pa.as_ref())
            .filter(|p| at.undated && p.desired() == Some(0))
            .and_then(|p| {
                (p.ended().into_iter().flatten())
                    .filter(|(_, seen)| seen.exact || last_fell)
                    .map(|(since, _)| since)
                    .max()
            })
            .filter(after_end);
        zero.into_iter().chain(pa_rest).max()
    }
}
