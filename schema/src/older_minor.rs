//! What a connection that negotiated an older minor sees of the session (`COMPAT-005`): the same
//! events and states, without the members a newer minor added.
//!
//! Spec: `spec/versioning.md#since-annotations`. The session has one state and one seq space;
//! a server sends each connection its negotiated minor's view of them, so a 1.0 or 1.1 connection
//! never sees a 1.2 frame, member or value. Today's only such member is `response_schema` (since
//! 1.2) on `chat.tool_call` and on a tool call item; a 1.2 frame (`chat.cancel_accepted`) is only
//! ever an answer to a 1.2 frame, so it never reaches an older connection. What 1.3 adds is a
//! feature each (`reasoning`, `usage`), so [`crate::view::ConnView`] hides it by what is in force,
//! which an older minor never has, and then applies these functions.

use std::borrow::Cow;

use serde_json::Value;

use crate::patch_op::PatchOp;
use crate::ui_state::DisplayItem;
use crate::{ProtocolVersion, ServerFrame, UiState};

/// The minor that added `response_schema` (`TOOL-025`).
pub const RESPONSE_SCHEMA_SINCE: ProtocolVersion = ProtocolVersion { major: 1, minor: 2 };

/// `state` as a connection that negotiated `version` sees it.
pub fn state(state: &UiState, version: ProtocolVersion) -> Cow<'_, UiState> {
    let has_schema = |i: &DisplayItem| matches!(i, DisplayItem::ToolCall(c) if c.response_schema.is_some());
    if version >= RESPONSE_SCHEMA_SINCE || !state.items.iter().any(has_schema) {
        return Cow::Borrowed(state);
    }
    let mut older = state.clone();
    for item in &mut older.items {
        if let DisplayItem::ToolCall(call) = item {
            call.response_schema = None;
        }
    }
    Cow::Owned(older)
}

/// `frame` as a connection that negotiated `version` sees it; `None` for a frame that minor does
/// not define (a server never sends it there).
pub fn frame(frame: &ServerFrame, version: ProtocolVersion) -> Option<Cow<'_, ServerFrame>> {
    match frame {
        ServerFrame::CancelAccepted(_) | ServerFrame::HistoryPage(_) if version < RESPONSE_SCHEMA_SINCE => None,
        ServerFrame::ToolCall(call) if version < RESPONSE_SCHEMA_SINCE && call.response_schema.is_some() => {
            let mut older = call.clone();
            older.response_schema = None;
            Some(Cow::Owned(ServerFrame::ToolCall(older)))
        }
        _ => Some(Cow::Borrowed(frame)),
    }
}

/// `ops` of a `ui_state_patch` as a connection that negotiated `version` sees them: a tool call
/// item a patch adds comes without `response_schema` (the member never changes after the call is
/// made, so no op addresses it alone).
pub fn patch(mut ops: Vec<PatchOp>, version: ProtocolVersion) -> Vec<PatchOp> {
    if version >= RESPONSE_SCHEMA_SINCE {
        return ops;
    }
    for op in &mut ops {
        if let PatchOp::Add { value, .. } | PatchOp::Replace { value, .. } = op {
            strip_response_schemas(value);
        }
    }
    ops
}

/// Removes `response_schema` from a tool call item, or from every item of an item list or state.
fn strip_response_schemas(value: &mut Value) {
    match value {
        Value::Object(map) if map.get("kind").and_then(Value::as_str) == Some("tool_call") => {
            map.remove("response_schema");
        }
        Value::Object(map) => {
            if let Some(items) = map.get_mut("items") {
                strip_response_schemas(items);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(strip_response_schemas),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const V1_1: ProtocolVersion = ProtocolVersion { major: 1, minor: 1 };

    fn call() -> Value {
        json!({"kind": "tool_call", "id": "c-1", "invocation_id": "inv-1", "tool_name": "form", "interaction_type": "ui_tool",
               "component_type": "form", "display": "inline", "awaiting_response": true, "status": "pending", "payload": {},
               "response_schema": {"type": "string"}, "ts": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn an_older_minor_sees_no_response_schema_in_states_frames_or_patches() {
        let full: UiState = serde_json::from_value(
            json!({"items": [call()], "run": {"status": "awaiting_input", "invocation_id": "inv-1"}}),
        )
        .unwrap();
        let older = state(&full, V1_1);
        assert!(matches!(&older.items[0], DisplayItem::ToolCall(c) if c.response_schema.is_none()));
        assert!(matches!(state(&full, RESPONSE_SCHEMA_SINCE), Cow::Borrowed(_)));
        let ops = patch(vec![PatchOp::Add { path: "/items/-".into(), value: call() }], V1_1);
        assert!(matches!(&ops[0], PatchOp::Add { value, .. } if value.get("response_schema").is_none()));
        let kept = patch(vec![PatchOp::Add { path: "/items/-".into(), value: call() }], RESPONSE_SCHEMA_SINCE);
        assert!(matches!(&kept[0], PatchOp::Add { value, .. } if value.get("response_schema").is_some()));
        let replaced = patch(vec![PatchOp::Replace { path: "/items".into(), value: json!([call()]) }], V1_1);
        assert!(matches!(&replaced[0], PatchOp::Replace { value, .. } if value[0].get("response_schema").is_none()));
    }
}
