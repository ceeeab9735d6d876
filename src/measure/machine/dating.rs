//! Dating a change: the one place that decides whether an observation's arrival is the
//! time of the change it shows, or whether only the object's whole-second timestamps can
//! date it.
//!
//! An arrival dates a change when the event was streamed as it happened ([`Via::Watched`])
//! and is not far behind the object's own timestamp. Everything else (a list, the burst
//! after a reconnect, a late event) is dated by the object's timestamp, which has whole
//! seconds only, so the result is a bound: a start is dated to the start of its second
//! (never later than the truth), an end to the end of its second, capped at the arrival
//! (never earlier than the truth). A duration between such bounds is an upper bound, which
//! is the safe side for callers that size timeouts from it.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::measure::observe::{Stamp, Via};

/// A point in time on both clocks; `exact` when it is an arrival that dates the change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct At {
    pub mono: Instant,
    pub wall: DateTime<Utc>,
    pub exact: bool,
    /// Only an upper bound: the arrival of a replay or a list, whose object has no
    /// timestamp for the change (a Deployment's scale). The change came at or before it,
    /// how much before is not known.
    pub undated: bool,
}

/// Which side of a whole-second timestamp is the safe one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A start: the beginning of its second.
    Start,
    /// An end: the end of its second, or the arrival if that is earlier.
    End,
}

impl At {
    /// The arrival itself, exact only when streamed.
    pub fn arrival(stamp: Stamp) -> Self {
        Self {
            mono: stamp.mono,
            wall: stamp.wall,
            exact: stamp.via == Via::Watched,
            undated: stamp.via != Via::Watched,
        }
    }

    /// The time of a change seen in `stamp` whose object says it happened at
    /// `object_time` (whole seconds), or has no timestamp for it.
    pub fn date(
        stamp: Stamp,
        object_time: Option<DateTime<Utc>>,
        side: Side,
        late: Duration,
    ) -> Self {
        let behind = |ot: DateTime<Utc>| (stamp.wall - ot).to_std().unwrap_or_default();
        // A timestamp is truncated to its second, so an on-time event can be up to a
        // second "behind" it.
        let on_time = object_time.is_none_or(|ot| behind(ot) <= late + Duration::from_secs(1));
        match object_time {
            _ if stamp.via == Via::Watched && on_time => Self::arrival(stamp),
            Some(ot) => Self::by_stamp(stamp, ot, side),
            None => Self {
                exact: false,
                undated: true,
                ..Self::arrival(stamp)
            },
        }
    }

    /// The safe side of the whole second `object_time`, seen in `stamp`, whatever the
    /// arrival: for a change the arrival never dates.
    pub fn by_stamp(stamp: Stamp, object_time: DateTime<Utc>, side: Side) -> Self {
        let wall = match side {
            Side::Start => object_time,
            Side::End => (object_time + chrono::Duration::seconds(1)).min(stamp.wall),
        };
        Self::back_from(stamp, wall)
    }

    /// `wall`, with the monotonic time it corresponds to as seen from `stamp`.
    pub fn back_from(stamp: Stamp, wall: DateTime<Utc>) -> Self {
        let back = (stamp.wall - wall).to_std().unwrap_or_default();
        Self {
            mono: stamp.mono.checked_sub(back).unwrap_or(stamp.mono),
            wall,
            exact: false,
            undated: false,
        }
    }

    /// `wall` on this time's clocks: an object timestamp, so not exact.
    pub fn shifted(&self, wall: DateTime<Utc>) -> Self {
        let mono = if wall <= self.wall {
            self.mono
                .checked_sub((self.wall - wall).to_std().unwrap_or_default())
        } else {
            self.mono
                .checked_add((wall - self.wall).to_std().unwrap_or_default())
        };
        Self {
            mono: mono.unwrap_or(self.mono),
            wall,
            exact: false,
            undated: false,
        }
    }

    /// The earlier of two times.
    pub fn earliest(self, other: At) -> At {
        if other.wall < self.wall { other } else { self }
    }

    /// Milliseconds from `earlier` to this, on the clock both share: the monotonic one
    /// when both are arrivals, else the wall clock the object timestamps are on.
    pub fn ms_since(&self, earlier: &At) -> u64 {
        if self.exact && earlier.exact {
            self.mono
                .saturating_duration_since(earlier.mono)
                .as_millis() as u64
        } else {
            (self.wall - earlier.wall).num_milliseconds().max(0) as u64
        }
    }

    /// The whole second this falls in.
    pub fn second(&self) -> i64 {
        self.wall.timestamp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn stamp(via: Via, ms: i64) -> Stamp {
        Stamp {
            mono: Instant::now() + Duration::from_secs(10),
            wall: Utc.timestamp_opt(1_800_000_000, 0).unwrap() + chrono::Duration::milliseconds(ms),
            via,
        }
    }

    #[test]
    fn a_streamed_event_is_dated_by_its_arrival() {
        let s = stamp(Via::Watched, 1_400);
        let ot = Utc.timestamp_opt(1_800_000_001, 0).unwrap();
        let at = At::date(s, Some(ot), Side::Start, Duration::from_secs(2));
        assert!(at.exact);
        assert_eq!(at.wall, s.wall);
    }

    #[test]
    fn a_listed_end_is_the_end_of_its_second_but_never_after_the_arrival() {
        let ot = Utc.timestamp_opt(1_800_000_001, 0).unwrap();
        let end = At::date(
            stamp(Via::Listed, 5_000),
            Some(ot),
            Side::End,
            Duration::ZERO,
        );
        assert_eq!(end.wall, ot + chrono::Duration::seconds(1));
        assert!(!end.exact);
        let soon = At::date(
            stamp(Via::Resumed, 1_300),
            Some(ot),
            Side::End,
            Duration::ZERO,
        );
        assert_eq!(soon.wall, stamp(Via::Resumed, 1_300).wall);
        let start = At::date(
            stamp(Via::Listed, 5_000),
            Some(ot),
            Side::Start,
            Duration::ZERO,
        );
        assert_eq!(start.wall, ot);
    }

    #[test]
    fn a_late_streamed_event_is_dated_by_its_object() {
        let ot = Utc.timestamp_opt(1_800_000_001, 0).unwrap();
        let at = At::date(
            stamp(Via::Watched, 9_000),
            Some(ot),
            Side::Start,
            Duration::from_secs(2),
        );
        assert!(!at.exact);
        assert_eq!(at.wall, ot);
    }
}
