//! The caller contract: how an SDK calls another release (ADR 0041 §2-§6).
//!
//! A call first decides whether the release is known warm (the process cache's warm-path
//! rule), and if not reads `scaling` to choose its readiness limit. It then sends the
//! request, which wakes a cold release, and while the request is held it polls the
//! non-waking `runtime` read to show "starting" with the phase. The request's own timeout
//! starts only once the release is ready, so it measures the application's work. Every
//! failure names its phase, an incoming deadline is honoured and forwarded, and a call
//! marked idempotent is retried once, after readiness.
//!
//! Time is `tokio::time`, so tests run every rule with paused time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use scaling_facts_api::{Phase, Runtime, RuntimeState, Scaling};

pub use scaling_facts_api::DEADLINE_HEADER;

/// Where the facts come from: the scaling-facts API, or a fake in tests.
pub trait Platform: Send + Sync {
    fn scaling(&self, release: &str) -> impl Future<Output = Option<Scaling>> + Send;
    fn runtime(&self, release: &str) -> impl Future<Output = Option<Runtime>> + Send;
}

impl<P: Platform> Platform for Arc<P> {
    fn scaling(&self, release: &str) -> impl Future<Output = Option<Scaling>> + Send {
        (**self).scaling(release)
    }
    fn runtime(&self, release: &str) -> impl Future<Output = Option<Runtime>> + Send {
        (**self).runtime(release)
    }
}

#[cfg(feature = "http")]
impl Platform for super::Client {
    async fn scaling(&self, release: &str) -> Option<Scaling> {
        super::Client::scaling(self, release).await.ok()
    }
    async fn runtime(&self, release: &str) -> Option<Runtime> {
        super::Client::runtime(self, release).await.ok()
    }
}

/// Why a request did not reach the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The platform could not start the release (the reason it gave).
    Unavailable(String),
}

/// How a request reaches a release: through the activator, or a fake in tests.
pub trait Transport: Send + Sync {
    /// Sends one request; `deadline_ms` goes in the deadline header when set.
    fn send(
        &self,
        release: &str,
        deadline_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send;
}

impl<T: Transport> Transport for Arc<T> {
    fn send(
        &self,
        release: &str,
        deadline_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send {
        (**self).send(release, deadline_ms)
    }
}

/// A failure, named by the phase it happened in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error(
        "{release} was not ready within its readiness limit of {limit:?} (last phase {last_phase:?}, wake requested at {requested_at:?})"
    )]
    ReadinessTimeout {
        release: String,
        limit: Duration,
        last_phase: Phase,
        requested_at: Option<DateTime<Utc>>,
    },
    #[error("{release} is unavailable: {reason}")]
    Unavailable { release: String, reason: String },
    #[error(
        "{release}: the request was held by a start for longer than its timeout of {timeout:?}"
    )]
    ColdStartTimeout { release: String, timeout: Duration },
    #[error("{release}: the application did not answer within {timeout:?}")]
    RequestTimeout { release: String, timeout: Duration },
    #[error(
        "{release}: only {remaining:?} of the deadline remain, but a cold start takes about {expected:?}"
    )]
    DeadlineTooShort {
        release: String,
        remaining: Duration,
        expected: Duration,
    },
}

/// The caller's defaults.
#[derive(Debug, Clone, Copy)]
pub struct CallerConfig {
    /// Readiness limit when neither the call nor the platform says more.
    pub default_ready_timeout: Duration,
    /// The readiness limit derived from the expected start is never below this.
    pub ready_floor: Duration,
    /// The idle window assumed when the platform does not state one.
    pub default_idle_window: Duration,
    /// Polls of `runtime` are at least this far apart.
    pub poll_floor: Duration,
}

impl Default for CallerConfig {
    fn default() -> Self {
        Self {
            default_ready_timeout: Duration::from_secs(300),
            ready_floor: Duration::from_secs(30),
            default_idle_window: Duration::from_secs(60),
            poll_floor: Duration::from_millis(100),
        }
    }
}

/// One call's parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Call {
    /// The application's own work time, counted from readiness.
    pub timeout: Duration,
    /// An explicit readiness limit.
    pub ready_timeout: Option<Duration>,
    /// Safe to send twice.
    pub idempotent: bool,
    /// What remains of an incoming deadline.
    pub deadline: Option<Duration>,
}

/// The readiness limit: explicit, else twice the expected start (at least `floor`), else
/// the default.
pub fn readiness_limit(
    explicit: Option<Duration>,
    scaling: Option<&Scaling>,
    floor: Duration,
    default: Duration,
) -> Duration {
    explicit
        .or_else(|| {
            let s = scaling?.expected_cold_start_seconds?;
            Some(Duration::from_secs_f64(2.0 * s).max(floor))
        })
        .unwrap_or(default)
}

/// The safety margin of the warm-path rule: the larger of 10 s and 20% of the window.
pub fn warm_margin(idle_window: Duration) -> Duration {
    (idle_window / 5).max(Duration::from_secs(10))
}

/// What this process knows about a release.
#[derive(Debug, Clone, Default)]
pub struct CacheEntry {
    pub scaling: Option<Scaling>,
    /// The last sign it was serving: a response below 500 or a ready answer.
    pub last_success: Option<Instant>,
    /// The last cold start this process waited for: when it began, how long it took.
    pub last_cold_start: Option<(Instant, Duration)>,
}

/// The warm-path rule: min_instances ≥ 1, or a success younger than the idle window
/// minus the margin.
pub fn is_warm(entry: &CacheEntry, now: Instant, default_idle: Duration) -> bool {
    let scaling = entry.scaling.as_ref();
    if scaling.is_some_and(|s| s.min_instances >= 1) {
        return true;
    }
    let window = scaling.map_or(default_idle, |s| {
        Duration::from_secs_f64(s.idle_timeout_seconds.max(0.0))
    });
    let Some(last) = entry.last_success else {
        return false;
    };
    let usable = window.saturating_sub(warm_margin(window));
    now.saturating_duration_since(last) < usable
}

/// Shows "starting" while a call waits: release and phase.
pub type Observer = Arc<dyn Fn(&str, Phase) + Send + Sync>;

/// Calls releases under the contract.
pub struct Caller<P, T> {
    pub platform: P,
    pub transport: T,
    pub config: CallerConfig,
    cache: Mutex<HashMap<String, CacheEntry>>,
    observer: Option<Observer>,
}

/// How a successful call went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// The release had to start for this call.
    pub cold: bool,
    /// The call was sent a second time.
    pub retried: bool,
    pub took: Duration,
}

impl<P: Platform, T: Transport> Caller<P, T> {
    pub fn new(platform: P, transport: T, config: CallerConfig) -> Self {
        Self {
            platform,
            transport,
            config,
            cache: Mutex::new(HashMap::new()),
            observer: None,
        }
    }

    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observer = Some(observer);
        self
    }

    /// A copy of what the cache holds for `release`.
    pub fn entry(&self, release: &str) -> CacheEntry {
        self.lock().get(release).cloned().unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CacheEntry>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, release: &str, f: impl FnOnce(&mut CacheEntry)) {
        f(self.lock().entry(release.to_owned()).or_default());
    }

    /// Calls `release` once (twice if idempotent and the first timed out).
    pub async fn call(&self, release: &str, call: Call) -> Result<Delivered, CallError> {
        let started = Instant::now();
        let entry = self.entry(release);
        let warm = is_warm(&entry, started, self.config.default_idle_window);
        let scaling = if warm {
            entry.scaling.clone()
        } else {
            let fresh = self.platform.scaling(release).await;
            if fresh.is_some() {
                self.update(release, |e| e.scaling = fresh.clone());
            }
            fresh.or(entry.scaling.clone())
        };
        let mut limit = readiness_limit(
            call.ready_timeout,
            scaling.as_ref(),
            self.config.ready_floor,
            self.config.default_ready_timeout,
        );
        let expected = scaling
            .as_ref()
            .and_then(|s| s.expected_cold_start_seconds)
            .map(Duration::from_secs_f64);
        if let Some(remaining) = call.deadline {
            if let Some(expected) = expected.filter(|e| !warm && *e > remaining) {
                return Err(CallError::DeadlineTooShort {
                    release: release.to_owned(),
                    remaining,
                    expected,
                });
            }
            limit = limit.min(remaining);
        }
        match self.attempt(release, &call, warm, limit, started).await {
            Err(CallError::ColdStartTimeout { .. } | CallError::RequestTimeout { .. })
                if call.idempotent =>
            {
                self.wait_ready(release, limit).await?;
                let mut again = self.attempt(release, &call, true, limit, started).await?;
                again.retried = true;
                Ok(again)
            }
            other => other,
        }
    }

    fn remaining_ms(call: &Call, started: Instant) -> Option<u64> {
        call.deadline
            .map(|d| d.saturating_sub(started.elapsed()).as_millis() as u64)
    }

    async fn attempt(
        &self,
        release: &str,
        call: &Call,
        warm: bool,
        limit: Duration,
        started: Instant,
    ) -> Result<Delivered, CallError> {
        let sent = Instant::now();
        let sent_wall = Utc::now();
        let mut timeout = call.timeout;
        if let Some(d) = call.deadline {
            timeout = timeout.min(d.saturating_sub(started.elapsed()));
        }
        let request = self
            .transport
            .send(release, Self::remaining_ms(call, started));
        tokio::pin!(request);
        let unavailable = |reason: String| CallError::Unavailable {
            release: release.to_owned(),
            reason,
        };
        if warm {
            return match tokio::time::timeout(timeout, &mut request).await {
                Ok(Ok(())) => Ok(self.succeeded(release, false, sent)),
                Ok(Err(TransportError::Unavailable(r))) => Err(unavailable(r)),
                Err(_) => Err(self.classify_timeout(release, timeout, sent_wall).await),
            };
        }
        // Cold or unknown: the request wakes the release and is held; meanwhile the
        // non-waking read says what is happening.
        let mut ready_at: Option<Instant> = None;
        let mut last_phase = Phase::Idle;
        let mut requested_at = None;
        let mut poll = self.config.poll_floor;
        loop {
            tokio::select! {
                done = &mut request => return match done {
                    // Cold when the release was seen starting while the request was held.
                    Ok(()) => Ok(self.succeeded(release, last_phase != Phase::Idle, sent)),
                    Err(TransportError::Unavailable(r)) => Err(unavailable(r)),
                },
                () = tokio::time::sleep(poll) => {}
            }
            if let Some(rt) = self.platform.runtime(release).await {
                poll = Duration::from_millis(rt.retry_after_ms.unwrap_or(0))
                    .max(self.config.poll_floor);
                match rt.state {
                    RuntimeState::Ready => {
                        ready_at.get_or_insert_with(Instant::now);
                    }
                    RuntimeState::Unavailable => {
                        let reason = rt.runtime_presence.failure.map_or_else(
                            || "unavailable".to_owned(),
                            |f| format!("{}: {}", f.reason, f.message),
                        );
                        return Err(unavailable(reason));
                    }
                    RuntimeState::Waking => {
                        last_phase = rt.runtime_presence.phase;
                        requested_at = rt.runtime_presence.wake.map(|w| w.requested_at);
                        if let Some(observe) = &self.observer {
                            observe(release, last_phase);
                        }
                    }
                    RuntimeState::Idle => {}
                }
            }
            match ready_at {
                None if sent.elapsed() >= limit => {
                    return Err(CallError::ReadinessTimeout {
                        release: release.to_owned(),
                        limit,
                        last_phase,
                        requested_at,
                    });
                }
                Some(at) if at.elapsed() >= timeout => {
                    return Err(self.classify_timeout(release, timeout, sent_wall).await);
                }
                _ => {}
            }
        }
    }

    fn succeeded(&self, release: &str, cold: bool, sent: Instant) -> Delivered {
        let took = sent.elapsed();
        let now = Instant::now();
        self.update(release, |e| {
            e.last_success = Some(now);
            if cold {
                e.last_cold_start = Some((sent, took));
            }
        });
        Delivered {
            cold,
            retried: false,
            took,
        }
    }

    /// After a timeout: was the request held by a start, or was the application slow?
    async fn classify_timeout(
        &self,
        release: &str,
        timeout: Duration,
        sent_wall: DateTime<Utc>,
    ) -> CallError {
        self.update(release, |e| e.last_success = None);
        let cold = match self.platform.runtime(release).await {
            Some(rt) => {
                rt.state == RuntimeState::Waking
                    || rt.runtime_presence.actual_replicas < 1
                    || rt.scaling.serving_since.is_some_and(|s| s > sent_wall)
            }
            None => false,
        };
        let release = release.to_owned();
        if cold {
            CallError::ColdStartTimeout { release, timeout }
        } else {
            CallError::RequestTimeout { release, timeout }
        }
    }

    /// Polls `runtime` until the release is ready, under `limit`.
    async fn wait_ready(&self, release: &str, limit: Duration) -> Result<(), CallError> {
        let started = Instant::now();
        let mut last_phase = Phase::Idle;
        let mut requested_at = None;
        loop {
            if let Some(rt) = self.platform.runtime(release).await {
                match rt.state {
                    RuntimeState::Ready => {
                        self.update(release, |e| e.last_success = Some(Instant::now()));
                        return Ok(());
                    }
                    RuntimeState::Unavailable => {
                        return Err(CallError::Unavailable {
                            release: release.to_owned(),
                            reason: rt
                                .runtime_presence
                                .failure
                                .map_or_else(|| "unavailable".into(), |f| f.reason),
                        });
                    }
                    _ => {
                        last_phase = rt.runtime_presence.phase;
                        requested_at = rt.runtime_presence.wake.map(|w| w.requested_at);
                    }
                }
            }
            if started.elapsed() >= limit {
                return Err(CallError::ReadinessTimeout {
                    release: release.to_owned(),
                    limit,
                    last_phase,
                    requested_at,
                });
            }
            tokio::time::sleep(self.config.poll_floor).await;
        }
    }
}
