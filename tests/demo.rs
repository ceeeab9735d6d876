//! The one-command demo, shortened: it ends by itself with the summary, the measured p95
//! of each revision within 5% (or 50 ms) of the simulator's truth.

use std::process::Command;

#[test]
fn the_demo_ends_with_a_summary_that_matches_the_truth() {
    let out = Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .args(["demo", "--duration-seconds", "45"])
        .env("SCALING_FACTS_DEMO_LISTEN_ADDR", "127.0.0.1:0")
        .output()
        .expect("the demo runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = text
        .split("== Summary ==")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary:\n{text}"));
    let rows: Vec<&str> = summary.lines().filter(|l| l.contains("-00001")).collect();
    assert!(rows.len() >= 5, "a row per woken revision:\n{summary}");
    for row in &rows {
        assert!(
            row.trim_end().ends_with("yes"),
            "p95 off the truth: {row}\n{summary}"
        );
    }
    assert!(
        summary.contains("unavailable"),
        "the broken release is reported:\n{summary}"
    );
    assert!(
        summary.contains("deadline_too_short"),
        "the short deadline is refused:\n{summary}"
    );
    assert!(
        summary.contains("prewarming saved"),
        "the chain is compared:\n{summary}"
    );
    let declared = summary
        .lines()
        .find(|l| l.contains("woken by the service (depends-on):"))
        .unwrap_or_else(|| panic!("no declared chain row:\n{summary}"));
    assert!(
        declared.contains("median of"),
        "the declared chain completed a round: {declared}\n{summary}"
    );
    for (link, parent) in [
        ("deps-b.demo", "deps-a.demo"),
        ("deps-c.demo", "deps-b.demo"),
    ] {
        let line = summary
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{link}:")))
            .unwrap_or_else(|| panic!("no cause line for {link}:\n{summary}"));
        assert!(
            line.ends_with(&format!("caused by {parent}")) && !line.contains(": 0 of"),
            "{link}'s wakes name {parent}: {line}"
        );
    }
}
