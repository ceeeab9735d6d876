//! An initial start that served wholly out of this process's sight.
//!
//! A revision created while the API server was away from the service (or while no
//! process ran) may start, serve and go back to zero before any list shows it: the
//! first list then finds its PA at `NoTraffic`, its Deployment at the scale it was
//! created with (or just scaled to zero), and its pod leaving, no longer ready; or the
//! next wake already underway, the PA queued again after it served. Nothing
//! streamed dates the serving; the PA's `ScaleTargetInitialized` does. Knative sets it
//! True once, when the revision first has its initial scale ready, and never resets it,
//! so its `lastTransitionTime` is the second the initial start served. The start is the
//! revision's creation, as for every initial start. When these lists are the first sight
//! any process had of the Deployment, it may be at zero after later wakes too; one more
//! wake after the start is then noted unseen, from the start's serving to the PA's rest.
//! Only when a process of this service
//! saw the revision created (the store keeps that sight as the revision's first rest),
//! it was created after the service first synced (the store keeps when), or a pod of it
//! is still there to be listed: otherwise it is an old revision's, from before this
//! service watched.

use chrono::Duration;
use scaling_facts_api::{Outcome, WakeKind};

use super::dating::{At, Side};
use super::{Ctx, Finished, Machine};
use crate::measure::observe::Stamp;

impl Machine {
    /// Records the initial start the PA says served, when nothing else of it was seen;
    /// true if it did. `before_next`: only if the next wake is already underway (found
    /// next, serving or not); else only if it is over and nothing followed it.
    pub(super) fn settle_initial_unseen(
        &mut self,
        now: Stamp,
        ctx: &Ctx,
        out: &mut Vec<Finished>,
        before_next: bool,
    ) -> bool {
        if self.served_before || self.last.is_some() || self.born_at_zero || ctx.born_at_zero {
            return false;
        }
        let (Some(created), Some(pa), Some(dep)) =
            (self.created, self.pa.as_ref(), self.deployment)
        else {
            return false;
        };
        // The initial start has gone by: the Deployment is as created, at scale, or scaled
        // to zero once since. Or at zero after later wakes too, when these lists are the
        // first sight of it any process had: none judged the start before them.
        let first_period = match dep.generation {
            1 => dep.replicas > 0,
            2 => dep.replicas == 0,
            g => g > 2 && dep.replicas == 0 && !self.deployment_seen_before,
        };
        let Some(served) = pa
            .snap
            .initialized_since
            .filter(|s| *s >= created - Duration::seconds(1))
        else {
            return false;
        };
        // Over: the PA wants no pods, since its initialization.
        let over = pa.desired() == Some(0)
            && pa
                .ended_since()
                .into_iter()
                .flatten()
                .any(|since| since >= served);
        // And this service's to record: a process saw the revision created, or a pod of it
        // is still here, as the list found it. A revision started long before this
        // service watched has no pod left of its initial start, and that start is not
        // this service's.
        let its_pod = self
            .pods
            .iter()
            .any(|p| (created.timestamp() - 1..=served.timestamp()).contains(&p.created_second()));
        // (A creation is stamped to its second: one in the second the watching began may
        // have been just after it.)
        let ours = self.seen_born
            || ctx
                .watched_since
                .is_some_and(|w| created.timestamp() >= w.timestamp());
        // Or the next wake is underway already: the Deployment risen once more, the PA's
        // `Active` changed since the initial start served (it went inactive and queued
        // again, or already serves again). That wake is found underway next.
        let moved_since = pa
            .changed_since()
            .is_some_and(|since| since.timestamp() > served.timestamp() + 1);
        // (Risen once more: generation 3; later ones are that wake's scale changes, when
        // these lists are the first sight of the Deployment.)
        let risen_again = match dep.generation {
            3 => true,
            g => g > 3 && !self.deployment_seen_before,
        };
        let next_underway = risen_again && dep.replicas > 0 && moved_since;
        let shown = if before_next {
            next_underway
        } else {
            first_period && over
        };
        if !shown || !(its_pod || ours) {
            return false;
        }
        // Four changes or more: the start's rise and fall, and a wake's after it (a
        // scale-up inside the start's period moves it once; two of them would read as a
        // wake, which nothing listed can tell apart). Its end is the PA's at rest now.
        let later = (!before_next && dep.generation >= 4)
            .then(|| {
                pa.ended()
                    .into_iter()
                    .flatten()
                    .max_by_key(|(since, _)| *since)
            })
            .flatten();
        self.open_as(WakeKind::Initial, At::back_from(now, created), ctx);
        if let Some(w) = self.wake.as_mut() {
            w.evidence = true;
        }
        // Served within that second: its end bounds the serving.
        let end = At::by_stamp(now, served, Side::End);
        self.close(Some(Outcome::Served), end, now, out);
        if let Some((since, at)) = later {
            self.note_unseen(served, at, since.timestamp(), now);
        }
        true
    }
}
