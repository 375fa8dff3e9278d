//! Test client and server helpers: a real WebSocket client with deadlines whose traffic goes
//! through the conformance runner's session monitor in strict mode: any finding, at any level
//! (SHOULD included), fails the test at the frame that caused it.
#![allow(dead_code)] // each test binary uses a different part

pub mod process;
pub mod retry;
pub mod send_queue;
pub mod stream;
pub mod v11;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chatwire_monitor::Monitor;
use chatwire_reference::{DbLocation, Fault, ServeConfig, Server};
use chatwire_schema::{ErrorCode, ErrorFrame, FrameValidator, ServerFrame, UiState};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for any one frame.
pub const FRAME_DEADLINE: Duration = Duration::from_secs(10);

pub fn validator() -> &'static FrameValidator {
    static V: OnceLock<FrameValidator> = OnceLock::new();
    V.get_or_init(FrameValidator::new)
}

/// A server running in-process on 127.0.0.1:0.
pub struct TestServer {
    pub url: String,
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TestServer {
    pub async fn start(config: ServeConfig) -> TestServer {
        let server = Server::bind(config).await.expect("bind");
        let url = server.url();
        let addr = server.local_addr();
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            server
                .run(async {
                    let _ = rx.await;
                })
                .await
                .expect("run");
        });
        TestServer { url, addr, shutdown: Some(tx), task: Some(task) }
    }

    /// A conformance-mode server with an in-memory database.
    pub async fn memory() -> TestServer {
        Self::start(config(DbLocation::Memory)).await
    }

    /// A conformance-mode server on a database file.
    pub async fn file(path: &Path) -> TestServer {
        Self::start(config(DbLocation::File(path.to_path_buf()))).await
    }

    pub async fn with_fault(fault: Fault) -> TestServer {
        Self::start(ServeConfig { fault: Some(fault), ..config(DbLocation::Memory) }).await
    }

    /// Stops accepting, closes connections and waits for the server task.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), task).await.expect("server stops").expect("server task");
        }
    }
}

pub fn config(db: DbLocation) -> ServeConfig {
    ServeConfig::new("127.0.0.1:0".parse().unwrap(), db)
}

/// A protocol client that checks what it receives.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The state folded from the snapshot and every event since.
    pub fold: UiState,
    /// The last seq received.
    pub last_seq: u64,
    /// The seq of the last frame that carried a state (snapshot, update or patch).
    pub last_state_seq: u64,
    /// The fold at each state frame received, by its seq (the states a catch-up may start from);
    /// only the latest one unless `keep_states`.
    pub states: std::collections::BTreeMap<u64, UiState>,
    pub keep_states: bool,
    /// The close code the server closed with, once it has.
    pub close_code: Option<u16>,
    /// Every frame received, in order.
    pub received: Vec<ServerFrame>,
    pub session_id: Option<String>,
    pub token: Option<String>,
    pub subprotocol: Option<String>,
    /// Fail on any finding of the monitor (off only to observe a faulty server).
    pub strict: bool,
    /// The conformance monitor watching this connection (conn 0) in both directions.
    monitor: Monitor,
}

/// The monitor's connection number for a client's one connection.
const CONN: u64 = 0;

thread_local! {
    /// Requirements the running test deviates from on purpose (tokio tests run on one thread).
    static ALLOWED: std::cell::RefCell<Vec<&'static str>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Lets the monitor's findings under `requirement` pass while the guard lives, for a test that
/// configures the server against a SHOULD on purpose; `why` documents it at the call site.
pub fn allow_deviation(requirement: &'static str, why: &'static str) -> impl Drop {
    struct Guard(&'static str);
    impl Drop for Guard {
        fn drop(&mut self) {
            ALLOWED.with(|a| a.borrow_mut().retain(|r| *r != self.0));
        }
    }
    assert!(!why.is_empty(), "say why the test deviates from {requirement}");
    ALLOWED.with(|a| a.borrow_mut().push(requirement));
    Guard(requirement)
}

impl Client {
    pub async fn connect(url: &str) -> Client {
        let mut request = url.into_client_request().unwrap();
        request.headers_mut().insert("sec-websocket-protocol", "chatwire.v1".parse().unwrap());
        let (ws, response) = tokio::time::timeout(FRAME_DEADLINE, tokio_tungstenite::connect_async(request))
            .await
            .expect("connect deadline")
            .expect("connect");
        let subprotocol =
            response.headers().get("sec-websocket-protocol").and_then(|v| v.to_str().ok()).map(str::to_owned);
        Client {
            ws,
            fold: UiState::default(),
            last_seq: 0,
            last_state_seq: 0,
            states: std::collections::BTreeMap::new(),
            keep_states: true,
            close_code: None,
            received: Vec::new(),
            session_id: None,
            token: None,
            subprotocol,
            strict: true,
            monitor: {
                let mut m = Monitor::new(shared_validator());
                m.open(CONN);
                m
            },
        }
    }

    pub async fn send(&mut self, frame: Value) {
        self.send_raw(Message::text(frame.to_string())).await;
    }

    pub async fn send_raw(&mut self, message: Message) {
        match &message {
            Message::Text(t) => self.monitor.client_text(CONN, t.as_str()),
            Message::Close(_) => self.monitor.client_close(CONN),
            _ => {}
        }
        tokio::time::timeout(FRAME_DEADLINE, self.ws.send(message)).await.expect("send deadline").expect("send");
    }

    /// The next server frame (pings are answered by tungstenite), validated and checked.
    pub async fn recv(&mut self) -> ServerFrame {
        self.try_recv(FRAME_DEADLINE).await.expect("expected a frame")
    }

    /// The next server frame within `deadline`, or `None` on timeout or close.
    pub async fn try_recv(&mut self, deadline: Duration) -> Option<ServerFrame> {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let message = match tokio::time::timeout_at(until, self.ws.next()).await {
                Err(_) | Ok(None) | Ok(Some(Err(_))) => return None,
                Ok(Some(Ok(m))) => m,
            };
            let text = match message {
                Message::Text(t) => t,
                Message::Close(frame) => {
                    self.observe_close(frame.map(|f| u16::from(f.code)));
                    return None;
                }
                Message::Binary(b) => {
                    self.monitor.server_binary(CONN, b.len());
                    self.assert_clean();
                    continue;
                }
                _ => continue,
            };
            self.monitor.server_text(CONN, text.as_str());
            self.assert_clean();
            let frame = validator().parse_server(text.as_str()).unwrap_or_else(|e| panic!("invalid frame {text}: {e}"));
            self.check(&frame);
            self.received.push(frame.clone());
            return Some(frame);
        }
    }

    /// Bookkeeping for the tests (fold, seq, ids); judging is the monitor's.
    fn check(&mut self, frame: &ServerFrame) {
        if let Some(seq) = frame.seq() {
            self.last_seq = seq;
        }
        match frame {
            ServerFrame::UiStateSnapshot(s) => {
                self.fold = s.state.clone();
                self.state_frame(s.seq, s.state.clone());
            }
            ServerFrame::UiStateUpdated(u) => self.state_frame(u.seq, u.state.clone()),
            ServerFrame::UiStatePatch(p) => {
                // The base is the state of the frame `base_seq` names: the previous state frame,
                // or for a catch-up the state this client held at that seq.
                let Some(base) = self.states.get(&p.base_seq).cloned() else {
                    assert!(
                        !self.strict,
                        "ui_state_patch {} names base_seq {}, which carried no state",
                        p.seq, p.base_seq
                    );
                    return; // observing a faulty server: the patch has nothing to apply to
                };
                let patched = match apply_patch(&base, &p.patch) {
                    Ok(patched) => patched,
                    Err(e) if self.strict => panic!("ui_state_patch {}: {e}", p.seq),
                    Err(_) => return,
                };
                if self.strict && self.last_state_seq != 0 && p.base_seq == self.last_state_seq {
                    // STATE-038: the patched state is the fold of the events since the base.
                    assert_eq!(patched, self.fold, "ui_state_patch {} differs from the fold of the events", p.seq);
                }
                self.fold = patched;
                self.state_frame(p.seq, self.fold.clone());
            }
            ServerFrame::Welcome(w) => {
                self.session_id = Some(w.session_id.to_string());
                self.token = Some(w.resume_token.to_string());
            }
            other => {
                if let Some(event) = other.ui_event() {
                    let _ = self.fold.apply(event);
                }
                // A delta is its own state frame (STREAM-002): a later patch may name it as base.
                if let (true, Some(seq)) = (other.carries_state(), other.seq()) {
                    self.state_frame(seq, self.fold.clone());
                }
            }
        }
    }

    /// Records `state` as the state of the state frame `seq`.
    fn state_frame(&mut self, seq: u64, state: UiState) {
        self.last_state_seq = seq;
        if !self.keep_states {
            self.states.clear();
        }
        self.states.insert(seq, state);
    }

    /// The server closed the connection with `code`.
    fn observe_close(&mut self, code: Option<u16>) {
        self.close_code = code;
        self.monitor.server_close(CONN, code);
        self.assert_clean();
    }

    /// In strict mode, fails on anything the monitor found since the last call, except deviations
    /// the test declared with [`allow_deviation`].
    fn assert_clean(&mut self) {
        let mut findings = self.monitor.take_findings();
        ALLOWED.with(|allowed| findings.retain(|f| !allowed.borrow().contains(&f.requirement.as_str())));
        if self.strict && !findings.is_empty() {
            let lines: Vec<String> = findings
                .iter()
                .map(|f| format!("[{}] {} ({:?}): {}", f.requirement, f.check.id, f.check.level, f.message))
                .collect();
            panic!("the conformance monitor found:\n{}", lines.join("\n"));
        }
    }

    /// Receives until `stop` matches a frame; returns every frame including it.
    pub async fn recv_until(&mut self, stop: impl Fn(&ServerFrame) -> bool) -> Vec<ServerFrame> {
        let mut out = Vec::new();
        for _ in 0..10_000 {
            let f = self.recv().await;
            let done = stop(&f);
            out.push(f);
            if done {
                return out;
            }
        }
        panic!("no matching frame in 10000 frames");
    }

    /// Receives until a `ui_state_updated` following a `run_complete`.
    pub async fn until_run_complete(&mut self) -> Vec<ServerFrame> {
        let mut frames = self.recv_until(|f| matches!(f, ServerFrame::RunComplete(_))).await;
        frames.push(self.recv().await);
        assert!(matches!(frames.last(), Some(ServerFrame::UiStateUpdated(_))));
        frames
    }

    /// Opens a new session; returns the welcome seq.
    pub async fn hello(&mut self, script: Option<Value>) -> u64 {
        let mut hello = json!({"type": "session.hello", "id": "h1", "versions": ["1.0"]});
        if let Some(s) = script {
            hello["script"] = s;
        }
        self.send(hello).await;
        let ServerFrame::Welcome(w) = self.recv().await else { panic!("expected welcome") };
        assert!(!w.resumed);
        let ServerFrame::UiStateSnapshot(_) = self.recv().await else { panic!("expected snapshot") };
        w.seq
    }

    /// Resumes a session; returns the welcome or the error.
    pub async fn resume(&mut self, session_id: &str, token: &str, last_seq: u64) -> Result<u64, ErrorFrame> {
        self.send(json!({"type": "session.hello", "id": "h2", "versions": ["1.0"],
            "resume": {"session_id": session_id, "resume_token": token, "last_seq": last_seq}}))
            .await;
        match self.recv().await {
            ServerFrame::Welcome(w) => {
                assert!(w.resumed);
                assert_eq!(w.session_id.as_str(), session_id);
                let ServerFrame::UiStateSnapshot(_) = self.recv().await else { panic!("expected snapshot") };
                Ok(w.seq)
            }
            ServerFrame::Error(e) => Err(e),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// A fresh connection resuming `other`'s session (taking it over).
    pub async fn resume_of(url: &str, other: &Client) -> Client {
        let mut c = Client::connect(url).await;
        c.last_seq = 0;
        c.resume(other.session_id.as_deref().unwrap(), other.token.as_deref().unwrap(), other.last_seq)
            .await
            .expect("resume accepted");
        c
    }

    pub async fn user_message(&mut self, id: &str, text: &str) {
        self.send(json!({"type": "chat.user_message", "id": id, "text": text})).await;
    }

    pub async fn expect_error(&mut self, code: ErrorCode) -> ErrorFrame {
        match self.recv().await {
            ServerFrame::Error(e) => {
                assert_eq!(e.code, code, "{e:?}");
                assert_eq!(e.fatal, code.is_fatal());
                assert!(!e.message.is_empty());
                e
            }
            other => panic!("expected error {code}, got {other:?}"),
        }
    }

    /// Waits for the server to close the connection; returns the close code if any.
    pub async fn expect_closed(&mut self) -> Option<u16> {
        for _ in 0..100 {
            match tokio::time::timeout(FRAME_DEADLINE, self.ws.next()).await.expect("close deadline") {
                None | Some(Err(_)) => return None,
                Some(Ok(Message::Close(frame))) => {
                    let code = frame.map(|f| u16::from(f.code));
                    self.observe_close(code);
                    return code;
                }
                Some(Ok(Message::Text(t))) => panic!("expected close, got {t}"),
                Some(Ok(_)) => {}
            }
        }
        panic!("connection not closed");
    }

    /// The ids of the tool calls in the fold, in display order.
    pub fn tool_call_ids(&self) -> Vec<String> {
        self.fold
            .items
            .iter()
            .filter_map(|i| match i {
                chatwire_schema::DisplayItem::ToolCall(c) => Some(c.id.to_string()),
                _ => None,
            })
            .collect()
    }
}

/// `patch` (RFC 6902, applied with the json-patch crate) applied to `base`; panics if it fails.
pub fn apply_patch(base: &UiState, patch: &[chatwire_schema::state_patch::PatchOp]) -> Result<UiState, String> {
    let mut doc = serde_json::to_value(base).unwrap();
    let ops: json_patch::Patch = serde_json::from_value(serde_json::to_value(patch).unwrap()).unwrap();
    json_patch::patch(&mut doc, &ops).map_err(|e| format!("patch does not apply: {e}"))?;
    serde_json::from_value(doc).map_err(|e| format!("a patched state is not a UiState: {e}"))
}

/// Two turns: the first says "first", runs a batch of two self-settling tools with progress
/// (settled in reverse order) and says "second"; the second says "third".
pub fn tool_turns_script() -> Value {
    let tool = |name: &str| {
        json!({"tool_name": name, "interaction_type": "auto_tool", "display": "inline", "run_ms": 5,
            "progress": [{"message": "half", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"ok": name}}})
    };
    json!({"turns": [{"steps": [
        {"op": "say", "markdown": "first"},
        {"op": "tool_calls", "settle_order": [1, 0], "calls": [tool("a"), tool("b")]},
        {"op": "say", "markdown": "second"}
    ]}, {"steps": [{"op": "say", "markdown": "third"}]}]})
}

/// A script of `n` turns that each say "turn k".
pub fn say_script(n: usize) -> Value {
    let turns: Vec<Value> =
        (0..n).map(|k| json!({"steps": [{"op": "say", "markdown": format!("turn {k}")}]})).collect();
    json!({ "turns": turns })
}

pub fn shared_validator() -> Arc<FrameValidator> {
    Arc::new(FrameValidator::new())
}
