//! A session's state as the fold of its log: every event through the schema's reducer, and what
//! the events say about its turns.

use chatwire_schema::{Id, IndexedUiState, ServerFrame};

use super::state::History;

/// The state a session's log folds to, and what it says about the session's turns. Indexed:
/// folding n events is O(n), so a load after a restart grows linearly.
///
/// With `upto`, events from that seq on are left out: what a replica had reached before a
/// failed change, the rest reaching it by replay (`replica.rs`).
pub(crate) fn fold_log(id: &Id, events: &[String], upto: Option<u64>) -> (IndexedUiState, History) {
    fold_onto(id, (IndexedUiState::default(), History::default()), events, upto)
}

/// [`fold_log`] from a state and history other than the empty ones (a checkpoint's).
pub(crate) fn fold_onto(
    id: &Id,
    (mut fold, mut history): (IndexedUiState, History),
    events: &[String],
    upto: Option<u64>,
) -> (IndexedUiState, History) {
    for (index, text) in events.iter().enumerate() {
        let applied = serde_json::from_str::<ServerFrame>(text).map_err(|e| e.to_string()).and_then(|frame| {
            if upto.is_some_and(|upto| frame.seq().is_some_and(|seq| seq >= upto)) {
                return Ok(());
            }
            history.note(&frame);
            match frame.ui_event() {
                Some(event) => fold.apply(event).map_err(|e| e.to_string()),
                None => Err(format!("{} is not a state event", frame.type_name())),
            }
        });
        if let Err(e) = applied {
            // Only a faulty build (or a hand-edited database) gets here.
            eprintln!("chatwire-reference: session {id}: log entry {index} skipped: {e}");
        }
    }
    (fold, history)
}
