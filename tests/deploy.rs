//! deploy/ and the Dockerfile, checked offline: both overlays render with `kubectl
//! kustomize` and every object validates against its schema; the alerts and the
//! dashboard name only metrics the service exports; the RBAC grants exactly the requests
//! the service makes of a Kubernetes API server; the image builds the service alone and
//! runs it as a non-root user with its data on a volume. (checkov runs over the same
//! rendered overlays in `.ci/run`.)

mod common;
#[path = "deploy/rbac.rs"]
mod rbac;
#[path = "deploy/schemas.rs"]
mod schemas;

use std::collections::BTreeSet;
use std::process::Command;

use clap::CommandFactory;
use scaling_facts_sim::audit::Authorized;
use serde::Deserialize;
use serde_json::Value;

use common::{RunningService, TestDb, eventually, start_sim};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const OVERLAYS: [&str; 2] = ["single", "ha"];

/// The objects `kubectl kustomize` renders for an overlay. kubectl is required: CI
/// installs it (Debian's kubernetes-client) when the machine lacks it.
fn render(overlay: &str) -> Vec<Value> {
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let out = Command::new(&kubectl)
        .args(["kustomize", &format!("{ROOT}/deploy/overlays/{overlay}")])
        .output()
        .unwrap_or_else(|e| {
            panic!("{kubectl} is required to render deploy/ (kubernetes-client): {e}")
        });
    assert!(
        out.status.success(),
        "kustomize {overlay}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).expect("rendered YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

fn the<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let mut found = objects.iter().filter(|o| o["kind"] == kind);
    let one = found.next().unwrap_or_else(|| panic!("no {kind}"));
    assert!(found.next().is_none(), "more than one {kind}");
    one
}

/// Every environment variable `serve` reads.
fn serve_env_names() -> BTreeSet<String> {
    let cli = scaling_facts::config::Cli::command();
    let serve = cli.find_subcommand("serve").unwrap();
    serve
        .get_arguments()
        .filter_map(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn overlays_render_and_every_object_validates() {
    let known = serve_env_names();
    let document = scaling_facts::serve::openapi::document();
    for overlay in OVERLAYS {
        let objects = render(overlay);
        let errors: Vec<String> = objects
            .iter()
            .filter_map(|o| schemas::validate(o).err())
            .collect();
        assert!(errors.is_empty(), "{overlay}:\n{}", errors.join("\n"));
        let kinds: BTreeSet<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
        for kind in [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Deployment",
            "Service",
            "NetworkPolicy",
            "ServiceMonitor",
            "PrometheusRule",
        ] {
            assert!(kinds.contains(kind), "{overlay} lacks a {kind}");
        }

        // Settings are options the binary reads, not typos it would ignore.
        let settings = the(&objects, "ConfigMap");
        for key in settings["data"].as_object().unwrap().keys() {
            assert!(
                known.contains(key),
                "{overlay}: {key} is not a setting of serve"
            );
        }
        let ms = |key: &str| {
            settings["data"][key]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let deployment = the(&objects, "Deployment");
        let pod = &deployment["spec"]["template"]["spec"];
        let grace_s = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
        assert!(
            grace_s * 1000
                > ms("SCALING_FACTS_DRAIN_DELAY_MS") + ms("SCALING_FACTS_SHUTDOWN_GRACE_MS"),
            "{overlay}: the kubelet would kill a replica still draining"
        );
        let c = &pod["containers"][0];
        for (probe, path) in [
            ("startupProbe", "/alive"),
            ("livenessProbe", "/alive"),
            ("readinessProbe", "/health/ready"),
        ] {
            assert_eq!(c[probe]["httpGet"]["path"], path, "{overlay} {probe}");
            assert!(
                document.contains(&format!("\"{path}\"")),
                "{path} is not a route"
            );
        }
        let sc = &c["securityContext"];
        assert_eq!(sc["readOnlyRootFilesystem"], true);
        assert_eq!(sc["allowPrivilegeEscalation"], false);
        assert_eq!(sc["runAsNonRoot"], true);
        assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        for r in ["requests", "limits"] {
            for what in ["cpu", "memory"] {
                assert!(
                    c["resources"][r][what].is_string(),
                    "{overlay}: no {r}.{what}"
                );
            }
        }
        let env: Vec<&str> = c["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str())
            .collect();
        for name in &env {
            assert!(
                known.contains(*name),
                "{overlay}: {name} is not a setting of serve"
            );
        }
        let volumes = pod["volumes"].as_array().unwrap();
        let data = volumes.iter().find(|v| v["name"] == "data").unwrap();
        match overlay {
            "single" => {
                assert_eq!(deployment["spec"]["replicas"], 1);
                assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
                let claim = data["persistentVolumeClaim"]["claimName"].as_str().unwrap();
                assert_eq!(
                    the(&objects, "PersistentVolumeClaim")["metadata"]["name"],
                    claim
                );
                assert!(data.get("emptyDir").is_none(), "{data}");
            }
            _ => {
                assert_eq!(deployment["spec"]["replicas"], 2);
                assert_eq!(
                    the(&objects, "PodDisruptionBudget")["spec"]["minAvailable"],
                    1
                );
                assert_eq!(
                    env,
                    [
                        "SCALING_FACTS_DATABASE_URL_FILE",
                        "SCALING_FACTS_LEASE_NAME",
                        "SCALING_FACTS_LEASE_NAMESPACE",
                        "SCALING_FACTS_LEASE_IDENTITY"
                    ],
                    "the URL comes from a file, and the replicas share a Lease named by their pods"
                );
                assert!(
                    volumes
                        .iter()
                        .any(|v| v["secret"]["secretName"] == "scaling-facts-database")
                );
            }
        }
    }
}

/// The metric names the service exposes, with the suffixes Prometheus sees. A family
/// appears in the exposition once it has a series, so each gets one first.
fn exported_names() -> BTreeSet<String> {
    use scaling_facts::telemetry::metrics::{
        ApplyLabels, KindLabels, Metrics, PhaseLabels, ServiceLabels, WakeLabels,
    };
    let m = Metrics::new();
    let (namespace, service) = ("n".to_owned(), "s".to_owned());
    let kind = KindLabels {
        kind: "pods".into(),
    };
    m.wakes
        .get_or_create(&WakeLabels {
            namespace: namespace.clone(),
            service: service.clone(),
            kind: "wake".into(),
            outcome: "served".into(),
        })
        .inc();
    m.wake_duration
        .get_or_create(&ServiceLabels {
            namespace: namespace.clone(),
            service: service.clone(),
        })
        .observe(1.0);
    m.config_drift
        .get_or_create(&ServiceLabels {
            namespace: namespace.clone(),
            service: service.clone(),
        })
        .set(1);
    m.config_applies
        .get_or_create(&ApplyLabels {
            outcome: "applied".into(),
        })
        .inc();
    m.wake_phase_duration
        .get_or_create(&PhaseLabels {
            namespace,
            service,
            phase: "starting".into(),
        })
        .observe(1.0);
    m.watch_errors.get_or_create(&kind).inc();
    m.watch_up.get_or_create(&kind).set(1);
    m.watch_last_event_age.get_or_create(&kind).set(1.0);
    m.http
        .for_path("/alive")
        .observe(&axum::http::Method::GET, 200, std::time::Duration::ZERO);
    let text = m.encode();
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let (name, kind) = rest.split_once(' ').unwrap();
        let suffixes: &[&str] = match kind {
            "counter" => &["_total"],
            "histogram" => &["_bucket", "_sum", "_count"],
            "info" => &["_info"],
            _ => &[""],
        };
        names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
    }
    names
}

/// Every `scaling_facts_...` name in a query.
fn metric_refs(query: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = query;
    while let Some(at) = rest.find("scaling_facts_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        refs.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    refs
}

#[test]
fn alerts_and_dashboard_name_exported_metrics() {
    let exported = exported_names();
    assert!(
        exported.contains("scaling_facts_wakes_total"),
        "{exported:?}"
    );
    let objects = render("single");
    let rules = the(&objects, "PrometheusRule");
    let mut queries = Vec::new();
    for group in rules["spec"]["groups"].as_array().unwrap() {
        for rule in group["rules"].as_array().unwrap() {
            assert!(rule["annotations"]["summary"].is_string(), "{rule}");
            queries.push(rule["expr"].as_str().unwrap().to_owned());
        }
    }
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/deploy/grafana/scaling-facts.json")).unwrap(),
    )
    .unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 8, "a panel per question the issue asks");
    for panel in panels {
        for target in panel["targets"].as_array().unwrap() {
            queries.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(q) = variable["query"].as_str() {
            queries.push(q.to_owned());
        }
    }
    let mut unknown = Vec::new();
    for q in &queries {
        let refs = metric_refs(q);
        assert!(
            !refs.is_empty() || !q.contains('('),
            "{q} names no metric of ours"
        );
        unknown.extend(refs.into_iter().filter(|r| !exported.contains(r)));
    }
    assert!(unknown.is_empty(), "not exported: {unknown:?}");
    for needed in [
        "scaling_facts_wake_duration_seconds_bucket",
        "scaling_facts_wake_phase_duration_seconds_bucket",
        "scaling_facts_watch_errors_total",
        "scaling_facts_write_queue_depth",
        "scaling_facts_spool_bytes",
        "scaling_facts_sse_streams",
    ] {
        assert!(
            queries.iter().any(|q| q.contains(needed)),
            "nothing shows {needed}"
        );
    }
}

const SCENARIO: &str = r#"
seed: 3
services:
  - namespace: r
    name: watched
    timing: {provisioning_ms: 10, pulling_image_ms: 10, starting_ms: 10}
"#;

/// The deployed setting of `SCALING_FACTS_APPLY_CONFIG` in an overlay.
fn applies_config(objects: &[Value]) -> bool {
    objects
        .iter()
        .filter(|o| o["kind"] == "ConfigMap")
        .find_map(|o| o["data"]["SCALING_FACTS_APPLY_CONFIG"].as_str())
        == Some("true")
}

/// The deployed `SCALING_FACTS_LEASE_NAME` of an overlay's Deployment, if any.
fn lease_of(objects: &[Value]) -> Option<String> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .flat_map(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .flat_map(|c| c["env"].as_array().into_iter().flatten())
        .find(|e| e["name"] == "SCALING_FACTS_LEASE_NAME")
        .and_then(|e| e["value"].as_str().map(str::to_owned))
}

/// Every request a service sends the API server while it lists, watches, applies an
/// editor's change (with `apply`) and, with `lease`, takes, renews and releases the Lease
/// in its namespace, as deployed.
async fn requests_of(apply: bool, lease: Option<&str>) -> BTreeSet<Authorized> {
    let (sim, _client) = start_sim(SCENARIO).await;
    let db = match lease {
        Some(_) => TestDb::postgres().await,
        None => TestDb::sqlite().await,
    };
    let (_tokens, tokens_file) = common::tokens_file();
    let service = RunningService::start(&sim, &db.url, |c| {
        c.act.apply_config = apply;
        c.tokens_file = Some(tokens_file);
        c.lease.lease_name = lease.map(str::to_owned);
        c.lease.lease_namespace = Some("scaling-facts".into());
        c.lease.lease_identity = Some("scaling-facts-0".into());
        c.lease.lease_retry_ms = 200;
    })
    .await;
    let cluster = sim.cluster.clone();
    // Every watcher has listed and is watching.
    eventually(20, "every kind watched", || {
        let requests = cluster.audit.requests();
        let watches = requests.iter().filter(|r| r.verb == "watch").count();
        (watches == scaling_facts::watch::KINDS.len()).then_some(())
    })
    .await;
    // Holding the Lease through a renewal or two.
    if lease.is_some() {
        let lead = service.state.leadership.clone();
        eventually(20, "the Lease held", || lead.leading().then_some(())).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    // And an editor's change, which is applied when applying is on.
    let book = service.state.book.clone();
    eventually(20, "the release known", || book.get("watched.r")).await;
    let put = reqwest::Client::new()
        .put(format!("{}/v1/releases/watched.r/config", service.base))
        .bearer_auth(common::token_of("writer"))
        .json(&serde_json::json!({"min_instances": 1, "idle_timeout_seconds": 120}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), reqwest::StatusCode::OK);
    assert_eq!(
        cluster.audit.requests().iter().any(|r| r.verb == "patch"),
        apply,
        "the service patches exactly when applying is on"
    );
    // Stopping releases the Lease.
    service.stop().await;
    let requests = cluster.audit.requests();
    sim.stop().await;
    db.finish().await;
    requests
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_grants_exactly_the_requests_the_service_makes() {
    let rendered: Vec<(&str, Vec<Value>)> = OVERLAYS.iter().map(|o| (*o, render(o))).collect();
    // The service runs as deployed: applying on or off as the overlays set it.
    let apply = applies_config(&rendered[0].1);
    for (overlay, objects) in &rendered {
        assert_eq!(
            applies_config(objects),
            apply,
            "{overlay} applies differently"
        );
    }
    // Each overlay's service runs as it deploys it, and sends its own requests: with a
    // Lease (on PostgreSQL) it also holds one.
    let mut first = None;
    for (overlay, objects) in &rendered {
        let requests = requests_of(apply, lease_of(objects).as_deref()).await;
        let grants = rbac::grants(objects, "scaling-facts", "scaling-facts");
        let (missing, extra) = rbac::compare(&grants, &requests);
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{overlay}: the service asks for {missing:#?} without a grant; granted and never used: {extra:#?}"
        );
        first.get_or_insert(requests);
    }
    let requests = first.expect("an overlay");
    assert_eq!(OVERLAYS[0], "single");
    assert!(
        requests.iter().all(|r| r.resource != "leases"),
        "a single replica holds no Lease"
    );

    // The comparison catches a verb added or removed on either side.
    let objects = render("single");
    let grants = rbac::grants(&objects, "scaling-facts", "scaling-facts");
    let verb_on = |verb: &str, resource: &str| rbac::Grant {
        verb: verb.into(),
        group: String::new(),
        resource: resource.into(),
        namespace: None,
        name: None,
    };
    let mut more = grants.clone();
    more.insert(verb_on("get", "pods"));
    assert_eq!(rbac::compare(&more, &requests).1, [verb_on("get", "pods")]);
    let mut fewer = grants.clone();
    fewer.remove(&verb_on("watch", "pods"));
    let (missing, _) = rbac::compare(&fewer, &requests);
    assert!(
        !missing.is_empty()
            && missing
                .iter()
                .all(|r| r.verb == "watch" && r.resource == "pods")
    );
    let mut asks_more: BTreeSet<Authorized> = requests.clone();
    asks_more.insert(Authorized {
        verb: "delete",
        group: "serving.knative.dev".into(),
        resource: "services".into(),
        namespace: Some("r".into()),
        name: Some("watched".into()),
    });
    assert_eq!(rbac::compare(&grants, &asks_more).0.len(), 1);
    let asks_less: BTreeSet<Authorized> = requests
        .iter()
        .filter(|r| r.resource != "pods")
        .cloned()
        .collect();
    let (_, unused) = rbac::compare(&grants, &asks_less);
    assert_eq!(unused, [verb_on("list", "pods"), verb_on("watch", "pods")]);
}

#[test]
fn dockerfile_builds_the_service_alone_and_runs_it_unprivileged() {
    let text = std::fs::read_to_string(format!("{ROOT}/Dockerfile")).unwrap();
    // Instructions, with continuation lines joined and comments dropped.
    let joined = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\\n", " ");
    let instructions: Vec<(String, String)> = joined
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (op, rest) = l.trim().split_once(' ').unwrap_or((l.trim(), ""));
            (op.to_uppercase(), rest.trim().to_owned())
        })
        .collect();
    let stages: Vec<usize> = (0..instructions.len())
        .filter(|i| instructions[*i].0 == "FROM")
        .collect();
    assert!(stages.len() >= 2, "multi-stage");
    let (build, runtime) = (
        &instructions[stages[0]..stages[1]],
        &instructions[*stages.last().unwrap()..],
    );
    assert!(build[0].1.contains(" AS build"), "{:?}", build[0]);
    let final_base = &runtime[0].1;
    assert!(
        final_base.starts_with("debian:") && final_base.contains("-slim")
            || final_base.contains("distroless"),
        "final stage {final_base}"
    );
    let cargo = build
        .iter()
        .find(|(op, rest)| op == "RUN" && rest.contains("cargo build"))
        .map(|(_, rest)| rest.as_str())
        .expect("the build stage runs cargo build");
    for flag in [
        "--release",
        "--locked",
        "--no-default-features",
        "--bin scaling-facts",
    ] {
        assert!(cargo.contains(flag), "cargo build lacks {flag}: {cargo}");
    }
    assert!(
        !cargo.contains("--features") && !cargo.contains("sim"),
        "{cargo}"
    );
    let find = |op: &str| -> Vec<&str> {
        runtime
            .iter()
            .filter(|(o, _)| o == op)
            .map(|(_, r)| r.as_str())
            .collect()
    };
    let user = find("USER");
    assert_eq!(user.len(), 1);
    let uid: u32 = user[0]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .expect("a numeric user");
    assert!(
        uid >= 10_000,
        "unprivileged, outside the host's users: {uid}"
    );
    let copied = find("COPY");
    assert!(
        copied.iter().any(|c| c.starts_with("--from=build")),
        "{copied:?}"
    );
    let entry = find("ENTRYPOINT");
    let binary = entry[0].trim_matches(|c| c == '[' || c == ']' || c == '"');
    assert!(
        copied.iter().any(|c| c.ends_with(binary)),
        "{binary} is what was copied"
    );
    let volume = find("VOLUME")[0].trim_matches(|c| c == '[' || c == ']' || c == '"');
    assert_eq!(
        find("WORKDIR"),
        [volume],
        "relative paths land on the volume"
    );
    let env: Vec<(&str, &str)> = find("ENV")
        .iter()
        .flat_map(|e| e.split_whitespace())
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let known = serve_env_names();
    for (k, _) in &env {
        assert!(known.contains(*k), "{k} is not a setting of serve");
    }
    let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).unwrap();
    assert_eq!(get("SCALING_FACTS_LISTEN_ADDR"), "0.0.0.0:8080");
    let db = get("SCALING_FACTS_DATABASE_URL");
    assert!(db.starts_with(&format!("sqlite://{volume}/")), "{db}");
    assert!(get("SCALING_FACTS_SPOOL_PATH").starts_with(&format!("{volume}/")));
    assert_eq!(find("EXPOSE"), ["8080"]);
    let ignored = std::fs::read_to_string(format!("{ROOT}/.dockerignore")).unwrap();
    assert!(
        ignored.lines().any(|l| l.trim() == "target/"),
        "the context leaves target/ out"
    );
}
