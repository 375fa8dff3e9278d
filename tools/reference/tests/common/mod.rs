//! Test client and server helpers: a real WebSocket client with deadlines that validates every
//! frame it receives and checks each `ui_state_updated` against its own fold of the events.
#![allow(dead_code)] // each test binary uses a different part

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

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
    /// Every frame received, in order.
    pub received: Vec<ServerFrame>,
    pub session_id: Option<String>,
    pub token: Option<String>,
    pub subprotocol: Option<String>,
    /// Assert seq growth and fold equality on every frame (off only to observe a faulty server).
    pub strict: bool,
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
            received: Vec::new(),
            session_id: None,
            token: None,
            subprotocol,
            strict: true,
        }
    }

    pub async fn send(&mut self, frame: Value) {
        self.send_raw(Message::text(frame.to_string())).await;
    }

    pub async fn send_raw(&mut self, message: Message) {
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
                Message::Close(_) => return None,
                _ => continue,
            };
            let frame = validator().parse_server(text.as_str()).unwrap_or_else(|e| panic!("invalid frame {text}: {e}"));
            self.check(&frame);
            self.received.push(frame.clone());
            return Some(frame);
        }
    }

    fn check(&mut self, frame: &ServerFrame) {
        if !self.strict {
            return self.check_lenient(frame);
        }
        if let Some(seq) = frame.seq() {
            assert!(seq > self.last_seq, "seq {seq} after {} in {frame:?}", self.last_seq);
            self.last_seq = seq;
        }
        match frame {
            ServerFrame::UiStateSnapshot(s) => self.fold = s.state.clone(),
            ServerFrame::UiStateUpdated(u) => assert_eq!(u.state, self.fold, "ui_state_updated differs from the fold"),
            ServerFrame::Welcome(w) => {
                self.session_id = Some(w.session_id.to_string());
                self.token = Some(w.resume_token.to_string());
            }
            other => {
                if let Some(event) = other.ui_event() {
                    self.fold.apply(event).unwrap_or_else(|e| panic!("reducer refused {other:?}: {e}"));
                }
            }
        }
    }

    /// Records what a faulty server sends without judging it: the fold follows what applies.
    fn check_lenient(&mut self, frame: &ServerFrame) {
        if let Some(seq) = frame.seq() {
            self.last_seq = seq;
        }
        match frame {
            ServerFrame::UiStateSnapshot(s) => self.fold = s.state.clone(),
            ServerFrame::Welcome(w) => {
                self.session_id = Some(w.session_id.to_string());
                self.token = Some(w.resume_token.to_string());
            }
            other => {
                if let Some(event) = other.ui_event() {
                    let _ = self.fold.apply(event);
                }
            }
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
                Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
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

/// A script of `n` turns that each say "turn k".
pub fn say_script(n: usize) -> Value {
    let turns: Vec<Value> =
        (0..n).map(|k| json!({"steps": [{"op": "say", "markdown": format!("turn {k}")}]})).collect();
    json!({ "turns": turns })
}

pub fn shared_validator() -> Arc<FrameValidator> {
    Arc::new(FrameValidator::new())
}
