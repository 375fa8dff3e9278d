//! The one way state changes: commit, then send.

use std::borrow::Cow;
use std::sync::Arc;

use chatwire_schema::script::{ScriptStep, ScriptToolCall, ScriptTurn};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::{
    older_minor, ClientFrame, ErrorFrame, Id, ProtocolVersion, RunStatus, ServerFrame, UiEvent, UiState,
    UiStateVersion, PROTOCOL_VERSION,
};
use serde::Serialize;

use super::expiry::schedule_expiry;
use super::{EmitError, Inner, Refusal, Session};
use crate::agent::Cursor;
use crate::store::{Commit, LogKind, LogRow};
use crate::transport::{ConnHandle, Outgoing};

/// One step of emission: an event (followed by one state frame), or a batch of tool calls (one
/// state frame after the whole batch).
#[allow(clippy::large_enum_variant)] // short-lived: built and consumed within one emit
pub(crate) enum Unit {
    Event(ServerFrame),
    Batch(Vec<ServerFrame>),
    /// A frame that answers the change's request and changes no state (`chat.cancel_accepted`):
    /// it takes a seq and goes to the requester only; no state frame follows it.
    Answer(ServerFrame),
}

/// Everything one state change does, committed atomically by [`emit`].
#[derive(Default)]
pub(crate) struct Change {
    pub units: Vec<Unit>,
    pub requests: Vec<ClientFrame>,
    pub cursor: Option<Cursor>,
    pub plan: Option<Option<ScriptTurn>>,
    pub add_timers: Vec<(Id, i64)>,
    pub remove_timers: Vec<Id>,
    pub add_pending: Vec<(Id, String)>,
    pub remove_pending: Vec<Id>,
}

/// `ui_state_updated` / `ui_state_snapshot` serialized from a borrowed state (no copy of a large
/// state); a unit test checks it matches `ServerFrame` serialization exactly.
#[derive(Serialize)]
struct StateFrame<'a> {
    #[serde(rename = "type")]
    frame_type: &'static str,
    seq: u64,
    v: UiStateVersion,
    state: &'a UiState,
}

pub(super) fn state_frame(frame_type: &'static str, seq: u64, state: &UiState) -> Result<String, serde_json::Error> {
    serde_json::to_string(&StateFrame { frame_type, seq, v: UiStateVersion::V1, state })
}

/// The state as a connection sees it: without the open stream where it does not see streams
/// (`STREAM-005`), and as its negotiated minor defines it (`COMPAT-005`).
pub(super) fn seen_state(state: &UiState, streams: bool, version: ProtocolVersion) -> Cow<'_, UiState> {
    let state = match streams || state.open_stream().is_none() {
        true => Cow::Borrowed(state),
        false => Cow::Owned(state.without_open_stream()),
    };
    match state {
        Cow::Borrowed(s) => older_minor::state(s, version),
        Cow::Owned(s) => Cow::Owned(older_minor::state(&s, version).into_owned()),
    }
}

/// A `ui_state_patch` frame (`STATE-036`), its ops as the connection's minor defines them.
pub(super) fn patch_frame(
    seq: u64,
    base_seq: u64,
    patch: Vec<PatchOp>,
    version: ProtocolVersion,
) -> Result<String, serde_json::Error> {
    let patch = older_minor::patch(patch, version);
    serde_json::to_string(&ServerFrame::UiStatePatch(UiStatePatch { seq, base_seq, v: UiStateVersion::V1, patch }))
}

/// A frame as the connection's minor defines it; `None` where that minor has no such frame.
fn announced_text(frame: &ServerFrame, version: ProtocolVersion) -> Result<Option<String>, serde_json::Error> {
    older_minor::frame(frame, version).map(|f| serde_json::to_string(&*f)).transpose()
}

/// What a change writes and sends, built before anything is committed.
struct Staged {
    next_seq: u64,
    /// The seq of the change's last state frame, if it has one.
    last_state_seq: Option<u64>,
    log: Vec<LogRow>,
    wire: Vec<String>,
    state_seqs: Vec<u64>,
}

/// Commits `change` and sends what it announces. On error nothing is committed or sent, and the
/// session's state is what the log holds.
///
/// The events are applied to the session's state in place: a copy of the whole state per change
/// would make the server's time per event grow with the state. Where the attached connection gets
/// patches, each state frame is the patch the reducer's change set gives (`STATE-036`), so
/// nothing on this path is proportional to the state.
pub(crate) async fn emit(session: &Arc<Session>, g: &mut Inner, change: Change) -> Result<(), EmitError> {
    let sh = &session.shared;
    let staged = match stage(session, g, &change.requests, change.units) {
        Ok(staged) => staged,
        Err(e) => {
            restore_state(session, g).await;
            return Err(e);
        }
    };
    sh.hooks.before_commit(&staged.wire, g.attached.as_ref());
    let commit = (|| {
        Ok::<_, serde_json::Error>(Commit {
            next_seq: staged.next_seq,
            log: staged.log,
            cursor: change.cursor.as_ref().map(serde_json::to_string).transpose()?,
            turn_plan: change.plan.as_ref().map(serde_json::to_string).transpose()?,
            run_active: Some(g.state.run.status == RunStatus::Running),
            add_timers: change.add_timers.iter().map(|(id, d)| (id.to_string(), *d)).collect(),
            remove_timers: change.remove_timers.iter().map(ToString::to_string).collect(),
            clear_timers: false,
            add_pending: change.add_pending.iter().map(|(id, f)| (id.to_string(), f.clone())).collect(),
            remove_pending: change.remove_pending.iter().map(ToString::to_string).collect(),
            state_seqs: staged.state_seqs,
        })
    })();
    let committed = match commit {
        Ok(commit) => sh.store.commit(session.id.as_str(), commit).await.map_err(EmitError::from),
        Err(e) => Err(EmitError::from(e)),
    };
    if let Err(e) = committed {
        restore_state(session, g).await;
        return Err(e);
    }
    g.next_seq = staged.next_seq;
    if let Some(seq) = staged.last_state_seq {
        g.last_state_seq = seq;
    }
    if let Some(cursor) = change.cursor {
        g.cursor = cursor;
    }
    if let Some(plan) = change.plan {
        g.plan = plan;
    }
    g.send_all(staged.wire);
    for id in change.remove_timers {
        if let Some(handle) = g.timers.remove(&id) {
            handle.abort();
        }
    }
    for (id, deadline) in change.add_timers {
        schedule_expiry(session, g, id, deadline);
    }
    Ok(())
}

/// How the attached connection sees the session: whether state frames go out as patches
/// (`STATE-036`), and whether it sees open streams (`assistant_stream` in force, `STREAM-001`).
#[derive(Clone, Copy)]
struct View {
    patches: bool,
    streams: bool,
    version: ProtocolVersion,
}

/// Applies the events of `units` to the session's state in place, stamping seqs, and builds the
/// log rows and the frames for the attached connection: after each unit a `ui_state_patch` where
/// it gets patches, else a `ui_state_updated`; no state frame when nothing is attached.
///
/// A delta is its own state frame (`STREAM-002`): none follows it. A connection that does not see
/// streams gets nothing for a delta, and the stream's end reaches it as a plain assistant message
/// appended to its view (`STATE-012`), the view being the state without its open stream.
fn stage(session: &Session, g: &mut Inner, requests: &[ClientFrame], units: Vec<Unit>) -> Result<Staged, EmitError> {
    let hooks = &session.shared.hooks;
    let view = g.attached.as_ref().map(|conn| View {
        patches: conn.negotiated.patches,
        streams: conn.negotiated.has(&Capability::AssistantStream),
        version: conn.negotiated.version,
    });
    let version = view.map_or(PROTOCOL_VERSION, |v| v.version);
    let mut staged = Staged {
        next_seq: g.next_seq,
        last_state_seq: None,
        log: Vec::new(),
        wire: Vec::new(),
        state_seqs: Vec::new(),
    };
    for request in requests {
        staged.log.push(LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: request.type_name().to_owned(),
            frame: serde_json::to_string(request)?,
        });
    }
    let mut base = g.last_state_seq;
    for unit in units {
        let frames = match unit {
            Unit::Event(f) => vec![f],
            Unit::Batch(v) => v,
            Unit::Answer(mut frame) => {
                frame.set_seq(staged.next_seq);
                staged.next_seq += 1;
                if view.is_some() {
                    staged.wire.extend(announced_text(&hooks.announce(frame), version)?);
                }
                continue;
            }
        };
        let mut ops = Vec::new();
        let mut only_deltas = true;
        for mut frame in frames {
            let seq = staged.next_seq;
            frame.set_seq(seq);
            let applied = hooks.applied_instead(&frame, &g.state);
            let applied = applied.as_ref().unwrap_or(&frame);
            let event = applied.ui_event().ok_or(EmitError::NotAnEvent(applied.type_name()))?;
            let is_delta = event.is_stream_delta();
            let ends_stream = matches!(event, UiEvent::AssistantMessage(m)
                if g.state.open_stream().is_some_and(|open| open.id == m.item_id));
            if ends_stream {
                g.resumed_mid_stream = false;
            }
            if view.is_some_and(|v| v.patches) {
                let event_ops = g.state.apply_with_patch(event)?;
                if ends_stream && view.is_some_and(|v| !v.streams) {
                    // The connection never saw the stream: the whole item is new to it.
                    let item = g.state.items.last().map(serde_json::to_value).transpose()?;
                    ops.extend(item.map(|value| PatchOp::Add { path: "/items/-".into(), value }));
                } else {
                    ops.extend(event_ops);
                }
            } else {
                g.state.apply(event)?;
            }
            if hooks.persists(applied) {
                staged.log.push(LogRow {
                    seq: Some(seq),
                    kind: LogKind::Event,
                    frame_type: applied.type_name().to_owned(),
                    frame: serde_json::to_string(applied)?,
                });
            }
            staged.next_seq += 1;
            if !is_delta {
                only_deltas = false;
                let announced = match ends_stream {
                    true => hooks.announce_stream_end(hooks.announce(frame)),
                    false => hooks.announce(frame),
                };
                staged.wire.extend(announced_text(&announced, version)?);
                continue;
            }
            let previous = match &frame {
                ServerFrame::AssistantMessageDelta(d) => g.last_delta.replace(d.delta.clone()),
                _ => None,
            };
            if view.is_some_and(|v| v.streams) {
                let after_resume = std::mem::take(&mut g.resumed_mid_stream);
                let announced = match after_resume {
                    true => hooks.first_delta_after_resume(frame, previous.as_deref()),
                    false => Some(frame),
                };
                if let Some(frame) = announced {
                    staged.wire.extend(announced_text(&hooks.announce(frame), version)?);
                }
            }
        }
        if only_deltas {
            // STREAM-002: the delta is the state frame of a connection that sees streams, the base
            // of its next patch; a connection that does not see streams has not moved.
            let seq = staged.next_seq - 1;
            staged.state_seqs.push(seq);
            if view.is_some_and(|v| v.streams) {
                staged.last_state_seq = Some(seq);
                base = seq;
            }
            continue;
        }
        let seq = staged.next_seq;
        match view {
            Some(View { patches: true, .. }) => {
                staged.wire.push(patch_frame(seq, hooks.patch_base_seq(base), hooks.patch(ops), version)?)
            }
            Some(View { patches: false, streams, version }) => {
                let state = seen_state(&g.state, streams, version);
                staged.wire.push(state_frame("ui_state_updated", seq, &hooks.present(&state, false))?)
            }
            None => {}
        }
        staged.state_seqs.push(seq);
        staged.last_state_seq = Some(seq);
        base = seq;
        staged.next_seq += 1;
    }
    Ok(staged)
}

/// After a failed change: the state goes back to the fold of the log, which holds exactly what
/// was committed. If even the log cannot be read, the session is dropped from memory (its
/// connection closed) so that the next resume loads it afresh.
async fn restore_state(session: &Arc<Session>, g: &mut Inner) {
    match session.shared.store.load_session(session.id.as_str()).await {
        Ok(Some(stored)) => g.state = super::registry::fold_log(&session.id, &stored.events).0,
        failed => {
            eprintln!("chatwire-reference: session {}: cannot restore the state from the log ({failed:?})", session.id);
            super::registry::discard(session, g);
        }
    }
}

impl Inner {
    /// Queues the frames of one change for the attached connection, if any, as one unit.
    pub(super) fn send_all(&mut self, texts: Vec<String>) {
        if let Some(conn) = &self.attached {
            if !texts.is_empty() && !conn.send_all(texts) {
                eprintln!("chatwire-reference: connection {} too slow, dropped", conn.id);
                self.attached = None;
            }
        }
    }

    /// Whether `conn` is the connection this session talks to.
    pub fn is_attached(&self, conn: &ConnHandle) -> bool {
        self.attached.as_ref().is_some_and(|a| a.id == conn.id)
    }

    /// The highest seq this session has used.
    pub fn last_seq(&self) -> u64 {
        self.next_seq.saturating_sub(1)
    }

    /// Sends a typed error to `conn`, consuming a seq of the session.
    pub async fn send_error(
        &mut self,
        session: &Session,
        conn: &ConnHandle,
        refusal: Refusal,
        in_reply_to: Option<Id>,
    ) {
        let frame = ErrorFrame {
            seq: None,
            code: refusal.code,
            message: refusal.message,
            in_reply_to,
            fatal: refusal.code.is_fatal(),
            supported_versions: None,
        };
        self.send_outside_state(session, conn, ServerFrame::Error(frame)).await;
    }

    /// Sends a frame that changes no state (an error, or what a planted fault sends instead) to
    /// `conn` with the next seq, which is persisted first; if it cannot be, an error goes out
    /// without a seq and anything else is not sent.
    pub async fn send_outside_state(&mut self, session: &Session, conn: &ConnHandle, mut frame: ServerFrame) {
        let seq = self.next_seq;
        let persisted = session
            .shared
            .store
            .commit(session.id.as_str(), Commit { next_seq: seq + 1, ..Commit::default() })
            .await
            .map_err(|e| eprintln!("chatwire-reference: cannot persist seq for an error: {e}"))
            .is_ok();
        if persisted {
            self.next_seq = seq + 1;
            frame.set_seq(seq);
        } else if !matches!(frame, ServerFrame::Error(_)) {
            return;
        }
        if let Ok(text) = serde_json::to_string(&frame) {
            conn.send(Outgoing::Text(text));
        }
    }

    /// The current plan's scripted call at `index` of the current batch, if any.
    pub(super) fn batch_call(&self, tool_call_id: &Id) -> Option<&ScriptToolCall> {
        let batch = self.cursor.batch.as_ref()?;
        let index = batch.call_ids.iter().position(|c| c == tool_call_id)?;
        match self.plan.as_ref()?.steps.get(self.cursor.step)? {
            ScriptStep::ToolCalls { calls, .. } => calls.get(index),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatwire_schema::ServerFrame;

    #[test]
    fn borrowed_state_frame_serializes_like_the_schema_type() {
        let state = UiState::default();
        let typed = ServerFrame::UiStateUpdated(chatwire_schema::ui_state_updated::UiStateUpdated {
            seq: 7,
            v: UiStateVersion::V1,
            state: state.clone(),
        });
        assert_eq!(state_frame("ui_state_updated", 7, &state).unwrap(), serde_json::to_string(&typed).unwrap());
        let typed = ServerFrame::UiStateSnapshot(chatwire_schema::ui_state_snapshot::UiStateSnapshot {
            seq: 2,
            v: UiStateVersion::V1,
            state: state.clone(),
        });
        assert_eq!(state_frame("ui_state_snapshot", 2, &state).unwrap(), serde_json::to_string(&typed).unwrap());
    }
}
