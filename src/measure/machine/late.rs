//! A wake the PA's replay shows whole, older than the wake open now.
//!
//! After an outage each kind's backlog comes back on its own: the pods' and the
//! Deployment's may arrive long before the PA's, and by then a newer wake may be open. The
//! older wake's Deployment rise has no date, so it joins the open one; its pods, already
//! gone, or taken for more pods of a serving period by a PA still held at its old state,
//! date nothing. The PA's own transitions, replayed in order, still tell it to the second:
//! its `Queued` begins it, and the next transition ends it (`Active`: it served;
//! `TimedOut`: Knative gave up; `NoTraffic` with neither: it was aborted). So a replayed PA
//! rise dated before the open wake, after the last wake known and inside none waiting for
//! its verdict, is noted here and recorded once the PA moves on (or, unserved while a
//! watch is still down, judged with the wakes waiting for their verdict, so that the
//! pods' backlog can still say why). Its phases are unknown: the pods that would date
//! them are gone.

use scaling_facts_api::{Outcome, WakeKind};

use super::dating::At;
use super::evidence::gave_up;
use super::judging::Unjudged;
use super::{Ctx, Finished, Machine, Wake};

impl Machine {
    /// A replayed PA rise at `at`, older than the open wake (or, with none open, than the
    /// last): a wake of its own unless a wake known already covers its second.
    pub(super) fn late_rise(&mut self, at: At) {
        let q = at.second();
        // Two seconds clear of any wake known: a stream may lag that much behind the PA
        // it followed, and Knative never wakes a revision twice within them.
        let clear = |s: i64| (q - s).abs() > 2;
        let newer = match self.wake.as_deref() {
            Some(w) => {
                clear(w.lower_bound().timestamp())
                    && self
                        .last()
                        .is_none_or(|l| q >= l.next_floor && clear(l.start_second))
            }
            None => self.last().is_some_and(|l| clear(l.start_second)),
        };
        let judged_later = self.unjudged.as_deref().is_some_and(|queue| {
            queue
                .iter()
                .any(|u| (u.wake.floor..=u.end.second()).contains(&q))
        });
        let recorded = self.recorded.iter().any(|s| !clear(*s));
        if newer && !judged_later && !recorded {
            self.late = Some(Box::new(at));
        }
    }

    /// Records the late wake once the PA shows how it ended.
    pub(super) fn settle_late(&mut self, ctx: &Ctx, out: &mut Vec<Finished>) {
        let (Some(start), Some(pa)) = (self.late.as_deref().copied(), self.pa.as_ref()) else {
            return;
        };
        let q = start.second();
        let since = |c: Option<(chrono::DateTime<chrono::Utc>, At)>| {
            c.filter(|(since, _)| since.timestamp() >= q)
                .map(|(_, at)| at)
        };
        let (outcome, end) = if let Some(at) = since(pa.active()) {
            (Outcome::Served, at)
        } else if let Some(at) = since(pa.timed_out()) {
            (Outcome::Failed, at)
        } else if let Some(at) = since(pa.idle()) {
            (Outcome::Aborted, at)
        } else if pa.queued().is_some_and(|(s, _)| s.timestamp() == q) {
            return; // not over yet, as far as the replay has come
        } else {
            self.late = None;
            return;
        };
        self.late = None;
        let mut w = Wake::new(0, WakeKind::Wake, start, ctx);
        w.queued = Some(q);
        w.evidence = true;
        // A watch is still down: the pods' backlog may yet say why it did not serve. It
        // waits for its verdict with the wakes that ended so, in the order they began.
        if outcome != Outcome::Served && ctx.behind {
            let gave_up = (outcome == Outcome::Failed).then_some(end);
            let queue = self.unjudged.get_or_insert_default();
            let at = (queue.iter())
                .position(|u| u.wake.start_second() > q)
                .unwrap_or(queue.len());
            let wake = Box::new(w);
            queue.insert(at, Unjudged { wake, end, gave_up });
            return;
        }
        let failure = (outcome == Outcome::Failed)
            .then(|| self.trouble_gone(q..=end.second()).unwrap_or_else(gave_up));
        out.extend(self.finish(&w, outcome, end, failure, (None, None)));
        if outcome == Outcome::Served {
            self.served_before = true;
        }
    }
}
