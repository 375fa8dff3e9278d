//! Benchmarks of the reference backend over loopback (a bench binary: `cargo bench -p chatwire-reference`).
//!
//! 1. One scripted turn's round trip (user message → final `ui_state_updated`).
//! 2. Time to build and send the resume snapshot for 100 and 10,000 display items, and the ratio;
//!    and the first resume after a restart (load from the database and fold), with its ratio.
//! 3. Resident memory per idle session, measured on the real binary through /proc/PID/statm.
//! 4. 50 concurrent sessions playing scripted turns on a file database with `synchronous = FULL`:
//!    their events per second, and the p95 round trip of one more session's turns meanwhile.
//! 5. Several tabs on one session (`multi_attach`, `spec/attach.md`): time per event of a turn
//!    until every attached connection has it, with 8 connections attached against 1, and the ratio.
//!
//! The timing of resume refusals (RESUME-005) is a release-profile test, not a part of this bench:
//! `tests/refusal_timing.rs`.
//!
//! `cargo bench -p chatwire-reference --bench reference -- --bench [NAME...]` runs the named
//! parts (turn, resume, memory, concurrent, attach), all by default.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chatwire_reference::{DbLocation, Durability, ServeConfig};
use chatwire_schema::Id;
use serde_json::{json, Value};

async fn bench_turn_round_trip() {
    const WARMUP: usize = 20;
    const RUNS: usize = 200;
    let server = BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::Memory)).await;
    let url = server.url.clone();
    let turn = json!({"steps": [
        {"op": "say", "markdown": "working on it"},
        {"op": "tool_calls", "calls": [{"tool_name": "lookup", "interaction_type": "auto_tool", "display": "inline",
            "progress": [{"message": "half", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"ok": true}}}]},
        {"op": "say", "markdown": "done"}
    ]});
    let script = json!({"turns": vec![turn; WARMUP + RUNS]});
    let mut ws = connect(&url).await;
    send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": script})).await;
    recv_text(&mut ws).await;
    recv_text(&mut ws).await;
    let mut samples = Vec::new();
    for i in 0..WARMUP + RUNS {
        let start = Instant::now();
        send(&mut ws, json!({"type": "chat.user_message", "id": format!("m{i}"), "text": "go"})).await;
        // Bounded: a turn is a fixed number of frames.
        for _ in 0..100 {
            if frame_type(&recv_text(&mut ws).await) == "chat.run_complete" {
                break;
            }
        }
        recv_text(&mut ws).await; // its ui_state_updated
        if i >= WARMUP {
            samples.push(start.elapsed());
        }
    }
    let (median, p95) = median_and_p95(samples);
    println!("turn round trip (say + auto tool with progress + say, 11 events, in-memory db): median {median:?}, p95 {p95:?}");
    server.stop().await;
}

/// Resumes once; returns the connection (left open so the session stays loaded), the time from
/// sending the hello to holding the whole snapshot, and the snapshot's size.
async fn resume_once(url: &str, id: &Id, token: &Id, last_seq: &mut u64) -> (Ws, Duration, usize) {
    let mut ws = connect(url).await;
    let start = Instant::now();
    send(
        &mut ws,
        json!({"type": "session.hello", "id": "h", "versions": ["1.0"],
        "resume": {"session_id": id, "resume_token": token, "last_seq": *last_seq}}),
    )
    .await;
    let welcome = recv_text(&mut ws).await;
    let snapshot = recv_text(&mut ws).await;
    let elapsed = start.elapsed();
    assert_eq!(frame_type(&welcome), "session.welcome");
    assert_eq!(frame_type(&snapshot), "ui_state_snapshot");
    *last_seq = serde_json::from_str::<Value>(&snapshot).unwrap()["seq"].as_u64().unwrap();
    (ws, elapsed, snapshot.len())
}

async fn bench_resume_snapshot(dir: &Path) {
    const RUNS: usize = 30;
    let db = dir.join("snap.db");
    let sizes = [100usize, 10_000];
    let seeding = ServeConfig {
        durability: Durability::Normal,
        ..ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))
    };
    let server = BenchServer::start(seeding).await;
    let mut sessions: Vec<(Id, Id)> = Vec::new();
    for &n in &sizes {
        sessions.push(seed_by_script(&server.url, n, 0).await);
    }
    server.stop().await;
    let server =
        BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))).await;
    let url = server.url.clone();
    let mut medians = Vec::new();
    for (n, (id, token)) in sizes.iter().zip(&sessions) {
        let mut last_seq = 0;
        // The first resume loads the session from the database (fold of the log).
        let (mut attached, cold, bytes) = resume_once(&url, id, token, &mut last_seq).await;
        let mut samples = Vec::new();
        for _ in 0..RUNS {
            // Each resume takes over the previous connection, so the session stays in memory.
            let (next, elapsed, _) = resume_once(&url, id, token, &mut last_seq).await;
            samples.push(elapsed);
            drop(std::mem::replace(&mut attached, next));
        }
        drop(attached);
        let (median, p95) = median_and_p95(samples);
        println!(
            "resume snapshot, {n:>6} items ({bytes} bytes): median {median:?}, p95 {p95:?}; first resume (load from db + fold) {cold:?}"
        );
        medians.push(median);
    }
    let ratio = medians[1].as_secs_f64() / medians[0].as_secs_f64();
    println!("resume snapshot growth 100 -> 10,000 items: {ratio:.1}x (goal <= 120x)");
    server.stop().await;
    // The first resume after a restart, measured properly: a fresh server on the same database
    // each round (after one warm-up connection), both sizes, median of the rounds.
    const ROUNDS: usize = 7;
    let mut cold_samples: Vec<Vec<Duration>> = vec![Vec::new(); sizes.len()];
    for _ in 0..ROUNDS {
        let server =
            BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))).await;
        let url = server.url.clone();
        let mut warm = connect(&url).await;
        send(&mut warm, json!({"type": "session.hello", "id": "h", "versions": ["1.0"]})).await;
        recv_text(&mut warm).await;
        recv_text(&mut warm).await;
        for (i, (id, token)) in sessions.iter().enumerate() {
            let mut last_seq = 0;
            let (ws, cold, _) = resume_once(&url, id, token, &mut last_seq).await;
            cold_samples[i].push(cold);
            drop(ws);
        }
        drop(warm);
        server.stop().await;
    }
    let colds: Vec<Duration> = cold_samples.into_iter().map(|s| median_and_p95(s).0).collect();
    let cold_ratio = colds[1].as_secs_f64() / colds[0].as_secs_f64();
    println!(
        "first resume after a restart (fresh server, median of {ROUNDS}): 100 items {:?}, 10,000 items {:?}: growth {cold_ratio:.1}x (goal <= 120x)",
        colds[0], colds[1]
    );
    if cold_ratio > 120.0 {
        eprintln!("FAIL: the first resume after a restart grows more than 120x");
        std::process::exit(1);
    }
}

fn rss_bytes(pid: u32) -> u64 {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).expect("statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

async fn bench_idle_session_memory(dir: &Path) {
    const SESSIONS: usize = 500;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatwire-reference"))
        .args(["serve", "--addr", "127.0.0.1:0", "--conformance", "--db"])
        .arg(dir.join("mem.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_owned();
    let pid = child.id();
    // Warm up allocator and runtime with a few sessions first.
    let mut clients = Vec::new();
    for _ in 0..20 {
        let mut ws = connect(&url).await;
        send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.0"]})).await;
        recv_text(&mut ws).await;
        recv_text(&mut ws).await;
        clients.push(ws);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_bytes(pid);
    let mut opened = Vec::new();
    for _ in 0..SESSIONS {
        let mut ws = connect(&url).await;
        send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": {"turns": []}})).await;
        let welcome: Value = serde_json::from_str(&recv_text(&mut ws).await).unwrap_or(Value::Null);
        recv_text(&mut ws).await;
        opened.push((welcome["session_id"].clone(), welcome["resume_token"].clone()));
        clients.push(ws);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_bytes(pid);
    let per = after.saturating_sub(before) / SESSIONS as u64;
    println!(
        "memory per idle session (connected, server RSS delta over {SESSIONS} sessions): {per} bytes (~{:.1} KiB)",
        per as f64 / 1024.0
    );
    // A second tab attached to each of those sessions (multi_attach, spec/attach.md): what one
    // more connection on a session costs, next to what a session with its connection costs.
    for (session, token) in opened {
        let mut ws = connect(&url).await;
        let resume = json!({"session_id": session, "resume_token": token, "last_seq": 0});
        send(&mut ws, json!({"type": "session.hello", "id": "h2", "versions": ["1.2"], "resume": resume})).await;
        recv_text(&mut ws).await;
        recv_text(&mut ws).await;
        clients.push(ws);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let attached = rss_bytes(pid).saturating_sub(after) / SESSIONS as u64;
    println!(
        "memory per attached connection (a second tab on each of the {SESSIONS} sessions): {attached} bytes \
         (~{:.1} KiB); attached tab / idle session = {:.2}",
        attached as f64 / 1024.0,
        attached as f64 / per.max(1) as f64
    );
    drop(clients);
    let _ = child.kill();
    let _ = child.wait();
}

/// A turn of `steps` scripted steps: says and one self-settling tool call with progress.
fn busy_turn() -> Value {
    json!({"steps": [
        {"op": "say", "markdown": "on it"},
        {"op": "tool_calls", "calls": [{"tool_name": "lookup", "interaction_type": "auto_tool", "display": "inline",
            "progress": [{"message": "half", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"ok": true}}}]},
        {"op": "say", "markdown": "done"}
    ]})
}

/// Plays `turns` turns on a fresh session; returns the number of event frames received (every
/// frame but `ui_state_updated`) and the duration of each turn.
async fn play_turns(url: &str, turns: usize) -> (usize, Vec<Duration>) {
    let mut ws = connect(url).await;
    let script = json!({"turns": vec![busy_turn(); turns]});
    send(&mut ws, json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": script})).await;
    recv_text(&mut ws).await;
    recv_text(&mut ws).await;
    let mut events = 0;
    let mut durations = Vec::with_capacity(turns);
    for i in 0..turns {
        let start = Instant::now();
        send(&mut ws, json!({"type": "chat.user_message", "id": format!("m{i}"), "text": "go"})).await;
        // Bounded: a turn is a fixed number of frames.
        for _ in 0..100 {
            let kind = frame_type(&recv_text(&mut ws).await);
            if kind != "ui_state_updated" {
                events += 1;
            }
            if kind == "chat.run_complete" {
                break;
            }
        }
        recv_text(&mut ws).await; // its ui_state_updated
        durations.push(start.elapsed());
    }
    (events, durations)
}

async fn bench_concurrent_sessions(dir: &Path) {
    let full = concurrent_sessions(dir, Durability::Full).await;
    let normal = concurrent_sessions(dir, Durability::Normal).await;
    println!("events/s with FULL / with NORMAL, same run: {:.2}", full / normal);
}

/// Returns the events per second of the 50 sessions.
async fn concurrent_sessions(dir: &Path, durability: Durability) -> f64 {
    const SESSIONS: usize = 50;
    const TURNS: usize = 20;
    let db = DbLocation::File(dir.join(format!("busy-{durability:?}.db")));
    let config = ServeConfig { durability, ..ServeConfig::new("127.0.0.1:0".parse().unwrap(), db) };
    let server = BenchServer::start(config).await;
    let url = server.url.clone();
    let start = Instant::now();
    let players: Vec<_> = (0..SESSIONS)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { play_turns(&url, TURNS).await })
        })
        .collect();
    // One more session measures its turns' round trips while the others run.
    let probe = tokio::spawn({
        let url = url.clone();
        async move { play_turns(&url, TURNS).await }
    });
    let mut events = 0;
    for p in players {
        events += p.await.unwrap().0;
    }
    let elapsed = start.elapsed();
    let (_, probe_turns) = probe.await.unwrap();
    let (median, p95) = median_and_p95(probe_turns);
    println!(
        "{SESSIONS} concurrent sessions x {TURNS} turns (8 events each), file db, {durability:?}: \
         {events} events in {elapsed:?} = {:.0} events/s; one more session's turn round trip meanwhile: \
         median {median:?}, p95 {p95:?}",
        events as f64 / elapsed.as_secs_f64()
    );
    server.stop().await;
    events as f64 / elapsed.as_secs_f64()
}

/// Reads `ws` until the `chat.run_complete` of a turn and the state frame after it; returns the
/// frames read.
async fn read_turn(ws: &mut Ws) -> usize {
    let mut frames = 0;
    // Bounded: a turn is a fixed number of frames.
    for _ in 0..100 {
        frames += 1;
        if frame_type(&recv_text(ws).await) == "chat.run_complete" {
            break;
        }
    }
    recv_text(ws).await; // its state frame
    frames + 1
}

/// The median time per event of one turn, from the user message until every one of `tabs`
/// connections attached to the session has the turn's last state frame.
async fn attached_turns(tabs: usize) -> Duration {
    const WARMUP: usize = 10;
    const RUNS: usize = 100;
    const EVENTS_PER_TURN: u32 = 8;
    let server = BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::Memory)).await;
    let url = server.url.clone();
    let script = json!({"turns": vec![busy_turn(); WARMUP + RUNS]});
    let mut first = connect(&url).await;
    send(&mut first, json!({"type": "session.hello", "id": "h", "versions": ["1.2"], "script": script})).await;
    let welcome: Value = serde_json::from_str(&recv_text(&mut first).await).unwrap();
    recv_text(&mut first).await;
    let (session, token) = (welcome["session_id"].clone(), welcome["resume_token"].clone());
    let mut others = Vec::new();
    for k in 1..tabs {
        let mut ws = connect(&url).await;
        let resume = json!({"session_id": session, "resume_token": token, "last_seq": 0});
        send(&mut ws, json!({"type": "session.hello", "id": format!("h{k}"), "versions": ["1.2"], "resume": resume}))
            .await;
        recv_text(&mut ws).await;
        recv_text(&mut ws).await;
        others.push(ws);
    }
    let mut samples = Vec::new();
    for i in 0..WARMUP + RUNS {
        let start = Instant::now();
        send(&mut first, json!({"type": "chat.user_message", "id": format!("m{i}"), "text": "go"})).await;
        let readers: Vec<_> = others
            .drain(..)
            .map(|mut ws| {
                tokio::spawn(async move {
                    read_turn(&mut ws).await;
                    ws
                })
            })
            .collect();
        read_turn(&mut first).await;
        for r in readers {
            others.push(r.await.unwrap());
        }
        if i >= WARMUP {
            samples.push(start.elapsed() / EVENTS_PER_TURN);
        }
    }
    server.stop().await;
    median_and_p95(samples).0
}

async fn bench_attached() {
    let one = attached_turns(1).await;
    let eight = attached_turns(8).await;
    println!(
        "time per event until every tab has it (8 events per turn, in-memory db): 1 connection {one:?}, \
         8 attached connections {eight:?}; 8 / 1 = {:.2}",
        eight.as_secs_f64() / one.as_secs_f64()
    );
}

fn main() {
    // `cargo test` runs benches with --bench only under `cargo bench`; skip the heavy work otherwise.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let chosen: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wants = |name: &str| chosen.is_empty() || chosen.iter().any(|c| c == name);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    runtime.block_on(async {
        if wants("turn") {
            bench_turn_round_trip().await;
        }
        if wants("resume") {
            bench_resume_snapshot(dir.path()).await;
        }
        if wants("memory") {
            bench_idle_session_memory(dir.path()).await;
        }
        if wants("concurrent") {
            bench_concurrent_sessions(dir.path()).await;
        }
        if wants("attach") {
            bench_attached().await;
        }
    });
}
