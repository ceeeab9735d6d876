//! A revision's effective scaling settings, resolved as Knative resolves them: the
//! revision's annotation (new key, then its legacy alias), else `config-autoscaler` /
//! `config-deployment`, else Knative's built-in default (docs/knative.md, "Settings").
//!
//! From them follow the `scaling` facts: `min_instances` and the idle window, whose
//! guaranteed minimum is W + D + R and whose upper bound is W + D + max(R, G).

use std::collections::BTreeMap;

pub const KPA_CLASS: &str = "kpa.autoscaling.knative.dev";
pub const HPA_CLASS: &str = "hpa.autoscaling.knative.dev";
/// Knative waits this long past the progress deadline before giving up on an activation.
pub const ACTIVATION_TIMEOUT_BUFFER_SECONDS: u64 = 30;

const MIN_SCALE: [&str; 2] = [
    "autoscaling.knative.dev/min-scale",
    "autoscaling.knative.dev/minScale",
];
const WINDOW: [&str; 1] = ["autoscaling.knative.dev/window"];
const SCALE_DOWN_DELAY: [&str; 2] = [
    "autoscaling.knative.dev/scale-down-delay",
    "autoscaling.knative.dev/scaleDownDelay",
];
const RETENTION: [&str; 2] = [
    "autoscaling.knative.dev/scale-to-zero-pod-retention-period",
    "autoscaling.knative.dev/scaleToZeroPodRetentionPeriod",
];
const INITIAL_SCALE: [&str; 2] = [
    "autoscaling.knative.dev/initial-scale",
    "autoscaling.knative.dev/initialScale",
];
const CLASS: [&str; 1] = ["autoscaling.knative.dev/class"];
const PROGRESS_DEADLINE: [&str; 1] = ["serving.knative.dev/progress-deadline"];

/// Parses a Go duration (`90s`, `1m30s`, `1.5h`, `250ms`) into whole milliseconds.
pub fn parse_go_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    if text == "0" {
        return Some(0);
    }
    let mut rest = text;
    let mut total = 0.0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let value: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let ms_per = match &rest[..unit_len] {
            "ns" => 1e-6,
            "us" | "µs" => 1e-3,
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * ms_per;
    }
    Some(total.round() as u64)
}

fn lookup<'a>(annotations: &'a BTreeMap<String, String>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| annotations.get(*k))
        .map(String::as_str)
}

fn seconds(text: Option<&str>) -> Option<u64> {
    text.and_then(parse_go_duration_ms).map(|ms| ms / 1_000)
}

/// The cluster-wide defaults from `config-autoscaler` and `config-deployment`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDefaults {
    pub enable_scale_to_zero: bool,
    pub stable_window_seconds: u64,
    pub grace_period_seconds: u64,
    pub retention_seconds: u64,
    pub scale_down_delay_seconds: u64,
    pub min_scale: u32,
    pub initial_scale: u32,
    pub allow_zero_initial_scale: bool,
    pub pod_autoscaler_class: String,
    pub progress_deadline_seconds: u64,
}

impl Default for ClusterDefaults {
    /// Knative's built-in defaults (`pkg/autoscaler/config/config.go`, `pkg/deployment/config.go`).
    fn default() -> Self {
        Self {
            enable_scale_to_zero: true,
            stable_window_seconds: 60,
            grace_period_seconds: 30,
            retention_seconds: 0,
            scale_down_delay_seconds: 0,
            min_scale: 0,
            initial_scale: 1,
            allow_zero_initial_scale: false,
            pod_autoscaler_class: KPA_CLASS.to_owned(),
            progress_deadline_seconds: 600,
        }
    }
}

impl ClusterDefaults {
    /// Reads the top-level keys of both ConfigMaps; `_example` is documentation and is
    /// ignored, as Knative ignores it. Keys that do not parse keep the built-in default.
    pub fn from_config_maps(
        autoscaler: &BTreeMap<String, String>,
        deployment: &BTreeMap<String, String>,
    ) -> Self {
        let d = Self::default();
        let get = |k: &str| autoscaler.get(k).map(String::as_str);
        Self {
            enable_scale_to_zero: get("enable-scale-to-zero")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.enable_scale_to_zero),
            stable_window_seconds: seconds(get("stable-window")).unwrap_or(d.stable_window_seconds),
            grace_period_seconds: seconds(get("scale-to-zero-grace-period"))
                .unwrap_or(d.grace_period_seconds),
            retention_seconds: seconds(get("scale-to-zero-pod-retention-period"))
                .unwrap_or(d.retention_seconds),
            scale_down_delay_seconds: seconds(get("scale-down-delay"))
                .unwrap_or(d.scale_down_delay_seconds),
            min_scale: get("min-scale")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.min_scale),
            initial_scale: get("initial-scale")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.initial_scale),
            allow_zero_initial_scale: get("allow-zero-initial-scale")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.allow_zero_initial_scale),
            pod_autoscaler_class: get("pod-autoscaler-class")
                .map(str::to_owned)
                .unwrap_or(d.pod_autoscaler_class),
            progress_deadline_seconds: seconds(
                deployment
                    .get("progress-deadline")
                    .or_else(|| deployment.get("progressDeadline"))
                    .map(String::as_str),
            )
            .filter(|s| *s > 0)
            .unwrap_or(d.progress_deadline_seconds),
        }
    }
}

/// A revision's effective settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    pub min_instances: u32,
    /// W
    pub stable_window_seconds: u64,
    /// D
    pub scale_down_delay_seconds: u64,
    /// R (0 when the revision is unreachable)
    pub retention_seconds: u64,
    /// G
    pub grace_period_seconds: u64,
    pub progress_deadline_seconds: u64,
    /// Replicas at creation: max(min-scale, initial-scale), where initial-scale may be 0
    /// only if the cluster allows it. 0 means the revision is born at zero and its first
    /// pods are a wake, not an initial start.
    pub initial_replicas: u32,
}

impl Knobs {
    /// `reachable` is false for revisions no route points at: Knative then ignores
    /// min-scale and pod retention.
    pub fn resolve(
        annotations: &BTreeMap<String, String>,
        cluster: &ClusterDefaults,
        reachable: bool,
    ) -> Self {
        let class = lookup(annotations, &CLASS).unwrap_or(&cluster.pod_autoscaler_class);
        let mut min = lookup(annotations, &MIN_SCALE)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(cluster.min_scale);
        if !reachable {
            min = 0;
        }
        if !cluster.enable_scale_to_zero || class == HPA_CLASS {
            min = min.max(1);
        }
        let floor = u32::from(!cluster.allow_zero_initial_scale);
        let initial = lookup(annotations, &INITIAL_SCALE)
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| *n >= floor)
            .unwrap_or(cluster.initial_scale.max(floor));
        Self {
            min_instances: min,
            stable_window_seconds: seconds(lookup(annotations, &WINDOW))
                .unwrap_or(cluster.stable_window_seconds),
            scale_down_delay_seconds: seconds(lookup(annotations, &SCALE_DOWN_DELAY))
                .unwrap_or(cluster.scale_down_delay_seconds),
            retention_seconds: if reachable {
                seconds(lookup(annotations, &RETENTION)).unwrap_or(cluster.retention_seconds)
            } else {
                0
            },
            grace_period_seconds: cluster.grace_period_seconds,
            progress_deadline_seconds: seconds(lookup(annotations, &PROGRESS_DEADLINE))
                .filter(|s| *s > 0)
                .unwrap_or(cluster.progress_deadline_seconds),
            initial_replicas: initial.max(min),
        }
    }

    /// Guaranteed minimum idle window: W + D + R.
    pub fn idle_timeout_seconds(&self) -> u64 {
        self.stable_window_seconds + self.scale_down_delay_seconds + self.retention_seconds
    }

    /// Upper bound of the idle window: W + D + max(R, G).
    pub fn idle_timeout_upper_bound_seconds(&self) -> u64 {
        self.stable_window_seconds
            + self.scale_down_delay_seconds
            + self.retention_seconds.max(self.grace_period_seconds)
    }

    /// How long Knative keeps trying to activate before it gives up (`TimedOut`).
    pub fn activation_timeout_seconds(&self) -> u64 {
        self.progress_deadline_seconds + ACTIVATION_TIMEOUT_BUFFER_SECONDS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration_ms("90s"), Some(90_000));
        assert_eq!(parse_go_duration_ms("1m30s"), Some(90_000));
        assert_eq!(parse_go_duration_ms("1.5h"), Some(5_400_000));
        assert_eq!(parse_go_duration_ms("250ms"), Some(250));
        assert_eq!(parse_go_duration_ms("0"), Some(0));
        assert_eq!(parse_go_duration_ms("0s"), Some(0));
        assert_eq!(parse_go_duration_ms("10"), None);
        assert_eq!(parse_go_duration_ms("ten s"), None);
    }

    #[test]
    fn defaults_give_sixty_seconds_and_scale_to_zero() {
        let k = Knobs::resolve(&BTreeMap::new(), &ClusterDefaults::default(), true);
        assert_eq!(k.min_instances, 0);
        assert_eq!(k.idle_timeout_seconds(), 60);
        assert_eq!(k.idle_timeout_upper_bound_seconds(), 90);
        assert_eq!(k.activation_timeout_seconds(), 630);
    }

    #[test]
    fn annotations_win_and_new_keys_beat_legacy_aliases() {
        let a = map(&[
            ("autoscaling.knative.dev/min-scale", "2"),
            ("autoscaling.knative.dev/minScale", "5"),
            ("autoscaling.knative.dev/window", "120s"),
            ("autoscaling.knative.dev/scaleDownDelay", "30s"),
            (
                "autoscaling.knative.dev/scale-to-zero-pod-retention-period",
                "10m",
            ),
            ("serving.knative.dev/progress-deadline", "120s"),
        ]);
        let k = Knobs::resolve(&a, &ClusterDefaults::default(), true);
        assert_eq!(k.min_instances, 2);
        assert_eq!(k.idle_timeout_seconds(), 120 + 30 + 600);
        assert_eq!(k.idle_timeout_upper_bound_seconds(), 750);
        assert_eq!(k.activation_timeout_seconds(), 150);
        let unreachable = Knobs::resolve(&a, &ClusterDefaults::default(), false);
        assert_eq!(
            (unreachable.min_instances, unreachable.retention_seconds),
            (0, 0)
        );
    }

    #[test]
    fn config_maps_override_defaults() {
        let cluster = ClusterDefaults::from_config_maps(
            &map(&[
                ("stable-window", "30s"),
                ("scale-down-delay", "15s"),
                ("min-scale", "1"),
                ("_example", "stable-window: 999s"),
            ]),
            &map(&[("progress-deadline", "300s")]),
        );
        let k = Knobs::resolve(&BTreeMap::new(), &cluster, true);
        assert_eq!((k.min_instances, k.idle_timeout_seconds()), (1, 45));
        assert_eq!(k.activation_timeout_seconds(), 330);
        let off = ClusterDefaults::from_config_maps(
            &map(&[("enable-scale-to-zero", "false")]),
            &BTreeMap::new(),
        );
        assert_eq!(
            Knobs::resolve(&BTreeMap::new(), &off, true).min_instances,
            1
        );
        let hpa = map(&[("autoscaling.knative.dev/class", HPA_CLASS)]);
        assert_eq!(
            Knobs::resolve(&hpa, &ClusterDefaults::default(), true).min_instances,
            1
        );
    }

    #[test]
    fn born_at_zero_only_where_the_cluster_allows_it() {
        let zero = map(&[("autoscaling.knative.dev/initial-scale", "0")]);
        let strict = ClusterDefaults::default();
        assert_eq!(Knobs::resolve(&zero, &strict, true).initial_replicas, 1);
        let allow = ClusterDefaults::from_config_maps(
            &map(&[("allow-zero-initial-scale", "true")]),
            &BTreeMap::new(),
        );
        assert_eq!(Knobs::resolve(&zero, &allow, true).initial_replicas, 0);
        let min = map(&[
            ("autoscaling.knative.dev/initialScale", "0"),
            ("autoscaling.knative.dev/min-scale", "2"),
        ]);
        assert_eq!(Knobs::resolve(&min, &allow, true).initial_replicas, 2);
        let three = map(&[("autoscaling.knative.dev/initial-scale", "3")]);
        assert_eq!(Knobs::resolve(&three, &strict, true).initial_replicas, 3);
    }
}
