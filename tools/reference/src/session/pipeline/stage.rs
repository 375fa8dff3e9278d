//! The stage step of the commit pipeline: applies a change's events to the session's state in
//! place (stamping seqs), and builds what the commit writes (log rows, the seqs of state frames)
//! and what each group of connections is sent (`frames.rs`). Nothing is written or sent here.
//!
//! A delta is its own state frame (`STREAM-002`): none follows it. A connection that does not see
//! streams gets nothing for a delta, and the stream's end reaches it as a plain assistant message
//! appended to its view (`STATE-012`), the view being the state without its open stream.

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::view::ConnView;
use chatwire_schema::{ClientFrame, DisplayItem, ServerFrame, UiEvent, UiState, PROTOCOL_VERSION};

use super::frames::{Frames, UnitOps};
use super::nested_view::{in_transcript, view_ops, BLIND};
use crate::protocol::EmitError;
use crate::session::attachment::Group;
use crate::session::change::Unit;
use crate::session::recent::RecentEvent;
use crate::session::state::{Inner, Session};
use crate::store::{LogKind, LogRow};

/// What a change writes and sends, built before anything is committed.
pub(crate) struct Staged {
    pub next_seq: u64,
    pub log: Vec<LogRow>,
    /// The frames for each group of attached connections.
    pub groups: Vec<Group>,
    pub state_seqs: Vec<u64>,
    /// Those that went only to connections that see streams (STREAM-006).
    pub streamed_state_seqs: Vec<u64>,
    /// The change's events as patches, kept once committed (`recent.rs`).
    pub recent: Vec<RecentEvent>,
}

/// Applies the events of `units` to the session's state in place, stamping seqs, and builds the
/// log rows and each group's frames. With nothing attached only the log is written. A `replay`
/// (of another replica's commit) sends no answer: its requester is not here. `carried`: the
/// groups of the changes staged before this one in the same batch (`batch.rs`), whose frames
/// are not sent yet and whose views this change moves on from; they are given back, this
/// change's frames included, where staging fails.
pub(crate) fn stage(
    session: &Session,
    g: &mut Inner,
    requests: &[ClientFrame],
    units: Vec<Unit>,
    replay: bool,
    carried: Option<&mut Vec<Group>>,
) -> Result<Staged, EmitError> {
    let faults = &session.shared.faults;
    let requester = g.requester.filter(|id| g.attached.iter().any(|a| a.conn.id == *id));
    let (mut frames, carried) = match carried {
        Some(groups) => (Frames::continuing(faults, std::mem::take(groups), requester, replay), Some(groups)),
        None => (Frames::new(faults, &g.attached, requester, replay), None),
    };
    let mut staged = Staged {
        next_seq: g.next_seq,
        log: Vec::new(),
        groups: Vec::new(),
        state_seqs: Vec::new(),
        streamed_state_seqs: Vec::new(),
        recent: Vec::new(),
    };
    let result = stage_units(session, g, requests, units, &mut frames, &mut staged);
    match (result, carried) {
        (Ok(()), _) => {
            staged.groups = frames.into_groups();
            Ok(staged)
        }
        // The carried groups go back to the batch, which takes this change's frames back out.
        (Err(e), Some(groups)) => {
            *groups = frames.into_groups();
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}

/// The body of [`stage`]: the request rows, then each unit's events and state frames.
fn stage_units(
    session: &Session,
    g: &mut Inner,
    requests: &[ClientFrame],
    units: Vec<Unit>,
    frames: &mut Frames<'_>,
    staged: &mut Staged,
) -> Result<(), EmitError> {
    let wants_ops = frames.wants_ops();
    let wanted = frames.wanted_ops();
    for request in requests {
        staged.log.push(LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: request.type_name().to_owned(),
            frame: serde_json::to_string(request)?,
        });
    }
    for unit in units {
        let events = match unit {
            Unit::Event(f) => vec![f],
            Unit::Batch(v) => v,
            Unit::Answer(mut frame) => {
                frame.set_seq(staged.next_seq);
                staged.next_seq += 1;
                frames.answer(frame)?;
                continue;
            }
        };
        let mut ops = UnitOps { wanted, ..UnitOps::default() };
        let mut only_deltas = true;
        // Whether every event is a reasoning frame, which a connection without `reasoning` never
        // receives (`REASON-001`): it then gets no state frame for the unit either.
        let mut reasoning_only = true;
        // Likewise for every event of a transcript that a connection without `subagents` never
        // receives (`SUBAGENT-001`).
        let mut hidden_from_blind = true;
        let blind = frames.has_blind();
        // A unit of one delta has no state frame but itself (`STREAM-002`): no ops are built.
        let lone = events.len() == 1;
        for mut frame in events {
            let seq = staged.next_seq;
            frame.set_seq(seq);
            let applied = apply(session, g, &frame, wants_ops.then_some(&mut ops), lone, blind, staged)?;
            staged.next_seq += 1;
            reasoning_only &= applied.is_reasoning;
            hidden_from_blind &= applied.hidden_from_blind;
            if applied.ends_stream {
                frames.stream_ended();
            }
            let before = applied.before.as_ref();
            if !applied.is_delta {
                only_deltas = false;
                frames.event(frame, applied.ends_stream, before)?;
                continue;
            }
            let previous = match &frame {
                ServerFrame::AssistantMessageDelta(d) => g.last_delta.replace(d.delta.clone()),
                ServerFrame::ReasoningDelta(d) => g.last_delta.replace(d.text.clone()),
                _ => None,
            };
            frames.delta(&frame, previous.as_deref(), before)?;
        }
        if only_deltas {
            let seq = staged.next_seq - 1;
            staged.state_seqs.push(seq);
            staged.streamed_state_seqs.push(seq);
            frames.after_deltas(seq, reasoning_only, hidden_from_blind);
            continue;
        }
        let seq = staged.next_seq;
        if frames.unit_state(&g.state, seq, &ops, reasoning_only, hidden_from_blind)? {
            staged.streamed_state_seqs.push(seq);
        }
        staged.state_seqs.push(seq);
        staged.next_seq += 1;
    }
    Ok(())
}

/// What applying one event was.
struct Applied {
    is_delta: bool,
    ends_stream: bool,
    /// A reasoning frame (`REASON-001`: only connections where `reasoning` is in force get it).
    is_reasoning: bool,
    /// A frame no connection without `subagents` gets (`SUBAGENT-001`).
    hidden_from_blind: bool,
    /// The state before it, where a connection needs it to see the frame (`nested_view.rs`).
    before: Option<UiState>,
}

/// Applies one event to the state (what a planted fault applies instead, where it does), keeps
/// its patch for catch-ups (`recent.rs`) whoever is attached, adds it to the unit's ops where a
/// group wants them, and logs it (unless a planted fault keeps it out of the log).
fn apply(
    session: &Session,
    g: &mut Inner,
    frame: &ServerFrame,
    ops: Option<&mut UnitOps>,
    lone: bool,
    blind: bool,
    staged: &mut Staged,
) -> Result<Applied, EmitError> {
    let faults = &session.shared.faults;
    let instead = faults.commit.applied_instead(frame, &g.state);
    let applied = instead.as_ref().unwrap_or(frame);
    let event = applied.ui_event().ok_or(EmitError::NotAnEvent(applied.type_name()))?;
    let is_delta = event.is_stream_delta();
    let is_reasoning = !PLAIN.sees_event(event);
    let ends_stream = match event {
        UiEvent::AssistantMessage(m) => g.state.open_stream().is_some_and(|open| open.id == m.item_id),
        UiEvent::Reasoning(r) => g.state.open_reasoning().is_some_and(|open| open.id == r.item_id),
        _ => false,
    };
    let appends = is_delta && g.state.open_stream_id().is_some();
    let ops = ops.filter(|_| !(lone && is_delta));
    // Sub-agents: the state before the event, where a connection is seen a frame of a transcript
    // or a session holding one by it (`nested_view.rs`).
    let nested = in_transcript(applied, &g.state);
    let holds_subagents = g.state.holds_subagents();
    // A retry names items by id: where a view hides some, it is seen by the state before it too
    // (`ConnView::frame_at`).
    let retry_seen = matches!(applied, ServerFrame::RetryAccepted(_))
        && (holds_subagents || g.state.items.iter().any(|i| !PLAIN.sees_item(i)));
    let before = (retry_seen || ((nested || holds_subagents) && (blind || (nested && ops.is_some()))))
        .then(|| g.state.state().clone());
    let hidden_from_blind = before.as_ref().is_some_and(|b| BLIND.frame_at(applied, b).is_none());
    // Where a connection that does not see reasoning wants the ops and the state holds reasoning
    // items, its ops are projected onto its view, which needs the items before the event.
    let plain_before = match &ops {
        Some(ops) if ops.wants_plain() && !is_reasoning && g.state.items.iter().any(|i| !PLAIN.sees_item(i)) => {
            Some(g.state.items.clone())
        }
        _ => None,
    };
    let seen = g.state.apply_with_patch(event)?;
    let unseen = match (is_delta, ends_stream) {
        (true, _) => Some(Vec::new()),
        // A connection that never saw the stream: the whole item is new to it.
        (false, true) => {
            let item = g.state.items.last().map(serde_json::to_value).transpose()?;
            Some(item.map(|value| PatchOp::Add { path: "/items/-".into(), value }).into_iter().collect())
        }
        (false, false) => None,
    };
    if let Some(ops) = ops {
        let done = match &before {
            Some(before) => nested_ops(ops, before, applied, nested)?,
            None => [false; 8],
        };
        let unseen_ops = unseen.as_ref().unwrap_or(&seen);
        for (streams, list) in [(true, &seen), (false, unseen_ops)] {
            for subagents in [true, false] {
                let whole = UnitOps::index(streams, true, subagents);
                if ops.wanted[whole] && !done[whole] {
                    ops.lists[whole].extend(list.iter().cloned());
                }
                let plain = UnitOps::index(streams, false, subagents);
                if !ops.wanted[plain] || done[plain] || is_reasoning {
                    continue;
                }
                match &plain_before {
                    Some(items) => ops.lists[plain].extend(without_reasoning(items, streams, list.clone())),
                    None => ops.lists[plain].extend(list.iter().cloned()),
                }
            }
        }
    }
    let seq = frame.seq().unwrap_or_default();
    staged.recent.push(RecentEvent {
        seq,
        delta: is_delta,
        appends,
        seen,
        unseen,
        stream_open_after: g.state.has_open_stream_anywhere(),
        reasoning: is_reasoning,
        nested: nested || holds_subagents,
    });
    if faults.commit.persists(applied) {
        staged.log.push(LogRow {
            seq: Some(seq),
            kind: LogKind::Event,
            frame_type: applied.type_name().to_owned(),
            frame: serde_json::to_string(applied)?,
        });
    }
    Ok(Applied { is_delta, ends_stream, is_reasoning, hidden_from_blind, before })
}

/// The ops of an event for each wanted list that the whole state's ops do not give (`before`: the
/// state before it, `nested`: it changes a transcript): every list of connections without
/// `subagents`, and, for an event of a transcript, every list but the whole view's. Returns which
/// lists it filled.
fn nested_ops(ops: &mut UnitOps, before: &UiState, frame: &ServerFrame, nested: bool) -> Result<[bool; 8], EmitError> {
    let mut done = [false; 8];
    for streams in [true, false] {
        for reasoning in [true, false] {
            for subagents in [true, false] {
                let index = UnitOps::index(streams, reasoning, subagents);
                let whole = streams && reasoning && subagents;
                if !ops.wanted[index] || (subagents && (whole || !nested)) {
                    continue;
                }
                ops.lists[index].extend(view_ops(before, frame, streams, reasoning, subagents)?);
                done[index] = true;
            }
        }
    }
    Ok(done)
}

/// The view of a connection where `reasoning` is not in force, as far as the ops of an event go
/// (usage and the minor are taken off per group, `frames.rs`).
const PLAIN: ConnView = ConnView { version: PROTOCOL_VERSION, reasoning: false, usage: true, subagents: true };

/// `ops` of one event as a connection that does not see reasoning gets them (`REASON-001`):
/// projected onto the items before the event (`items`; without the open stream for a connection
/// that does not see streams, whose ops count without it).
fn without_reasoning(items: &[DisplayItem], streams: bool, ops: Vec<PatchOp>) -> Vec<PatchOp> {
    let before = UiState { items: items.to_vec(), ..UiState::default() };
    let before = match streams {
        true => before,
        false => before.without_open_stream(),
    };
    PLAIN.patch(&before, ops)
}
