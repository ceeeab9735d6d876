//! Which wake another release's wake caused: when the service wakes a declared dependency
//! (`scaling-facts.io/depends-on`), the engine notes the request here, and the next wake
//! of that dependency to begin within [`CAUSE_WINDOW`] of it is recorded as caused by the
//! release that declared it.
//!
//! The match is by time, not by identity: nothing in the cluster ties an activator request
//! to the PodAutoscaler transition it triggers. A wake's start is known to the whole
//! second at worst (docs/knative.md: `lastTransitionTime` and `creationTimestamp` are
//! second-truncated), so a start up to one second before the request still matches; a
//! request answered by a release that was already waking is no cause, since that wake
//! began earlier still.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use super::Tracker;
use super::history::Fed;

/// How long after a dependency's wake request its wake may begin and still be the
/// request's doing: the activator forwards a request to the autoscaler at once, so
/// seconds are generous, while a caller's own wake minutes later is not claimed.
pub const CAUSE_WINDOW: TimeDelta = TimeDelta::seconds(5);
/// Second-truncated starts may read up to this much before the request that caused them.
const TRUNCATION: TimeDelta = TimeDelta::seconds(1);

/// Wake requests sent to dependencies and not yet matched to a wake.
#[derive(Debug, Default)]
pub struct Causes {
    /// Dependency release → (the release that declared it, when its request was sent).
    pending: HashMap<String, (String, DateTime<Utc>)>,
}

impl Causes {
    /// Notes that `parent`'s wake sent a wake request to `dependency` at `sent_at`. A
    /// newer request replaces an older one: only the newest can still be waiting.
    pub fn note(&mut self, dependency: &str, parent: &str, sent_at: DateTime<Utc>) {
        self.pending
            .insert(dependency.to_owned(), (parent.to_owned(), sent_at));
    }

    /// The parent whose request began a wake of `release` requested at `requested_at`,
    /// consumed so that one request causes one wake.
    pub fn take(&mut self, release: &str, requested_at: DateTime<Utc>) -> Option<String> {
        let (_, sent_at) = self.pending.get(release)?;
        let offset = requested_at - *sent_at;
        if offset < -TRUNCATION || offset > CAUSE_WINDOW {
            return None;
        }
        self.pending.remove(release).map(|(parent, _)| parent)
    }

    /// Drops requests no wake can match any more, so a dependency that never woke (it was
    /// already up, or the request failed) leaves nothing behind.
    pub fn expire(&mut self, now: DateTime<Utc>) {
        self.pending
            .retain(|_, (_, sent_at)| now - *sent_at <= CAUSE_WINDOW * 12);
    }
}

impl Tracker {
    /// `parent` began waking and the service sent `dependency` a wake request at
    /// `sent_at`: the dependency's wake that follows is recorded as `parent`'s doing.
    pub fn note_dependency_wake(&mut self, dependency: &str, parent: &str, sent_at: DateTime<Utc>) {
        let (d, p) = (dependency.to_owned(), parent.to_owned());
        self.remember(|| Fed::Caused(d, p, sent_at));
        self.causes.note(dependency, parent, sent_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_764_493_200_000 + ms).unwrap()
    }

    #[test]
    fn a_wake_beginning_just_after_the_request_is_its_doing_once() {
        let mut c = Causes::default();
        c.note("b", "a", at(0));
        assert_eq!(c.take("c", at(40)), None, "another release");
        assert_eq!(c.take("b", at(40)).as_deref(), Some("a"));
        assert_eq!(c.take("b", at(60)), None, "one request, one wake");
    }

    #[test]
    fn a_second_truncated_start_before_the_request_still_matches() {
        let mut c = Causes::default();
        c.note("b", "a", at(900));
        assert_eq!(c.take("b", at(0)).as_deref(), Some("a"));
    }

    #[test]
    fn wakes_outside_the_window_are_not_claimed() {
        let mut c = Causes::default();
        c.note("b", "a", at(5_000));
        assert_eq!(
            c.take("b", at(3_000)),
            None,
            "began well before the request"
        );
        assert_eq!(c.take("b", at(10_001)), None, "began long after it");
        assert_eq!(c.take("b", at(10_000)).as_deref(), Some("a"));
    }

    #[test]
    fn unmatched_requests_expire() {
        let mut c = Causes::default();
        c.note("b", "a", at(0));
        c.note("c", "a", at(50_000));
        c.expire(at(61_000));
        assert_eq!(c.pending.len(), 1);
        assert_eq!(c.take("c", at(50_100)).as_deref(), Some("a"));
        assert!(c.pending.is_empty());
    }
}
