//! The store's history merged into a tracker that may already be measuring.
//!
//! The service starts without its store: the watchers and the book come first, and the
//! wakes recorded before (with the wakes then underway) arrive whenever the store answers.
//! The tracker keeps what it was fed until then; when the history arrives, a new tracker
//! gets the history first and then the same feed, with the same stamps, and so measures
//! exactly what it would have measured had the store answered at once. What the first
//! tracker already recorded is reconciled with that: records it lacks are written, its
//! records the new tracker does not make are retracted, and each revision's wake underway
//! is set to the new tracker's.
//!
//! Only when the feed outgrew [`MAX_REPLAY`] (a store down for long in a large cluster)
//! is the history merged into the running tracker instead, a best effort: a wake
//! this process recorded and the store also holds counts once (same revision UID and start
//! second, or a record found from whole-second timestamps and one stored to the millisecond
//! a second or two apart), statistics are rebuilt from the merged wakes, and a wake the
//! last process had underway is continued only if this process has not measured one of its
//! own since. A duplicate that reached the store is retracted from it.

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};

use super::{Output, Tracker, rev_entry};
use crate::measure::observe::{Observation, Stamp};
use crate::measure::wake::{OpenChange, OpenWake, Rest};
use scaling_facts_api::{Precision, WakeRecord};

/// Two records of one revision are one wake when one of them is known only to the second
/// and they agree on kind and outcome, on the start (a wake found from timestamps is dated
/// by the second it, or its first pod, began in: the next second at most) and on the end
/// (a second-precision end is the timestamp's second, an upper bound). Two real wakes of a
/// revision cannot agree on both: the second begins only after the first has ended and
/// its pods have gone.
const SAME_START_SECONDS: i64 = 1;
const SAME_END_MS: i64 = 1_500;

/// When a wake ended: serving, else its request plus its duration.
pub fn end_ms(w: &WakeRecord) -> i64 {
    w.serving_at.map_or_else(
        || w.requested_at.timestamp_millis() + w.duration_ms as i64,
        |t| t.timestamp_millis(),
    )
}

fn same_wake(a: &WakeRecord, b: &WakeRecord) -> bool {
    a.kind == b.kind
        && a.outcome == b.outcome
        && (a.precision == Precision::S || b.precision == Precision::S)
        && (a.start_second - b.start_second).abs() <= SAME_START_SECONDS
        && (end_ms(a) - end_ms(b)).abs() <= SAME_END_MS
}

/// One revision's wakes, each once: exact keys first (the stored copy kept), then
/// neighbours (the millisecond record kept, else the stored one, else the earlier).
/// Returns the kept wakes and the keys of the dropped ones that reached the store.
fn collapse(stored: Vec<&WakeRecord>, live: Vec<WakeRecord>) -> (Vec<WakeRecord>, Vec<i64>) {
    let mut keys: HashSet<i64> = HashSet::new();
    let mut all: Vec<(WakeRecord, bool)> = stored
        .into_iter()
        .filter(|w| keys.insert(w.start_second))
        .map(|w| (w.clone(), true))
        .collect();
    for w in live {
        if keys.insert(w.start_second) {
            all.push((w, false));
        }
    }
    all.sort_by_key(|(w, _)| w.requested_at);
    let mut kept: Vec<(WakeRecord, bool)> = Vec::with_capacity(all.len());
    let mut dropped = Vec::new();
    for (w, from_store) in all {
        if let Some((last, last_stored)) = kept.last_mut()
            && same_wake(last, &w)
        {
            let rank = |w: &WakeRecord, stored: bool| (w.precision == Precision::Ms, stored);
            if rank(&w, from_store) > rank(last, *last_stored) {
                dropped.push(last.start_second);
                *last = w;
                *last_stored = from_store;
            } else {
                dropped.push(w.start_second);
            }
            continue;
        }
        kept.push((w, from_store));
    }
    (kept.into_iter().map(|(w, _)| w).collect(), dropped)
}

/// What the store (and the spool) held when this process started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stored<'a> {
    pub wakes: &'a [WakeRecord],
    pub open: &'a [OpenWake],
    pub rests: &'a [Rest],
    /// Since when the service has watched: its first process's first sync.
    pub watching_since: Option<DateTime<Utc>>,
}

/// The most inputs kept for a replay: about 100,000 revisions' initial lists several
/// times over.
pub const MAX_REPLAY: usize = 2_000_000;

/// One input of the tracker, kept to feed again.
#[derive(Debug, Clone)]
pub enum Fed {
    Apply(Box<Observation>, Stamp),
    Tick(Stamp),
    Synced(Stamp),
    ListBegins(&'static str),
    ListEnds(&'static str, Stamp),
    Down(&'static str, Stamp),
    Back(&'static str, Stamp),
    /// A declared dependency's wake request: (dependency, parent, sent at).
    Caused(String, String, chrono::DateTime<chrono::Utc>),
}

impl Tracker {
    /// Keeps an input for the replay, until the history merged.
    pub(super) fn remember(&mut self, fed: impl FnOnce() -> Fed) {
        if self.history_merged {
            return;
        }
        if let Some(buf) = self.replay.as_mut() {
            if buf.len() >= MAX_REPLAY {
                tracing::warn!(
                    inputs = buf.len(),
                    "the history is late and the replay is full: it will be merged as it comes"
                );
                self.replay = None;
            } else {
                buf.push(fed());
            }
        }
    }

    /// Merges the recorded wakes and the wakes underway that the store (and the spool)
    /// hold. Call once; a later call merges again, each wake once.
    pub fn merge_history(&mut self, stored: Stored<'_>, stamp: Stamp) -> Output {
        match self.replay.take() {
            Some(fed) if !fed.is_empty() => self.rebuild(fed, stored, stamp),
            _ => self.merge_into(stored, stamp),
        }
    }

    /// A new tracker with the history, fed what this one was fed, then reconciled.
    fn rebuild(&mut self, fed: Vec<Fed>, stored: Stored<'_>, stamp: Stamp) -> Output {
        let Stored { wakes, open, .. } = stored;
        let mut fresh = Tracker::new(self.settings);
        fresh.replay = None;
        let mut got = fresh.merge_into(stored, stamp);
        for f in fed {
            let out = match f {
                Fed::Apply(obs, s) => fresh.apply(*obs, s),
                Fed::Tick(s) => fresh.tick(s),
                Fed::Synced(s) => fresh.mark_synced(s),
                Fed::ListBegins(kind) => {
                    fresh.list_begins(kind);
                    Output::default()
                }
                Fed::ListEnds(kind, s) => fresh.list_ends(kind, s),
                Fed::Down(kind, s) => {
                    fresh.watch_down(kind, s);
                    Output::default()
                }
                Fed::Back(kind, s) => fresh.watch_back(kind, s),
                Fed::Caused(dependency, parent, at) => {
                    fresh.note_dependency_wake(&dependency, &parent, at);
                    Output::default()
                }
            };
            got.extend(out);
        }
        let key = |w: &WakeRecord| (w.revision_uid.clone(), w.start_second);
        let mine: HashMap<(String, i64), &WakeRecord> =
            self.live.iter().map(|w| (key(w), w)).collect();
        let theirs: HashMap<(String, i64), &WakeRecord> =
            got.wakes.iter().map(|r| (key(&r.wake), &r.wake)).collect();
        // A record under a key the store already held was never stored (the store keeps
        // the first record of a key), so it has nothing to retract.
        let held: HashSet<(String, i64)> = wakes.iter().map(key).collect();
        let mut retracted = got.retracted;
        for (k, w) in &mine {
            let same = theirs.get(k).is_some_and(|t| *t == *w);
            if !same && !held.contains(k) {
                tracing::info!(revision_uid = %k.0, start_second = k.1, "with the history, a wake recorded before it is retracted");
                retracted.push(k.clone());
            }
        }
        // A retracted key loses what the store holds under it, this process's record
        // too (the replay retracts what it recorded before a backlog re-dated it): the
        // record the replay kept under that key is written again, even if the same.
        let gone: HashSet<&(String, i64)> = retracted.iter().collect();
        let wakes = (got.wakes.into_iter())
            .filter(|r| {
                let k = key(&r.wake);
                gone.contains(&k) || mine.get(&k).is_none_or(|m| **m != r.wake)
            })
            .collect();
        let mut out = Output {
            wakes,
            open: got.open,
            retracted,
            rests: got.rests,
            watching_since: got.watching_since,
        };
        // Each revision's wake underway is the new tracker's: every row this process or
        // the history holds is rewritten or closed.
        let mut uids: BTreeSet<String> = self
            .revisions
            .iter()
            .filter(|(_, r)| !r.stored_open.is_empty())
            .map(|(u, _)| u.to_string())
            .collect();
        uids.extend(open.iter().map(|o| o.revision_uid.clone()));
        uids.extend(
            fresh
                .revisions
                .iter()
                .filter(|(_, r)| !r.stored_open.is_empty() || r.machine.has_open())
                .map(|(u, _)| u.to_string()),
        );
        for uid in uids {
            let open_now = (fresh.revisions.get(uid.as_str()))
                .map(|r| r.machine.open_wakes())
                .unwrap_or_default();
            // Before the lists are all in, a stored wake underway waits to be continued at
            // the sync: its row stays as stored. Closing it here would leave nothing to
            // continue it from if this process dies before the wake ends.
            let pending = fresh.restored_open.iter().any(|o| o.revision_uid == uid);
            if open_now.is_empty() && pending {
                continue;
            }
            out.open.push(OpenChange::of(&uid, &open_now));
            if let Some(rev) = fresh.revisions.get_mut(uid.as_str()) {
                rev.stored_open = open_now;
            }
        }
        *self = fresh;
        out
    }

    /// The history merged into this tracker as it is.
    fn merge_into(&mut self, stored_history: Stored<'_>, stamp: Stamp) -> Output {
        let Stored {
            wakes,
            open,
            rests,
            watching_since,
        } = stored_history;
        let mut out = Output::default();
        // The earliest wins: this process may have synced (and said so) before the store
        // answered with an earlier process's.
        if let Some(since) = watching_since {
            self.watching_since = Some(self.watching_since.map_or(since, |w| w.min(since)));
        }
        let mut stored: HashMap<&str, Vec<&WakeRecord>> = HashMap::new();
        for w in wakes {
            stored.entry(&w.revision_uid).or_default().push(w);
        }
        let mut live: HashMap<String, Vec<WakeRecord>> = HashMap::new();
        for w in std::mem::take(&mut self.live) {
            live.entry(w.revision_uid.clone()).or_default().push(w);
        }
        let mut uids: Vec<String> = stored.keys().map(|u| (*u).to_owned()).collect();
        uids.extend(
            live.keys()
                .filter(|u| !stored.contains_key(u.as_str()))
                .cloned(),
        );
        let mut measured: HashMap<String, i64> = HashMap::new();
        for uid in uids {
            let mine = live.remove(&uid).unwrap_or_default();
            if let Some(newest) = mine.iter().map(|w| w.start_second).max() {
                measured.insert(uid.clone(), newest);
            }
            let (kept, dropped) = collapse(stored.remove(uid.as_str()).unwrap_or_default(), mine);
            for start_second in dropped {
                tracing::info!(revision_uid = %uid, start_second, "a second record of one wake is retracted");
                out.retracted.push((uid.clone(), start_second));
            }
            let rev = rev_entry(&mut self.revisions, &uid);
            if rev.name.is_empty()
                && let Some(w) = kept.first()
            {
                rev.name = w.revision.as_str().into();
            }
            // Rebuilt from every wake of the revision, so what this process recorded
            // before and the history land in order, once.
            rev.stats.insert(Box::default()).record_all(
                kept.iter(),
                &self.settings.window,
                stamp.wall,
            );
            for w in &kept {
                let end = w
                    .serving_at
                    .unwrap_or(w.requested_at + Duration::milliseconds(w.duration_ms as i64));
                let bounded = w.precision == Precision::S;
                rev.machine
                    .restore(w.kind, w.start_second, w.outcome, end, bounded);
            }
            if let Some(key) = rev.service.clone() {
                self.dirty.insert(key.clone());
                self.dirty_reports.insert(key);
            }
        }
        self.restore_rests(rests, wakes, open, stamp);
        if self.synced {
            self.continue_late(open, &measured, stamp, &mut out);
        } else {
            self.restored_open = open.to_vec();
        }
        self.history_merged = true;
        out
    }

    /// Each revision's last rest, where it is the newest thing the store knows of the
    /// revision: a wake underway, or one recorded after the last the rest followed, is
    /// newer.
    fn restore_rests(
        &mut self,
        rests: &[Rest],
        wakes: &[WakeRecord],
        open: &[OpenWake],
        stamp: Stamp,
    ) {
        // Each revision's recorded start seconds, once: a rest counts those after it.
        let mut starts: HashMap<&str, Vec<i64>> = HashMap::new();
        for w in wakes {
            starts
                .entry(&w.revision_uid)
                .or_default()
                .push(w.start_second);
        }
        let underway: HashSet<&str> = open.iter().map(|o| o.revision_uid.as_str()).collect();
        let t = self.settings.thresholds;
        for r in rests {
            if underway.contains(r.revision_uid.as_str()) {
                continue;
            }
            let after = (starts.get(r.revision_uid.as_str()).into_iter().flatten())
                .filter(|s| r.at.after_start.is_none_or(|a| **s > a))
                .count() as i64;
            if after > 0 {
                rev_entry(&mut self.revisions, &r.revision_uid)
                    .machine
                    .restore_rest_behind(r.at, after);
                continue;
            }
            rev_entry(&mut self.revisions, &r.revision_uid)
                .machine
                .restore_rest(r.at, stamp, &t);
        }
    }

    pub fn history_merged(&self) -> bool {
        self.history_merged
    }

    /// Wakes underway that arrive after the lists synced. The machine has judged every
    /// revision from the lists by now; a stored wake underway continues only where the
    /// machine found none of its own, else its row is closed (the machine's own wake, if
    /// any, replaced it already).
    fn continue_late(
        &mut self,
        open: &[OpenWake],
        measured: &HashMap<String, i64>,
        stamp: Stamp,
        out: &mut Output,
    ) {
        for rows in open.chunk_by(|a, b| a.revision_uid == b.revision_uid) {
            let uid = rows[0].revision_uid.as_str();
            let Some(rev) = self.revisions.get(uid) else {
                out.open.push(OpenChange::of(uid, &[]));
                continue;
            };
            if rev.machine.has_open() {
                continue;
            }
            // A wake this process measured from its start second on is that one, or
            // ended before it.
            let left: Vec<OpenWake> = (rows.iter())
                .filter(|o| {
                    (measured.get(uid)).is_none_or(|s| *s < o.start_second - SAME_START_SECONDS)
                })
                .cloned()
                .collect();
            if left.is_empty() {
                if let Some(rev) = self.revisions.get_mut(uid) {
                    rev.stored_open.clear();
                }
                out.open.push(OpenChange::of(uid, &[]));
                continue;
            }
            self.continue_open(&left, stamp);
            self.evaluate(uid, stamp, out);
        }
    }
}
