//! `scaling-facts soak` as the release binary runs it, for the soak tests.

use std::process::Command;

/// What one soak printed.
pub struct SoakRun {
    /// The summary line (`soak ...`).
    pub line: String,
    /// The soak's own account of each lost, doubled or phantom record, or wrong outcome.
    pub detail: String,
    pub stderr: String,
    pub success: bool,
}

/// Runs `soak` with `args`; panics with its stderr when it prints no summary.
pub fn run(args: &[&str]) -> SoakRun {
    let out = Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .arg("soak")
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the soak runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("soak "))
        .unwrap_or_else(|| panic!("no summary line; stderr:\n{stderr}"))
        .to_owned();
    println!("{line}");
    let detail = stdout
        .lines()
        .filter(|l| {
            ["lost:", "doubled:", "phantom #", "outcome "]
                .iter()
                .any(|k| l.contains(k))
        })
        .collect::<Vec<_>>()
        .join("\n");
    SoakRun {
        line,
        detail,
        stderr,
        success: out.status.success(),
    }
}
