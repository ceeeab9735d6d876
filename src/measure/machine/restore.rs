//! What the store knew before this process started: recorded wakes (their keys refuse
//! duplicates) and the wake underway, continued once the lists are in.

use chrono::{DateTime, Utc};

use super::dating::{At, Side};
use super::evidence::{Autoscaler, gave_up};
use super::{Closed, Ctx, Finished, Machine, Stream, Wake, remember};
use crate::measure::observe::Stamp;
use crate::measure::wake::Underway;
use scaling_facts_api::{Outcome, WakeKind};

impl Machine {
    /// A wake the store already holds. `end_bounded`: its end may be only an upper bound
    /// (an unserved wake of second precision, closed at an arrival), so a next wake may
    /// have begun before it, from the second after its start.
    pub fn restore(
        &mut self,
        kind: WakeKind,
        start_second: i64,
        outcome: Outcome,
        end: DateTime<Utc>,
        end_bounded: bool,
    ) {
        remember(&mut self.recorded, start_second);
        if outcome == Outcome::Served {
            self.served_before = true;
            self.last_recorded_serving = self.last_recorded_serving.max(Some(end));
        } else {
            // An aborted or failed start ends at zero: whatever starts next is a wake, even
            // for a revision that never served (its first start failed).
            self.seen_at_zero.get_or_insert(end.timestamp());
        }
        if self.last().is_none_or(|l| l.start_second < start_second) {
            self.next_id += 1;
            self.last = Some(Box::new(Closed {
                id: self.next_id,
                start_second,
                end_second: end.timestamp(),
                next_floor: if end_bounded && outcome != Outcome::Served {
                    start_second + 1
                } else {
                    end.timestamp() + i64::from(outcome == Outcome::Served)
                },
                served: outcome == Outcome::Served,
                closed: None,
                initial: kind == WakeKind::Initial,
            }));
        }
    }

    /// The first lists are in. A stream that wants pods while pods serve wants them for
    /// the last wake's serving period: the fall it shows next is that wake's, even if a
    /// newer wake has begun by the time it arrives.
    pub fn listed(&mut self) {
        if let Some(l) = self.last().filter(|_| self.wake.is_none())
            && self.pods.iter().any(|p| p.snap.serving())
        {
            for (s, level) in self.levels().into_iter().enumerate() {
                if level.is_some_and(|n| n > 0) {
                    self.claimed[s] = l.id;
                }
            }
        }
    }

    /// Each stream's scale, when known.
    fn levels(&self) -> [Option<u32>; 2] {
        [
            self.deployment.map(|d| d.replicas),
            self.pa.as_ref().and_then(Autoscaler::desired),
        ]
    }

    /// The wakes the previous process had underway, oldest first; continued once the lists
    /// are in. All but the newest had ended and waited for their verdicts: they wait here
    /// again, judged on what the lists show.
    pub fn restore_open(&mut self, mut wakes: Vec<Underway>, now: Stamp, ctx: &Ctx) {
        let Some(newest) = wakes.pop() else { return };
        for u in wakes {
            self.restore_unjudged(u, now, ctx);
        }
        self.restore_newest(newest, now, ctx);
    }

    /// An ended wake the previous process kept waiting for its verdict.
    fn restore_unjudged(&mut self, u: Underway, now: Stamp, ctx: &Ctx) {
        if u.ended_at.is_none() || self.wake.is_some() {
            return;
        }
        self.open_stored(&u, now, ctx);
        let Some(wake) = self.wake.take() else {
            return;
        };
        let Some(end) = wake.first_fall else {
            return;
        };
        // Knative's give-up, kept as its reason when nothing else named one.
        let gave_up_at = (u.trouble.as_ref() == Some(&gave_up())).then_some(end);
        self.unjudged
            .get_or_insert_default()
            .push_back(super::judging::Unjudged {
                wake,
                end,
                gave_up: gave_up_at,
            });
    }

    /// A stored wake opened again as the store kept it: requested (the row is the
    /// evidence), dated, and ended where the last process saw it end.
    fn open_stored(&mut self, u: &Underway, now: Stamp, ctx: &Ctx) {
        self.open_as(u.kind, At::back_from(now, u.requested_at), ctx);
        if let Some(w) = self.wake.as_mut() {
            w.queued = Some(u.start_second);
            w.floor = w.floor.min(u.start_second - 1);
            w.evidence = true;
            // Its streams had fallen, and the last process died waiting out the grace.
            w.first_fall = u.ended_at.map(|e| At {
                undated: u.ended_undated,
                ..At::back_from(now, e)
            });
            w.trouble = u.trouble.clone();
        }
    }

    fn restore_newest(&mut self, u: Underway, now: Stamp, ctx: &Ctx) {
        if self.wake.is_some() {
            return;
        }
        let Underway {
            kind,
            start_second,
            ended_at,
            requested_at,
            ..
        } = u;
        // A whole wake the lists' Deployment told, past the rest the store kept from
        // before this one: this wake rose and fell too (or will fall), so it takes two
        // changes more than the note needed alone (2, or 3 before a rise) for another
        // wake, which began after this one ended.
        let beyond = self
            .unseen
            .take()
            .filter(|u| u.changes >= 4 + i64::from(u.before_rise));
        self.open_stored(&u, now, ctx);
        self.unseen = beyond.map(|mut u| {
            u.after = u.after.max(ended_at.unwrap_or(requested_at));
            u
        });
        let id = self.next_id;
        // The lists are fresh: whatever wants pods now rose for it before the restart,
        // and whatever is back at zero already rose and fell for it.
        // The PA's fall is dated by the condition it changed, when that came after this
        // wake began: an end the process may have died waiting to confirm.
        let pa_fell = self.pa.as_ref().and_then(|p| {
            p.ended()
                .into_iter()
                .flatten()
                .filter(|(since, _)| since.timestamp() >= start_second)
                .map(|(_, at)| at)
                .reduce(At::earliest)
        });
        for (s, level) in self.levels().into_iter().enumerate() {
            let Some(level) = level else { continue };
            self.claimed[s] = id;
            if level == 0
                && let Some(w) = self.wake.as_mut()
            {
                w.fell[s] = true;
                if s == Stream::Autoscaler as usize
                    && let Some(at) = pa_fell
                {
                    w.fell_at(at);
                }
            }
        }
        // A PA that queued after this wake's second activated anew, so this wake ended
        // while the process was down: shown by a pod of it being scaled away, or by a
        // wake's `Queued` too late to be that wake's own (Knative writes it in the
        // reconcile that scales the Deployment, within a second). An initial start's
        // first `Queued` may come later: it was created without status.
        let floor = start_second - 1;
        if let Some((since, _)) = self.pa.as_ref().and_then(|p| p.queued())
            && since.timestamp() > start_second
            && (self.pods.iter().any(|p| {
                p.snap.terminating() && (floor..since.timestamp()).contains(&p.created_second())
            }) || (kind == WakeKind::Wake && since.timestamp() > start_second + 1))
            && let Some(w) = self.wake.as_mut()
        {
            w.superseded = Some(At::back_from(now, since));
        }
        // A wake the store recorded as begun after this one (the last process judged it
        // while this one waited for its verdict): this one ended before it, and the pods
        // made from its second on are that wake's.
        let newer = self
            .last()
            .map(|l| l.start_second)
            .filter(|s| *s > start_second);
        if let Some(second) = newer
            && let Some(w) = self.wake.as_mut()
            && w.superseded.is_none_or(|s| s.second() > second)
            && let Some(at) = DateTime::from_timestamp(second, 0)
        {
            w.superseded = Some(At::back_from(now, at));
        }
    }

    /// Closes a wake that ended unseen (while the process was down, or while its streams
    /// were): served if one of its pods was ready, else aborted, by the end of the second
    /// the PA queued anew in at the latest.
    pub(super) fn close_superseded(&mut self, requeued: At, now: Stamp, out: &mut Vec<Finished>) {
        let Some(w) = self.wake.as_ref() else { return };
        let (floor, id, fell) = (w.floor, w.id, w.first_fall);
        // Its pods were made from its floor to before the new `Queued`'s second.
        let made = floor..=requeued.second() - 1;
        let served = self
            .pods
            .iter()
            .filter(|p| made.contains(&p.created_second()))
            .filter_map(|p| p.ready)
            .reduce(At::earliest);
        // Its streams fell for it unseen: what they want now is the next wake's.
        self.fell_during = [id; 2];
        match served {
            Some(at) => self.close(Some(Outcome::Served), at, now, out),
            None => {
                // The fall came before the new `Queued`, within its second at the latest:
                // an upper bound, unless a stream was seen falling before.
                let end = (requeued.wall + chrono::Duration::seconds(1)).min(now.wall);
                let end = At::back_from(now, end);
                let end = fell.map_or(end, |f| f.earliest(end));
                // A pod of it being removed, or removed already without having run, dates
                // the scale to zero that ended it: Knative removes a woken revision's pods
                // only then.
                let end = (self.pods.iter())
                    .filter(|p| made.contains(&p.created_second()))
                    .filter_map(|p| p.snap.deleting)
                    .map(|asked| At::by_stamp(now, asked, Side::End))
                    .chain(self.gone_unserved(made.clone()).map(|(_, fell)| fell))
                    .fold(end, At::earliest);
                self.close_unserved(end, now, out);
                // That bound is past the new `Queued`, which began the next wake: its
                // second is where the next one may start.
                if let Some(l) = self.last.as_mut().filter(|l| l.id == id) {
                    l.next_floor = l.next_floor.min(requeued.second());
                }
            }
        }
    }

    /// The wakes underway, oldest first: those that ended while a watch was down and wait
    /// for their verdicts, then the one open, unless it was already recorded as failed.
    pub fn open_wakes(&self) -> Vec<Underway> {
        // An ended one is still to be recorded: a process killed now continues it, ended,
        // from the store. Its start, when only an arrival of a backlog dates it, is the
        // rest it followed: the bound its record would have had.
        let mut open: Vec<Underway> = (self.unjudged.as_deref().into_iter().flatten())
            .map(|u| {
                let mut row = self.underway(&u.wake, Some(u.end));
                // Its first pod, come since it ended, dates it (and names it: the rest
                // it was named by is no start a restart should take it back to).
                if let Some(first) = self.first_pod_dates(&u.wake, u.end) {
                    row.requested_at = first;
                    row.start_second = first.timestamp();
                }
                // Knative's give-up within it, which its restored end (maybe only an
                // upper bound, past the deadline) no longer proves: kept as its reason.
                if u.gave_up.is_some() {
                    row.trouble.get_or_insert_with(gave_up);
                }
                row
            })
            .collect();
        // A stream's fall, not the machine's `ending`, which may be a stream that has not
        // shown its rise yet.
        if let Some(w) = self.underway_now() {
            open.push(self.underway(w, w.fall()));
        }
        open
    }

    /// Whether a wake is underway as the store keeps them (see [`Machine::open_wakes`]).
    pub fn has_open(&self) -> bool {
        self.oldest_unjudged().is_some() || self.underway_now().is_some()
    }

    /// The wake underway as the store keeps it: a failed one is recorded already.
    fn underway_now(&self) -> Option<&Wake> {
        self.wake.as_deref().filter(|w| w.failed.is_none())
    }

    /// A wake as the store keeps it underway. A start only an arrival dates (a backlog's
    /// or a list's rise) is an upper bound: once the wake has ended, the store keeps what
    /// its record would take (see `Machine::close`), its first pod's creation or the rest
    /// it followed, so that a process killed now does not date it by an arrival that may
    /// be long after.
    fn underway(&self, w: &Wake, ended: Option<At>) -> Underway {
        let requested = ended
            .filter(|_| w.requested.undated)
            .and_then(|end| self.late_start(w, end))
            .unwrap_or(w.requested.wall);
        Underway {
            kind: w.kind,
            requested_at: requested,
            start_second: w.start_second().min(requested.timestamp()),
            ended_at: ended.map(|e| e.wall),
            ended_undated: ended.is_some_and(|e| e.undated),
            trouble: w.trouble.clone(),
        }
    }
}
