//! The frame-order checks of one connection, called from [`super`] in frame order: `seq`, one
//! state frame per event or batch, the stream's script, batch order, and the ids a frame
//! introduces or names.

use super::*;

/// SEQ-001 / SEQ-002: present exactly on session frames, strictly growing on the connection.
pub(super) fn check_seq(c: &mut ConnState, frame: &ServerFrame, out: &mut Out) {
    match frame.seq() {
        Some(seq) => {
            match c.last_seq {
                Some(prev) if seq <= prev => {
                    out.fail(&SEQ_INCREASING, SEQ_001, format!("seq {seq} after seq {prev} on this connection"))
                }
                Some(_) => out.eval(&SEQ_INCREASING, SEQ_001),
                None => {}
            }
            c.last_seq = Some(seq);
        }
        None if c.session.is_some() => {
            out.fail(&SEQ_INCREASING, SEQ_002, "an error on a connection bound to a session has no seq")
        }
        None => {}
    }
    if matches!(frame, ServerFrame::Error(_)) && c.session.is_some() && frame.seq().is_some() {
        out.eval(&SEQ_INCREASING, SEQ_002);
    }
}

/// STATE-003 / STATE-007 / MULTI-002: the frame after an event is its update; where patches are in
/// force, its patch (STATE-036). A catch-up patch (right after a resume welcome) is no update.
pub(super) fn check_update_flow(c: &mut ConnState, frame: &ServerFrame, out: &mut Out) {
    let continues_batch = match (frame, &c.batch) {
        (ServerFrame::ToolCall(tc), Some((inv, idx))) => inv == tc.invocation_id.as_str() && tc.call_index == idx + 1,
        _ => false,
    };
    let patches = c.in_force.has(&Capability::UiStatePatch);
    let is_patch = matches!(frame, ServerFrame::UiStatePatch(_));
    let catch_up = is_patch && c.awaiting_snapshot;
    let (due, due_check, due_frame): (ReqId, &'static CheckDef, &str) = if patches {
        (STATE_036, &PATCH_IN_PLACE_OF_UPDATE, "ui_state_patch")
    } else {
        (STATE_003, &UPDATE_AFTER_EVENT, "ui_state_updated")
    };
    let after_delta = std::mem::replace(&mut c.after_delta, matches!(frame, ServerFrame::AssistantMessageDelta(_)));
    // A state frame after frames sent only to other attached connections (ATTACH-004).
    if c.foreign_unknown && matches!(frame, ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_)) {
        c.update_due = true;
    }
    match frame {
        ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_) if !catch_up && after_delta && !c.update_due => {
            out.fail(
                &PATCH_IN_PLACE_OF_UPDATE,
                STREAM_002,
                format!(
                    "{} right after a chat.assistant_message_delta: a delta is its own state change and gets no state frame",
                    frame.type_name()
                ),
            );
        }
        ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_) if !catch_up => {
            if c.update_due {
                if patches == is_patch {
                    out.eval(due_check, due);
                }
                out.eval(&UPDATE_AFTER_EVENT, STATE_007);
            } else {
                out.fail(
                    &UPDATE_AFTER_EVENT,
                    STATE_007,
                    format!("{} without an event since the last state", frame.type_name()),
                );
            }
            c.update_due = false;
            if c.batch.is_some() {
                c.batch_updated = true;
            }
        }
        // A windowed connection's fresh window is the state frame of the cut (WINDOW-006).
        ServerFrame::UiStateSnapshot(_) if c.update_due && c.window.windowed() => {
            out.eval(&UPDATE_AFTER_EVENT, STATE_007);
            c.update_due = false;
        }
        _ if continues_batch && c.batch_updated => {
            out.fail(&UPDATE_AFTER_EVENT, MULTI_002, format!("a {due_frame} came between the tool calls of one batch"));
        }
        _ if continues_batch => out.eval(&UPDATE_AFTER_EVENT, MULTI_002),
        _ if c.update_due => out.fail(
            due_check,
            due,
            format!("{} arrived before the {due_frame} of the previous event", frame.type_name()),
        ),
        _ => {}
    }
    if after_delta && !matches!(frame, ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_)) {
        out.eval(&PATCH_IN_PLACE_OF_UPDATE, STREAM_002);
    }
    if matches!(frame, ServerFrame::AssistantMessageDelta(_)) {
        // Its own state change: no state frame is due (STREAM-002).
        c.update_due = false;
        c.batch_updated = false;
    } else if frame.ui_event().is_some() {
        c.update_due = true;
        if !continues_batch {
            c.batch_updated = false;
        }
    } else if catch_up || matches!(frame, ServerFrame::UiStateSnapshot(_) | ServerFrame::Welcome(_)) {
        c.update_due = false;
    }
}

/// The stream checks on an event (since 1.1): a delta only where `assistant_stream` is in force
/// (SESSION-015), and the script's view of deltas, stream ends and whole messages (SCRIPT-019,
/// STREAM-003). Called before the event is folded in.
/// `cancelled`: the frame is the end of a stream an accepted cancel closed (`CANCEL-004` judges it).
pub(super) fn check_stream(
    c: &mut ConnState,
    script: Option<&SessionScript>,
    frame: &ServerFrame,
    cancelled: bool,
    out: &mut Out,
) {
    c.early_end.next(frame, out);
    let open = c.oracle.expected().and_then(UiState::open_stream);
    match frame {
        ServerFrame::AssistantMessageDelta(d) => {
            // On a 1.0 connection the frame itself is undefined: COMPAT-005 reports it, once.
            if c.version.is_some_and(|v| v.minor >= 1 || v.major > 1) {
                c.in_force.require(Capability::AssistantStream, "chat.assistant_message_delta", out);
            }
            let first_after_resume = std::mem::take(&mut c.resumed_stream);
            let text = match open {
                Some(m) if m.id == d.item_id => m.markdown.as_str(),
                // Another item that is no open stream: the reducer's refusal (STATE-045/046).
                Some(_) => return,
                None if c.oracle.expected().is_some_and(|s| s.items.iter().any(|i| i.id() == &d.item_id)) => return,
                None => "",
            };
            if let Some(script) = script.filter(|s| s.says.streams()) {
                stream::delta(&script.says, text, &d.delta, first_after_resume, out);
            }
        }
        ServerFrame::AssistantMessage(m) => {
            let Some(script) = script.filter(|_| !cancelled) else { return };
            match open {
                Some(o) if o.id == m.item_id => {
                    stream::end(&script.says, &o.markdown, &m.markdown, &m.invocation_id, &mut c.early_end, out)
                }
                _ if c.oracle.expected().is_some_and(|s| s.items.iter().any(|i| i.id() == &m.item_id)) => {}
                _ => stream::whole(&script.says, &m.markdown, c.in_force.has(&Capability::AssistantStream), out),
            }
        }
        _ => {}
    }
}

/// MULTI-001: consecutive calls of one invocation carry call_index 0, 1, 2…
pub(super) fn check_batch(c: &mut ConnState, frame: &ServerFrame, out: &mut Out) {
    if let ServerFrame::ToolCall(tc) = frame {
        let expected = match &c.batch {
            Some((inv, idx)) if inv == tc.invocation_id.as_str() => idx + 1,
            _ => 0,
        };
        if tc.call_index == expected {
            out.eval(&BATCH_ORDER, MULTI_001);
        } else {
            out.fail(
                &BATCH_ORDER,
                MULTI_001,
                format!("tool call with call_index {} where {expected} was due", tc.call_index),
            );
        }
        c.batch = Some((tc.invocation_id.to_string(), tc.call_index));
    } else {
        c.batch = None;
    }
}

/// Ids a frame introduces into the session (each must be new: ID-002). A stream's item is
/// introduced by its first delta; its later deltas and its end name it again (`state`: before the frame).
pub(super) fn introduced_ids(frame: &ServerFrame, state: Option<&UiState>) -> Vec<String> {
    let streaming = |item: &chatwire_schema::Id| state.and_then(UiState::open_stream).is_some_and(|m| &m.id == item);
    match frame {
        ServerFrame::UserMessageAccepted(f) => vec![f.invocation_id.to_string(), f.item_id.to_string()],
        ServerFrame::AssistantMessage(f) if streaming(&f.item_id) => Vec::new(),
        ServerFrame::AssistantMessageDelta(f) if streaming(&f.item_id) => Vec::new(),
        ServerFrame::AssistantMessage(f) => vec![f.item_id.to_string()],
        // Unknown state (a catch-up whose base the monitor never saw): a delta may continue a stream.
        ServerFrame::AssistantMessageDelta(f)
            if state.is_some_and(|s| !s.items.iter().any(|i| i.id() == &f.item_id)) =>
        {
            vec![f.item_id.to_string()]
        }
        ServerFrame::AssistantMessageDelta(_) => Vec::new(),
        ServerFrame::ToolCall(f) => vec![f.tool_call_id.to_string()],
        _ => Vec::new(),
    }
}

/// The tool call a frame reports on: the call it names, unless it is the `chat.tool_call` that
/// makes it.
pub(super) fn referenced_call(frame: &ServerFrame) -> Option<&chatwire_schema::Id> {
    frame.tool_call_id().filter(|_| !matches!(frame, ServerFrame::ToolCall(_)))
}

/// The status of the call `frame` reports on, when the model shows it settled already (TOOL-010).
pub(super) fn settled_call(state: Option<&UiState>, frame: &ServerFrame) -> Option<String> {
    let call = state?.tool_call(referenced_call(frame)?)?;
    call.status.is_terminal().then(|| format!("{:?}", call.status).to_lowercase())
}
