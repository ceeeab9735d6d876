//! Keeps the store from growing forever: wakes older than the measuring window plus a
//! margin are deleted, once at start and then on a fixed interval.
//!
//! Nothing read from the store reaches back further than the window (a restart rebuilds
//! the histograms from the wakes inside it), so what is older serves no reader; the margin keeps a
//! little more for operators and for a window that is lengthened later. The wakes underway
//! (`open_wakes`) are never pruned: a wake that began long ago may still be going on.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::store::{Store, StoreError};

/// What one pruning round deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    pub wakes: u64,
}

/// Deletes the wakes requested more than `keep` before `now`.
pub async fn prune_once(
    store: &Store,
    now: DateTime<Utc>,
    keep: chrono::Duration,
) -> Result<Pruned, StoreError> {
    let before = now - keep;
    Ok(Pruned {
        wakes: store.prune_wakes(before).await?,
    })
}

/// Prunes every `every` until `shutdown`, the first time once `migrated` says the tables
/// are there; a failed round is logged and tried again at the next one, since the store
/// may just be down.
pub async fn run(
    leadership: super::lead::Leadership,
    store: Store,
    mut migrated: tokio::sync::watch::Receiver<bool>,
    keep: chrono::Duration,
    every: Duration,
    shutdown: CancellationToken,
) {
    tokio::select! {
        done = migrated.wait_for(|m| *m) => {
            if done.is_err() {
                return; // the migrations gave up: shutting down
            }
        }
        () = shutdown.cancelled() => return,
    }
    loop {
        // Only the writer prunes: a follower's statistics never see rows go.
        let pruned = if leadership.leading() {
            prune_once(&store, Utc::now(), keep).await
        } else {
            Ok(Pruned::default())
        };
        match pruned {
            Ok(p) if p != Pruned::default() => {
                tracing::info!(wakes = p.wakes, "pruned old history");
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %crate::telemetry::ErrorChain(&e), "pruning old history failed; trying again later");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = shutdown.cancelled() => return,
        }
    }
}
