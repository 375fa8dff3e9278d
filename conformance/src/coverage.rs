//! Which checks assert each requirement: declared (what the checks and steps say they prove) and
//! measured (what was evaluated in a passing run). A requirement is *covered* when at least one
//! check naming it was evaluated in a passing run against the bundled reference; a scenario-level
//! id that no check asserts is only *claimed*.

use std::collections::{BTreeMap, BTreeSet};

use chatwire_schema::ReqId;

use crate::attribution::{step_requirements, Source};
use crate::monitor::ALWAYS_ON;
use crate::report::{RunReport, Verdict};
use crate::scenario::Scenario;

/// Requirement id -> the checks that assert it (`always-on <check>` or `<scenario> / <check>`).
pub type CoverageMap = BTreeMap<ReqId, BTreeSet<String>>;

fn always_on_name(check: &str) -> String {
    format!("always-on {check}")
}

/// What the checks and steps declare they assert (no run needed).
pub fn declared(scenarios: &[Scenario]) -> CoverageMap {
    let mut out = CoverageMap::new();
    for def in ALWAYS_ON {
        for id in def.requirements {
            out.entry(*id).or_default().insert(always_on_name(def.id));
        }
    }
    for s in scenarios {
        for (index, step) in s.steps.iter().enumerate() {
            let (ids, source) = step_requirements(s, step);
            if matches!(source, Source::Declared | Source::Mentioned | Source::Kind) {
                for id in ids {
                    out.entry(id).or_default().insert(format!("{} / {}", s.id, step_check_id(index, step)));
                }
            }
        }
    }
    out
}

/// The report id of a scenario step's check.
pub fn step_check_id(index: usize, step: &crate::scenario::Step) -> String {
    match step {
        crate::scenario::Step::Snapshot { name, .. } => format!("snapshot-{name}"),
        _ => format!("step-{:02}-{}", index + 1, step.kind()),
    }
}

/// What a run evaluated: every passing check of a passing scenario, under the requirements it
/// evaluated (always-on checks) or asserts (steps, not the scenario-level fallback).
pub fn measured(report: &RunReport, scenarios: &[Scenario]) -> CoverageMap {
    let mut out = CoverageMap::new();
    for sr in report.scenarios.iter().filter(|r| r.verdict == Verdict::Pass && r.sweep.is_none()) {
        let Some(s) = scenarios.iter().find(|s| s.id == sr.id) else { continue };
        let asserting: BTreeMap<String, Vec<ReqId>> = s
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, step)| {
                let (ids, source) = step_requirements(s, step);
                matches!(source, Source::Declared | Source::Mentioned | Source::Kind)
                    .then(|| (step_check_id(i, step), ids))
            })
            .collect();
        for check in sr.checks.iter().filter(|c| c.verdict == Verdict::Pass) {
            if ALWAYS_ON.iter().any(|d| d.id == check.id) {
                for id in check.requirements.iter().filter_map(|r| ReqId::parse(r).ok()) {
                    out.entry(id).or_default().insert(always_on_name(&check.id));
                }
            } else if let Some(ids) = asserting.get(&check.id) {
                for id in ids {
                    out.entry(*id).or_default().insert(format!("{} / {}", s.id, check.id));
                }
            }
        }
    }
    out
}
