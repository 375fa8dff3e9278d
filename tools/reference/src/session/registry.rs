//! The sessions in memory: loaded on demand (the latest checkpoint and the fold of the events
//! after it, or for a windowed open the window's rows), and at start those with unfinished work.

use std::sync::Arc;

use chatwire_schema::{Id, IndexedUiState, UiState};
use tokio::sync::Mutex;

use super::fold::{fold_log, fold_onto};
use super::partial::{fold_window, NotPartial, PARTIAL_OPENS};
use super::pipeline::save_checkpoint;
use super::recovery::recover;
use super::state::{Fold, History, Inner, Session, Shared};
use crate::agent::{Agent, Cursor, NotLoaded};
use crate::store::{LoadFrom, StoreError, StoredSession, CHECKPOINT_EVERY, WINDOW_SLACK};

/// A stored session loaded: its state and turn history, and the events committed since its
/// latest checkpoint.
struct Loaded {
    stored: StoredSession,
    state: IndexedUiState,
    history: History,
    since_checkpoint: u64,
}

impl Shared {
    /// The session, from memory or rebuilt from the database; `None` if it does not exist.
    pub async fn get_or_load(self: &Arc<Self>, id: &Id) -> Result<Option<Arc<Session>>, StoreError> {
        self.load(id, false).await
    }

    /// Loads a session; with `recovering` (server start only) it also finishes interrupted work.
    /// A session evicted while quiescent has none, so a later load needs no recovery.
    async fn load(self: &Arc<Self>, id: &Id, recovering: bool) -> Result<Option<Arc<Session>>, StoreError> {
        let mut sessions = self.sessions.lock().await;
        if let Some(s) = sessions.get(id) {
            return Ok(Some(s.clone()));
        }
        let Some(stored) = self.store.load_session(id.as_str()).await? else { return Ok(None) };
        let Some(Loaded { stored, state, history, since_checkpoint }) = fold_stored(self, id, stored).await? else {
            return Ok(None);
        };
        let timers = (stored.pending_responses.clone(), stored.timers.clone());
        let fold = Fold { state, history, next_seq: 0, token_hash: String::new(), since_checkpoint, partial: None };
        let session = self.build(id, stored, fold);
        sessions.insert(id.clone(), session.clone());
        drop(sessions);
        if recovering {
            recover(&session, timers.0, timers.1).await;
        }
        Ok(Some(session))
    }

    /// The session for a windowed open (`spec/window.md`): from memory, or loaded from its window
    /// checkpoint (the newest `size` items and a margin, and the older ones every window holds)
    /// with the events after it, as a partial state (`partial.rs`); loaded whole where it has no
    /// window checkpoint or that does not give the window. `None` if it does not exist.
    pub async fn get_or_load_window(self: &Arc<Self>, id: &Id, size: u32) -> Result<Option<Arc<Session>>, StoreError> {
        let mut sessions = self.sessions.lock().await;
        if let Some(s) = sessions.get(id) {
            return Ok(Some(s.clone()));
        }
        let newest = u64::from(size) + WINDOW_SLACK;
        let Some(stored) = self.store.load(id.as_str(), LoadFrom::Window { newest }).await? else { return Ok(None) };
        match fold_window(&stored, size) {
            Ok((state, partial)) => {
                PARTIAL_OPENS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let fold = Fold {
                    state,
                    history: History::default(),
                    next_seq: 0,
                    token_hash: String::new(),
                    since_checkpoint: 0,
                    partial: Some(partial),
                };
                let session = self.build(id, stored, fold);
                sessions.insert(id.clone(), session.clone());
                Ok(Some(session))
            }
            Err(why) => {
                if !matches!(why, NotPartial::NoCheckpoint) {
                    eprintln!("chatwire-reference: session {id}: opened whole: {why}");
                }
                drop(sessions);
                self.load(id, false).await
            }
        }
    }

    /// A session in memory from what `stored` says and the state it folds to.
    fn build(self: &Arc<Self>, id: &Id, stored: StoredSession, mut fold: Fold) -> Arc<Session> {
        let (agent, plan) = match &stored.agent {
            Some(stored) => self.agent_and_plan(id, stored),
            // A windowed open reads neither (`partial.rs`): nothing plays before `ensure_full`.
            None => (Arc::new(NotLoaded) as Arc<dyn Agent>, None),
        };
        let cursor = serde_json::from_str(&stored.cursor).unwrap_or_else(|e| {
            eprintln!("chatwire-reference: session {id}: stored cursor unreadable ({e}), using default");
            Cursor::default()
        });
        fold.next_seq = self.faults.commit.loaded_next_seq(stored.next_seq);
        fold.token_hash = stored.token_hash;
        Arc::new(Session {
            id: id.clone(),
            shared: self.clone(),
            inner: Mutex::new(Inner::new(fold, agent, cursor, plan)),
        })
    }

    /// Loads every session with unfinished work so its turn, responses and deadlines proceed
    /// (the embedded store; on a shared store `cluster_tasks::recover_own`).
    pub async fn recover_all(self: &Arc<Self>) -> Result<usize, StoreError> {
        let ids = self.store.sessions_needing_recovery().await?;
        let mut n = 0;
        for id in ids {
            match Id::parse(id.clone()) {
                Ok(id) => {
                    if self.load(&id, true).await?.is_some() {
                        n += 1;
                    }
                }
                Err(e) => eprintln!("chatwire-reference: stored session id {id:?} is invalid: {e}"),
            }
        }
        Ok(n)
    }
}

/// The state and turn history `stored` folds to: its checkpoint's, with the events after it
/// folded on. A checkpoint that does not parse is passed over for the whole log (the truth; a
/// checkpoint is only a cache of its fold). `None`: the session is gone meanwhile.
async fn fold_stored(shared: &Arc<Shared>, id: &Id, stored: StoredSession) -> Result<Option<Loaded>, StoreError> {
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
    if since_checkpoint >= CHECKPOINT_EVERY && shared.faults.commit.checkpoints() {
        // The load read every event below the stored next_seq, and no other.
        save_checkpoint(shared, id, stored.next_seq, state.state(), &history);
        since_checkpoint = 0;
    }
    Loaded { stored, state, history, since_checkpoint }
}
