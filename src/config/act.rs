//! The options of what the service does to the cluster rather than read from it (README,
//! "Applying the editor's values"). Everything here is off unless configured.

use std::time::Duration;

use clap::Args;

/// Applying the editor's values to Knative Services, and waking the releases a release
/// declares it calls (`scaling-facts.io/depends-on`).
#[derive(Debug, Clone, Args)]
pub struct ActConfig {
    /// Apply each `PUT config` to the release's Knative Service (server-side apply of its
    /// template's `min-scale` and pod retention, field manager `scaling-facts`). Needs RBAC
    /// to patch Knative Services. Off: desired values are stored and audited only.
    #[arg(
        long,
        env = "SCALING_FACTS_APPLY_CONFIG",
        default_value_t = false,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub apply_config: bool,

    /// Where one request wakes a release at zero: an `http://` URL with `{namespace}`,
    /// `{service}` and `{release}` filled in, e.g. through the cluster's ingress or the
    /// activator. Without it, declared dependencies are not woken.
    #[arg(long, env = "SCALING_FACTS_DEPENDENCY_WAKE_URL")]
    pub dependency_wake_url: Option<String>,

    /// A dependency is woken at most once in this many seconds, however many releases
    /// that call it start waking.
    #[arg(
        long,
        env = "SCALING_FACTS_DEPENDENCY_WAKE_COOLDOWN_SECONDS",
        default_value_t = 30
    )]
    pub dependency_wake_cooldown_seconds: u64,
}

impl ActConfig {
    pub fn dependency_wake_cooldown(&self) -> Duration {
        Duration::from_secs(self.dependency_wake_cooldown_seconds)
    }
}
