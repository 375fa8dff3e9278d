//! The reconnect sweep (`run --sweep`) against the bundled reference backend: it passes on the
//! resume, human-in-the-loop and multi-tool scenarios, and it catches a reference with a planted
//! durability fault.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::output::{variant_block, Style};
use chatwire_conformance::report::{RunReport, Verdict, SWEEP_APPLICABLE_CHECK};
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::scenario::Scenario;

/// Streams included: cuts fall between deltas, and every variant must continue the stream exactly.
const SWEPT: [&str; 5] =
    ["resume-pending-then-answer", "hitl-submit", "multi-tool-mixed-hitl", "multi-tool-out-of-order", "stream-basic"];

fn options(fault: Option<&str>, max: usize) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    RunOptions {
        target: Target::Bundled { fault: fault.map(str::to_owned) },
        jobs: 2,
        // Debug builds on a shared machine: generous deadlines (they only matter when something hangs).
        driver: DriverConfig { timeout_scale: 3.0, snapshots: SnapshotMode::Collect, ..DriverConfig::default() },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(600),
        start_timeout: Duration::from_secs(20),
        sweep: Some(max),
        plain_target: None,
        // A sweep runs no reload variants.
        reload_variants: false,
        cluster: Default::default(),
    }
}

fn picked(ids: &[&str]) -> Vec<Scenario> {
    let all = embedded_scenarios().expect("the embedded scenarios are valid");
    let picked: Vec<Scenario> = all.into_iter().filter(|s| ids.contains(&s.id.as_str())).collect();
    assert_eq!(picked.len(), ids.len(), "every named scenario exists");
    picked
}

fn failures(report: &RunReport) -> String {
    report
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Pass)
        .map(|s| variant_block(Style { colour: false }, s))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test sweep -- --ignored)"]
async fn the_sweep_passes_on_resume_hitl_and_multi_tool_scenarios_against_the_reference() {
    let report = run_suite(picked(&SWEPT), &options(None, 60), Arc::new(|_| {})).await.expect("the reference starts");
    assert!(report.scenarios.iter().all(|s| s.verdict == Verdict::Pass), "{}", failures(&report));
    // Per scenario: every frame after the handshake is a cut point, each run once, in order.
    let mut cuts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut frames: BTreeMap<&str, usize> = BTreeMap::new();
    for variant in report.scenarios.iter() {
        let Some(sweep) = &variant.sweep else { continue };
        cuts.entry(sweep.scenario.as_str()).or_default().push(sweep.cut_after_frame);
        frames.insert(sweep.scenario.as_str(), sweep.frames);
        for check in
            ["sweep-resume", "sweep-final-state", "sweep-settled-once", "state-matches-reducer", "seq-increasing"]
        {
            assert!(
                variant.checks.iter().any(|c| c.id == check && c.verdict == Verdict::Pass),
                "{} has no passing {check}",
                variant.id
            );
        }
    }
    for id in SWEPT {
        let n = frames.get(id).copied().unwrap_or(0);
        assert!(n >= 8, "{id}: the uninterrupted run received {n} frames after the handshake");
        assert_eq!(cuts[id], (1..=n).collect::<Vec<_>>(), "{id}: one variant per frame");
        let base = report.scenarios.iter().find(|s| s.id == id).expect("the uninterrupted run is reported");
        assert!(base.checks.iter().any(|c| c.id == SWEEP_APPLICABLE_CHECK && c.verdict == Verdict::Pass));
    }
    // Where the reference speaks 1.1 (resume_catch_up in force) the sweep resumes both ways, from
    // the latest state (a catch-up) and from a frame without a state (a snapshot), and the variants
    // that caught up prove RESUME-019 with their final state.
    if chatwire_schema::SUPPORTED_VERSIONS.iter().any(|v| v.minor >= 1) {
        let variants: Vec<_> = report.scenarios.iter().filter(|s| s.sweep.is_some()).collect();
        let resumed_from = |words: &str| {
            variants
                .iter()
                .filter(|v| v.checks.iter().any(|c| c.id == "sweep-resume" && c.summary.contains(words)))
                .count()
        };
        assert!(resumed_from("from the latest state") > 0, "no variant resumed for a catch-up");
        assert!(resumed_from("without a state") > 0, "no variant resumed for a snapshot");
        let caught_up = variants
            .iter()
            .filter(|v| {
                v.checks.iter().any(|c| c.id == "sweep-final-state" && c.requirements.iter().any(|r| r == "RESUME-019"))
            })
            .count();
        assert!(caught_up > 0, "no variant received a catch-up");
        assert!(caught_up < variants.len(), "every variant received a catch-up");
    }
    let sweep = report.sweep.as_ref().expect("a sweep run has a sweep summary");
    assert_eq!(sweep.scenarios, SWEPT.len());
    assert_eq!(sweep.variants, frames.values().sum::<usize>());
    assert_eq!(sweep.failed, 0);
    assert_eq!(report.summary.scenarios, SWEPT.len(), "variants are not counted as scenarios");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test sweep -- --ignored)"]
async fn the_sweep_catches_a_completion_that_is_not_persisted() {
    // The fault forgets a completed call when the session is reloaded: only a cut after the
    // completion shows it, which no single scenario's fixed reconnect point hits.
    let mut opts = options(Some("completion-not-persisted"), 60);
    // The faulty resume snapshot says the run is still running: those variants wait a step
    // deadline for it to end, so keep the deadlines unscaled here.
    opts.driver.timeout_scale = 1.0;
    let report =
        run_suite(picked(&["hitl-submit"]), &opts, Arc::new(|_| {})).await.expect("the faulty reference starts");
    let failed: Vec<_> = report.scenarios.iter().filter(|s| s.sweep.is_some() && s.verdict == Verdict::Fail).collect();
    assert!(!failed.is_empty(), "no variant failed:\n{}", failures(&report));
    for variant in &failed {
        let check = variant.checks.iter().find(|c| c.id == "sweep-final-state").expect("the final state is compared");
        assert_eq!(check.verdict, Verdict::Fail, "{}", variant_block(Style { colour: false }, variant));
        assert!(check.findings[0].message.contains("\"status\": \"completed\""), "{:?}", check.findings);
    }
    // Cuts before the completion resume a session whose call is still pending: those pass.
    assert!(report
        .scenarios
        .iter()
        .any(|s| s.sweep.as_ref().is_some_and(|v| v.cut_after_frame == 1) && s.verdict == Verdict::Pass));
    assert_eq!(report.sweep.as_ref().map(|s| s.failed), Some(failed.len()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsweepable_scenarios_run_normally_and_are_reported_not_applicable_with_the_reason() {
    let report = run_suite(picked(&["restart-resume", "hitl-duplicate-response"]), &options(None, 5), Arc::new(|_| {}))
        .await
        .expect("the reference starts");
    assert!(report.scenarios.iter().all(|s| s.sweep.is_none()), "no variant of an unsweepable scenario");
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Pass, "the ordinary run still happens: {}", s.id);
        let check = s.checks.iter().find(|c| c.id == SWEEP_APPLICABLE_CHECK).expect("the sweep says why not");
        assert_eq!(check.verdict, Verdict::NotApplicable);
        assert!(check.findings[0].message.starts_with("not sweepable:"), "{:?}", check.findings);
    }
    assert_eq!(report.sweep.as_ref().map(|s| (s.variants, s.not_sweepable)), Some((0, 2)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_max_caps_the_variants() {
    let report = run_suite(picked(&["hitl-submit"]), &options(None, 3), Arc::new(|_| {})).await.unwrap();
    let cuts: Vec<usize> =
        report.scenarios.iter().filter_map(|s| s.sweep.as_ref()).map(|v| v.cut_after_frame).collect();
    assert_eq!(cuts, vec![1, 2, 3]);
    assert!(report.scenarios.iter().all(|s| s.verdict == Verdict::Pass), "{}", failures(&report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test sweep -- --ignored)"]
async fn with_a_watching_tab_every_variant_ends_in_the_state_the_watching_tab_holds() {
    // `--sweep-watch`: a second tab attaches (multi_attach) and stays through every cut of the main
    // connection; each variant, and the uninterrupted run, compares the two final states.
    let mut opts = options(None, 60);
    opts.driver.sweep_watch = true;
    let report = run_suite(picked(&["hitl-submit"]), &opts, Arc::new(|_| {})).await.expect("the reference starts");
    let runs: Vec<_> = report.scenarios.iter().filter(|s| s.id.starts_with("hitl-submit")).collect();
    assert!(runs.len() > 2, "the uninterrupted run and its variants are reported");
    for run in runs {
        let watch = run.checks.iter().find(|c| c.id == "sweep-watch-agrees");
        assert!(
            watch.is_some_and(|c| c.verdict == Verdict::Pass && c.requirements.iter().any(|r| r == "ATTACH-007")),
            "{} has no passing sweep-watch-agrees:\n{}",
            run.id,
            failures(&report)
        );
    }
    assert_eq!(report.sweep.as_ref().map(|s| s.failed), Some(0), "{}", failures(&report));
}
