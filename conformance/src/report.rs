//! The run report (its JSON form is published as `schema/json/conformance-report.json`), verdicts,
//! and the per-scenario check accumulator.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::Level;

/// The outcome of one check (and, as the worst of its checks, of a scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Verdict {
    /// The behaviour is as specified.
    #[serde(rename = "pass")]
    Pass,
    /// A SHOULD or MAY is not met (does not fail the run).
    #[serde(rename = "warn")]
    Warn,
    /// Not applicable: the server did not offer a capability the check needs.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// The server did not answer before a deadline.
    #[serde(rename = "timeout")]
    Timeout,
    /// A MUST is broken.
    #[serde(rename = "fail")]
    Fail,
    /// The runner itself could not do its job (a scenario bug, a missing golden snapshot, a runner
    /// bug): says nothing about the implementation.
    #[serde(rename = "harness-error")]
    HarnessError,
}

impl Verdict {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::NotApplicable => "n/a",
            Verdict::Timeout => "timeout",
            Verdict::Fail => "fail",
            Verdict::HarnessError => "harness-error",
        }
    }

    /// Severity used to combine checks into a scenario verdict (higher wins).
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::NotApplicable => 1,
            Verdict::Warn => 2,
            Verdict::Timeout => 3,
            Verdict::Fail => 4,
            Verdict::HarnessError => 5,
        }
    }

    /// Whether the verdict breaks a requirement of the implementation (fails the run unless baselined).
    pub fn is_failure(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Timeout)
    }
}

/// One piece of evidence for a failed check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// What is wrong, in one or a few lines.
    pub message: String,
    /// The 1-based step during which it was seen, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The requirement broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<String>,
    /// The offending frame, ids replaced by placeholders and cut to a few hundred characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// The protocol version negotiated on the connection it was seen on, when one was: the
    /// requirement set it is judged by (`spec/versioning.md#frozen-requirement-sets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The result of one check in one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckReport {
    /// Stable check id (`wire-schema-valid`, `step-03-expect`, `snapshot-final`…); baselines name it.
    pub id: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Requirement ids the check verifies.
    pub requirements: Vec<String>,
    /// What the check verifies, one line.
    pub summary: String,
    /// Evidence, first ones only (see `findings_dropped`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Findings beyond the first ones that were counted but not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings_dropped: usize,
    /// Set when a baseline entry expects this check to fail: the entry's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baselined: Option<String>,
    /// Set when the check failed on errata only (rules added after the negotiated version was
    /// released): each erratum, as `INT-002: erratum to 1.0 of 2026-11-23`. Its verdict is then
    /// `warn`, or still `fail` in a `--strict` run (`COMPAT-017`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errata: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The result of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioReport {
    /// Scenario id.
    pub id: String,
    /// Scenario title.
    pub title: String,
    /// Scenario level.
    #[serde(with = "crate::level::lowercase")]
    #[schemars(with = "crate::level::Lowercase")]
    pub level: Level,
    /// Requirement ids the scenario covers.
    pub requirements: Vec<String>,
    /// The worst verdict of its checks, baselined failures not counted.
    pub verdict: Verdict,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Every check, in the order they were first recorded.
    pub checks: Vec<CheckReport>,
    /// The last frames exchanged (`conn > type` sent, `conn < type` received), for context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire_log: Vec<String>,
    /// Standard error of a backend the runner started for this scenario alone (restart scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_stderr: Option<String>,
    /// The normalized snapshots taken, by name (for review tooling).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub snapshots: BTreeMap<String, String>,
    /// Set on a reconnect-sweep variant (`run --sweep`): which scenario it cuts, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepVariant>,
    /// The protocol version its first connection negotiated, if any: the requirement set its
    /// checks are judged and counted by, where a finding names no connection of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What was in force on its connections, per version they negotiated, sorted: the features
    /// in force by each welcome (`SESSION-012`) and the capabilities that are not features
    /// (`retry`, `cancel`) it listed. A group in force on none of a run's connections of a version
    /// is reported `not offered` in the result per level ([`crate::errata::tally`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub in_force: BTreeMap<String, Vec<String>>,
}

/// Where a reconnect-sweep variant cut its scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepVariant {
    /// The scenario id.
    pub scenario: String,
    /// The connection was cut right after this server frame (1-based, counted after the first
    /// welcome and snapshot).
    pub cut_after_frame: usize,
    /// How many such frames the uninterrupted run received.
    pub frames: usize,
}

/// Counts over the reconnect sweep of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepSummary {
    /// Scenarios swept (at least one variant run).
    pub scenarios: usize,
    /// Variants run.
    pub variants: usize,
    /// Variants that failed or timed out (baselined failures not counted).
    pub failed: usize,
    /// Selected scenarios the sweep does not apply to (their report says why).
    pub not_sweepable: usize,
}

/// Counts over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Runs reported, sweep variants apart: every scenario once, plus its `<id>@reload` variant
    /// where one ran (`reload_variants` of them); each count below is of these runs.
    pub scenarios: usize,
    /// How many of `scenarios` are `<id>@reload` variants of another: `scenarios - reload_variants`
    /// distinct scenarios ran.
    #[serde(default)]
    pub reload_variants: usize,
    /// Scenarios that passed.
    pub pass: usize,
    /// Scenarios with warnings only.
    pub warn: usize,
    /// Scenarios not applicable.
    pub not_applicable: usize,
    /// Scenarios that timed out.
    pub timeout: usize,
    /// Scenarios that failed.
    pub fail: usize,
    /// Scenarios the harness could not run.
    pub harness_error: usize,
    /// Failing checks excused by the baseline.
    pub baselined: usize,
    /// Baseline entries whose check now passes.
    pub stale_baseline: usize,
}

/// A baseline entry that no longer matches a failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaleEntry {
    /// Scenario id.
    pub scenario: String,
    /// Check id.
    pub check: String,
    /// The entry's reason.
    pub reason: String,
    /// What the check did instead of failing.
    pub now: String,
}

/// Standard error captured from a backend the runner started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackendLog {
    /// Which backend instance (e.g. `shared`).
    pub label: String,
    /// The last part of its standard error.
    pub stderr: String,
}

/// A whole run: what `--report-json` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunReport {
    /// `chatwire-conformance <version>`.
    pub tool: String,
    /// What was tested: the URL, the exec command, or `bundled reference backend`; a cluster as
    /// `3 replicas of … on postgres://host:port/<a fresh database per cluster>`.
    pub target: String,
    /// How many replicas each backend the runner started had (`run --replicas N`); 1 for a single
    /// process or a URL.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub replicas: usize,
    /// The timeout scale used.
    pub timeout_scale: f64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Counts.
    pub summary: Summary,
    /// Per scenario, in id order.
    pub scenarios: Vec<ScenarioReport>,
    /// Baseline entries whose check no longer fails: they fail the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_baseline: Vec<StaleEntry>,
    /// Standard error of the shared backend the runner started, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backend_logs: Vec<BackendLog>,
    /// The reconnect sweep's counts, when the run was a sweep (`run --sweep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSummary>,
    /// Whether a failure of errata only fails the run (`run --strict`) rather than warns.
    #[serde(default, skip_serializing_if = "is_false")]
    pub strict: bool,
    /// The result per negotiated version, requirement version, group and level
    /// (`1.0 core: MUST 85/85, SHOULD 12/14; errata: 2 warn`), see [`crate::errata::tally`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<VersionLevels>,
    /// The exit code the run ends with.
    pub exit_code: u8,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn one() -> usize {
    1
}

impl RunReport {
    /// Recomputes the summary from the scenarios and stale entries.
    pub fn summarize(&mut self) {
        // Sweep variants are counted in `sweep`, not as scenarios.
        let scenarios: Vec<&ScenarioReport> = self.scenarios.iter().filter(|r| r.sweep.is_none()).collect();
        let reload_variants = scenarios.iter().filter(|r| r.id.ends_with(RELOAD_SUFFIX)).count();
        let mut s = Summary { scenarios: scenarios.len(), reload_variants, ..Summary::default() };
        for sc in scenarios {
            match sc.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Warn => s.warn += 1,
                Verdict::NotApplicable => s.not_applicable += 1,
                Verdict::Timeout => s.timeout += 1,
                Verdict::Fail => s.fail += 1,
                Verdict::HarnessError => s.harness_error += 1,
            }
            s.baselined += sc.checks.iter().filter(|c| c.baselined.is_some() && c.verdict.is_failure()).count();
        }
        s.stale_baseline = self.stale_baseline.len();
        self.summary = s;
        if let Some(sweep) = self.sweep.as_mut() {
            let variants: Vec<&ScenarioReport> = self.scenarios.iter().filter(|r| r.sweep.is_some()).collect();
            let swept: std::collections::BTreeSet<&str> =
                variants.iter().filter_map(|r| r.sweep.as_ref()).map(|v| v.scenario.as_str()).collect();
            sweep.scenarios = swept.len();
            sweep.variants = variants.len();
            sweep.failed = variants.iter().filter(|r| r.verdict.is_failure()).count();
            sweep.not_sweepable = self
                .scenarios
                .iter()
                .filter(|r| {
                    r.checks.iter().any(|c| c.id == SWEEP_APPLICABLE_CHECK && c.verdict == Verdict::NotApplicable)
                })
                .count();
        }
    }
}

/// The suffix of a reload variant's id (`runner::RunOptions::reload_variants`).
pub const RELOAD_SUFFIX: &str = "@reload";

/// The check a sweep adds to a scenario's own report; n/a with the reason when it is not sweepable.
pub const SWEEP_APPLICABLE_CHECK: &str = "sweep-applicable";

/// Most findings kept per check; more are only counted.
pub const MAX_FINDINGS: usize = 8;

/// Collects the checks of one scenario.
#[derive(Clone, Debug, Default)]
pub struct CheckSet {
    checks: Vec<CheckReport>,
}

impl CheckSet {
    fn entry(&mut self, id: &str, requirements: &[String], summary: &str) -> &mut CheckReport {
        if let Some(i) = self.checks.iter().position(|c| c.id == id) {
            return &mut self.checks[i];
        }
        self.checks.push(CheckReport {
            id: id.to_owned(),
            verdict: Verdict::Pass,
            requirements: requirements.to_vec(),
            summary: summary.to_owned(),
            findings: Vec::new(),
            findings_dropped: 0,
            baselined: None,
            errata: Vec::new(),
        });
        let last = self.checks.len() - 1;
        &mut self.checks[last]
    }

    /// Records that a check ran (pass unless something else is recorded).
    pub fn touch(&mut self, id: &str, requirements: &[String], summary: &str) {
        self.entry(id, requirements, summary);
    }

    /// Records an outcome; the worst verdict of a check wins.
    pub fn record(
        &mut self,
        id: &str,
        requirements: &[String],
        summary: &str,
        verdict: Verdict,
        finding: Option<Finding>,
    ) {
        let entry = self.entry(id, requirements, summary);
        if verdict.severity() > entry.verdict.severity() {
            entry.verdict = verdict;
        }
        if let Some(f) = finding {
            if entry.findings.len() < MAX_FINDINGS {
                entry.findings.push(f);
            } else {
                entry.findings_dropped += 1;
            }
        }
    }

    /// Records a finding of the session monitor under its check: a failure of a `must` check, a
    /// warning of a `should` check, naming the one requirement it breaks and the version its
    /// connection negotiated.
    pub fn record_monitor_finding(
        &mut self,
        f: crate::monitor::Finding,
        step: Option<usize>,
        version: Option<chatwire_schema::ProtocolVersion>,
    ) {
        let finding = Finding {
            message: f.message,
            step,
            requirement: Some(f.requirement.to_string()),
            frame: f.frame,
            version: version.map(|v| v.to_string()),
        };
        let verdict = if f.check.level == Level::Must { Verdict::Fail } else { Verdict::Warn };
        self.record(f.check.id, &[], f.check.summary, verdict, Some(finding));
    }

    /// Adds every always-on check, each naming the requirements the monitor evaluated under it
    /// (none: it had nothing to check here).
    pub fn add_always_on(&mut self, monitor: &crate::monitor::Monitor) {
        let evaluated = monitor.evaluated();
        for def in crate::monitor::ALWAYS_ON {
            let ids: Vec<String> =
                evaluated.get(def.id).map(|ids| ids.iter().map(ToString::to_string).collect()).unwrap_or_default();
            self.entry(def.id, &[], def.summary).requirements = ids;
        }
    }

    /// Marks every check still passing as not applicable (a scenario that could not apply).
    pub fn mark_untouched_not_applicable(&mut self) {
        for c in &mut self.checks {
            if c.verdict == Verdict::Pass {
                c.verdict = Verdict::NotApplicable;
            }
        }
    }

    /// The checks, in first-recorded order, with each step failure that saw a frame an always-on
    /// check already charged charged under that check's requirement (see `one_frame_one_charge`).
    pub fn into_checks(mut self) -> Vec<CheckReport> {
        one_frame_one_charge(&mut self.checks);
        self.checks
    }
}

/// One frame, one charge: a step that fails on a frame which an always-on check of the monitor
/// judged during the same step and charged (a must-level failure) failed because of what the
/// monitor found, not because of what else the step proves. A step names every requirement it
/// could prove (an expected `chat.run_complete` names whatever mentions it), where the monitor's
/// finding names the one the frame breaks; so the step's failure is charged under the monitor's
/// requirement (the first finding's, in report order). A step failure on another frame, or with
/// no frame (a timeout, a snapshot), keeps its own requirements.
fn one_frame_one_charge(checks: &mut [CheckReport]) {
    let is_always_on = |id: &str| crate::monitor::ALWAYS_ON.iter().any(|d| d.id == id);
    let charged: Vec<(usize, String, String, String)> = checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail && is_always_on(&c.id))
        .flat_map(|c| {
            c.findings
                .iter()
                .filter_map(move |f| Some((f.step?, f.frame.clone()?, f.requirement.clone()?, c.id.clone())))
        })
        .collect();
    if charged.is_empty() {
        return;
    }
    for check in checks.iter_mut().filter(|c| !is_always_on(&c.id)) {
        for f in check.findings.iter_mut().filter(|f| f.requirement.is_none()) {
            let (Some(step), Some(frame)) = (f.step, f.frame.as_deref()) else { continue };
            if let Some((_, _, requirement, by)) = charged.iter().find(|(s, fr, _, _)| *s == step && fr == frame) {
                f.message.push_str(&format!(
                    " (the frame always-on check {by} charged under {requirement}: one frame, one charge)"
                ));
                f.requirement = Some(requirement.clone());
            }
        }
    }
}

impl CheckReport {
    /// The requirements a failure of this check is charged to: those its findings name, or the
    /// check's own when some finding names none.
    pub fn charged_requirements(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.findings.iter().filter_map(|f| f.requirement.clone()).collect();
        if self.findings.is_empty() || self.findings.iter().any(|f| f.requirement.is_none()) {
            ids.extend(self.requirements.iter().cloned());
        }
        ids.sort();
        ids.dedup();
        ids
    }
}

/// The scenario verdict: the worst check, ignoring baselined failures.
pub fn scenario_verdict(checks: &[CheckReport]) -> Verdict {
    let worst = checks
        .iter()
        .filter(|c| !(c.baselined.is_some() && c.verdict.is_failure()))
        .map(|c| c.verdict)
        .max_by_key(|v| v.severity())
        .unwrap_or(Verdict::NotApplicable);
    // A scenario with only n/a and passes that never got to apply is n/a; with passes it passes.
    if worst == Verdict::NotApplicable && checks.iter().any(|c| c.verdict == Verdict::Pass) {
        Verdict::Pass
    } else {
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_verdict_wins_and_findings_are_capped() {
        let mut set = CheckSet::default();
        set.touch("a", &[], "a");
        for i in 0..(MAX_FINDINGS + 3) {
            let f = Finding { message: format!("f{i}"), step: None, requirement: None, frame: None, version: None };
            set.record("b", &["SEQ-001".into()], "b", Verdict::Fail, Some(f));
        }
        set.record("b", &[], "b", Verdict::Warn, None);
        let checks = set.into_checks();
        assert_eq!(checks[0].verdict, Verdict::Pass);
        assert_eq!(checks[1].verdict, Verdict::Fail);
        assert_eq!(checks[1].findings.len(), MAX_FINDINGS);
        assert_eq!(checks[1].findings_dropped, 3);
        assert_eq!(scenario_verdict(&checks), Verdict::Fail);
    }

    #[test]
    fn a_step_failing_on_a_frame_the_monitor_charged_is_charged_under_the_monitor_requirement() {
        let finding = |step: usize, frame: &str, requirement: Option<&str>| Finding {
            message: "m".into(),
            step: Some(step),
            requirement: requirement.map(str::to_owned),
            frame: Some(frame.to_owned()),
            version: None,
        };
        let mut set = CheckSet::default();
        let cancel = crate::monitor::checks::cancel::CANCEL_CLOSES_RUN.id;
        set.record(cancel, &[], "s", Verdict::Fail, Some(finding(9, "{delta}", Some("CANCEL-003"))));
        let ids = ["CANCEL-004".to_owned()];
        // The same frame in the same step: the monitor's charge.
        set.record("step-09-expect", &ids, "s", Verdict::Fail, Some(finding(9, "{delta}", None)));
        // Another frame, or another step: the step's own, a fresh failure.
        set.record("step-10-expect", &ids, "s", Verdict::Fail, Some(finding(10, "{delta}", None)));
        set.record("step-11-expect", &ids, "s", Verdict::Fail, Some(finding(9, "{end}", None)));
        let checks = set.into_checks();
        let charged: Vec<Vec<String>> = checks.iter().map(CheckReport::charged_requirements).collect();
        assert_eq!(charged[1], vec!["CANCEL-003".to_owned()]);
        assert_eq!(charged[2], vec!["CANCEL-004".to_owned()]);
        assert_eq!(charged[3], vec!["CANCEL-004".to_owned()]);
    }

    #[test]
    fn baselined_failures_do_not_count() {
        let mut set = CheckSet::default();
        set.touch("a", &[], "a");
        set.record("b", &[], "b", Verdict::Fail, None);
        let mut checks = set.into_checks();
        checks[1].baselined = Some("known".into());
        assert_eq!(scenario_verdict(&checks), Verdict::Pass);
        assert_eq!(scenario_verdict(&[]), Verdict::NotApplicable);
    }

    #[test]
    fn verdict_names_round_trip() {
        for v in [
            Verdict::Pass,
            Verdict::Warn,
            Verdict::NotApplicable,
            Verdict::Timeout,
            Verdict::Fail,
            Verdict::HarnessError,
        ] {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{}\"", v.as_str()));
            assert_eq!(serde_json::from_str::<Verdict>(&json).unwrap(), v);
        }
    }
}

/// How many requirements of one level were evaluated, and how many of them passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LevelCount {
    /// `MUST`, `SHOULD` or `MAY`.
    pub level: String,
    /// Requirements no evaluated check charged.
    pub passed: usize,
    /// Requirements some check evaluated.
    pub evaluated: usize,
    /// The evaluated requirements that did not pass (charged by a failing or warning check),
    /// sorted: what `MUST 6/7` is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_met: Vec<String>,
}

/// The requirements of one version and group (`1.1 retry`), per level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupLevels {
    /// The version the requirements apply from.
    pub since: String,
    /// Their capability or feature, or `core`.
    pub group: String,
    /// Whether the group's feature or capability was in force on some connection that negotiated
    /// this version (a feature: the server offered it and the client asked for it; `retry`,
    /// `cancel`: the welcome listed it); always for `core`. One in force nowhere is reported `not
    /// offered`: the requirements counted are then those that bind a server without it
    /// (`ATTACH-002`'s takeover, `WINDOW-007`'s refusal).
    #[serde(default = "in_force_by_default")]
    pub in_force: bool,
    /// Per level, `MUST` first.
    pub levels: Vec<LevelCount>,
}

fn in_force_by_default() -> bool {
    true
}

/// The errata to the negotiated version that were evaluated.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrataCount {
    /// Errata no check charged.
    pub pass: usize,
    /// Errata charged by a check reported `warn`.
    pub warn: usize,
    /// Errata charged by a failing check (`--strict`, or beside a requirement of the released set).
    pub fail: usize,
    /// The errata charged, each as `INT-002: erratum to 1.0 of 2026-11-23`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub charged: Vec<String>,
}

/// The result of the connections that negotiated one version, judged by that version's set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionLevels {
    /// The negotiated version.
    pub version: String,
    /// Whether that version's requirement set is frozen (released).
    pub released: bool,
    /// The requirements of its set, per version they apply from and group, oldest first.
    pub groups: Vec<GroupLevels>,
    /// Its errata.
    pub errata: ErrataCount,
}
