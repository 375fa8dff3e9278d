//! The frames that are neither a welcome, a state frame nor an error: events, folded into the
//! connection's state by the reducer (every one must be one it accepts, `STATE-006` and the
//! refusal rules), and answers (a history page extends a windowed connection's view).

use chatwire_schema::{ReduceError, ReqId, ServerFrame};

use super::conn::ConnModel;
use super::holding::{model_state, took_state, TookState};
use super::oracle::{rule_of_refusal, settled_call, EVENTS_ACCEPTED};
use super::session::SessionModel;
use super::window;
use crate::finding::Out;

/// Takes `frame` on `c`; a delta, its own state change (STREAM-002), leaves a state.
pub(crate) fn event(
    c: &mut ConnModel,
    track: Option<&mut SessionModel>,
    frame: &ServerFrame,
    out: &mut Out,
) -> Option<TookState> {
    if let ServerFrame::HistoryPage(page) = frame {
        let full = c.oracle.expected().cloned();
        if let Some(whole) = window::page(&mut c.window, full.as_ref(), page, out) {
            // Paged to the first item: the whole state is known again.
            c.oracle.snapshot(&whole);
        }
    }
    c.batch = match frame {
        ServerFrame::ToolCall(tc) => Some((tc.invocation_id.to_string(), tc.call_index)),
        _ => None,
    };
    if frame.ui_event().is_some() && !c.features.is_empty() {
        c.since_state.push(frame);
    }
    fold(c, frame, out);
    let seq = frame.seq().filter(|_| frame.is_stream_delta())?;
    // A delta is its own state change (STREAM-002): the state it gives is the base of the next
    // patch and a catch-up's possible cursor.
    let state = model_state(c);
    if c.window.windowed() {
        // The delta grows the open stream, the last item, which every view holds.
        window::delta(&mut c.window, c.oracle.expected());
    }
    Some(took_state(c, track, seq, state, false))
}

/// Folds the event `frame` carries (if any) into the connection's state: `EVENTS_ACCEPTED`.
fn fold(c: &mut ConnModel, frame: &ServerFrame, out: &mut Out) {
    let Some(event) = frame.ui_event() else { return };
    c.event_refused = false;
    let settled_before = settled_call(c.oracle.expected(), frame);
    if let Some(shadow) = c.shadow.as_mut() {
        // Refusals are the oracle's to report; the shadow only follows.
        let _ = shadow.apply(event);
    }
    match c.oracle.apply(event) {
        Ok(()) => {
            out.eval(&EVENTS_ACCEPTED, ReqId::new("STATE-006"));
            for r in event.refusal_rules() {
                out.eval(&EVENTS_ACCEPTED, *r);
            }
        }
        // Charged once, to the requirement the server broke (TOOL-004, TOOL-010). The call itself
        // is folded in as announced, so the oracle keeps following the session instead of
        // charging every later state to STATE-004.
        Err(ReduceError::CorrMismatch { .. }) => {
            if let ServerFrame::ToolCall(tc) = frame {
                let corrected =
                    ServerFrame::ToolCall(chatwire_schema::chat::tool_call::ToolCall { corr: None, ..tc.clone() });
                if let Some(event) = corrected.ui_event() {
                    let _ = c.oracle.apply(event);
                }
            }
        }
        Err(ReduceError::AlreadySettled { .. }) if settled_before.is_some() => c.event_refused = true,
        Err(e) => {
            c.event_refused = true;
            out.fail(
                &EVENTS_ACCEPTED,
                rule_of_refusal(&e),
                format!("{} (an event under {}): the reducer refuses it: {e}", frame.type_name(), event.rule()),
            )
        }
    }
}
