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
    leads: Leads,
}

/// The first revision (in traffic order) in each kind of phase: one of them leads the
/// runtime state.
#[derive(Default)]
struct Leads {
    failed: Option<Summary>,
    waking: Option<Summary>,
    idle: Option<Summary>,
    serving: Option<Summary>,
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

impl Across {
    pub fn first(k: Knobs, s: Summary, expected_ms: Option<u64>) -> Self {
        let mut a = Self {
            min_instances: k.min_instances,
            idle: k.idle_timeout_seconds(),
            upper: k.idle_timeout_upper_bound_seconds(),
            expected_ms,
            serving_since: s.serving_since,
            parts: parts(&k),
            desired: s.desired,
            actual: s.actual,
            all_serving: s.phase == Phase::Serving,
            leads: Leads::default(),
        };
        a.note(s);
        a
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
        let l = &mut self.leads;
        let slot = match s.phase {
            Phase::Failed => &mut l.failed,
            Phase::Provisioning | Phase::PullingImage | Phase::Starting => &mut l.waking,
            Phase::Idle => &mut l.idle,
            Phase::Serving => &mut l.serving,
        };
        slot.get_or_insert(s);
    }

    /// The runtime state and the revision whose phase, wake and failure it shows: every
    /// revision serving is ready; else a failure, else a wake, else idle (one revision at
    /// least is, as none leads otherwise).
    pub fn lead(self) -> (RuntimeState, Summary) {
        let Leads {
            failed,
            waking,
            idle,
            serving,
        } = self.leads;
        match (self.all_serving, failed, waking, idle) {
            (true, ..) => (RuntimeState::Ready, serving.expect("all serving")),
            (_, Some(s), ..) => (RuntimeState::Unavailable, s),
            (_, _, Some(s), _) => (RuntimeState::Waking, s),
            (_, _, _, idle) => (RuntimeState::Idle, idle.expect("the only phase left")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(min_instances: u32, stable: u64, delay: u64, retention: u64) -> Knobs {
        Knobs {
            min_instances,
            stable_window_seconds: stable,
            scale_down_delay_seconds: delay,
            retention_seconds: retention,
            grace_period_seconds: 30,
            progress_deadline_seconds: 600,
            initial_replicas: 1,
        }
    }

    fn summary(phase: Phase, desired: u32) -> Summary {
        Summary {
            phase,
            desired,
            actual: desired,
            serving_since: None,
            wake: None,
            failure: None,
        }
    }

    /// The facts of revisions given in traffic order: the state and the lead's phase.
    fn lead(phases: &[Phase]) -> (RuntimeState, Phase, u32) {
        let mut acc: Option<Across> = None;
        for (i, p) in phases.iter().enumerate() {
            let (k, s) = (knobs(0, 60, 0, 0), summary(*p, i as u32 + 1));
            match acc.as_mut() {
                None => acc = Some(Across::first(k, s, None)),
                Some(a) => a.add(k, s, None),
            }
        }
        let a = acc.expect("at least one revision");
        let desired = a.desired;
        let (state, s) = a.lead();
        (state, s.phase, desired)
    }

    #[test]
    fn the_runtime_state_is_led_by_a_failure_then_a_wake_then_idleness() {
        use Phase::*;
        assert_eq!(lead(&[Serving, Serving]).0, RuntimeState::Ready);
        assert_eq!(lead(&[Serving, Idle]), (RuntimeState::Idle, Idle, 3));
        assert_eq!(
            lead(&[Serving, Starting, Failed]).0,
            RuntimeState::Unavailable
        );
        assert_eq!(
            lead(&[Idle, PullingImage, Provisioning]),
            (RuntimeState::Waking, PullingImage, 6)
        );
        assert_eq!(
            lead(&[Starting, Idle]).1,
            Starting,
            "the first of each kind"
        );
        assert_eq!(lead(&[Failed, Failed]).0, RuntimeState::Unavailable);
        assert_eq!(lead(&[Idle]), (RuntimeState::Idle, Idle, 1));
        // Serving beside nothing that leads: idle, shown by the first revision.
        assert_eq!(lead(&[Serving, Serving, Idle]).1, Idle);
    }

    #[test]
    fn the_conservative_value_wins_across_revisions() {
        let mut a = Across::first(knobs(2, 60, 0, 30), summary(Phase::Idle, 0), Some(900));
        a.add(knobs(1, 30, 30, 0), summary(Phase::Idle, 0), None);
        a.add(knobs(3, 10, 10, 0), summary(Phase::Idle, 0), Some(1_500));
        assert_eq!(a.min_instances, 1);
        assert_eq!(a.idle, 20, "the shortest idle window");
        assert_eq!(a.expected_ms, Some(1_500), "the slowest start");
        assert_eq!(
            (
                a.parts.stable_window_seconds,
                a.parts.scale_down_delay_seconds
            ),
            (30, 30),
            "the longest window's parts, the last of equals"
        );
    }
}
