//! Certification a team can show: a static HTML page per run, a matrix over several runs
//! (implementations × requirements), and an SVG badge per implementation, version and level.
//!
//! Everything is rendered from JSON reports (`schema/json/conformance-report.json`, what `run
//! --report-json` writes) and from what the binary embeds (the spec's requirement registry, for the
//! text and the link of each requirement, and the scenarios, for the features each one needs).
//! Nothing is fetched: the pages have no external asset, no script, and every string that came
//! from a report (a backend's target, its findings, the frames it sent) is escaped.
//!
//! `chatwire-conformance report --html DIR REPORT.json` writes one run's page and badges;
//! `chatwire-conformance matrix --html DIR [LABEL=]REPORT.json…` writes the matrix, each run's page
//! and every badge.

use std::collections::{BTreeMap, BTreeSet};

use chatwire_schema::requirements::Requirement;

use crate::report::{RunReport, Verdict};
use crate::scenario::Scenario;

pub mod badge;
pub mod command;
pub mod html;
pub mod matrix;
mod page;

/// What a requirement's checks in one run say about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequirementResult {
    /// The worst verdict of the checks that charged or evaluated it (n/a only when no check applied).
    pub verdict: Verdict,
    /// How many checks named it.
    pub checks: usize,
}

/// One run, read for certification: its report, a label, and each requirement's result.
#[derive(Clone, Debug)]
pub struct Certified {
    /// What the run is called on the matrix (`python-template`, `reference 1.0 offer`).
    pub label: String,
    /// The report as written by `run --report-json`.
    pub report: RunReport,
    /// Each requirement id a check named, with its result.
    pub requirements: BTreeMap<String, RequirementResult>,
    /// Features some applicable scenario needed: in force on this run.
    pub features_in_force: BTreeSet<String>,
    /// Features whose every scenario was n/a: not in force on this run.
    pub features_not_in_force: BTreeSet<String>,
}

impl Certified {
    /// Reads `report` under `label`; `scenarios` are the scenarios the runner embeds (for the
    /// features each needs).
    pub fn new(label: impl Into<String>, report: RunReport, scenarios: &[Scenario]) -> Certified {
        let requirements = requirement_results(&report);
        let (features_in_force, features_not_in_force) = features(&report, scenarios);
        Certified { label: label.into(), report, requirements, features_in_force, features_not_in_force }
    }

    /// Whether the run passed (exit code 0: every MUST of the versions negotiated held).
    pub fn conformant(&self) -> bool {
        self.report.exit_code == 0
    }

    /// The versions negotiated on the run's connections, newest first.
    pub fn versions(&self) -> Vec<&str> {
        let mut versions: Vec<&str> = self.report.levels.iter().map(|l| l.version.as_str()).collect();
        versions.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
        versions
    }

    /// How many requirements of `level` (`MUST`, `SHOULD`, `MAY`) of `version` passed, out of those evaluated.
    pub fn level_count(&self, version: &str, level: &str) -> Option<(usize, usize)> {
        let levels = self.report.levels.iter().find(|l| l.version == version)?;
        let mut counted = None;
        for group in &levels.groups {
            for count in group.levels.iter().filter(|c| c.level == level) {
                let (passed, evaluated) = counted.unwrap_or((0, 0));
                counted = Some((passed + count.passed, evaluated + count.evaluated));
            }
        }
        counted
    }
}

/// A version's sort key: `1.10` after `1.9`.
pub fn version_key(version: &str) -> Vec<u32> {
    version.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

/// The scenario id a report line is a variant of (`x@reload` and sweep variants are `x`).
pub fn base_scenario(id: &str) -> &str {
    id.split(['@', '#']).next().unwrap_or(id)
}

fn requirement_results(report: &RunReport) -> BTreeMap<String, RequirementResult> {
    let mut out: BTreeMap<String, RequirementResult> = BTreeMap::new();
    for scenario in &report.scenarios {
        for check in &scenario.checks {
            // A failing check charges the requirements its findings name; one whose findings name
            // none charges every requirement it verifies.
            let named: BTreeSet<&str> = check.findings.iter().filter_map(|f| f.requirement.as_deref()).collect();
            for id in &check.requirements {
                let verdict = match check.verdict {
                    v if v.is_failure() || v == Verdict::Warn => {
                        if named.is_empty() || named.contains(id.as_str()) {
                            v
                        } else {
                            Verdict::Pass
                        }
                    }
                    v => v,
                };
                let entry = out.entry(id.clone()).or_insert(RequirementResult { verdict, checks: 0 });
                entry.checks += 1;
                entry.verdict = worse(entry.verdict, verdict);
            }
        }
    }
    out
}

/// The worse of two verdicts, where n/a yields to any evaluated verdict (a requirement one check
/// passed and another could not apply to passed).
pub fn worse(a: Verdict, b: Verdict) -> Verdict {
    match (a, b) {
        (Verdict::NotApplicable, other) | (other, Verdict::NotApplicable) => other,
        (a, b) if a.severity() >= b.severity() => a,
        (_, b) => b,
    }
}

fn features(report: &RunReport, scenarios: &[Scenario]) -> (BTreeSet<String>, BTreeSet<String>) {
    let needs: BTreeMap<&str, &[String]> = scenarios.iter().map(|s| (s.id.as_str(), s.features.as_slice())).collect();
    let mut applied = BTreeSet::new();
    let mut skipped = BTreeSet::new();
    for scenario in &report.scenarios {
        let Some(features) = needs.get(base_scenario(&scenario.id)) else { continue };
        let target = if scenario.verdict == Verdict::NotApplicable { &mut skipped } else { &mut applied };
        target.extend(features.iter().cloned());
    }
    let not_in_force = skipped.difference(&applied).cloned().collect();
    (applied, not_in_force)
}

/// The registry's requirements by id, for text and links.
pub fn registry_by_id(registry: &[Requirement]) -> BTreeMap<&str, &Requirement> {
    registry.iter().map(|r| (r.id.as_str(), r)).collect()
}

#[cfg(test)]
mod tests;
