//! Runner overhead and suite wall time, against the bundled reference backend.
//!
//! 1. One scripted turn of 100 `say` items (each event followed by its state frame) driven by the
//!    runner (every always-on check, the oracle) versus a bare tokio-tungstenite client that sends
//!    and reads the same frames with no checks, interleaved in one run on the same backend (A B
//!    B A …), median of the rounds. The figure is the client's CPU time (this process; the backend
//!    is a child process and not counted): the wall time of both is the backend's, which commits
//!    every event. Goal (issue #32): runner CPU ≤ 1.5× the bare client's. A third client, the
//!    bare one that also validates every frame against its schema and reads it typed (what any
//!    observer that judges frames does before a check), shows how much of the ratio that is.
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

use common::{bare, median, process_cpu, scenario, validating};

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
            let r = run_scenario(scenario, &mut ep, cfg, validator.clone(), deadline).await;
            assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        };
        // Warm up every path (connection setup, backend caches, the schemas' compilation).
        for _ in 0..3 {
            bare(url, ITEMS).await;
            validating(url, ITEMS, validator).await;
            runner().await;
        }
        let (mut cpu, mut wall) = ([vec![], vec![], vec![]], [vec![], vec![], vec![]]);
        for round in 0..rounds {
            // Rotate which client goes first, so none always meets a warmer backend.
            for which in [round % 3, (round + 1) % 3, (round + 2) % 3] {
                let (started_cpu, started) = (process_cpu(), Instant::now());
                match which {
                    0 => {
                        bare(url, ITEMS).await;
                    }
                    1 => {
                        validating(url, ITEMS, validator).await;
                    }
                    _ => runner().await,
                }
                cpu[which].push(process_cpu() - started_cpu);
                wall[which].push(started.elapsed());
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let [bc, vc, rc] = cpu.map(median);
        let [bw, vw, rw] = wall.map(median);
        println!("one scripted turn of {ITEMS} items, interleaved, median of {rounds}:");
        println!(
            "  CPU:  runner {:>8.2} ms, validating client {:>8.2} ms, bare tokio-tungstenite {:>8.2} ms",
            ms(rc),
            ms(vc),
            ms(bc)
        );
        println!(
            "  wall: runner {:>8.2} ms, validating client {:>8.2} ms, bare tokio-tungstenite {:>8.2} ms",
            ms(rw),
            ms(vw),
            ms(bw)
        );
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        println!("  runner / bare client, CPU: {:.2}x (goal <= 1.50x); wall: {:.2}x", ratio(rc, bc), ratio(rw, bw));
        println!(
            "  validating client / bare client, CPU: {:.2}x; runner / validating client, CPU: {:.2}x",
            ratio(vc, bc),
            ratio(rc, vc)
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
