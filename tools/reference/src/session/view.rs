//! The frames of a connection's view: the state as it sees it (its minor, whether it sees open
//! streams, its window) and the state frames that carry it (`ui_state_snapshot`,
//! `ui_state_updated`, `ui_state_patch`). Pure: they build text, they send nothing.

use std::borrow::Cow;

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::view::{is_usage_op, ConnView};
use chatwire_schema::window::{Window, WindowView};
use chatwire_schema::{older_minor, ProtocolVersion, ServerFrame, UiState, UiStateVersion};
use serde::Serialize;

use crate::fault::Faults;

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

/// A `ui_state_updated` or `ui_state_snapshot` of `state`.
pub(crate) fn state_frame(frame_type: &'static str, seq: u64, state: &UiState) -> Result<String, serde_json::Error> {
    serde_json::to_string(&StateFrame { frame_type, seq, v: UiStateVersion::V1, state, window: None })
}

/// A windowed `ui_state_snapshot` (`WINDOW-002`): the view and where its window starts.
pub(crate) fn window_snapshot(seq: u64, view: &UiState, window: &Window) -> Result<String, serde_json::Error> {
    let frame =
        StateFrame { frame_type: "ui_state_snapshot", seq, v: UiStateVersion::V1, state: view, window: Some(window) };
    serde_json::to_string(&frame)
}

/// Opens a window of `size` on `state` (`WINDOW-002`, `WINDOW-003`); the planted fault
/// `window-drops-old-pending-call` leaves the always-held older items out.
pub(crate) fn open_window(faults: &Faults, state: &UiState, size: u32) -> WindowView {
    let window = WindowView::open(state, size);
    match faults.window.pins_older_items() {
        true => window,
        false => WindowView::from_parts(size, state.items.len().saturating_sub(size as usize), Vec::new()),
    }
}

/// The state as a connection sees it: without the open stream where it does not see streams
/// (`STREAM-005`), without what the 1.3 features not in force on it hold (`REASON-001`,
/// `USAGE-004`), and as its negotiated minor defines it (`COMPAT-005`): [`ConnView::state`].
pub(crate) fn seen_state(state: &UiState, streams: bool, view: ConnView) -> Cow<'_, UiState> {
    match streams || !state.has_open_stream_anywhere() {
        true => view.state(state),
        false => Cow::Owned(view.state(&state.without_open_stream()).into_owned()),
    }
}

/// The ops of a patch of the state as a connection that sees reasoning sees it (`ops`), as the
/// patch of `view`: ops on `/usage` dropped where `usage` is not in force (`USAGE-004`). Hiding
/// reasoning items takes the state before the ops (`pipeline/stage.rs` does it per event); the
/// minor's shapes are [`patch_frame`]'s.
pub(crate) fn usage_seen(ops: &[PatchOp], view: ConnView) -> Cow<'_, [PatchOp]> {
    if view.usage || !ops.iter().any(is_usage_op) {
        return Cow::Borrowed(ops);
    }
    Cow::Owned(ops.iter().filter(|op| !is_usage_op(op)).cloned().collect())
}

/// `ui_state_patch` serialized from borrowed ops (no copy of the ops per connection group); a
/// unit test checks it matches `ServerFrame` serialization exactly.
#[derive(Serialize)]
struct PatchFrame<'a> {
    #[serde(rename = "type")]
    frame_type: &'static str,
    seq: u64,
    base_seq: u64,
    v: UiStateVersion,
    patch: &'a [PatchOp],
}

/// A `ui_state_patch` frame (`STATE-036`), its ops as the connection's minor defines them.
pub(crate) fn patch_frame(
    seq: u64,
    base_seq: u64,
    patch: &[PatchOp],
    version: ProtocolVersion,
) -> Result<String, serde_json::Error> {
    if version >= older_minor::RESPONSE_SCHEMA_SINCE {
        let frame = PatchFrame { frame_type: "ui_state_patch", seq, base_seq, v: UiStateVersion::V1, patch };
        return serde_json::to_string(&frame);
    }
    let patch = older_minor::patch(patch.to_vec(), version);
    serde_json::to_string(&ServerFrame::UiStatePatch(UiStatePatch { seq, base_seq, v: UiStateVersion::V1, patch }))
}

/// A frame as the connection's view defines it ([`ConnView::frame`]); `None` where it never
/// receives such a frame (its minor has none, or its feature is not in force).
/// `before`: the state before the frame, where the connection sees it by that state
/// ([`ConnView::frame_at`]: a sub-agent's text as its host's output where `subagents` is not in
/// force, `SUBAGENT-002`; a retry naming only the items the view holds).
pub(crate) fn announced_text(
    frame: &ServerFrame,
    view: ConnView,
    before: Option<&UiState>,
) -> Result<Option<String>, serde_json::Error> {
    let seen = match before {
        Some(before) => view.frame_at(frame, before),
        _ => view.frame(frame),
    };
    seen.map(|f| serde_json::to_string(&*f)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn borrowed_patch_frame_serializes_like_the_schema_type() {
        let patch = vec![
            PatchOp::Replace { path: "/run/status".into(), value: serde_json::json!("running") },
            PatchOp::Add { path: "/items/-".into(), value: serde_json::json!({"kind": "x", "id": "i"}) },
        ];
        let typed = ServerFrame::UiStatePatch(UiStatePatch {
            seq: 9,
            base_seq: 7,
            v: UiStateVersion::V1,
            patch: patch.clone(),
        });
        for minor in [older_minor::RESPONSE_SCHEMA_SINCE.minor, older_minor::RESPONSE_SCHEMA_SINCE.minor - 1] {
            let version = ProtocolVersion { major: 1, minor };
            assert_eq!(patch_frame(9, 7, &patch, version).unwrap(), serde_json::to_string(&typed).unwrap());
        }
    }
}
