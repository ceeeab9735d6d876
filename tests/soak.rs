//! The soak in CI (issue 10): two minutes of the fault schedule of `scaling-facts soak`
//! (watch drops, 410s, API-server restarts and refusals, SIGKILL and SIGTERM of the
//! service, store outages) against the release binary on SQLite; every true wake must be
//! in the store once, and the service's counts must agree with the stored rows.

mod common;

#[test]
fn two_minutes_of_faults_lose_no_wake_and_double_none() {
    let run = common::soak::run(&["--duration-seconds", "120", "--seed", "1"]);
    let line = &run.line;
    assert!(
        line.contains("/ lost 0 / doubled 0 /"),
        "{line}\n{}\n{}",
        run.detail,
        run.stderr
    );
    assert!(
        line.contains("histograms agree with the store: yes"),
        "{line}"
    );
    assert!(run.success, "{line}\n{}", run.stderr);
}
