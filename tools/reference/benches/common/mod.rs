//! What the reference's bench binaries share: a loopback client, a server in this process or in a
//! process of its own (with its CPU time and memory), and sessions seeded through the protocol
//! with a script of a given length, as a client would make them.
#![allow(dead_code)] // each bench binary uses its own part

use std::time::{Duration, Instant};

use chatwire_reference::{ServeConfig, Server};
use chatwire_schema::Id;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
pub const DEADLINE: Duration = Duration::from_secs(30);

pub async fn connect(url: &str) -> Ws {
    // Small read chunks, as the servers use: the default 128 KiB chunk is zeroed for every read,
    // which would make the client, not the servers, the cost measured.
    let config = WebSocketConfig::default().read_buffer_size(8 * 1024).write_buffer_size(8 * 1024);
    tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async_with_config(url, Some(config), true))
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

/// A frame's `type`: read off the front where the frame starts with it (every frame the reference
/// and the bare server send does), so that the client costs little next to the servers measured.
pub fn frame_type(text: &str) -> String {
    if let Some(rest) = text.strip_prefix("{\"type\":\"") {
        if let Some(end) = rest.find('"') {
            return rest[..end].to_owned();
        }
    }
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

/// The reference binary (bench targets of this package see it).
pub const BIN: &str = env!("CARGO_BIN_EXE_chatwire-reference");

/// The reference binary to spawn: [`BIN`], or the one `CHATWIRE_BENCH_REFERENCE` names (to hold
/// two builds against each other in one run).
pub fn reference_bin() -> String {
    std::env::var("CHATWIRE_BENCH_REFERENCE").unwrap_or_else(|_| BIN.to_owned())
}

/// A server in a process of its own (the reference binary, or a bench binary playing a server),
/// so that its CPU time and memory are its own; killed on drop.
pub struct Spawned {
    pub child: std::process::Child,
    pub url: String,
}

impl Spawned {
    /// `chatwire-reference serve --addr 127.0.0.1:0 ARGS…`.
    pub fn reference(args: &[&str]) -> Spawned {
        let mut cmd = std::process::Command::new(reference_bin());
        cmd.args(["serve", "--addr", "127.0.0.1:0"]).args(args);
        Spawned::command(cmd)
    }

    /// Runs `cmd`, which prints its `ws://` URL as the first line of stdout.
    pub fn command(mut cmd: std::process::Command) -> Spawned {
        use std::io::BufRead;
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("spawn a server");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(DEADLINE).expect("the server printed its url");
        let url = line.trim().to_owned();
        assert!(url.starts_with("ws://"), "{url:?}");
        Spawned { child, url }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM (an orderly stop: the server closes its connections), then reaped; killed if it
    /// has not stopped within the deadline.
    pub fn stop(mut self) {
        let _ = std::process::Command::new("kill").args(["-TERM", &self.pid().to_string()]).status();
        let deadline = Instant::now() + DEADLINE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU time of process `pid` in nanoseconds: the sum over its live threads of the time on a
/// CPU (`/proc/PID/task/*/schedstat`), precise to the nanosecond, for short intervals.
pub fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The resident set of process `pid` in bytes, and its peak (`VmRSS`, `VmHWM`).
pub fn memory_bytes(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap_or_default();
        line.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The median of `samples`.
pub fn median_of(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Bytes of a SQLite database with its WAL and shared-memory files.
pub fn db_bytes(db: &std::path::Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            std::fs::metadata(std::path::PathBuf::from(name)).ok()
        })
        .map(|m| m.len())
        .sum()
}

/// Reads frames until one of type `want`; returns the frames read before it (events only: state
/// frames are not counted) and the text of `want`.
pub async fn read_until(ws: &mut Ws, want: &str) -> (usize, String) {
    let mut events = 0;
    loop {
        let text = recv_text(ws).await;
        let kind = frame_type(&text);
        if kind == want {
            return (events, text);
        }
        if kind == "error" {
            panic!("refused: {text}");
        }
        if !kind.starts_with("ui_state_") {
            events += 1;
        }
    }
}

/// A `say` step of about 80 bytes, the n-th of a seeded thread.
pub fn say_step(n: usize) -> Value {
    serde_json::json!({"op": "say", "markdown": format!("Paragraph {n}: the quick brown fox jumps over the lazy dog.")})
}

/// Opens a session through the protocol whose script's first turn says `items - 1` things and
/// whose `extra` further turns say one thing each, and plays the first turn: the session's state
/// then holds `items` items and its stored script the whole thread (about 80 bytes a step).
/// Returns (session id, resume token).
pub async fn seed_by_script(url: &str, items: usize, extra: usize) -> (Id, Id) {
    let first: Vec<Value> = (1..items).map(say_step).collect();
    let mut turns = vec![serde_json::json!({"steps": first})];
    turns.extend((0..extra).map(|n| serde_json::json!({"steps": [say_step(n)]})));
    let mut ws = connect(url).await;
    let hello = serde_json::json!({"type": "session.hello", "id": "seed", "versions": ["1.2"],
        "script": {"turns": turns}});
    send(&mut ws, hello).await;
    let welcome: Value = serde_json::from_str(&recv_text(&mut ws).await).expect("welcome");
    assert_eq!(welcome["type"], "session.welcome", "{welcome}");
    recv_text(&mut ws).await;
    send(&mut ws, serde_json::json!({"type": "chat.user_message", "id": "seed-0", "text": "tell me a long story"}))
        .await;
    let (events, _) = read_until(&mut ws, "chat.run_complete").await;
    assert_eq!(events, items + 1, "user message, run start and the says");
    recv_text(&mut ws).await;
    let id = Id::parse(welcome["session_id"].as_str().expect("session id").to_owned()).expect("id");
    let token = Id::parse(welcome["resume_token"].as_str().expect("token").to_owned()).expect("token");
    (id, token)
}
