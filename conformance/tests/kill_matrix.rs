//! The kill matrix: the suite's power, measured. Every planted fault of the reference backend
//! (`chatwire-reference --list-faults`, `chatwire_reference::fault::Fault::ALL`) must make at least
//! one check of a must-level scenario fail (a fault against a SHOULD: one of a should-level scenario
//! warn), and those checks must name exactly the requirements of its row, each one the fault really
//! breaks: one fault, one charge (the monitor does not charge what follows from a divergence again).
//!
//! A whole-suite run per fault costs minutes when a fault makes scenarios wait for their deadlines
//! (22 faults × ~3 min on 2 cores), so each fault runs the scenarios that exercise the behaviour it
//! breaks plus the always-on trio in [`ALWAYS`] (printed, not recorded: a fault that kills the shared
//! backend fails them or not depending on timing). A control run first proves that every scenario
//! used here passes against the clean reference, so a kill is the fault's doing and not a flaky
//! or broken scenario.
//!
//! Each failing check is charged to the requirements its findings name (or, for a step, to the
//! requirements the step proves: see `attribution`), never to every id of its scenario; a fault is
//! killed only when those charged ids include one it really breaks, and the test fails unless they
//! are exactly its row's.
//!
//! Every faulty run also writes its wire logs (`run --wire-log`), and `check-log` over each log must
//! reach the same always-on findings (check and requirement) as the live run did.
//!
//! Each row names the offer its runs make: the runner's default (1.1 with every feature once the
//! reference speaks it), or 1.0 only for faults in what only a 1.0 connection receives (the
//! whole-state update), which patches never take. A fault in the resume snapshot runs under the
//! default offer: there every scenario that resumes also runs as `<scenario>@reload`, whose
//! resumes are reloads answered by a snapshot, so the default run kills it.
//!
//! The matrix (fault × failing scenarios × requirement ids) is written deterministically to
//! `fixtures/kill-matrix.json`; the test fails when the committed file differs from the fresh one.
//! Regenerate it with `CHATWIRE_UPDATE_KILL_MATRIX=1 cargo test -p chatwire-conformance --test kill_matrix -- --ignored`.
//! `CHATWIRE_KILL_MATRIX_ONLY=<glob>,…` runs only the rows of the faults that match (compared, never
//! written). The table itself is `kill_matrix/table.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, ClusterSpec, StoreUrl, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::checklog::check_log;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::monitor::ALWAYS_ON;
use chatwire_conformance::report::{RunReport, ScenarioReport, Verdict};
use chatwire_conformance::runner::{run_suite, RunOptions, RELOAD_SUFFIX};
use chatwire_conformance::scenario::{glob_match, Level, Scenario};
use chatwire_conformance::snapshot::SnapshotStore;
use chatwire_reference::fault::Fault;
use futures_util::StreamExt;
use serde_json::{json, Value};

#[path = "kill_matrix/row.rs"]
mod row;
#[path = "kill_matrix/table.rs"]
mod table;

use row::{Caught, Expectation, Offer};
use table::{ALWAYS, TABLE};

/// How many rows run at once.
const ROWS_AT_ONCE: usize = 3;

fn options(fault: Option<&str>, store: &SnapshotStore, offer: Offer, pg: Option<&str>) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let defaults = DriverConfig::default();
    let cluster = match (offer, pg) {
        (Offer::Cluster, Some(url)) => {
            ClusterSpec { replicas: 3, store: Some(StoreUrl::parse(url).expect("a postgres url")) }
        }
        _ => ClusterSpec::default(),
    };
    RunOptions {
        cluster,
        target: Target::Bundled { fault: fault.map(str::to_owned) },
        jobs: 2,
        // Debug builds on a shared machine; deadlines only bite when a fault makes a scenario wait.
        driver: DriverConfig {
            timeout_scale: 2.0,
            snapshots: SnapshotMode::Compare(store.clone()),
            versions: offer.versions().unwrap_or(defaults.versions.clone()),
            ..defaults
        },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(600),
        start_timeout: Duration::from_secs(20),
        // Fields added later (the reconnect sweep, off here) keep their defaults.
        ..RunOptions::default()
    }
}

fn pick(all: &[Scenario], globs: &[&str]) -> Vec<Scenario> {
    let picked: Vec<Scenario> = all.iter().filter(|s| globs.iter().any(|g| glob_match(g, &s.id))).cloned().collect();
    for glob in globs {
        assert!(
            all.iter().any(|s| glob_match(glob, &s.id)),
            "the kill table names scenario {glob:?}, which does not exist"
        );
    }
    picked
}

/// What one fault's run shows: the failing must-level scenarios and the requirement ids their
/// failing checks are charged to.
struct Kill {
    failing: BTreeMap<String, BTreeSet<String>>,
}

fn kills(report: &RunReport, caught_by: Caught) -> Kill {
    let mut failing = BTreeMap::new();
    let (level, verdicts): (Level, &[Verdict]) = match caught_by {
        Caught::MustFailure => (Level::Must, &[Verdict::Fail, Verdict::Timeout]),
        Caught::ShouldWarning => (Level::Should, &[Verdict::Warn]),
    };
    for scenario in report.scenarios.iter().filter(|s| s.level == level) {
        let mut ids = BTreeSet::new();
        let mut failed = false;
        for check in scenario.checks.iter().filter(|c| verdicts.contains(&c.verdict)) {
            failed = true;
            ids.extend(check.charged_requirements());
        }
        if failed {
            failing.insert(scenario.id.clone(), ids);
        }
    }
    Kill { failing }
}

/// The always-on findings of a scenario report, as `(check, requirement)`.
fn always_on_findings(report: &ScenarioReport) -> BTreeSet<(String, String)> {
    report
        .checks
        .iter()
        .filter(|c| ALWAYS_ON.iter().any(|d| d.id == c.id))
        .flat_map(|c| c.findings.iter().map(move |f| (c.id.clone(), f.requirement.clone().unwrap_or_default())))
        .collect()
}

/// `check-log` over the wire log of each scenario of `report` finds what the live run found.
fn check_logs_agree(fault: &str, report: &RunReport, dir: &std::path::Path) -> Vec<String> {
    let validator = Arc::new(chatwire_schema::FrameValidator::new());
    let mut disagreements = Vec::new();
    for scenario in &report.scenarios {
        let log = dir.join(format!("{}.jsonl", scenario.id));
        if !log.exists() {
            continue;
        }
        match check_log(&log, validator.clone()) {
            Ok(offline) => {
                let (live, off) = (always_on_findings(scenario), always_on_findings(&offline));
                if live != off {
                    disagreements.push(format!("{fault} / {}: live {live:?}, check-log {off:?}", scenario.id));
                }
            }
            Err(e) => disagreements.push(format!("{fault} / {}: check-log failed: {e}", scenario.id)),
        }
    }
    disagreements
}

fn matrix_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kill-matrix.json")
}

#[test]
fn the_table_names_every_fault_of_the_reference_once() {
    let table: BTreeSet<&str> = TABLE.iter().map(|e| e.fault).collect();
    assert_eq!(table.len(), TABLE.len(), "a fault is listed twice");
    let known: BTreeSet<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(table, known, "the kill table and the reference's fault list differ");
    for e in TABLE {
        assert!(!e.scenarios.is_empty() && !e.violates.is_empty(), "{}: empty row", e.fault);
    }
}

// Minutes long (a run per fault): not part of `cargo test --workspace`; `.ci/run`'s step "kill
// matrix" runs it with `cargo test -p chatwire-conformance --test kill_matrix -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test kill_matrix -- --ignored --nocapture)"]
async fn every_fault_of_the_reference_is_killed_by_a_must_check_naming_a_violated_requirement() {
    let all = embedded_scenarios().expect("the embedded scenarios are valid");
    let store = SnapshotStore::from_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/snapshots"))
        .expect("fixtures/snapshots is readable");
    let started = Instant::now();
    // The cluster rows need a PostgreSQL server; CI has one (CHATWIRE_REQUIRE_POSTGRES=1 makes a
    // missing one fail here), elsewhere their rows are left out with the reason printed.
    let pg = chatwire_pgtmp::for_test("kill matrix, cluster rows");
    let pg_url = pg.as_ref().map(|p| p.url().to_owned());
    let offers: Vec<Offer> = match pg_url {
        Some(_) => vec![Offer::Default, Offer::V1_0, Offer::Cluster],
        None => vec![Offer::Default, Offer::V1_0],
    };
    // CHATWIRE_KILL_MATRIX_ONLY=glob,glob runs only the rows whose fault matches (to chase one
    // row); the committed matrix is then compared on those rows and never rewritten.
    let only: Option<Vec<String>> = std::env::var("CHATWIRE_KILL_MATRIX_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned).collect());
    let selected = |fault: &str| only.as_ref().is_none_or(|globs| globs.iter().any(|g| glob_match(g, fault)));
    let table: Vec<&Expectation> = TABLE.iter().filter(|e| offers.contains(&e.offer) && selected(e.fault)).collect();

    // Control: every scenario the matrix uses passes against the clean reference, under the offer
    // of every row that uses it.
    let mut broken: Vec<String> = Vec::new();
    for offer in offers.iter().copied() {
        let mut used: BTreeSet<&str> = ALWAYS.iter().copied().collect();
        let rows: Vec<&&Expectation> = table.iter().filter(|e| e.offer == offer).collect();
        if rows.is_empty() {
            continue;
        }
        for e in rows {
            used.extend(e.scenarios.iter().copied());
        }
        let used: Vec<&str> = used.into_iter().collect();
        eprintln!("control: {} scenario(s) against the clean reference, offer {} …", used.len(), offer.as_str());
        let control = run_suite(pick(&all, &used), &options(None, &store, offer, pg_url.as_deref()), Arc::new(|_| {}))
            .await
            .expect("the clean reference backend starts");
        for s in control.scenarios.iter().filter(|s| s.verdict != Verdict::Pass) {
            // What failed, in full: a control failure is a flake or a regression of the clean
            // reference, and CI's log is all there is to tell which.
            eprintln!("control failure: {} (offer {}):", s.id, offer.as_str());
            for c in s.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
                eprintln!("  {} [{}] {}: {:?}", c.id, c.verdict.as_str(), c.summary, c.findings);
            }
            for line in &s.wire_log {
                eprintln!("  | {line}");
            }
            broken.push(format!("{} ({}, offer {})", s.id, s.verdict.as_str(), offer.as_str()));
        }
    }
    assert!(broken.is_empty(), "the control run against the clean reference must pass: {broken:?}");

    let mut rows = Vec::new();
    let mut survivors = Vec::new();
    let mut charged_wrongly = Vec::new();
    let mut disagreements = Vec::new();
    let logs = std::env::temp_dir().join(format!("chatwire-kill-matrix-logs-{}", std::process::id()));
    // Rows run a few at a time: a row's run mostly waits (scripted delays, deadlines a fault makes
    // it sit out), so on 2 cores several rows overlap without starving one another. Results are
    // taken in table order.
    let runs = futures_util::stream::iter(table.iter().copied())
        .map(|e| {
            let mut globs: Vec<&str> = e.scenarios.to_vec();
            globs.extend(ALWAYS);
            let scenarios = pick(&all, &globs);
            let dir = logs.join(e.fault);
            std::fs::create_dir_all(&dir).expect("the temp dir is writable");
            let mut opts = options(Some(e.fault), &store, e.offer, pg_url.as_deref());
            opts.driver.wire_log_dir = Some(dir.clone());
            async move {
                let report = run_suite(scenarios, &opts, Arc::new(|_| {}))
                    .await
                    .unwrap_or_else(|err| panic!("{}: the faulty reference did not start: {err}", e.fault));
                let disagreements = check_logs_agree(e.fault, &report, &dir);
                (e, report, disagreements)
            }
        })
        .buffered(ROWS_AT_ONCE);
    futures_util::pin_mut!(runs);
    let mut row = 0;
    while let Some((e, report, disagree)) = runs.next().await {
        row += 1;
        disagreements.extend(disagree);
        let kill = kills(&report, e.caught_by);
        // Only the fault's own scenarios decide the kill and enter the committed matrix: a fault that
        // kills the shared backend fails the always-on scenarios or not depending on timing, which
        // would make the drift check flaky. Their failures are printed for information.
        // A scenario's reload variant (`<id>@reload`) is the scenario's own.
        let own: BTreeSet<String> = pick(&all, e.scenarios).into_iter().map(|s| s.id).collect();
        let (failing, extra): (BTreeMap<_, _>, BTreeMap<_, _>) =
            kill.failing.into_iter().partition(|(id, _)| own.contains(id.strip_suffix(RELOAD_SUFFIX).unwrap_or(id)));
        let named: BTreeSet<String> = failing.values().flatten().cloned().collect();
        let mut matched: Vec<&str> = e.violates.iter().copied().filter(|id| named.contains(*id)).collect();
        matched.sort_unstable();
        let killed = !failing.is_empty() && !matched.is_empty();
        // Exactly the expected ids: one more is a requirement the fault does not break charged (a
        // cascade, or a check naming the wrong id); one fewer is a stale row.
        let expected: BTreeSet<String> = e.violates.iter().chain(e.cascades).map(|id| (*id).to_owned()).collect();
        if killed && named != expected {
            let beyond: Vec<&String> = named.difference(&expected).collect();
            let stale: Vec<&String> = expected.difference(&named).collect();
            charged_wrongly
                .push(format!("{}: named beyond the row {beyond:?}, in the row but not named {stale:?}", e.fault));
        }
        // Progress, one line per fault as it finishes (seen with --nocapture).
        let outcome = match killed {
            true => format!("killed by {} naming {matched:?}", failing.keys().cloned().collect::<Vec<_>>().join(", ")),
            false => format!(
                "SURVIVED (failing must scenarios {:?}, ids named {named:?})",
                failing.keys().collect::<Vec<_>>()
            ),
        };
        eprintln!(
            "[{:>2}/{}] {} (offer {}) … {outcome}; always-on scenarios failing: {:?} ({:.0} s)",
            row,
            table.len(),
            e.fault,
            e.offer.as_str(),
            extra.keys().collect::<Vec<_>>(),
            started.elapsed().as_secs_f64()
        );
        if !killed {
            survivors.push(format!(
                "{}: failing must scenarios {:?}, requirement ids named {:?}, expected one of {:?}",
                e.fault,
                failing.keys().collect::<Vec<_>>(),
                named,
                e.violates
            ));
        }
        rows.push(json!({
            "fault": e.fault,
            "offer": e.offer.as_str(),
            "killed": killed,
            "caught_by": match e.caught_by {
                Caught::MustFailure => "must-level failure",
                Caught::ShouldWarning => "should-level warning",
            },
            // Which of its scenarios fail is printed above, not committed: with several scenarios
            // able to expose a fault, which ones do can depend on timing (a cluster's lost
            // notification is noticed by whichever tab waits on it); the ids they name cannot.
            "scenarios": own,
            "violated_requirements_named": matched,
            "cascades_named": e.cascades,
            "requirements_named_by_failures": named,
        }));
    }
    rows.sort_by(|a, b| a["fault"].as_str().cmp(&b["fault"].as_str()));
    let killed = rows.iter().filter(|r| r["killed"] == Value::Bool(true)).count();
    eprintln!("kill matrix: {killed}/{} faults killed in {:.1} s", rows.len(), started.elapsed().as_secs_f64());

    let matrix = json!({
        "generated_by": "conformance/tests/kill_matrix.rs (regenerate: CHATWIRE_UPDATE_KILL_MATRIX=1)",
        "faults": rows.len(),
        "killed": killed,
        "always_run": ALWAYS,
        "matrix": rows,
    });
    let fresh = serde_json::to_string_pretty(&matrix).expect("the matrix serializes") + "\n";
    let path = matrix_path();
    if std::env::var_os("CHATWIRE_UPDATE_KILL_MATRIX").is_some() && only.is_none() {
        std::fs::write(&path, &fresh).expect("fixtures/kill-matrix.json is writable");
    }
    let _ = std::fs::remove_dir_all(&logs);
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default()).unwrap_or(Value::Null);
    // Rows that did not run (no PostgreSQL for the cluster rows, or left out by
    // CHATWIRE_KILL_MATRIX_ONLY) are not compared.
    let ran: BTreeSet<&str> = table.iter().map(|e| e.fault).collect();
    let committed_rows: BTreeMap<&str, &Value> = committed["matrix"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| Some((r["fault"].as_str()?, r))).collect())
        .unwrap_or_default();
    let mut stale = Vec::new();
    for row in &rows {
        let fault = row["fault"].as_str().unwrap_or_default();
        match committed_rows.get(fault) {
            Some(old) if *old == row => {}
            Some(old) => stale.push(format!("{fault}: committed {old}\n    fresh {row}")),
            None => stale.push(format!("{fault}: not in the committed matrix; fresh {row}")),
        }
    }
    // A committed row that should have run and did not: a fault gone from the table (the cluster
    // rows only count where PostgreSQL ran them).
    let cluster = Value::String(Offer::Cluster.as_str().to_owned());
    let should_run = |row: &Value| pg.is_some() || row["offer"] != cluster;
    stale.extend(
        committed_rows
            .iter()
            .filter(|(f, row)| !ran.contains(**f) && selected(f) && should_run(row))
            .map(|(f, _)| format!("{f}: in the committed matrix, but no fault of that name ran")),
    );
    if only.is_none() {
        if committed["always_run"] != matrix["always_run"] {
            stale.push(format!("always_run: committed {}, fresh {}", committed["always_run"], matrix["always_run"]));
        }
        if pg.is_some() && (committed["faults"] != matrix["faults"] || committed["killed"] != matrix["killed"]) {
            let (k, f) = (&committed["killed"], &committed["faults"]);
            stale.push(format!("counts: committed {k}/{f}, fresh {killed}/{}", rows.len()));
        }
    }
    // One short message, printed last, so that a CI log's tail shows what failed.
    let mut problems = Vec::new();
    if !survivors.is_empty() {
        problems.push(format!("faults the suite does not catch:\n{}", survivors.join("\n")));
    }
    if !charged_wrongly.is_empty() {
        problems.push(format!(
            "faults whose findings name other requirements than their row:\n{}",
            charged_wrongly.join("\n")
        ));
    }
    if !disagreements.is_empty() {
        problems.push(format!(
            "check-log over the recorded wire logs differs from the live run:\n{}",
            disagreements.join("\n")
        ));
    }
    if !stale.is_empty() {
        problems.push(format!(
            "fixtures/kill-matrix.json is stale (regenerate with CHATWIRE_UPDATE_KILL_MATRIX=1):\n{}",
            stale.join("\n")
        ));
    }
    if !problems.is_empty() {
        let message = problems.join("\n\n");
        eprintln!("\nkill matrix FAILED:\n{message}");
        panic!("{message}");
    }
}
