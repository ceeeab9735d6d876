//! The soak in CI (issue 10): two minutes of the fault schedule of `scaling-facts soak`
//! (watch drops, 410s, API-server restarts and refusals, SIGKILL and SIGTERM of the
//! service, store outages) against the release binary on SQLite; every true wake must be
//! in the store once, and the service's counts must agree with the stored rows.

use std::process::Command;

#[test]
fn two_minutes_of_faults_lose_no_wake_and_double_none() {
    let out = Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .args(["soak", "--duration-seconds", "120", "--seed", "1"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("the soak runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("soak "))
        .unwrap_or_else(|| panic!("no summary line; stderr:\n{stderr}"));
    println!("{line}");
    // The soak's own account of each lost, doubled or phantom record, for the failure.
    let detail: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["lost:", "doubled:", "phantom #", "outcome "]
                .iter()
                .any(|k| l.contains(k))
        })
        .collect();
    assert!(
        line.contains("/ lost 0 / doubled 0 /"),
        "{line}\n{}\n{stderr}",
        detail.join("\n")
    );
    assert!(
        line.contains("histograms agree with the store: yes"),
        "{line}"
    );
    assert!(out.status.success(), "{line}\n{stderr}");
}
