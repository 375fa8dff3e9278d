//! The one way state changes: commit, then send.

use std::sync::Arc;

use chatwire_schema::script::{ScriptStep, ScriptToolCall, ScriptTurn};
use chatwire_schema::{ClientFrame, ErrorFrame, Id, RunStatus, ServerFrame, UiState, UiStateVersion};
use serde::Serialize;

use super::expiry::schedule_expiry;
use super::{EmitError, Inner, Refusal, Session};
use crate::agent::Cursor;
use crate::store::{Commit, LogKind, LogRow};
use crate::transport::{ConnHandle, Outgoing};

/// One step of emission: an event (followed by one `ui_state_updated`), or a batch of tool calls
/// (one `ui_state_updated` after the whole batch).
#[allow(clippy::large_enum_variant)] // short-lived: built and consumed within one emit
pub(crate) enum Unit {
    Event(ServerFrame),
    Batch(Vec<ServerFrame>),
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

pub(super) fn set_seq(frame: &mut ServerFrame, seq: u64) {
    match frame {
        ServerFrame::Welcome(f) => f.seq = seq,
        ServerFrame::UiStateSnapshot(f) => f.seq = seq,
        ServerFrame::UiStateUpdated(f) => f.seq = seq,
        ServerFrame::UserMessageAccepted(f) => f.seq = seq,
        ServerFrame::RunStarted(f) => f.seq = seq,
        ServerFrame::AssistantMessage(f) => f.seq = seq,
        ServerFrame::ToolCall(f) => f.seq = seq,
        ServerFrame::ToolProgress(f) => f.seq = seq,
        ServerFrame::ToolOutput(f) => f.seq = seq,
        ServerFrame::ToolCallComplete(f) => f.seq = seq,
        ServerFrame::ToolCallDismiss(f) => f.seq = seq,
        ServerFrame::RunComplete(f) => f.seq = seq,
        ServerFrame::RewindComplete(f) => f.seq = seq,
        ServerFrame::Error(f) => f.seq = Some(seq),
        _ => {}
    }
}

/// Commits `change` and sends what it announces. On error nothing is committed or sent.
pub(crate) async fn emit(session: &Arc<Session>, g: &mut Inner, change: Change) -> Result<(), EmitError> {
    let sh = &session.shared;
    let mut trial = g.state.clone();
    let mut seq = g.next_seq;
    let mut log = Vec::new();
    for request in &change.requests {
        log.push(LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: request.type_name().to_owned(),
            frame: serde_json::to_string(request)?,
        });
    }
    let mut wire = Vec::new();
    for unit in change.units {
        let frames = match unit {
            Unit::Event(f) => vec![f],
            Unit::Batch(v) => v,
        };
        for mut frame in frames {
            set_seq(&mut frame, seq);
            let applied = sh.hooks.applied_instead(&frame, &trial);
            let applied = applied.as_ref().unwrap_or(&frame);
            let event = applied.ui_event().ok_or(EmitError::NotAnEvent(applied.type_name()))?;
            trial.apply(event)?;
            if sh.hooks.persists(applied) {
                log.push(LogRow {
                    seq: Some(seq),
                    kind: LogKind::Event,
                    frame_type: applied.type_name().to_owned(),
                    frame: serde_json::to_string(applied)?,
                });
            }
            wire.push(serde_json::to_string(&sh.hooks.announce(frame))?);
            seq += 1;
        }
        wire.push(state_frame("ui_state_updated", seq, &sh.hooks.present(&trial, false))?);
        seq += 1;
    }
    sh.hooks.before_commit(&wire, g.attached.as_ref());
    let commit = Commit {
        next_seq: seq,
        log,
        cursor: change.cursor.as_ref().map(serde_json::to_string).transpose()?,
        turn_plan: change.plan.as_ref().map(serde_json::to_string).transpose()?,
        run_active: Some(trial.run.status == RunStatus::Running),
        add_timers: change.add_timers.iter().map(|(id, d)| (id.to_string(), *d)).collect(),
        remove_timers: change.remove_timers.iter().map(ToString::to_string).collect(),
        clear_timers: false,
        add_pending: change.add_pending.iter().map(|(id, f)| (id.to_string(), f.clone())).collect(),
        remove_pending: change.remove_pending.iter().map(ToString::to_string).collect(),
    };
    sh.store.commit(session.id.as_str(), commit).await?;
    g.state = trial;
    g.next_seq = seq;
    if let Some(cursor) = change.cursor {
        g.cursor = cursor;
    }
    if let Some(plan) = change.plan {
        g.plan = plan;
    }
    for text in wire {
        g.send(Outgoing::Text(text));
    }
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

impl Inner {
    /// Queues a frame for the attached connection, if any.
    pub(super) fn send(&mut self, item: Outgoing) {
        if let Some(conn) = &self.attached {
            if !conn.send(item) {
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
            set_seq(&mut frame, seq);
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
