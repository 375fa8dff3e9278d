//! What the monitor costs as a session grows: one turn of N `say` items (every event followed by
//! its `ui_state_patch`) against the bundled reference, driven by the runner (every always-on
//! check, the oracle) and by a bare tokio-tungstenite client that reads the same frames unchecked,
//! interleaved on one backend; then `check-log` over the wire log of the largest session.
//!
//! Goals (issue #25, deliverable 7): runner ≤ 1.3× bare at 100 items; the runner's time per event
//! at 10,000 items ≤ 2× that at 100; `check-log` of a 10,000-item session in seconds.
//!
//! `cargo bench -p chatwire-conformance --bench monitor_cost` (`-- --quick` for fewer rounds).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, ServerProcess, Target};
use chatwire_conformance::driver::{default_versions, run_scenario, DriverConfig, Endpoint};
use chatwire_conformance::report::Verdict;
use chatwire_conformance::scenario::{Scenario, ScenarioLoader};
use chatwire_schema::FrameValidator;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

fn script(items: usize) -> Value {
    let steps: Vec<Value> = (0..items).map(|i| json!({"op": "say", "markdown": format!("item {i}")})).collect();
    json!({"turns": [{"steps": steps}]})
}

fn scenario(items: usize) -> Scenario {
    let text = json!({
        "id": format!("bench-{items}-items"),
        "title": "bench",
        "level": "must",
        "requirements": ["STATE-038"],
        "script": script(items),
        "steps": [
            {"do": "connect"},
            {"do": "user_message", "text": "go"},
            {"do": "expect", "frame": {"type": "chat.user_message_accepted"}},
            {"do": "expect", "frame": {"type": "ui_state_patch"}},
            {"do": "expect", "frame": {"type": "chat.run_started"}},
            {"do": "wait_idle", "quiet_ms": 0, "timeout_ms": 3600000}
        ]
    });
    ScenarioLoader::new().parse(&format!("bench-{items}-items.json"), &text.to_string()).expect("valid bench scenario")
}

/// The same exchange with no checks; returns the server frames read.
async fn bare(url: &str, items: usize) -> usize {
    let mut request = url.into_client_request().expect("url");
    request.headers_mut().insert("Sec-WebSocket-Protocol", HeaderValue::from_static("chatwire.v1"));
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await.expect("connect");
    let hello = json!({"type": "session.hello", "id": "h1", "versions": default_versions(), "script": script(items)});
    ws.send(Message::text(hello.to_string())).await.expect("send");
    let mut frames = 0;
    // welcome, snapshot
    while frames < 2 {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => {
                let _: Value = serde_json::from_str(t.as_str()).expect("json");
                frames += 1;
            }
            Some(Ok(_)) => continue,
            other => panic!("connection ended: {other:?}"),
        }
    }
    ws.send(Message::text(json!({"type": "chat.user_message", "id": "u1", "text": "go"}).to_string()))
        .await
        .expect("send");
    loop {
        let t = match ws.next().await {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(_)) => continue,
            other => panic!("connection ended: {other:?}"),
        };
        frames += 1;
        let v: Value = serde_json::from_str(t.as_str()).expect("json");
        if v["type"] == "chat.run_complete" {
            let _patch = ws.next().await;
            frames += 1;
            break;
        }
    }
    let _ = ws.close(None).await;
    while let Some(Ok(message)) = ws.next().await {
        if matches!(message, Message::Close(_)) {
            break;
        }
    }
    frames
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let server = ServerProcess::start(&Target::Bundled { fault: None }, "bench", Duration::from_secs(30))
            .await
            .expect("the reference backend starts");
        let url = server.url().to_owned();
        let validator = Arc::new(FrameValidator::new());
        let cfg = DriverConfig::default();
        let mut per_event = Vec::new();
        // `--max N`: skip sizes above N (a quick look at a slow monitor).
        let max: usize = std::env::args()
            .skip_while(|a| a != "--max")
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX);
        for (items, rounds) in [(100usize, if quick { 10 } else { 60 }), (1_000, if quick { 2 } else { 6 }), (10_000, if quick { 1 } else { 3 })] {
            if items > max {
                continue;
            }
            let scenario = scenario(items);
            let (mut runner_times, mut bare_times, mut frames) = (Vec::new(), Vec::new(), 0);
            for round in 0..rounds + 1 {
                for which in [round % 2, (round + 1) % 2] {
                    let t = Instant::now();
                    if which == 0 {
                        frames = bare(&url, items).await;
                        if round > 0 {
                            bare_times.push(t.elapsed());
                        }
                    } else {
                        let mut ep = Endpoint::Url(url.clone());
                        let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
                        let r = run_scenario(&scenario, &mut ep, &cfg, validator.clone(), deadline).await;
                        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
                        if round > 0 {
                            runner_times.push(t.elapsed());
                        }
                    }
                }
            }
            let (r, b) = (median(runner_times), median(bare_times));
            let event = r.as_secs_f64() / frames as f64;
            per_event.push(event);
            println!(
                "{items:>6} items ({frames} frames, median of {rounds}): runner {:>9.2} ms, bare {:>9.2} ms, ratio {:.2}x; runner per frame {:.1} us",
                r.as_secs_f64() * 1000.0,
                b.as_secs_f64() * 1000.0,
                r.as_secs_f64() / b.as_secs_f64(),
                event * 1e6,
            );
        }
        if per_event.len() < 3 {
            return;
        }
        println!("runner time per frame, 10,000 items / 100 items: {:.2}x (goal <= 2x)", per_event[2] / per_event[0]);

        // check-log over the wire log of a 10,000-item session.
        let dir = std::env::temp_dir().join(format!("chatwire-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let logged = DriverConfig { wire_log_dir: Some(dir.clone()), ..DriverConfig::default() };
        let scenario = scenario(10_000);
        let mut ep = Endpoint::Url(url.clone());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
        let r = run_scenario(&scenario, &mut ep, &logged, validator.clone(), deadline).await;
        assert_eq!(r.verdict, Verdict::Pass);
        let log = dir.join(format!("{}.jsonl", scenario.id));
        let t = Instant::now();
        let report = chatwire_conformance::checklog::check_log(&log, validator.clone()).expect("log reads");
        println!("check-log of the 10,000-item session: {:.2} s ({:?})", t.elapsed().as_secs_f64(), report.verdict);
        let _ = std::fs::remove_dir_all(&dir);
        drop(server);
    });
}
