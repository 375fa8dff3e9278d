//! Expected-failure baselines: `[{"scenario", "check", "reason"}]`. A listed check that fails is
//! excused; a listed check that now passes is stale and fails the run, so baselines only shrink.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::report::{scenario_verdict, RunReport, StaleEntry, Verdict};

/// One expected failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// Scenario id.
    pub scenario: String,
    /// Check id (as in the report, e.g. `step-04-expect` or `seq-increasing`).
    pub check: String,
    /// Why the failure is accepted for now (an issue link, a plan).
    pub reason: String,
}

/// Why a baseline file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// Unreadable.
    #[error("cannot read baseline {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not a list of entries.
    #[error("baseline {path} is not a JSON list of {{scenario, check, reason}}: {message}")]
    Format {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// An entry without a reason.
    #[error("baseline {path}: the entry for {scenario}/{check} gives no reason")]
    NoReason {
        /// The file.
        path: String,
        /// Scenario id.
        scenario: String,
        /// Check id.
        check: String,
    },
}

/// Reads and checks a baseline file.
pub fn load(path: &Path) -> Result<Vec<BaselineEntry>, BaselineError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io { path: shown.clone(), source })?;
    parse(&shown, &text)
}

/// Parses baseline text (`path` only names it in errors).
pub fn parse(path: &str, text: &str) -> Result<Vec<BaselineEntry>, BaselineError> {
    let entries: Vec<BaselineEntry> = serde_json::from_str(text)
        .map_err(|e| BaselineError::Format { path: path.to_owned(), message: e.to_string() })?;
    if let Some(e) = entries.iter().find(|e| e.reason.trim().is_empty()) {
        return Err(BaselineError::NoReason {
            path: path.to_owned(),
            scenario: e.scenario.clone(),
            check: e.check.clone(),
        });
    }
    Ok(entries)
}

/// Marks baselined failures, records stale entries, and recomputes verdicts and the summary.
/// Entries for scenarios that did not run (filtered out) or were not applicable are ignored.
pub fn apply(report: &mut RunReport, entries: &[BaselineEntry]) {
    for entry in entries {
        let Some(scenario) = report.scenarios.iter_mut().find(|s| s.id == entry.scenario) else { continue };
        if scenario.verdict == Verdict::NotApplicable {
            continue;
        }
        let stale = |now: &str| StaleEntry {
            scenario: entry.scenario.clone(),
            check: entry.check.clone(),
            reason: entry.reason.clone(),
            now: now.to_owned(),
        };
        match scenario.checks.iter_mut().find(|c| c.id == entry.check) {
            Some(check) if check.verdict.is_failure() || check.verdict == Verdict::Warn => {
                check.baselined = Some(entry.reason.clone());
            }
            Some(check) if check.verdict == Verdict::NotApplicable => {}
            Some(check) => report.stale_baseline.push(stale(check.verdict.as_str())),
            None => report.stale_baseline.push(stale("no such check in this run")),
        }
        scenario.verdict = scenario_verdict(&scenario.checks);
    }
    report.summarize();
}

/// The exit code for a finished run: 2 when the harness failed somewhere (results incomplete),
/// 1 for an unexcused failure or a stale baseline entry, 0 otherwise.
pub fn exit_code(report: &RunReport) -> u8 {
    let unexcused =
        report.scenarios.iter().flat_map(|s| s.checks.iter()).any(|c| c.verdict.is_failure() && c.baselined.is_none());
    if report.scenarios.iter().any(|s| s.verdict == Verdict::HarnessError) {
        2
    } else if unexcused || !report.stale_baseline.is_empty() {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CheckReport, ScenarioReport, Summary};
    use crate::scenario::Level;

    fn check(id: &str, verdict: Verdict) -> CheckReport {
        CheckReport {
            id: id.into(),
            verdict,
            requirements: vec![],
            summary: String::new(),
            findings: vec![],
            findings_dropped: 0,
            baselined: None,
            errata: vec![],
        }
    }

    fn report(checks: Vec<CheckReport>) -> RunReport {
        let scenario = ScenarioReport {
            id: "s".into(),
            title: String::new(),
            level: Level::Must,
            requirements: vec![],
            verdict: scenario_verdict(&checks),
            duration_ms: 0,
            checks,
            wire_log: vec![],
            backend_stderr: None,
            snapshots: Default::default(),
            sweep: None,
            version: None,
            in_force: Default::default(),
        };
        RunReport {
            tool: String::new(),
            target: String::new(),
            replicas: 1,
            timeout_scale: 1.0,
            duration_ms: 0,
            summary: Summary::default(),
            scenarios: vec![scenario],
            stale_baseline: vec![],
            backend_logs: vec![],
            sweep: None,
            strict: false,
            levels: vec![],
            exit_code: 0,
        }
    }

    fn entry(check: &str) -> BaselineEntry {
        BaselineEntry { scenario: "s".into(), check: check.into(), reason: "known bug #1".into() }
    }

    #[test]
    fn listed_failure_is_excused() {
        let mut r = report(vec![check("a", Verdict::Pass), check("b", Verdict::Fail)]);
        assert_eq!(exit_code(&r), 1);
        apply(&mut r, &[entry("b")]);
        assert_eq!(r.scenarios[0].verdict, Verdict::Pass);
        assert_eq!(r.summary.baselined, 1);
        assert_eq!(exit_code(&r), 0);
    }

    #[test]
    fn listed_check_that_passes_or_vanished_is_stale() {
        let mut r = report(vec![check("a", Verdict::Pass)]);
        apply(&mut r, &[entry("a"), entry("gone"), BaselineEntry { scenario: "other".into(), ..entry("a") }]);
        assert_eq!(r.stale_baseline.len(), 2);
        assert_eq!(r.stale_baseline[0].now, "pass");
        assert_eq!(exit_code(&r), 1);
    }

    #[test]
    fn harness_errors_win() {
        let r = report(vec![check("a", Verdict::Fail), check("h", Verdict::HarnessError)]);
        assert_eq!(exit_code(&r), 2);
    }

    #[test]
    fn parse_requires_reasons() {
        assert!(parse("b.json", r#"[{"scenario":"s","check":"c","reason":"x"}]"#).is_ok());
        assert!(matches!(
            parse("b.json", r#"[{"scenario":"s","check":"c","reason":" "}]"#),
            Err(BaselineError::NoReason { .. })
        ));
        assert!(matches!(parse("b.json", r#"{"scenario":"s"}"#), Err(BaselineError::Format { .. })));
        assert!(matches!(
            parse("b.json", r#"[{"scenario":"s","check":"c","reason":"x","extra":1}]"#),
            Err(BaselineError::Format { .. })
        ));
    }
}
