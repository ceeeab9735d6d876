//! The soak in its two-replica mode (issue 14): two minutes of `scaling-facts soak
//! --replicas 2` on PostgreSQL, the leader killed, frozen (SIGSTOP) and either replica
//! stopped, among the other faults. Every true wake must be stored once, both replicas'
//! counts must equal the stored rows, and both must serve identical facts.
//!
//! A file of its own so that it never runs beside the SQLite soak: two soaks at once on
//! two cores would measure the machine, not the service.

mod common;

use std::process::Command;

#[test]
fn two_replicas_under_faults_lose_no_wake_double_none_and_agree() {
    let out = Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .args([
            "soak",
            "--duration-seconds",
            "120",
            "--seed",
            "1",
            "--replicas",
            "2",
        ])
        .args(["--database-url", &common::postgres_admin_url()])
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
    let detail: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["lost:", "doubled:", "phantom #", "outcome "]
                .iter()
                .any(|k| l.contains(k))
        })
        .collect();
    assert!(line.contains("2 replicas"), "{line}");
    assert!(
        line.contains("/ lost 0 / doubled 0 /"),
        "{line}\n{}\n{stderr}",
        detail.join("\n")
    );
    assert!(
        line.contains(
            "histograms agree with the store and both replicas serve identical facts: yes"
        ),
        "{line}\n{stderr}"
    );
    assert!(out.status.success(), "{line}\n{stderr}");
}
