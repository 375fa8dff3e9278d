//! `session.hello`: opening and resuming sessions, the welcome and the snapshot.

use std::sync::Arc;

use chatwire_schema::session::welcome::{Capability, Limits, SessionWelcome};
use chatwire_schema::{ErrorCode, Id, IndexedUiState, ProtocolVersion, ServerFrame};
use tokio::sync::Mutex;

use super::attachment::Attachment;
use super::catch_up::{catch_up, CatchUp, HeldWindow};
use super::change::ChangeRecord;
use super::expiry::expire_due;
use super::partial::ensure_full;
use super::pipeline::base_seq;
use super::recent::RESUME_RETENTION;
use super::replica::{end_attached, sync};
use super::state::{Fold, History, Inner, Session, Shared};
use super::view::{open_window, patch_frame, seen_state, state_frame, window_snapshot};
use crate::agent::{AgentSpec, Cursor};
use crate::outbox::ConnHandle;
use crate::protocol::{EmitError, Refusal};
use crate::store::{Commit, NewSessionRow};
use crate::util::{constant_time_eq, hash_token, random_id};

/// Opens a new session for a `session.hello` without `resume`.
pub(crate) async fn open_session(
    shared: &Arc<Shared>,
    conn: &ConnHandle,
    hello_id: Id,
    agent: AgentSpec,
) -> Result<Arc<Session>, Refusal> {
    let id = random_id("s", 16);
    let token = random_id("rt", 32);
    let cursor = Cursor::default();
    // welcome = 1, snapshot = 2: the seqs are reserved in the same insert.
    let token_hash = hash_token(token.as_str());
    let row = NewSessionRow {
        id: id.to_string(),
        token_hash: token_hash.clone(),
        agent: serde_json::to_string(&agent).map_err(EmitError::from)?,
        cursor: serde_json::to_string(&cursor).map_err(EmitError::from)?,
        next_seq: 3,
        snapshot_seq: 2,
    };
    shared.store.create_session(row).await.map_err(EmitError::from)?;
    let fold = Fold {
        state: IndexedUiState::default(),
        history: History::default(),
        next_seq: 3,
        token_hash,
        since_checkpoint: 0,
        partial: None,
    };
    let mut inner = Inner::new(fold, shared.agent_for(agent), cursor, None);
    inner.attached.push(Attachment::new(conn.clone(), 2, false, None));
    let session = Arc::new(Session { id: id.clone(), shared: shared.clone(), inner: Mutex::new(inner) });
    shared.sessions.lock().await.insert(id, session.clone());
    let mut g = session.inner.lock().await;
    let welcome = Welcome { hello_id, token, resumed: false, first: 1 };
    greet(&session, &mut g, conn, welcome, None)?;
    drop(g);
    Ok(session)
}

/// What a welcome says besides the session's own facts.
struct Welcome {
    hello_id: Id,
    token: Id,
    resumed: bool,
    /// The welcome's seq; the state frame after it has the next one.
    first: u64,
}

/// Sends `session.welcome` (seq `first`), then at `first + 1` the catch-up patch when there is one
/// (`RESUME-017`), else the `ui_state_snapshot`.
fn greet(
    session: &Session,
    g: &mut Inner,
    conn: &ConnHandle,
    w: Welcome,
    catch_up: Option<CatchUp>,
) -> Result<(), Refusal> {
    let sh = &session.shared;
    let negotiated = &conn.negotiated;
    let welcome = ServerFrame::Welcome(SessionWelcome {
        seq: w.first,
        in_reply_to: w.hello_id,
        version: negotiated.version,
        session_id: session.id.clone(),
        resume_token: w.token,
        resumed: w.resumed,
        capabilities: sh.capabilities(negotiated.version),
        limits: Limits {
            max_frame_bytes: sh.max_frame_bytes,
            max_attached_connections: negotiated.has(&Capability::MultiAttach).then_some(sh.max_attached),
        },
        server: Some(concat!("chatwire-reference/", env!("CARGO_PKG_VERSION")).to_owned()),
        features: negotiated.features.clone(),
        resume_retention: negotiated.has(&Capability::ResumeCatchUp).then_some(RESUME_RETENTION),
    });
    let mut texts = vec![serde_json::to_string(&welcome).map_err(EmitError::from)?];
    let seq = w.first + 1;
    let streams = negotiated.has(&Capability::AssistantStream);
    let view = negotiated.view();
    // The deltas that follow continue the text this state frame holds (STREAM-003, ATTACH-008,
    // REASON-007), where the connection sees the open stream.
    let open_seen = g.state.open_stream().is_some()
        || (view.reasoning && g.state.open_reasoning().is_some())
        || (view.subagents && g.state.open_stream_id().is_none() && g.state.has_open_stream_anywhere());
    let resumed_mid_stream = w.resumed && streams && open_seen;
    let mut window = None;
    let mut page_cache = None;
    if let Some(CatchUp { base_seq, patch, window: held }) = catch_up {
        window = held;
        texts.push(patch_frame(seq, base_seq, &patch, negotiated.version).map_err(EmitError::from)?);
    } else {
        let state = seen_state(&g.state, streams, view);
        if let Some(size) = negotiated.window {
            // WINDOW-002: the newest `size` items and the always-held older ones.
            let view = open_window(&sh.faults, &state, size);
            let held = view.view(&state);
            let held = if w.resumed {
                sh.faults.resume.resume_snapshot(&held)
            } else {
                Some(sh.faults.fanout.present(&held, true))
            };
            // A partial state (`partial.rs`) counts the items it did not read.
            let mut about = view.window(&state);
            about.total += g.partial.map_or(0, |p| p.omitted as u64);
            if let Some(held) = held {
                texts.push(window_snapshot(seq, &held, &about).map_err(EmitError::from)?);
            }
            if sh.faults.window.pages_from_cache() {
                page_cache = Some(view.start());
            }
            window = Some(view);
        } else {
            let snapshot = match w.resumed {
                true => sh.faults.resume.resume_snapshot(&state),
                false => Some(sh.faults.fanout.present(&state, true)),
            };
            if let Some(state) = snapshot {
                texts.push(state_frame("ui_state_snapshot", seq, &state).map_err(EmitError::from)?);
            }
        }
    }
    let page_cache = page_cache.map(|end| g.state.items[..end].to_vec());
    match g.attached.iter_mut().find(|a| a.conn.id == conn.id) {
        Some(a) => {
            a.last_state_seq = seq;
            a.resumed_mid_stream = resumed_mid_stream;
            a.window = window;
            a.page_cache = page_cache;
        }
        None => {
            let mut a = Attachment::new(conn.clone(), seq, resumed_mid_stream, window);
            a.page_cache = page_cache;
            g.attached.push(a);
        }
    }
    // One unit: a snapshot larger than the send queue's bound still goes out after its welcome.
    conn.send_all(texts);
    Ok(())
}

/// Resumes a session for a `session.hello` with `resume`; an older connection is taken over.
pub(crate) async fn resume_session(
    shared: &Arc<Shared>,
    conn: &ConnHandle,
    hello_id: Id,
    resume: &chatwire_schema::session::hello::Resume,
) -> Result<Arc<Session>, Refusal> {
    let rejected = || Refusal::new(ErrorCode::ResumeRejected, "resume refused: unknown session or wrong resume token");
    let cursor_ahead = || {
        Refusal::new(
            ErrorCode::ResumeCursorAhead,
            format!("last_seq {} is ahead of the last seq sent on this session", resume.last_seq),
        )
    };
    if shared.faults.resume.checks_cursor_before_token() {
        if let Some(session) = shared.get_or_load(&resume.session_id).await.map_err(EmitError::from)? {
            if resume.last_seq > session.inner.lock().await.last_seq() {
                return Err(cursor_ahead());
            }
        }
    }
    // The token is checked before the session is looked at, with the same work for an unknown
    // session (compared against a hash no token has) as for a wrong token (RESUME-005).
    if !shared.legacy_resume_lookup {
        let stored = shared.store.token_hash(resume.session_id.as_str()).await.map_err(EmitError::from)?;
        let expected = stored.as_deref().unwrap_or(&shared.unmatchable_token_hash);
        let token_ok = constant_time_eq(hash_token(resume.resume_token.as_str()).as_bytes(), expected.as_bytes());
        if !shared.faults.resume.token_matches(token_ok && stored.is_some()) {
            return Err(rejected());
        }
    }
    // A reload (no state held) that asks for a window reads the window, not the thread (#22).
    let window_open = conn
        .negotiated
        .window
        .filter(|_| resume.last_seq == 0 || !conn.negotiated.has(&Capability::ResumeCatchUp))
        .filter(|_| !shared.faults.window.pages_from_cache());
    // A retry loop only for the race where the session is evicted between lookup and lock.
    for _ in 0..3 {
        let session = match window_open {
            Some(size) => shared.get_or_load_window(&resume.session_id, size).await,
            None => shared.get_or_load(&resume.session_id).await,
        };
        let session = session.map_err(EmitError::from)?.ok_or_else(rejected)?;
        let mut g = session.inner.lock().await;
        if g.evicted {
            continue;
        }
        if window_open.is_none() && ensure_full(&session, &mut g).await.is_err() {
            continue;
        }
        // What other replicas committed reaches this one first (`CLUSTER-001`).
        sync(&session, &mut g).await;
        if g.evicted {
            continue;
        }
        expire_due(&session, &mut g).await?;
        if shared.legacy_resume_lookup {
            // The old path, kept to prove the timing check can fail: an unknown session is
            // refused before any hashing, a known one after a hash and compare.
            let token_ok =
                constant_time_eq(hash_token(resume.resume_token.as_str()).as_bytes(), g.token_hash.as_bytes());
            if !shared.faults.resume.token_matches(token_ok) {
                return Err(rejected());
            }
        }
        if resume.last_seq > g.last_seq() {
            return Err(cursor_ahead());
        }
        let attaches = shared.faults.resume.attaches(conn.negotiated.has(&Capability::MultiAttach));
        if attaches {
            // ATTACH-001: beside the others; past the bound the earliest goes (ATTACH-003).
            while g.attached.len() >= shared.max_attached.max(1) as usize {
                let earliest = &g.attached[0].conn;
                let (earliest, code) = (earliest.id, detached_code(earliest.negotiated.version));
                let message = "more connections attached than this session keeps";
                end_attached(&session, &mut g, earliest, code, message).await;
            }
        } else {
            // ATTACH-002 / SESSION-010: every connection bound to the session is taken over, each
            // still attached until its error's seq is committed.
            let old: Vec<u64> = g.attached.iter().map(|a| a.conn.id).collect();
            for conn_id in old {
                let message = "another connection resumed this session";
                end_attached(&session, &mut g, conn_id, ErrorCode::SessionTakenOver, message).await;
            }
        }
        let catch_up = match conn.negotiated.has(&Capability::ResumeCatchUp) {
            true => {
                let streams = conn.negotiated.has(&Capability::AssistantStream);
                let held = conn.negotiated.window.map(|size| HeldWindow { size, cursor: resume.before.as_ref() });
                catch_up(&session, &g, resume.last_seq, streams, conn.negotiated.view(), held).await?
            }
            false => None,
        };
        // A catch-up's window is placed in the whole state.
        if catch_up.is_some() && ensure_full(&session, &mut g).await.is_err() {
            continue;
        }
        let first = g.next_seq;
        // The state frame's view is the resumed connection's: a base for a streaming resume even
        // mid-stream where this connection streams (STREAM-006).
        let streamed = conn.negotiated.has(&Capability::AssistantStream).then_some(first + 1);
        // A takeover reaches the connections other replicas hold when they replay this commit.
        let takeover = ChangeRecord { takeover: true, ..ChangeRecord::default() };
        let units = (!attaches && shared.store.is_shared()).then(|| serde_json::to_string(&takeover));
        let reserve = Commit {
            base_seq: base_seq(shared, g.lease, first),
            units: units.transpose().map_err(EmitError::from)?,
            next_seq: first + 2,
            state_seqs: vec![first + 1],
            streamed_state_seqs: streamed.into_iter().collect(),
            ..Commit::default()
        };
        shared.store.commit(session.id.as_str(), reserve).await.map_err(EmitError::from)?;
        g.next_seq = first + 2;
        let welcome = Welcome { hello_id, token: resume.resume_token.clone(), resumed: true, first };
        greet(&session, &mut g, conn, welcome, catch_up)?;
        drop(g);
        return Ok(session);
    }
    Err(Refusal::new(ErrorCode::InternalError, "the session could not be loaded, try again"))
}

/// The error a connection that negotiated `version` is ended with when `ATTACH-003` detaches it;
/// its close code follows from the error. `session_detached` (4003) where that version defines it,
/// else the takeover its version does define, `session_taken_over` (4001) (`ATTACH-011`): an
/// older client would take an unknown code for a dropped connection and resume (`COMPAT-005`).
fn detached_code(version: ProtocolVersion) -> ErrorCode {
    match version >= ErrorCode::SessionDetached.since() {
        true => ErrorCode::SessionDetached,
        false => ErrorCode::SessionTakenOver,
    }
}

/// Detaches `conn` from the session (connection closed).
pub(crate) async fn detach(session: &Arc<Session>, conn: &ConnHandle) {
    {
        let mut g = session.inner.lock().await;
        g.attached.retain(|a| a.conn.id != conn.id);
    }
    session.shared.evict_if_quiescent(session).await;
}

#[cfg(test)]
mod tests {
    use chatwire_schema::{CloseCode, SUPPORTED_VERSIONS};

    use super::*;

    #[test]
    fn a_connection_detached_past_the_bound_is_ended_as_its_version_defines() {
        for version in SUPPORTED_VERSIONS.iter().copied() {
            let code = detached_code(version);
            let close = code.close_code();
            if version.minor >= 2 {
                assert_eq!((code, close), (ErrorCode::SessionDetached, Some(CloseCode::SessionDetached)), "{version}");
            } else {
                // ATTACH-011: 1.0 and 1.1 define neither session_detached nor 4003.
                assert_eq!(
                    (code, close),
                    (ErrorCode::SessionTakenOver, Some(CloseCode::SessionTakenOver)),
                    "{version}"
                );
            }
            assert!(code.since() <= version, "{version} is sent {code}, which it does not define (COMPAT-005)");
        }
    }
}
