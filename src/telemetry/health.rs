//! The readiness gate (ADR-025): closed at start, opened once every warm-up task has had
//! its chance, whether it succeeded, failed or hit its ceiling.
//!
//! Availability wins over warmth: a replica whose store is down still serves the facts it
//! has, so a failed warm-up is reported on `/health` but never keeps the gate shut.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, join_all};
use scaling_facts_api::{WarmupOutcome, WarmupReport};

/// A named warm-up task.
pub struct WarmupTask {
    pub name: &'static str,
    pub run: BoxFuture<'static, Result<(), String>>,
}

impl WarmupTask {
    pub fn new(
        name: &'static str,
        run: impl std::future::Future<Output = Result<(), String>> + Send + 'static,
    ) -> Self {
        Self {
            name,
            run: Box::pin(run),
        }
    }
}

#[derive(Debug, Default)]
pub struct Readiness {
    open: AtomicBool,
    reports: Mutex<Vec<WarmupReport>>,
}

impl Readiness {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A gate that is already open, for tests and tools that need no warm-up.
    pub fn opened() -> Arc<Self> {
        let r = Self::new();
        r.open.store(true, Ordering::Release);
        r
    }

    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    pub fn reports(&self) -> Vec<WarmupReport> {
        self.reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs every task in parallel, each under `ceiling`, then waits for `hold` (which has
    /// no ceiling), then runs the `then` tasks the same way, and opens the gate. A task
    /// that hits the ceiling is dropped (and so cancelled), not left running. `hold` is for
    /// what the service must never be ready without: an empty book while the cluster has
    /// releases would answer 404 for all. `then` is for what needs it: the self-requests
    /// read a release the book holds.
    pub async fn warm_up(
        &self,
        tasks: Vec<WarmupTask>,
        ceiling: Duration,
        hold: impl std::future::Future<Output = ()>,
        then: Vec<WarmupTask>,
    ) {
        {
            let mut reports = self.reports.lock().unwrap_or_else(|e| e.into_inner());
            *reports = tasks
                .iter()
                .chain(&then)
                .map(|t| WarmupReport {
                    task: t.name.to_owned(),
                    outcome: WarmupOutcome::Pending,
                    took_ms: None,
                })
                .collect();
        }
        let first = tasks.len();
        self.run_all(0, tasks, ceiling).await;
        hold.await;
        self.run_all(first, then, ceiling).await;
        self.open.store(true, Ordering::Release);
        tracing::info!("readiness open");
    }

    /// Runs `tasks` in parallel, each under `ceiling`, reporting them from report `offset`.
    async fn run_all(&self, offset: usize, tasks: Vec<WarmupTask>, ceiling: Duration) {
        let runs = tasks.into_iter().enumerate().map(|(i, task)| async move {
            let started = Instant::now();
            let outcome = match tokio::time::timeout(ceiling, task.run).await {
                Ok(Ok(())) => WarmupOutcome::Ok,
                Ok(Err(e)) => WarmupOutcome::Failed(e),
                Err(_) => WarmupOutcome::TimedOut,
            };
            let took = started.elapsed();
            match &outcome {
                WarmupOutcome::Ok => tracing::info!(task = task.name, took_ms = took.as_millis() as u64, "warm-up task done"),
                other => tracing::warn!(task = task.name, outcome = ?other, "warm-up task did not succeed; opening readiness anyway"),
            }
            let mut reports = self.reports.lock().unwrap_or_else(|e| e.into_inner());
            reports[offset + i].outcome = outcome;
            reports[offset + i].took_ms = Some(took.as_millis() as u64);
        });
        join_all(runs).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_however_the_tasks_end() {
        let r = Readiness::new();
        assert!(!r.is_open());
        let tasks = vec![
            WarmupTask::new("ok", async { Ok(()) }),
            WarmupTask::new("fails", async { Err("store down".to_owned()) }),
            WarmupTask::new("hangs", futures::future::pending()),
        ];
        r.warm_up(tasks, Duration::from_secs(5), async {}, Vec::new())
            .await;
        assert!(r.is_open());
        let outcomes: Vec<_> = r.reports().into_iter().map(|r| r.outcome).collect();
        assert_eq!(
            outcomes,
            vec![
                WarmupOutcome::Ok,
                WarmupOutcome::Failed("store down".into()),
                WarmupOutcome::TimedOut
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_later_tasks_run_after_the_hold() {
        let r = Readiness::new();
        let held = Arc::new(AtomicBool::new(false));
        let (h, seen) = (held.clone(), held.clone());
        let then = vec![WarmupTask::new("after", async move {
            match seen.load(Ordering::Acquire) {
                true => Ok(()),
                false => Err("ran before the hold".into()),
            }
        })];
        let hold = async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            h.store(true, Ordering::Release);
        };
        r.warm_up(Vec::new(), Duration::from_secs(5), hold, then)
            .await;
        assert!(r.is_open());
        assert_eq!(r.reports()[0].outcome, WarmupOutcome::Ok);
    }
}
