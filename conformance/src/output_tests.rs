//! Tests of the terminal and JUnit renderings.

use super::*;
use crate::report::{Finding, Summary};
use crate::scenario::Level;

fn sample() -> RunReport {
    let failing = CheckReport {
        id: "step-02-expect".into(),
        verdict: Verdict::Fail,
        requirements: vec!["TOOL-012".into()],
        summary: "expect x".into(),
        findings: vec![Finding {
            message: "expected <a> & \"b\"\u{1}".into(),
            step: Some(2),
            requirement: Some("TOOL-012".into()),
            frame: Some("{\"type\":\"error\"}".into()),
            version: Some("1.0".into()),
        }],
        findings_dropped: 0,
        baselined: None,
        errata: vec![],
    };
    let passing =
        CheckReport { id: "seq-increasing".into(), verdict: Verdict::Pass, findings: vec![], ..failing.clone() };
    let mut r = RunReport {
        tool: "t".into(),
        target: "ws://x".into(),
        replicas: 1,
        timeout_scale: 1.0,
        duration_ms: 1500,
        summary: Summary::default(),
        scenarios: vec![ScenarioReport {
            id: "s-1".into(),
            title: "T".into(),
            level: Level::Must,
            requirements: vec!["TOOL-012".into()],
            verdict: Verdict::Fail,
            duration_ms: 10,
            checks: vec![passing, failing],
            wire_log: vec![],
            backend_stderr: Some("panic <here>".into()),
            snapshots: Default::default(),
            sweep: None,
            version: Some("1.0".into()),
            in_force: Default::default(),
        }],
        stale_baseline: vec![],
        backend_logs: vec![],
        sweep: None,
        strict: false,
        levels: vec![],
        exit_code: 1,
    };
    r.summarize();
    r
}

#[test]
fn junit_counts_and_escapes() {
    let xml_text = junit(&sample());
    assert!(xml_text.contains("<testsuites name=\"chatwire-conformance\" tests=\"2\" failures=\"1\" errors=\"0\""));
    assert!(xml_text.contains("<testsuite name=\"s-1\" tests=\"2\" failures=\"1\""));
    assert!(xml_text.contains("<testcase classname=\"s-1\" name=\"seq-increasing\"/>"));
    assert!(xml_text.contains("message=\"expected &lt;a&gt; &amp; &quot;b&quot;\u{FFFD}\""));
    assert!(xml_text.contains("<system-err>panic &lt;here&gt;</system-err>"));
    assert!(!xml_text.contains('\u{1}'));
}

#[test]
fn terminal_lines_name_scenario_check_step_requirement_and_frame() {
    let r = sample();
    let block = scenario_block(Style { colour: false }, &r.scenarios[0], 1, 1);
    assert!(block.starts_with("[1/1] FAIL  s-1"), "{block}");
    assert!(block.contains("s-1 / step-02-expect [TOOL-012]"), "{block}");
    assert!(block.contains("step 2: expected"), "{block}");
    assert!(block.contains("frame: {\"type\":\"error\"}"), "{block}");
    assert!(!block.contains('\x1b'));
    let coloured = scenario_block(Style { colour: true }, &r.scenarios[0], 1, 1);
    assert!(coloured.contains('\x1b'));
    let summary = summary_block(Style { colour: false }, &r);
    assert!(summary.contains("1 scenario(s) against ws://x: 0 pass, 1 fail"), "{summary}");
    assert!(summary.contains("NOT conformant (exit 1)"), "{summary}");
}

/// A check of a run on 1.2: `requirements` evaluated, failing with a finding naming `broken`.
fn check(id: &str, requirements: &[&str], verdict: Verdict, broken: Option<(&str, &str)>) -> CheckReport {
    CheckReport {
        id: id.into(),
        verdict,
        requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
        summary: format!("{id} holds"),
        findings: broken
            .map(|(requirement, message)| Finding {
                message: message.into(),
                step: Some(4),
                requirement: Some(requirement.into()),
                frame: None,
                version: Some("1.2".into()),
            })
            .into_iter()
            .collect(),
        findings_dropped: 0,
        baselined: None,
        errata: vec![],
    }
}

fn scenario_on_1_2(id: &str, checks: Vec<CheckReport>, in_force: &[&str]) -> ScenarioReport {
    ScenarioReport {
        id: id.into(),
        title: id.into(),
        level: Level::Must,
        requirements: vec![],
        verdict: crate::report::scenario_verdict(&checks),
        duration_ms: 5,
        checks,
        wire_log: vec![],
        backend_stderr: None,
        snapshots: Default::default(),
        sweep: None,
        version: Some("1.2".into()),
        in_force: [("1.2".to_owned(), in_force.iter().map(|f| (*f).to_owned()).collect())].into(),
    }
}

/// A run on 1.2 against a backend with `cancel` but neither `multi_attach` nor `state_window`:
/// `A-002` and `C-002` broken, one check warned, the takeover scenario also run as `@reload`.
fn run_without_features() -> RunReport {
    const SPEC: &str = "**[A-001]** A server MUST do a.\n\n\
        **[A-002]** A server MUST do b.\n\n\
        **[A-003]** A server SHOULD do c.\n\n\
        **[C-001]** *(since 1.2, cancel)* A server MUST cancel.\n\n\
        **[C-002]** *(since 1.2, cancel)* A server MUST close the run after a cancel.\n\n\
        **[M-001]** *(since 1.2, multi_attach)* Without multi_attach a resume MUST take over.\n\n\
        **[W-001]** *(since 1.2, state_window)* Without state_window a history request MUST be refused.\n";
    let registry = chatwire_schema::requirements::parse("t.md", SPEC).expect("parses");
    let features = ["cancel", "resume_catch_up"];
    let cancel = scenario_on_1_2(
        "cancel-mid-stream",
        vec![
            check("seq-increasing", &["A-001"], Verdict::Pass, None),
            check(
                "step-04-expect",
                &["C-001", "C-002"],
                Verdict::Fail,
                Some(("C-002", "expected chat.run_complete, got chat.assistant_message_delta")),
            ),
            check(
                "no-more-than-asked",
                &["A-003"],
                Verdict::Warn,
                Some(("A-003", "a second frame answered one request")),
            ),
        ],
        &features,
    );
    let takeover = |id: &str| {
        scenario_on_1_2(
            id,
            vec![
                check("step-04-expect", &["M-001"], Verdict::Pass, None),
                check("snapshot-final", &["A-002"], Verdict::Fail, Some(("A-002", &"x".repeat(200)))),
            ],
            &features,
        )
    };
    let refused =
        scenario_on_1_2("window-refused", vec![check("step-02-expect_error", &["W-001"], Verdict::Pass, None)], &[]);
    let mut report = RunReport {
        tool: "t".into(),
        target: "ws://x".into(),
        replicas: 1,
        timeout_scale: 1.0,
        duration_ms: 2500,
        summary: Summary::default(),
        scenarios: vec![cancel, takeover("resume-takes-over"), takeover("resume-takes-over@reload"), refused],
        stale_baseline: vec![],
        backend_logs: vec![],
        sweep: None,
        strict: false,
        levels: vec![],
        exit_code: 1,
    };
    crate::errata::apply(&mut report, &registry, false);
    report
}

#[test]
fn the_summary_counts_runs_and_scenarios_names_missing_ids_and_features_not_offered_and_ends_with_a_recap() {
    let report = run_without_features();
    let summary = summary_block(Style { colour: false }, &report);
    // "step 4: " and 152 of the 200 characters: 160 in all.
    let cut = "x".repeat(152);
    let expected = format!(
        "
4 runs (3 scenarios and 1 @reload variants) against ws://x: 1 pass, 3 fail in 2.5 s
requirements of 1.2 (released 2026-11-28): 1.0 core: MUST 1/2 (not met: A-002), SHOULD 0/1 (not met: A-003); \
1.2 cancel: MUST 1/2 (not met: C-002); multi_attach: not offered (MUST 1/1 without it); state_window: not offered (MUST 1/1 without it)
recap, one line per check that did not pass (3 fail, 1 warn):
  FAIL cancel-mid-stream / step-04-expect [C-002]: step 4: expected chat.run_complete, got chat.assistant_message_delta
  WARN cancel-mid-stream / no-more-than-asked [A-003]: step 4: a second frame answered one request
  FAIL resume-takes-over / snapshot-final [A-002]: step 4: {cut}…
  FAIL resume-takes-over@reload / snapshot-final [A-002]: step 4: {cut}…
result: NOT conformant (exit 1)"
    );
    assert_eq!(summary, expected);
}

#[test]
fn the_result_per_level_is_the_same_in_json_and_junit() {
    let report = run_without_features();
    let json = serde_json::to_value(&report.levels).expect("serializes");
    let groups = json[0]["groups"].as_array().expect("groups");
    let group = |name: &str| groups.iter().find(|g| g["group"] == name).expect("the group is reported");
    assert_eq!(group("multi_attach")["in_force"], false);
    assert_eq!(group("cancel")["in_force"], true);
    assert_eq!(group("cancel")["levels"][0]["not_met"], serde_json::json!(["C-002"]));
    assert!(group("multi_attach")["levels"][0].get("not_met").is_none(), "an empty list is left out");
    assert_eq!((report.summary.scenarios, report.summary.reload_variants), (4, 1));
    let xml = junit(&report);
    assert!(
        xml.contains("cancel: MUST 1/2 (not met: C-002); multi_attach: not offered (MUST 1/1 without it)"),
        "{xml}"
    );
    let back: RunReport =
        serde_json::from_value(serde_json::to_value(&report).expect("serializes")).expect("reads back");
    assert_eq!(back, report);
}

#[test]
fn a_report_without_features_in_force_counts_every_feature_as_offered_and_a_clean_run_has_no_recap() {
    let mut report = run_without_features();
    for s in &mut report.scenarios {
        s.in_force.clear();
    }
    report.levels = crate::errata::tally(
        &report,
        &chatwire_schema::requirements::parse("t.md", "**[M-001]** *(since 1.2, multi_attach)* A server MUST m.\n")
            .expect("parses"),
    );
    assert!(report.levels[0].groups.iter().all(|g| g.in_force), "{:?}", report.levels);
    let clean = RunReport { scenarios: vec![], ..report };
    assert_eq!(recap_block(Style { colour: false }, &clean), "");
    assert_eq!(run_count(150, 0), "150 scenario(s)");
}
