//! What the monitor costs per frame as a session grows: `check-log` (the monitor alone, offline)
//! over the wire log of one scripted turn of 10,000 `say` items against the logs of turns of 100
//! items, as many of them as make the same number of frames, so both sides check equal frame
//! counts and differ only in the size of the session. The logs are recorded once from the bundled
//! reference backend; the checks are timed in CPU time of this thread, interleaved (A B B A …),
//! median of the rounds. Goal (issue #32): CPU per frame at 10,000 items ≤ 1.3× that at 100.
//!
//! `cargo bench -p chatwire-conformance --bench monitor_cost` (`-- --quick` for fewer rounds).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, ServerProcess, Target};
use chatwire_conformance::checklog::check_log;
use chatwire_conformance::driver::{run_scenario, DriverConfig, Endpoint};
use chatwire_conformance::report::Verdict;
use chatwire_schema::FrameValidator;

mod common;

use common::{median, scenario, thread_cpu};

const SMALL: usize = 100;
const LARGE: usize = 10_000;

/// Records the wire log of one scripted turn of `items` items into `dir`; returns its path and
/// how many server frames it holds.
async fn record(url: &str, items: usize, dir: &Path, validator: &Arc<FrameValidator>) -> (PathBuf, usize) {
    let cfg = DriverConfig { wire_log_dir: Some(dir.to_path_buf()), ..DriverConfig::default() };
    let scenario = scenario(items);
    let mut ep = Endpoint::Url(url.to_owned());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
    let r = run_scenario(&scenario, &mut ep, &cfg, validator.clone(), deadline).await;
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    let path = dir.join(format!("{}.jsonl", scenario.id));
    let text = std::fs::read_to_string(&path).expect("the wire log was written");
    let frames = text.lines().filter(|l| l.contains(r#""from":"server""#) && l.contains(r#""frame""#)).count();
    (path, frames)
}

/// CPU time of `check-log` over `log`, `times` times over; every check must pass.
fn check(log: &Path, times: usize, validator: &Arc<FrameValidator>) -> Duration {
    let started = thread_cpu();
    for _ in 0..times {
        let report = check_log(log, validator.clone()).expect("the log reads");
        assert_eq!(report.verdict, Verdict::Pass, "{:#?}", report.checks);
    }
    thread_cpu() - started
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 3 } else { 7 };
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = std::env::temp_dir().join(format!("chatwire-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let validator = Arc::new(FrameValidator::new());
    let ((small, small_frames), (large, large_frames)) = rt.block_on(async {
        let server = ServerProcess::start(&Target::Bundled { fault: None }, "bench", Duration::from_secs(30))
            .await
            .expect("the reference backend starts");
        let url = server.url().to_owned();
        let logs = (record(&url, SMALL, &dir, &validator).await, record(&url, LARGE, &dir, &validator).await);
        drop(server);
        logs
    });
    // Enough small sessions for as many frames as the large one.
    let copies = large_frames.div_ceil(small_frames);
    // Warm up (the schemas' compilation, the allocator).
    check(&small, 1, &validator);
    let (mut per_small, mut per_large) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for which in [round % 2, (round + 1) % 2] {
            if which == 0 {
                per_small.push(check(&small, copies, &validator) / (small_frames * copies) as u32);
            } else {
                per_large.push(check(&large, 1, &validator) / large_frames as u32);
            }
        }
    }
    let (s, l) = (median(per_small), median(per_large));
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("check-log CPU per server frame, interleaved, median of {rounds}:");
    println!("  {copies} sessions of {SMALL} items ({} frames): {:>7.2} us", small_frames * copies, us(s));
    println!("  1 session of {LARGE} items ({large_frames} frames):  {:>7.2} us", us(l));
    println!("  {LARGE} / {SMALL} items: {:.2}x (goal <= 1.30x)", l.as_secs_f64() / s.as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
}
