use std::collections::BTreeMap;

use super::badge::{badges, svg, Tone};
use super::html::{esc, slug};
use super::matrix::{matrix_page, Column};
use super::page::{run_page, Links};
use super::{registry_by_id, worse, Certified};
use crate::errata::{ErrataCount, GroupLevels, LevelCount, VersionLevels};
use crate::report::{CheckReport, Finding, RunReport, ScenarioReport, Summary, Verdict};
use crate::scenario::Level;

const HOSTILE: &str = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>&amp;\u{0}";

fn check(id: &str, verdict: Verdict, requirements: &[&str], findings: Vec<Finding>) -> CheckReport {
    CheckReport {
        id: id.to_owned(),
        verdict,
        requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
        summary: format!("summary of {id} {HOSTILE}"),
        findings,
        findings_dropped: 0,
        baselined: None,
        errata: Vec::new(),
    }
}

fn finding(requirement: Option<&str>) -> Finding {
    Finding {
        message: format!("the backend said {HOSTILE}"),
        step: Some(3),
        requirement: requirement.map(str::to_owned),
        frame: Some(format!("{{\"type\":\"error\",\"message\":\"{HOSTILE}\"}}")),
        version: Some("1.2".to_owned()),
    }
}

fn scenario(id: &str, verdict: Verdict, checks: Vec<CheckReport>) -> ScenarioReport {
    ScenarioReport {
        id: id.to_owned(),
        title: format!("title {HOSTILE}"),
        level: Level::Must,
        requirements: Vec::new(),
        verdict,
        duration_ms: 12,
        checks,
        wire_log: vec![format!("main < error {HOSTILE}")],
        backend_stderr: None,
        snapshots: BTreeMap::new(),
        sweep: None,
        version: Some("1.2".to_owned()),
        in_force: Default::default(),
    }
}

fn report(exit_code: u8) -> RunReport {
    let failing =
        check("step-03-expect", Verdict::Fail, &["ATTACH-001", "ATTACH-004"], vec![finding(Some("ATTACH-004"))]);
    let passing = check("wire-schema-valid", Verdict::Pass, &["FRAME-002", "ATTACH-001"], Vec::new());
    let na = check("features", Verdict::NotApplicable, &["WINDOW-001"], Vec::new());
    RunReport {
        tool: "chatwire-conformance 0.0.0".to_owned(),
        target: format!("exec: ./backend {HOSTILE}"),
        replicas: 1,
        timeout_scale: 1.0,
        duration_ms: 1500,
        summary: Summary { scenarios: 3, pass: 1, not_applicable: 1, fail: 1, ..Summary::default() },
        scenarios: vec![
            scenario("attach-two-tabs-one-turn", Verdict::Fail, vec![failing, passing.clone()]),
            scenario("turn-say-completed", Verdict::Pass, vec![passing]),
            scenario("window-keeps-an-old-pending-call", Verdict::NotApplicable, vec![na]),
        ],
        stale_baseline: Vec::new(),
        backend_logs: Vec::new(),
        sweep: None,
        strict: false,
        levels: vec![VersionLevels {
            version: "1.2".to_owned(),
            released: true,
            groups: vec![GroupLevels {
                since: "1.2".to_owned(),
                group: "multi_attach".to_owned(),
                in_force: true,
                levels: vec![LevelCount {
                    level: "MUST".to_owned(),
                    passed: 8,
                    evaluated: 9,
                    not_met: vec![format!("ATTACH-00{HOSTILE}")],
                }],
            }],
            errata: ErrataCount { pass: 1, warn: 1, fail: 0, charged: vec![format!("INT-002: erratum {HOSTILE}")] },
        }],
        exit_code,
    }
}

fn certified(exit_code: u8) -> Certified {
    let scenarios = crate::catalog::embedded_scenarios().expect("the embedded scenarios load");
    Certified::new(format!("team {HOSTILE}"), report(exit_code), &scenarios)
}

/// Every `<` in the page opens one of the page's own tags: no report string reached the markup.
fn assert_no_injected_markup(html: &str) {
    assert!(!html.contains("<script"), "a script tag reached the page");
    assert!(!html.contains("<img src=x"), "an injected img reached the page");
    assert!(!html.contains('\u{0}'), "a NUL reached the page");
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;"),
        "the hostile text is shown escaped"
    );
}

#[test]
fn escaping_covers_markup_quotes_and_controls() {
    assert_eq!(esc("a<b>&\"'c\u{7}"), "a&lt;b&gt;&amp;&quot;&#39;c\u{FFFD}");
    assert_eq!(esc("line\nnext\ttab"), "line\nnext\ttab");
}

#[test]
fn slugs_are_safe_directory_names() {
    assert_eq!(slug("Python template (1.0 offer)"), "python-template-1.0-offer");
    assert_eq!(slug("../../etc/passwd"), "etc-passwd");
    assert_eq!(slug("..."), "run");
    assert_eq!(slug(""), "run");
}

#[test]
fn a_failing_check_charges_the_requirement_its_finding_names_and_n_a_yields() {
    let run = certified(1);
    assert_eq!(run.requirements["ATTACH-004"].verdict, Verdict::Fail);
    assert_eq!(run.requirements["ATTACH-001"].verdict, Verdict::Pass, "the finding named ATTACH-004 only");
    assert_eq!(run.requirements["ATTACH-001"].checks, 3);
    assert_eq!(run.requirements["WINDOW-001"].verdict, Verdict::NotApplicable);
    assert_eq!(worse(Verdict::NotApplicable, Verdict::Pass), Verdict::Pass);
    assert_eq!(worse(Verdict::Warn, Verdict::Fail), Verdict::Fail);
    assert!(
        run.features_in_force.contains("multi_attach"),
        "an applicable multi_attach scenario ran: {:?}",
        run.features_in_force
    );
    assert!(run.features_not_in_force.contains("state_window"), "{:?}", run.features_not_in_force);
}

#[test]
fn the_run_page_shows_what_was_tested_and_escapes_every_report_string() {
    let run = certified(1);
    let registry = chatwire_schema::requirements::all().expect("the embedded spec parses");
    let made = badges(&run);
    let html = run_page(
        &run,
        &registry_by_id(&registry),
        &made,
        &Links { spec_base: "https://example.test/", badges: "badges/" },
    );
    assert_no_injected_markup(&html);
    assert!(html.contains("not conformant"));
    assert!(html.contains("requirement set released 2026-11-28, frozen"));
    assert!(html.contains("multi_attach"));
    // A requirement links to its text in the spec, by the registry's anchor.
    let attach = registry.iter().find(|r| r.id == "ATTACH-004").expect("ATTACH-004 is in the spec");
    assert!(html.contains(&format!("href=\"https://example.test/{}\"", attach.link())), "no link to {}", attach.link());
    // The failure's frame is shown, escaped, in its recap.
    assert!(html.contains("<pre>{&quot;type&quot;:&quot;error&quot;"));
    assert!(html.contains("Content-Security-Policy"));
    assert!(!html.contains("http://") && !html.contains("<link"), "the page loads nothing");
}

#[test]
fn badges_say_the_level_and_escape_their_text() {
    let run = certified(1);
    let made = badges(&run);
    let must = made.iter().find(|b| b.file == "1.2-must.svg").expect("a MUST badge for 1.2");
    assert_eq!((must.label.as_str(), must.value.as_str(), must.tone), ("chatwire 1.2 MUST", "fail 1/9", Tone::Bad));
    let overall = made.iter().find(|b| b.file == "conformance.svg").expect("the overall badge");
    assert_eq!(overall.value, "not conformant");
    let passing = certified(0);
    assert_eq!(badges(&passing).last().map(|b| b.tone), Some(Tone::Good));
    let hostile = super::badge::Badge {
        label: HOSTILE.to_owned(),
        value: "pass".to_owned(),
        tone: Tone::Good,
        file: "x.svg".to_owned(),
    };
    let image = svg(&hostile);
    assert!(image.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!image.contains("<script") && image.contains("&lt;script&gt;"));
}

#[test]
fn the_matrix_has_a_column_per_run_and_a_row_per_requirement() {
    let a = certified(1);
    let b = certified(0);
    let registry = chatwire_schema::requirements::all().expect("the embedded spec parses");
    let columns = vec![
        Column { run: &a, dir: "a/".to_owned(), badges: badges(&a) },
        Column { run: &b, dir: "b/".to_owned(), badges: badges(&b) },
    ];
    let html = matrix_page(&columns, &registry_by_id(&registry), "https://example.test/");
    assert_no_injected_markup(&html);
    assert_eq!(html.matches("<th class=\"impl\">").count(), 2);
    for id in ["ATTACH-001", "ATTACH-004", "FRAME-002", "WINDOW-001"] {
        assert!(html.contains(&format!(">{id}</a>")), "no row for {id}");
    }
    assert!(html.contains("href=\"a/index.html\"") && html.contains("src=\"b/badges/conformance.svg\""));
}
