//! Protocol 1.1 sessions for the tests: open with an offer and features, resume from a chosen
//! `last_seq` on a new connection that holds what the old one received, play a turn.

use chatwire_schema::session::welcome::SessionWelcome;
use chatwire_schema::ServerFrame;
use serde_json::{json, Value};

use super::Client;

/// Opens a session offering `versions` with `features` (when given); returns the welcome.
pub async fn open(c: &mut Client, versions: &[&str], features: Option<Value>, script: Value) -> SessionWelcome {
    let mut hello = json!({"type": "session.hello", "id": "h1", "versions": versions, "script": script});
    if let Some(f) = features {
        hello["features"] = f;
    }
    c.send(hello).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("expected a welcome") };
    let ServerFrame::UiStateSnapshot(_) = c.recv().await else { panic!("expected the snapshot") };
    w
}

/// Resumes `of`'s session on a new connection from `last_seq`, offering 1.1 with `features`;
/// returns the client, its welcome and the state frame after it.
pub async fn resume(
    url: &str,
    of: &Client,
    last_seq: u64,
    features: Option<Value>,
) -> (Client, SessionWelcome, ServerFrame) {
    let mut c = Client::connect(url).await;
    // The new connection starts from what `of` held: the states it received, by seq.
    c.states = of.states.clone();
    c.fold = of.fold.clone();
    let mut hello = json!({"type": "session.hello", "id": "h2", "versions": ["1.1", "1.0"],
        "resume": {"session_id": of.session_id, "resume_token": of.token, "last_seq": last_seq}});
    if let Some(f) = features {
        hello["features"] = f;
    }
    c.send(hello).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("expected a welcome") };
    assert!(w.resumed);
    c.session_id = of.session_id.clone();
    c.token = of.token.clone();
    let state = c.recv().await;
    (c, w, state)
}

/// Plays one turn and returns its frames up to the state frame after `chat.run_complete`.
pub async fn turn(c: &mut Client, id: &str) -> Vec<ServerFrame> {
    c.user_message(id, "go").await;
    until_run_complete(c).await
}

/// Receives up to the state frame after the next `chat.run_complete`.
pub async fn until_run_complete(c: &mut Client) -> Vec<ServerFrame> {
    let mut frames = c.recv_until(|f| matches!(f, ServerFrame::RunComplete(_))).await;
    frames.push(c.recv().await);
    frames
}
