//! The reference under load, each figure a ratio from one run in which the two sides take turns
//! (A, B, A, B, …), the median of the rounds (`cargo bench -p chatwire-reference --bench load --
//! --bench [throughput|refusals|memory]`, all by default).
//!
//! 1. `throughput`: 100 sessions at once playing scripted turns against the reference (its own
//!    process, a file database, `synchronous = FULL`) and against a bare tokio-tungstenite server
//!    that sends the same frames with no state, no checks and no database (this binary run with
//!    `--bare-server`): events per second, reference ÷ bare, and the server's CPU time per event,
//!    reference ÷ bare.
//! 2. `refusals`: 10,000 refused frames on one session, `--durability full` against `normal`:
//!    the time, full ÷ normal, and how much each grows the database.
//! 3. `memory`: the resident memory per session that has streamed 2,000 events and stays
//!    connected.
//!
//! The bench reports, it does not fail.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// Rounds of each comparison (each round runs both sides once).
const ROUNDS: usize = 3;

/// Sessions at once in the throughput figure.
const SESSIONS: usize = 100;
/// Turns each session plays there.
const TURNS: usize = 10;
/// Events of one [`busy_turn`]: accepted, run_started, say, tool_call, progress, complete, say,
/// run_complete.
const EVENTS_PER_TURN: usize = 8;

/// The turn every session plays: two says around a self-settling tool call with progress.
fn busy_turn() -> Value {
    json!({"steps": [
        {"op": "say", "markdown": "on it"},
        {"op": "tool_calls", "calls": [{"tool_name": "lookup", "interaction_type": "auto_tool", "display": "inline",
            "progress": [{"message": "half", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"ok": true}}}]},
        {"op": "say", "markdown": "done"}
    ]})
}

/// Plays [`TURNS`] turns on a fresh session; returns the events received.
async fn play(url: String) -> usize {
    let mut ws = connect(&url).await;
    let script = json!({"turns": vec![busy_turn(); TURNS]});
    send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.2"], "script": script})).await;
    recv_text(&mut ws).await;
    recv_text(&mut ws).await;
    let mut events = 0;
    for i in 0..TURNS {
        send(&mut ws, json!({"type": "chat.user_message", "id": format!("m{i}"), "text": "go"})).await;
        let (before, _) = read_until(&mut ws, "chat.run_complete").await;
        recv_text(&mut ws).await; // its state frame
        events += before + 1;
    }
    events
}

/// One throughput run against `server`: (events per second, server CPU nanoseconds per event).
async fn throughput_run(server: &Spawned) -> (f64, f64) {
    let cpu = cpu_ns(server.pid());
    let start = Instant::now();
    let players: Vec<_> = (0..SESSIONS).map(|_| tokio::spawn(play(server.url.clone()))).collect();
    let mut events = 0;
    for p in players {
        events += p.await.expect("a session played");
    }
    let elapsed = start.elapsed();
    assert_eq!(events, SESSIONS * TURNS * EVENTS_PER_TURN, "every event arrived");
    let cpu = cpu_ns(server.pid()).saturating_sub(cpu);
    (events as f64 / elapsed.as_secs_f64(), cpu as f64 / events as f64)
}

async fn throughput() {
    // `CHATWIRE_BENCH_URL=ws://…`: load a server started elsewhere (under a profiler, say), once.
    if let Ok(url) = std::env::var("CHATWIRE_BENCH_URL") {
        let start = Instant::now();
        let players: Vec<_> = (0..SESSIONS).map(|_| tokio::spawn(play(url.clone()))).collect();
        let mut events = 0;
        for p in players {
            events += p.await.expect("a session played");
        }
        println!("{url}: {:.0} events/s", events as f64 / start.elapsed().as_secs_f64());
        return;
    }
    let mut rate_ratios = Vec::new();
    let mut cpu_ratios = Vec::new();
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("throughput.db");
        let mut got = [(0.0, 0.0); 2];
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let server = match side {
                0 => {
                    Spawned::reference(&["--conformance", "--durability", "full", "--db", db.to_str().expect("utf-8")])
                }
                // `CHATWIRE_BENCH_VS=BINARY`: another build of the reference in the bare server's
                // place, to hold two builds against each other in one run.
                _ => match std::env::var("CHATWIRE_BENCH_VS") {
                    Ok(other) => {
                        let mut cmd = std::process::Command::new(other);
                        cmd.args(["serve", "--addr", "127.0.0.1:0", "--conformance", "--durability", "full"]);
                        cmd.arg("--db").arg(dir.path().join("vs.db"));
                        Spawned::command(cmd)
                    }
                    Err(_) => {
                        let mut cmd = std::process::Command::new(std::env::current_exe().expect("this bench binary"));
                        cmd.arg("--bare-server");
                        Spawned::command(cmd)
                    }
                },
            };
            got[side] = throughput_run(&server).await;
            server.stop();
        }
        let ((ref_rate, ref_cpu), (bare_rate, bare_cpu)) = (got[0], got[1]);
        println!(
            "  round {round}: reference {ref_rate:.0} events/s, {:.1} us CPU/event; bare {bare_rate:.0} events/s, {:.1} us CPU/event",
            ref_cpu / 1000.0,
            bare_cpu / 1000.0
        );
        rate_ratios.push(ref_rate / bare_rate);
        cpu_ratios.push(ref_cpu / bare_cpu);
    }
    let rate = median_of(rate_ratios);
    let cpu = median_of(cpu_ratios);
    println!(
        "1. {SESSIONS} sessions x {TURNS} turns, file db, synchronous=FULL: events/s reference / bare = {rate:.2} \
         (goal >= 0.25); server CPU per event reference / bare = {cpu:.1} (goal <= 5); median of {ROUNDS} rounds"
    );
}

/// Refused frames in the refusal figure.
const REFUSALS: usize = 10_000;

/// One refusal run with `durability`: (seconds for the refusals, bytes the database grew by).
async fn refusal_run(durability: &str) -> (f64, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("refusals.db");
    let server =
        Spawned::reference(&["--conformance", "--durability", durability, "--db", db.to_str().expect("utf-8")]);
    let mut ws = connect(&server.url).await;
    send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.2"]})).await;
    recv_text(&mut ws).await;
    recv_text(&mut ws).await;
    let before = db_bytes(&db);
    let start = Instant::now();
    for i in 0..REFUSALS {
        send(&mut ws, json!({"type": "chat.rewind", "id": format!("r{i}"), "before_invocation_id": "inv-none"})).await;
        let text = recv_text(&mut ws).await;
        assert_eq!(frame_type(&text), "error", "{text}");
    }
    let elapsed = start.elapsed().as_secs_f64();
    drop(ws);
    server.stop();
    (elapsed, db_bytes(&db).saturating_sub(before))
}

async fn refusals() {
    let mut ratios = Vec::new();
    let mut growth = Vec::new();
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 { ["full", "normal"] } else { ["normal", "full"] };
        let mut got = std::collections::HashMap::new();
        for durability in order {
            got.insert(durability, refusal_run(durability).await);
        }
        let (full, normal) = (got["full"], got["normal"]);
        println!(
            "  round {round}: full {:.2} s (+{} KB), normal {:.2} s (+{} KB)",
            full.0,
            full.1 / 1024,
            normal.0,
            normal.1 / 1024
        );
        ratios.push(full.0 / normal.0);
        growth.push(full.1.max(normal.1) as f64);
    }
    let ratio = median_of(ratios);
    let grown = median_of(growth) / 1024.0;
    println!(
        "2. {REFUSALS} refused frames: time full / normal = {ratio:.2} (goal <= 1.5); database growth {grown:.0} KB \
         (goal < 100 KB); median of {ROUNDS} rounds"
    );
}

/// Sessions streaming at once in the memory figure.
const STREAMERS: usize = 20;
/// Deltas each `say` streams (at most `chatwire_schema::script::MAX_SAY_CHUNKS`); two of them,
/// with their ends, the message, the run's start and its end, are about 2,000 events.
const CHUNKS: usize = 998;

async fn stream_once(url: String) -> Ws {
    let chunks: Vec<String> = (0..CHUNKS).map(|n| format!("w{n:03} ")).collect();
    let say = json!({"op": "say", "markdown": chunks.concat(), "chunks": chunks});
    let mut ws = connect(&url).await;
    let script = json!({"turns": [{"steps": [say.clone(), say]}]});
    let hello = json!({"type": "session.hello", "id": "h", "versions": ["1.2"], "script": script});
    send(&mut ws, hello).await;
    let welcome = recv_text(&mut ws).await;
    assert_eq!(frame_type(&welcome), "session.welcome", "{welcome}");
    recv_text(&mut ws).await;
    send(&mut ws, json!({"type": "chat.user_message", "id": "m", "text": "go"})).await;
    let (events, _) = read_until(&mut ws, "chat.run_complete").await;
    assert_eq!(events + 1, 2 * CHUNKS + 5, "every delta arrived");
    recv_text(&mut ws).await;
    ws
}

async fn memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("memory.db");
    let mut per_session = Vec::new();
    for round in 0..ROUNDS {
        let _ = std::fs::remove_file(&db);
        let server =
            Spawned::reference(&["--conformance", "--durability", "normal", "--db", db.to_str().expect("utf-8")]);
        // Warm up the allocator and the runtime with a few streams first.
        let mut warm = Vec::new();
        for _ in 0..5 {
            warm.push(stream_once(server.url.clone()).await);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (before, _) = memory_bytes(server.pid());
        let streams: Vec<_> = (0..STREAMERS).map(|_| tokio::spawn(stream_once(server.url.clone()))).collect();
        let mut held = Vec::new();
        for s in streams {
            held.push(s.await.expect("a stream"));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (after, peak) = memory_bytes(server.pid());
        let per = after.saturating_sub(before) as f64 / STREAMERS as f64;
        println!(
            "  round {round}: {STREAMERS} sessions after ~2,000 streamed events each: {:.0} KB per session; peak RSS {} MB",
            per / 1024.0,
            peak / (1024 * 1024)
        );
        per_session.push(per);
        drop(held);
        drop(warm);
        server.stop();
    }
    let per = median_of(per_session) / 1024.0;
    println!(
        "3. memory per streaming session at ~2,000 events: {per:.0} KB (goal <= 256 KB); median of {ROUNDS} rounds"
    );
}

/// The bare server: tokio-tungstenite, the same frames the reference sends for [`busy_turn`]
/// (each event followed by its `ui_state_patch`, computed by the schema's reducer as any server
/// sending patches does), serialized from the schema's types; no frame validation, no database,
/// no script, no fan-out.
mod bare {
    use chatwire_reference::util::{random_id, rfc3339_now};
    use chatwire_schema::chat::assistant_message::AssistantMessage;
    use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
    use chatwire_schema::chat::run_started::RunStarted;
    use chatwire_schema::chat::tool_call::{DisplayMode, InteractionType, ToolCall};
    use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
    use chatwire_schema::chat::tool_progress::{Fraction, ToolProgress};
    use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
    use chatwire_schema::session::welcome::{Capability, Limits, SessionWelcome};
    use chatwire_schema::ui_state_patch::UiStatePatch;
    use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
    use chatwire_schema::{ClientFrame, Id, IndexedUiState, ProtocolVersion, ServerFrame, UiStateVersion, SUBPROTOCOL};
    use futures_util::{SinkExt, StreamExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
    use tokio_tungstenite::tungstenite::http::HeaderValue;
    use tokio_tungstenite::tungstenite::Message;

    pub fn main() {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            println!("ws://{}/ws", listener.local_addr().expect("address"));
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tokio::spawn(connection(tcp));
            }
        });
    }

    #[allow(clippy::result_large_err)] // the callback signature is tungstenite's
    fn subprotocol(request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
        let offered = request
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|p| p.trim() == SUBPROTOCOL));
        if offered {
            response.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static(SUBPROTOCOL));
        }
        Ok(response)
    }

    /// One connection's session: its state (for the patches) and next seq.
    struct Bare {
        state: IndexedUiState,
        seq: u64,
        out: Vec<String>,
    }

    impl Bare {
        /// Sends `frame` with the next seq.
        fn frame(&mut self, mut frame: ServerFrame) {
            self.seq += 1;
            frame.set_seq(self.seq);
            self.out.push(serde_json::to_string(&frame).expect("json"));
        }

        /// Sends the event and its patch.
        fn event(&mut self, frame: ServerFrame) {
            let patch = self.state.apply_with_patch(frame.ui_event().expect("an event")).expect("the reducer");
            self.frame(frame);
            let base_seq = self.seq - 1;
            self.frame(ServerFrame::UiStatePatch(UiStatePatch { seq: 0, base_seq, v: UiStateVersion::V1, patch }));
        }
    }

    async fn connection(tcp: TcpStream) {
        let _ = tcp.set_nodelay(true);
        let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, subprotocol).await else { return };
        let mut bare = Bare { state: IndexedUiState::default(), seq: 0, out: Vec::new() };
        while let Some(Ok(message)) = ws.next().await {
            let Message::Text(text) = message else { continue };
            let Ok(frame) = serde_json::from_str::<ClientFrame>(text.as_str()) else { continue };
            match frame {
                ClientFrame::Hello(hello) => {
                    bare.frame(ServerFrame::Welcome(SessionWelcome {
                        seq: 0,
                        in_reply_to: hello.id,
                        version: ProtocolVersion { major: 1, minor: 2 },
                        session_id: random_id("s", 16),
                        resume_token: random_id("rt", 32),
                        resumed: false,
                        capabilities: vec![Capability::UiStatePatch],
                        limits: Limits { max_frame_bytes: 1 << 20, max_attached_connections: None },
                        server: None,
                        features: Some(vec![Capability::UiStatePatch]),
                        resume_retention: None,
                    }));
                    let state = bare.state.state().clone();
                    bare.frame(ServerFrame::UiStateSnapshot(UiStateSnapshot {
                        seq: 0,
                        v: UiStateVersion::V1,
                        state,
                        window: None,
                    }));
                }
                ClientFrame::UserMessage(m) => turn(&mut bare, m.id, m.text),
                _ => {}
            }
            // What is ready goes out in one write, as a server that is not waiting for anything
            // sends it.
            for text in bare.out.drain(..) {
                if ws.feed(Message::text(text)).await.is_err() {
                    return;
                }
            }
            if ws.flush().await.is_err() {
                return;
            }
        }
    }

    /// The frames of one busy turn, as the reference sends them.
    fn turn(bare: &mut Bare, message: Id, text: String) {
        let ts = rfc3339_now();
        let (inv, tc) = (random_id("inv", 8), random_id("tc", 8));
        bare.event(ServerFrame::UserMessageAccepted(UserMessageAccepted {
            seq: 0,
            in_reply_to: message,
            invocation_id: inv.clone(),
            item_id: random_id("um", 8),
            text,
            ts: ts.clone(),
        }));
        bare.event(ServerFrame::RunStarted(RunStarted { seq: 0, invocation_id: inv.clone(), ts: ts.clone() }));
        let say = |markdown: &str| {
            ServerFrame::AssistantMessage(AssistantMessage {
                parent_call_id: None,
                seq: 0,
                invocation_id: inv.clone(),
                item_id: random_id("am", 8),
                markdown: markdown.into(),
                ts: ts.clone(),
            })
        };
        bare.event(say("on it"));
        bare.event(ServerFrame::ToolCall(ToolCall {
            parent_call_id: None,
            seq: 0,
            invocation_id: inv.clone(),
            tool_call_id: tc.clone(),
            corr: None,
            tool_name: "lookup".into(),
            component_type: None,
            workflow_name: None,
            interaction_type: InteractionType::AutoTool,
            awaiting_response: false,
            display: DisplayMode::Inline,
            payload: Default::default(),
            response_schema: None,
            call_index: 0,
            ts: ts.clone(),
        }));
        bare.event(ServerFrame::ToolProgress(ToolProgress {
            seq: 0,
            tool_call_id: tc.clone(),
            message: Some("half".into()),
            fraction: Fraction::new(0.5).ok(),
            ts: ts.clone(),
        }));
        bare.event(ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: tc,
            status: CompletionStatus::Completed,
            result: Some(serde_json::json!({"ok": true})),
            error: None,
            summary: None,
            in_reply_to: None,
            ts: ts.clone(),
        }));
        bare.event(say("done"));
        bare.event(ServerFrame::RunComplete(RunComplete {
            seq: 0,
            invocation_id: inv,
            status: RunCompleteStatus::Completed,
            reason: Some("completed".into()),
            error: None,
            usage: None,
            ts,
        }));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--bare-server") {
        bare::main();
        return;
    }
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let chosen: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wants = |name: &str| chosen.is_empty() || chosen.iter().any(|c| c == name);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        if wants("throughput") {
            throughput().await;
        }
        if wants("refusals") {
            refusals().await;
        }
        if wants("memory") {
            memory().await;
        }
    });
}
