//! The runner's own stalls. A deadline measures the backend only while the runner is awake to
//! read what it sends: when the runner itself is held up (its own work on a large frame, a machine
//! too loaded to schedule it), a step can time out with the answer sitting unread in the socket.
//! A ticker on the runner's async runtime records every wake-up that came late; a scenario that
//! timed out across such a stall gets a harness error instead, never a requirement charged.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

/// How often the ticker asks to be woken.
const TICK: Duration = Duration::from_millis(50);

/// A wake-up later than this is recorded as a stall.
const LATE: Duration = Duration::from_millis(100);

/// So much stall in a scenario makes its timeouts the runner's, not the backend's.
pub const HARNESS_STALL: Duration = Duration::from_secs(1);

/// The stalls of the runtime that started the watch, while the watch is alive.
#[derive(Debug, Default)]
pub struct StallWatch {
    /// (when the late wake-up came, how late it was), oldest first.
    stalls: Mutex<Vec<(Instant, Duration)>>,
}

impl StallWatch {
    /// Starts the ticker on the current Tokio runtime; it ends when the last `Arc` is dropped.
    pub fn start() -> Arc<StallWatch> {
        let watch = Arc::new(StallWatch::default());
        let weak: Weak<StallWatch> = Arc::downgrade(&watch);
        tokio::spawn(async move {
            loop {
                let asked = Instant::now() + TICK;
                tokio::time::sleep_until(asked).await;
                let late = Instant::now().saturating_duration_since(asked);
                let Some(watch) = weak.upgrade() else { return };
                if late >= LATE {
                    watch.record(Instant::now(), late);
                }
            }
        });
        watch
    }

    /// Records a stall of `late` that ended at `at`.
    pub fn record(&self, at: Instant, late: Duration) {
        if let Ok(mut stalls) = self.stalls.lock() {
            // Bounded: a run is at most its deadline long, and old entries are not needed twice.
            if stalls.len() >= 100_000 {
                stalls.drain(..50_000);
            }
            stalls.push((at, late));
        }
    }

    /// The total stall that ended between `from` and `to`.
    pub fn stalled_between(&self, from: Instant, to: Instant) -> Duration {
        let Ok(stalls) = self.stalls.lock() else { return Duration::ZERO };
        stalls.iter().filter(|(at, _)| *at >= from && *at <= to).map(|(_, late)| *late).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_stalls_inside_the_window_count() {
        let watch = StallWatch::default();
        let t0 = Instant::now();
        watch.record(t0 + Duration::from_secs(1), Duration::from_millis(700));
        watch.record(t0 + Duration::from_secs(2), Duration::from_millis(400));
        watch.record(t0 + Duration::from_secs(9), Duration::from_secs(5));
        let window = watch.stalled_between(t0, t0 + Duration::from_secs(3));
        assert_eq!(window, Duration::from_millis(1100));
        assert!(window >= HARNESS_STALL);
        assert_eq!(watch.stalled_between(t0 + Duration::from_secs(3), t0 + Duration::from_secs(8)), Duration::ZERO);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_blocked_runtime_is_seen_as_a_stall() {
        let watch = StallWatch::start();
        let from = Instant::now();
        tokio::time::sleep(Duration::from_millis(60)).await;
        // The runtime's only thread is busy: the ticker cannot run until it is given back.
        std::thread::sleep(Duration::from_millis(400));
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert!(watch.stalled_between(from, Instant::now()) >= LATE);
    }
}
