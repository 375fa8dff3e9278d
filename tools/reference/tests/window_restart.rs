//! Issue #22: a long thread opened with a window as the first resume after a restart reads its
//! window checkpoint, not the thread (`spec/window.md`), and everything after the open works on
//! the whole state: a page, a duplicate message refused by the turn history, a new turn, and a
//! later resume without a window that gets the whole state. Every frame goes through the
//! conformance monitor (the test client's).

mod common;

use std::time::Duration;

use chatwire_reference::DbLocation;
use chatwire_schema::window::{held_view, page_of, window_of};
use chatwire_schema::{ErrorCode, ServerFrame};
use common::Client;
use serde_json::{json, Value};

/// Forty answers a turn, and a form every third turn (left pending: always held, however old).
fn long_script(turns: usize) -> Value {
    let turns: Vec<Value> = (0..turns)
        .map(|t| {
            let mut steps: Vec<Value> =
                (0..40).map(|n| json!({"op": "say", "markdown": format!("answer {t}.{n}")})).collect();
            if t.is_multiple_of(3) {
                steps.push(json!({"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool",
                    "display": "inline", "component_type": "Form", "payload": {"turn": t},
                    "outcome": {"kind": "await_response", "summary": "answered"}}]}));
            }
            json!({"steps": steps})
        })
        .collect();
    json!({"turns": turns})
}

/// The seq of the stored window checkpoint, if there is one (read beside the running server).
async fn window_checkpoint_seq(db: &DbLocation) -> Option<i64> {
    const QUERY: &str = "SELECT seq FROM window_checkpoints";
    match db {
        DbLocation::File(path) => rusqlite::Connection::open(path).ok()?.query_row(QUERY, [], |r| r.get(0)).ok(),
        DbLocation::Postgres(url) => {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.ok()?;
            tokio::spawn(connection);
            client.query_opt(QUERY, &[]).await.ok()?.map(|r| r.get(0))
        }
        DbLocation::Memory => None,
    }
}

/// On SQLite, then on PostgreSQL; one after the other, as the count of partial opens is the
/// process's.
#[tokio::test]
async fn a_windowed_first_resume_after_a_restart_reads_the_window_and_the_session_works_whole_after() {
    let dir = tempfile::tempdir().unwrap();
    windowed_first_resume(DbLocation::File(dir.path().join("w.db"))).await;
    let name = "a_windowed_first_resume_after_a_restart_reads_the_window_and_the_session_works_whole_after";
    if let Some(pg) = chatwire_pgtmp::for_test(name) {
        windowed_first_resume(DbLocation::Postgres(pg.url().to_owned())).await;
    }
}

async fn windowed_first_resume(db: DbLocation) {
    let server = common::TestServer::start(common::config(db.clone())).await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(long_script(20))).await;
    // Turns until a window checkpoint is stored (written behind the commit that made it due),
    // then one more, whose events the open folds onto it.
    let mut turn = 0;
    let mut after = 0;
    while after < 2 && turn < 20 {
        c.user_message(&format!("m-{turn}"), &format!("turn {turn}")).await;
        c.until_run_complete().await;
        turn += 1;
        if after > 0 || window_checkpoint_seq(&db).await.is_some() {
            after += 1;
        }
    }
    let checkpoint = window_checkpoint_seq(&db).await.expect("a window checkpoint was stored");
    assert!((checkpoint as u64) < c.last_seq, "events follow the checkpoint");
    let whole = c.fold.clone();
    assert!(whole.items.len() > 500, "a long thread: {} items", whole.items.len());
    let (id, token) = (c.session_id.clone().unwrap(), c.token.clone().unwrap());
    drop(c);
    server.stop().await;

    let server = common::TestServer::start(common::config(db.clone())).await;
    let opened = chatwire_reference::partial_opens();
    let mut w = Client::connect(&server.url).await;
    w.send(json!({"type": "session.hello", "id": "h-w", "versions": ["1.2"],
        "features": ["ui_state_patch", "resume_catch_up", "assistant_stream", "state_window"], "window": 30,
        "resume": {"session_id": id, "resume_token": token, "last_seq": 0}}))
        .await;
    let ServerFrame::Welcome(_) = w.recv().await else { panic!("expected a welcome") };
    let ServerFrame::UiStateSnapshot(snapshot) = w.recv().await else { panic!("expected a snapshot") };
    assert_eq!(chatwire_reference::partial_opens(), opened + 1, "the open read the window checkpoint");
    let (view, about) = window_of(&whole, 30);
    assert_eq!(snapshot.state, view, "the window: the newest 30 items and every older form");
    assert_eq!(snapshot.window.as_ref(), Some(&about), "total and cursor of the whole thread");
    assert!(view.items.len() > 30, "older forms are held");

    // A page reads the whole state (made whole first).
    let cursor = about.before.clone().expect("a cursor");
    w.send(json!({"type": "chat.history_request", "id": "p1", "before": cursor, "limit": 200})).await;
    let ServerFrame::HistoryPage(page) = w.recv().await else { panic!("expected a history page") };
    let (items, before) = page_of(&whole, &cursor, 200).unwrap();
    assert_eq!((page.items, page.before.clone()), (items, before), "the page before the window");
    // This client folds no pages: it now holds the view from the page's cursor, the base of the
    // next patch.
    w.fold = held_view(&whole, page.before.as_ref()).unwrap();
    w.states.insert(w.last_state_seq, w.fold.clone());
    // The turn history came with the whole state: an old message id is a duplicate.
    w.user_message("m-0", "again").await;
    w.expect_error(ErrorCode::DuplicateMessage).await;
    w.user_message("m-new", "one more").await;
    let frames = w.recv_until(|f| matches!(f, ServerFrame::RunComplete(_))).await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(_))), "the new turn ran");
    let ServerFrame::UiStatePatch(_) = w.recv().await else { panic!("expected the run end's patch") };

    // A resume without a window gets the whole thread and the new turn.
    let mut full = Client::connect(&server.url).await;
    full.send(json!({"type": "session.hello", "id": "h-f", "versions": ["1.2"], "features": ["ui_state_patch"],
        "resume": {"session_id": id, "resume_token": token, "last_seq": 0}}))
        .await;
    let ServerFrame::Welcome(_) = full.recv().await else { panic!("expected a welcome") };
    let ServerFrame::UiStateSnapshot(snapshot) = full.recv().await else { panic!("expected a snapshot") };
    assert!(snapshot.window.is_none());
    let items = &snapshot.state.items;
    assert!(items.len() > whole.items.len(), "the new turn was added to the whole thread");
    // The form the last turn left pending was dismissed by the new message: the rest is as before.
    let unchanged = whole.items.len() - 1;
    assert_eq!(items[..unchanged], whole.items[..unchanged], "the thread before the new turn");
    let _ = full.try_recv(Duration::from_millis(100)).await;
    server.stop().await;
}
