//! Scenario files (YAML or JSON): the namespaces, services, annotations, timings, failure
//! modes and traffic the simulator plays. The demo and the tests share this one format.

use std::collections::BTreeMap;
use std::path::Path;

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A whole scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random timing, so a scenario replays the same way.
    #[serde(default)]
    pub seed: u64,
    /// Top-level keys of `config-autoscaler` (e.g. `stable-window: 6s`).
    #[serde(default)]
    pub config_autoscaler: BTreeMap<String, String>,
    /// Top-level keys of `config-deployment` (e.g. `progress-deadline: 20s`).
    #[serde(default)]
    pub config_deployment: BTreeMap<String, String>,
    /// How often open watches get a bookmark, in milliseconds.
    #[serde(default = "default_bookmark_ms")]
    pub bookmark_interval_ms: u64,
    /// How many changes the API server remembers for watches to resume from.
    #[serde(default = "default_history")]
    pub history_events: usize,
    /// The order of the KPA's writes when it wakes a revision: the Deployment's scale
    /// first (what the KPA does), the PA status first (what a client of separate watches
    /// may see), or either, drawn per wake from the seed.
    #[serde(default)]
    pub kpa_write_order: WriteOrder,
    #[serde(default)]
    pub services: Vec<ServiceSpec>,
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOrder {
    DeploymentFirst,
    AutoscalerFirst,
    #[default]
    Random,
}

fn default_bookmark_ms() -> u64 {
    5_000
}
fn default_history() -> usize {
    50_000
}
fn one() -> u32 {
    1
}

/// One Knative Service, or `count` of them named `<name>-<i>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    pub namespace: String,
    pub name: String,
    #[serde(default = "one")]
    pub count: u32,
    /// Template generations: each creates a revision; traffic goes to the last.
    #[serde(default = "one")]
    pub revisions: u32,
    /// Labels of the Knative Service (e.g. the release-UID label).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Template annotations, copied to each revision.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Annotations of the Knative Service itself, such as the dependencies it declares
    /// (`scaling-facts.io/depends-on`); not copied to revisions.
    #[serde(default)]
    pub service_annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub timing: Timing,
    #[serde(default)]
    pub failure: Option<FailureMode>,
    /// With `failure`: only the first this-many starts of each revision (its initial start
    /// counts) fail, the later ones serve; all fail when absent.
    #[serde(default)]
    pub failing_starts: Option<u32>,
    /// `initial` runs each revision's first start; `idle` creates revisions already scaled
    /// to zero (for large scenarios).
    #[serde(default)]
    pub start: StartMode,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartMode {
    #[default]
    Initial,
    Idle,
}

/// How a wake fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureMode {
    /// The image cannot be pulled: `ErrImagePull`, then `ImagePullBackOff`.
    ImagePullBackoff,
    /// The container exits with code 1 after starting: `CrashLoopBackOff`.
    CrashLoop,
    /// No node fits the pod: `PodScheduled=False Unschedulable`.
    Unschedulable,
    /// The container runs but never passes its readiness probe.
    NeverReady,
}

/// How long each phase of a start takes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Until the pod is scheduled.
    pub provisioning_ms: Dist,
    /// Until the containers run (image pull and container creation).
    pub pulling_image_ms: Dist,
    /// Until the pod is ready.
    pub starting_ms: Dist,
    /// How long a pod stays terminating after scale-down.
    #[serde(default = "default_terminating")]
    pub terminating_ms: u64,
}

fn default_terminating() -> u64 {
    1_000
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            provisioning_ms: Dist::Fixed(200),
            pulling_image_ms: Dist::Fixed(800),
            starting_ms: Dist::Fixed(500),
            terminating_ms: default_terminating(),
        }
    }
}

/// A duration in milliseconds: fixed, uniform, or log-normal around a median.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Dist {
    Fixed(u64),
    Uniform { min: u64, max: u64 },
    LogNormal { median: u64, sigma: f64 },
}

impl Dist {
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        match *self {
            Self::Fixed(ms) => ms,
            Self::Uniform { min, max } => rng.random_range(min..=max.max(min)),
            Self::LogNormal { median, sigma } => {
                // Box-Muller: one standard normal from two uniforms.
                let u1: f64 = rng.random_range(f64::EPSILON..1.0);
                let u2: f64 = rng.random::<f64>();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                ((median as f64) * (sigma * z).exp())
                    .round()
                    .clamp(1.0, 3_600_000.0) as u64
            }
        }
    }
}

/// Requests to send through the activator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// `<namespace>/<service>`.
    pub service: String,
    #[serde(default)]
    pub start_ms: u64,
    pub every_ms: u64,
    pub count: u32,
    /// How long the application works on each request.
    #[serde(default)]
    pub hold_ms: u64,
}

/// Why a scenario file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("scenario {path} is invalid")]
    Parse {
        path: String,
        #[source]
        source: serde_yaml_ng::Error,
    },
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        serde_yaml_ng::from_str(&text).map_err(|source| ScenarioError::Parse {
            path: path.display().to_string(),
            source,
        })
    }

    pub fn parse(text: &str) -> Result<Self, serde_yaml_ng::Error> {
        serde_yaml_ng::from_str(text)
    }

    /// Number of revisions the scenario creates.
    pub fn revision_count(&self) -> u64 {
        self.services
            .iter()
            .map(|s| u64::from(s.count) * u64::from(s.revisions))
            .sum()
    }
}

impl ServiceSpec {
    /// The concrete service names this spec creates.
    pub fn names(&self) -> Vec<String> {
        if self.count <= 1 {
            vec![self.name.clone()]
        } else {
            (0..self.count)
                .map(|i| format!("{}-{i}", self.name))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn shipped_scenarios_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            Scenario::load(&path).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            n += 1;
        }
        assert!(n >= 2);
        let scale = Scenario::load(&Path::new(dir).join("scale-10k.yaml")).unwrap();
        assert_eq!(scale.revision_count(), 10_000);
    }

    #[test]
    fn distributions_stay_in_range_and_replay() {
        let mut a = rand::rngs::StdRng::seed_from_u64(7);
        let mut b = rand::rngs::StdRng::seed_from_u64(7);
        let d = Dist::LogNormal {
            median: 1_000,
            sigma: 0.3,
        };
        let xs: Vec<u64> = (0..100).map(|_| d.sample(&mut a)).collect();
        let ys: Vec<u64> = (0..100).map(|_| d.sample(&mut b)).collect();
        assert_eq!(xs, ys);
        let u = Dist::Uniform { min: 10, max: 20 };
        assert!((0..100).all(|_| (10..=20).contains(&u.sample(&mut a))));
        let parsed: Dist = serde_yaml_ng::from_str("{median: 900, sigma: 0.2}").unwrap();
        assert_eq!(
            parsed,
            Dist::LogNormal {
                median: 900,
                sigma: 0.2
            }
        );
    }
}
