//! The checkpoint step of the commit pipeline (`store::Checkpoint`, issue #22): once a session
//! has committed [`CHECKPOINT_EVERY`] events since its last checkpoint, the state is stored as a
//! new one (whole, and by item position for windowed opens), so a load after a restart folds only
//! the events after it.

use std::sync::Arc;

use chatwire_schema::window::always_held;
use chatwire_schema::{Id, ServerFrame, UiState};

use crate::session::change::Unit;
use crate::session::state::{History, Inner, Session, Shared};
use crate::store::{Checkpoint, WindowCheckpoint, CHECKPOINT_EVERY, WINDOW_TAIL};

/// What the step decided before a commit: how many events the change commits, and the history a
/// checkpoint taken right after them holds where one is due.
pub(crate) struct Due {
    events: u64,
    history: Option<History>,
}

/// Before `units` are committed: how many events they are, and where they bring the session to
/// [`CHECKPOINT_EVERY`] events since its last checkpoint, the history a checkpoint taken right
/// after them holds. Taken before the commit because the requests note the turn a change opens
/// only after it.
pub(crate) fn due(session: &Session, g: &Inner, units: &[Unit]) -> Due {
    let events: u64 = units.iter().map(|u| u.events().len() as u64).sum();
    if g.since_checkpoint + events < CHECKPOINT_EVERY || !session.shared.faults.commit.checkpoints() {
        return Due { events, history: None };
    }
    let mut history = g.history.clone();
    units.iter().flat_map(Unit::events).for_each(|f: &ServerFrame| history.note(f));
    Due { events, history: Some(history) }
}

/// After the commit (with `g.next_seq` moved past the change): stores the state as a checkpoint
/// when one was due, and counts the events otherwise.
pub(crate) fn adopt(session: &Session, g: &mut Inner, due: Due) {
    match due.history {
        Some(history) => {
            g.since_checkpoint = 0;
            save(&session.shared, &session.id, g.next_seq, g.state.state(), &history);
        }
        None => g.since_checkpoint += due.events,
    }
}

/// After a batch's commit (`batch.rs`, with `g.next_seq` moved past it): stores the state as a
/// checkpoint where its `events` bring the session to [`CHECKPOINT_EVERY`] events since the last
/// one, and counts them otherwise. A batch holds none of the events [`History`] notes.
pub(crate) fn adopt_events(session: &Session, g: &mut Inner, events: u64) {
    if g.since_checkpoint + events < CHECKPOINT_EVERY || !session.shared.faults.commit.checkpoints() {
        g.since_checkpoint += events;
        return;
    }
    g.since_checkpoint = 0;
    save(&session.shared, &session.id, g.next_seq, g.state.state(), &g.history);
}

/// Stores the state before `seq` as the session's checkpoint, on a task: a checkpoint is a
/// cache, so nothing waits for it, and one lost to a crash only means a longer fold at the next load.
pub(crate) fn save(shared: &Arc<Shared>, id: &Id, seq: u64, state: &UiState, history: &History) {
    let serialized = serde_json::to_string(state)
        .and_then(|text| Ok((text, serde_json::to_string(history)?, window_checkpoint(state)?)));
    let (state, history, window) = match serialized {
        Ok(texts) => texts,
        Err(e) => {
            eprintln!("chatwire-reference: session {id}: cannot serialize a checkpoint: {e}");
            return;
        }
    };
    let shared = shared.clone();
    let id = id.clone();
    tokio::spawn(async move {
        if let Err(e) =
            shared.store.save_checkpoint(id.as_str(), Checkpoint { seq, state, history, window: Some(window) }).await
        {
            eprintln!("chatwire-reference: session {id}: cannot store a checkpoint: {e}");
        }
    });
}

/// The window checkpoint of `state`: its newest [`WINDOW_TAIL`] items and every older item a
/// window holds, by position.
pub(crate) fn window_checkpoint(state: &UiState) -> Result<WindowCheckpoint, serde_json::Error> {
    let total = state.items.len();
    let tail_from = total.saturating_sub(WINDOW_TAIL as usize);
    let mut items = Vec::new();
    for (pos, item) in state.items.iter().enumerate() {
        let held = always_held(&state.items, pos);
        if pos >= tail_from || held {
            items.push((pos as u64, held, serde_json::to_string(item)?));
        }
    }
    Ok(WindowCheckpoint {
        total: total as u64,
        tail_from: tail_from as u64,
        run: serde_json::to_string(&state.run)?,
        items,
    })
}
