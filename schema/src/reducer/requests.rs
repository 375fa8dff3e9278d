//! What a server checks on a client frame against the effective state before it changes anything,
//! and where the change cuts: one function per frame, used by the reference backend and the
//! runner's monitor alike (`spec/retry.md`, `spec/cancel.md`, order in `spec/errors.md`).

use crate::ui_state::{DisplayItem, RunStatus, UiState};
use crate::{ErrorCode, Id};

/// Where a retry naming `items[named]` cuts: the index of the first removed item (`STATE-044`).
/// A call's output item stays with its call: cutting between them would keep the call but drop
/// what it printed. Servers build `removed_item_ids` with it.
pub fn retry_cut(items: &[DisplayItem], named: usize) -> usize {
    match (&items[named], items.get(named + 1)) {
        (DisplayItem::ToolCall(call), Some(DisplayItem::ToolOutput(out))) if out.tool_call_id == call.id => named + 2,
        _ => named + 1,
    }
}

/// Every check a `chat.retry` naming `after_item_id` fails on `state` (`RETRY-004`); the answer is
/// the first of them in [`crate::error_order`], none means it is accepted.
pub fn retry_refusals(state: &UiState, after_item_id: &str, offers_retry: bool) -> Vec<ErrorCode> {
    let mut failing = Vec::new();
    if !offers_retry {
        failing.push(ErrorCode::CapabilityNotOffered);
    }
    if state.run.status.is_active() {
        failing.push(ErrorCode::RunInProgress);
    }
    match state.items.iter().position(|i| i.id().as_str() == after_item_id) {
        None => failing.push(ErrorCode::UnknownItem),
        Some(kept) => {
            if state.latest_user_invocation() != Some(state.items[kept].invocation_id()) {
                failing.push(ErrorCode::ItemNotInLatestTurn);
            }
            if state.items[..=kept].iter().any(is_open_call) {
                failing.push(ErrorCode::RetryKeepsOpenCall);
            }
        }
    }
    failing
}

/// Whether `item` is a tool call still `pending` or `running`.
pub fn is_open_call(item: &DisplayItem) -> bool {
    matches!(item, DisplayItem::ToolCall(c) if !c.status.is_terminal())
}

/// Every check a `chat.cancel` naming `invocation_id` fails on `state` (`CANCEL-006`): the server
/// offers `cancel`, the invocation is in the effective state, and it is the current run, `running`
/// or `awaiting_input`. The answer is the first in [`crate::error_order`].
pub fn cancel_refusals(state: &UiState, invocation_id: &Id, offers_cancel: bool) -> Vec<ErrorCode> {
    let mut failing = Vec::new();
    if !offers_cancel {
        failing.push(ErrorCode::CapabilityNotOffered);
    }
    if !state.has_invocation(invocation_id) {
        failing.push(ErrorCode::UnknownInvocation);
    }
    let current = state.run.invocation_id.as_ref() == Some(invocation_id);
    if !current || !matches!(state.run.status, RunStatus::Running | RunStatus::AwaitingInput) {
        failing.push(ErrorCode::RunNotActive);
    }
    failing
}

/// What an accepted cancel closes (`CANCEL-003`, `CANCEL-004`), in the order its events close
/// them: a turn that waits for the user (`awaiting_input`) first gets a run slice again
/// (`chat.run_started`, as a response would open one: `RUN-007`), since only a slice in progress
/// can end (`STATE-022`); then the open stream of the run (nothing else may follow an open stream,
/// `STATE-046`), every open tool call of the turn in item order, and the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CancelScope {
    /// The turn waits for the user: a `chat.run_started` opens the slice the cancel then ends.
    pub reopens: bool,
    /// The open stream of the cancelled run, text or reasoning, with exactly the text streamed so far.
    pub stream: Option<(Id, String)>,
    /// Whether that stream is a reasoning stream (since 1.3): a `chat.reasoning` ends it, not a
    /// `chat.assistant_message` (`STATE-055`, `spec/reasoning.md`).
    pub stream_is_reasoning: bool,
    /// Every `pending` or `running` call of the turn, in item order.
    pub open_calls: Vec<Id>,
}

impl CancelScope {
    /// What a cancel of `invocation_id` closes in `state`.
    pub fn of(state: &UiState, invocation_id: &Id) -> CancelScope {
        let text = state
            .open_stream()
            .filter(|m| &m.invocation_id == invocation_id)
            .map(|m| (m.id.clone(), m.markdown.clone()));
        let reasoning = state
            .open_reasoning()
            .filter(|r| &r.invocation_id == invocation_id)
            .map(|r| (r.id.clone(), r.text.clone()));
        let stream_is_reasoning = reasoning.is_some();
        let open_calls = state.open_tool_calls(Some(invocation_id)).map(|c| c.id.clone()).collect();
        let reopens =
            state.run.status == RunStatus::AwaitingInput && state.run.invocation_id.as_ref() == Some(invocation_id);
        CancelScope { reopens, stream: text.or(reasoning), stream_is_reasoning, open_calls }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(v: serde_json::Value) -> UiState {
        serde_json::from_value(v).expect("a state")
    }

    fn call(id: &str, status: &str) -> serde_json::Value {
        json!({"kind": "tool_call", "id": id, "invocation_id": "inv-1", "tool_name": "t", "interaction_type": "auto_tool",
               "display": "inline", "awaiting_response": false, "status": status, "payload": {}, "ts": "2026-01-01T00:00:00Z"})
    }

    fn user() -> serde_json::Value {
        json!({"kind": "user_message", "id": "u-1", "invocation_id": "inv-1", "client_message_id": "m-1", "text": "hi",
               "ts": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn a_cancel_is_refused_in_the_stated_order_and_accepted_only_for_the_current_open_run() {
        use ErrorCode::*;
        let id = |s: &str| Id::parse(s).unwrap();
        let running = state(
            json!({"items": [user(), call("c-1", "running")], "run": {"status": "running", "invocation_id": "inv-1"}}),
        );
        assert_eq!(cancel_refusals(&running, &id("inv-1"), true), vec![]);
        assert_eq!(cancel_refusals(&running, &id("inv-1"), false), vec![CapabilityNotOffered]);
        assert_eq!(cancel_refusals(&running, &id("inv-9"), true), vec![UnknownInvocation, RunNotActive]);
        let done = state(json!({"items": [user()], "run": {"status": "completed", "invocation_id": "inv-1"}}));
        assert_eq!(cancel_refusals(&done, &id("inv-1"), true), vec![RunNotActive]);
        let waiting = state(json!({"items": [user()], "run": {"status": "awaiting_input", "invocation_id": "inv-1"}}));
        assert_eq!(cancel_refusals(&waiting, &id("inv-1"), true), vec![]);
        let scope = CancelScope::of(&running, &id("inv-1"));
        assert_eq!(scope, CancelScope { open_calls: vec![id("c-1")], ..CancelScope::default() });
        assert!(CancelScope::of(&waiting, &id("inv-1")).reopens);
        // An open reasoning stream is the stream a cancel ends first (since 1.3).
        let reasoning = json!({"kind": "reasoning", "id": "r-1", "invocation_id": "inv-1", "text": "so far",
            "streaming": true, "ts": "2026-01-01T00:00:00Z"});
        let thinking =
            state(json!({"items": [user(), reasoning], "run": {"status": "running", "invocation_id": "inv-1"}}));
        let scope = CancelScope::of(&thinking, &id("inv-1"));
        assert_eq!((scope.stream, scope.stream_is_reasoning), (Some((id("r-1"), "so far".to_owned())), true));
        assert_eq!(CancelScope::of(&thinking, &id("inv-9")).stream, None);
    }

    #[test]
    fn a_retry_is_refused_in_the_stated_order() {
        use ErrorCode::*;
        let open = state(
            json!({"items": [user(), call("c-1", "running")], "run": {"status": "running", "invocation_id": "inv-1"}}),
        );
        assert_eq!(retry_refusals(&open, "c-1", false), vec![CapabilityNotOffered, RunInProgress, RetryKeepsOpenCall]);
        assert_eq!(retry_refusals(&open, "x", true), vec![RunInProgress, UnknownItem]);
        let done = state(
            json!({"items": [user(), call("c-1", "completed")], "run": {"status": "completed", "invocation_id": "inv-1"}}),
        );
        assert_eq!(retry_refusals(&done, "u-1", true), vec![]);
    }
}
