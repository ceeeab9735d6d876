//! The simulated control plane's own reading of a revision's Knative settings, written
//! from docs/knative.md, "Settings": annotation first (the new key before its legacy alias), then the
//! top-level keys of `config-autoscaler` / `config-deployment`, then Knative's defaults.
//!
//! The simulator is the test bed's truth, so it must not compute that truth with the code
//! under test (the service's `measure::knobs`); this is a second, separate reading of the same
//! rules.

use std::collections::BTreeMap;

/// What the simulated KPA needs to know about one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Effective min-scale: at least 1 when scale to zero is off or the class is HPA.
    pub min_scale: u32,
    /// Replicas at creation: max(min-scale, initial-scale).
    pub initial_replicas: u32,
    pub stable_window_s: u64,
    pub scale_down_delay_s: u64,
    pub retention_s: u64,
    pub progress_deadline_s: u64,
}

/// The KPA gives up this long after the progress deadline (`activationTimeoutBuffer`).
const ACTIVATION_BUFFER_S: u64 = 30;

fn pick<'a>(annotations: &'a BTreeMap<String, String>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| annotations.get(*k))
        .map(String::as_str)
}

/// Seconds of a Go duration made of whole-unit parts (`90s`, `1m30s`, `1h`), or of a bare
/// number of seconds.
fn seconds(text: &str) -> Option<u64> {
    let text = text.trim();
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let (mut total, mut digits) = (0u64, String::new());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        total += match c {
            'h' => n * 3_600,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                n / 1_000
            }
            'm' => n * 60,
            's' => n,
            _ => return None,
        };
    }
    digits.is_empty().then_some(total)
}

impl Settings {
    pub fn resolve(
        annotations: &BTreeMap<String, String>,
        autoscaler: &BTreeMap<String, String>,
        deployment: &BTreeMap<String, String>,
    ) -> Self {
        let cm = |key: &str| autoscaler.get(key).map(String::as_str);
        let int = |a: Option<&str>, key: &str, default: u32| {
            a.or(cm(key))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        let dur = |a: Option<&str>, key: &str, default: u64| {
            a.or(cm(key)).and_then(seconds).unwrap_or(default)
        };
        let class = pick(annotations, &["autoscaling.knative.dev/class"])
            .or(cm("pod-autoscaler-class"))
            .unwrap_or("kpa.autoscaling.knative.dev");
        let to_zero = cm("enable-scale-to-zero").is_none_or(|v| v.trim() != "false");
        let mut min_scale = int(
            pick(
                annotations,
                &[
                    "autoscaling.knative.dev/min-scale",
                    "autoscaling.knative.dev/minScale",
                ],
            ),
            "min-scale",
            0,
        );
        if !to_zero || class == "hpa.autoscaling.knative.dev" {
            min_scale = min_scale.max(1);
        }
        let zero_initial = cm("allow-zero-initial-scale").is_some_and(|v| v.trim() == "true");
        let initial = int(
            pick(
                annotations,
                &[
                    "autoscaling.knative.dev/initial-scale",
                    "autoscaling.knative.dev/initialScale",
                ],
            ),
            "initial-scale",
            1,
        );
        let initial = if zero_initial {
            initial
        } else {
            initial.max(1)
        };
        let deadline = pick(annotations, &["serving.knative.dev/progress-deadline"])
            .or(deployment.get("progress-deadline").map(String::as_str))
            .or(deployment.get("progressDeadline").map(String::as_str))
            .and_then(seconds)
            .filter(|s| *s > 0)
            .unwrap_or(600);
        Self {
            min_scale,
            initial_replicas: initial.max(min_scale),
            stable_window_s: dur(
                pick(annotations, &["autoscaling.knative.dev/window"]),
                "stable-window",
                60,
            ),
            scale_down_delay_s: dur(
                pick(
                    annotations,
                    &[
                        "autoscaling.knative.dev/scale-down-delay",
                        "autoscaling.knative.dev/scaleDownDelay",
                    ],
                ),
                "scale-down-delay",
                0,
            ),
            retention_s: dur(
                pick(
                    annotations,
                    &[
                        "autoscaling.knative.dev/scale-to-zero-pod-retention-period",
                        "autoscaling.knative.dev/scaleToZeroPodRetentionPeriod",
                    ],
                ),
                "scale-to-zero-pod-retention-period",
                0,
            ),
            progress_deadline_s: deadline,
        }
    }

    /// How long the KPA keeps activating before `TimedOut`.
    pub fn activation_timeout_s(&self) -> u64 {
        self.progress_deadline_s + ACTIVATION_BUFFER_S
    }

    /// How long without requests before the simulated KPA scales to zero: W + D + R, the
    /// case where the activator is already in the path.
    pub fn idle_window_s(&self) -> u64 {
        self.stable_window_s + self.scale_down_delay_s + self.retention_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn defaults_are_knatives() {
        let s = Settings::resolve(&map(&[]), &map(&[]), &map(&[]));
        assert_eq!(
            (
                s.min_scale,
                s.initial_replicas,
                s.idle_window_s(),
                s.activation_timeout_s()
            ),
            (0, 1, 60, 630)
        );
    }

    #[test]
    fn annotations_win_and_the_new_key_beats_its_alias() {
        let a = map(&[
            ("autoscaling.knative.dev/min-scale", "2"),
            ("autoscaling.knative.dev/minScale", "5"),
            ("autoscaling.knative.dev/initial-scale", "3"),
            ("autoscaling.knative.dev/window", "1m30s"),
            ("serving.knative.dev/progress-deadline", "1s"),
        ]);
        let s = Settings::resolve(&a, &map(&[("stable-window", "6s")]), &map(&[]));
        assert_eq!(
            (s.min_scale, s.initial_replicas, s.stable_window_s),
            (2, 3, 90)
        );
        assert_eq!(s.activation_timeout_s(), 31);
    }

    #[test]
    fn zero_initial_scale_needs_the_cluster_to_allow_it() {
        let a = map(&[("autoscaling.knative.dev/initial-scale", "0")]);
        assert_eq!(
            Settings::resolve(&a, &map(&[]), &map(&[])).initial_replicas,
            1
        );
        let allow = map(&[("allow-zero-initial-scale", "true")]);
        assert_eq!(Settings::resolve(&a, &allow, &map(&[])).initial_replicas, 0);
        let off = map(&[("enable-scale-to-zero", "false")]);
        assert_eq!(Settings::resolve(&a, &off, &map(&[])).min_scale, 1);
    }
}
