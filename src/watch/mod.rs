//! The Kubernetes side: kube-rs watchers on Knative Services, Revisions, PodAutoscalers,
//! Deployments and Pods labelled with a revision, and the two Knative ConfigMaps, each
//! watched by name so that the service's Role can be narrowed to them.
//!
//! Each watcher decodes slim types ([`types`]), converts them to observations
//! ([`convert`]) stamped on arrival, and sends them down one channel, so the measurement
//! sees every kind in arrival order. Watchers use kube-rs' default backoff and never end on
//! an error; they report errors and completed lists so the engine knows whether the facts
//! are current. A relist does not report objects deleted meanwhile, so each watcher keeps
//! the keys it has seen and reports the missing ones as gone once the list is complete.
//!
//! The one write, the editor's settings applied to a Service's template, is [`apply`]'s.

pub mod apply;
pub mod convert;
pub mod lease;
pub mod reconnect;
mod seen;
pub mod stall;
pub mod types;

use std::path::{Path, PathBuf};

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::measure::observe::{Observation, Stamp, Via};
use convert::REVISION_UID_LABEL;
use reconnect::WatchStarts;

/// Errors of the watch layer.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot read the kubeconfig {path}")]
    Kubeconfig {
        path: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("no Kubernetes configuration found (in-cluster or kubeconfig)")]
    Infer(#[source] kube::config::InferConfigError),
    #[error("cannot build the Kubernetes client")]
    Client(#[source] kube::Error),
}

/// What the watchers tell the engine.
#[derive(Debug)]
pub enum Feed {
    Observed(&'static str, Box<Observation>, Stamp),
    /// A watcher began a (re)list of `kind`: its objects follow, then `Listed`.
    Listing(&'static str),
    /// A watcher completed a (re)list: `kind` is current.
    Listed(&'static str),
    /// A watcher hit an error; its backoff retries.
    Failed(&'static str),
    /// A watcher that failed is watching again, and what it missed has arrived.
    Back(&'static str),
}

/// The Knative ConfigMaps read, each by its own watch: a watch narrowed by a field
/// selector to one name is the only `list`/`watch` that RBAC's `resourceNames` permits.
pub const CONFIG_MAPS: [&str; 2] = ["config-autoscaler", "config-deployment"];

/// The kinds watched, as named in [`Feed`], health and metrics.
pub const KINDS: [&str; 7] = [
    "services",
    "revisions",
    "podautoscalers",
    "deployments",
    "pods",
    "configmaps/config-autoscaler",
    "configmaps/config-deployment",
];

/// Where and what to watch.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// Only this namespace; all when None.
    pub namespace: Option<String>,
    /// The Knative Service label that holds the release UID.
    pub release_label: String,
    /// Where Knative's ConfigMaps live.
    pub knative_namespace: String,
    /// Objects per page of a list.
    pub list_objects_per_page: u32,
}

/// A client from the given kubeconfig, else in-cluster or the default kubeconfig, and
/// what it notes of its watches' (re)starts.
pub async fn connect(kubeconfig: Option<&Path>) -> Result<(Client, WatchStarts), WatchError> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path).map_err(|source| {
                WatchError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                }
            })?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .map_err(|source| WatchError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?
        }
        None => kube::Config::infer().await.map_err(WatchError::Infer)?,
    };
    // kube-rs retries a 503 inside the client, up to fifteen times over minutes: a watch
    // would hang in it while the API server is away, and the engine would never learn
    // that its kind is down, nor hold judgement until the backlog is in. Errors reach
    // the watcher instead, whose own backoff retries and which reports the kind down and
    // back. The Lease and the applier have deadlines and retries of their own.
    let mut config = config;
    config.default_retry = false;
    let starts = WatchStarts::default();
    let client = kube::client::ClientBuilder::try_from(config)
        .map_err(WatchError::Client)?
        .with_layer(&starts)
        .build();
    Ok((client, starts))
}

/// The process's one connection to the Kubernetes API, shared by the watchers, the applier
/// and the Lease: one connection pool, and one place that reads the kubeconfig. It is made
/// at the first use that succeeds; a failed attempt is tried again at the next use.
pub struct Link {
    kubeconfig: Option<PathBuf>,
    made: tokio::sync::OnceCell<(Client, WatchStarts)>,
}

impl Link {
    pub fn new(kubeconfig: Option<PathBuf>) -> Self {
        Self {
            kubeconfig,
            made: tokio::sync::OnceCell::new(),
        }
    }

    /// The client, connected now if it was not yet.
    pub async fn get(&self) -> Result<&(Client, WatchStarts), WatchError> {
        self.made
            .get_or_try_init(|| connect(self.kubeconfig.as_deref()))
            .await
    }
}

fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// An observation, with the key to remember it by when its disappearance is reported
/// (None for kinds whose disappearance is not).
type Converted = Option<(Option<String>, Observation)>;

/// What to report when the object of a remembered key disappears, rebuilt from the key:
/// a watcher keeps only keys, so 10,000 revisions cost their UIDs and no observations.
type Gone = fn(&str) -> Observation;

/// A watcher's kind and where it sends: the kind's name in logs and health, what its
/// disappearance reports (None for kinds whose disappearance tells nothing), and the
/// engine's channel with what every watcher shares.
struct Watched {
    kind: &'static str,
    gone: Option<Gone>,
    starts: WatchStarts,
    tx: mpsc::Sender<Feed>,
    shutdown: CancellationToken,
}

/// Service keys are `<namespace>/<name>`; neither may hold a `/`.
fn service_gone(key: &str) -> Observation {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    Observation::ServiceGone {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    }
}

fn revision_gone(uid: &str) -> Observation {
    Observation::RevisionGone {
        uid: uid.to_owned(),
    }
}

/// Pod keys are `<revision UID>/<pod name>`.
fn pod_gone(key: &str) -> Observation {
    let (revision_uid, name) = key.split_once('/').unwrap_or(("", key));
    Observation::PodGone {
        revision_uid: revision_uid.to_owned(),
        name: name.to_owned(),
    }
}

/// Starts every watcher; they run until `shutdown`.
pub fn spawn(
    client: &Client,
    starts: &WatchStarts,
    s: &WatchSettings,
    tx: mpsc::Sender<Feed>,
    shutdown: CancellationToken,
) -> Vec<JoinHandle<()>> {
    let ns = s.namespace.as_deref();
    let label = s.release_label.clone();
    let config = || watcher::Config::default().page_size(s.list_objects_per_page);
    let with_uid = || config().labels(REVISION_UID_LABEL);
    let watched = |kind, gone| Watched {
        kind,
        gone,
        starts: starts.clone(),
        tx: tx.clone(),
        shutdown: shutdown.clone(),
    };
    let config_maps = CONFIG_MAPS
        .into_iter()
        .zip(&KINDS[5..])
        .map(|(name, kind)| {
            tokio::spawn(run(
                Api::<types::ConfigMap>::namespaced(client.clone(), &s.knative_namespace),
                config().fields(&format!("metadata.name={name}")),
                watched(kind, None),
                move |o| {
                    // The field selector already narrows the watch; a server that ignored it
                    // must not feed another ConfigMap in.
                    let got = o.metadata.name.as_deref().filter(|n| *n == name)?;
                    let obs = Observation::ConfigMap {
                        name: got.to_owned(),
                        data: o.data.clone(),
                    };
                    Some((None, obs))
                },
            ))
        });
    let mut handles = vec![
        tokio::spawn(run(
            api::<types::KnativeService>(client, ns),
            config(),
            watched("services", Some(service_gone)),
            move |o| {
                let snap = convert::service(o, &label);
                let key = format!("{}/{}", snap.namespace, snap.name);
                Some((Some(key), Observation::Service(snap)))
            },
        )),
        tokio::spawn(run(
            api::<types::Revision>(client, ns),
            config(),
            watched("revisions", Some(revision_gone)),
            |o| {
                let snap = convert::revision(o)?;
                Some((Some(snap.uid.clone()), Observation::Revision(snap)))
            },
        )),
        tokio::spawn(run(
            api::<types::PodAutoscaler>(client, ns),
            with_uid(),
            watched("podautoscalers", None),
            |o| Some((None, convert::autoscaler(o)?)),
        )),
        tokio::spawn(run(
            api::<types::Deployment>(client, ns),
            with_uid(),
            watched("deployments", None),
            |o| Some((None, convert::deployment(o)?)),
        )),
        tokio::spawn(run(
            api::<types::Pod>(client, ns),
            with_uid(),
            watched("pods", Some(pod_gone)),
            |o| {
                let (uid, pod) = convert::pod(o)?;
                let key = format!("{uid}/{}", pod.name);
                Some((
                    Some(key),
                    Observation::Pod {
                        revision_uid: uid,
                        pod,
                    },
                ))
            },
        )),
    ];
    handles.extend(config_maps);
    handles
}

/// One watcher: never ends before `shutdown`, whatever the API server does.
async fn run<K, F>(
    api: Api<K>,
    config: watcher::Config,
    Watched {
        kind,
        gone,
        starts,
        tx,
        shutdown,
    }: Watched,
    convert: F,
) where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
    F: Fn(&K) -> Converted + Send + 'static,
{
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut seen = seen::Seen::default();
    let mut failures: u64 = 0;
    let mut replay = Replay::new(kind, starts.clone());
    // Since when the watch is down, and when it last delivered anything.
    let mut down: Option<std::time::Instant> = None;
    let mut last_item = std::time::Instant::now();
    loop {
        let item = tokio::select! {
            item = stream.next() => item,
            () = tokio::time::sleep(BACK_POLL), if down.is_some() => {
                // Back once a watch response began after the failure and its catch-up
                // burst has gone quiet: the backlog is in.
                let now = std::time::Instant::now();
                if let Some(began) = down.and_then(|d| starts.began_after(kind, d))
                    && now.saturating_duration_since(began.max(last_item)) >= REPLAY_BURST
                {
                    down = None;
                    if tx.send(Feed::Back(kind)).await.is_err() {
                        return;
                    }
                }
                continue;
            }
            () = shutdown.cancelled() => return,
        };
        let Some(item) = item else { return };
        last_item = std::time::Instant::now();
        let mut out = Vec::with_capacity(2);
        match item {
            Ok(Event::Init) => {
                seen.listing();
                out.push(Feed::Listing(kind));
            }
            Ok(Event::InitApply(o)) => {
                if let Some((key, obs)) = convert(&o) {
                    seen.saw(key);
                    out.push(Feed::Observed(kind, Box::new(obs), Stamp::now(Via::Listed)));
                }
            }
            Ok(Event::Apply(o)) => {
                if let Some((key, obs)) = convert(&o) {
                    seen.saw(key);
                    out.push(Feed::Observed(kind, Box::new(obs), replay.stamp()));
                }
            }
            Ok(Event::Delete(o)) => {
                if let (Some(gone), Some((Some(key), _))) = (gone, convert(&o)) {
                    seen.deleted(&key);
                    out.push(Feed::Observed(kind, Box::new(gone(&key)), replay.stamp()));
                }
            }
            Ok(Event::InitDone) => {
                seen.listed(|key| {
                    if let Some(gone) = gone {
                        out.push(Feed::Observed(
                            kind,
                            Box::new(gone(key)),
                            Stamp::now(Via::Listed),
                        ));
                    }
                });
                failures = 0;
                replay.listed();
                // A completed list is as current as a watch that came back.
                down = None;
                out.push(Feed::Listed(kind));
            }
            Err(e) => {
                failures += 1;
                replay.failed();
                down.get_or_insert_with(std::time::Instant::now);
                // The first failure of a run is worth a warning; the retries are noise.
                if failures == 1 {
                    tracing::warn!(kind, error = %e, "watch failed; retrying with backoff");
                } else {
                    tracing::debug!(kind, error = %e, failures, "watch still failing");
                }
                out.push(Feed::Failed(kind));
            }
        }
        for feed in out {
            if tx.send(feed).await.is_err() {
                return; // the engine is gone: shutting down
            }
        }
    }
}

/// Whether a streamed event arrived as it happened, or in a catch-up burst: after a watch
/// error (kube-rs resumes from the last version it saw, and the server sends what changed
/// meanwhile at once), or in the first moments of any (re)started watch ([`reconnect`]).
/// Events of such a burst are [`Via::Resumed`]: their arrival does not date their change.
#[derive(Debug)]
struct Replay {
    kind: &'static str,
    starts: WatchStarts,
    failed: bool,
    until: Option<std::time::Instant>,
}

/// How long the burst after a watch error lasts.
const REPLAY_BURST: std::time::Duration = std::time::Duration::from_millis(250);
/// How often a watch that failed checks whether it is back.
const BACK_POLL: std::time::Duration = std::time::Duration::from_millis(100);

impl Replay {
    fn new(kind: &'static str, starts: WatchStarts) -> Self {
        Self {
            kind,
            starts,
            failed: false,
            until: None,
        }
    }

    fn failed(&mut self) {
        self.failed = true;
        self.until = None;
    }

    fn listed(&mut self) {
        self.failed = false;
        self.until = None;
    }

    fn stamp(&mut self) -> Stamp {
        let now = std::time::Instant::now();
        if std::mem::take(&mut self.failed) {
            self.until = Some(now + REPLAY_BURST);
        }
        let after_error = self.until.is_some_and(|until| now < until);
        if after_error || self.starts.catching_up(self.kind, now) || stall::just_resumed(now) {
            Stamp::now(Via::Resumed)
        } else {
            Stamp::now(Via::Watched)
        }
    }
}
