//! A release's facts across its active revisions, gathered in one pass: the facts are
//! derived after nearly every event, so this keeps no list of the revisions it saw.

use scaling_facts_api::{Phase, RuntimeState};

use crate::measure::facts::IdleWindowParts;
use crate::measure::knobs::Knobs;
use crate::measure::machine::Summary;

/// What the active revisions add up to. Where they disagree, the conservative value wins:
/// a wrong "warm" costs a held request.
pub(super) struct Across {
    pub min_instances: u32,
    pub idle: u64,
    pub upper: u64,
    pub expected_ms: Option<u64>,
    pub serving_since: Option<chrono::DateTime<chrono::Utc>>,
    /// The parts of the longest window (the last of equals).
    pub parts: IdleWindowParts,
    pub desired: u32,
    pub actual: u32,
    all_serving: bool,
    first: Summary,
    /// The first of the other revisions in each phase that can lead the runtime state.
    failed: Option<Summary>,
    waking: Option<Summary>,
    idle_one: Option<Summary>,
}

fn parts(k: &Knobs) -> IdleWindowParts {
    IdleWindowParts {
        stable_window_seconds: k.stable_window_seconds as u32,
        scale_down_delay_seconds: k.scale_down_delay_seconds as u32,
    }
}

fn window(p: &IdleWindowParts) -> u32 {
    p.stable_window_seconds + p.scale_down_delay_seconds
}

fn is_waking(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Provisioning | Phase::PullingImage | Phase::Starting
    )
}

impl Across {
    pub fn first(k: Knobs, s: Summary, expected_ms: Option<u64>) -> Self {
        Self {
            min_instances: k.min_instances,
            idle: k.idle_timeout_seconds(),
            upper: k.idle_timeout_upper_bound_seconds(),
            expected_ms,
            serving_since: s.serving_since,
            parts: parts(&k),
            desired: s.desired,
            actual: s.actual,
            all_serving: s.phase == Phase::Serving,
            first: s,
            failed: None,
            waking: None,
            idle_one: None,
        }
    }

    pub fn add(&mut self, k: Knobs, s: Summary, expected_ms: Option<u64>) {
        self.min_instances = self.min_instances.min(k.min_instances);
        self.idle = self.idle.min(k.idle_timeout_seconds());
        self.upper = self.upper.min(k.idle_timeout_upper_bound_seconds());
        self.expected_ms = self.expected_ms.max(expected_ms);
        self.serving_since = match (self.serving_since, s.serving_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let p = parts(&k);
        if window(&p) >= window(&self.parts) {
            self.parts = p;
        }
        self.desired += s.desired;
        self.actual += s.actual;
        self.all_serving &= s.phase == Phase::Serving;
        self.note(s);
    }

    fn note(&mut self, s: Summary) {
        let slot = match s.phase {
            Phase::Failed => &mut self.failed,
            p if is_waking(p) => &mut self.waking,
            Phase::Idle => &mut self.idle_one,
            _ => return,
        };
        if slot.is_none() {
            *slot = Some(s);
        }
    }

    /// The runtime state and the revision whose phase, wake and failure it shows: every
    /// revision serving is ready; else a failure, else a wake, else idle.
    pub fn lead(self) -> (RuntimeState, Summary) {
        let first = self.first.phase;
        if self.all_serving {
            (RuntimeState::Ready, self.first)
        } else if first == Phase::Failed {
            (RuntimeState::Unavailable, self.first)
        } else if let Some(s) = self.failed {
            (RuntimeState::Unavailable, s)
        } else if is_waking(first) {
            (RuntimeState::Waking, self.first)
        } else if let Some(s) = self.waking {
            (RuntimeState::Waking, s)
        } else if first == Phase::Idle {
            (RuntimeState::Idle, self.first)
        } else {
            (RuntimeState::Idle, self.idle_one.unwrap_or(self.first))
        }
    }
}
