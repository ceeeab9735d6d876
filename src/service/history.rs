//! Brings the store up to date and loads its history, in the background, for as long as
//! it takes: the migrations are retried with backoff (a database that is down, or not yet
//! created, at start is normal in a cluster), then the wakes of the window and the wakes
//! underway are read. The writes a previous process left in the spool are laid over what
//! the store returned, since they may not be stored yet.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::spool::Write;
use crate::measure::wake::{OpenWake, Rest};
use crate::store::{Store, StoreError};
use crate::telemetry::ErrorChain;
use crate::telemetry::components::{Components, HistoryState};
use scaling_facts_api::WakeRecord;

const FIRST_RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// What the store (and the spool) knew when this process started.
#[derive(Debug, Default)]
pub struct History {
    pub wakes: Vec<WakeRecord>,
    pub open: Vec<OpenWake>,
    /// Each revision's last rest.
    pub rests: Vec<Rest>,
    /// Since when the service has watched: its first process's first sync.
    pub watching_since: Option<DateTime<Utc>>,
    /// The id of the newest stored row the history holds: followers read on from it.
    pub last_id: u64,
}

/// Runs the migrations until they succeed (then sets `migrated`), and loads the history
/// of the last `window` until that succeeds. None only when the service stops first.
pub async fn load(
    store: Store,
    window: chrono::Duration,
    left: Vec<Write>,
    components: Arc<Components>,
    migrated: watch::Sender<bool>,
    shutdown: CancellationToken,
) -> Option<History> {
    // A migration that keeps failing is retried too: the log says why, and the spool
    // keeps every write until an operator fixes it.
    let _ = retry("migrations", &components, &shutdown, || store.migrate()).await?;
    migrated.send_replace(true);
    let since = Utc::now() - window;
    let read = retry("history", &components, &shutdown, || async {
        // The newest id first: a row stored meanwhile is followed later, not lost.
        let last_id = store.last_wake_id().await?;
        let wakes = store.wakes_since_upto(since, last_id).await?;
        let open = store.open_wakes().await?;
        let rests = store.rests().await?;
        let watching_since = store.watching_since().await?;
        Ok(History {
            wakes,
            open,
            rests,
            watching_since,
            last_id,
        })
    })
    .await?;
    let stored = match read {
        Ok(read) => read,
        // A row this service cannot read: measuring goes on without the history rather
        // than waiting for a row that will never change.
        Err(e) => {
            let why = ErrorChain(&e).to_string();
            tracing::error!(error = %why, "the stored history cannot be read; measuring without it");
            components.set_history(HistoryState::Failed { error: why });
            return Some(overlay(History::default(), left));
        }
    };
    let history = overlay(stored, left);
    tracing::info!(
        wakes = history.wakes.len(),
        underway = history.open.len(),
        rests = history.rests.len(),
        "history loaded"
    );
    tracing::debug!(open = ?history.open, "wakes underway in the history");
    components.set_history(HistoryState::Loaded {
        wakes: history.wakes.len() as u64,
    });
    Some(history)
}

/// The spool's writes laid over the store's rows, in the order they were made.
fn overlay(stored: History, left: Vec<Write>) -> History {
    let History {
        mut wakes,
        open,
        rests,
        mut watching_since,
        last_id,
    } = stored;
    let mut rests: BTreeMap<String, Rest> = rests
        .into_iter()
        .map(|r| (r.revision_uid.clone(), r))
        .collect();
    // Each revision's wakes underway, oldest first.
    let mut underway: BTreeMap<String, Vec<OpenWake>> = BTreeMap::new();
    for o in open {
        underway.entry(o.revision_uid.clone()).or_default().push(o);
    }
    for w in left {
        match w {
            Write::Wake(record) => wakes.push(*record),
            Write::Open(change) => {
                let uid = change.revision_uid().to_owned();
                match change.wakes() {
                    [] => underway.remove(&uid),
                    wakes => underway.insert(uid, wakes.to_vec()),
                };
            }
            Write::Rests(all) => {
                rests.extend(all.into_iter().map(|r| (r.revision_uid.clone(), r)));
            }
            Write::Opens(all) => {
                underway.clear();
                for o in all {
                    underway.entry(o.revision_uid.clone()).or_default().push(o);
                }
            }
            Write::Retract {
                revision_uid,
                start_second,
            } => {
                wakes.retain(|w| (&w.revision_uid, w.start_second) != (&revision_uid, start_second))
            }
            Write::WatchingSince(since) => {
                watching_since = Some(watching_since.map_or(since, |w| w.min(since)));
            }
        }
    }
    History {
        wakes,
        open: underway.into_values().flatten().collect(),
        rests: rests.into_values().collect(),
        watching_since,
        last_id,
    }
}

/// Tries until the store answers, or gives up on an error that cannot pass (returned).
/// None when the service stops first.
async fn retry<T, F, Fut>(
    what: &'static str,
    components: &Components,
    shutdown: &CancellationToken,
    mut attempt: F,
) -> Option<Result<T, StoreError>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut delay = FIRST_RETRY;
    loop {
        match attempt().await {
            Ok(v) => return Some(Ok(v)),
            Err(e) if !e.is_transient() => return Some(Err(e)),
            Err(e) => {
                let why = ErrorChain(&e).to_string();
                tracing::warn!(what, error = %why, retry_in_ms = delay.as_millis() as u64, "the store is not ready; retrying");
                components.set_history(HistoryState::Loading { error: Some(why) });
            }
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shutdown.cancelled() => return None,
        }
        delay = (delay * 2).min(MAX_RETRY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::wake::OpenChange;
    use scaling_facts_api::WakeKind;

    fn open(uid: &str, s: i64) -> OpenWake {
        OpenWake {
            revision_uid: uid.into(),
            kind: WakeKind::Wake,
            start_second: s,
            requested_at: chrono::DateTime::from_timestamp(s, 0).unwrap(),
            ended_at: None,
            ended_undated: false,
            trouble: None,
        }
    }

    #[test]
    fn the_spool_is_laid_over_the_store_in_order() {
        let left = vec![
            Write::Open(OpenChange::Closed {
                revision_uid: "a".into(),
            }),
            Write::Open(OpenChange::Opened(open("b", 20))),
            Write::Open(OpenChange::Opened(open("c", 30))),
            Write::Open(OpenChange::Closed {
                revision_uid: "c".into(),
            }),
            Write::Open(OpenChange::Several {
                revision_uid: "e".into(),
                wakes: vec![open("e", 40), open("e", 50)],
            }),
            Write::Open(OpenChange::Opened(open("d", 7))),
        ];
        let stored = History {
            open: vec![open("a", 10), open("d", 5)],
            ..History::default()
        };
        let h = overlay(stored, left);
        let rows: Vec<_> = (h.open.iter())
            .map(|o| (o.revision_uid.as_str(), o.start_second))
            .collect();
        assert_eq!(rows, [("b", 20), ("d", 7), ("e", 40), ("e", 50)]);
    }

    fn rest(uid: &str, generation: i64) -> Rest {
        let at = chrono::DateTime::from_timestamp(generation, 0).unwrap();
        Rest {
            revision_uid: uid.into(),
            at: crate::measure::wake::RestAt {
                deployment: Some((generation, at)),
                autoscaler: None,
                after_start: None,
            },
        }
    }

    #[test]
    fn a_spooled_rest_replaces_the_stored_one() {
        let left = vec![
            Write::Rests(vec![rest("a", 4), rest("c", 2)]),
            Write::Rests(vec![rest("a", 6)]),
        ];
        let stored = History {
            rests: vec![rest("a", 2), rest("b", 2)],
            ..History::default()
        };
        let h = overlay(stored, left);
        assert_eq!(h.rests, [rest("a", 6), rest("b", 2), rest("c", 2)]);
    }
}
