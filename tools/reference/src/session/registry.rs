//! The sessions in memory: load (the fold of the log), eviction, recovery at start.

use std::collections::HashMap;
use std::sync::Arc;

use chatwire_schema::script::ScriptTurn;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{FrameValidator, Id, IndexedUiState, ProtocolVersion, ServerFrame, SUPPORTED_VERSIONS};
use tokio::sync::Mutex;

use super::recovery::recover;
use super::{DriverLaunch, History, Inner, Session};
use crate::agent::{Agent, AgentSpec, Cursor, ScriptedAgent};
use crate::hooks::Hooks;
use crate::store::{LoadFrom, Store, StoreError, StoredAgent, StoredSession};
use crate::util::{hash_token, random_id};

/// Server-wide state shared by connections and sessions.
pub(crate) struct Shared {
    pub store: Store,
    /// The seam planted faults hook into (the identity for a correct server).
    pub hooks: Box<dyn Hooks>,
    /// The agent of sessions opened without a script.
    pub agent: Arc<dyn Agent>,
    pub conformance: bool,
    pub durable: bool,
    pub max_frame_bytes: u64,
    /// The versions this server speaks, newest first, each with its schemas.
    validators: Vec<(ProtocolVersion, FrameValidator)>,
    /// The hash an unknown session's resume is compared against: of a random token never issued.
    pub unmatchable_token_hash: String,
    /// Test-only: resume with the old lookup-first check (see [`crate::ServeConfig`]).
    pub legacy_resume_lookup: bool,
    /// The bound on each connection's unsent bytes (`TRANSPORT-016`).
    pub send_queue_bytes: u64,
    /// Capabilities this server does not offer although it implements them (`serve --without`).
    pub withheld: Vec<Capability>,
    /// The most connections one session keeps attached (`ATTACH-003`).
    pub max_attached: u32,
    pub(super) sessions: Mutex<HashMap<Id, Arc<Session>>>,
}

impl Shared {
    pub fn new(
        store: Store,
        hooks: Box<dyn Hooks>,
        agent: Arc<dyn Agent>,
        conformance: bool,
        durable: bool,
        max_frame_bytes: u64,
        versions: &[ProtocolVersion],
    ) -> Self {
        let mut versions = versions.to_vec();
        if versions.is_empty() {
            versions = SUPPORTED_VERSIONS.to_vec();
        }
        versions.sort_by(|a, b| b.cmp(a));
        Shared {
            store,
            hooks,
            agent,
            conformance,
            durable,
            max_frame_bytes,
            // Client frames are judged by the schemas of the version their connection negotiated
            // (the newest this server speaks until then), so a member a later minor adds is
            // refused as unknown (FRAME-003), not silently accepted.
            validators: versions.iter().map(|v| (*v, FrameValidator::for_version(*v))).collect(),
            unmatchable_token_hash: hash_token(random_id("rt", 32).as_str()),
            legacy_resume_lookup: false,
            send_queue_bytes: crate::DEFAULT_SEND_QUEUE_BYTES,
            withheld: Vec::new(),
            max_attached: chatwire_schema::MIN_ATTACHED_CONNECTIONS,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The versions this server speaks, newest first.
    pub fn versions(&self) -> Vec<ProtocolVersion> {
        self.validators.iter().map(|(v, _)| *v).collect()
    }

    /// The schemas client frames on a connection that negotiated `version` are judged by; before
    /// a hello is accepted (`None`), the newest version's.
    pub fn validator(&self, version: Option<ProtocolVersion>) -> &FrameValidator {
        let newest = &self.validators[0].1;
        version.and_then(|v| self.validators.iter().find(|(w, _)| *w == v)).map_or(newest, |(_, validator)| validator)
    }

    /// What this server offers in the welcome of a connection that negotiated `version`: the
    /// 1.1 features only where 1.1 was negotiated (`COMPAT-005`).
    pub(crate) fn capabilities(&self, version: ProtocolVersion) -> Vec<Capability> {
        let mut caps = vec![Capability::Rewind, Capability::ToolOutput, Capability::ToolExpiry];
        for feature in [
            Capability::UiStatePatch,
            Capability::ResumeCatchUp,
            Capability::AssistantStream,
            Capability::MultiAttach,
            Capability::StateWindow,
        ] {
            if feature.feature_since().is_some_and(|since| since <= version) {
                caps.push(feature);
            }
        }
        for plain in [Capability::Retry, Capability::Cancel] {
            if plain.since() <= version {
                caps.push(plain);
            }
        }
        caps.retain(|c| !self.withheld.contains(c));
        if self.conformance {
            caps.push(Capability::ConformanceScript);
        }
        if self.durable {
            caps.push(Capability::RestartDurability);
        }
        self.hooks.capabilities(caps)
    }

    /// Whether a `say` with `chunks` is committed as a stream (`SCRIPT-019`): where this server
    /// offers `assistant_stream` at the newest version it speaks. The stream is the session's;
    /// connections where the feature is not in force see its end as one whole message.
    pub(crate) fn streams(&self) -> bool {
        self.capabilities(self.validators[0].0).contains(&Capability::AssistantStream)
    }

    /// Whether a connection that negotiated `version` is offered `capability`.
    pub(crate) fn offers(&self, version: ProtocolVersion, capability: &Capability) -> bool {
        self.capabilities(version).contains(capability)
    }

    /// The agent a stored agent spec names.
    pub(super) fn agent_for(&self, spec: AgentSpec) -> Arc<dyn Agent> {
        let agent: Arc<dyn Agent> = match spec {
            AgentSpec::Script { script } => Arc::new(ScriptedAgent { script }),
            AgentSpec::Server => self.agent.clone(),
        };
        self.hooks.agent(agent)
    }

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
        let Some(loaded) = super::checkpoint::fold_stored(self, id, stored).await? else { return Ok(None) };
        let super::checkpoint::Loaded { stored, state, history, since_checkpoint } = loaded;
        let timers = (stored.pending_responses.clone(), stored.timers.clone());
        let session = self.build(id, stored, state, history, since_checkpoint, None);
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
        let newest = u64::from(size) + crate::store::WINDOW_SLACK;
        let Some(stored) = self.store.load(id.as_str(), LoadFrom::Window { newest }).await? else { return Ok(None) };
        match super::partial::fold_window(&stored, size) {
            Ok((state, partial)) => {
                super::partial::PARTIAL_OPENS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let session = self.build(id, stored, state, History::default(), 0, Some(partial));
                sessions.insert(id.clone(), session.clone());
                Ok(Some(session))
            }
            Err(why) => {
                if !matches!(why, super::partial::NotPartial::NoCheckpoint) {
                    eprintln!("chatwire-reference: session {id}: opened whole: {why}");
                }
                drop(sessions);
                self.load(id, false).await
            }
        }
    }

    /// The agent and the turn's plan a stored session names (unreadable ones fall back to the
    /// server's agent and no plan, said on stderr).
    pub(super) fn agent_and_plan(&self, id: &Id, stored: &StoredAgent) -> (Arc<dyn Agent>, Option<ScriptTurn>) {
        let parse_failed = |what: &str, e: serde_json::Error| {
            eprintln!("chatwire-reference: session {id}: stored {what} unreadable ({e}), using default");
        };
        let agent = self.agent_for(serde_json::from_str(&stored.agent).unwrap_or_else(|e| {
            parse_failed("agent", e);
            AgentSpec::Server
        }));
        let plan = match stored.turn_plan.as_deref() {
            Some(text) => serde_json::from_str::<Option<ScriptTurn>>(text).unwrap_or_else(|e| {
                parse_failed("turn plan", e);
                None
            }),
            None => None,
        };
        (agent, plan)
    }

    /// A session in memory from what `stored` says and the state it folds to.
    fn build(
        self: &Arc<Self>,
        id: &Id,
        stored: StoredSession,
        state: IndexedUiState,
        history: History,
        since_checkpoint: u64,
        partial: Option<super::partial::Partial>,
    ) -> Arc<Session> {
        let parse_failed = |what: &str, e: serde_json::Error| {
            eprintln!("chatwire-reference: session {id}: stored {what} unreadable ({e}), using default");
        };
        let (agent, plan) = match &stored.agent {
            Some(stored) => self.agent_and_plan(id, stored),
            // A windowed open reads neither (`partial.rs`): nothing plays before `ensure_full`.
            None => (Arc::new(crate::agent::NotLoaded) as Arc<dyn Agent>, None),
        };
        let cursor = serde_json::from_str(&stored.cursor).unwrap_or_else(|e| {
            parse_failed("cursor", e);
            Cursor::default()
        });
        let next_seq = self.hooks.loaded_next_seq(stored.next_seq);
        let recent = super::recent::Recent::new(next_seq.saturating_sub(1), state.open_stream().is_some());
        Arc::new(Session {
            id: id.clone(),
            shared: self.clone(),
            inner: Mutex::new(Inner {
                state,
                next_seq,
                token_hash: stored.token_hash,
                agent,
                cursor,
                plan,
                history,
                last_delta: None,
                attached: Vec::new(),
                requester: None,
                driver_active: false,
                driver_epoch: 0,
                driver_launch: DriverLaunch::Spawn,
                timers: HashMap::new(),
                evicted: false,
                recent,
                lease: None,
                replayed_to: next_seq,
                seq_reserved: next_seq,
                since_checkpoint,
                partial,
            }),
        })
    }

    /// Drops a session from memory when nothing refers to it: no connection, no run, no timer.
    pub async fn evict_if_quiescent(&self, session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().await;
        let mut g = session.inner.lock().await;
        // The replica holding the run lease keeps the session: it renews the lease (`CLUSTER-003`).
        if g.attached.is_empty() && !g.driver_active && g.timers.is_empty() && g.lease.is_none() && !g.evicted {
            g.evicted = true;
            // Seqs reserved and not used go back, so that the next load does not skip them.
            if g.seq_reserved > g.next_seq {
                self.store.release_seqs_later(session.id.as_str(), g.next_seq);
            }
            sessions.remove(&session.id);
        }
    }

    /// Forgets every loaded session (server shutdown), ending their timers.
    pub async fn clear(&self) {
        let sessions: Vec<_> = self.sessions.lock().await.drain().map(|(_, s)| s).collect();
        for s in sessions {
            let mut g = s.inner.lock().await;
            for (_, t) in g.timers.drain() {
                t.abort();
            }
            g.evicted = true;
            if g.seq_reserved > g.next_seq {
                if let Err(e) = self.store.reserve_seqs(s.id.as_str(), g.next_seq).await {
                    eprintln!("chatwire-reference: session {}: cannot give back its reserved seqs: {e}", s.id);
                }
            }
        }
    }

    /// Loads every session with unfinished work so its turn, responses and deadlines proceed.
    ///
    /// On a shared store the other replicas are alive and drive their own sessions: a replica
    /// recovers only those whose run lease it held itself before it stopped, before it serves
    /// anyone (`RESUME-014`); the rest expire and are claimed as they do (`CLUSTER-004`).
    pub async fn recover_all(self: &Arc<Self>) -> Result<usize, StoreError> {
        if self.store.is_shared() {
            let own = self.store.claim_own_leases().await?;
            let n = own.len();
            super::take_over(self, own).await;
            return Ok(n);
        }
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

/// The state a session's log folds to (every event through the reducer), and what it says about
/// the session's turns. Indexed: folding n events is O(n), so a load after a restart grows linearly.
///
/// With `upto`, events from that seq on are left out: what a replica had reached before a
/// failed change, the rest reaching it by replay (`replica.rs`).
pub(super) fn fold_log(id: &Id, events: &[String], upto: Option<u64>) -> (IndexedUiState, History) {
    fold_onto(id, (IndexedUiState::default(), History::default()), events, upto)
}

/// [`fold_log`] from a state and history other than the empty ones (a checkpoint's).
pub(super) fn fold_onto(
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

/// Takes a session whose memory can no longer be trusted out of service: its connection is
/// closed, its timers end, and it leaves the registry (on a task: the caller holds its lock), so
/// that the next resume loads it from the log.
pub(super) fn discard(session: &Arc<Session>, g: &mut Inner) {
    g.evicted = true;
    for a in g.attached.drain(..) {
        a.conn.kill.notify_one();
    }
    for (_, timer) in g.timers.drain() {
        timer.abort();
    }
    let session = session.clone();
    tokio::spawn(async move {
        let mut sessions = session.shared.sessions.lock().await;
        if sessions.get(&session.id).is_some_and(|s| Arc::ptr_eq(s, &session)) {
            sessions.remove(&session.id);
        }
    });
}
