//! Following the wakes table, so that every replica counts what the one writer stored.
//!
//! With a Lease, statistics are built from stored rows only
//! ([`crate::measure::tracker::Tracker::absorb`]). This task reads the rows stored after the
//! last one it read, by id, every [`POLL`] and at once when this replica's own writer has
//! stored a wake, and hands them to the engine. The id order is the order the rows were
//! committed in, since one writer stores them one after another; the history read at start
//! ends at the id this task starts after, so no row is counted twice or skipped. Each row
//! also settles this replica's own record of the same wake, held until it was seen stored.
//!
//! Polling rather than PostgreSQL's `LISTEN`: one indexed query four times a second keeps
//! followers within about 250 ms of the writer on both backends, and needs nothing kept
//! open that a failover could leave dangling.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::writer::Outbox;
use crate::store::Store;
use crate::telemetry::ErrorChain;
use scaling_facts_api::WakeRecord;

/// How often the store is asked for new rows.
pub const POLL: Duration = Duration::from_millis(250);
/// Rows read at once; a full page is followed by the next at once.
const PAGE: u32 = 1_000;
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Reads the rows stored after id `after`, in order, until shutdown.
pub async fn run(
    store: Store,
    mut after: u64,
    outbox: Outbox,
    rows: mpsc::Sender<Vec<WakeRecord>>,
    shutdown: CancellationToken,
) {
    let stored = outbox.stored_wakes();
    let mut delay = POLL;
    loop {
        match store.wakes_after(after, PAGE).await {
            Ok(page) => {
                delay = POLL;
                let full = page.len() == PAGE as usize;
                if let Some((id, _)) = page.last() {
                    after = *id;
                }
                let wakes: Vec<WakeRecord> = page.into_iter().map(|(_, w)| w).collect();
                if !wakes.is_empty() {
                    tracing::debug!(rows = wakes.len(), after, "stored wakes followed");
                    outbox.confirm(&wakes);
                    if rows.send(wakes).await.is_err() {
                        return;
                    }
                }
                if full {
                    continue;
                }
            }
            Err(e) => {
                tracing::warn!(error = %ErrorChain(&e), retry_in_ms = delay.as_millis() as u64, "cannot read the wakes stored since the last ones counted; retrying");
                delay = (delay * 2).min(MAX_RETRY);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stored.notified() => {}
            () = shutdown.cancelled() => return,
        }
    }
}
