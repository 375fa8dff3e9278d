//! The slice a settlement opens (`spec/run-completion.md`, RUN-007): a response or an expiry that
//! settles a `pending` call while its turn is `awaiting_input` comes after the `chat.run_started`
//! of that turn. The reducer accepts the settlement either way, so only this check tells a
//! missing `run_started` from one that never had a reason to come (no expiry, no settlement: the
//! scenario step waiting for it names what it waited for).

use chatwire_schema::chat::tool_call_dismiss::Initiator;
use chatwire_schema::{ReqId, RunStatus, ServerFrame, ToolCallStatus, UiState};

use chatwire_schema::requirements::Level;

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const RUN_007: ReqId = ReqId::new("RUN-007");

/// A response or an expiry settles a pending call inside a slice of its turn.
pub static RUN_STARTED_BEFORE_SETTLEMENT: CheckDef = CheckDef {
    id: "run-started-before-settlement",
    requirements: &[RUN_007],
    summary: "a completion, expiry or client dismissal of a pending call whose turn awaits input comes after that turn's chat.run_started",
    level: Level::Must,
};

/// The settlement check: judged against the state the connection holds before the frame.
#[derive(Debug, Default)]
pub(crate) struct Reopen;

impl Check for Reopen {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        settlement(cx.frame, cx.state(), out);
    }
}

/// Judges `frame` against `state`, the connection's state before it.
fn settlement(frame: &ServerFrame, state: Option<&UiState>, out: &mut Out) {
    let call = match frame {
        ServerFrame::ToolCallComplete(f) => &f.tool_call_id,
        // A server's dismissal (a superseded question, `TURN-004`; a cancel) reopens no turn.
        ServerFrame::ToolCallDismiss(f) if f.initiated_by == Initiator::Client => &f.tool_call_id,
        _ => return,
    };
    let Some(state) = state else { return };
    let Some(item) = state.tool_call(call).filter(|c| c.status == ToolCallStatus::Pending) else { return };
    if state.run.invocation_id.as_ref() != Some(&item.invocation_id) {
        return;
    }
    match state.run.status {
        RunStatus::Running => out.eval(&RUN_STARTED_BEFORE_SETTLEMENT, RUN_007),
        RunStatus::AwaitingInput => out.fail(
            &RUN_STARTED_BEFORE_SETTLEMENT,
            RUN_007,
            format!(
                "{} settles the pending call {call} while its turn awaits input, before the chat.run_started of the slice it opens",
                frame.type_name()
            ),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn state(run: &str) -> UiState {
        serde_json::from_value(json!({
            "items": [{"kind": "tool_call", "id": "tc-1", "invocation_id": "inv-1", "tool_name": "t",
                "interaction_type": "ui_tool", "component_type": "C", "display": "inline", "awaiting_response": true,
                "payload": {}, "status": "pending", "ts": "2026-01-15T10:00:00Z"}],
            "run": {"status": run, "invocation_id": "inv-1"}
        }))
        .unwrap()
    }

    fn judge(run: &str, frame: serde_json::Value) -> (usize, usize) {
        let frame: ServerFrame = serde_json::from_value(frame).unwrap();
        let mut out = Out::default();
        settlement(&frame, Some(&state(run)), &mut out);
        (out.evaluated.len(), out.raws.len())
    }

    #[test]
    fn a_settlement_of_a_turn_that_awaits_input_needs_its_run_started_first() {
        let expired = json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": "tc-1", "status": "expired",
            "error": "expired", "ts": "2026-01-15T10:00:00Z"});
        assert_eq!(judge("running", expired.clone()), (1, 0), "inside the slice the expiry opened");
        assert_eq!(judge("awaiting_input", expired), (0, 1), "no run_started before it");
        let by_client = json!({"type": "chat.tool_call_dismiss", "seq": 9, "tool_call_id": "tc-1",
            "initiated_by": "client", "ts": "2026-01-15T10:00:00Z"});
        assert_eq!(judge("awaiting_input", by_client), (0, 1));
        let by_server = json!({"type": "chat.tool_call_dismiss", "seq": 9, "tool_call_id": "tc-1",
            "initiated_by": "server", "ts": "2026-01-15T10:00:00Z"});
        assert_eq!(judge("awaiting_input", by_server), (0, 0), "a superseded question reopens no turn");
    }
}
