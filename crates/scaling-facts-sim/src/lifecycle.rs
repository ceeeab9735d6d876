//! One wake, step by step, and the way back to zero.
//!
//! The steps write what Knative and the kubelet write, in their order (docs/knative.md, "A wake's writes" and "Pod phases"):
//! Deployment replicas, PA desiredScale and `Active=Unknown Queued`, the Revision, then the
//! pod through Pending, scheduled, ContainerCreating, running and ready, then PA
//! actualScale and `Active=True`. Between steps the task checks its epoch: a scale-down
//! in the meantime ends it.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::json;
use tokio::time::Instant;

use super::cluster::Cluster;
use super::control::Stopped;
use super::knative::{self as kn, condition, container_statuses, set_condition};
use super::objects::k8s_time;
use super::resources::{DEPLOYMENT, POD, POD_AUTOSCALER, REVISION};
use super::scenario::FailureMode;
use super::truth::TruthWake;
use scaling_facts_api::{Outcome, WakeKind};

type Key = (String, String);

/// Between the two writes of the KPA's reconcile.
const KPA_WRITE_GAP: Duration = Duration::from_millis(3);
/// The ReplicaSet controller's delay between the Deployment scale-up and the pod.
const POD_CREATE_DELAY: Duration = Duration::from_millis(20);
const IDLE_POLL: Duration = Duration::from_millis(100);
/// A revision pod's `terminationGracePeriodSeconds`, which its deletion asks for.
const POD_GRACE_SECONDS: i64 = 30;

impl Cluster {
    fn current(&self, key: &Key, epoch: u64) -> bool {
        self.control_epoch(key) == Some(epoch)
    }

    /// Sleeps, then tells whether the wake is still the current one.
    async fn step(&self, key: &Key, epoch: u64, ms: u64) -> bool {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.current(key, epoch)
    }

    fn set_pods(&self, ns: &str, pods: &[String], f: impl Fn(&mut serde_json::Value)) {
        let mut objects = self.lock();
        for p in pods {
            let _ = objects.update(POD, ns, p, &f);
        }
    }

    pub(crate) async fn run_wake(
        self: &Arc<Self>,
        key: &Key,
        epoch: u64,
        kind: WakeKind,
        replicas: u32,
    ) {
        let (ns, name) = (key.0.clone(), key.1.clone());
        let Some((id, profile, samples)) = self.control_wake_inputs(key) else {
            return;
        };
        let settings = self.settings_of(&id.annotations);
        let (prov, pull, start) = samples;
        let user = id.container["name"]
            .as_str()
            .unwrap_or(kn::USER_CONTAINER)
            .to_owned();
        let began = Instant::now();
        let timeout = Duration::from_secs(settings.activation_timeout_s());

        // 1. The autoscaler's writes, two API calls of one reconcile a few milliseconds
        // apart: the Deployment's scale and the PA status, in the order the scenario
        // asks for, then the Revision. A wake's PA may still show the `TimedOut` of the
        // last one until its status is written.
        let started_at = Utc::now();
        let scale = |cluster: &Cluster| {
            let _ = cluster
                .lock()
                .update(DEPLOYMENT, &ns, &id.deployment_name(), |d| {
                    d["spec"]["replicas"] = json!(replicas)
                });
        };
        let status = |cluster: &Cluster| {
            let _ = cluster.lock().update(POD_AUTOSCALER, &ns, &name, |pa| {
                pa["status"]["desiredScale"] = json!(replicas);
                for c in ["Active", "Ready"] {
                    set_condition(
                        pa,
                        condition(c, "Unknown", Some("Queued"), Some(kn::QUEUED), started_at),
                    );
                }
            });
        };
        let deployment_first = kind == WakeKind::Wake && self.control.deployment_first();
        if deployment_first {
            scale(self);
        } else {
            status(self);
        }
        tokio::time::sleep(KPA_WRITE_GAP).await;
        if deployment_first {
            status(self);
        } else if kind == WakeKind::Wake {
            scale(self);
        }
        let _ = self.lock().update(REVISION, &ns, &name, |r| {
            r["status"]["desiredReplicas"] = json!(replicas);
            set_condition(
                r,
                kn::revision_active("Unknown", Some("Queued"), Some(kn::QUEUED), Utc::now()),
            );
        });
        let truth = self.truth.begin(TruthWake {
            namespace: ns.clone(),
            service: id.service.clone(),
            revision: name.clone(),
            revision_uid: id.uid.clone(),
            kind,
            started_at,
            scheduled_at: None,
            running_at: None,
            ended_at: None,
            outcome: None,
            failure_reason: None,
        });
        self.control_set_truth(key, truth);

        // 2. The ReplicaSet creates the pods: Pending, not yet scheduled.
        if !self
            .step(key, epoch, POD_CREATE_DELAY.as_millis() as u64)
            .await
        {
            return;
        }
        let pods: Vec<String> = (0..replicas.max(1))
            .map(|_| self.next_pod_name(&id))
            .collect();
        {
            let now = Utc::now();
            let mut objects = self.lock();
            for p in &pods {
                let _ = objects.create_with_status(POD, &ns, kn::pod(&id, p, now));
            }
        }
        self.control_set_pods(key, pods.clone());

        // 3. Provisioning: until the scheduler binds the pod.
        if !self.step(key, epoch, prov).await {
            return;
        }
        if profile.failure == Some(FailureMode::Unschedulable) {
            let now = Utc::now();
            self.set_pods(&ns, &pods, |p| {
                set_condition(
                    p,
                    condition(
                        "PodScheduled",
                        "False",
                        Some("Unschedulable"),
                        Some("0/3 nodes are available: 3 Insufficient cpu."),
                        now,
                    ),
                );
            });
            return self
                .fail_after(key, epoch, began + timeout, "Unschedulable")
                .await;
        }
        let scheduled = Utc::now();
        self.set_pods(&ns, &pods, |p| {
            set_condition(p, condition("PodScheduled", "True", None, None, scheduled));
            p["spec"]["nodeName"] = json!("sim-node-1");
            set_condition(p, condition("Initialized", "True", None, None, scheduled));
            set_condition(
                p,
                condition("PodReadyToStartContainers", "True", None, None, scheduled),
            );
            set_condition(
                p,
                condition(
                    "ContainersReady",
                    "False",
                    Some("ContainersNotReady"),
                    None,
                    scheduled,
                ),
            );
            set_condition(
                p,
                condition(
                    "Ready",
                    "False",
                    Some("ContainersNotReady"),
                    None,
                    scheduled,
                ),
            );
            p["status"]["containerStatuses"] = container_statuses(
                &user,
                json!({"waiting": {"reason": "ContainerCreating"}}),
                false,
                0,
                None,
            );
        });
        self.truth
            .update(truth, |t| t.scheduled_at = Some(scheduled));

        // 4. Pulling the image and creating the containers.
        if !self.step(key, epoch, pull).await {
            return;
        }
        if profile.failure == Some(FailureMode::ImagePullBackoff) {
            let mut back_off = false;
            while Instant::now() < began + timeout {
                let reason = if back_off {
                    "ImagePullBackOff"
                } else {
                    "ErrImagePull"
                };
                let message = format!(
                    "Back-off pulling image \"registry.example/{}:v1\"",
                    id.service
                );
                self.set_pods(&ns, &pods, |p| {
                    p["status"]["containerStatuses"] = container_statuses(
                        &user,
                        json!({"waiting": {"reason": reason, "message": message}}),
                        false,
                        0,
                        None,
                    );
                });
                back_off = !back_off;
                if !self.step(key, epoch, 1_000).await {
                    return;
                }
            }
            return self
                .fail_after(key, epoch, began + timeout, "ImagePullBackOff")
                .await;
        }
        let running = Utc::now();
        let running_state = json!({"running": {"startedAt": k8s_time(running)}});
        self.set_pods(&ns, &pods, |p| {
            p["status"]["phase"] = json!("Running");
            p["status"]["podIP"] = json!("10.0.0.10");
            p["status"]["containerStatuses"] =
                container_statuses(&user, running_state.clone(), false, 0, None);
        });
        self.truth.update(truth, |t| t.running_at = Some(running));

        // 5. Starting: until the readiness probe passes.
        match profile.failure {
            Some(FailureMode::CrashLoop) => {
                let mut restarts = 0;
                while Instant::now() < began + timeout {
                    if !self.step(key, epoch, (start / 2).max(100)).await {
                        return;
                    }
                    restarts += 1;
                    let exited = json!({"terminated": {"exitCode": 1, "reason": "Error",
                        "startedAt": k8s_time(running), "finishedAt": k8s_time(Utc::now())}});
                    self.set_pods(&ns, &pods, |p| {
                        p["status"]["containerStatuses"] = container_statuses(
                            &user,
                            json!({"waiting": {"reason": "CrashLoopBackOff",
                                "message": "back-off 10s restarting failed container"}}),
                            false,
                            restarts,
                            Some(exited.clone()),
                        );
                    });
                    if !self.step(key, epoch, 1_000).await {
                        return;
                    }
                }
                return self
                    .fail_after(key, epoch, began + timeout, "CrashLoopBackOff")
                    .await;
            }
            Some(FailureMode::NeverReady) => {
                return self
                    .fail_after(key, epoch, began + timeout, "TimedOut")
                    .await;
            }
            _ => {}
        }
        if !self.step(key, epoch, start).await {
            return;
        }
        let ready = Utc::now();
        let n = pods.len() as u32;
        {
            let mut objects = self.lock();
            for p in &pods {
                let _ = objects.update(POD, &ns, p, |p| {
                    set_condition(p, condition("ContainersReady", "True", None, None, ready));
                    set_condition(p, condition("Ready", "True", None, None, ready));
                    p["status"]["containerStatuses"] =
                        container_statuses(&user, running_state.clone(), true, 0, None);
                });
            }
            let _ = objects.update(POD_AUTOSCALER, &ns, &name, |pa| {
                pa["status"]["actualScale"] = json!(n);
                for c in ["Active", "Ready", "SKSReady", "ScaleTargetInitialized"] {
                    set_condition(pa, condition(c, "True", None, None, ready));
                }
            });
            let _ = objects.update(DEPLOYMENT, &ns, &id.deployment_name(), |d| {
                d["status"]["replicas"] = json!(n);
                d["status"]["readyReplicas"] = json!(n);
                d["status"]["availableReplicas"] = json!(n);
            });
            let _ = objects.update(REVISION, &ns, &name, |r| {
                r["status"]["actualReplicas"] = json!(n);
                for c in ["ResourcesAvailable", "ContainerHealthy", "Ready"] {
                    set_condition(r, condition(c, "True", None, None, ready));
                }
                set_condition(r, kn::revision_active("True", None, None, Utc::now()));
            });
        }
        self.truth.update(truth, |t| {
            t.ended_at = Some(ready);
            t.outcome = Some(Outcome::Served);
        });
        if !self.control_served(key, epoch) {
            return;
        }
        if kind == WakeKind::Initial {
            self.route_to(&ns, &id.service, &name);
        }
        if settings.min_scale == 0 {
            self.watch_idle(key, epoch, Duration::from_secs(settings.idle_window_s()))
                .await;
        }
    }

    /// Holds the failing wake until Knative's activation timeout, then gives up as the KPA
    /// does: `Active=False TimedOut` and back to zero.
    async fn fail_after(self: &Arc<Self>, key: &Key, epoch: u64, at: Instant, reason: &str) {
        tokio::time::sleep_until(at).await;
        if !self.current(key, epoch) {
            return;
        }
        let now = Utc::now();
        {
            let mut objects = self.lock();
            let _ = objects.update(POD_AUTOSCALER, &key.0, &key.1, |pa| {
                pa["status"]["desiredScale"] = json!(0);
                set_condition(
                    pa,
                    condition(
                        "Active",
                        "False",
                        Some("TimedOut"),
                        Some(kn::TIMED_OUT),
                        now,
                    ),
                );
                set_condition(
                    pa,
                    condition("Ready", "False", Some("TimedOut"), Some(kn::TIMED_OUT), now),
                );
            });
            let _ = objects.update(REVISION, &key.0, &key.1, |r| {
                r["status"]["desiredReplicas"] = json!(0);
                set_condition(
                    r,
                    kn::revision_active("False", Some("TimedOut"), Some(kn::TIMED_OUT), Utc::now()),
                );
            });
        }
        self.scale_down(key, Some((Outcome::Failed, reason.to_owned())));
    }

    /// Waits until no request was in flight for the idle window, then scales to zero.
    async fn watch_idle(self: &Arc<Self>, key: &Key, epoch: u64, window: Duration) {
        loop {
            tokio::time::sleep(IDLE_POLL).await;
            match self.control_idle_since(key, epoch) {
                None => return,
                Some(Some(since)) if since.elapsed() >= window => {
                    self.scale_down(key, None);
                    return;
                }
                Some(_) => {}
            }
        }
    }

    /// Scales a revision to zero now. A wake still in progress ends as `aborted` (or with
    /// the given outcome).
    pub fn scale_down(self: &Arc<Self>, key: &Key, ending: Option<(Outcome, String)>) {
        let Some(Stopped {
            pods,
            truth,
            was_waking,
            deployment,
            terminating_ms,
        }) = self.control_stop(key, ending.as_ref().map(|e| e.1.clone()))
        else {
            return;
        };
        let (ns, name) = key;
        let now = Utc::now();
        if let Some(t) = truth.filter(|_| was_waking) {
            let (outcome, reason) = ending.map_or((Outcome::Aborted, None), |(o, r)| (o, Some(r)));
            self.truth.update(t, |w| {
                w.ended_at = Some(Utc::now());
                w.outcome = Some(outcome);
                w.failure_reason = reason;
            });
        }
        {
            let mut objects = self.lock();
            let _ = objects.update(DEPLOYMENT, ns, &deployment, |d| {
                d["spec"]["replicas"] = json!(0);
                d["status"]["readyReplicas"] = json!(0);
                d["status"]["availableReplicas"] = json!(0);
            });
            let _ = objects.update(POD_AUTOSCALER, ns, name, |pa| {
                pa["status"]["desiredScale"] = json!(0);
                pa["status"]["actualScale"] = json!(0);
                if kn::timed_out(pa) {
                    return;
                }
                kn::pa_no_traffic(pa, now);
                set_condition(pa, kn::sks_not_ready(now));
            });
            let _ = objects.update(REVISION, ns, name, |r| {
                r["status"]["desiredReplicas"] = json!(0);
                r["status"]["actualReplicas"] = json!(0);
                if kn::timed_out(r) {
                    return;
                }
                set_condition(
                    r,
                    kn::revision_active(
                        "False",
                        Some("NoTraffic"),
                        Some(kn::NO_TRAFFIC),
                        Utc::now(),
                    ),
                );
            });
            for p in &pods {
                let _ = objects.update(POD, ns, p, |p| {
                    // As the API server writes it: when the grace period ends.
                    let ends = now + chrono::Duration::seconds(POD_GRACE_SECONDS);
                    p["metadata"]["deletionTimestamp"] = json!(k8s_time(ends));
                    p["metadata"]["deletionGracePeriodSeconds"] = json!(POD_GRACE_SECONDS);
                    set_condition(
                        p,
                        condition("Ready", "False", Some("ContainersNotReady"), None, now),
                    );
                });
            }
        }
        let cluster = self.clone();
        let ns = ns.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(terminating_ms)).await;
            let mut objects = cluster.lock();
            for p in &pods {
                let _ = objects.delete(POD, &ns, p);
            }
            let _ = objects.update(DEPLOYMENT, &ns, &deployment, |d| {
                d["status"]["replicas"] = json!(0)
            });
        });
    }
}
