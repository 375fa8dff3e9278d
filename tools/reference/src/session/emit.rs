//! The one way state changes: commit, then send.

use std::borrow::Cow;
use std::sync::Arc;

use chatwire_schema::script::{ScriptStep, ScriptToolCall, ScriptTurn};
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::window::{ProjectError, Window, WindowView};
use chatwire_schema::{
    older_minor, ClientFrame, ErrorFrame, Id, ProtocolVersion, RunStatus, ServerFrame, UiEvent, UiState, UiStateVersion,
};
use serde::Serialize;

use super::expiry::schedule_expiry;
use super::fanout::{self, Group, View};
use super::recent::RecentEvent;
use super::replica::{self, ChangeRecord};
use super::{EmitError, Inner, Refusal, Session};
use crate::agent::Cursor;
use crate::store::{Commit, LogKind, LogRow, StoreError};
use crate::transport::{ConnHandle, Outgoing};

/// Seqs one reservation sets aside for frames that change no state ([`Inner::take_reserved_seq`]):
/// a refusal costs a commit (an fsync under `Durability::Full`) once per this many.
pub(crate) const SEQ_RESERVATION: u64 = 1000;

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
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<&'a Window>,
}

pub(super) fn state_frame(frame_type: &'static str, seq: u64, state: &UiState) -> Result<String, serde_json::Error> {
    serde_json::to_string(&StateFrame { frame_type, seq, v: UiStateVersion::V1, state, window: None })
}

/// A windowed `ui_state_snapshot` (`WINDOW-002`): the view and where its window starts.
pub(super) fn window_snapshot(seq: u64, view: &UiState, window: &Window) -> Result<String, serde_json::Error> {
    let frame =
        StateFrame { frame_type: "ui_state_snapshot", seq, v: UiStateVersion::V1, state: view, window: Some(window) };
    serde_json::to_string(&frame)
}

/// Opens a window of `size` on `state` (`WINDOW-002`, `WINDOW-003`); the planted fault
/// `window-drops-old-pending-call` leaves the always-held older items out.
pub(super) fn open_window(hooks: &dyn crate::hooks::Hooks, state: &UiState, size: u32) -> WindowView {
    let window = WindowView::open(state, size);
    match hooks.pins_older_items() {
        true => window,
        false => WindowView::from_parts(size, state.items.len().saturating_sub(size as usize), Vec::new()),
    }
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
    log: Vec<LogRow>,
    /// The frames for each group of attached connections.
    groups: Vec<Group>,
    state_seqs: Vec<u64>,
    /// Those that went only to connections that see streams (STREAM-006).
    streamed_state_seqs: Vec<u64>,
    /// The change's events as patches, kept once committed (`recent.rs`).
    recent: Vec<RecentEvent>,
}

/// Commits `change` and sends what it announces. On error nothing is committed or sent, and the
/// session's state is what the log holds.
///
/// The events are applied to the session's state in place: a copy of the whole state per change
/// would make the server's time per event grow with the state. Where a connection gets patches,
/// each state frame is the patch the reducer's change set gives (`STATE-036`), so nothing on this
/// path is proportional to the state; the frames are built once per group of connections that
/// see the same bytes ([`fanout`](super::fanout)).
pub(crate) async fn emit(session: &Arc<Session>, g: &mut Inner, change: Change) -> Result<(), EmitError> {
    let sh = &session.shared;
    // Every path that changes a session makes its state whole first (`partial.rs`); one that did
    // not is refused here rather than committing a change judged on a window.
    if g.partial.is_some() {
        return Err(EmitError::Partial);
    }
    // On a shared store the change is also committed as other replicas replay it (`replica.rs`).
    let record = match sh.store.is_shared() {
        true => Some(serde_json::to_string(&ChangeRecord::of(&change.units))?),
        false => None,
    };
    let base_seq = g.next_seq;
    let was_active = replica::is_active(&g.state);
    let checkpoint = super::checkpoint::due(session, g, &change.units);
    let staged = match stage(session, g, &change.requests, change.units, false) {
        Ok(staged) => staged,
        Err(e) => {
            restore_state(session, g).await;
            return Err(e);
        }
    };
    // The seam sees what the change announces: a connection's frames, or with none attached (a
    // recovery) the events it commits.
    match staged.groups.first() {
        Some(first) => {
            let wire: Vec<String> = first.wire.iter().map(|p| p.text.clone()).collect();
            let conn = first.members.first().and_then(|i| g.attached.get(*i)).map(|a| &a.conn);
            sh.hooks.before_commit(&wire, conn);
        }
        None => {
            let events = staged.log.iter().filter(|row| matches!(row.kind, LogKind::Event));
            sh.hooks.before_commit(&events.map(|row| row.frame.clone()).collect::<Vec<_>>(), None);
        }
    }
    let lease = replica::lease_op(sh, g.lease, was_active, replica::is_active(&g.state));
    let commit = (|| {
        Ok::<_, serde_json::Error>(Commit {
            base_seq: replica::base_seq(sh, g.lease, base_seq),
            lease,
            notify: sh.hooks.notifies(replica::is_active(&g.state)),
            units: record,
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
            streamed_state_seqs: staged.streamed_state_seqs,
        })
    })();
    let committed = match commit {
        Ok(commit) => sh.store.commit(session.id.as_str(), commit).await.map_err(EmitError::from),
        Err(e) => Err(EmitError::from(e)),
    };
    let token = match committed {
        Ok(token) => token,
        Err(e) => {
            if matches!(e, EmitError::Store(StoreError::Fenced)) {
                replica::lost_lease(g);
            }
            restore_state(session, g).await;
            return Err(e);
        }
    };
    replica::after_commit(g, lease, token);
    g.next_seq = staged.next_seq;
    super::checkpoint::after_commit(session, g, checkpoint);
    for event in staged.recent {
        g.recent.push(event);
    }
    if let Some(cursor) = change.cursor {
        g.cursor = cursor;
    }
    if let Some(plan) = change.plan {
        g.plan = plan;
    }
    if sh.hooks.fan_out_waits_for_slowest() {
        wait_for_slowest(&g.attached).await;
    }
    fanout::deliver(&mut g.attached, staged.groups);
    for id in change.remove_timers {
        if let Some(handle) = g.timers.remove(&id) {
            handle.abort();
        }
    }
    // Deadlines are armed by the replica that drives the session (`CLUSTER-003`).
    if !sh.store.is_shared() || g.lease.is_some() {
        for (id, deadline) in change.add_timers {
            schedule_expiry(session, g, id, deadline);
        }
    }
    Ok(())
}

/// Replays a change another replica committed (`replica.rs`): its events are applied with the
/// seqs they were committed with, and this replica's connections get what the committer's would
/// have, answers excepted (they went to the requester, `ATTACH-005`). Returns the first seq the
/// change did not use.
pub(super) async fn replay_units(session: &Arc<Session>, g: &mut Inner, units: Vec<Unit>) -> Result<u64, EmitError> {
    let staged = stage(session, g, &[], units, true)?;
    // A state frame the committing replica marked as seen only by streaming connections went to
    // one that does not stream here: recorded before it is sent (`STREAM-006`).
    let unstreamed: Vec<u64> =
        staged.state_seqs.iter().filter(|s| !staged.streamed_state_seqs.contains(s)).copied().collect();
    if !unstreamed.is_empty() {
        session.shared.store.mark_unstreamed(session.id.as_str(), &unstreamed).await?;
    }
    for event in staged.recent {
        g.recent.push(event);
    }
    fanout::deliver(&mut g.attached, staged.groups);
    Ok(staged.next_seq)
}

/// The planted fault `stalled-tab-slows-others`: the fan-out waits until every attached
/// connection has taken its frames, as a server writing to each socket in turn would.
async fn wait_for_slowest(attached: &[fanout::Attachment]) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while attached.iter().any(|a| a.conn.queue.bytes() > 64 * 1024 && !a.conn.queue.has_overflowed()) {
        if tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The frame `frame` staged for `group` as its minor defines it: for every member, or for the
/// requester alone where it is an answer and the requester is attached (`ATTACH-005`).
fn push_frame(
    group: &mut Group,
    frame: &ServerFrame,
    requester: Option<u64>,
    answers_to_all: bool,
) -> Result<(), serde_json::Error> {
    let only = if frame.is_answer() && !answers_to_all { requester } else { None };
    if let Some(text) = announced_text(frame, group.view.version)? {
        group.push(only, text);
    }
    Ok(())
}

/// Applies the events of `units` to the session's state in place, stamping seqs, and builds the
/// log rows and each group's frames: after each unit a `ui_state_patch` where the group gets
/// patches, else a `ui_state_updated`. With nothing attached only the log is written.
///
/// A delta is its own state frame (`STREAM-002`): none follows it. A connection that does not see
/// streams gets nothing for a delta, and the stream's end reaches it as a plain assistant message
/// appended to its view (`STATE-012`), the view being the state without its open stream.
///
/// A `replay` (of another replica's commit) sends no answer: its requester is not here.
fn stage(
    session: &Session,
    g: &mut Inner,
    requests: &[ClientFrame],
    units: Vec<Unit>,
    replay: bool,
) -> Result<Staged, EmitError> {
    let hooks = &session.shared.hooks;
    let requester = g.requester.filter(|id| g.attached.iter().any(|a| a.conn.id == *id));
    let push_frame = |group: &mut Group, frame: &ServerFrame, requester, answers_to_all| match replay {
        true if frame.is_answer() => Ok(()),
        _ => push_frame(group, frame, requester, answers_to_all),
    };
    // The planted fault `event-only-to-requester`: a change a request caused goes to its sender alone.
    let only_requester = requester.filter(|_| hooks.events_only_to_requester());
    let answers_to_all = hooks.answers_to_all();
    let mut groups = fanout::groups(&g.attached);
    // Windows move with the ops too, whatever their connection gets (`WINDOW-004`).
    let any_patches = groups.iter().any(|gr| gr.view.patches || gr.window.is_some());
    let mut staged = Staged {
        next_seq: g.next_seq,
        log: Vec::new(),
        groups: Vec::new(),
        state_seqs: Vec::new(),
        streamed_state_seqs: Vec::new(),
        recent: Vec::new(),
    };
    for request in requests {
        staged.log.push(LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: request.type_name().to_owned(),
            frame: serde_json::to_string(request)?,
        });
    }
    for unit in units {
        let frames = match unit {
            Unit::Event(f) => vec![f],
            Unit::Batch(v) => v,
            Unit::Answer(mut frame) => {
                frame.set_seq(staged.next_seq);
                staged.next_seq += 1;
                let frame = hooks.announce(frame);
                for group in &mut groups {
                    push_frame(group, &frame, requester, answers_to_all)?;
                }
                continue;
            }
        };
        // The ops of the unit for connections that see streams, and for those that do not.
        let mut ops_seen = Vec::new();
        let mut ops_unseen = Vec::new();
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
                groups.iter_mut().for_each(|gr| gr.resumed_mid_stream = false);
            }
            // Every event's patch is kept for catch-ups (`recent.rs`), whoever is attached.
            let appends = is_delta && g.state.open_stream().is_some();
            let event_ops = g.state.apply_with_patch(event)?;
            let unseen = match (is_delta, ends_stream) {
                (true, _) => Vec::new(),
                // A connection that never saw the stream: the whole item is new to it.
                (false, true) => {
                    let item = g.state.items.last().map(serde_json::to_value).transpose()?;
                    item.map(|value| PatchOp::Add { path: "/items/-".into(), value }).into_iter().collect()
                }
                (false, false) => event_ops.clone(),
            };
            if any_patches {
                ops_unseen.extend(unseen.iter().cloned());
                ops_seen.extend(event_ops.iter().cloned());
            }
            staged.recent.push(RecentEvent {
                seq,
                delta: is_delta,
                appends,
                seen: event_ops,
                unseen,
                stream_open_after: g.state.open_stream().is_some(),
            });
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
                for group in &mut groups {
                    match only_requester {
                        Some(id) if !announced.is_answer() => {
                            if let Some(text) = announced_text(&announced, group.view.version)? {
                                group.push(Some(id), text);
                            }
                        }
                        _ => push_frame(group, &announced, requester, answers_to_all)?,
                    }
                }
                continue;
            }
            let previous = match &frame {
                ServerFrame::AssistantMessageDelta(d) => g.last_delta.replace(d.delta.clone()),
                _ => None,
            };
            for group in groups.iter_mut().filter(|gr| gr.view.streams) {
                let announced = match std::mem::take(&mut group.resumed_mid_stream) {
                    true => hooks.first_delta_after_resume(frame.clone(), previous.as_deref()),
                    false => Some(frame.clone()),
                };
                if let Some(frame) = announced {
                    push_frame(group, &hooks.announce(frame), requester, answers_to_all)?;
                }
            }
        }
        if only_deltas {
            // STREAM-002: the delta is the state frame of a connection that sees streams, the base
            // of its next patch; a connection that does not see streams has not moved.
            let seq = staged.next_seq - 1;
            staged.state_seqs.push(seq);
            staged.streamed_state_seqs.push(seq);
            groups.iter_mut().filter(|gr| gr.view.streams).for_each(|gr| gr.base = seq);
            continue;
        }
        let seq = staged.next_seq;
        for group in &mut groups {
            let View { patches, streams, version } = group.view;
            if let Some(window) = group.window.as_mut() {
                let ops = if streams { &ops_seen } else { &ops_unseen };
                let text = windowed_state_frame(hooks.as_ref(), &g.state, window, group.view, seq, group.base, ops)?;
                group.push(None, text);
                group.base = seq;
                continue;
            }
            let text = match patches {
                true => {
                    let ops = if streams { ops_seen.clone() } else { ops_unseen.clone() };
                    patch_frame(seq, hooks.patch_base_seq(group.base), hooks.patch(ops), version)?
                }
                false => {
                    let state = seen_state(&g.state, streams, version);
                    state_frame("ui_state_updated", seq, &hooks.present(&state, false))?
                }
            };
            group.push(None, text);
            group.base = seq;
        }
        staged.state_seqs.push(seq);
        // Only what a connection that does not see streams got can be a base without the open
        // stream; a frame nobody here got is judged by the replicas that sent it on (`replica.rs`).
        if groups.iter().all(|gr| gr.view.streams) {
            staged.streamed_state_seqs.push(seq);
        }
        staged.next_seq += 1;
    }
    staged.groups = groups;
    Ok(staged)
}

/// The state frame of a windowed connection for a change whose ops on the whole state (as the
/// connection sees it) are `ops` (`WINDOW-004`, `WINDOW-005`): the ops projected onto its view, or
/// the view itself where it gets whole states; a fresh windowed snapshot where the change cut its
/// cursor item away (`WINDOW-006`).
fn windowed_state_frame(
    hooks: &dyn crate::hooks::Hooks,
    state: &UiState,
    window: &mut WindowView,
    view: View,
    seq: u64,
    base: u64,
    ops: &[PatchOp],
) -> Result<String, serde_json::Error> {
    let projected = match hooks.projects_patches() {
        true => window.project(ops),
        // The planted fault `unheld-change-sent`: the whole state's ops, as a client holding it all would get them.
        false => Ok(ops.to_vec()),
    };
    match projected {
        Ok(ops) if view.patches => patch_frame(seq, base, hooks.patch(ops), view.version),
        Ok(_) => {
            let seen = seen_state(state, view.streams, view.version);
            state_frame("ui_state_updated", seq, &window.view(&seen))
        }
        Err(ProjectError::CursorRemoved | ProjectError::Unsupported { .. }) => {
            let seen = seen_state(state, view.streams, view.version);
            *window = open_window(hooks, &seen, window.size);
            window_snapshot(seq, &window.view(&seen), &window.window(&seen))
        }
    }
}

/// After a failed change: the state goes back to the fold of the log, which holds exactly what
/// was committed. If even the log cannot be read, the session is dropped from memory (its
/// connection closed) so that the next resume loads it afresh.
async fn restore_state(session: &Arc<Session>, g: &mut Inner) {
    match session.shared.store.load_session_from_start(session.id.as_str()).await {
        // Only what this replica had reached: later commits (another replica's, on a shared
        // store) reach its connections by replay, in order.
        Ok(Some(stored)) => g.state = super::registry::fold_log(&session.id, &stored.events, Some(g.next_seq)).0,
        failed => {
            eprintln!("chatwire-reference: session {}: cannot restore the state from the log ({failed:?})", session.id);
            super::registry::discard(session, g);
        }
    }
}

impl Inner {
    /// Whether `conn` is attached to this session.
    pub fn is_attached(&self, conn: &ConnHandle) -> bool {
        self.attached.iter().any(|a| a.conn.id == conn.id)
    }

    /// The highest seq this session has used.
    pub fn last_seq(&self) -> u64 {
        self.next_seq.saturating_sub(1)
    }

    /// Sends a typed error to `conn`, consuming a seq of the session.
    pub async fn send_error(
        &mut self,
        session: &Arc<Session>,
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
    /// without a seq and anything else is not sent. Where another replica committed first, what
    /// it committed is read (and sent on) before the seq is taken again (`CLUSTER-002`).
    pub async fn send_outside_state(&mut self, session: &Arc<Session>, conn: &ConnHandle, mut frame: ServerFrame) {
        let mut persisted = false;
        if !session.shared.store.is_shared() {
            if let Some(seq) = self.take_reserved_seq(session).await {
                frame.set_seq(seq);
                persisted = true;
            }
        }
        for _ in 0..super::CONFLICT_RETRIES {
            if persisted || !session.shared.store.is_shared() {
                break;
            }
            let seq = self.next_seq;
            let reserve = Commit {
                next_seq: seq + 1,
                base_seq: super::replica::base_seq(&session.shared, self.lease, seq),
                ..Commit::default()
            };
            match session.shared.store.commit(session.id.as_str(), reserve).await {
                Ok(_) => {
                    self.next_seq = seq + 1;
                    frame.set_seq(seq);
                    persisted = true;
                    break;
                }
                Err(StoreError::Conflict { .. }) => Box::pin(super::replica::sync(session, self)).await,
                Err(e) => {
                    eprintln!("chatwire-reference: cannot persist seq for an error: {e}");
                    break;
                }
            }
        }
        if !persisted && !matches!(frame, ServerFrame::Error(_)) {
            return;
        }
        if let Ok(text) = serde_json::to_string(&frame) {
            conn.send(Outgoing::Text(text));
        }
    }

    /// The seq of a frame that changes no state (an error, a page) on the embedded store: the
    /// next one, durable without a commit of its own wherever a reservation covers it; one
    /// reservation, itself a commit, covers the next [`SEQ_RESERVATION`] of them. A restart
    /// resumes above every reserved seq (`SEQ-001`); those never sent are a gap (`SEQ-003`).
    /// `None`: the reservation could not be written, and no seq is taken.
    pub(super) async fn take_reserved_seq(&mut self, session: &Session) -> Option<u64> {
        let seq = self.next_seq;
        if seq >= self.seq_reserved {
            let upto = seq + SEQ_RESERVATION;
            if let Err(e) = session.shared.store.reserve_seqs(session.id.as_str(), upto).await {
                eprintln!("chatwire-reference: session {}: cannot reserve seqs: {e}", session.id);
                return None;
            }
            self.seq_reserved = upto;
        }
        self.next_seq = seq + 1;
        Some(seq)
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
            window: None,
        });
        assert_eq!(state_frame("ui_state_snapshot", 2, &state).unwrap(), serde_json::to_string(&typed).unwrap());
    }
}
