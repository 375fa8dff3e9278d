//! The template kill matrix: the suite's power and its attribution, measured on faults planted in
//! a backend nobody on the suite's side wrote. Each fault of the Python template's corpus
//! (`tools/python/template_faults`: `faults.py` plants it, `serve.py --fault NAME` runs the template
//! with it, `corpus.json` is the table) must make a check of a must-level scenario fail, and the
//! requirement ids the failing checks are charged to must be exactly the row's: what the fault
//! breaks and the suite names today, plus the cascades it names although the fault does not break
//! them (attribution still to fix). A row whose charges move either way is stale, so the cascades
//! shrink to empty as the monitor's attribution improves, and a fault charged to other ids fails.
//!
//! Charged ids are those of `kill_matrix.rs`: a failing check's findings' requirements, or the
//! check's own where it has no finding or one without a requirement (`CheckReport::charged_requirements`).
//! A control run first proves every scenario used here passes against the clean template, through
//! the same launcher, so a kill is the fault's doing.
//!
//! It needs a Python with the template's runtime packages (`tools/python/requirements.lock` and the
//! `chatwire` wheel), named by `CHATWIRE_TEMPLATE_PYTHON`, so it is ignored in a plain `cargo test`
//! and run by its own step of `.ci/run`:
//! `CHATWIRE_TEMPLATE_PYTHON=tools/python/.venv-run/bin/python cargo test -p chatwire-conformance --test template_kill_matrix -- --ignored --nocapture`.
//! The result is written deterministically to `fixtures/template-kill-matrix.json` and compared
//! with the committed file; regenerate it with `CHATWIRE_UPDATE_TEMPLATE_KILL_MATRIX=1`.
//! `CHATWIRE_TEMPLATE_KILL_MATRIX_ONLY=<glob>,…` runs only the matching faults (compared, never written).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::report::{RunReport, Verdict};
use chatwire_conformance::runner::{run_suite, RunOptions, RELOAD_SUFFIX};
use chatwire_conformance::scenario::{glob_match, Level, Scenario};
use chatwire_conformance::snapshot::SnapshotStore;
use serde_json::{json, Value};

#[path = "template_kill_matrix/corpus.rs"]
mod corpus;

use corpus::{faults_dir, repo_root, Row};

/// Failing check ids (`scenario/check`) and the requirement ids each is charged to.
type Charges = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The launcher's command line for `fault` (`None`: the clean template), in or outside conformance mode.
fn command(python: &Path, fault: Option<&str>, conformance: bool) -> Target {
    let serve = faults_dir().join("serve.py");
    let mut command = format!("{} {}", sh_quote(&python.to_string_lossy()), sh_quote(&serve.to_string_lossy()));
    if let Some(fault) = fault {
        command.push_str(&format!(" --fault {}", sh_quote(fault)));
    }
    command.push_str(" --port {port} --db {db}");
    if conformance {
        command.push_str(" --conformance");
    }
    Target::Exec { command, path: "/ws".to_owned() }
}

fn options(python: &Path, fault: Option<&str>, row_versions: Option<Vec<String>>, store: &SnapshotStore) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let defaults = DriverConfig::default();
    RunOptions {
        target: command(python, fault, true),
        plain_target: Some(command(python, fault, false)),
        jobs: 2,
        // A debug runner on a shared machine; deadlines only bite when a fault makes a step wait.
        driver: DriverConfig {
            timeout_scale: 2.0,
            snapshots: SnapshotMode::Compare(store.clone()),
            versions: row_versions.unwrap_or(defaults.versions.clone()),
            ..defaults
        },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(600),
        start_timeout: Duration::from_secs(20),
        ..RunOptions::default()
    }
}

fn pick(all: &[Scenario], globs: &[String]) -> Vec<Scenario> {
    for glob in globs {
        assert!(
            all.iter().any(|s| glob_match(glob, &s.id)),
            "the corpus names scenario {glob:?}, which does not exist"
        );
    }
    all.iter().filter(|s| globs.iter().any(|g| glob_match(g, &s.id))).cloned().collect()
}

/// The failing checks of the must-level scenarios of `report`, with the ids each is charged to.
fn charges(report: &RunReport) -> Charges {
    let mut charges = Charges::new();
    for scenario in report.scenarios.iter().filter(|s| s.level == Level::Must) {
        for check in scenario.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Timeout)) {
            charges.entry(scenario.id.clone()).or_default().insert(check.id.clone(), check.charged_requirements());
        }
    }
    charges
}

fn python() -> PathBuf {
    let python = std::env::var_os("CHATWIRE_TEMPLATE_PYTHON").map(PathBuf::from).expect(
        "CHATWIRE_TEMPLATE_PYTHON must name a Python with tools/python/requirements.lock and the chatwire wheel \
         (e.g. tools/python/.venv-run/bin/python, which .ci/run builds)",
    );
    // Relative to the repository root, where .ci/run runs; the test runs in the crate's directory.
    if python.is_relative() && python.components().count() > 1 {
        repo_root().join(python)
    } else {
        python
    }
}

/// The fault names the launcher knows (`serve.py --list`).
fn launcher_faults(python: &Path) -> BTreeSet<String> {
    let out = std::process::Command::new(python)
        .arg(faults_dir().join("serve.py"))
        .arg("--list")
        .output()
        .unwrap_or_else(|e| panic!("{} cannot run serve.py --list: {e}", python.display()));
    assert!(out.status.success(), "serve.py --list failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

fn matrix_path() -> PathBuf {
    repo_root().join("fixtures/template-kill-matrix.json")
}

#[test]
fn the_corpus_table_is_well_formed() {
    let corpus = corpus::load();
    let known: BTreeSet<String> = chatwire_schema::requirements::all()
        .expect("the spec's requirement registry is valid")
        .into_iter()
        .map(|r| r.id)
        .collect();
    let problems = corpus::problems(&corpus, &known);
    assert!(problems.is_empty(), "tools/python/template_faults/corpus.json:\n{}", problems.join("\n"));
    assert!(corpus.faults.len() >= 15, "the corpus holds {} faults, fewer than 15", corpus.faults.len());
    let all = embedded_scenarios().expect("the embedded scenarios are valid");
    for row in &corpus.faults {
        pick(&all, &row.scenarios);
    }
}

/// Runs one fault's row; returns its matrix row and what is wrong with it.
async fn run_row(python: &Path, row: &Row, all: &[Scenario], store: &SnapshotStore) -> (Value, Vec<String>) {
    let scenarios = pick(all, &row.scenarios);
    let own: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let opts = options(python, Some(&row.fault), row.versions(), store);
    let report = run_suite(scenarios, &opts, Arc::new(|_| {}))
        .await
        .unwrap_or_else(|e| panic!("{}: the template with the fault did not start: {e}", row.fault));
    let charges = charges(&report);
    let named: BTreeSet<String> = charges.values().flat_map(BTreeMap::values).flatten().cloned().collect();
    let killed = !charges.is_empty();
    let expected = row.expected();
    let violated_named: Vec<&String> = row.violates.iter().filter(|id| named.contains(*id)).collect();
    let mut problems = Vec::new();
    if !killed {
        problems.push(format!("{}: survives: no check of a must-level scenario fails", row.fault));
    } else if named != expected {
        let beyond: Vec<&String> = named.difference(&expected).collect();
        let stale: Vec<&String> = expected.difference(&named).collect();
        problems.push(format!("{}: named beyond the row {beyond:?}, in the row but not named {stale:?}", row.fault));
    }
    // Which scenarios fail, and by which checks, is printed, not committed: a fault shown by
    // several scenarios can be caught by one or another depending on timing; what the row holds
    // (the ids charged, exactly) does not.
    let failing: Vec<&String> = charges.keys().collect();
    eprintln!("  {}: failing {failing:?}, charges {charges:?}", row.fault);
    // A scenario's reload variant (`<id>@reload`) is the scenario's own.
    let scenarios: Vec<String> = report.scenarios.iter().map(|s| s.id.clone()).collect();
    assert!(scenarios.iter().all(|id| own.contains(id.strip_suffix(RELOAD_SUFFIX).unwrap_or(id))));
    let value = json!({
        "fault": row.fault,
        "since": row.since,
        "offer": row.offer,
        "killed": killed,
        "scenarios": scenarios,
        "requirements_named": named,
        "violates": row.violates,
        "violated_named": violated_named,
        "unnamed": row.unnamed,
        "cascades": row.cascades,
    });
    (value, problems)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the template's Python (CHATWIRE_TEMPLATE_PYTHON); .ci/run runs it as its own step"]
async fn every_fault_planted_in_the_template_is_killed_and_charged_as_its_row_says() {
    let started = Instant::now();
    let python = python();
    let corpus = corpus::load();
    let all = embedded_scenarios().expect("the embedded scenarios are valid");
    let store =
        SnapshotStore::from_dir(&repo_root().join("fixtures/snapshots")).expect("fixtures/snapshots is readable");
    let listed: BTreeSet<String> = corpus.faults.iter().map(|r| r.fault.clone()).collect();
    assert_eq!(launcher_faults(&python), listed, "serve.py --list and corpus.json name different faults");
    let only: Option<Vec<String>> = std::env::var("CHATWIRE_TEMPLATE_KILL_MATRIX_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned).collect());
    let selected = |fault: &str| only.as_ref().is_none_or(|globs| globs.iter().any(|g| glob_match(g, fault)));
    let rows: Vec<&Row> = corpus.faults.iter().filter(|r| selected(&r.fault)).collect();

    // Control: every scenario used passes against the clean template under each row's offer.
    let mut broken = Vec::new();
    for offer in ["default", "1.0"] {
        let globs: Vec<String> = rows.iter().filter(|r| r.offer == offer).flat_map(|r| r.scenarios.clone()).collect();
        let Some(row) = rows.iter().find(|r| r.offer == offer) else { continue };
        let control = run_suite(pick(&all, &globs), &options(&python, None, row.versions(), &store), Arc::new(|_| {}))
            .await
            .expect("the clean template starts");
        broken.extend(
            control
                .scenarios
                .iter()
                .filter(|s| s.verdict != Verdict::Pass)
                .map(|s| format!("{} ({}, offer {offer})", s.id, s.verdict.as_str())),
        );
        eprintln!(
            "control, offer {offer}: {} runs pass ({:.0} s)",
            control.scenarios.len(),
            started.elapsed().as_secs_f64()
        );
    }
    assert!(broken.is_empty(), "the control run against the clean template must pass: {broken:?}");

    let mut matrix_rows = Vec::new();
    let mut problems = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        let at = Instant::now();
        let (value, wrong) = run_row(&python, row, &all, &store).await;
        eprintln!(
            "[{}/{}] {}: {} ({:.0} s), named {}, violates {:?}{}",
            n + 1,
            rows.len(),
            row.fault,
            if value["killed"] == Value::Bool(true) { "killed" } else { "SURVIVES" },
            at.elapsed().as_secs_f64(),
            value["requirements_named"],
            row.violates,
            if wrong.is_empty() { String::new() } else { format!(" -- STALE: {}", wrong.join("; ")) },
        );
        problems.extend(wrong);
        matrix_rows.push(value);
    }
    let killed = matrix_rows.iter().filter(|r| r["killed"] == Value::Bool(true)).count();
    let exact = matrix_rows.iter().filter(|r| r["cascades"] == json!([]) && r["unnamed"] == json!([])).count();
    eprintln!(
        "template kill matrix: {killed}/{} faults killed, {exact} charged exactly their violations, in {:.0} s",
        matrix_rows.len(),
        started.elapsed().as_secs_f64()
    );
    let matrix = json!({
        "generated_by": "conformance/tests/template_kill_matrix.rs (regenerate: CHATWIRE_UPDATE_TEMPLATE_KILL_MATRIX=1)",
        "table": "tools/python/template_faults/corpus.json",
        "faults": matrix_rows.len(),
        "killed": killed,
        "charged_exactly": exact,
        "matrix": matrix_rows,
    });
    problems.extend(compare_with_committed(&matrix, only.is_some()));
    if !problems.is_empty() {
        let message = problems.join("\n");
        eprintln!("\ntemplate kill matrix FAILED:\n{message}");
        panic!("{message}");
    }
}

/// Writes the matrix when asked to, then lists how the committed file differs from it (only the
/// rows that ran when some were left out).
fn compare_with_committed(matrix: &Value, partial: bool) -> Vec<String> {
    let fresh = serde_json::to_string_pretty(matrix).expect("the matrix serializes") + "\n";
    let path = matrix_path();
    if std::env::var_os("CHATWIRE_UPDATE_TEMPLATE_KILL_MATRIX").is_some() && !partial {
        std::fs::write(&path, &fresh).expect("fixtures/template-kill-matrix.json is writable");
    }
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default()).unwrap_or(Value::Null);
    let rows_of = |m: &Value| -> BTreeMap<String, Value> {
        m["matrix"]
            .as_array()
            .map(|rows| rows.iter().filter_map(|r| Some((r["fault"].as_str()?.to_owned(), r.clone()))).collect())
            .unwrap_or_default()
    };
    let (old, new) = (rows_of(&committed), rows_of(matrix));
    let mut stale = Vec::new();
    for (fault, row) in &new {
        match old.get(fault) {
            Some(o) if o == row => {}
            Some(o) => stale.push(format!("{fault}: committed {o}\n    fresh {row}")),
            None => stale.push(format!("{fault}: not in the committed matrix; fresh {row}")),
        }
    }
    if !partial {
        stale.extend(
            old.keys().filter(|f| !new.contains_key(*f)).map(|f| format!("{f}: committed, but no such fault ran")),
        );
        for key in ["faults", "killed", "charged_exactly"] {
            if committed[key] != matrix[key] {
                stale.push(format!("{key}: committed {}, fresh {}", committed[key], matrix[key]));
            }
        }
    }
    if stale.is_empty() {
        return stale;
    }
    vec![format!(
        "fixtures/template-kill-matrix.json is stale (regenerate with CHATWIRE_UPDATE_TEMPLATE_KILL_MATRIX=1):\n{}",
        stale.join("\n")
    )]
}
