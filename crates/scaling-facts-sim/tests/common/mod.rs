//! Helpers of the simulator's tests: a simulator on loopback with a kube-rs client for it.

#![allow(dead_code)]

use std::time::Duration;

use scaling_facts_sim::resources::Kind;
use scaling_facts_sim::{Scenario, Simulator};
use tokio_util::sync::CancellationToken;

pub async fn start_sim(scenario_yaml: &str) -> (Simulator, kube::Client) {
    let scenario = Scenario::parse(scenario_yaml).expect("scenario parses");
    let sim = Simulator::start(
        "127.0.0.1:0".parse().unwrap(),
        scenario,
        CancellationToken::new(),
    )
    .await
    .expect("simulator starts");
    let client = kube_client(&sim.kubeconfig_yaml()).await;
    (sim, client)
}

pub async fn kube_client(kubeconfig_yaml: &str) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(kubeconfig_yaml).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

/// Polls `f` every 20 ms until it returns Some, for at most `secs` seconds.
pub async fn eventually<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `ApiResource` of a simulator kind, for `Api<DynamicObject>`.
pub fn api_resource(kind: Kind) -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: kind.group.to_owned(),
        version: kind.version.to_owned(),
        api_version: kind.api_version(),
        kind: kind.kind.to_owned(),
        plural: kind.plural.to_owned(),
    }
}
