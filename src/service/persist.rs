//! Writes recorded wakes and histograms to the store, in order, retrying until they are
//! written: a store that is down delays writes and loses none.

use std::time::Duration;

use chrono::Utc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::measure::stats::HistogramUpdate;
use crate::measure::wake::OpenChange;
use crate::store::Store;
use crate::telemetry::ErrorChain;
use crate::telemetry::metrics::Metrics;
use scaling_facts_api::WakeRecord;

/// One write.
#[derive(Debug)]
pub enum Write {
    Wake(Box<WakeRecord>),
    Histogram(Box<HistogramUpdate>),
    Open(Box<OpenChange>),
}

const FIRST_RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// After shutdown, queued writes get this long to reach the store.
const DRAIN_CEILING: Duration = Duration::from_secs(5);

async fn write(store: &Store, w: &Write) -> Result<(), crate::store::StoreError> {
    match w {
        Write::Wake(record) => {
            let new = store.record_wake(record, Utc::now()).await?;
            if !new {
                tracing::debug!(revision = %record.revision, start_second = record.start_second, "wake already stored");
            }
            Ok(())
        }
        Write::Open(change) => store.apply_open(change).await,
        Write::Histogram(h) => {
            let (uid, series, bucket, hist) = &**h;
            store
                .save_histogram(uid, series, *bucket, hist, Utc::now())
                .await
        }
    }
}

/// Runs until `shutdown`, then drains what is queued for at most a few seconds.
pub async fn run(
    store: Store,
    metrics: std::sync::Arc<Metrics>,
    mut rx: mpsc::UnboundedReceiver<Write>,
    shutdown: CancellationToken,
) {
    let mut delay = FIRST_RETRY;
    let drain_deadline = async {
        shutdown.cancelled().await;
        tokio::time::sleep(DRAIN_CEILING).await;
    };
    tokio::pin!(drain_deadline);
    loop {
        let next = tokio::select! {
            w = rx.recv() => w,
            () = &mut drain_deadline => {
                tracing::warn!(queued = rx.len(), "shutdown: writes still queued were not stored");
                return;
            }
        };
        let Some(w) = next else { return };
        loop {
            match write(&store, &w).await {
                Ok(()) => {
                    delay = FIRST_RETRY;
                    break;
                }
                Err(e) => {
                    metrics.store_retries.inc();
                    tracing::warn!(error = %ErrorChain(&e), retry_in_ms = delay.as_millis() as u64, "store write failed; will retry");
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = &mut drain_deadline => return,
                    }
                    delay = (delay * 2).min(MAX_RETRY);
                }
            }
        }
    }
}
