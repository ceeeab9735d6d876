//! The one order a revision's held observations are taken in once every watch is back
//! ([`super::hold`]): each stream's own order kept, the streams merged by the times the
//! objects give. Pure: observations and stamps in, indices out.

use crate::measure::machine::KPA_WRITE_SPREAD_MS;
use crate::measure::observe::{CondStatus, Container, Observation, Stamp, Via};

/// What a revision's Deployment and PodAutoscaler last showed before the hold: replicas
/// and desired scale, when known.
pub type Scales = (Option<u32>, Option<i32>);

/// The streams a revision's observations come on.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    // At one time, a pod goes before the PA: a pod turns ready before Knative marks the
    // revision active for it.
    Deployment = 0,
    Pod = 1,
    Autoscaler = 2,
    Revision = 3,
}

/// The tie of a pod's progress in its second: before Knative decides anything on it.
const PROGRESSES: i8 = -5;

/// The tie of a PA's decision in its second: after the pods' progress of that second,
/// before those it makes or removes.
const DECIDES: i8 = -2;

/// A scale going to or from zero.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Turn {
    Rise,
    Fall,
}

/// The order to take one revision's held observations in: indices into `held`, each
/// stream's own order kept.
#[cfg(test)]
pub fn order(held: Vec<(&Observation, Stamp)>, prior: Scales) -> Vec<usize> {
    arrange(held, prior).order
}

/// The held observations arranged: the order to take them in, and for each replayed
/// Deployment change a stamp it happened by, earlier than its arrival.
pub struct Arranged {
    /// Indices into `held`, each stream's own order kept.
    pub order: Vec<usize>,
    /// By index into `held`. A Deployment's replayed scale has no timestamp, and its
    /// arrival, the last of the backlogs maybe, would hold every later one back to it
    /// (the replay's clock never runs back): the PA's turn it is paired with dates it
    /// (within one reconcile's spread after it), and each change happened before the
    /// next of its stream.
    pub by: Vec<Option<Stamp>>,
}

/// Arranges one revision's held observations (see [`Arranged`]).
pub fn arrange(held: Vec<(&Observation, Stamp)>, prior: Scales) -> Arranged {
    // Each stream's items: (index, key in ms, tie), tie placing a Deployment's rise just
    // before the PA's and its fall just after.
    let mut streams: [Vec<(usize, i64, i8)>; 4] = Default::default();
    let (mut replicas, mut desired) = prior;
    let mut pa_turns: Vec<(Turn, i64, usize)> = Vec::new();
    let mut dep_turns: Vec<(bool, Option<Turn>)> = Vec::new();
    let mut last = [i64::MIN; 4];
    for (i, (obs, stamp)) in held.iter().enumerate() {
        let kind = match obs {
            Observation::Deployment { .. } => Kind::Deployment,
            Observation::Autoscaler { .. } => Kind::Autoscaler,
            Observation::Revision(_) => {
                // Its name, creation and settings: before everything it is the revision of.
                streams[Kind::Revision as usize].push((i, i64::MIN, i8::MIN));
                continue;
            }
            _ => Kind::Pod,
        };
        let k = kind as usize;
        // A live event happened at its arrival, a list's state held then; a replay
        // happened at or after its newest timestamp.
        let placed = stamp.via != Via::Resumed;
        let own = if placed {
            Some(stamp.wall.timestamp_millis())
        } else {
            newest_stamp(obs)
        };
        let key = own.unwrap_or(last[k]).max(last[k]);
        let tie = match obs {
            Observation::Deployment { dep, .. } => {
                let turn = turn(replicas.map(|r| r > 0), dep.replicas > 0);
                replicas = Some(dep.replicas);
                // A live or listed one has its own place; a replayed one is paired below.
                dep_turns.push((placed, turn));
                0
            }
            Observation::Autoscaler { pa, .. } => {
                let now = pa.desired.filter(|d| *d >= 0);
                if let Some(now) = now {
                    if let Some(t) = turn(desired.map(|d| d > 0), now > 0) {
                        pa_turns.push((t, key, i));
                    }
                    desired = Some(now);
                }
                // In one second, the pods follow Knative's decision to scale (made when
                // it queues, rests or gives up), and its `Active=True` follows them.
                let active = pa
                    .active
                    .as_ref()
                    .is_some_and(|c| c.status == CondStatus::True);
                if active { 0 } else { DECIDES }
            }
            Observation::Pod { pod, .. } => {
                // A pod is made, or asked to go unready, after the decision of its
                // second; it progresses (scheduled, running, ready) before the next, and
                // one that served keeps its serving before the fall that removes it.
                let stamp_of = |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis() == key;
                let served = pod.running
                    || pod
                        .ready
                        .as_ref()
                        .is_some_and(|c| c.status == CondStatus::True);
                let follows =
                    stamp_of(pod.created) || !served && pod.deleting.is_some_and(stamp_of);
                if follows { 0 } else { PROGRESSES }
            }
            _ => 0,
        };
        last[k] = key;
        streams[k].push((i, key, tie));
    }
    let paired = place_deployment(
        &mut streams[Kind::Deployment as usize],
        &dep_turns,
        &pa_turns,
    );
    let by = dated_by(&held, &streams[Kind::Deployment as usize], &paired);
    Arranged {
        order: merge(streams),
        by,
    }
}

/// Each replayed Deployment change's stamp to happen by (see [`Arranged::by`]), from
/// the last of its stream back: its paired PA turn's (a rise is placed just before it, a
/// fall may follow it by one reconcile's spread), or the next change's.
fn dated_by(
    held: &[(&Observation, Stamp)],
    stream: &[(usize, i64, i8)],
    paired: &[Option<(Turn, usize)>],
) -> Vec<Option<Stamp>> {
    let spread = std::time::Duration::from_millis(KPA_WRITE_SPREAD_MS as u64);
    let mut by: Vec<Option<Stamp>> = vec![None; held.len()];
    let mut next: Option<Stamp> = None;
    for ((i, _, _), pair) in stream.iter().zip(paired).rev() {
        let own = held[*i].1;
        let turn = pair.map(|(turn, pa)| {
            let s = held[pa].1;
            match turn {
                Turn::Rise => s,
                Turn::Fall => Stamp {
                    mono: s.mono + spread,
                    wall: s.wall + chrono::Duration::milliseconds(KPA_WRITE_SPREAD_MS),
                    ..s
                },
            }
        });
        let bound = [next, turn]
            .into_iter()
            .flatten()
            .filter(|b| b.mono < own.mono)
            .min_by_key(|b| b.mono);
        if own.via == Via::Resumed {
            by[*i] = bound.map(|b| Stamp { via: own.via, ..b });
        }
        next = Some(by[*i].unwrap_or(own));
    }
    by
}

/// A scale going from `before` (wanting pods or not; unknown: no turn) to `now`.
fn turn(before: Option<bool>, now: bool) -> Option<Turn> {
    match (before?, now) {
        (false, true) => Some(Turn::Rise),
        (true, false) => Some(Turn::Fall),
        _ => None,
    }
}

/// Places each replayed Deployment rise and fall with the PA's turn of the same rank, and
/// what comes between with the turn before it; from a turn the PA has no match for on,
/// everything goes last. A live or listed one keeps its arrival, and takes its rank's PA turn.
/// Returns, for each replayed one placed with a PA turn, that turn and its index.
fn place_deployment(
    stream: &mut [(usize, i64, i8)],
    items: &[(bool, Option<Turn>)],
    pa: &[(Turn, i64, usize)],
) -> Vec<Option<(Turn, usize)>> {
    let mut rises = pa.iter().filter(|t| t.0 == Turn::Rise);
    let mut falls = pa.iter().filter(|t| t.0 == Turn::Fall);
    let (mut key, mut tie) = (i64::MIN, 0i8);
    let mut pairs = Vec::with_capacity(stream.len());
    for (item, (placed, turn)) in stream.iter_mut().zip(items) {
        let paired = match turn {
            Some(Turn::Rise) => Some(rises.next().map(|p| (p, DECIDES - 1))),
            Some(Turn::Fall) => Some(falls.next().map(|p| (p, DECIDES + 1))),
            None => None,
        };
        let mut pair = None;
        if key == i64::MAX {
            // Unmatched before: last, in order.
        } else if *placed {
            (key, tie) = (item.1.max(key), 0);
        } else {
            match paired {
                Some(Some((p, t))) => {
                    // Held back past it by an earlier change: not its turn's time.
                    if p.1 >= key {
                        pair = Some((p.0, p.2));
                    }
                    (key, tie) = (p.1.max(key), t);
                }
                Some(None) => (key, tie) = (i64::MAX, 0),
                None => {}
            }
        }
        item.1 = key;
        item.2 = tie;
        pairs.push(pair);
    }
    pairs
}

/// Merges the streams by (key, tie, stream), each in its own order.
fn merge(streams: [Vec<(usize, i64, i8)>; 4]) -> Vec<usize> {
    let mut heads = [0usize; 4];
    let mut out = Vec::with_capacity(streams.iter().map(Vec::len).sum());
    loop {
        let next = (0..4)
            .filter(|s| heads[*s] < streams[*s].len())
            .min_by_key(|s| {
                let (_, key, tie) = streams[*s][heads[*s]];
                (key, tie, *s)
            });
        let Some(s) = next else { break };
        out.push(streams[s][heads[s]].0);
        heads[s] += 1;
    }
    out
}

/// The newest timestamp an object's state carries, in ms: it was written at or after it.
fn newest_stamp(obs: &Observation) -> Option<i64> {
    let stamps: Vec<Option<chrono::DateTime<chrono::Utc>>> = match obs {
        Observation::Autoscaler { pa, .. } => vec![
            pa.active.as_ref().and_then(|c| c.since),
            pa.initialized_since,
        ],
        Observation::Pod { pod, .. } => vec![
            Some(pod.created),
            pod.deleting,
            pod.scheduled.as_ref().and_then(|c| c.since),
            pod.ready.as_ref().and_then(|c| c.since),
            match pod.container {
                Container::Running { started_at } => started_at,
                _ => None,
            },
        ],
        _ => return None,
    };
    stamps
        .into_iter()
        .flatten()
        .map(|t| t.timestamp_millis())
        .max()
}

#[cfg(test)]
mod tests;
