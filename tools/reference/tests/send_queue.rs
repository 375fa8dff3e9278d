//! The bounded send queue on the real binary (TRANSPORT-016, TRANSPORT-017): clients that stop
//! reading while their sessions produce large states cost the server a bounded amount of memory,
//! each is closed with 4008, and each resumes its session intact.

mod common;

use std::time::{Duration, Instant};

use chatwire_schema::{DisplayItem, RunStatus, ServerFrame};
use common::process::{resident_bytes, Proc};
use common::send_queue::{drain, large_state_script, small_bound, stalled_client};
use common::{Client, TestServer};

/// Clients that stop reading.
const CLIENTS: usize = 5;
/// How long they do not read (the figure).
const PAUSE: Duration = Duration::from_secs(30);
/// What the server's resident set may grow by over its idle size meanwhile.
const RSS_BUDGET: u64 = 64 * 1024 * 1024;
/// Steps of the turn each session plays, each saying this many characters: the state grows to
/// ~1 MB, and on a 1.0 connection every step is followed by the whole state, ~150 MB in all.
const SAYS: usize = 300;
const SAY_CHARS: usize = 3000;

fn said(items: &[DisplayItem]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::AssistantMarkdown(m) => Some(m.markdown[..4].to_owned()),
            _ => None,
        })
        .collect()
}

/// The contract in-process, fast: a client that stops reading gets close 4008 after what was in
/// flight, and its session goes on and resumes intact (TRANSPORT-016, TRANSPORT-017).
#[tokio::test]
async fn a_client_that_stops_reading_is_closed_with_4008_and_resumes_intact() {
    let server = TestServer::start(small_bound()).await;
    let mut c = stalled_client(&server).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let frames = drain(&mut c, Duration::from_secs(10)).await;
    assert_eq!(c.close_code, Some(4008), "after {frames} frames");
    assert!(frames < common::send_queue::EVERY_FRAME, "the client was cut off ({frames} frames)");
    let held = said(&c.fold.items);
    let mut r = Client::connect(&server.url).await;
    r.keep_states = false;
    r.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), c.last_seq).await.expect("resume");
    // The run may still be going; wait for it on the resumed connection.
    if r.fold.run.status == RunStatus::Running {
        r.until_run_complete().await;
    }
    let expected: Vec<String> = (0..common::send_queue::SAYS).map(|n| format!("{n:04}")).collect();
    assert_eq!(said(&r.fold.items), expected, "every step once, in order");
    assert_eq!(held, expected[..held.len()], "what the client held is a prefix of the session");
    server.stop().await;
}

/// The target on the real binary, through /proc RSS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_stop_reading_cost_bounded_memory_get_4008_and_resume_intact() {
    let dir = tempfile::tempdir().unwrap();
    let server = Proc::spawn_with(&dir.path().join("chat.db"), None, &["--durability", "normal"]);
    let pid = server.child.id();
    // Idle: after one small session, so one-time allocations are in the baseline.
    let mut warm = Client::connect(&server.url).await;
    warm.hello(Some(common::say_script(1))).await;
    warm.user_message("w1", "hi").await;
    warm.until_run_complete().await;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = resident_bytes(pid);

    let mut clients = Vec::new();
    for k in 0..CLIENTS {
        let mut c = Client::connect(&server.url).await;
        c.keep_states = false;
        // 1.0: whole-state updates, the heaviest traffic a client can be sent.
        c.hello(Some(large_state_script(SAYS, SAY_CHARS))).await;
        c.user_message(&format!("m{k}"), "go").await;
        clients.push(c);
    }
    // Nobody reads now; sample the server's resident set while the sessions run and stall.
    let start = Instant::now();
    let mut peak = idle;
    while start.elapsed() < PAUSE {
        peak = peak.max(resident_bytes(pid));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let growth = peak.saturating_sub(idle);
    eprintln!(
        "send queue: idle {} KiB, peak {} KiB over {PAUSE:?} with {CLIENTS} stalled clients: +{} KiB (budget {} KiB)",
        idle / 1024,
        peak / 1024,
        growth / 1024,
        RSS_BUDGET / 1024
    );
    assert!(growth <= RSS_BUDGET, "the server grew by {growth} bytes, over the {RSS_BUDGET} budget");

    for (k, mut c) in clients.into_iter().enumerate() {
        // What was in flight arrives (checked by the monitor), then the close.
        let frames = drain(&mut c, Duration::from_secs(10)).await;
        assert_eq!(c.close_code, Some(4008), "client {k}: TRANSPORT-016 close after {frames} frames");
        assert!(frames < SAYS * 2, "client {k} was cut off, not served everything ({frames} frames)");
        // TRANSPORT-017: the session went on as after a dropped connection, and resumes intact.
        let held = said(&c.fold.items);
        let mut r = Client::connect(&server.url).await;
        r.keep_states = false;
        r.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), c.last_seq).await.expect("resume");
        let expected: Vec<String> = (0..SAYS).map(|n| format!("{n:04}")).collect();
        assert_eq!(said(&r.fold.items), expected, "client {k}: every step once, in order");
        assert_eq!(r.fold.run.status, RunStatus::Completed, "client {k}");
        assert_eq!(held, expected[..held.len()], "client {k}: what it held is a prefix of the session");
        assert!(r.received.iter().all(|f| !matches!(f, ServerFrame::Error(_))));
    }
}
