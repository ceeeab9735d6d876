//! The soak in its two-replica mode (issue 14): two minutes of `scaling-facts soak
//! --replicas 2` on PostgreSQL, the leader killed, frozen (SIGSTOP) and either replica
//! stopped, among the other faults. Every true wake must be stored once, both replicas'
//! counts must equal the stored rows, and both must serve identical facts.
//!
//! A file of its own so that it never runs beside the SQLite soak: two soaks at once on
//! two cores would measure the machine, not the service.

mod common;

#[test]
fn two_replicas_under_faults_lose_no_wake_double_none_and_agree() {
    let admin = common::postgres_admin_url();
    let run = common::soak::run(&[
        "--duration-seconds",
        "120",
        "--seed",
        "1",
        "--replicas",
        "2",
        "--database-url",
        &admin,
    ]);
    let line = &run.line;
    assert!(line.contains("2 replicas"), "{line}");
    assert!(
        line.contains("/ lost 0 / doubled 0 /"),
        "{line}\n{}\n{}",
        run.detail,
        run.stderr
    );
    assert!(
        line.contains(
            "histograms agree with the store and both replicas serve identical facts: yes"
        ),
        "{line}\n{}",
        run.stderr
    );
    assert!(run.success, "{line}\n{}", run.stderr);
}
