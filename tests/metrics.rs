//! The exported metrics against the simulator: the build, each watched kind's health and
//! staleness, a served wake's duration and phases by namespace and service, and the
//! series of a deleted Knative Service gone with it, so that cardinality follows the fleet.

mod common;

use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject};
use scaling_facts_sim::resources;

use common::{RunningService, TestDb, api_resource, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 9
services:
  - namespace: m
    name: counted
    timing: {provisioning_ms: 60, pulling_image_ms: 80, starting_ms: 70}
  - namespace: m
    name: kept
    timing: {provisioning_ms: 60, pulling_image_ms: 80, starting_ms: 70}
"#;

/// The value of the one series `name{labels}` in `text`, if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn series_follow_the_fleet() {
    let (sim, client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let service = RunningService::start(&sim, &db.url, |_| {}).await;
    let metrics = service.state.metrics.clone();
    let cluster = sim.cluster.clone();
    // Both services start at one pod: their initial wakes are recorded.
    eventually(20, "initial wakes", || {
        let text = metrics.encode();
        let served = |svc: &str| {
            value(
                &text,
                &format!(
                    r#"scaling_facts_wakes_total{{namespace="m",service="{svc}",kind="initial",outcome="served"}}"#
                ),
            )
        };
        (served("counted") == Some(1.0) && served("kept") == Some(1.0)).then_some(())
    })
    .await;
    // Past the engine's one-second tick, every gauge has been set.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let text = metrics.encode();
    assert_eq!(
        value(
            &text,
            &format!(
                r#"scaling_facts_build_info{{version="{}"}}"#,
                env!("CARGO_PKG_VERSION")
            )
        ),
        Some(1.0),
        "{text}"
    );
    for kind in scaling_facts::watch::KINDS {
        assert_eq!(
            value(
                &text,
                &format!(r#"scaling_facts_watch_up{{kind="{kind}"}}"#)
            ),
            Some(1.0),
            "{kind}: {text}"
        );
        assert!(
            value(
                &text,
                &format!(r#"scaling_facts_watch_last_event_age_seconds{{kind="{kind}"}}"#)
            )
            .is_some(),
            "{kind}: {text}"
        );
    }
    let heard = value(&text, "scaling_facts_watch_heard_age_seconds").unwrap();
    assert!(heard < 2.0, "heard {heard} s ago: {text}");
    for phase in ["provisioning", "pulling_image", "starting"] {
        assert_eq!(
            value(
                &text,
                &format!(
                    r#"scaling_facts_wake_phase_duration_seconds_count{{namespace="m",service="counted",phase="{phase}"}}"#
                )
            ),
            Some(1.0),
            "{phase}: {text}"
        );
    }
    assert!(text.contains(
        r#"scaling_facts_wake_duration_seconds_count{namespace="m",service="counted"} 1"#
    ));
    assert_eq!(value(&text, "scaling_facts_write_queue_depth"), Some(0.0));
    assert_eq!(value(&text, "scaling_facts_spool_bytes"), Some(0.0));
    assert_eq!(value(&text, "scaling_facts_sse_streams"), Some(0.0));

    // The operator deletes `counted`: its series go, `kept`'s stay.
    let services: Api<DynamicObject> =
        Api::namespaced_with(client, "m", &api_resource(resources::SERVICE));
    services
        .delete("counted", &DeleteParams::default())
        .await
        .unwrap();
    eventually(20, "counted's series gone", || {
        let text = metrics.encode();
        (!text.contains(r#"service="counted""#)).then_some(())
    })
    .await;
    let text = metrics.encode();
    assert!(
        text.contains(
            r#"scaling_facts_wake_duration_seconds_count{namespace="m",service="kept"} 1"#
        ),
        "{text}"
    );
    drop(cluster);
    service.stop().await;
}
