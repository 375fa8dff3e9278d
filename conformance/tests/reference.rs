//! The whole suite against the bundled reference backend (spawned as a real process, so `restart`
//! is a real kill -9): measured coverage, and the CLI's comparison with the committed snapshots.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::coverage;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::output::{scenario_block, Style};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::scenario::Scenario;
use chatwire_conformance::snapshot::SnapshotStore;
use chatwire_conformance::step::Step;
use chatwire_schema::requirements::Level;
use chatwire_schema::ReqId;

fn bundled(snapshots: SnapshotMode) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    RunOptions {
        target: Target::Bundled { fault: None },
        // A scenario mostly waits (scripted delays), so four at a time leave 2 cores far from busy.
        jobs: 4,
        // Debug builds on a shared machine: generous deadlines (they only matter when something hangs).
        driver: DriverConfig { timeout_scale: 3.0, snapshots, ..DriverConfig::default() },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(600),
        start_timeout: Duration::from_secs(20),
        sweep: None,
        plain_target: None,
        // The default run: each scenario that resumes also as its reload variant.
        reload_variants: true,
        cluster: Default::default(),
    }
}

/// Coverage is measured, not claimed: every MUST that a check declares it asserts (what
/// `chatwire-conformance requirements` shows) is evaluated by that check in a passing run against
/// the reference (what `requirements --measure` shows). The scenarios themselves are asserted one
/// by one in `tests/scenarios.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test reference -- --ignored)"]
async fn every_requirement_a_check_declares_is_evaluated_in_a_passing_run() {
    let scenarios = embedded_scenarios().expect("the embedded scenarios are valid");
    let report = run_suite(scenarios.clone(), &bundled(SnapshotMode::Collect), Arc::new(|_| {}))
        .await
        .expect("the bundled reference backend starts");
    // Until the reference speaks 1.1, what only a 1.1 connection exercises (the 1.1 always-on
    // checks, the scenarios that need a feature, not applicable there) cannot be evaluated against
    // it; from the moment SUPPORTED_VERSIONS holds 1.1 it must be, like everything else.
    let speaks_1_1 = chatwire_schema::SUPPORTED_VERSIONS.iter().any(|v| v.minor >= 1);
    let waits_for_1_1 = |id: &str| !speaks_1_1 && scenarios.iter().any(|s| s.id == id && !s.features.is_empty());
    // The scenarios of a deployment of several instances run against a cluster below.
    let needs_cluster = |id: &str| {
        let id = id.strip_suffix(chatwire_conformance::runner::RELOAD_SUFFIX).unwrap_or(id);
        scenarios.iter().any(|s| s.id == id && s.min_replicas() > 1)
    };
    let failed: Vec<&str> = report
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Pass && !(s.verdict == Verdict::NotApplicable && waits_for_1_1(&s.id)))
        .filter(|s| !(s.verdict == Verdict::NotApplicable && needs_cluster(&s.id)))
        .map(|s| s.id.as_str())
        .collect();
    assert!(failed.is_empty(), "scenarios not passing against the reference (see tests/scenarios.rs): {failed:?}");
    let declared = coverage::declared(&scenarios);
    let mut measured = coverage::measured(&report, &scenarios);
    // What only several instances exercise (spec/cluster.md): the cluster scenarios against 3
    // replicas on a throwaway PostgreSQL. CI has one (CHATWIRE_REQUIRE_POSTGRES=1); elsewhere
    // the cluster requirements are left out, with the reason printed.
    let pg = chatwire_pgtmp::for_test("coverage of the cluster requirements");
    if let Some(pg) = &pg {
        let clustered: Vec<_> = scenarios.iter().filter(|s| s.min_replicas() > 1).cloned().collect();
        let mut opts = bundled(SnapshotMode::Collect);
        opts.cluster = chatwire_conformance::backend::ClusterSpec {
            replicas: 3,
            store: Some(chatwire_conformance::backend::StoreUrl::parse(pg.url()).expect("a postgres url")),
        };
        let cluster_report = run_suite(clustered, &opts, Arc::new(|_| {})).await.expect("the cluster starts");
        let failed: Vec<&str> =
            cluster_report.scenarios.iter().filter(|s| s.verdict != Verdict::Pass).map(|s| s.id.as_str()).collect();
        assert!(failed.is_empty(), "cluster scenarios not passing against 3 reference replicas: {failed:?}");
        for (id, by) in coverage::measured(&cluster_report, &scenarios) {
            measured.entry(id).or_default().extend(by);
        }
    }
    let cluster_left_out = |id: &ReqId| pg.is_none() && id.as_str().starts_with("CLUSTER-");
    // A feature the reference does not offer yet (a minor in progress: SESSION-009 forbids
    // listing it before it is implemented) is in force on no connection of any run: its rules
    // are left out, each named below. Its scenarios cannot pass meanwhile: they are n/a, which
    // fails the check above.
    let in_force: BTreeSet<&str> =
        report.scenarios.iter().flat_map(|s| s.in_force.values().flatten()).map(String::as_str).collect();
    let not_offered = |group: &str| {
        ![chatwire_schema::requirements::CORE_GROUP, chatwire_schema::requirements::CLUSTER_GROUP].contains(&group)
            && !in_force.contains(group)
    };
    let mut left_out = Vec::new();
    let registry = chatwire_schema::requirements::all().expect("the spec registry parses");
    let needs_1_1 = |by: &str| {
        chatwire_conformance::monitor::SINCE_1_1.iter().any(|c| by == format!("always-on {}", c.id))
            || scenarios.iter().any(|s| !s.features.is_empty() && by.starts_with(&format!("{} / ", s.id)))
    };
    let mut gaps = Vec::new();
    for r in registry.iter().filter(|r| r.level == Level::Must && r.untestable.is_none()) {
        let Ok(id) = ReqId::parse(&r.id) else { continue };
        if let (Some(checks), None) = (declared.get(&id), measured.get(&id)) {
            if (!speaks_1_1 && checks.iter().all(|c| needs_1_1(c))) || cluster_left_out(&id) {
                continue;
            }
            if not_offered(&r.group) {
                left_out.push(format!("{id} ({})", r.group));
                continue;
            }
            let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
            gaps.push(format!("{id}: declared by {}", checks.join(", ")));
        }
    }
    if !left_out.is_empty() {
        eprintln!("left out, their feature is offered by no welcome of the reference: {}", left_out.join(", "));
    }
    assert!(gaps.is_empty(), "MUSTs a check declares but no passing run evaluated:\n{}", gaps.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_comparison_accepts_the_committed_snapshots() {
    // The same comparison the CLI makes for any backend, against the files insta maintains.
    let scenarios = embedded_scenarios().unwrap();
    let store =
        SnapshotStore::from_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/snapshots"))
            .expect("fixtures/snapshots is readable");
    // The hitl scenarios and rewind-basic that take snapshots (not every hitl scenario does).
    let snapshots = |s: &Scenario| s.steps.iter().any(|step| matches!(step, Step::Snapshot { .. }));
    let picked: Vec<_> = scenarios
        .into_iter()
        .filter(|s| (s.id.starts_with("hitl-") || s.id == "rewind-basic") && snapshots(s))
        .collect();
    assert!(picked.len() > 5, "the hitl scenarios with snapshots");
    let report = run_suite(picked, &bundled(SnapshotMode::Compare(store)), Arc::new(|_| {})).await.unwrap();
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Pass, "{}", scenario_block(Style { colour: false }, s, 0, 0));
        assert!(s.checks.iter().any(|c| c.id.starts_with("snapshot-") && c.verdict == Verdict::Pass));
    }
}
