//! Runner overhead and suite wall time, against the bundled reference backend.
//!
//! 1. One human-in-the-loop scenario driven by the runner (every always-on check, the oracle)
//!    versus a bare tokio-tungstenite client that sends and reads the same frames with no checks,
//!    interleaved in one run on the same backend; goal: runner ≤ 1.3× bare.
//! 2. The whole embedded suite with `--jobs 1` and `--jobs 2`.
//!
//! `cargo bench -p chatwire-conformance --bench runner` (add `-- --quick` for fewer rounds,
//! `-- --no-suite` for the overhead comparison only).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, ServerProcess, Target};
use chatwire_conformance::catalog::embedded_scenarios;
use chatwire_conformance::driver::{run_scenario, DriverConfig, Endpoint, SnapshotMode};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::runner::{run_suite, RunOptions};
use chatwire_conformance::scenario::{Scenario, ScenarioLoader};
use chatwire_schema::FrameValidator;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

fn script() -> Value {
    json!({"turns": [{"steps": [
        {"op": "say", "markdown": "Let me ask for a key."},
        {"op": "tool_calls", "calls": [{"tool_name": "request_api_key", "interaction_type": "ui_tool", "display": "artifact",
            "component_type": "AgentAPIKeysBundleInput", "workflow_name": "AgentGenerator", "payload": {"provider": "openai"},
            "outcome": {"kind": "await_response", "summary": "API key saved"}}]},
        {"op": "say", "markdown": "Key saved, continuing."}
    ]}]})
}

/// The scenario: no quiet waits, so both clients do exactly the same network work.
fn scenario() -> Scenario {
    let text = json!({
        "id": "bench-hitl",
        "title": "bench",
        "level": "must",
        "requirements": ["TOOL-016"],
        "script": script(),
        "steps": [
            {"do": "connect"},
            {"do": "user_message", "text": "Set up the agent"},
            {"do": "expect", "frame": {"type": "chat.user_message_accepted", "invocation_id": "{{inv}}"}},
            {"do": "expect", "frame": {"type": "chat.run_started"}},
            {"do": "expect", "frame": {"type": "chat.assistant_message"}},
            {"do": "expect", "frame": {"type": "chat.tool_call", "tool_call_id": "{{tc}}"}},
            {"do": "expect", "frame": {"type": "chat.run_complete", "status": "awaiting_input"}},
            {"do": "expect", "frame": {"type": "ui_state_updated"}},
            {"do": "respond", "tool_call": "{{tc}}", "outcome": {"action": "submit", "value": {"api_key": "sk"}}},
            {"do": "expect", "frame": {"type": "chat.run_started"}},
            {"do": "expect", "frame": {"type": "chat.tool_call_complete", "status": "completed"}},
            {"do": "expect", "frame": {"type": "chat.assistant_message"}},
            {"do": "expect", "frame": {"type": "chat.run_complete", "status": "completed"}},
            {"do": "expect", "frame": {"type": "ui_state_updated"}}
        ]
    });
    ScenarioLoader::new().parse("bench-hitl.json", &text.to_string()).expect("valid bench scenario")
}

/// The same exchange with no validation, no oracle, no matching beyond finding the frames.
async fn bare(url: &str) {
    let mut request = url.into_client_request().expect("url");
    request.headers_mut().insert("Sec-WebSocket-Protocol", HeaderValue::from_static("chatwire.v1"));
    // Same transport settings as the runner: TCP_NODELAY on.
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await.expect("connect");
    let hello = json!({"type": "session.hello", "id": "h1", "versions": ["1.0"], "script": script()});
    ws.send(Message::text(hello.to_string())).await.expect("send");
    // welcome, snapshot
    for _ in 0..2 {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => {
                    let _: Value = serde_json::from_str(t.as_str()).expect("json");
                    break;
                }
                Some(Ok(_)) => continue,
                other => panic!("connection ended: {other:?}"),
            }
        }
    }
    ws.send(Message::text(json!({"type": "chat.user_message", "id": "u1", "text": "Set up the agent"}).to_string()))
        .await
        .expect("send");
    let mut tool_call_id = String::new();
    let mut phase_done = false;
    while !phase_done {
        let Some(Ok(Message::Text(t))) = ws.next().await else { panic!("ended") };
        let v: Value = serde_json::from_str(t.as_str()).expect("json");
        match v["type"].as_str() {
            Some("chat.tool_call") => tool_call_id = v["tool_call_id"].as_str().unwrap_or_default().to_owned(),
            Some("chat.run_complete") => {
                let _update = ws.next().await;
                phase_done = true;
            }
            _ => {}
        }
    }
    let response = json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": tool_call_id,
        "outcome": {"action": "submit", "value": {"api_key": "sk"}}});
    ws.send(Message::text(response.to_string())).await.expect("send");
    loop {
        let Some(Ok(Message::Text(t))) = ws.next().await else { panic!("ended") };
        let v: Value = serde_json::from_str(t.as_str()).expect("json");
        if v["type"] == "chat.run_complete" {
            let _update = ws.next().await;
            break;
        }
    }
    // Complete the closing handshake, as the runner does.
    let _ = ws.close(None).await;
    while let Some(Ok(message)) = ws.next().await {
        if matches!(message, Message::Close(_)) {
            break;
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let skip_suite = std::env::args().any(|a| a == "--no-suite");
    let rounds = if quick { 10 } else { 150 };
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let server = ServerProcess::start(&Target::Bundled { fault: None }, "bench", Duration::from_secs(30))
            .await
            .expect("the reference backend starts");
        let url = server.url().to_owned();
        let validator = Arc::new(FrameValidator::new());
        let scenario = scenario();
        let cfg = DriverConfig { snapshots: SnapshotMode::Collect, ..DriverConfig::default() };
        // Warm up both paths (connection setup, backend caches).
        for _ in 0..3 {
            bare(&url).await;
            let mut ep = Endpoint::Url(url.clone());
            let r = run_scenario(
                &scenario,
                &mut ep,
                &cfg,
                validator.clone(),
                tokio::time::Instant::now() + Duration::from_secs(30),
            )
            .await;
            assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        }
        let (mut runner_times, mut bare_times) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            // Alternate which client goes first, so neither always meets a warmer backend.
            for which in [round % 2, (round + 1) % 2] {
                if which == 0 {
                    let t = Instant::now();
                    bare(&url).await;
                    bare_times.push(t.elapsed());
                } else {
                    let mut ep = Endpoint::Url(url.clone());
                    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
                    let t = Instant::now();
                    let r = run_scenario(&scenario, &mut ep, &cfg, validator.clone(), deadline).await;
                    runner_times.push(t.elapsed());
                    assert_eq!(r.verdict, Verdict::Pass);
                }
            }
        }
        let (r, b) = (median(runner_times), median(bare_times));
        println!("one scenario (hitl, 14 steps), median of {rounds}:");
        println!("  runner with all checks: {:>8.2} ms", r.as_secs_f64() * 1000.0);
        println!("  bare tokio-tungstenite: {:>8.2} ms", b.as_secs_f64() * 1000.0);
        println!("  ratio: {:.2}x (goal <= 1.30x)", r.as_secs_f64() / b.as_secs_f64());
        drop(server);

        if skip_suite {
            return;
        }
        let scenarios = embedded_scenarios().expect("embedded scenarios");
        for jobs in [1usize, 2] {
            let opts = RunOptions {
                target: Target::Bundled { fault: None },
                jobs,
                driver: DriverConfig { snapshots: SnapshotMode::Collect, ..DriverConfig::default() },
                ..RunOptions::default()
            };
            let t = Instant::now();
            let report = run_suite(scenarios.clone(), &opts, Arc::new(|_| {})).await.expect("suite runs");
            println!(
                "whole suite ({} scenarios), --jobs {jobs}: {:.2} s ({} pass)",
                report.scenarios.len(),
                t.elapsed().as_secs_f64(),
                report.summary.pass
            );
        }
    });
}
