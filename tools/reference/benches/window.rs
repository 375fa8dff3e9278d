//! Long threads (`spec/window.md`, issue #22): what a window, a page, a catch-up and a turn cost
//! the reference at 100 and at 10,000 items, over loopback, as ratios from one run in which the
//! two sizes take turns (100, 10,000, 100, 10,000, …).
//!
//! `cargo bench -p chatwire-reference --bench window -- --bench`
//!
//! The sessions are made as a client makes them: a `session.hello` with a script whose first turn
//! says 99 or 9,999 things, and that turn played, so the database holds what a real thread holds
//! (the script itself among it: about 80 bytes a step).
//!
//! 1. Bytes of a window-100 open at 10,000 items, against the whole snapshot's.
//! 2. Time of a window-100 open (hello sent → snapshot held) at 10,000 items against 100, warm.
//! 3. The same as the first resume after a restart (a fresh server process on the same database):
//!    the server's CPU time for the open (hello → snapshot), and the wall time.
//! 4. Bytes of paging the whole 10,000-item thread 200 items at a time, against one snapshot's.
//! 5. Time per event of a turn at 10,000 items against 100, on a file database.
//! 6. A catch-up resume after 10 missed events at 10,000 items against 100, and against a snapshot.
//!
//! Each figure is printed with the goal; the bench reports, it does not fail.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use chatwire_reference::{DbLocation, Durability, ServeConfig};
use chatwire_schema::Id;
use common::*;
use serde_json::{json, Value};

/// The sizes compared.
const SIZES: [usize; 2] = [100, 10_000];
/// Samples per warm figure.
const RUNS: usize = 20;
/// Fresh server processes for the first-resume figure.
const ROUNDS: usize = 7;
/// The window every windowed open asks for.
const WINDOW: u32 = 100;
/// One-say turns after the long one: the turns of figures 5 and 6.
const EXTRA_TURNS: usize = 2 * RUNS + 3 * (RUNS / 2) + 10;

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

fn hello(id: &Id, token: &Id, last_seq: u64, window: Option<u32>) -> Value {
    let resume = json!({"session_id": id, "resume_token": token, "last_seq": last_seq});
    let mut hello =
        json!({"type": "session.hello", "id": "h", "versions": ["1.2"], "features": features(), "resume": resume});
    if let Some(window) = window {
        hello["window"] = json!(window);
    }
    hello
}

async fn resume(url: &str, id: &Id, token: &Id, last_seq: u64, window: Option<u32>) -> Opened {
    let mut ws = connect(url).await;
    let start = Instant::now();
    send(&mut ws, hello(id, token, last_seq, window)).await;
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
    send(ws, json!({"type": "chat.user_message", "id": format!("bench-{n}"), "text": "once more"})).await;
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

/// Figures 1 and 2: the sizes take turns within each run.
async fn warm_figures(url: &str, sessions: &[(Id, Id)]) {
    // The first open of each loads the session; the figures are of a loaded one. Each open takes
    // the session over from the one before, which stays open until then.
    let mut live = Vec::new();
    for (id, token) in sessions {
        live.push(resume(url, id, token, 0, Some(WINDOW)).await.ws);
    }
    let mut windowed = vec![Vec::new(); SIZES.len()];
    let mut whole = vec![Vec::new(); SIZES.len()];
    let mut bytes = vec![(0, 0); SIZES.len()];
    for _ in 0..RUNS {
        for (i, (id, token)) in sessions.iter().enumerate() {
            let opened = resume(url, id, token, 0, Some(WINDOW)).await;
            windowed[i].push(opened.elapsed);
            bytes[i].0 = opened.frame.len();
            drop(std::mem::replace(&mut live[i], opened.ws));
            let opened = resume(url, id, token, 0, None).await;
            whole[i].push(opened.elapsed);
            bytes[i].1 = opened.frame.len();
            drop(std::mem::replace(&mut live[i], opened.ws));
        }
    }
    drop(live);
    let window_times: Vec<Duration> = windowed.into_iter().map(median).collect();
    let snapshot_times: Vec<Duration> = whole.into_iter().map(median).collect();
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
    let opened = resume(url, id, token, 0, None).await;
    let whole = opened.frame.len();
    let opened = resume(url, id, token, 0, Some(WINDOW)).await;
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

/// Figures 5 and 6: the sizes take turns within each run.
async fn turn_and_catch_up_figures(url: &str, sessions: &[(Id, Id)]) {
    let mut conns = Vec::new();
    for (id, token) in sessions {
        conns.push(resume(url, id, token, 0, None).await.ws);
    }
    let mut per_event = vec![Vec::new(); SIZES.len()];
    for n in 0..RUNS {
        for (i, ws) in conns.iter_mut().enumerate() {
            let (elapsed, events, _) = turn(ws, n).await;
            per_event[i].push(elapsed / events.max(1) as u32);
        }
    }
    let mut catch_ups = vec![Vec::new(); SIZES.len()];
    let mut snapshots = vec![Vec::new(); SIZES.len()];
    for n in 0..RUNS / 2 {
        for (i, (id, token)) in sessions.iter().enumerate() {
            // Three one-say turns are 12 events: the state frame after the first event is 11
            // behind, the one after the second 10.
            let mut seqs = Vec::new();
            for k in 0..3 {
                seqs.extend(turn(&mut conns[i], 1000 + 3 * n + k).await.2);
            }
            let opened = resume(url, id, token, seqs[1], None).await;
            assert_eq!(frame_type(&opened.frame), "ui_state_patch", "a catch-up: {}", opened.frame);
            catch_ups[i].push(opened.elapsed);
            let opened2 = resume(url, id, token, 0, None).await;
            snapshots[i].push(opened2.elapsed);
            drop(opened.ws);
            conns[i] = opened2.ws;
        }
    }
    let per_event: Vec<Duration> = per_event.into_iter().map(median).collect();
    let catch_ups: Vec<Duration> = catch_ups.into_iter().map(median).collect();
    let snapshots: Vec<Duration> = snapshots.into_iter().map(median).collect();
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

/// One windowed open on a fresh server process: the server's CPU time from the hello to the
/// snapshot held, and the wall time.
async fn first_open(url: &str, pid: u32, id: &Id, token: &Id) -> (u64, Duration) {
    let mut ws = connect(url).await;
    // The upgrade is done: what follows is the open alone.
    tokio::time::sleep(Duration::from_millis(30)).await;
    let cpu = cpu_ns(pid);
    let start = Instant::now();
    send(&mut ws, hello(id, token, 0, Some(WINDOW))).await;
    let welcome = recv_text(&mut ws).await;
    let frame = recv_text(&mut ws).await;
    let elapsed = start.elapsed();
    assert_eq!(frame_type(&welcome), "session.welcome", "{welcome}");
    assert_eq!(frame_type(&frame), "ui_state_snapshot", "{frame}");
    // Let the server finish the writes of the open before its clock is read.
    tokio::time::sleep(Duration::from_millis(30)).await;
    (cpu_ns(pid).saturating_sub(cpu), elapsed)
}

/// Figure 3: per round, a fresh server process opens both sessions windowed, in alternating order.
async fn first_resume_figure(db: &Path, sessions: &[(Id, Id)]) {
    let mut cpu_ratios = Vec::new();
    let mut wall_ratios = Vec::new();
    let mut cpus = vec![Vec::new(); SIZES.len()];
    for round in 0..ROUNDS {
        let server = Spawned::reference(&["--conformance", "--db", db.to_str().expect("utf-8 path")]);
        // One connection first, so the figure is the session's load, not the server's warm-up.
        let mut warm = connect(&server.url).await;
        send(&mut warm, json!({"type": "session.hello", "id": "h", "versions": ["1.2"]})).await;
        recv_text(&mut warm).await;
        recv_text(&mut warm).await;
        let mut order: Vec<usize> = (0..SIZES.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut got = vec![(0, Duration::ZERO); SIZES.len()];
        for i in order {
            let (id, token) = &sessions[i];
            got[i] = first_open(&server.url, server.pid(), id, token).await;
            cpus[i].push(got[i].0 as f64);
        }
        cpu_ratios.push(got[1].0 as f64 / got[0].0.max(1) as f64);
        wall_ratios.push(got[1].1.as_secs_f64() / got[0].1.as_secs_f64());
        drop(warm);
        server.stop();
    }
    let cpu: Vec<f64> = cpus.into_iter().map(median_of).collect();
    let ratio = median_of(cpu_ratios);
    println!(
        "3. window-{WINDOW} open as the first resume after a restart, server CPU: 100 items {:.0} us, 10,000 items {:.0} us: \
         {ratio:.2}x (median of {ROUNDS} rounds; goal <= 1.5x): {}; wall time {:.2}x",
        cpu[0] / 1000.0,
        cpu[1] / 1000.0,
        verdict(ratio <= 1.5),
        median_of(wall_ratios)
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("window.db");
    let config = |durability| ServeConfig {
        durability,
        ..ServeConfig::new("127.0.0.1:0".parse().unwrap(), DbLocation::File(db.clone()))
    };
    runtime.block_on(async {
        let seeding = BenchServer::start(config(Durability::Normal)).await;
        let mut sessions = Vec::new();
        for n in SIZES {
            sessions.push(seed_by_script(&seeding.url, n, EXTRA_TURNS).await);
        }
        seeding.stop().await;
        first_resume_figure(&db, &sessions).await;
        let server = BenchServer::start(config(Durability::Full)).await;
        warm_figures(&server.url, &sessions).await;
        paging_figure(&server.url, &sessions[1].0, &sessions[1].1).await;
        turn_and_catch_up_figures(&server.url, &sessions).await;
        server.stop().await;
    });
}
