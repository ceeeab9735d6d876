//! Whether this process was just frozen: stopped (SIGSTOP, a debugger, a node under
//! memory pressure) or starved of CPU for a long moment.
//!
//! Events that reached the socket while the process was frozen are read in a burst as it
//! resumes, and their arrival says nothing about when they happened: a wake that began and
//! served during a 3 s pause would read as 1 ms long. A thread of its own wakes every
//! [`TICK`]; a wake that comes [`STALL`] late means the process did not run meanwhile, and
//! events read until [`BURST`] after it resumed are stamped [`Via::Resumed`], so that they
//! are dated by their objects' timestamps, as after a watch that was away.
//!
//! [`Via::Resumed`]: crate::measure::observe::Via::Resumed

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(10);
/// A wake this late means a freeze, not a busy scheduler.
pub const STALL: Duration = Duration::from_millis(400);
/// How long after a freeze the events read are its backlog.
pub const BURST: Duration = Duration::from_millis(250);

struct Clock {
    base: Instant,
    /// Nanoseconds after `base` of the thread's last wake.
    last_tick: AtomicU64,
    /// Nanoseconds after `base` when the thread last woke from a freeze (0: never).
    resumed: AtomicU64,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn clock() -> &'static Clock {
    static CLOCK: OnceLock<&'static Clock> = OnceLock::new();
    CLOCK.get_or_init(|| {
        let clock: &'static Clock = Box::leak(Box::new(Clock {
            base: Instant::now(),
            last_tick: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
        }));
        let spawned = std::thread::Builder::new()
            .name("stall-watch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(TICK);
                    let now = nanos(clock.base.elapsed());
                    let last = clock.last_tick.swap(now, Ordering::AcqRel);
                    if now.saturating_sub(last) > nanos(STALL) {
                        clock.resumed.store(now, Ordering::Release);
                        tracing::warn!(frozen_ms = (now - last) / 1_000_000, "the process was frozen; events read next are dated by their objects");
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot watch for freezes; events after one are dated by their arrival");
        }
        clock
    })
}

/// Whether an event read `now` may be the backlog of a freeze: one is underway as the
/// clock thread sees it (it has not run for [`STALL`]), or ended less than [`BURST`] ago.
pub fn just_resumed(now: Instant) -> bool {
    let clock = clock();
    let at = nanos(now.saturating_duration_since(clock.base));
    let last = clock.last_tick.load(Ordering::Acquire);
    let resumed = clock.resumed.load(Ordering::Acquire);
    judged(at, last, resumed)
}

/// [`just_resumed`] from the clock's readings, all in nanoseconds after its base; 0 is
/// "not yet" (right after start the thread's first tick is not in: not a freeze).
fn judged(at: u64, last_tick: u64, resumed: u64) -> bool {
    (last_tick > 0 && at.saturating_sub(last_tick) > nanos(STALL))
        || (resumed > 0 && at.saturating_sub(resumed) < nanos(BURST))
}

/// Starts the clock thread (else the first event does).
pub fn start() {
    let _ = clock();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_during_and_just_after_a_freeze_are_its_backlog() {
        let ms = |m: u64| m * 1_000_000;
        // Ticking along: not a freeze.
        assert!(!judged(ms(1_000), ms(995), 0));
        // The clock thread has not run for 3 s: frozen, and this task ran first.
        assert!(judged(ms(4_000), ms(1_000), 0));
        // The thread saw the freeze end 100 ms ago: still the backlog; 300 ms ago: not.
        assert!(judged(ms(4_100), ms(4_095), ms(4_000)));
        assert!(!judged(ms(4_300), ms(4_295), ms(4_000)));
        // Before the first tick.
        assert!(!judged(ms(5), 0, 0));
    }

    #[test]
    fn a_running_process_is_not_resuming() {
        start();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!just_resumed(Instant::now()));
    }
}
