//! The write path from the measuring to the store: nothing measured is dropped silently.
//!
//! The engine hands each output's writes to the [`Outbox`], which appends them to the
//! [spool](super::spool) and syncs it before returning, so a write is on disk before
//! anything else happens to it. The writer task reads the spool back in order and stores
//! each write:
//!
//! - **transient errors** (store down, busy, restarting) are retried with backoff; the
//!   writes behind wait on disk, not in memory, so the queue is bounded in memory whatever
//!   the outage, and its depth is exported (`scaling_facts_write_queue_depth`);
//! - **tables gone** (a database recreated empty): the migrations run again, then the
//!   write is retried;
//! - **permanent errors** (a value the store refuses): the write is logged with its full
//!   record, set aside in the rejected file and counted, and the next one goes on;
//! - **shutdown**: writing goes on for the grace; what is left stays in the spool, which the
//!   next start replays. After a SIGKILL the spool holds every write the engine produced.
//!
//! Only when the spool itself cannot be written (disk full, read-only) do writes wait in
//! memory, and `/health` says so.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::held::Held;
use super::lead::Leadership;
use super::off_the_clock;
use super::spool::{Spool, Write};
use crate::store::{Store, StoreError};
use crate::telemetry::ErrorChain;
use crate::telemetry::components::Components;
use crate::telemetry::metrics::Metrics;
use scaling_facts_api::WakeRecord;

const FIRST_RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// Lines read from the spool at once: the writer's whole memory of the queue.
const BATCH: usize = 256;

/// The queue between the engine and the writer: the spool, and the writes it could not
/// take, in order (every spool line comes before every write held in memory).
#[derive(Debug)]
struct Queue {
    spool: Option<Spool>,
    memory: VecDeque<Write>,
    /// Byte offset in the spool of the first line not yet read by the writer.
    offset: u64,
}

/// The engine's end of the write path.
#[derive(Clone)]
pub struct Outbox {
    queue: Arc<Mutex<Queue>>,
    notify: Arc<Notify>,
    components: Arc<Components>,
    metrics: Arc<Metrics>,
    /// A follower's own measure of each wake, until the writer's row for it is seen
    /// ([`Outbox::confirm`]); stored if this replica becomes the writer first.
    held: Arc<Held>,
    /// Notified when a wake was stored, so the replica follows it at once.
    stored_wake: Arc<Notify>,
}

fn lock(q: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    q.lock().unwrap_or_else(|e| e.into_inner())
}

impl Outbox {
    /// Wraps the spool (None when it could not be opened: writes then wait in memory).
    /// `left` is how many writes a previous process left in it.
    pub fn new(
        spool: Option<Spool>,
        left: usize,
        components: Arc<Components>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let bytes = spool.as_ref().map_or(0, Spool::len);
        components.update_writes(|w| {
            w.appended += left as u64;
            w.spool_bytes = bytes;
        });
        Self {
            queue: Arc::new(Mutex::new(Queue {
                spool,
                memory: VecDeque::new(),
                offset: 0,
            })),
            notify: Arc::new(Notify::new()),
            components,
            held: Arc::new(Held::new(metrics.clone())),
            metrics,
            stored_wake: Arc::new(Notify::new()),
        }
    }

    /// Notified each time the writer stores a wake.
    pub fn stored_wakes(&self) -> Arc<Notify> {
        self.stored_wake.clone()
    }

    /// The store holds these rows: this replica's own records of them are not needed.
    pub fn confirm(&self, stored: &[WakeRecord]) {
        self.held.confirm(stored);
    }

    /// Makes the writes durable (spool, fsync) and wakes the writer.
    pub fn push(&self, writes: Vec<Write>) {
        if writes.is_empty() {
            return;
        }
        let n = writes.len() as u64;
        let (bytes, spool_error) = {
            let mut q = lock(&self.queue);
            let q = &mut *q;
            // Order is kept: once a write waits in memory, the ones after it do too.
            let appended: Result<(), String> = match q.spool.as_mut() {
                Some(spool) if q.memory.is_empty() => off_the_clock(|| spool.append(&writes))
                    .map(|_| ())
                    .map_err(|e| ErrorChain(&e).to_string()),
                Some(_) => Err("earlier writes are waiting in memory".into()),
                None => Err("the spool could not be opened".into()),
            };
            let error = appended.err();
            if error.is_some() {
                q.memory.extend(writes);
            }
            (q.spool.as_ref().map_or(0, Spool::len), error)
        };
        if let Some(why) = &spool_error {
            tracing::error!(error = %why, "the spool cannot take writes; they wait in memory until the store has them");
        }
        let state = self.components.update_writes(|w| {
            w.appended += n;
            w.spool_bytes = bytes;
            if spool_error.is_some() {
                w.spool_error = spool_error;
            }
        });
        self.publish(&state);
        self.notify.notify_one();
    }

    fn publish(&self, state: &crate::telemetry::components::WriteState) {
        self.metrics.write_queue_depth.set(state.queued() as i64);
        self.metrics.spool_bytes.set(state.spool_bytes as i64);
    }
}

/// The writer task's settings.
pub struct Writer {
    pub store: Store,
    pub outbox: Outbox,
    /// After shutdown, how long writing goes on before what is left stays in the spool.
    pub grace: Duration,
    /// Writes only while leading; a follower holds its wakes and drops the rest.
    pub leadership: Leadership,
}

/// Where the next writes come from.
enum Batch {
    Spool(Vec<Write>, u64),
    Memory(Vec<Write>),
}

impl Writer {
    /// Stores everything pushed, in order, until `shutdown` and the grace after it.
    pub async fn run(self, shutdown: CancellationToken) {
        let deadline = async {
            shutdown.cancelled().await;
            tokio::time::sleep(self.grace).await;
        };
        tokio::pin!(deadline);
        let mut leading = false;
        loop {
            // Becoming the writer: what this replica measured and the last writer did not
            // store is stored first (behind what the spool holds), each wake once.
            if self.leadership.leading() != leading {
                leading = !leading;
                if leading && self.leadership.replicated() {
                    let held = self.outbox.held.take();
                    tracing::info!(held = held.len(), "writing: this replica holds the Lease");
                    self.outbox
                        .push(held.into_iter().map(|w| Write::Wake(Box::new(w))).collect());
                } else if !leading {
                    tracing::info!("not writing: another replica may hold the Lease");
                }
            }
            let Some(batch) = self.next_batch() else {
                if shutdown.is_cancelled() {
                    tracing::info!("shutdown: every measured write is stored");
                    return;
                }
                let promoted = async {
                    if leading {
                        self.leadership.until_not_leading().await;
                    } else {
                        self.leadership.until_leading(&shutdown).await;
                    }
                };
                tokio::select! {
                    () = self.outbox.notify.notified() => {}
                    () = shutdown.cancelled() => {}
                    () = promoted => {}
                }
                continue;
            };
            let (writes, from_spool) = match batch {
                Batch::Spool(w, end) => (w, Some(end)),
                Batch::Memory(w) => (w, None),
            };
            for w in &writes {
                if !self.store_one(w, &mut deadline).await {
                    self.left_behind();
                    return;
                }
                if from_spool.is_none() {
                    lock(&self.outbox.queue).memory.pop_front();
                }
                self.stored(1);
            }
            if let Some(end) = from_spool {
                let mut q = lock(&self.outbox.queue);
                q.offset = end;
                // Everything in the file is stored: cut it back, so the spool only ever
                // holds what the store lacks.
                let caught_up = q.spool.as_ref().is_some_and(|s| s.len() == end);
                if caught_up && let Some(spool) = q.spool.as_mut() {
                    match spool.clear() {
                        Ok(()) => q.offset = 0,
                        Err(e) => {
                            tracing::warn!(error = %ErrorChain(&e), "cannot empty the spool; it is replayed (harmlessly) at the next start")
                        }
                    }
                }
                let bytes = q.spool.as_ref().map_or(0, Spool::len);
                drop(q);
                let state = self
                    .outbox
                    .components
                    .update_writes(|w| w.spool_bytes = bytes);
                self.outbox.publish(&state);
            }
        }
    }

    fn next_batch(&self) -> Option<Batch> {
        let q = lock(&self.outbox.queue);
        if let Some(spool) = q.spool.as_ref()
            && q.offset < spool.len()
        {
            match spool.read_from(q.offset, BATCH) {
                Ok((lines, end)) if end > q.offset => {
                    return Some(Batch::Spool(
                        lines.into_iter().map(|(_, w)| w).collect(),
                        end,
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %ErrorChain(&e), "cannot read the spool back");
                }
            }
        }
        (!q.memory.is_empty())
            .then(|| Batch::Memory(q.memory.iter().take(BATCH).cloned().collect()))
    }

    fn stored(&self, n: u64) {
        let state = self.outbox.components.update_writes(|w| {
            w.stored += n;
            w.store_error = None;
            if w.queued() == 0 {
                w.spool_error = None;
            }
        });
        self.outbox.publish(&state);
    }

    /// Stores one write, retrying transient failures; false when the deadline came first.
    async fn store_one(
        &self,
        w: &Write,
        deadline: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> bool {
        let mut delay = FIRST_RETRY;
        loop {
            if !self.leadership.leading() {
                self.follow(w);
                return true;
            }
            let replicated = self.leadership.replicated();
            let error = match write(&self.store, w, replicated).await {
                Ok(()) if matches!(w, Write::Wake(_)) => {
                    self.outbox.stored_wake.notify_one();
                    return true;
                }
                Ok(()) => return true,
                Err(e) => e,
            };
            if !error.is_transient() {
                let record = serde_json::to_string(w).expect("writes serialize");
                let why = ErrorChain(&error).to_string();
                tracing::error!(error = %why, record = %record, "the store refuses this write for good; set aside");
                let q = lock(&self.outbox.queue);
                if let Some(spool) = q.spool.as_ref()
                    && let Err(e) = spool.reject(w, &why)
                {
                    tracing::error!(error = %ErrorChain(&e), "cannot write the rejected file; the record is in the line above");
                }
                drop(q);
                self.outbox.metrics.writes_rejected.inc();
                self.outbox.components.update_writes(|s| s.rejected += 1);
                return true;
            }
            self.outbox.metrics.store_retries.inc();
            let why = ErrorChain(&error).to_string();
            tracing::warn!(error = %why, retry_in_ms = delay.as_millis() as u64, "store write failed; will retry");
            self.outbox
                .components
                .update_writes(|s| s.store_error = Some(why));
            if error.needs_migration() {
                tracing::warn!("the store has lost its tables; running the migrations again");
                if let Err(e) = self.store.migrate().await {
                    tracing::warn!(error = %ErrorChain(&e), "migrations failed");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = deadline.as_mut() => return false,
            }
            delay = (delay * 2).min(MAX_RETRY);
        }
    }

    /// What a follower does with a write instead of storing it: a wake is held until the
    /// writer's row for it is seen; the rest (its wakes underway, retractions of its own
    /// records) is the writer's to decide, and a new writer stores its own wakes underway.
    fn follow(&self, w: &Write) {
        if let Write::Wake(record) = w {
            self.outbox.held.hold((**record).clone());
        }
    }

    /// The grace ran out with writes unstored: they stay in the spool (or, if it cannot be
    /// written, are logged in full, the last place they can go).
    fn left_behind(&self) {
        let mut q = lock(&self.outbox.queue);
        let q = &mut *q;
        let queued = self.outbox.components.writes().queued();
        let memory: Vec<Write> = q.memory.drain(..).collect();
        if !memory.is_empty() {
            let spooled = q.spool.as_mut().map(|s| s.append(&memory));
            if !matches!(spooled, Some(Ok(_))) {
                for w in &memory {
                    let record = serde_json::to_string(w).expect("writes serialize");
                    tracing::error!(record = %record, "shutdown: neither the store nor the spool can take this write");
                }
            }
        }
        let path = q.spool.as_ref().map(|s| s.path().display().to_string());
        tracing::warn!(
            queued,
            spool = path.as_deref(),
            "shutdown: writes not yet stored stay in the spool and are replayed at the next start"
        );
    }
}

/// Stores one write. With more than one replica a wake is stored unless another record
/// of it is (another replica's measure, under another start second, perhaps), and
/// retractions are not carried out: the other replicas could not see them.
async fn write(store: &Store, w: &Write, replicated: bool) -> Result<(), StoreError> {
    tracing::debug!(write = ?w, "storing");
    match w {
        Write::Wake(record) if replicated => {
            if !store.record_wake_once(record, Utc::now()).await? {
                tracing::debug!(revision = %record.revision, start_second = record.start_second, "wake already stored");
            }
            Ok(())
        }
        Write::Retract { .. } if replicated => Ok(()),
        Write::Opens(all) => store.replace_open(all).await,
        Write::Wake(record) => {
            if !store.record_wake(record, Utc::now()).await? {
                tracing::debug!(revision = %record.revision, start_second = record.start_second, "wake already stored");
            }
            Ok(())
        }
        Write::Open(change) => store.apply_open(change).await,
        Write::Rests(all) => store.put_rests(all).await,
        Write::WatchingSince(since) => store.put_watching_since(*since).await,
        Write::Retract {
            revision_uid,
            start_second,
        } => store.delete_wake(revision_uid, *start_second).await,
    }
}
