//! The runner against small hostile servers: every misbehaviour yields a verdict naming the check
//! and requirement, the next scenario still runs, and nothing hangs or panics.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::Target;
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::report::{RunReport, ScenarioReport, Verdict};
use chatwire_conformance::runner::{run_suite, RunError, RunOptions};
use chatwire_conformance::scenario::Scenario;
use common::{say_scenario, Mode};

/// Short deadlines: hostile servers are judged by their deadlines, not by waiting for them.
fn options(url: &str) -> RunOptions {
    RunOptions {
        target: Target::Url(url.to_owned()),
        jobs: 1,
        driver: DriverConfig {
            step_timeout: Duration::from_millis(800),
            max_message_bytes: 64 * 1024,
            snapshots: SnapshotMode::Collect,
            ..DriverConfig::default()
        },
        scenario_timeout: Duration::from_secs(10),
        run_timeout: Duration::from_secs(60),
        start_timeout: Duration::from_secs(5),
        sweep: None,
        plain_target: None,
        reload_variants: false,
        cluster: Default::default(),
    }
}

async fn run_against(mode: Mode, scenarios: Vec<Scenario>) -> RunReport {
    // The first connection (the runner's reachability probe) is served correctly.
    let mock = common::start(mode, 1).await;
    run_suite(scenarios, &options(&mock.url), Arc::new(|_| {})).await.expect("the mock is reachable")
}

fn check<'a>(report: &'a ScenarioReport, id: &str) -> &'a chatwire_conformance::report::CheckReport {
    report.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id} in {:#?}", report.checks))
}

fn failing_step(report: &ScenarioReport) -> &chatwire_conformance::report::CheckReport {
    report
        .checks
        .iter()
        .find(|c| c.id.starts_with("step-") && c.verdict != Verdict::Pass)
        .unwrap_or_else(|| panic!("no failing step in {:#?}", report.checks))
}

#[tokio::test]
async fn a_correct_server_passes_every_check() {
    let report = run_against(Mode::Good, vec![say_scenario("good")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Pass, "{s:#?}");
    for def in chatwire_conformance::monitor::ALWAYS_ON {
        assert_eq!(check(s, def.id).verdict, Verdict::Pass, "{}", def.id);
    }
    assert_eq!(s.checks.iter().filter(|c| c.id.starts_with("step-")).count(), 7);
}

#[tokio::test]
async fn hang_after_handshake_times_out_and_the_next_scenario_runs() {
    let report = run_against(Mode::HangAfterHandshake, vec![say_scenario("a-first"), say_scenario("b-second")]).await;
    assert_eq!(report.scenarios.len(), 2);
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Timeout, "{s:#?}");
        let step = failing_step(s);
        assert_eq!(step.id, "step-01-connect");
        assert!(step.findings[0].message.contains("session.welcome"), "{:?}", step.findings);
    }
    assert_eq!(report.summary.timeout, 2);
}

#[tokio::test]
async fn hang_before_handshake_is_a_timeout() {
    let report = run_against(Mode::HangBeforeHandshake, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Timeout, "{s:#?}");
    assert!(failing_step(s).findings[0].message.contains("handshake"), "{:?}", failing_step(s).findings);
}

#[tokio::test]
async fn unreachable_or_silent_backend_is_a_run_error() {
    // Nothing listens on the port of a listener that was just dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = run_suite(vec![say_scenario("a")], &options(&format!("ws://127.0.0.1:{port}/ws")), Arc::new(|_| {}))
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Unreachable(_)), "{err}");
    // A server that hangs even the probe is unreachable too.
    let mock = common::start(Mode::HangBeforeHandshake, 0).await;
    let mut opts = options(&mock.url);
    opts.driver.timeout_scale = 0.2;
    let err = run_suite(vec![say_scenario("a")], &opts, Arc::new(|_| {})).await.unwrap_err();
    assert!(matches!(err, RunError::Unreachable(_)), "{err}");
}

#[tokio::test]
async fn malformed_json_fails_schema_validity() {
    let report = run_against(Mode::MalformedJson, vec![say_scenario("a"), say_scenario("b")]).await;
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
        let c = check(s, "wire-schema-valid");
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.findings[0].message.starts_with("the frame is not JSON"), "{:?}", c.findings);
        assert_eq!(c.findings[0].requirement.as_deref(), Some("FRAME-001"));
        assert!(c.findings[0].frame.as_deref().unwrap_or("").contains("oops"));
        assert_eq!(c.findings[0].step, Some(1));
    }
}

#[tokio::test]
async fn a_member_the_schema_does_not_define_fails_schema_validity() {
    let report = run_against(Mode::ExtraMember, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
    let c = check(s, "wire-schema-valid");
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(c.findings.len(), 1, "only the welcome is invalid: {:?}", c.findings);
    let f = &c.findings[0];
    assert!(
        f.message.starts_with("session.welcome has members its schema does not define") && f.message.contains("colour"),
        "{f:?}"
    );
    // Unknown members break FRAME-003 (schemas are closed), not FRAME-002.
    assert_eq!(f.requirement.as_deref(), Some("FRAME-003"));
    assert_eq!(f.step, Some(1));
    // Blame is on the implementation, not the harness.
    assert!(s.checks.iter().all(|c| c.verdict != Verdict::HarnessError));
}

#[tokio::test]
async fn binary_frames_fail_text_only() {
    let report = run_against(Mode::Binary, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail);
    assert_eq!(check(s, "text-frames-only").verdict, Verdict::Fail);
    assert_eq!(failing_step(s).findings[0].requirement.as_deref(), Some("TRANSPORT-001"));
}

#[tokio::test]
async fn oversize_frames_are_refused_by_the_runners_limit() {
    let report = run_against(Mode::Oversize(200 * 1024), vec![say_scenario("a"), say_scenario("b")]).await;
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
        assert!(failing_step(s).findings[0].message.contains("size limit"), "{:?}", failing_step(s).findings);
    }
}

#[tokio::test]
async fn tcp_reset_is_a_failure_not_a_hang() {
    let report = run_against(Mode::Reset, vec![say_scenario("a"), say_scenario("b")]).await;
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
        let m = &failing_step(s).findings[0].message;
        assert!(m.contains("broke") || m.contains("closed"), "{m}");
    }
}

#[tokio::test]
async fn a_flood_is_bounded_and_reported() {
    let report = run_against(Mode::Flood, vec![say_scenario("a"), say_scenario("b")]).await;
    assert_eq!(report.scenarios.len(), 2);
    for s in &report.scenarios {
        assert!(matches!(s.verdict, Verdict::Fail | Verdict::Timeout), "{s:#?}");
        // Every update without an event breaks STATE-007.
        let c = check(s, "update-after-every-event");
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.findings_dropped > 0, "the findings list stays bounded: {c:?}");
    }
}

#[tokio::test]
async fn an_unexpected_close_fails_the_step_with_its_code() {
    let report = run_against(Mode::CloseWith(1011), vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail);
    assert!(failing_step(s).findings[0].message.contains("code 1011"), "{:?}", failing_step(s).findings);
}

#[tokio::test]
async fn a_fatal_error_with_the_wrong_close_code_fails() {
    let scenarios = chatwire_conformance::catalog::embedded_scenarios().unwrap();
    let unsupported: Vec<Scenario> = scenarios.into_iter().filter(|s| s.id == "unsupported-version").collect();
    assert_eq!(unsupported.len(), 1);
    let report = run_against(Mode::FatalThenClose(1000), unsupported.clone()).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
    assert_eq!(check(s, "fatal-errors-close").verdict, Verdict::Fail);
    // The close step's failure is charged to the requirement the step proves (SESSION-004 names
    // close code 4002), the always-on check's to TRANSPORT-008.
    assert_eq!(failing_step(s).requirements, ["SESSION-004"], "{:#?}", failing_step(s));
    assert_eq!(check(s, "fatal-errors-close").findings[0].requirement.as_deref(), Some("TRANSPORT-008"));
    // The right code passes the same scenario.
    let report = run_against(Mode::FatalThenClose(4002), unsupported).await;
    assert_eq!(report.scenarios[0].verdict, Verdict::Pass, "{:#?}", report.scenarios[0]);
}

#[tokio::test]
async fn a_divergent_state_fails_the_differential_oracle_with_a_diff() {
    let report = run_against(Mode::DivergentState, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail);
    let c = check(s, "state-matches-reducer");
    assert_eq!(c.verdict, Verdict::Fail);
    let m = &c.findings[0].message;
    assert!(m.contains("/items/1/markdown: expected \"Hello from the mock.\", got \"something else\""), "{m}");
    assert_eq!(c.findings[0].requirement.as_deref(), Some("STATE-004"));
    // The scenario itself ran to the end: only the oracle failed.
    assert!(s.checks.iter().filter(|c| c.id.starts_with("step-")).all(|c| c.verdict == Verdict::Pass));
}

#[tokio::test]
async fn a_repeated_seq_fails_seq_increasing() {
    let report = run_against(Mode::RepeatSeq, vec![say_scenario("a")]).await;
    let c = check(&report.scenarios[0], "seq-increasing");
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(c.findings[0].requirement.as_deref(), Some("SEQ-001"));
}

#[tokio::test]
async fn a_bad_timestamp_fails_the_ts_check() {
    let report = run_against(Mode::BadTimestamp, vec![say_scenario("a")]).await;
    let c = check(&report.scenarios[0], "ts-rfc3339");
    assert_eq!(c.verdict, Verdict::Fail);
    assert!(c.findings[0].message.contains("\"yesterday\""));
}

#[tokio::test]
async fn a_refused_event_names_the_reducer_rule() {
    let report = run_against(Mode::EventOutsideRun, vec![say_scenario("a")]).await;
    let c = check(&report.scenarios[0], "events-follow-reducer-rules");
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(c.findings[0].requirement.as_deref(), Some("STATE-022"), "{:?}", c.findings);
    assert!(c.findings[0].message.contains("chat.assistant_message (an event under STATE-012)"), "{:?}", c.findings);
    assert!(!c.findings[0].message.contains("inv-1"), "ids in messages are redacted too: {:?}", c.findings);
    // Frames in findings have their ids replaced by placeholders.
    let frame = c.findings[0].frame.as_deref().unwrap();
    assert!(frame.contains("[invocation:1]") && !frame.contains("inv-1"), "{frame}");
}

#[tokio::test]
async fn a_missing_subprotocol_fails_connect() {
    let report = run_against(Mode::NoSubprotocol, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail);
    assert_eq!(failing_step(s).findings[0].requirement.as_deref(), Some("TRANSPORT-003"));
}

fn ping_scenario(id: &str) -> Scenario {
    common::scenario(serde_json::json!({
        "id": id, "title": "ping", "level": "must", "requirements": ["TRANSPORT-010"],
        "steps": [{"do": "connect"}, {"do": "ping", "payload": "are you there"}, {"do": "ping", "payload": ""}]
    }))
}

fn no_subprotocol_scenario(id: &str) -> Scenario {
    common::scenario(serde_json::json!({
        "id": id, "title": "no subprotocol", "level": "must", "requirements": ["TRANSPORT-004"],
        "script": {"turns": [{"steps": [{"op": "say", "markdown": "Hello from the mock."}]}]},
        "steps": [
            {"do": "connect", "subprotocol": false},
            {"do": "user_message", "text": "Hi"},
            {"do": "expect", "frame": {"type": "chat.user_message_accepted"}},
            {"do": "expect", "frame": {"type": "chat.run_started"}},
            {"do": "expect", "frame": {"type": "chat.assistant_message", "markdown": "Hello from the mock."}},
            {"do": "expect", "frame": {"type": "chat.run_complete", "status": "completed"}}
        ]
    }))
}

#[tokio::test]
async fn pings_and_handshakes_without_subprotocol_pass_against_a_correct_server() {
    let report = run_against(Mode::Good, vec![ping_scenario("a"), no_subprotocol_scenario("b")]).await;
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Pass, "{s:#?}");
    }
}

#[tokio::test]
async fn an_unanswered_ping_times_out_naming_transport_010() {
    let report = run_against(Mode::DeafAfterHello, vec![ping_scenario("a"), ping_scenario("b")]).await;
    for s in &report.scenarios {
        assert_eq!(s.verdict, Verdict::Timeout, "{s:#?}");
        let step = failing_step(s);
        assert_eq!(step.id, "step-02-ping");
        assert_eq!(step.findings[0].requirement.as_deref(), Some("TRANSPORT-010"));
        assert!(step.findings[0].message.contains("no pong"), "{:?}", step.findings);
    }
}

#[tokio::test]
async fn a_pong_with_another_payload_fails_naming_transport_010() {
    let report = run_against(Mode::WrongPongs, vec![ping_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
    let step = failing_step(s);
    assert_eq!(step.id, "step-02-ping");
    assert_eq!(step.findings[0].requirement.as_deref(), Some("TRANSPORT-010"));
    let message = &step.findings[0].message;
    assert!(message.contains("\"are you there\"") && message.contains("\"not yours\""), "{message}");
}

#[tokio::test]
async fn a_wrong_answer_to_a_handshake_without_subprotocol_fails_naming_transport_004() {
    for mode in [Mode::SubprotocolUnrequested, Mode::SubprotocolRequired] {
        let report = run_against(mode, vec![no_subprotocol_scenario("a"), say_scenario("b")]).await;
        let (without, with) = (&report.scenarios[0], &report.scenarios[1]);
        assert_eq!(without.verdict, Verdict::Fail, "{mode:?}: {without:#?}");
        let step = failing_step(without);
        assert_eq!(step.id, "step-01-connect");
        assert_eq!(step.findings[0].requirement.as_deref(), Some("TRANSPORT-004"), "{mode:?}");
        // Offering chatwire.v1 still works on the same server.
        assert_eq!(with.verdict, Verdict::Pass, "{mode:?}: {with:#?}");
    }
}

fn outside_conformance_scenario(id: &str) -> Scenario {
    common::scenario(serde_json::json!({
        "id": id, "title": "outside conformance mode", "level": "must", "requirements": ["SCRIPT-003"],
        "conformance_mode": false,
        "steps": [
            {"do": "connect", "hello": false},
            {"do": "send", "frame": {"type": "session.hello", "id": "h-1", "versions": ["1.0"]}},
            {"do": "expect", "frame": {"type": "session.welcome", "capabilities": {"$excludes": ["conformance_script"]}}}
        ]
    }))
}

#[tokio::test]
async fn scenarios_outside_conformance_mode_need_a_plain_backend_and_check_it() {
    // Only --url: nothing names the backend outside conformance mode, so the scenario is n/a.
    let report = run_against(Mode::Good, vec![outside_conformance_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::NotApplicable, "{s:#?}");
    assert!(s.checks[0].findings[0].message.contains("--plain-url"), "{s:#?}");
    // With --plain-url it runs there; the mock lists conformance_script everywhere, which fails.
    let conformance = common::start(Mode::Good, 1).await;
    let plain = common::start(Mode::Good, 0).await;
    let opts = RunOptions { plain_target: Some(Target::Url(plain.url.clone())), ..options(&conformance.url) };
    let report = run_suite(vec![outside_conformance_scenario("a")], &opts, Arc::new(|_| {})).await.unwrap();
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Fail, "{s:#?}");
    assert!(failing_step(s).findings[0].message.contains("no element matching"), "{s:#?}");
    assert_eq!(conformance.connections.load(std::sync::atomic::Ordering::SeqCst), 1, "only the probe");
    assert_eq!(plain.connections.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_should_level_deviation_is_a_warning_not_a_failure() {
    let report = run_against(Mode::SmallFrameLimit, vec![say_scenario("a")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Warn, "{s:#?}");
    let c = check(s, "frame-limit-default");
    assert_eq!(c.verdict, Verdict::Warn);
    assert_eq!(c.findings[0].requirement.as_deref(), Some("TRANSPORT-013"));
    assert!(c.findings[0].message.contains("65536"), "{:?}", c.findings);
    assert_eq!(chatwire_conformance::baseline::exit_code(&report), 0, "warnings do not fail the run");
}

#[tokio::test]
async fn restart_scenarios_are_not_applicable_with_a_url() {
    let scenarios = chatwire_conformance::catalog::embedded_scenarios().unwrap();
    let restart: Vec<Scenario> = scenarios.into_iter().filter(|s| s.restarts()).collect();
    assert!(!restart.is_empty());
    let report = run_against(Mode::Good, restart).await;
    assert!(report.scenarios.iter().all(|s| s.verdict == Verdict::NotApplicable), "{:#?}", report.scenarios);
}

#[tokio::test]
async fn missing_capabilities_make_a_scenario_not_applicable() {
    let scenarios = chatwire_conformance::catalog::embedded_scenarios().unwrap();
    let rewind: Vec<Scenario> = scenarios.into_iter().filter(|s| s.id == "rewind-basic").collect();
    let report = run_against(Mode::Good, rewind).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::NotApplicable, "{s:#?}");
    assert!(failing_step(s).findings[0].message.contains("does not offer rewind"));
}

/// Stop reading, then expect the 4008 close of a bounded send queue: the frames the server sent
/// before it are taken in and checked (`after_frames`), not failures.
fn pause_scenario(id: &str) -> Scenario {
    common::scenario(serde_json::json!({
        "id": id,
        "title": "a client that stops reading",
        "level": "must",
        "requirements": ["TRANSPORT-016"],
        "script": {"turns": [{"steps": [{"op": "say", "markdown": "x"}]}]},
        "steps": [
            {"do": "connect"},
            {"do": "user_message", "text": "stream"},
            {"do": "pause_reading", "ms": 1000},
            {"do": "expect_close", "code": 4008, "after_frames": true, "timeout_ms": 8000, "requirements": ["TRANSPORT-016"]}
        ]
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_reader_sees_the_4008_close_after_the_frames_already_sent() {
    let report = run_against(Mode::SendQueueBound, vec![pause_scenario("paused")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Pass, "{s:#?}");
    assert_eq!(check(s, "step-04-expect_close").verdict, Verdict::Pass);
    assert_eq!(check(s, "state-matches-reducer").verdict, Verdict::Pass, "the frames before the close were checked");
}

#[tokio::test]
async fn a_server_that_never_closes_a_paused_reader_fails_the_4008_expectation() {
    // The good mock finishes its turn whether or not the client reads: no close comes.
    let report = run_against(Mode::Good, vec![pause_scenario("never-closed")]).await;
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Timeout, "{s:#?}");
    let step = failing_step(s);
    assert_eq!(step.id, "step-04-expect_close");
    assert_eq!(step.requirements, vec!["TRANSPORT-016".to_owned()]);
}

#[tokio::test]
async fn expect_state_matches_the_state_the_runner_holds() {
    let scenario = |id: &str, items: usize| {
        common::scenario(serde_json::json!({
            "id": id,
            "title": "state expectation",
            "level": "must",
            "requirements": ["STATE-012"],
            "script": {"turns": [{"steps": [{"op": "say", "markdown": "Hello from the mock."}]}]},
            "steps": [
                {"do": "connect"},
                {"do": "user_message", "text": "Hi"},
                {"do": "wait_idle", "quiet_ms": 50},
                {"do": "expect_state", "state": {"run": {"status": "completed"}, "items": {"$contains": [{"markdown": "Hello from the mock."}]}},
                 "items": items, "requirements": ["STATE-012"]}
            ]
        }))
    };
    let report = run_against(Mode::Good, vec![scenario("a-two-items", 2), scenario("b-three-items", 3)]).await;
    assert_eq!(report.scenarios[0].verdict, Verdict::Pass, "{:#?}", report.scenarios[0]);
    let wrong = &report.scenarios[1];
    assert_eq!(wrong.verdict, Verdict::Fail, "{wrong:#?}");
    assert!(failing_step(wrong).findings[0].message.contains("holds 2 items, not 3"), "{wrong:#?}");
}
