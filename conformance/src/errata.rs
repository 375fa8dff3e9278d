//! Judging a backend by the requirement set of the version each connection negotiated
//! (`spec/versioning.md#frozen-requirement-sets`, `COMPAT-017`), and the result per level.
//!
//! A released minor's set is frozen ([`chatwire_schema::requirement_sets`]): a rule added after
//! the release that applies to its connections anyway is an *erratum* to it. A check that failed
//! only on errata to the version its findings were seen under is reported `warn`, naming each
//! erratum and its date, and fails the run only under `--strict`. [`tally`] counts, per negotiated
//! version, the requirements evaluated and passed per requirement version, group and level, and
//! the errata apart: `1.0 core: MUST 85/85, SHOULD 12/14; errata: 2 warn`.

use std::collections::{BTreeMap, BTreeSet};

use chatwire_schema::requirement_sets;
use chatwire_schema::requirements::{Level, Requirement, CORE_GROUP};
use chatwire_schema::ProtocolVersion;

use crate::report::{scenario_verdict, CheckReport, RunReport, ScenarioReport, Verdict};

pub use crate::report::{ErrataCount, GroupLevels, LevelCount, VersionLevels};

/// Judges every scenario of `report` by the set of the version its findings were seen under:
/// a failing check whose charged requirements are all errata becomes `warn` (unless `strict`)
/// and names them. Then counts the result per level into [`RunReport::levels`].
pub fn apply(report: &mut RunReport, registry: &[Requirement], strict: bool) {
    for scenario in &mut report.scenarios {
        apply_to_scenario(scenario, registry, strict);
    }
    report.strict = strict;
    report.levels = tally(report, registry);
    report.summarize();
}

/// [`apply`] for one scenario (or a checked wire log).
pub fn apply_to_scenario(scenario: &mut ScenarioReport, registry: &[Requirement], strict: bool) {
    let default = scenario.version.as_deref().and_then(|v| ProtocolVersion::parse(v).ok());
    let mut changed = false;
    for check in scenario.checks.iter_mut().filter(|c| c.verdict.is_failure() && c.baselined.is_none()) {
        if let Some(notes) = errata_only(check, default, registry) {
            check.errata = notes;
            if !strict {
                check.verdict = Verdict::Warn;
                changed = true;
            }
        }
    }
    if changed {
        scenario.verdict = scenario_verdict(&scenario.checks);
    }
}

/// Each requirement a check charges, with the version it is judged by.
fn charged(check: &CheckReport, default: Option<ProtocolVersion>) -> Vec<(String, Option<ProtocolVersion>)> {
    let version_of = |v: &Option<String>| v.as_deref().and_then(|v| ProtocolVersion::parse(v).ok()).or(default);
    if check.findings.is_empty() {
        return check.requirements.iter().map(|id| (id.clone(), default)).collect();
    }
    let mut out = Vec::new();
    for f in &check.findings {
        match &f.requirement {
            Some(id) => out.push((id.clone(), version_of(&f.version))),
            None => out.extend(check.requirements.iter().map(|id| (id.clone(), version_of(&f.version)))),
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The errata a failing check charges, when it charges nothing else.
fn errata_only(check: &CheckReport, default: Option<ProtocolVersion>, registry: &[Requirement]) -> Option<Vec<String>> {
    let pairs = charged(check, default);
    if pairs.is_empty() {
        return None;
    }
    let mut notes = Vec::new();
    for (id, version) in pairs {
        let requirement = registry.iter().find(|r| r.id == id)?;
        notes.push(requirement.erratum_note(version?)?);
    }
    notes.dedup();
    Some(notes)
}

/// Worst outcome of a requirement across the checks that evaluated it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Pass,
    Warn,
    Fail,
}

/// Counts, per negotiated version, the requirements the checks evaluated and those they charged:
/// per requirement version, group and level, with the errata to that version apart.
pub fn tally(report: &RunReport, registry: &[Requirement]) -> Vec<VersionLevels> {
    let mut seen: BTreeMap<ProtocolVersion, BTreeMap<String, Outcome>> = BTreeMap::new();
    // The features in force per negotiated version, where the reports say (older reports do not:
    // their features count as in force).
    let mut in_force: BTreeMap<ProtocolVersion, BTreeSet<&str>> = BTreeMap::new();
    for scenario in report.scenarios.iter().filter(|s| s.sweep.is_none()) {
        for (version, features) in &scenario.in_force {
            let Ok(version) = ProtocolVersion::parse(version) else { continue };
            in_force.entry(version).or_default().extend(features.iter().map(String::as_str));
        }
        let default = scenario.version.as_deref().and_then(|v| ProtocolVersion::parse(v).ok());
        for check in &scenario.checks {
            let outcome = match check.verdict {
                Verdict::Pass => Outcome::Pass,
                Verdict::Warn => Outcome::Warn,
                Verdict::Fail | Verdict::Timeout if check.baselined.is_none() => Outcome::Fail,
                _ => continue,
            };
            if let Some(v) = default {
                for id in &check.requirements {
                    seen.entry(v).or_default().entry(id.clone()).or_insert(Outcome::Pass);
                }
            }
            if outcome == Outcome::Pass {
                continue;
            }
            for (id, version) in charged(check, default) {
                let Some(v) = version else { continue };
                let slot = seen.entry(v).or_default().entry(id).or_insert(outcome);
                *slot = (*slot).max(outcome);
            }
        }
    }
    seen.into_iter()
        .map(|(version, outcomes)| version_levels(version, &outcomes, in_force.get(&version), registry))
        .collect()
}

/// Per level: requirements passed, evaluated, and the ids of those that did not pass.
type Counts = (usize, usize, Vec<String>);

/// A group's sort key: the version it applies from, whether it is not `core`, its name.
type GroupKey = (ProtocolVersion, bool, String);

/// Whether a requirement group is something a welcome offers (a capability, feature or not):
/// only such a group can be "not offered". `core` always holds, and `cluster` is a property of the
/// deployment, which no welcome lists.
fn offered_by_a_welcome(group: &str) -> bool {
    use chatwire_schema::session::welcome::Capability;
    group != CORE_GROUP && !matches!(Capability::from_wire(group), Capability::Other(_))
}

fn version_levels(
    version: ProtocolVersion,
    outcomes: &BTreeMap<String, Outcome>,
    in_force: Option<&BTreeSet<&str>>,
    registry: &[Requirement],
) -> VersionLevels {
    let mut groups: BTreeMap<GroupKey, BTreeMap<Level, Counts>> = BTreeMap::new();
    let mut errata = ErrataCount::default();
    for (id, outcome) in outcomes {
        let Some(r) = registry.iter().find(|r| &r.id == id).filter(|r| r.applies_to(version)) else { continue };
        if r.is_erratum_to(version) {
            match outcome {
                Outcome::Pass => errata.pass += 1,
                Outcome::Warn => errata.warn += 1,
                Outcome::Fail => errata.fail += 1,
            }
            if let (Outcome::Warn | Outcome::Fail, Some(note)) = (outcome, r.erratum_note(version)) {
                errata.charged.push(note);
            }
            continue;
        }
        // `core` first within a version, then the groups by name.
        let key = (r.since, r.group != CORE_GROUP, r.group.clone());
        let count = groups.entry(key).or_default().entry(r.level).or_default();
        count.1 += 1;
        if *outcome == Outcome::Pass {
            count.0 += 1;
        } else {
            count.2.push(r.id.clone());
        }
    }
    VersionLevels {
        version: version.to_string(),
        released: chatwire_schema::requirement_sets::is_released(version),
        groups: groups
            .into_iter()
            .map(|((since, _, group), levels)| GroupLevels {
                since: since.to_string(),
                in_force: !offered_by_a_welcome(&group)
                    || in_force.is_none_or(|features| features.contains(group.as_str())),
                group,
                levels: levels
                    .into_iter()
                    .map(|(level, (passed, evaluated, mut not_met))| {
                        not_met.sort();
                        LevelCount { level: level.as_str().to_owned(), passed, evaluated, not_met }
                    })
                    .collect(),
            })
            .collect(),
        errata,
    }
}

/// What the summary calls the result of one negotiated version: `requirements of 1.2 (released
/// 2026-11-28)`, or `requirements of 1.3 (in progress, not frozen)` while its set is not frozen.
pub fn heading(levels: &VersionLevels) -> String {
    let date = ProtocolVersion::parse(&levels.version).ok().and_then(requirement_sets::release_date);
    let state = match (levels.released, date) {
        (true, Some(date)) => format!("released {date}"),
        (true, None) => "released".to_owned(),
        (false, _) => "in progress, not frozen".to_owned(),
    };
    format!("requirements of {} ({state})", levels.version)
}

/// One line per negotiated version: `1.0 core: MUST 85/85, SHOULD 12/14 (not met: STATE-031,
/// STATE-040); 1.1 retry: MUST 7/7; 1.2 multi_attach: not offered (MUST 2/2 without it); errata: 2
/// warn (INT-002: erratum to 1.0 of 2026-11-23, …)`.
pub fn line(levels: &VersionLevels) -> String {
    let mut parts = Vec::new();
    let mut previous: Option<&str> = None;
    for g in &levels.groups {
        let counts: Vec<String> = g.levels.iter().map(level_count).collect();
        let name =
            if previous == Some(g.since.as_str()) { g.group.clone() } else { format!("{} {}", g.since, g.group) };
        previous = Some(&g.since);
        match g.in_force {
            true => parts.push(format!("{name}: {}", counts.join(", "))),
            false => parts.push(format!("{name}: not offered ({} without it)", counts.join(", "))),
        }
    }
    let e = &levels.errata;
    if e.pass + e.warn + e.fail > 0 {
        let mut counts = Vec::new();
        for (n, label) in [(e.pass, "pass"), (e.warn, "warn"), (e.fail, "fail")] {
            if n > 0 {
                counts.push(format!("{n} {label}"));
            }
        }
        let named = if e.charged.is_empty() { String::new() } else { format!(" ({})", e.charged.join(", ")) };
        parts.push(format!("errata: {}{named}", counts.join(", ")));
    }
    parts.join("; ")
}

/// `MUST 6/7 (not met: CANCEL-003)`, or `MUST 7/7`.
fn level_count(l: &LevelCount) -> String {
    let counts = format!("{} {}/{}", l.level, l.passed, l.evaluated);
    match l.not_met.as_slice() {
        [] => counts,
        ids => format!("{counts} (not met: {})", ids.join(", ")),
    }
}

/// What `list` says of a scenario's requirement ids beyond 1.0's released set: the later versions
/// and groups they apply from, and the errata among them (`since 1.1 retry: RETRY-001; erratum to
/// 1.0 of 2026-11-23: INT-002`); `None` when every id is of 1.0 as released.
pub fn scenario_versions(ids: &[String], registry: &[Requirement]) -> Option<String> {
    let mut later: BTreeMap<(ProtocolVersion, String), Vec<&str>> = BTreeMap::new();
    let mut errata: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for r in ids.iter().filter_map(|id| registry.iter().find(|r| &r.id == id)) {
        for version in r.errata_of() {
            let date = r.erratum.as_deref().unwrap_or_default();
            errata.entry(format!("erratum to {version} of {date}")).or_default().push(&r.id);
        }
        if r.since > (ProtocolVersion { major: 1, minor: 0 }) {
            later.entry((r.since, r.group.clone())).or_default().push(&r.id);
        }
    }
    let mut parts: Vec<String> =
        later.into_iter().map(|((since, group), ids)| format!("since {since} {group}: {}", ids.join(" "))).collect();
    parts.extend(errata.into_iter().map(|(what, ids)| format!("{what}: {}", ids.join(" "))));
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What `requirements` says of one requirement's version: `since 1.1 retry`, plus `, erratum to
/// 1.0 of 2026-11-23` for an erratum.
pub fn requirement_versions(r: &Requirement) -> String {
    let mut out = format!("since {} {}", r.since, r.group);
    let errata: Vec<String> = r.errata_of().iter().map(ToString::to_string).collect();
    if let (Some(date), false) = (&r.erratum, errata.is_empty()) {
        out.push_str(&format!(", erratum to {} of {date}", errata.join(" and ")));
    }
    out
}

/// One line per protocol version the registry knows: a released one's frozen set and errata, the
/// one in progress with every requirement that applies to it.
pub fn set_summary(registry: &[Requirement]) -> Vec<String> {
    let mut versions: Vec<ProtocolVersion> = registry.iter().map(|r| r.since).collect();
    versions.extend(requirement_sets::RELEASES.iter().map(|(v, _)| *v));
    versions.sort();
    versions.dedup();
    versions
        .into_iter()
        .map(|v| match (requirement_sets::released_set(registry, v), requirement_sets::errata(registry, v)) {
            (Some(set), Some(errata)) => format!(
                "{v} (released {}): {} requirement(s) frozen, {} errata added since",
                set.released,
                set.requirements.len(),
                errata.requirements.len()
            ),
            _ => format!(
                "{v} (in progress, not frozen): {} requirement(s) apply",
                registry.iter().filter(|r| r.applies_to(v)).count()
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chatwire_schema::requirements::parse;

    use super::*;
    use crate::report::{CheckSet, Finding};

    const SPEC: &str = "**[A-001]** A server MUST do a.\n\n\
        **[A-002]** *(since 1.0, erratum 2026-11-23)* A server MUST bound b.\n\n\
        **[A-003]** A server SHOULD do c.\n\n\
        **[A-004]** *(since 1.1, retry)* A server MUST retry d.\n";

    fn scenario(version: &str, failing: &[&str]) -> ScenarioReport {
        let mut checks = CheckSet::default();
        checks.touch("a", &["A-001".into(), "A-003".into()], "a");
        checks.touch("retry", &["A-004".into()], "retry");
        for id in failing {
            let f = Finding {
                message: "broken".into(),
                step: Some(1),
                requirement: Some((*id).into()),
                frame: None,
                version: Some(version.into()),
            };
            checks.record(&format!("check-{id}"), &[], "x", Verdict::Fail, Some(f));
        }
        let checks = checks.into_checks();
        ScenarioReport {
            id: "s".into(),
            title: "t".into(),
            level: crate::scenario::Level::Must,
            requirements: vec![],
            verdict: scenario_verdict(&checks),
            duration_ms: 0,
            checks,
            wire_log: vec![],
            backend_stderr: None,
            snapshots: Default::default(),
            sweep: None,
            version: Some(version.into()),
            in_force: Default::default(),
        }
    }

    fn report(scenarios: Vec<ScenarioReport>) -> RunReport {
        let mut r = RunReport {
            tool: "t".into(),
            target: "x".into(),
            replicas: 1,
            timeout_scale: 1.0,
            duration_ms: 0,
            summary: Default::default(),
            scenarios,
            stale_baseline: vec![],
            backend_logs: vec![],
            sweep: None,
            strict: false,
            levels: vec![],
            exit_code: 0,
        };
        r.summarize();
        r
    }

    #[test]
    fn only_a_group_a_welcome_offers_can_be_not_offered() {
        // A run against a cluster: no welcome lists `cluster`, so its requirements are never
        // reported "not offered"; a capability or feature the welcome left out is.
        assert!(!offered_by_a_welcome(CORE_GROUP));
        assert!(!offered_by_a_welcome(chatwire_schema::requirements::CLUSTER_GROUP));
        assert!(offered_by_a_welcome("multi_attach"));
        assert!(offered_by_a_welcome("cancel"));
        assert!(offered_by_a_welcome("retry"));
    }

    #[test]
    fn an_erratum_alone_warns_on_its_version_and_fails_when_strict() {
        let registry = parse("t.md", SPEC).expect("parses");
        let mut lenient = report(vec![scenario("1.0", &["A-002"])]);
        apply(&mut lenient, &registry, false);
        let check = lenient.scenarios[0].checks.iter().find(|c| c.id == "check-A-002").expect("recorded");
        assert_eq!(check.verdict, Verdict::Warn);
        assert_eq!(check.errata, ["A-002: erratum to 1.0 of 2026-11-23"]);
        assert_eq!(lenient.scenarios[0].verdict, Verdict::Warn);
        assert_eq!(
            line(&lenient.levels[0]),
            "1.0 core: MUST 1/1, SHOULD 1/1; errata: 1 warn (A-002: erratum to 1.0 of 2026-11-23)"
        );

        let mut strict = report(vec![scenario("1.0", &["A-002"])]);
        apply(&mut strict, &registry, true);
        assert!(strict.strict);
        let check = strict.scenarios[0].checks.iter().find(|c| c.id == "check-A-002").expect("recorded");
        assert_eq!((check.verdict, check.errata.len()), (Verdict::Fail, 1));
        assert_eq!(strict.scenarios[0].verdict, Verdict::Fail);
        assert!(line(&strict.levels[0]).ends_with("errata: 1 fail (A-002: erratum to 1.0 of 2026-11-23)"));
    }

    #[test]
    fn the_heading_says_whether_the_set_is_released() {
        let levels = |version: &str, released| VersionLevels {
            version: version.into(),
            released,
            groups: vec![],
            errata: ErrataCount::default(),
        };
        assert_eq!(heading(&levels("1.2", true)), "requirements of 1.2 (released 2026-11-28)");
        assert_eq!(heading(&levels("1.0", true)), "requirements of 1.0 (released 2026-11-22)");
        assert_eq!(heading(&levels("1.3", false)), "requirements of 1.3 (in progress, not frozen)");
    }

    #[test]
    fn list_and_requirements_name_versions_and_errata() {
        let registry = parse("t.md", SPEC).expect("parses");
        let ids = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(scenario_versions(&ids(&["A-001", "A-003"]), &registry), None);
        assert_eq!(
            scenario_versions(&ids(&["A-001", "A-002", "A-004"]), &registry).as_deref(),
            Some("since 1.1 retry: A-004; erratum to 1.0 of 2026-11-23: A-002")
        );
        assert_eq!(requirement_versions(&registry[1]), "since 1.0 core, erratum to 1.0 of 2026-11-23");
        assert_eq!(requirement_versions(&registry[3]), "since 1.1 retry");
        let summary = set_summary(&registry);
        assert_eq!(summary[0], "1.0 (released 2026-11-22): 2 requirement(s) frozen, 1 errata added since");
        assert_eq!(summary[1], "1.1 (released 2026-11-26): 4 requirement(s) frozen, 0 errata added since");
    }

    #[test]
    fn the_same_rule_is_part_of_the_set_of_a_later_release_and_a_released_rule_still_fails() {
        let registry = parse("t.md", SPEC).expect("parses");
        // On 1.1 A-002 is part of the set: its failure fails.
        let mut on_11 = report(vec![scenario("1.1", &["A-002"])]);
        apply(&mut on_11, &registry, false);
        assert_eq!(on_11.scenarios[0].verdict, Verdict::Fail);
        assert_eq!(line(&on_11.levels[0]), "1.0 core: MUST 1/2 (not met: A-002), SHOULD 1/1; 1.1 retry: MUST 1/1");
        // On 1.0 a failure of a released rule fails, and so does a check charging it beside an erratum.
        let mut released = report(vec![scenario("1.0", &["A-001"])]);
        apply(&mut released, &registry, false);
        assert_eq!(released.scenarios[0].verdict, Verdict::Fail);
        let mut s = scenario("1.0", &[]);
        let both = |id: &str| Finding {
            message: "broken".into(),
            step: None,
            requirement: Some(id.into()),
            frame: None,
            version: Some("1.0".into()),
        };
        s.checks.push(CheckReport {
            id: "mixed".into(),
            verdict: Verdict::Fail,
            requirements: vec![],
            summary: "m".into(),
            findings: vec![both("A-002"), both("A-001")],
            findings_dropped: 0,
            baselined: None,
            errata: vec![],
        });
        s.verdict = scenario_verdict(&s.checks);
        let mut mixed = report(vec![s]);
        apply(&mut mixed, &registry, false);
        assert_eq!(mixed.scenarios[0].verdict, Verdict::Fail);
        assert!(mixed.scenarios[0].checks.iter().all(|c| c.errata.is_empty()));
    }
}
