//! Long threads (`spec/window.md`, issue #22): what a window, a page, a catch-up and a turn cost
//! the reference at 100 and at 10,000 items, over loopback, as ratios from one run.
//!
//! `cargo bench -p chatwire-reference --bench window -- --bench`
//!
//! 1. Bytes of a window-100 open at 10,000 items, against the whole snapshot's.
//! 2. Time of a window-100 open (hello sent → snapshot held) at 10,000 items against 100, warm.
//! 3. The same as the first resume after a restart (a fresh server on the same database).
//! 4. Bytes of paging the whole 10,000-item thread 200 items at a time, against one snapshot's.
//! 5. Time per event of a turn at 10,000 items against 100, on a file database.
//! 6. A catch-up resume after 10 missed events at 10,000 items against 100, and against a snapshot.
//!
//! Each figure is printed with the goal; the bench reports, it does not fail.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use chatwire_reference::{DbLocation, Durability, ServeConfig, Store};
use chatwire_schema::Id;
use common::*;
use serde_json::{json, Value};

/// The sizes compared.
const SIZES: [usize; 2] = [100, 10_000];
/// Samples per warm figure.
const RUNS: usize = 20;
/// Fresh servers for the first-resume figure.
const ROUNDS: usize = 5;
/// The window every windowed open asks for.
const WINDOW: u32 = 100;

/// Every 1.2 feature but `multi_attach`: each resume takes the session over, so one connection is
/// live at a time and nothing else is measured.
fn features() -> Value {
    json!(["ui_state_patch", "resume_catch_up", "assistant_stream", "state_window"])
}

/// What one resume got: the connection, the time from hello to the frame after the welcome, that
/// frame's text.
struct Opened {
    ws: Ws,
    elapsed: Duration,
    frame: String,
}

async fn resume(url: &str, id: &Id, token: &Id, last_seq: u64, window: Option<u32>, before: Option<&str>) -> Opened {
    let mut ws = connect(url).await;
    let mut resume = json!({"session_id": id, "resume_token": token, "last_seq": last_seq});
    if let Some(before) = before {
        resume["before"] = json!(before);
    }
    let mut hello =
        json!({"type": "session.hello", "id": "h", "versions": ["1.2"], "features": features(), "resume": resume});
    if let Some(window) = window {
        hello["window"] = json!(window);
    }
    let start = Instant::now();
    send(&mut ws, hello).await;
    let welcome = recv_text(&mut ws).await;
    let frame = recv_text(&mut ws).await;
    let elapsed = start.elapsed();
    assert_eq!(frame_type(&welcome), "session.welcome", "{welcome}");
    Opened { ws, elapsed, frame }
}

fn field(text: &str, pointer: &str) -> Value {
    serde_json::from_str::<Value>(text).ok().and_then(|v| v.pointer(pointer).cloned()).unwrap_or(Value::Null)
}

fn median(samples: Vec<Duration>) -> Duration {
    median_and_p95(samples).0
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// Sends a user message and reads until the run's `run_complete` and its state frame: the turn's
/// time, its events, and the seqs of the state frames that followed each event.
async fn turn(ws: &mut Ws, n: usize) -> (Duration, usize, Vec<u64>) {
    let start = Instant::now();
    send(ws, json!({"type": "chat.user_message", "id": format!("bench-{n}"), "text": "echo this"})).await;
    let mut events = 0;
    let mut state_seqs = Vec::new();
    let mut ended = false;
    loop {
        let text = recv_text(ws).await;
        match frame_type(&text).as_str() {
            "ui_state_patch" | "ui_state_updated" => {
                state_seqs.push(field(&text, "/seq").as_u64().unwrap_or(0));
                if ended {
                    return (start.elapsed(), events, state_seqs);
                }
            }
            "chat.run_complete" => {
                events += 1;
                ended = true;
            }
            "error" => panic!("the turn was refused: {text}"),
            _ => events += 1,
        }
    }
}

async fn warm_figures(url: &str, sessions: &[(Id, Id)]) {
    let mut window_times = Vec::new();
    let mut snapshot_times = Vec::new();
    let mut bytes = Vec::new();
    for (id, token) in sessions {
        // The first open loads the session; the figures are of a loaded one.
        // Each open takes the session over from the one before, which stays open until then.
        let mut live = resume(url, id, token, 0, Some(WINDOW), None).await.ws;
        let (mut windowed, mut whole, mut sizes) = (Vec::new(), Vec::new(), (0, 0));
        for _ in 0..RUNS {
            let opened = resume(url, id, token, 0, Some(WINDOW), None).await;
            windowed.push(opened.elapsed);
            sizes.0 = opened.frame.len();
            drop(std::mem::replace(&mut live, opened.ws));
            let opened = resume(url, id, token, 0, None, None).await;
            whole.push(opened.elapsed);
            sizes.1 = opened.frame.len();
            drop(std::mem::replace(&mut live, opened.ws));
        }
        drop(live);
        window_times.push(median(windowed));
        snapshot_times.push(median(whole));
        bytes.push(sizes);
    }
    for (i, n) in SIZES.iter().enumerate() {
        println!(
            "{n:>6} items: window-{WINDOW} open {:?} ({} B), whole snapshot {:?} ({} B)",
            window_times[i], bytes[i].0, snapshot_times[i], bytes[i].1
        );
    }
    let (window_bytes, whole_bytes) = bytes[1];
    let share = window_bytes as f64 / whole_bytes as f64;
    println!(
        "1. window-{WINDOW} open at 10,000 items: {window_bytes} B, 1/{:.0} of the snapshot (goal <= 64 KB and <= 1/30): {}",
        1.0 / share,
        verdict(window_bytes <= 64 * 1024 && share <= 1.0 / 30.0)
    );
    let growth = window_times[1].as_secs_f64() / window_times[0].as_secs_f64();
    println!(
        "2. window-{WINDOW} open, warm, 10,000 / 100 items: {growth:.2}x (goal <= 1.5x): {}",
        verdict(growth <= 1.5)
    );
}

async fn paging_figure(url: &str, id: &Id, token: &Id) {
    let opened = resume(url, id, token, 0, None, None).await;
    let whole = opened.frame.len();
    let opened = resume(url, id, token, 0, Some(WINDOW), None).await;
    let mut ws = opened.ws;
    let mut total = opened.frame.len();
    let mut cursor = field(&opened.frame, "/window/before");
    let mut pages = 0;
    while let Some(before) = cursor.as_str().map(str::to_owned) {
        pages += 1;
        send(
            &mut ws,
            json!({"type": "chat.history_request", "id": format!("p{pages}"), "before": before, "limit": 200}),
        )
        .await;
        let page = recv_text(&mut ws).await;
        assert_eq!(frame_type(&page), "chat.history_page", "{page}");
        total += page.len();
        cursor = field(&page, "/before");
    }
    let ratio = total as f64 / whole as f64;
    println!(
        "4. paging 10,000 items 200 at a time: window + {pages} pages = {total} B, {ratio:.3}x one snapshot's {whole} B (goal <= 1.2x): {}",
        verdict(ratio <= 1.2)
    );
}

async fn turn_and_catch_up_figures(url: &str, sessions: &[(Id, Id)]) {
    let mut per_event = Vec::new();
    let mut catch_ups = Vec::new();
    let mut snapshots = Vec::new();
    for (id, token) in sessions {
        let mut ws = resume(url, id, token, 0, None, None).await.ws;
        let mut samples = Vec::new();
        for n in 0..RUNS {
            let (elapsed, events, _) = turn(&mut ws, n).await;
            samples.push(elapsed / events.max(1) as u32);
        }
        per_event.push(median(samples));
        let mut catch_up_samples = Vec::new();
        let mut snapshot_samples = Vec::new();
        for n in 0..RUNS / 2 {
            // Three echo turns are 12 events: the state frame after the second is 10 behind.
            let mut seqs = Vec::new();
            for k in 0..3 {
                seqs.extend(turn(&mut ws, 1000 + 3 * n + k).await.2);
            }
            let opened = resume(url, id, token, seqs[1], None, None).await;
            assert_eq!(frame_type(&opened.frame), "ui_state_patch", "a catch-up: {}", opened.frame);
            catch_up_samples.push(opened.elapsed);
            let opened2 = resume(url, id, token, 0, None, None).await;
            snapshot_samples.push(opened2.elapsed);
            drop(opened.ws);
            ws = opened2.ws;
        }
        catch_ups.push(median(catch_up_samples));
        snapshots.push(median(snapshot_samples));
    }
    let growth = per_event[1].as_secs_f64() / per_event[0].as_secs_f64();
    println!(
        "5. time per event of a turn, file database: 100 items {:?}, 10,000 items {:?}: {growth:.2}x (goal <= 2x): {}",
        per_event[0],
        per_event[1],
        verdict(growth <= 2.0)
    );
    let growth = catch_ups[1].as_secs_f64() / catch_ups[0].as_secs_f64();
    let against = catch_ups[1].as_secs_f64() / snapshots[1].as_secs_f64();
    println!(
        "6. catch-up after 10 missed events: 100 items {:?}, 10,000 items {:?}: {growth:.2}x (goal <= 2x): {}; {against:.2}x a snapshot's {:?} (goal < 1x): {}",
        catch_ups[0],
        catch_ups[1],
        verdict(growth <= 2.0),
        snapshots[1],
        verdict(against < 1.0)
    );
}

async fn first_resume_figure(db: &Path, sessions: &[(Id, Id)]) {
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); SIZES.len()];
    for _ in 0..ROUNDS {
        let server =
            BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.into()))).await;
        // One connection first, so the figure is the session's load, not the server's warm-up.
        let mut warm = connect(&server.url).await;
        send(&mut warm, json!({"type": "session.hello", "id": "h", "versions": ["1.2"]})).await;
        recv_text(&mut warm).await;
        recv_text(&mut warm).await;
        for (i, (id, token)) in sessions.iter().enumerate() {
            samples[i].push(resume(&server.url, id, token, 0, Some(WINDOW), None).await.elapsed);
        }
        drop(warm);
        server.stop().await;
    }
    let firsts: Vec<Duration> = samples.into_iter().map(median).collect();
    let growth = firsts[1].as_secs_f64() / firsts[0].as_secs_f64();
    println!(
        "3. window-{WINDOW} open as the first resume after a restart: 100 items {:?}, 10,000 items {:?}: {growth:.2}x (goal <= 1.5x): {}",
        firsts[0],
        firsts[1],
        verdict(growth <= 1.5)
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("window.db");
    let store = Store::open(&DbLocation::File(db.clone()), Durability::Normal).unwrap();
    let sessions: Vec<(Id, Id)> = SIZES.iter().map(|&n| seed_transcript(&store, n)).collect();
    drop(store);
    runtime.block_on(async {
        let server =
            BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))).await;
        warm_figures(&server.url, &sessions).await;
        paging_figure(&server.url, &sessions[1].0, &sessions[1].1).await;
        server.stop().await;
        first_resume_figure(&db, &sessions).await;
        let server =
            BenchServer::start(ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))).await;
        turn_and_catch_up_figures(&server.url, &sessions).await;
        server.stop().await;
    });
}
