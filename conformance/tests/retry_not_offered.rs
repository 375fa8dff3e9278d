//! RETRY-004's first check, `capability_not_offered`, needs a server that speaks 1.1 but does not
//! list `retry`: the reference started with `serve --without retry`, which this test spawns itself.
//! The same scenario against the bundled reference, which offers `retry`, fails: the check can fail.

use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::driver::{DriverConfig, SnapshotMode};
use chatwire_conformance::report::{RunReport, Verdict};
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::scenario::{Scenario, ScenarioLoader};

/// A completed turn, then a retry after its user message: valid in every way but the capability.
const SCENARIO: &str = r#"{
  "id": "retry-not-offered",
  "title": "A retry where the server does not list retry is refused with capability_not_offered",
  "level": "must",
  "requirements": ["RETRY-004", "ERROR-001"],
  "script": {"turns": [{"steps": [{"op": "say", "markdown": "Hello."}],
                        "retries": [{"steps": [{"op": "say", "markdown": "Never played."}]}]}]},
  "steps": [
    {"do": "connect", "versions": ["1.1"]},
    {"do": "user_message", "text": "Hi"},
    {"do": "expect", "frame": {"type": "chat.user_message_accepted", "invocation_id": "{{invocation:1}}", "item_id": "{{item:1}}"}},
    {"do": "expect", "frame": {"type": "chat.run_started", "invocation_id": "{{invocation:1}}"}},
    {"do": "expect", "frame": {"type": "chat.assistant_message", "markdown": "Hello."}},
    {"do": "expect", "frame": {"type": "chat.run_complete", "invocation_id": "{{invocation:1}}", "status": "completed"}},
    {"do": "wait_idle"},
    {"do": "retry", "after_item": "{{item:1}}"},
    {"do": "expect_error", "code": "capability_not_offered", "requirements": ["RETRY-004"]},
    {"do": "expect_silence", "ms": 300, "requirements": ["ERROR-001"]},
    {"do": "expect_state", "state": {"run": {"status": "completed"}}, "items": 2, "requirements": ["ERROR-001"]}
  ]
}"#;

fn scenario() -> Scenario {
    ScenarioLoader::new().parse("retry-not-offered.json", SCENARIO).expect("the scenario is valid")
}

fn options(target: Target) -> RunOptions {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    RunOptions {
        target,
        jobs: 1,
        driver: DriverConfig { timeout_scale: 3.0, snapshots: SnapshotMode::Collect, ..DriverConfig::default() },
        scenario_timeout: Duration::from_secs(60),
        run_timeout: Duration::from_secs(120),
        start_timeout: Duration::from_secs(20),
        sweep: None,
        plain_target: None,
        reload_variants: false,
        cluster: Default::default(),
    }
}

fn check_verdict(report: &RunReport, check: &str) -> Option<Verdict> {
    report.scenarios[0].checks.iter().find(|c| c.id == check).map(|c| c.verdict)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_where_retry_is_not_offered_is_refused_with_capability_not_offered() {
    let exe = env!("CARGO_BIN_EXE_chatwire-conformance");
    let command =
        format!("{exe} __reference serve --addr 127.0.0.1:{{port}} --conformance --db {{db}} --without retry");
    let target = Target::Exec { command, path: "/ws".to_owned() };
    let report = run_suite(vec![scenario()], &options(target), Arc::new(|_| {})).await.expect("the reference starts");
    let s = &report.scenarios[0];
    assert_eq!(s.verdict, Verdict::Pass, "{s:#?}");
    assert_eq!(check_verdict(&report, "step-09-expect_error"), Some(Verdict::Pass));
    assert_eq!(check_verdict(&report, "retry-answered-as-checked"), Some(Verdict::Pass), "the monitor judged it too");

    // The bundled reference offers retry: the same request is accepted, and the scenario fails.
    let offered = run_suite(vec![scenario()], &options(Target::Bundled { fault: None }), Arc::new(|_| {}))
        .await
        .expect("the reference starts");
    assert_eq!(offered.scenarios[0].verdict, Verdict::Fail);
    assert_eq!(check_verdict(&offered, "step-09-expect_error"), Some(Verdict::Fail));
}
