//! Figures the benches share: the median of rounds and a process's memory from `/proc`.
//! Included by path (`#[path = "common/figures.rs"] mod figures;`) by benches that need
//! only these, not the service's state in `common`.

// Each bench uses what it needs of these.
#![allow(dead_code)]

/// The median of rounds: the upper of the two middle ones when they are even.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// A field of `/proc/<process>/status` in KiB (`VmRSS:`, `VmHWM:`), for `process` a pid
/// or `self`.
pub fn status_kib(process: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{process}/status"))
}
