//! A windowed open of a session that is not in memory (`spec/window.md`, issue #22): the session
//! is loaded from its window checkpoint (the newest items by position and those every window
//! holds, `WINDOW-003`) and the events after it, so the open reads and folds what it sends, not the
//! thread. Such a session holds a *partial* state: the items it read, in display order, with the
//! count of those it did not. Nothing changes a partial state: every path that reads more than a
//! window or commits a change first calls [`ensure_full`], which loads the whole state as of the
//! commits replayed here, and `emit` refuses to commit on a partial state.

use std::sync::Arc;

use chatwire_schema::ui_state::RunState;
use chatwire_schema::window::WindowView;
use chatwire_schema::{DisplayItem, ErrorCode, IndexedUiState, ServerFrame, UiState};

use super::fold::fold_onto;
use super::lifecycle::discard;
use super::state::{History, Inner, Partial, Session};
use crate::protocol::Refusal;
use crate::store::{StoreError, StoredSession, StoredWindow};

/// Windowed opens served from a window checkpoint in this process (a test's evidence that the
/// path ran; see [`crate::partial_opens`]).
pub(crate) static PARTIAL_OPENS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Why a window checkpoint does not give the window asked for (the session is then loaded whole).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotPartial {
    #[error("no window checkpoint")]
    NoCheckpoint,
    #[error("a row does not parse: {0}")]
    Row(#[from] serde_json::Error),
    #[error("an event after the checkpoint does not fold: {0}")]
    Fold(String),
    #[error("the events after the checkpoint leave fewer of the newest items than the window")]
    Short,
}

/// The partial state `stored` gives for a window of `size`: the window checkpoint's rows with the
/// events after it folded on. Refused (the caller loads the whole state) where it might not give
/// the exact view of the whole state: an event that names an item not read, a cut that removes the
/// oldest of the newest items read, or fewer newest items than the window plus one (a connection
/// that does not see streams does not hold the open stream) plus one before the window (its
/// cursor's predecessor, so that the window does not start at the first item held).
pub(crate) fn fold_window(stored: &StoredSession, size: u32) -> Result<(IndexedUiState, Partial), NotPartial> {
    let Some(StoredWindow { total, start, run, items, .. }) = &stored.window else {
        return Err(NotPartial::NoCheckpoint);
    };
    let run: RunState = serde_json::from_str(run)?;
    let mut parsed = Vec::with_capacity(items.len());
    for (_, item) in items {
        parsed.push(serde_json::from_str::<DisplayItem>(item)?);
    }
    let omitted = (*total as usize).saturating_sub(parsed.len());
    // The oldest of the newest items: every item after it was read.
    let boundary = items.iter().position(|(pos, _)| pos >= start).and_then(|i| parsed.get(i)).map(|i| i.id().clone());
    let mut state = IndexedUiState::new(UiState { items: parsed, run, usage: None });
    for text in &stored.events {
        let frame: ServerFrame = serde_json::from_str(text)?;
        let Some(event) = frame.ui_event() else {
            return Err(NotPartial::Fold(format!("{} is not a state event", frame.type_name())));
        };
        state.apply(event).map_err(|e| NotPartial::Fold(e.to_string()))?;
    }
    if omitted > 0 {
        let items = &state.state().items;
        let at = boundary.and_then(|b| items.iter().rposition(|item| item.id() == &b)).ok_or(NotPartial::Short)?;
        if items.len() < at + size as usize + 2 {
            return Err(NotPartial::Short);
        }
    }
    Ok((state, Partial { omitted }))
}

/// Why the whole state could not be loaded for a session held partially.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FullLoadError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the checkpoint does not parse: {0}")]
    Unreadable(#[from] serde_json::Error),
    #[error("the session is no longer stored")]
    Gone,
    #[error("the whole state does not agree with the window it held")]
    Disagrees,
}

impl From<FullLoadError> for Refusal {
    fn from(e: FullLoadError) -> Self {
        eprintln!("chatwire-reference: internal error: {e}");
        Refusal::new(ErrorCode::InternalError, "the server failed and the session is unchanged")
    }
}

/// Makes `g` hold the whole state, if it holds a partial one: the state as of the commits
/// replayed here (newer ones reach it by `sync`), with every windowed connection's view placed
/// in it by its cursor item. On an error the session is taken out of service (its clients resume
/// and get it afresh from the store).
pub(crate) async fn ensure_full(session: &Arc<Session>, g: &mut Inner) -> Result<(), FullLoadError> {
    if g.partial.is_none() {
        return Ok(());
    }
    let loaded = load_full(session, g).await;
    if loaded.is_err() {
        discard(session, g);
    }
    loaded
}

async fn load_full(session: &Arc<Session>, g: &mut Inner) -> Result<(), FullLoadError> {
    let Some(partial) = g.partial else { return Ok(()) };
    let shared = &session.shared;
    let upto = g.replayed_to;
    let mut stored = shared.store.load_session(session.id.as_str()).await?;
    // A checkpoint of commits this replica has not replayed yet cannot be folded back.
    if stored.as_ref().and_then(|s| s.checkpoint.as_ref()).is_some_and(|c| c.seq > upto) {
        stored = shared.store.load_session_from_start(session.id.as_str()).await?;
    }
    let stored = stored.ok_or(FullLoadError::Gone)?;
    let start = match &stored.checkpoint {
        Some(c) => (IndexedUiState::new(serde_json::from_str::<UiState>(&c.state)?), serde_json::from_str(&c.history)?),
        None => (IndexedUiState::default(), History::default()),
    };
    let (full, history) = fold_onto(&session.id, start, &stored.events, Some(upto));
    let (agent, plan) = match &stored.agent {
        Some(agent) => shared.agent_and_plan(&session.id, agent),
        None => return Err(FullLoadError::Gone),
    };
    let held = g.state.state();
    if full.state().items.len() != held.items.len() + partial.omitted || full.state().run != held.run {
        return Err(FullLoadError::Disagrees);
    }
    let mut views = Vec::with_capacity(g.attached.len());
    for a in &g.attached {
        views.push(match &a.window {
            Some(view) => {
                let cursor = view.cursor(held);
                Some(WindowView::at_cursor(full.state(), view.size, cursor.as_ref()).ok_or(FullLoadError::Disagrees)?)
            }
            None => None,
        });
    }
    for (a, view) in g.attached.iter_mut().zip(views) {
        a.window = view;
    }
    g.since_checkpoint = stored.events.len() as u64;
    // A windowed open read neither (`LoadFrom::Window`).
    g.agent = agent;
    g.plan = plan;
    g.state = full;
    g.history = history;
    g.partial = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! A partial open against the whole state, on transcripts with forms asked long ago, a form
    //! pending at the checkpoint and dismissed after it, and cuts after it:
    //! the window a partial state gives is exactly `window_of` the whole state, or the open is
    //! refused and the session loaded whole.

    use chatwire_schema::window::window_of;
    use serde_json::{json, Value};

    use super::*;
    use crate::session::pipeline::window_checkpoint;
    use crate::store::{Checkpoint, Commit, DbLocation, Durability, LoadFrom, LogKind, LogRow, NewSessionRow, Store};

    const TS: &str = "2026-11-26T10:00:00Z";

    /// Turn `t`: a message (after the dismissal of the last turn's form), the run, an auto tool
    /// every fifth turn (settled after the answers), `says` answers, a form every seventh turn
    /// (left pending: always held, however old), the run's end.
    fn turn(t: usize, says: usize) -> Vec<Value> {
        let inv = format!("inv-{t}");
        let mut frames = Vec::new();
        if t > 0 && (t - 1).is_multiple_of(7) {
            // The new message first dismisses the form the last turn left pending.
            frames.push(json!({"type": "chat.tool_call_dismiss", "tool_call_id": format!("form-{}", t - 1),
                "initiated_by": "server", "reason": "superseded", "ts": TS}));
        }
        frames.extend([
            json!({"type": "chat.user_message_accepted", "in_reply_to": format!("m-{t}"), "invocation_id": inv,
                "item_id": format!("um-{t}"), "text": format!("turn {t}"), "ts": TS}),
            json!({"type": "chat.run_started", "invocation_id": inv, "ts": TS}),
        ]);
        if t.is_multiple_of(5) {
            frames.push(json!({"type": "chat.tool_call", "invocation_id": inv, "tool_call_id": format!("auto-{t}"),
                "tool_name": "run_tests", "interaction_type": "auto_tool", "awaiting_response": false,
                "display": "inline", "payload": {}, "call_index": 0, "ts": TS}));
        }
        for n in 0..says {
            frames.push(json!({"type": "chat.assistant_message", "invocation_id": inv,
                "item_id": format!("am-{t}-{n}"), "markdown": format!("answer {t}.{n}"), "ts": TS}));
        }
        if t.is_multiple_of(5) {
            frames.push(json!({"type": "chat.tool_call_complete", "tool_call_id": format!("auto-{t}"),
                "status": "completed", "result": {}, "ts": TS}));
        }
        let form = t.is_multiple_of(7);
        if form {
            frames.push(json!({"type": "chat.tool_call", "invocation_id": inv, "tool_call_id": format!("form-{t}"),
                "tool_name": "ask", "interaction_type": "ui_tool", "awaiting_response": true,
                "display": "inline", "component_type": "Form", "payload": {}, "call_index": 1, "ts": TS}));
        }
        let status = if form { "awaiting_input" } else { "completed" };
        frames.push(json!({"type": "chat.run_complete", "invocation_id": inv, "status": status, "ts": TS}));
        frames
    }

    /// A session with `before` frames, a checkpoint, and `after` frames, in a store; the frames
    /// get seqs from 3 on. Returns the store and the whole state.
    async fn stored(before: &[Value], after: &[Value]) -> (Store, UiState) {
        let store = Store::open(&DbLocation::Memory, Durability::Normal).await.unwrap();
        let session = NewSessionRow {
            id: "s1".into(),
            token_hash: "h".into(),
            agent: "{}".into(),
            cursor: "{}".into(),
            next_seq: 3,
            snapshot_seq: 2,
        };
        store.create_session(session).await.unwrap();
        let mut state = UiState::default();
        let mut log = Vec::new();
        let mut checkpoint = None;
        for (n, frame) in before.iter().chain(after).enumerate() {
            if n == before.len() {
                let window = Some(window_checkpoint(&state).unwrap());
                let text = serde_json::to_string(&state).unwrap();
                checkpoint = Some(Checkpoint { seq: 3 + n as u64, state: text, history: "{}".into(), window });
            }
            let mut frame = frame.clone();
            frame["seq"] = json!(3 + n);
            let typed: ServerFrame = serde_json::from_value(frame.clone()).unwrap();
            state.apply(typed.ui_event().unwrap()).unwrap_or_else(|e| panic!("{frame}: {e}"));
            log.push(LogRow {
                seq: Some(3 + n as u64),
                kind: LogKind::Event,
                frame_type: typed.type_name().into(),
                frame: frame.to_string(),
            });
        }
        let next_seq = 3 + log.len() as u64;
        store.commit("s1", Commit { next_seq, log, ..Commit::default() }).await.unwrap();
        store.save_checkpoint("s1", checkpoint.expect("frames after the checkpoint")).await.unwrap();
        (store, state)
    }

    async fn open(store: &Store, size: u32) -> Result<(IndexedUiState, Partial), NotPartial> {
        let newest = u64::from(size) + crate::store::WINDOW_SLACK;
        let loaded = store.load("s1", LoadFrom::Window { newest }).await.unwrap().unwrap();
        assert!(loaded.agent.is_none(), "a windowed load reads no agent");
        assert!(loaded.checkpoint.is_none(), "a windowed load reads no whole state");
        let window = loaded.window.as_ref().expect("a window checkpoint");
        assert!(window.items.len() < window.total as usize, "the rows read are not the thread");
        fold_window(&loaded, size)
    }

    /// The partial open gives exactly `window_of` the whole state.
    async fn same_window(store: &Store, whole: &UiState, size: u32) {
        let (partial, Partial { omitted }) = open(store, size).await.unwrap_or_else(|e| panic!("window {size}: {e}"));
        let view = WindowView::open(partial.state(), size);
        let mut about = view.window(partial.state());
        about.total += omitted as u64;
        let (want, want_about) = window_of(whole, size);
        assert_eq!(view.view(partial.state()), want, "window {size}: the items and run");
        assert_eq!(about, want_about, "window {size}: total and cursor");
        assert!(omitted > 0, "window {size}: the thread was not read whole");
    }

    fn thread(turns: std::ops::Range<usize>) -> Vec<Value> {
        turns.flat_map(|t| turn(t, 20)).collect()
    }

    #[tokio::test]
    async fn a_window_from_the_checkpoint_rows_is_the_window_of_the_whole_state() {
        // 150 turns of 20 answers or more: past the tail, with forms and auto tools all along.
        let before = thread(0..150);
        // Turn 147's form is pending at the checkpoint and dismissed after it.
        let after = thread(150..153);
        let (store, whole) = stored(&before, &after).await;
        for size in [1, 20, 100, 1000] {
            same_window(&store, &whole, size).await;
        }
    }

    #[tokio::test]
    async fn a_small_cut_after_the_checkpoint_still_gives_the_window() {
        let before = thread(0..150);
        let mut after = thread(150..152);
        after.push(json!({"type": "chat.rewind_complete", "in_reply_to": "rw-1", "before_invocation_id": "inv-151",
            "removed_invocation_ids": ["inv-151"], "ts": TS}));
        let (store, whole) = stored(&before, &after).await;
        for size in [1, 20, 100] {
            same_window(&store, &whole, size).await;
        }
    }

    fn rewind_to(first: usize, end: usize) -> Value {
        let removed: Vec<String> = (first..end).map(|t| format!("inv-{t}")).collect();
        json!({"type": "chat.rewind_complete", "in_reply_to": "rw-1", "before_invocation_id": format!("inv-{first}"),
            "removed_invocation_ids": removed, "ts": TS})
    }

    #[tokio::test]
    async fn a_cut_that_leaves_too_few_rows_or_names_an_item_not_read_opens_whole() {
        let before = thread(0..150);
        // Turns are 22 to 24 items. A rewind of the last two: a window of 20 or 60 is still
        // among the rows read (the window and 64 more).
        let (store, whole) = stored(&before, &[rewind_to(148, 150)]).await;
        same_window(&store, &whole, 20).await;
        same_window(&store, &whole, 60).await;
        // A rewind of the last four leaves fewer than 60 of the rows read.
        let (store, _) = stored(&before, &[rewind_to(146, 150)]).await;
        assert!(matches!(open(&store, 60).await, Err(NotPartial::Short)), "fewer rows than the window");
        // A rewind back to turn 100 names a message below the rows read.
        let (store, _) = stored(&before, &[rewind_to(100, 150)]).await;
        assert!(matches!(open(&store, 20).await, Err(NotPartial::Fold(_))), "the cut names an item not read");
    }
}
