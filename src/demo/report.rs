//! The demo's live table and its closing summary.

use std::fmt::Write;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scaling_facts_api::ColdStarts;
use scaling_facts_api::{Outcome, WakeKind};
use scaling_facts_client::Client;
use scaling_facts_sim::Cluster;

use super::client::{Plan, Score};

/// Served wake durations of a revision in the simulator's truth, sorted.
fn truth_ms(cluster: &Cluster, revision: &str) -> Vec<u64> {
    let mut d: Vec<u64> = cluster
        .truth
        .wakes()
        .iter()
        .filter(|w| {
            w.revision == revision && w.kind == WakeKind::Wake && w.outcome == Some(Outcome::Served)
        })
        .filter_map(|w| w.duration_ms())
        .collect();
    d.sort_unstable();
    d
}

/// Nearest-rank percentile.
fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// An enum as the API spells it (`pulling_image`, not `PullingImage`).
fn wire_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn secs(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "-".to_owned(),
        |ms| format!("{:.2} s", ms as f64 / 1000.0),
    )
}

pub struct Table {
    api: Client,
    plan: Plan,
    cluster: Option<Arc<Cluster>>,
    score: Arc<Mutex<Score>>,
    tty: bool,
}

impl Table {
    pub fn new(
        api: Client,
        plan: Plan,
        cluster: Option<Arc<Cluster>>,
        score: Arc<Mutex<Score>>,
    ) -> Self {
        Self {
            api,
            plan,
            cluster,
            score,
            tty: std::io::stdout().is_terminal(),
        }
    }

    fn releases(&self) -> Vec<String> {
        let mut all = self.plan.releases.clone();
        all.extend(self.plan.chain.iter().cloned());
        all.extend(self.plan.declared.iter().cloned());
        all.extend(self.plan.broken.iter().cloned());
        all
    }

    /// Prints the table: in place on a terminal, as plain lines otherwise.
    pub async fn render(&self) {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<14} {:<12} {:<14} {:>6} {:>10} {:>10}  last call",
            "release", "state", "phase", "wakes", "expected", "truth p95"
        );
        for release in self.releases() {
            let runtime = self.api.runtime(&release).await.ok();
            let report = self.api.cold_starts(&release).await.ok();
            let active = report
                .as_ref()
                .and_then(|r| r.revisions.iter().find(|x| x.active).cloned());
            let truth = match (&self.cluster, &active) {
                (Some(c), Some(rev)) => percentile(&truth_ms(c, &rev.revision), 95.0),
                _ => None,
            };
            let (state, phase, expected) = match &runtime {
                Some(rt) => (
                    wire_name(&rt.state),
                    wire_name(&rt.runtime_presence.phase),
                    rt.scaling
                        .expected_cold_start_seconds
                        .map(|s| (s * 1000.0) as u64),
                ),
                None => ("?".into(), "?".into(), None),
            };
            let last = self
                .score
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .last
                .get(&release)
                .cloned()
                .unwrap_or_default();
            let wakes = active.map_or(0, |r| r.counts.served + r.counts.failed + r.counts.aborted);
            let _ = writeln!(
                out,
                "{release:<14} {state:<12} {phase:<14} {wakes:>6} {:>10} {:>10}  {}",
                secs(expected),
                secs(truth),
                last.chars().take(70).collect::<String>()
            );
        }
        if self.tty {
            print!("\x1b[H\x1b[J{out}");
        } else {
            print!("{out}");
        }
    }
}

/// The closing summary.
pub async fn summary(api: &Client, plan: &Plan, cluster: &Cluster, score: &Mutex<Score>) -> String {
    let mut out = String::from(
        "\n== Summary ==\n\nMeasured cold starts against the simulator's truth (served wakes):\n",
    );
    let _ = writeln!(
        out,
        "{:<16} {:>5} {:>10} {:>10} {:>10} {:>10}  p95 within 5% or 50 ms",
        "revision", "n", "p50", "truth p50", "p95", "truth p95"
    );
    let mut releases = plan.releases.clone();
    releases.extend(plan.chain.iter().cloned());
    releases.extend(plan.declared.iter().cloned());
    for release in &releases {
        let Ok(ColdStarts { revisions, .. }) = api.cold_starts(release).await else {
            continue;
        };
        for rev in revisions.iter().filter(|r| r.served.is_some()) {
            let served = rev.served.as_ref().expect("filtered");
            let truth = truth_ms(cluster, &rev.revision);
            let (t50, t95) = (percentile(&truth, 50.0), percentile(&truth, 95.0));
            let ok = t95.is_some_and(|t| {
                let diff = (served.p95_ms as f64 - t as f64).abs();
                diff <= 50.0 || diff <= 0.05 * t as f64
            });
            let _ = writeln!(
                out,
                "{:<16} {:>5} {:>10} {:>10} {:>10} {:>10}  {}",
                rev.revision,
                served.count,
                secs(Some(served.p50_ms)),
                secs(t50),
                secs(Some(served.p95_ms)),
                secs(t95),
                if ok { "yes" } else { "NO" }
            );
        }
    }
    let s = score.lock().unwrap_or_else(|e| e.into_inner()).clone();
    out.push_str("\nCaller errors by phase:\n");
    if s.errors.is_empty() {
        out.push_str("  none\n");
    }
    for (phase, n) in &s.errors {
        let _ = writeln!(out, "  {phase:<20} {n}");
    }
    for release in plan.broken.iter() {
        if let Some(last) = s.last.get(release) {
            let _ = writeln!(out, "  {release}: {last}");
        }
    }
    if let Some(d) = &s.deadline_demo {
        let _ = writeln!(out, "  with 1 s of deadline left: {d}");
    }
    let median = |xs: &[Duration]| {
        let mut v: Vec<Duration> = xs.to_vec();
        v.sort();
        v.get(v.len() / 2).copied()
    };
    out.push_str("\nThe chain of three cold releases (each call waits for its release):\n");
    let row = |out: &mut String, what: &str, xs: &[Duration]| match median(xs) {
        Some(m) => {
            let _ = writeln!(
                out,
                "  {what:<34} {:>6.2} s (median of {})",
                m.as_secs_f64(),
                xs.len()
            );
        }
        None => {
            let _ = writeln!(out, "  {what:<34} no complete round yet");
        }
    };
    row(&mut out, "one after the other:", &s.chain_sequential);
    row(&mut out, "prewarmed by the client:", &s.chain_prewarmed);
    if !plan.declared.is_empty() {
        row(
            &mut out,
            "woken by the service (depends-on):",
            &s.chain_declared,
        );
    }
    if let (Some(seq), Some(pre)) = (median(&s.chain_sequential), median(&s.chain_prewarmed)) {
        let _ = writeln!(
            out,
            "  prewarming saved {:.2} s ({:.0}%)",
            (seq.saturating_sub(pre)).as_secs_f64(),
            100.0 * (1.0 - pre.as_secs_f64() / seq.as_secs_f64())
        );
    }
    if let Some(slowest) = slowest_start(cluster, &plan.declared) {
        let _ = writeln!(
            out,
            "  the declared chain's slowest start: {:.2} s (simulator truth, median)",
            slowest as f64 / 1_000.0
        );
    }
    for link in plan.declared.iter().skip(1) {
        let Ok(ColdStarts { revisions, .. }) = api.cold_starts(link).await else {
            continue;
        };
        let recent: Vec<_> = revisions.iter().flat_map(|r| r.recent.iter()).collect();
        let caused: Vec<_> = recent
            .iter()
            .filter_map(|w| w.caused_by.as_deref())
            .collect();
        let by = caused.first().copied().unwrap_or("-");
        let _ = writeln!(
            out,
            "  {link}: {} of its {} recent wakes recorded as caused by {by}",
            caused.len(),
            recent.len()
        );
    }
    out
}

/// The largest of the releases' median true cold starts, in milliseconds.
fn slowest_start(cluster: &Cluster, releases: &[String]) -> Option<u64> {
    releases
        .iter()
        .filter_map(|release| {
            let (service, _) = release.split_once('.')?;
            let mut truth: Vec<u64> = cluster
                .truth
                .wakes()
                .into_iter()
                .filter(|w| {
                    w.service == service
                        && w.kind == WakeKind::Wake
                        && w.outcome == Some(Outcome::Served)
                })
                .filter_map(|w| w.duration_ms())
                .collect();
            truth.sort_unstable();
            percentile(&truth, 50.0)
        })
        .max()
}
