//! Every wake the simulator really ran against what the store holds at the end.
//!
//! A stored wake is that true wake when it is of the same revision and kind and starts
//! where the truth does: within half a second when it was timed live, and when known only
//! to the second, dated at the start of the second it (or its first pod) began in, never
//! after. Each true wake takes the nearest such record; one recorded twice leaves a
//! second record unmatched (doubled), and a record that matches no true wake is a phantom.

use std::collections::BTreeMap;

use scaling_facts_api::{Precision, WakeRecord};
use scaling_facts_sim::truth::TruthWake;

/// What the comparison found.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub truth: usize,
    pub recorded: usize,
    pub lost: usize,
    pub doubled: usize,
    pub phantom: usize,
    /// Matched, but with another outcome.
    pub wrong_outcome: usize,
    /// One line per problem, for the log.
    pub detail: Vec<String>,
}

fn offset_ms(t: &TruthWake, m: &WakeRecord) -> i64 {
    (m.requested_at - t.started_at).num_milliseconds()
}

fn same_wake(t: &TruthWake, m: &WakeRecord) -> bool {
    let ms = offset_ms(t, m);
    m.revision_uid == t.revision_uid
        && m.kind == t.kind
        && match m.precision {
            Precision::Ms => ms.abs() < 500,
            Precision::S => (-1_000..=300).contains(&ms),
        }
}

/// Compares the finished true wakes with the stored ones.
pub fn compare(truth: &[TruthWake], stored: &[WakeRecord]) -> Tally {
    let done: Vec<&TruthWake> = truth.iter().filter(|t| t.outcome.is_some()).collect();
    let mut tally = Tally {
        truth: done.len(),
        recorded: stored.len(),
        ..Tally::default()
    };
    let mut taken = vec![false; stored.len()];
    for t in &done {
        let best = stored
            .iter()
            .enumerate()
            .filter(|(i, m)| !taken[*i] && same_wake(t, m))
            .min_by_key(|(_, m)| offset_ms(t, m).abs());
        let Some((i, m)) = best else {
            tally.lost += 1;
            tally.detail.push(format!("lost: {t:?}"));
            continue;
        };
        taken[i] = true;
        if Some(m.outcome) != t.outcome {
            tally.wrong_outcome += 1;
            tally
                .detail
                .push(format!("outcome {:?} for {t:?}: {m:?}", m.outcome));
        }
    }
    // An unmatched record next to a matched one of the same true wake is that wake twice.
    let mut by_revision: BTreeMap<&str, Vec<&TruthWake>> = BTreeMap::new();
    for t in &done {
        by_revision
            .entry(t.revision_uid.as_str())
            .or_default()
            .push(t);
    }
    for (i, m) in stored.iter().enumerate().filter(|(i, _)| !taken[*i]) {
        let twin = by_revision
            .get(m.revision_uid.as_str())
            .is_some_and(|ts| ts.iter().any(|t| same_wake(t, m)));
        if twin {
            tally.doubled += 1;
            tally.detail.push(format!("doubled: {m:?}"));
        } else {
            tally.phantom += 1;
            tally.detail.push(format!("phantom #{i}: {m:?}"));
        }
    }
    tally
}
