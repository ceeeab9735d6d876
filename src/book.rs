//! The in-memory book of every release's facts: what the API reads.
//!
//! Whoever learns something new (the engine, or a test standing in for it) calls
//! [`FactsBook::upsert`] or [`FactsBook::set_cold_starts`]; the book does the expensive work
//! there, once per change: the `scaling` object is serialized to bytes, so the gateway's hot
//! read is a map lookup and a reference-count increment. It sits between `measure` (which
//! derives the facts, without locks) and `serve` (which reads them).
//!
//! Every change is also broadcast for the event stream. A slow subscriber that falls behind
//! the channel's capacity is told how many changes it missed and can re-read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tokio::sync::broadcast;

use crate::measure::facts::{ReleaseFacts, WatchView};
use scaling_facts_api::{ColdStarts, RefusedClaim};

const CHANGE_CHANNEL_CAPACITY: usize = 1_024;

type Releases = HashMap<String, Arc<Entry>, foldhash::fast::RandomState>;

/// One release in the book, with what was precomputed for reads.
#[derive(Debug)]
pub struct Entry {
    pub facts: ReleaseFacts,
    /// The `scaling` object, serialized when the facts changed.
    pub scaling_json: Bytes,
    pub cold_starts: Arc<ColdStarts>,
}

/// A change to one release, for the event stream.
#[derive(Debug, Clone)]
pub struct Change {
    /// Increases by one per change; the SSE event id.
    pub seq: u64,
    pub release: String,
    /// The facts after the change; None when the release was removed.
    pub facts: Option<ReleaseFacts>,
}

/// Every release's facts, shared by the producers of facts and the API.
#[derive(Debug)]
pub struct FactsBook {
    /// Keyed by release. The hash is foldhash, seeded at random per map: a release name
    /// is the hot read's whole lookup, and SipHash cost more than the rest of it.
    releases: RwLock<Releases>,
    changes: broadcast::Sender<Arc<Change>>,
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
        let scaling_json = Bytes::from(serde_json::to_vec(&facts.scaling).expect("plain data"));
        let release = facts.release.clone();
        {
            let mut map = self.write();
            let cold_starts = match map.get(&release) {
                Some(old) => old.cold_starts.clone(),
                None => Arc::new(ColdStarts {
                    release: release.clone(),
                    revisions: Vec::new(),
                }),
            };
            let entry = Entry {
                facts: facts.clone(),
                scaling_json,
                cold_starts,
            };
            map.insert(release.clone(), Arc::new(entry));
        }
        self.publish(release, Some(facts));
    }

    /// Replaces a known release's cold-start report; returns false for an unknown release.
    pub fn set_cold_starts(&self, cold_starts: ColdStarts) -> bool {
        let mut map = self.write();
        let Some(old) = map.get(&cold_starts.release) else {
            return false;
        };
        let entry = Entry {
            facts: old.facts.clone(),
            scaling_json: old.scaling_json.clone(),
            cold_starts: Arc::new(cold_starts),
        };
        map.insert(entry.facts.release.clone(), Arc::new(entry));
        true
    }

    pub fn remove(&self, release: &str) {
        if self.write().remove(release).is_some() {
            self.publish(release.to_owned(), None);
        }
    }

    pub fn get(&self, release: &str) -> Option<Arc<Entry>> {
        self.read().get(release).cloned()
    }

    /// The precomputed `scaling` bytes: the gateway's hot read.
    pub fn scaling_json(&self, release: &str) -> Option<Bytes> {
        self.read().get(release).map(|e| e.scaling_json.clone())
    }

    /// Every release key, sorted.
    pub fn release_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.read().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
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

    fn publish(&self, release: String, facts: Option<ReleaseFacts>) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        // No subscriber is not an error: nobody is streaming right now.
        let _ = self.changes.send(Arc::new(Change {
            seq,
            release,
            facts,
        }));
    }

    // A poisoned lock only means a writer panicked between two plain assignments; the map
    // itself is still consistent, so keep serving it.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Releases> {
        self.releases.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Releases> {
        self.releases.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
