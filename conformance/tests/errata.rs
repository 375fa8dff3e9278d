//! Frozen requirement sets, end to end (`spec/versioning.md#frozen-requirement-sets`, COMPAT-017):
//! a backend that meets protocol 1.0 as released but not its errata (the reference with the fault
//! `errata-of-1-0-unmet`: numbers beyond 2^53 − 1 accepted, INT-002; no send-queue bound,
//! TRANSPORT-016) passes a 1.0-only run with the errata as warnings naming them, and fails it
//! with `--strict`. The clean reference passes the same selection without a warning. The three
//! runs go at once: the send-queue scenario waits for its close deadline against the fault.
//! `check-log` judges the recorded traffic the same way; `list` and `requirements` name versions
//! and errata. Since 1.2's release the same holds for 1.2 connections: a backend that breaks a 1.2
//! rule fails, and the same findings, judged by a registry in which that rule was added after 1.2's
//! release, warn (and fail with `--strict`).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::thread;

use chatwire_conformance::errata;
use chatwire_conformance::report::{RunReport, Verdict};
use chatwire_schema::requirements::{self, Requirement};
use serde_json::Value;

/// The scenarios the errata are observed in, plus a plain turn every 1.0 backend passes.
const SCENARIOS: &[&str] = &["int-opaque-numbers", "send-queue-overflow-resume", "turn-say-completed"];

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatwire-conformance-errata-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir.join(name)
}

/// A finished run: its output, JSON report and JUnit report.
struct Run {
    output: Output,
    json: Value,
    junit: String,
}

impl Run {
    fn text(&self) -> String {
        format!("{}{}", String::from_utf8_lossy(&self.output.stdout), String::from_utf8_lossy(&self.output.stderr))
    }

    fn check(&self, scenario: &str, check: &str) -> &Value {
        let s = self.json["scenarios"].as_array().expect("scenarios").iter().find(|s| s["id"] == scenario);
        let s = s.unwrap_or_else(|| panic!("{scenario} ran: {}", self.text()));
        s["checks"].as_array().expect("checks").iter().find(|c| c["id"] == check).unwrap_or_else(|| {
            panic!("{scenario} / {check} was recorded: {}", self.text());
        })
    }

    fn verdict(&self, scenario: &str) -> &str {
        let s = self.json["scenarios"].as_array().expect("scenarios").iter().find(|s| s["id"] == scenario);
        s.and_then(|s| s["verdict"].as_str()).unwrap_or_else(|| panic!("{scenario} ran: {}", self.text()))
    }

    /// The result per level of the connections that negotiated `version`.
    fn levels(&self, version: &str) -> &Value {
        let levels = self.json["levels"].as_array().expect("levels");
        levels.iter().find(|l| l["version"] == version).unwrap_or_else(|| panic!("{version} levels: {}", self.text()))
    }
}

/// Runs the suite offering 1.0 only against the bundled reference, with `fault` if any.
fn run(label: &'static str, fault: Option<&'static str>, strict: bool) -> thread::JoinHandle<Run> {
    run_offering(label, Some("1.0"), SCENARIOS, fault, strict)
}

/// Runs `scenarios` against the bundled reference, offering `versions` (the runner's default offer
/// when `None`), with `fault` if any.
fn run_offering(
    label: &'static str,
    versions: Option<&'static str>,
    scenarios: &'static [&'static str],
    fault: Option<&'static str>,
    strict: bool,
) -> thread::JoinHandle<Run> {
    thread::spawn(move || {
        let (json, junit) = (temp(&format!("{label}.json")), temp(&format!("{label}.xml")));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatwire-conformance"));
        cmd.env("NO_COLOR", "1").args(["run", "--jobs", "3"]);
        if let Some(v) = versions {
            cmd.args(["--versions", v]);
        }
        for s in scenarios {
            cmd.args(["--scenario", s]);
        }
        if let Some(f) = fault {
            cmd.args(["--reference-fault", f]);
        }
        if strict {
            cmd.arg("--strict");
        }
        cmd.arg("--report-json").arg(&json).arg("--junit").arg(&junit);
        cmd.arg("--wire-log").arg(temp(&format!("{label}-wire")));
        let output = cmd.output().expect("the binary runs");
        let text = std::fs::read_to_string(&json).unwrap_or_default();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        let junit = std::fs::read_to_string(&junit).unwrap_or_default();
        Run { output, json, junit }
    })
}

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test errata -- --ignored)"]
fn a_backend_meeting_1_0_as_released_passes_with_its_errata_as_warnings_and_fails_with_strict() {
    let clean = run("clean", None, false);
    let lenient = run("lenient", Some("errata-of-1-0-unmet"), false);
    let strict = run("strict", Some("errata-of-1-0-unmet"), true);
    let (clean, lenient, strict) =
        (clean.join().expect("clean run"), lenient.join().expect("lenient run"), strict.join().expect("strict run"));

    // The clean reference: every scenario passes, the errata evaluated pass too.
    assert_eq!(clean.output.status.code(), Some(0), "{}", clean.text());
    for s in SCENARIOS {
        assert_eq!(clean.verdict(s), "pass", "{s}: {}", clean.text());
    }
    assert_eq!(clean.levels("1.0")["errata"]["warn"], 0, "{}", clean.text());
    assert!(clean.levels("1.0")["errata"]["pass"].as_u64() >= Some(2), "{}", clean.text());

    // Without --strict: exit 0, each erratum a warning that names it and its date.
    let text = lenient.text();
    assert_eq!(lenient.output.status.code(), Some(0), "{text}");
    assert_eq!(lenient.json["exit_code"], 0);
    assert_eq!(lenient.verdict("turn-say-completed"), "pass", "{text}");
    for (scenario, check, note) in [
        ("int-opaque-numbers", "step-09-expect_error", "INT-002: erratum to 1.0 of 2026-11-23"),
        ("int-opaque-numbers", "wire-schema-valid", "INT-002: erratum to 1.0 of 2026-11-23"),
        ("send-queue-overflow-resume", "step-06-expect_close", "TRANSPORT-016: erratum to 1.0 of 2026-11-23"),
    ] {
        let c = lenient.check(scenario, check);
        assert_eq!(c["verdict"], "warn", "{scenario} / {check}: {text}");
        assert_eq!(c["errata"], serde_json::json!([note]), "{scenario} / {check}: {text}");
        assert_eq!(lenient.verdict(scenario), "warn", "{text}");
        assert!(text.contains(&format!("WARN {scenario} / {check}")), "{text}");
    }
    assert!(text.contains("(errata only: INT-002: erratum to 1.0 of 2026-11-23; fails with --strict)"), "{text}");
    // The result per level: every requirement of 1.0 as released passes; the two errata warn.
    let levels = lenient.levels("1.0");
    assert_eq!(levels["released"], true);
    let groups = levels["groups"].as_array().expect("groups");
    assert_eq!(groups[0]["since"], "1.0");
    assert_eq!(groups[0]["group"], "core");
    for level in groups.iter().flat_map(|g| g["levels"].as_array().expect("levels")) {
        assert_eq!(level["passed"], level["evaluated"], "every released requirement passes: {level}");
    }
    assert_eq!(levels["errata"]["warn"], 2, "{text}");
    assert_eq!(levels["errata"]["fail"], 0, "{text}");
    assert!(
        text.contains(
            "errata: 2 warn (INT-002: erratum to 1.0 of 2026-11-23, TRANSPORT-016: erratum to 1.0 of 2026-11-23)"
        ) || text.contains(
            "pass, 2 warn (INT-002: erratum to 1.0 of 2026-11-23, TRANSPORT-016: erratum to 1.0 of 2026-11-23)"
        ),
        "{text}"
    );
    assert!(text.contains("requirements of 1.0 (released 2026-11-22): 1.0 core: MUST "), "{text}");
    assert!(text.contains("result: conformant (exit 0)"), "{text}");
    assert!(lenient.junit.contains("<testsuite name=\"requirement-levels\""), "{}", lenient.junit);
    assert!(lenient.junit.contains("<property name=\"1.0\" value=\"1.0 core: MUST "), "{}", lenient.junit);
    assert!(lenient.junit.contains("errata only: INT-002: erratum to 1.0 of 2026-11-23"), "{}", lenient.junit);

    // With --strict: the same findings fail the run.
    let text = strict.text();
    assert_eq!(strict.output.status.code(), Some(1), "{text}");
    assert_eq!(strict.json["strict"], true);
    for (scenario, check) in
        [("int-opaque-numbers", "step-09-expect_error"), ("send-queue-overflow-resume", "step-06-expect_close")]
    {
        let c = strict.check(scenario, check);
        assert!(c["verdict"] == "fail" || c["verdict"] == "timeout", "{scenario} / {check}: {text}");
        assert_eq!(c["errata"].as_array().map(Vec::len), Some(1), "{scenario} / {check}: {text}");
    }
    assert_eq!(strict.verdict("turn-say-completed"), "pass", "{text}");
    assert_eq!(strict.levels("1.0")["errata"]["fail"], 2, "{text}");
    assert!(text.contains("NOT conformant (exit 1)"), "{text}");
    assert!(strict.junit.contains("<failure"), "{}", strict.junit);

    check_log_judges_errata_like_run();
}

/// `check-log` judges a recorded log the same way: the INT-002 findings of a 1.0 connection warn,
/// and fail with `--strict`.
fn check_log_judges_errata_like_run() {
    let log = temp("lenient-wire").join("int-opaque-numbers.jsonl");
    let check_log = |strict: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatwire-conformance"));
        cmd.env("NO_COLOR", "1").arg("check-log").arg(&log);
        if strict {
            cmd.arg("--strict");
        }
        let o = cmd.output().expect("check-log runs");
        (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let (code, text) = check_log(false);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("WARN int-opaque-numbers.jsonl / wire-schema-valid [INT-002] (errata only"), "{text}");
    assert!(text.contains("requirements of 1.0 (released 2026-11-22): 1.0 core: MUST "), "{text}");
    let (code, text) = check_log(true);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("FAIL int-opaque-numbers.jsonl / wire-schema-valid [INT-002] (errata only"), "{text}");
}

#[test]
fn list_and_requirements_name_versions_and_errata() {
    let bin = env!("CARGO_BIN_EXE_chatwire-conformance");
    let list =
        Command::new(bin).args(["list", "--scenario", "int-opaque-numbers", "--scenario", "retry-keeps-*"]).output();
    let list = String::from_utf8_lossy(&list.expect("list runs").stdout).into_owned();
    assert!(list.contains("erratum to 1.0 of 2026-11-23: INT-002"), "{list}");
    assert!(list.contains("since 1.1 retry: RETRY-001"), "{list}");

    let reqs = Command::new(bin).arg("requirements").output().expect("requirements runs");
    let reqs = String::from_utf8_lossy(&reqs.stdout).into_owned();
    assert!(reqs.contains("since 1.0 core, erratum to 1.0 of 2026-11-23"), "{reqs}");
    assert!(reqs.contains("since 1.1 retry"), "{reqs}");
    assert!(reqs.contains("1.0 (released 2026-11-22): 165 requirement(s) frozen"), "{reqs}");
    assert!(reqs.contains("1.1 (released 2026-11-26): 223 requirement(s) frozen"), "{reqs}");
    assert!(reqs.contains("1.2 (released 2026-11-28): "), "{reqs}");
    // 1.3 is the minor in progress: its set is not frozen yet.
    assert!(reqs.contains("1.3 (in progress, not frozen)"), "{reqs}");
}

/// A 1.2 rule the reference's fault `cancel-stops-newer-invocation` breaks, observed in
/// `cancel-refusals`, beside a plain turn every backend passes.
const V12_SCENARIOS: &[&str] = &["cancel-refusals", "turn-say-completed"];
const V12_RULE: &str = "CANCEL-001";
/// The day after 1.2's release (2026-11-28).
const AFTER_1_2: &str = "2026-11-29";

/// The requirement ids each failing check of `report` charges: its findings' ids, else its own.
fn charged_ids(report: &RunReport) -> Vec<String> {
    let mut ids: Vec<String> = report
        .scenarios
        .iter()
        .flat_map(|s| &s.checks)
        .filter(|c| c.verdict.is_failure())
        .flat_map(|c| {
            let found: Vec<String> = c.findings.iter().filter_map(|f| f.requirement.clone()).collect();
            if found.is_empty() {
                c.requirements.clone()
            } else {
                found
            }
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn since_1_2_is_released_a_rule_added_after_it_warns_on_a_1_2_connection_and_fails_with_strict() {
    let broken = run_offering("v12", Some("1.2"), V12_SCENARIOS, Some("cancel-stops-newer-invocation"), false);
    let broken = broken.join().expect("1.2 run");
    let text = broken.text();

    // As the spec stands, CANCEL-001 is part of the set 1.2 was released with: its failure fails.
    assert_eq!(broken.output.status.code(), Some(1), "{text}");
    assert_eq!(broken.verdict("cancel-refusals"), "fail", "{text}");
    assert_eq!(broken.verdict("turn-say-completed"), "pass", "{text}");
    let levels = broken.levels("1.2");
    assert_eq!(levels["released"], true, "{text}");
    assert_eq!(levels["errata"]["warn"], 0, "{text}");
    assert!(text.contains("requirements of 1.2 (released 2026-11-28): "), "{text}");
    assert!(!text.contains("not frozen"), "{text}");

    // The same findings judged by a registry in which the rules they charge were added the day
    // after 1.2's release: errata to 1.2, so warnings naming them, and failures only when strict.
    let report: RunReport = serde_json::from_value(broken.json.clone()).expect("the JSON report parses");
    assert!(report.scenarios.iter().all(|s| s.version.as_deref() == Some("1.2")), "{text}");
    let charged = charged_ids(&report);
    assert!(charged.iter().any(|id| id == V12_RULE), "{V12_RULE} is charged: {charged:?}");
    let mut registry: Vec<Requirement> = requirements::all().expect("the spec parses");
    for r in registry.iter_mut().filter(|r| charged.contains(&r.id)) {
        r.erratum = Some(AFTER_1_2.to_owned());
    }
    let note = format!("{V12_RULE}: erratum to 1.2 of {AFTER_1_2}");

    let mut lenient = report.clone();
    errata::apply(&mut lenient, &registry, false);
    let cancel = lenient.scenarios.iter().find(|s| s.id == "cancel-refusals").expect("ran");
    assert_eq!(cancel.verdict, Verdict::Warn, "{:#?}", cancel.checks);
    let warned: Vec<_> = cancel.checks.iter().filter(|c| !c.errata.is_empty()).collect();
    assert!(!warned.is_empty() && warned.iter().all(|c| c.verdict == Verdict::Warn), "{warned:#?}");
    assert!(warned.iter().any(|c| c.errata.contains(&note)), "{note}: {warned:#?}");
    assert_eq!(lenient.summary.fail, 0, "{:?}", lenient.summary);
    let v12 = lenient.levels.iter().find(|l| l.version == "1.2").expect("1.2 levels");
    assert!(v12.released && v12.errata.warn >= 1 && v12.errata.fail == 0, "{v12:?}");
    assert!(v12.errata.charged.contains(&note), "{v12:?}");
    assert!(errata::line(v12).contains(&note), "{}", errata::line(v12));

    let mut strict = report;
    errata::apply(&mut strict, &registry, true);
    let cancel = strict.scenarios.iter().find(|s| s.id == "cancel-refusals").expect("ran");
    assert_eq!(cancel.verdict, Verdict::Fail);
    assert!(cancel.checks.iter().any(|c| c.verdict.is_failure() && c.errata.contains(&note)), "{:#?}", cancel.checks);
    let v12 = strict.levels.iter().find(|l| l.version == "1.2").expect("1.2 levels");
    assert!(v12.errata.fail >= 1 && v12.errata.warn == 0, "{v12:?}");
}
