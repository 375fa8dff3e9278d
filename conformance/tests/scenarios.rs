//! The scenario suite against the bundled reference backend (spawned as a real process, so
//! `restart` is a real kill -9), one test per scenario file, with the golden snapshots asserted by
//! insta. The whole suite takes minutes in a debug build, so every test is ignored by
//! `cargo test --workspace` (the main job, `chatwire-conformance run`, runs the same scenarios
//! against the same snapshots in seconds) and `.ci/run` runs them all:
//! `cargo test -p chatwire-conformance --test scenarios -- --ignored`; add a name
//! (`-- --ignored hitl-submit`) to run just that one.
//!
//! Review snapshot changes with `cargo insta review`; CI (CI=true) never writes `.snap.new` files,
//! so a missing or changed snapshot fails there.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::output::{scenario_block, Style};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::scenario::ScenarioLoader;
use chatwire_conformance::snapshot::file_name;

fn bundled() -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    RunOptions {
        target: Target::Bundled { fault: None },
        jobs: 1,
        // Debug builds on a shared machine: generous deadlines (they only matter when something hangs).
        driver: DriverConfig { timeout_scale: 3.0, snapshots: SnapshotMode::Collect, ..DriverConfig::default() },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(300),
        start_timeout: Duration::from_secs(20),
        ..RunOptions::default()
    }
}

fn scenario(path: &Path, contents: String) -> Result<(), Box<dyn std::error::Error>> {
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let scenario = ScenarioLoader::new().parse(&file, &contents)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut opts = bundled();
    // A scenario of a deployment of several instances runs against 3 replicas on a throwaway
    // PostgreSQL (CI has one: CHATWIRE_REQUIRE_POSTGRES=1; elsewhere it is skipped, saying so).
    let pg = match scenario.min_replicas() > 1 {
        true => match chatwire_pgtmp::for_test(&file) {
            Some(pg) => Some(pg),
            None => return Ok(()),
        },
        false => None,
    };
    if let Some(pg) = &pg {
        opts.cluster = chatwire_conformance::backend::ClusterSpec {
            replicas: 3,
            store: Some(chatwire_conformance::backend::StoreUrl::parse(pg.url())?),
        };
    }
    let report = runtime.block_on(run_suite(vec![scenario.clone()], &opts, Arc::new(|_| {})))?;
    let result = &report.scenarios[0];
    // A scenario that needs a feature is not applicable, and must say so, until the reference
    // speaks 1.1 (SUPPORTED_VERSIONS holds 1.1 from then on, and it must pass).
    let speaks_1_1 = chatwire_schema::SUPPORTED_VERSIONS.iter().any(|v| v.minor >= 1);
    if !speaks_1_1 && !scenario.features.is_empty() {
        if result.verdict != Verdict::NotApplicable {
            return Err(format!(
                "a scenario needing features must be not applicable against a 1.0 reference:\n{}",
                scenario_block(Style { colour: false }, result, 0, 0)
            )
            .into());
        }
        return Ok(());
    }
    if result.verdict != Verdict::Pass {
        return Err(format!(
            "not passing against the reference:\n{}",
            scenario_block(Style { colour: false }, result, 0, 0)
        )
        .into());
    }
    for (name, text) in &result.snapshots {
        let snapshot_name = file_name(&result.id, name).trim_end_matches(".snap").to_owned();
        insta::with_settings!({
            snapshot_path => "../../fixtures/snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(snapshot_name, text);
        });
    }
    if result.snapshots.len() != scenario.snapshot_names().len() {
        return Err(format!(
            "{} snapshot step(s), {} projection(s) taken",
            scenario.snapshot_names().len(),
            result.snapshots.len()
        )
        .into());
    }
    // The reload variant (every default resume a reload, answered by a snapshot) passes too and
    // reaches the same golden snapshots: the two resume paths give one state.
    for variant in &report.scenarios[1..] {
        if variant.verdict != Verdict::Pass {
            return Err(format!(
                "the variant is not passing against the reference:\n{}",
                scenario_block(Style { colour: false }, variant, 0, 0)
            )
            .into());
        }
        if variant.snapshots != result.snapshots {
            return Err(format!("{}: its snapshots differ from the scenario's own", variant.id).into());
        }
    }
    if report.scenarios.len() != 1 + usize::from(scenario.resumes_by_default()) {
        return Err(format!("{} reports for one scenario", report.scenarios.len()).into());
    }
    Ok(())
}

/// One ignored test per scenario file of `fixtures/scenarios`, named `scenario::<file>`.
fn main() -> std::process::ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/scenarios");
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&root) {
        Ok(entries) => {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect()
        }
        Err(e) => {
            eprintln!("cannot read {}: {e}", root.display());
            return std::process::ExitCode::FAILURE;
        }
    };
    paths.sort();
    let trials = paths
        .into_iter()
        .map(|path| {
            let name = format!("scenario::{}", path.file_name().unwrap_or_default().to_string_lossy());
            libtest_mimic::Trial::test(name, move || {
                let contents = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                scenario(&path, contents).map_err(|e| e.to_string().into())
            })
            .with_ignored_flag(true)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
