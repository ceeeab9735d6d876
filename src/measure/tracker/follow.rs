//! Counting what the store holds, for replicas that share one writer.
//!
//! With more than one replica every replica measures (so each knows what is waking now),
//! but only the Lease holder writes, and each replica's statistics are built from the
//! stored rows alone: the rows the history held at start, then every row stored since, in
//! the order stored ([`Tracker::absorb`]). Each replica's own measure of a wake only ever
//! reaches its statistics through the store, where a wake is kept once, so every replica
//! counts the same wakes with the same durations and serves the same facts; and a replica
//! that becomes the writer starts from what is stored, not from its own memory.

use chrono::{DateTime, Utc};

use super::history::end_ms;
use super::{Tracker, rev_entry};
use scaling_facts_api::{Precision, WakeRecord};

/// Whether two records are one wake measured twice (by two replicas, or once from
/// timestamps): the same revision and kind, their requests and their ends each within a
/// second of each other (two when either is known only to the second). Two real wakes of
/// a revision are never that close at both ends. The store applies the same rule when it
/// records ([`crate::store::Store::record_wake_once`]).
pub fn one_wake(a: &WakeRecord, b: &WakeRecord) -> bool {
    let coarse = a.precision == Precision::S || b.precision == Precision::S;
    let within = if coarse { 2_000 } else { 1_000 };
    a.revision_uid == b.revision_uid
        && a.kind == b.kind
        && (a.requested_at - b.requested_at).num_milliseconds().abs() <= within
        && (end_ms(a) - end_ms(b)).abs() <= within
}

impl Tracker {
    /// Counts wakes the store has stored since what this tracker counted; each row must
    /// come once (rows are followed by their id). Only with `stats_from_store`.
    pub fn absorb(&mut self, wakes: &[WakeRecord], now: DateTime<Utc>) {
        debug_assert!(self.settings.stats_from_store);
        for w in wakes {
            let rev = rev_entry(&mut self.revisions, &w.revision_uid);
            if rev.name.is_empty() {
                rev.name = w.revision.as_str().into();
            }
            rev.stats
                .get_or_insert_default()
                .record(w, &self.settings.window, now);
            if let Some(key) = rev.service.clone() {
                self.dirty.insert(key.clone());
                self.dirty_reports.insert(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::tracker::TrackerSettings;
    use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind};

    fn stored(uid: &str, second: i64, ms: u64) -> WakeRecord {
        let requested_at = DateTime::from_timestamp(second, 0).unwrap();
        WakeRecord {
            release: "shop.prod".into(),
            revision: "shop-00001".into(),
            revision_uid: uid.into(),
            kind: WakeKind::Wake,
            outcome: Outcome::Served,
            requested_at,
            start_second: second,
            serving_at: Some(requested_at + chrono::Duration::milliseconds(ms as i64)),
            duration_ms: ms,
            phases: PhaseDurations::default(),
            precision: Precision::Ms,
            failure_reason: None,
            failure_message: None,
            caused_by: None,
        }
    }

    #[test]
    fn stored_rows_are_counted_as_they_come_after_the_history() {
        let now = Utc::now();
        let mut t = Tracker::new(TrackerSettings {
            stats_from_store: true,
            ..TrackerSettings::default()
        });
        let second = now.timestamp() - 600;
        let history = [stored("a", second, 2_000)];
        t.merge_history(
            crate::measure::tracker::Stored {
                wakes: &history,
                ..Default::default()
            },
            crate::measure::observe::Stamp::now(crate::measure::observe::Via::Listed),
        );
        t.absorb(
            &[stored("a", second + 120, 4_000), stored("b", second, 900)],
            now,
        );
        let stats = |uid: &str| t.revisions.get(uid).and_then(|r| r.stats.clone()).unwrap();
        assert_eq!(stats("a").counts().served, 2);
        assert_eq!(stats("b").counts().served, 1);
        assert_eq!(t.revisions.get("b").unwrap().name.as_ref(), "shop-00001");
        // Exactly what the two rows give, recorded straight.
        let mut straight = crate::measure::stats::RevisionStats::default();
        for w in [stored("a", second, 2_000), stored("a", second + 120, 4_000)] {
            straight.record(&w, &t.settings.window, now);
        }
        assert_eq!(stats("a").expected_ms(), straight.expected_ms());
        assert!(stats("a").expected_ms() > stats("b").expected_ms());
    }
}
