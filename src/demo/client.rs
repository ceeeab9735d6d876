//! The demo client: calls releases through the activator the way an SDK should, with the
//! caller contract and the guarded prewarm, and keeps score of what happened.
//!
//! It runs inside `demo` and alone as `demo-client` against any scaling-facts service
//! and activator.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use scaling_facts_api::Phase;
use scaling_facts_client::Client;
use scaling_facts_client::caller::{
    Call, CallError, Caller, CallerConfig, DEADLINE_HEADER, Transport, TransportError,
};
use scaling_facts_client::prewarm::Prewarmer;

/// Sends requests through the simulator's (or Knative's) activator.
pub struct Activator {
    http: reqwest::Client,
    base: String,
    /// How long the application works on each request.
    pub hold: Duration,
    /// Release key to `<namespace>/<service>`, learned from the API's release list.
    routes: Mutex<BTreeMap<String, String>>,
}

impl Activator {
    pub fn new(base: &str, hold: Duration) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            hold,
            routes: Mutex::default(),
        }
    }

    /// Learns where each release lives: a release keyed by its UID label does not say.
    pub async fn learn(&self, api: &Client) {
        if let Ok(list) = api.releases().await {
            let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            for r in list.releases {
                routes.insert(r.release, format!("{}/{}", r.namespace, r.service));
            }
        }
    }

    /// `<namespace>/<service>` of a release: learned, else from a `<service>.<namespace>` key.
    pub fn activator_path(&self, release: &str) -> String {
        if let Some(path) = self
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(release)
        {
            return path.clone();
        }
        match release.rsplit_once('.') {
            Some((service, namespace)) => format!("{namespace}/{service}"),
            None => release.to_owned(),
        }
    }
}

impl Transport for Activator {
    async fn send(&self, release: &str, deadline_ms: Option<u64>) -> Result<(), TransportError> {
        let url = format!(
            "{}/activator/{}?hold_ms={}",
            self.base,
            self.activator_path(release),
            self.hold.as_millis()
        );
        let mut req = self.http.post(url);
        if let Some(ms) = deadline_ms {
            req = req.header(DEADLINE_HEADER, ms.to_string());
        }
        match req.send().await {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => {
                let status = r.status();
                let body: serde_json::Value = r.json().await.unwrap_or_default();
                Err(TransportError::Unavailable(
                    body["error"]
                        .as_str()
                        .map_or_else(|| format!("HTTP {status}"), str::to_owned),
                ))
            }
            Err(e) => Err(TransportError::Unavailable(e.to_string())),
        }
    }
}

/// What the client saw, for the live table and the summary.
#[derive(Debug, Default, Clone)]
pub struct Score {
    pub calls: BTreeMap<String, u32>,
    pub cold_calls: BTreeMap<String, u32>,
    /// Errors by phase: readiness_timeout, unavailable, cold_start_timeout, ...
    pub errors: BTreeMap<&'static str, u32>,
    pub last: BTreeMap<String, String>,
    /// Where each release was last seen starting.
    pub starting: BTreeMap<String, Phase>,
    /// Chain rounds: (sequential cold calls, with prewarm), each the chain's total time.
    pub chain_sequential: Vec<Duration>,
    pub chain_prewarmed: Vec<Duration>,
    /// Rounds of the declared chain, called one after the other with no prewarm: the
    /// service wakes each link's dependency as the link starts waking.
    pub chain_declared: Vec<Duration>,
    /// What the call with too short a deadline said.
    pub deadline_demo: Option<String>,
}

pub fn phase_of(e: &CallError) -> &'static str {
    match e {
        CallError::ReadinessTimeout { .. } => "readiness_timeout",
        CallError::Unavailable { .. } => "unavailable",
        CallError::ColdStartTimeout { .. } => "cold_start_timeout",
        CallError::RequestTimeout { .. } => "request_timeout",
        CallError::DeadlineTooShort { .. } => "deadline_too_short",
    }
}

/// The releases the demo client exercises.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Called over and over, with a pause long enough to go back to zero.
    pub releases: Vec<String>,
    /// Called one after the other, with and without prewarming.
    pub chain: Vec<String>,
    /// A chain whose releases declare each other (`scaling-facts.io/depends-on`): called
    /// one after the other, never prewarmed.
    pub declared: Vec<String>,
    /// Called once; expected to fail to start.
    pub broken: Option<String>,
    /// Longer than the releases' idle window, so each call finds them at zero.
    pub pause: Duration,
}

type DemoCaller = Caller<Client, Arc<Activator>>;

/// Calls each release of a chain in turn, as a request through three services would;
/// returns the whole chain's time when every call succeeded.
async fn call_chain(
    caller: &DemoCaller,
    score: &Mutex<Score>,
    chain: &[String],
) -> Option<Duration> {
    let started = Instant::now();
    let mut ok = true;
    for release in chain {
        let call = Call {
            timeout: Duration::from_secs(5),
            ..Default::default()
        };
        let result = caller.call(release, call).await;
        ok &= result.is_ok();
        record(score, release, result);
    }
    ok.then(|| started.elapsed())
}

/// Runs the plan until `stop`, updating `score` as it goes.
pub async fn run(
    api: Client,
    activator_url: String,
    plan: Plan,
    score: Arc<Mutex<Score>>,
    stop: CancellationToken,
) {
    let transport = Arc::new(Activator::new(&activator_url, Duration::from_millis(50)));
    transport.learn(&api).await;
    let observer_score = score.clone();
    let caller: Arc<DemoCaller> = Arc::new(
        Caller::new(api.clone(), transport.clone(), CallerConfig::default()).with_observer(
            Arc::new(move |release, phase| {
                observer_score
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .starting
                    .insert(release.to_owned(), phase);
            }),
        ),
    );
    let mut tasks = Vec::new();
    for release in plan.releases.clone() {
        let (caller, score, stop) = (caller.clone(), score.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.is_cancelled() {
                let call = Call {
                    timeout: Duration::from_secs(5),
                    ..Default::default()
                };
                record(&score, &release, caller.call(&release, call).await);
                pause(plan.pause, &stop).await;
            }
        }));
    }
    if let Some(broken) = plan.broken.clone() {
        let (caller, score) = (caller.clone(), score.clone());
        tasks.push(tokio::spawn(async move {
            let call = Call {
                timeout: Duration::from_secs(5),
                ready_timeout: Some(Duration::from_secs(60)),
                ..Default::default()
            };
            record(&score, &broken, caller.call(&broken, call).await);
        }));
    }
    if !plan.chain.is_empty() {
        let (caller, score, stop, plan) =
            (caller.clone(), score.clone(), stop.clone(), plan.clone());
        let prewarmer = Prewarmer::new(transport.clone(), Duration::from_secs(5));
        tasks.push(tokio::spawn(async move {
            let mut prewarm = false;
            while !stop.is_cancelled() {
                if prewarm {
                    // What an application does in its lifespan: start every dependency now.
                    prewarmer.prewarm(&plan.chain);
                }
                if let Some(took) = call_chain(&caller, &score, &plan.chain).await {
                    let mut s = score.lock().unwrap_or_else(|e| e.into_inner());
                    match prewarm {
                        true => s.chain_prewarmed.push(took),
                        false => s.chain_sequential.push(took),
                    }
                }
                prewarm = !prewarm;
                pause(plan.pause, &stop).await;
            }
        }));
    }
    if !plan.declared.is_empty() {
        let (caller, score, stop, plan) =
            (caller.clone(), score.clone(), stop.clone(), plan.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.is_cancelled() {
                // No prewarm: the first call wakes deps-a, and the service wakes the rest.
                if let Some(took) = call_chain(&caller, &score, &plan.declared).await {
                    score
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .chain_declared
                        .push(took);
                }
                pause(plan.pause, &stop).await;
            }
        }));
    }
    // The contract's other failure phases, shown once each on a cold release.
    if let Some(release) = plan.releases.last().cloned() {
        let (caller, score, stop) = (caller.clone(), score.clone(), stop.clone());
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            // Once the release's start is measured and it is at zero again, a caller with
            // 1 s left cannot cover it: the call fails before sending anything.
            loop {
                pause(Duration::from_secs(1), &stop).await;
                if stop.is_cancelled() {
                    return;
                }
                let measured = api
                    .scaling(&release)
                    .await
                    .ok()
                    .and_then(|s| s.expected_cold_start_seconds);
                let idle = api
                    .runtime(&release)
                    .await
                    .is_ok_and(|r| r.state == scaling_facts_api::RuntimeState::Idle);
                if measured.is_some_and(|s| s > 1.0) && idle {
                    break;
                }
            }
            let call = Call {
                timeout: Duration::from_secs(5),
                deadline: Some(Duration::from_secs(1)),
                ..Default::default()
            };
            let result = caller.call(&release, call).await;
            let mut s = score.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = &result {
                *s.errors.entry(phase_of(e)).or_default() += 1;
                s.deadline_demo = Some(e.to_string());
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

fn record(
    score: &Mutex<Score>,
    release: &str,
    result: Result<scaling_facts_client::caller::Delivered, CallError>,
) {
    let mut s = score.lock().unwrap_or_else(|e| e.into_inner());
    *s.calls.entry(release.to_owned()).or_default() += 1;
    s.starting.remove(release);
    let line = match result {
        Ok(d) => {
            if d.cold {
                *s.cold_calls.entry(release.to_owned()).or_default() += 1;
            }
            format!(
                "ok in {:.2} s{}",
                d.took.as_secs_f64(),
                if d.cold { " (cold)" } else { "" }
            )
        }
        Err(e) => {
            *s.errors.entry(phase_of(&e)).or_default() += 1;
            format!("{}: {e}", phase_of(&e))
        }
    };
    s.last.insert(release.to_owned(), line);
}

async fn pause(d: Duration, stop: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(d) => {}
        () = stop.cancelled() => {}
    }
}
