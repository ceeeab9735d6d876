//! One soak run: the wake drivers, the prober and the fault schedule, then a settled
//! service whose served counts are read back for the histogram check.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::{Rng, SeedableRng};
use tokio_util::sync::CancellationToken;

use super::{Cluster, Db, child};
use scaling_facts_api::ColdStarts;
use scaling_facts_sim::faults::Fault;
use scaling_facts_sim::{admin, resources};

/// The releases the scenario's services give (no release-UID labels: `<name>.<namespace>`).
const RELEASES: [(&str, &str); 5] = [
    ("shop", "cart"),
    ("pay", "ledger"),
    ("shop", "search"),
    ("pay", "broken"),
    ("shop", "slow"),
];

/// How long an aborted wake lasts: the scenario's stable window and a little, the least
/// Knative waits after the last request before it wants no pods.
const ABORT_AFTER: Duration = Duration::from_millis(6_500);

pub struct Run<'a> {
    pub cluster: Cluster,
    /// One recipe per replica; with two, they share a Lease.
    pub recipes: Vec<child::Recipe>,
    pub(super) db: &'a Db,
    pub seed: u64,
    pub duration: Duration,
    /// Whether the API server going away is among the faults.
    pub api_away: bool,
}

/// What the run saw besides the store.
pub struct Report {
    /// Served wakes per revision UID, as each settled replica counts them.
    pub served_in_memory: Vec<BTreeMap<String, u64>>,
    /// With two replicas: whether both served the same `scaling` facts and cold-starts
    /// for every release at the end.
    pub replicas_agree: Option<bool>,
    /// 5xx answers to the prober (refused connections while the service is down are not
    /// answers and are not counted).
    pub server_errors: u64,
    /// The faults applied, by kind.
    pub faults: String,
}

fn pods_of(cluster: &Cluster, ns: &str, revision: &str) -> usize {
    let sel = scaling_facts_sim::selector::Selector::parse(&format!(
        "serving.knative.dev/revision={revision}"
    ))
    .expect("a valid selector");
    cluster
        .lock()
        .list(resources::POD, Some(ns), &sel, None)
        .count()
}

async fn until_gone(cluster: &Cluster, ns: &str, revision: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pods_of(cluster, ns, revision) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wakes `svc` over and over until `stop`. `slow` is scaled back to zero while its image
/// still pulls (aborted); `broken` fails each time.
async fn drive(cluster: Cluster, ns: &'static str, svc: &'static str, stop: CancellationToken) {
    let rev = format!("{svc}-00001");
    while !stop.is_cancelled() {
        let began = Instant::now();
        if svc == "slow" {
            let c = cluster.clone();
            let wake = tokio::spawn(async move { c.activate(ns, svc, Duration::ZERO, None).await });
            tokio::time::sleep(ABORT_AFTER).await;
            cluster.force_idle(ns, &rev);
            let _ = wake.await;
        } else {
            let _ = cluster.activate(ns, svc, Duration::ZERO, None).await;
            // Knative keeps a woken pod for its stable window; 2.5 s outlasts a restart.
            tokio::time::sleep(Duration::from_millis(2_500)).await;
            cluster.force_idle(ns, &rev);
        }
        until_gone(&cluster, ns, &rev).await;
        // A wake is known by its revision and start second: never two in one second.
        tokio::time::sleep(Duration::from_millis(1_100).saturating_sub(began.elapsed())).await;
    }
}

impl Run<'_> {
    pub async fn go(self) -> anyhow::Result<Report> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(3))
            .build()?;
        let mut services = Vec::new();
        for recipe in &self.recipes {
            let service = recipe.start()?;
            anyhow::ensure!(
                service
                    .wait_for(&http, "/health/ready", Duration::from_secs(60))
                    .await,
                "the service never became ready"
            );
            services.push(service);
        }
        self.settle_initial_starts().await;

        let stop = CancellationToken::new();
        let drivers: Vec<_> = RELEASES
            .iter()
            .map(|(ns, svc)| tokio::spawn(drive(self.cluster.clone(), ns, svc, stop.clone())))
            .collect();
        let server_errors = Arc::new(AtomicU64::new(0));
        let probers: Vec<_> = services
            .iter()
            .map(|s| {
                tokio::spawn(probe(
                    http.clone(),
                    s.base.clone(),
                    server_errors.clone(),
                    stop.clone(),
                ))
            })
            .collect();

        let replicas = self.recipes.len();
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        let end = Instant::now() + self.duration;
        while Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(rng.random_range(1_500..=4_000))).await;
            // One replica: the schedule of issue 10 (and, when asked, the API away for
            // seconds). Two: the kills and the pause go to whichever leads, a SIGTERM to
            // either.
            let kinds = if self.api_away { 12 } else { 11 };
            let kind = match (rng.random_range(0..kinds), replicas) {
                (0 | 1, _) => "watch drop",
                (2, _) => "410 gone",
                (3, _) => "api restart",
                (4, _) => "api refusing",
                (5 | 6, 1) => "sigkill",
                (5 | 6, _) => "leader sigkill",
                (7, 1) => "sigterm",
                (7, _) => "leader pause",
                (8, 2) => "sigterm",
                (11, _) => "api away",
                _ => "store outage",
            };
            *counts.entry(kind).or_insert(0) += 1;
            tracing::info!(fault = kind, "soak fault");
            match kind {
                "watch drop" => admin::apply(&self.cluster, &Fault::DropWatches),
                "410 gone" => admin::apply(&self.cluster, &Fault::GoneNext { count: 2 }),
                "api restart" => admin::apply(&self.cluster, &Fault::Restart),
                "api refusing" => admin::apply(&self.cluster, &Fault::Refuse { ms: 800 }),
                "api away" => {
                    // Long enough for a whole wake to begin and end unwatched; the watches
                    // resume from their versions and receive it late, as one burst.
                    let ms = rng.random_range(2_000..=6_000);
                    admin::apply(&self.cluster, &Fault::Unavailable { ms });
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    settled(&http, &services).await;
                }
                "leader pause" => {
                    let i = leader(&http, &services).await.unwrap_or(0);
                    // Frozen past its renew deadline at times, as a stalled node does.
                    let pause = Duration::from_millis(rng.random_range(1_000..=5_000));
                    services[i].signal("STOP");
                    tokio::time::sleep(pause).await;
                    services[i].signal("CONT");
                }
                "sigkill" | "sigterm" | "leader sigkill" => {
                    let i = match kind {
                        "leader sigkill" => leader(&http, &services)
                            .await
                            .unwrap_or_else(|| rng.random_range(0..replicas)),
                        _ => rng.random_range(0..replicas),
                    };
                    let service = services.remove(i);
                    if kind == "sigterm" {
                        service.terminate(Duration::from_secs(15)).await;
                    } else {
                        service.kill();
                    }
                    // Down for less than a wake lasts: a wake that began and ended while
                    // nothing watched leaves nothing in the cluster to find.
                    tokio::time::sleep(Duration::from_millis(rng.random_range(300..=1_200))).await;
                    let service = self.recipes[i].start()?;
                    service
                        .wait_for(&http, "/alive", Duration::from_secs(20))
                        .await;
                    services.insert(i, service);
                }
                _ => {
                    let outage = Duration::from_millis(rng.random_range(2_000..=6_000));
                    self.store_outage(outage).await?;
                }
            }
        }
        stop.cancel();
        for d in drivers {
            let _ = d.await;
        }
        for p in probers {
            let _ = p.await;
        }

        // Settled: the watches catch up, SIGTERM stores what is queued (or spools it),
        // and a last start replays the spool and rebuilds its counts from the store.
        settled(&http, &services).await;
        tokio::time::sleep(Duration::from_secs(6)).await;
        for service in services {
            service.terminate(Duration::from_secs(15)).await;
        }
        let mut services = Vec::new();
        for recipe in &self.recipes {
            let service = recipe.start()?;
            anyhow::ensure!(
                service
                    .wait_for(&http, "/health", Duration::from_secs(60))
                    .await,
                "the service never became healthy after the soak"
            );
            services.push(service);
        }
        let replicas_agree = if replicas > 1 {
            Some(self.replicas_agree(&http, &services).await?)
        } else {
            None
        };
        let mut served_in_memory = Vec::new();
        for service in &services {
            served_in_memory.push(self.served_counts(&http, &service.base).await?);
        }
        for service in services {
            service.terminate(Duration::from_secs(15)).await;
        }
        Ok(Report {
            served_in_memory,
            replicas_agree,
            server_errors: server_errors.load(Ordering::Relaxed),
            faults: counts
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Whether every replica serves the same `scaling` facts (but for when each derived
    /// them) and cold-starts for every release, within a few seconds of starting.
    async fn replicas_agree(
        &self,
        http: &reqwest::Client,
        services: &[child::Service],
    ) -> anyhow::Result<bool> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut answers = Vec::new();
            for s in services {
                let mut all = Vec::new();
                for (ns, svc) in RELEASES {
                    for path in ["scaling", "cold-starts"] {
                        let mut body: serde_json::Value = http
                            .get(format!("{}/v1/releases/{svc}.{ns}/{path}", s.base))
                            .send()
                            .await?
                            .json()
                            .await?;
                        if let Some(m) = body.as_object_mut() {
                            m.remove("updated_at");
                        }
                        all.push(body);
                    }
                }
                answers.push(all);
            }
            if answers.windows(2).all(|p| p[0] == p[1]) {
                return Ok(true);
            }
            if Instant::now() > deadline {
                for (i, a) in answers.iter().enumerate() {
                    tracing::warn!(replica = i, answers = %serde_json::Value::from(a.clone()), "the replicas disagree");
                }
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The healthy services' initial starts are done and back at zero.
    async fn settle_initial_starts(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let done = self
                .cluster
                .truth
                .wakes()
                .iter()
                .filter(|w| w.service != "broken" && w.service != "slow" && w.outcome.is_some())
                .count();
            if done >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for (ns, svc) in RELEASES
            .iter()
            .filter(|(_, s)| *s != "broken" && *s != "slow")
        {
            self.cluster.force_idle(ns, &format!("{svc}-00001"));
        }
        tokio::time::sleep(Duration::from_millis(1_500)).await;
    }

    async fn store_outage(&self, outage: Duration) -> anyhow::Result<()> {
        match self.db {
            Db::Sqlite { path } => {
                let lock = crate::store::faults::SqliteLock::take(path).await?;
                tokio::time::sleep(outage).await;
                lock.release().await?;
            }
            Db::Postgres { proxy, .. } => {
                proxy.down();
                tokio::time::sleep(outage).await;
                proxy.up();
            }
        }
        Ok(())
    }

    async fn served_counts(
        &self,
        http: &reqwest::Client,
        base: &str,
    ) -> anyhow::Result<BTreeMap<String, u64>> {
        let mut out = BTreeMap::new();
        for (ns, svc) in RELEASES {
            let report: ColdStarts = http
                .get(format!("{base}/v1/releases/{svc}.{ns}/cold-starts"))
                .send()
                .await?
                .error_for_status()?
                .json()
                .await
                .context("a cold-starts report")?;
            for r in report.revisions {
                if r.counts.served > 0 {
                    out.insert(r.revision_uid, r.counts.served);
                }
            }
        }
        Ok(out)
    }
}

/// Waits (at most 30 s) until every replica's checks pass again: after the API server was
/// away, each watch comes back on its own backoff.
async fn settled(http: &reqwest::Client, services: &[child::Service]) {
    for s in services {
        s.wait_for(http, "/health", Duration::from_secs(30)).await;
    }
}

/// The replica that says it leads, if one does.
async fn leader(http: &reqwest::Client, services: &[child::Service]) -> Option<usize> {
    for (i, s) in services.iter().enumerate() {
        let Ok(r) = http.get(format!("{}/health", s.base)).send().await else {
            continue;
        };
        if let Ok(h) = r.json::<scaling_facts_api::HealthReport>().await
            && h.lease.role == scaling_facts_api::ReplicaRole::Leader
        {
            return Some(i);
        }
    }
    None
}

/// Reads a release's facts four times a second, counting 5xx answers.
async fn probe(
    http: reqwest::Client,
    base: String,
    errors: Arc<AtomicU64>,
    stop: CancellationToken,
) {
    while !stop.is_cancelled() {
        for (ns, svc) in RELEASES {
            if let Ok(r) = http
                .get(format!("{base}/v1/releases/{svc}.{ns}/scaling"))
                .send()
                .await
                && r.status().is_server_error()
            {
                tracing::warn!(status = %r.status(), release = %format!("{svc}.{ns}"), "5xx from the service");
                errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
