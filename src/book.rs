//! The in-memory book of every release's facts: what the API reads.
//!
//! Whoever learns something new (the engine, or a test standing in for it) calls
//! [`FactsBook::upsert`] or [`FactsBook::set_cold_starts`]; the book does the expensive work
//! there, once per change: the `scaling` object is serialized to bytes, so the gateway's hot
//! read is a map lookup and a reference-count increment. It sits between `measure` (which
//! derives the facts, without locks) and `serve` (which reads them).
//!
//! Every change is also broadcast for the event streams: on one channel for the fleet's
//! stream, and on a channel of its own to the subscribers of that release, so that a
//! release's subscribers wake for its changes only, however busy the fleet. A change is
//! serialized for the streams once, by the first subscriber that sends it, and shared by
//! the rest. A slow subscriber that falls behind a channel's capacity is told how many
//! changes it missed and can re-read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tokio::sync::broadcast;

use crate::measure::facts::{ReleaseFacts, WatchView};
use scaling_facts_api::{ColdStarts, ConfigDrift, RefusedClaim};

const CHANGE_CHANNEL_CAPACITY: usize = 1_024;
/// A release's own channel: its changes come seconds apart, and a subscriber that falls
/// behind is sent the current state instead.
const RELEASE_CHANNEL_CAPACITY: usize = 16;

type Releases = HashMap<String, Slot, foldhash::fast::RandomState>;

/// A release's place in the map. The hot read's bytes sit in the map's own slot, beside
/// the entry rather than in it: with 20,000 releases the entries no longer fit the CPU's
/// caches, and reaching the bytes through the entry cost a cache miss per read.
#[derive(Debug)]
struct Slot {
    /// The `scaling` object, serialized when the facts changed.
    scaling_json: Bytes,
    entry: Arc<Entry>,
}

/// One release in the book, with what was precomputed for reads.
#[derive(Debug)]
pub struct Entry {
    pub facts: ReleaseFacts,
    /// The cold-start report, serialized when it changed: kept as the bytes it is read
    /// as, which for a fleet of never-woken revisions is a fifth of the struct's size.
    pub cold_starts_json: Bytes,
}

/// Serialized for keeping: the buffer is shrunk to its length, since a `Vec` that grew by
/// doubling holds up to twice that, and the book keeps two of these per release.
fn kept_json<T: serde::Serialize>(value: &T) -> Bytes {
    let json = serde_json::to_vec(value).expect("plain data");
    Bytes::from(json.into_boxed_slice())
}

/// A change to one release, for the event stream.
#[derive(Debug, Clone)]
pub struct Change {
    /// Increases by one per change; the SSE event id.
    pub seq: u64,
    pub release: String,
    /// The facts after the change; None when the release was removed or for a drift.
    pub facts: Option<ReleaseFacts>,
    /// The Service's template stopped (or went back to) saying what was applied.
    pub drift: Option<ConfigDrift>,
    /// What the event streams send for it, made by the first that sends it: ten thousand
    /// subscribers of one release cost one serialization, not ten thousand.
    pub rendered: OnceLock<Bytes>,
}

/// Every release's facts, shared by the producers of facts and the API.
#[derive(Debug)]
pub struct FactsBook {
    /// Keyed by release. The hash is foldhash, seeded at random per map: a release name
    /// is the hot read's whole lookup, and SipHash cost more than the rest of it.
    releases: RwLock<Releases>,
    changes: broadcast::Sender<Arc<Change>>,
    /// The channels of releases someone subscribed to. One is dropped at the first
    /// change after its last subscriber left, so what is kept is bounded by the releases.
    by_release: Mutex<HashMap<String, broadcast::Sender<Arc<Change>>>>,
    seq: AtomicU64,
    watch_connected: AtomicBool,
    /// Milliseconds since the epoch; `i64::MIN` until something was heard.
    watch_last_heard_ms: AtomicI64,
    stale_after: Duration,
    /// Services refused the release key they claim, as the tracker last said.
    refused: RwLock<Arc<Vec<RefusedClaim>>>,
}

impl FactsBook {
    pub fn new(stale_after: Duration) -> Self {
        let (changes, _) = broadcast::channel(CHANGE_CHANNEL_CAPACITY);
        Self {
            releases: RwLock::default(),
            changes,
            by_release: Mutex::default(),
            seq: AtomicU64::new(0),
            watch_connected: AtomicBool::new(false),
            watch_last_heard_ms: AtomicI64::new(i64::MIN),
            stale_after,
            refused: RwLock::default(),
        }
    }

    pub fn set_refused(&self, refused: Vec<RefusedClaim>) {
        *self.refused.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(refused);
    }

    pub fn refused(&self) -> Arc<Vec<RefusedClaim>> {
        self.refused
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces a release's facts and broadcasts them. Whether they changed is decided
    /// once, upstream, by the tracker's fingerprint of what readers see.
    pub fn upsert(&self, facts: ReleaseFacts) {
        let scaling_json = kept_json(&facts.scaling);
        let release = facts.release.clone();
        {
            let mut map = self.write();
            let cold_starts_json = match map.get(&release) {
                Some(old) => old.entry.cold_starts_json.clone(),
                None => kept_json(&ColdStarts {
                    release: release.clone(),
                    revisions: Vec::new(),
                }),
            };
            let entry = Arc::new(Entry {
                facts: facts.clone(),
                cold_starts_json,
            });
            map.insert(
                release.clone(),
                Slot {
                    scaling_json,
                    entry,
                },
            );
        }
        self.publish(release, Some(facts), None);
    }

    /// Replaces a known release's cold-start report; returns false for an unknown release.
    pub fn set_cold_starts(&self, cold_starts: &ColdStarts) -> bool {
        let json = kept_json(cold_starts);
        let mut map = self.write();
        let Some(slot) = map.get_mut(&cold_starts.release) else {
            return false;
        };
        slot.entry = Arc::new(Entry {
            facts: slot.entry.facts.clone(),
            cold_starts_json: json,
        });
        true
    }

    pub fn remove(&self, release: &str) {
        if self.write().remove(release).is_some() {
            self.publish(release.to_owned(), None, None);
        }
    }

    pub fn get(&self, release: &str) -> Option<Arc<Entry>> {
        self.read().get(release).map(|s| s.entry.clone())
    }

    /// The precomputed `scaling` bytes: the gateway's hot read.
    pub fn scaling_json(&self, release: &str) -> Option<Bytes> {
        self.read().get(release).map(|s| s.scaling_json.clone())
    }

    /// Every release key, sorted.
    pub fn release_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.read().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }

    /// Some release's key, whichever the map holds first; None when the book is empty.
    pub fn any_release(&self) -> Option<String> {
        self.read().keys().next().cloned()
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every release's changes.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
    }

    /// Drops a release's channel if nobody holds it: for a subscription that was not
    /// kept (an unknown release), so that asking cannot grow the map.
    pub fn unsubscribe_release(&self, release: &str) {
        let mut channels = self.channels();
        if channels
            .get(release)
            .is_some_and(|tx| tx.receiver_count() == 0)
        {
            channels.remove(release);
        }
    }

    /// How many releases have a channel of their own.
    pub fn release_channels(&self) -> usize {
        self.channels().len()
    }

    /// One release's changes.
    pub fn subscribe_release(&self, release: &str) -> broadcast::Receiver<Arc<Change>> {
        let mut channels = self.channels();
        match channels.get(release) {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(RELEASE_CHANNEL_CAPACITY);
                channels.insert(release.to_owned(), tx);
                rx
            }
        }
    }

    /// The watcher heard from the Kubernetes API (an event or a bookmark).
    pub fn watch_heard(&self, at: DateTime<Utc>) {
        self.watch_connected.store(true, Ordering::Release);
        self.watch_last_heard_ms
            .fetch_max(at.timestamp_millis(), Ordering::AcqRel);
    }

    /// The watcher lost its connection; reads are stale until it is back.
    pub fn watch_lost(&self) {
        self.watch_connected.store(false, Ordering::Release);
    }

    pub fn watch(&self) -> WatchView {
        let ms = self.watch_last_heard_ms.load(Ordering::Acquire);
        WatchView {
            connected: self.watch_connected.load(Ordering::Acquire),
            last_heard: (ms != i64::MIN)
                .then(|| DateTime::from_timestamp_millis(ms))
                .flatten(),
            stale_after: self.stale_after,
        }
    }

    /// Tells the event streams that a release's Service template drifted from what was
    /// applied, or came back to it.
    pub fn publish_drift(&self, drift: ConfigDrift) {
        self.publish(drift.release.clone(), None, Some(drift));
    }

    fn publish(&self, release: String, facts: Option<ReleaseFacts>, drift: Option<ConfigDrift>) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        let gone = facts.is_none() && drift.is_none();
        let change = Arc::new(Change {
            seq,
            release,
            facts,
            drift,
            rendered: OnceLock::new(),
        });
        {
            let mut channels = self.channels();
            if let Some(tx) = channels.get(&change.release) {
                let held = tx.receiver_count() > 0;
                if held {
                    let _ = tx.send(change.clone());
                }
                // Unheld, or removed: its subscribers have the removal, new ones are
                // refused.
                if !held || gone {
                    channels.remove(&change.release);
                }
            }
        }
        // No subscriber is not an error: nobody is streaming right now.
        let _ = self.changes.send(change);
    }

    // A poisoned lock only means a writer panicked between two plain assignments; the map
    // itself is still consistent, so keep serving it.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Releases> {
        self.releases.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Releases> {
        self.releases.write().unwrap_or_else(|e| e.into_inner())
    }

    fn channels(&self) -> MutexGuard<'_, HashMap<String, broadcast::Sender<Arc<Change>>>> {
        self.by_release.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
