//! The whole starter suite against the bundled reference backend (spawned as a real process, so
//! `restart` is a real kill -9), with the golden snapshots asserted by insta.
//!
//! Review snapshot changes with `cargo insta review`; CI (CI=true) never writes `.snap.new` files,
//! so a missing or changed snapshot fails there.

use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::output::{scenario_block, Style};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::snapshot::{file_name, SnapshotStore};

fn bundled(snapshots: SnapshotMode) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    RunOptions {
        target: Target::Bundled { fault: None },
        jobs: 2,
        // Debug builds on a shared machine: generous deadlines (they only matter when something hangs).
        driver: DriverConfig { timeout_scale: 3.0, snapshots, ..DriverConfig::default() },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(600),
        start_timeout: Duration::from_secs(20),
        sweep: None,
        plain_target: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_passes_against_the_reference_and_matches_its_snapshots() {
    let scenarios = embedded_scenarios().expect("the embedded scenarios are valid");
    assert!(scenarios.len() >= 12, "the starter set has at least 12 scenarios");
    let report = run_suite(scenarios.clone(), &bundled(SnapshotMode::Collect), Arc::new(|_| {}))
        .await
        .expect("the bundled reference backend starts");
    // Snapshots of the passing scenarios first, so one failing scenario does not hide the others'.
    let mut taken = 0;
    for s in report.scenarios.iter().filter(|s| s.verdict == Verdict::Pass) {
        for (name, text) in &s.snapshots {
            let file = file_name(&s.id, name);
            let snapshot_name = file.trim_end_matches(".snap").to_owned();
            insta::with_settings!({
                snapshot_path => "../../fixtures/snapshots",
                prepend_module_to_snapshot => false,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(snapshot_name, text);
            });
            taken += 1;
        }
    }
    let failed: Vec<String> = report
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Pass)
        .map(|s| scenario_block(Style { colour: false }, s, 0, 0))
        .collect();
    assert!(failed.is_empty(), "scenarios not passing against the reference:\n{}", failed.join("\n"));
    let declared: usize = scenarios.iter().map(|s| s.snapshot_names().len()).sum();
    assert_eq!(taken, declared, "every snapshot step produced a projection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_comparison_accepts_the_committed_snapshots() {
    // The same comparison the CLI makes for any backend, against the files insta maintains.
    let scenarios = embedded_scenarios().unwrap();
    let store =
        SnapshotStore::from_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/snapshots"))
            .expect("fixtures/snapshots is readable");
    let picked: Vec<_> =
        scenarios.into_iter().filter(|s| s.id.starts_with("hitl-") || s.id == "rewind-basic").collect();
    let report = run_suite(picked, &bundled(SnapshotMode::Compare(store)), Arc::new(|_| {})).await.unwrap();
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Pass, "{}", scenario_block(Style { colour: false }, s, 0, 0));
        assert!(s.checks.iter().any(|c| c.id.starts_with("snapshot-") && c.verdict == Verdict::Pass));
    }
}
