//! The dense watch-fault soak: the fault run of `tests/measure.rs` (three services, twelve
//! wakes each, a watch fault every 0.7-1.5 s) repeated with a new fault schedule each
//! time, against the simulator's truth.
//!
//! `cargo bench --bench watch_faults` runs it 20 times; `cargo bench --bench watch_faults
//! -- 5` five times; `-- 5 api-away` adds the API server away for 4 s to the faults (not
//! yet in the test's run: it still loses a wake in some runs). It prints each run and then the totals: wakes lost, doubled and
//! phantom (all must be 0), and the error of the wakes timed to the millisecond.
//!
//! `SOAK_SEED=N` repeats run N's fault schedule every time, and with
//! `RUST_LOG=scaling_facts::service::engine=trace,warn` every observation the engine takes
//! is printed with its stamp, to read how a failing run's wake was misread.

#[path = "../tests/common/mod.rs"]
#[allow(unused_imports, unused_macros)]
mod common;

use common::fault_run::{self, percentile};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    let (mut lost, mut doubled, mut phantom, mut wrong, mut faults) = (0, 0, 0, 0, 0);
    let mut live = Vec::new();
    let mut bound = Vec::new();
    // To replay a run that failed: its fault schedule again, with what the engine saw.
    if std::env::var_os("RUST_LOG").is_some() {
        scaling_facts::telemetry::init_logging(scaling_facts::config::LogFormat::Text);
    }
    let api_away = std::env::args().any(|a| a == "api-away");
    let seed: Option<u64> = std::env::var("SOAK_SEED").ok().and_then(|v| v.parse().ok());
    for run in 1..=runs {
        let r = fault_run::run(seed.unwrap_or(run), api_away).await;
        println!(
            "run {run:>2}: {} faults, lost {} doubled {} phantom {} wrong outcome {}, {:?}, \
             live p99 {} ms max {} ms",
            r.faults,
            r.lost,
            r.doubled,
            r.phantom,
            r.wrong_outcome,
            r.by_precision,
            percentile(&r.live_errors_ms, 99.0),
            percentile(&r.live_errors_ms, 100.0),
        );
        for d in &r.detail {
            println!("        {d}");
        }
        lost += r.lost;
        doubled += r.doubled;
        phantom += r.phantom;
        wrong += r.wrong_outcome;
        faults += r.faults;
        live.extend(r.live_errors_ms);
        bound.extend(r.bound_errors_ms);
    }
    let bound_abs: Vec<u64> = bound.iter().map(|e: &i64| e.unsigned_abs()).collect();
    println!(
        "\n{runs} runs, {faults} faults, {} wakes timed to the ms, {} to the second",
        live.len(),
        bound.len()
    );
    println!("lost {lost}, doubled {doubled}, phantom {phantom}, wrong outcome {wrong}");
    println!(
        "live error: p50 {} ms, p99 {} ms, max {} ms",
        percentile(&live, 50.0),
        percentile(&live, 99.0),
        percentile(&live, 100.0)
    );
    println!(
        "second-precision bound minus truth: min {} ms, p50 {} ms, max {} ms",
        bound.iter().min().copied().unwrap_or(0),
        percentile(&bound_abs, 50.0),
        bound.iter().max().copied().unwrap_or(0)
    );
}
