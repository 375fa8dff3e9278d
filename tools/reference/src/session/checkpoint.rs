//! State checkpoints (`store::Checkpoint`, issue #22): a load starts from the session's latest
//! checkpoint and folds only the events after it, and a checkpoint is stored once a session has
//! committed [`CHECKPOINT_EVERY`] events since its last one, so loading a long thread after a
//! restart costs the checkpoint's read, not a fold of the whole log.

use std::sync::Arc;

use chatwire_schema::{Id, IndexedUiState, ServerFrame, UiState};

use super::emit::Unit;
use super::registry::{fold_log, fold_onto};
use super::{History, Inner, Session, Shared};
use crate::store::{Checkpoint, StoreError, StoredSession, CHECKPOINT_EVERY};

/// A stored session loaded: its state and turn history, and the events committed since its
/// latest checkpoint.
pub(super) struct Loaded {
    pub stored: StoredSession,
    pub state: IndexedUiState,
    pub history: History,
    pub since_checkpoint: u64,
}

/// The state and turn history `stored` folds to: its checkpoint's, with the events after it
/// folded on. A checkpoint that does not parse is passed over for the whole log (the truth; a
/// checkpoint is only a cache of its fold). `None`: the session is gone meanwhile.
pub(super) async fn fold_stored(
    shared: &Arc<Shared>,
    id: &Id,
    stored: StoredSession,
) -> Result<Option<Loaded>, StoreError> {
    let Some(checkpoint) = &stored.checkpoint else {
        let folded = fold_log(id, &stored.events, None);
        return Ok(Some(save_after_load(shared, id, stored, folded)));
    };
    let parsed = serde_json::from_str::<UiState>(&checkpoint.state)
        .and_then(|state| Ok((state, serde_json::from_str::<History>(&checkpoint.history)?)));
    match parsed {
        Ok((state, history)) => {
            let folded = fold_onto(id, (IndexedUiState::new(state), history), &stored.events, None);
            Ok(Some(save_after_load(shared, id, stored, folded)))
        }
        Err(e) => {
            eprintln!("chatwire-reference: session {id}: checkpoint unreadable ({e}), folding the whole log");
            let Some(stored) = shared.store.load_session_from_start(id.as_str()).await? else { return Ok(None) };
            let folded = fold_log(id, &stored.events, None);
            Ok(Some(save_after_load(shared, id, stored, folded)))
        }
    }
}

/// A load that folded [`CHECKPOINT_EVERY`] events or more (a log written before checkpoints
/// were, or by a faulty build) stores what it folded, so the next load does not fold them again.
fn save_after_load(
    shared: &Arc<Shared>,
    id: &Id,
    stored: StoredSession,
    (state, history): (IndexedUiState, History),
) -> Loaded {
    let mut since_checkpoint = stored.events.len() as u64;
    if since_checkpoint >= CHECKPOINT_EVERY && shared.hooks.checkpoints() {
        // The load read every event below the stored next_seq, and no other.
        save(shared, id, stored.next_seq, state.state(), &history);
        since_checkpoint = 0;
    }
    Loaded { stored, state, history, since_checkpoint }
}

/// Before `units` are committed (by `emit`): how many events they are, and the history a
/// checkpoint taken right after them holds where they bring the session to [`CHECKPOINT_EVERY`]
/// events since its last checkpoint. Taken before the commit because the requests note the
/// turn a change opens only after it.
pub(super) fn due(session: &Session, g: &Inner, units: &[Unit]) -> (u64, Option<History>) {
    let events = units.iter().map(|u| match u {
        Unit::Event(f) => std::slice::from_ref(f),
        Unit::Batch(v) => v.as_slice(),
        Unit::Answer(_) => &[],
    });
    let count: u64 = events.clone().map(|f| f.len() as u64).sum();
    if g.since_checkpoint + count < CHECKPOINT_EVERY || !session.shared.hooks.checkpoints() {
        return (count, None);
    }
    let mut history = g.history.clone();
    events.flatten().for_each(|f: &ServerFrame| history.note(f));
    (count, Some(history))
}

/// After a commit of `events` events (by `emit`, with `g.next_seq` moved past them): stores the
/// state as a checkpoint when [`due`] gave its history, and counts the events otherwise.
pub(super) fn after_commit(session: &Session, g: &mut Inner, (events, due): (u64, Option<History>)) {
    match due {
        Some(history) => {
            g.since_checkpoint = 0;
            save(&session.shared, &session.id, g.next_seq, g.state.state(), &history);
        }
        None => g.since_checkpoint += events,
    }
}

/// Stores the state before `seq` as the session's checkpoint, on a task: a checkpoint is a
/// cache, so nothing waits for it, and one lost to a crash only means a longer fold at the next load.
fn save(shared: &Arc<Shared>, id: &Id, seq: u64, state: &UiState, history: &History) {
    let serialized = serde_json::to_string(state)
        .and_then(|text| Ok((text, serde_json::to_string(history)?, super::partial::window_checkpoint(state)?)));
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
