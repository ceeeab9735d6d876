//! What a step of the tracker produced for the store: wakes, changes to the wakes
//! underway, retractions, rests. The store applies one output's retractions before its
//! wakes, so outputs of several steps are joined here, where that order is kept true.

use chrono::{DateTime, Utc};

use crate::measure::observe::ServiceKey;
use crate::measure::wake::{OpenChange, Rest};
use scaling_facts_api::WakeRecord;

/// A wake to store, and the Knative Service it is a wake of (for metric labels, which
/// are by namespace and service, whatever the release key).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub service: ServiceKey,
    pub wake: WakeRecord,
}

/// What one observation produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Wakes to store and log, in the order they ended.
    pub wakes: Vec<Recorded>,
    /// Wakes that began or ended, for the store's list of wakes underway.
    pub open: Vec<OpenChange>,
    /// Stored wakes found to be another record of a wake stored under a neighbouring
    /// second: to delete, by (revision UID, start second).
    pub retracted: Vec<(String, i64)>,
    /// Revisions whose last rest changed, for the store.
    pub rests: Vec<Rest>,
    /// The service first synced, with nothing stored of an earlier sync: for the store,
    /// which keeps the earliest.
    pub watching_since: Option<DateTime<Utc>>,
}

impl Output {
    /// Appends what a later step produced, in order.
    pub fn extend(&mut self, later: Output) {
        // The store takes an output's retractions before its wakes, so a later step's
        // retraction of a record this output still carries would come before the record
        // and leave it stored: the record goes here instead (a relist's list and its watch
        // back are two steps written as one, the second replaying what the first recorded).
        for (uid, second) in &later.retracted {
            self.wakes
                .retain(|r| r.wake.revision_uid != *uid || r.wake.start_second != *second);
        }
        self.wakes.extend(later.wakes);
        self.open.extend(later.open);
        self.retracted.extend(later.retracted);
        self.rests.extend(later.rests);
        self.watching_since = self.watching_since.or(later.watching_since);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind};

    fn recorded(start_second: i64) -> Recorded {
        let at = DateTime::from_timestamp(start_second, 0).unwrap();
        Recorded {
            service: ServiceKey::new("shop", "s0"),
            wake: WakeRecord {
                release: "s0.shop".into(),
                revision: "s0-00001".into(),
                revision_uid: "uid-1".into(),
                kind: WakeKind::Wake,
                outcome: Outcome::Served,
                requested_at: at,
                start_second,
                serving_at: Some(at + chrono::Duration::milliseconds(1_486)),
                duration_ms: 1_486,
                phases: PhaseDurations::default(),
                precision: Precision::S,
                failure_reason: None,
                failure_message: None,
                caused_by: None,
            },
        }
    }

    /// A relist's list recorded a wake provisionally; its watch back replayed it under the
    /// next second, retracting the first. Written as one output, retractions first, the
    /// first record would have outlived its retraction.
    #[test]
    fn a_later_retraction_takes_out_a_record_still_carried() {
        let mut out = Output {
            wakes: vec![recorded(28)],
            ..Output::default()
        };
        out.extend(Output {
            wakes: vec![recorded(29)],
            retracted: vec![("uid-1".into(), 28)],
            ..Output::default()
        });
        let seconds: Vec<i64> = out.wakes.iter().map(|r| r.wake.start_second).collect();
        assert_eq!(seconds, [29]);
        assert_eq!(out.retracted, [("uid-1".to_owned(), 28)]);
    }

    /// A retraction names a revision and a second: other records stay.
    #[test]
    fn a_retraction_leaves_other_records() {
        let mut out = Output {
            wakes: vec![recorded(20), recorded(28)],
            ..Output::default()
        };
        let mut other = recorded(28);
        other.wake.revision_uid = "uid-2".into();
        out.wakes.push(other);
        out.extend(Output {
            retracted: vec![("uid-1".into(), 28)],
            ..Output::default()
        });
        let left: Vec<(&str, i64)> = (out.wakes.iter())
            .map(|r| (r.wake.revision_uid.as_str(), r.wake.start_second))
            .collect();
        assert_eq!(left, [("uid-1", 20), ("uid-2", 28)]);
    }
}
