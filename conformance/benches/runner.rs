//! Runner overhead and suite wall time, against the bundled reference backend.
//!
//! 1. One scripted turn of 100 `say` items (each event followed by its state frame) driven by the
//!    runner (every always-on check, the oracle) versus a bare tokio-tungstenite client that sends
//!    and reads the same frames with no checks, interleaved in one run on the same backend (A B
//!    B A …), median of the rounds. The figure is the client's CPU time (this process; the backend
//!    is a child process and not counted): the wall time of both is the backend's, which commits
//!    every event. Goal (issue #32): runner CPU ≤ 1.5× the bare client's.
//! 2. The whole embedded suite with `--jobs 1` and `--jobs 2`.
//!
//! `cargo bench -p chatwire-conformance --bench runner` (add `-- --quick` for fewer rounds,
//! `-- --no-suite` for the overhead comparison only).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, ServerProcess, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::driver::{run_scenario, DriverConfig, Endpoint, SnapshotMode};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_schema::FrameValidator;

mod common;

use common::{bare, median, process_cpu, scenario};

/// Items of the scripted turn.
const ITEMS: usize = 100;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let skip_suite = std::env::args().any(|a| a == "--no-suite");
    let rounds = if quick { 5 } else { 31 };
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let server = ServerProcess::start(&Target::Bundled { fault: None }, "bench", Duration::from_secs(30))
            .await
            .expect("the reference backend starts");
        let url = server.url().to_owned();
        let validator = Arc::new(FrameValidator::new());
        let scenario = scenario(ITEMS);
        let cfg = DriverConfig { snapshots: SnapshotMode::Collect, ..DriverConfig::default() };
        let (url, scenario, cfg, validator) = (&url, &scenario, &cfg, &validator);
        let runner = || async move {
            let mut ep = Endpoint::Url(url.clone());
            let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
            let r = run_scenario(&scenario, &mut ep, &cfg, validator.clone(), deadline).await;
            assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        };
        // Warm up both paths (connection setup, backend caches, the schemas' compilation).
        for _ in 0..3 {
            bare(url, ITEMS).await;
            runner().await;
        }
        let (mut runner_cpu, mut bare_cpu, mut runner_wall, mut bare_wall) = (vec![], vec![], vec![], vec![]);
        for round in 0..rounds {
            // Alternate which client goes first, so neither always meets a warmer backend.
            for which in [round % 2, (round + 1) % 2] {
                let (cpu, wall) = (process_cpu(), Instant::now());
                if which == 0 {
                    bare(url, ITEMS).await;
                    bare_cpu.push(process_cpu() - cpu);
                    bare_wall.push(wall.elapsed());
                } else {
                    runner().await;
                    runner_cpu.push(process_cpu() - cpu);
                    runner_wall.push(wall.elapsed());
                }
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let (rc, bc) = (median(runner_cpu), median(bare_cpu));
        let (rw, bw) = (median(runner_wall), median(bare_wall));
        println!("one scripted turn of {ITEMS} items, interleaved, median of {rounds}:");
        println!("  CPU:  runner {:>8.2} ms, bare tokio-tungstenite {:>8.2} ms", ms(rc), ms(bc));
        println!("  wall: runner {:>8.2} ms, bare tokio-tungstenite {:>8.2} ms", ms(rw), ms(bw));
        println!(
            "  runner / bare client, CPU: {:.2}x (goal <= 1.50x); wall: {:.2}x",
            rc.as_secs_f64() / bc.as_secs_f64(),
            rw.as_secs_f64() / bw.as_secs_f64()
        );
        drop(server);

        if skip_suite {
            return;
        }
        let scenarios = embedded_scenarios().expect("embedded scenarios");
        for jobs in [1usize, 2] {
            let opts = RunOptions {
                target: Target::Bundled { fault: None },
                jobs,
                driver: DriverConfig { snapshots: SnapshotMode::Collect, ..DriverConfig::default() },
                ..RunOptions::default()
            };
            let t = Instant::now();
            let report = run_suite(scenarios.clone(), &opts, Arc::new(|_| {})).await.expect("suite runs");
            println!(
                "whole suite ({} scenarios), --jobs {jobs}: {:.2} s ({} pass)",
                report.scenarios.len(),
                t.elapsed().as_secs_f64(),
                report.summary.pass
            );
        }
    });
}
