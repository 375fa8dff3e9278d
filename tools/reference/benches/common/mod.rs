//! What the reference's bench binaries share: a loopback client, an in-process server, and a
//! session seeded straight into the database with a transcript of a given length.
#![allow(dead_code)] // each bench binary uses its own part

use std::time::Duration;

use chatwire_reference::agent::{AgentSpec, Cursor};
use chatwire_reference::store::{Commit, LogKind, LogRow, NewSession};
use chatwire_reference::util::{hash_token, random_id, rfc3339_now};
use chatwire_reference::{ServeConfig, Server, Store};
use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
use chatwire_schema::chat::run_started::RunStarted;
use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
use chatwire_schema::{Id, ServerFrame, UiState};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
pub const DEADLINE: Duration = Duration::from_secs(30);

pub async fn connect(url: &str) -> Ws {
    tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async_with_config(url, None, true))
        .await
        .expect("deadline")
        .expect("connect")
        .0
}

pub async fn send(ws: &mut Ws, v: Value) {
    tokio::time::timeout(DEADLINE, ws.send(Message::text(v.to_string()))).await.expect("deadline").expect("send");
}

/// The next text frame's raw text.
pub async fn recv_text(ws: &mut Ws) -> String {
    loop {
        match tokio::time::timeout(DEADLINE, ws.next()).await.expect("deadline") {
            Some(Ok(Message::Text(t))) => return t.as_str().to_owned(),
            Some(Ok(_)) => {}
            other => panic!("connection ended: {other:?}"),
        }
    }
}

pub fn frame_type(text: &str) -> String {
    serde_json::from_str::<Value>(text).ok().and_then(|v| v["type"].as_str().map(str::to_owned)).unwrap_or_default()
}

pub fn median_and_p95(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[samples.len() * 95 / 100])
}

/// A server running in this process until [`BenchServer::stop`].
pub struct BenchServer {
    pub url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), chatwire_reference::ServeError>>,
}

impl BenchServer {
    pub async fn start(config: ServeConfig) -> BenchServer {
        let server = Server::bind(config).await.unwrap();
        let url = server.url();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        BenchServer { url, stop, task }
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

pub fn seed_transcript(store: &Store, items: usize) -> (Id, Id) {
    let id = random_id("s", 16);
    let token = random_id("rt", 32);
    let agent = serde_json::to_string(&AgentSpec::Server).unwrap();
    let cursor = serde_json::to_string(&Cursor { turns_accepted: 1, ..Cursor::default() }).unwrap();
    store
        .create_session(&NewSession {
            id: id.as_str(),
            token_hash: &hash_token(token.as_str()),
            agent: &agent,
            cursor: &cursor,
            next_seq: 3,
            snapshot_seq: 2,
        })
        .unwrap();
    let ts = rfc3339_now();
    let inv = Id::new_unchecked_valid("inv-1");
    let mut frames = vec![
        ServerFrame::UserMessageAccepted(UserMessageAccepted {
            seq: 0,
            in_reply_to: Id::new_unchecked_valid("m1"),
            invocation_id: inv.clone(),
            item_id: Id::new_unchecked_valid("um-1"),
            text: "tell me a long story".into(),
            ts: ts.clone(),
        }),
        ServerFrame::RunStarted(RunStarted { seq: 0, invocation_id: inv.clone(), ts: ts.clone() }),
    ];
    for n in 1..items {
        frames.push(ServerFrame::AssistantMessage(AssistantMessage {
            seq: 0,
            invocation_id: inv.clone(),
            item_id: Id::new_unchecked_valid(format!("am-{n}")),
            markdown: format!("Paragraph {n}: the quick brown fox jumps over the lazy dog."),
            ts: ts.clone(),
        }));
    }
    frames.push(ServerFrame::RunComplete(RunComplete {
        seq: 0,
        invocation_id: inv,
        status: RunCompleteStatus::Completed,
        reason: None,
        error: None,
        ts,
    }));
    let mut log = Vec::new();
    let mut state = UiState::default();
    let mut seq = 3;
    for mut f in frames {
        match &mut f {
            ServerFrame::UserMessageAccepted(x) => x.seq = seq,
            ServerFrame::RunStarted(x) => x.seq = seq,
            ServerFrame::AssistantMessage(x) => x.seq = seq,
            ServerFrame::RunComplete(x) => x.seq = seq,
            _ => unreachable!(),
        }
        state.apply(f.ui_event().unwrap()).unwrap();
        log.push(LogRow {
            seq: Some(seq),
            kind: LogKind::Event,
            frame_type: f.type_name().into(),
            frame: serde_json::to_string(&f).unwrap(),
        });
        seq += 2;
    }
    assert_eq!(state.items.len(), items);
    store.commit(id.as_str(), &Commit { next_seq: seq, log, ..Commit::default() }).unwrap();
    (id, token)
}
