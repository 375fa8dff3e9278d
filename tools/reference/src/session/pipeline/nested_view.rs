//! Sub-agents in the fan-out (`spec/subagents.md`): which events need the state before them to be
//! seen right, and the ops of an event as a connection that is not the whole view sees them.
//!
//! A connection where `subagents` is not in force sees a host's texts as its output
//! (`SUBAGENT-002`, [`ConnView::frame_at`]) and every later item one place further; one that does
//! not see streams or reasoning sees no open nested stream and no nested reasoning. For events of
//! a transcript, and for every event of a session holding a sub-agent on a connection without
//! `subagents`, the ops are those of the frame the connection sees applied to its view of the state
//! before (the view commutes with the reducer: `chatwire_schema::view`).

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::view::ConnView;
use chatwire_schema::{ReduceError, ServerFrame, UiState, PROTOCOL_VERSION};

/// The view of a connection where `subagents` is not in force, as far as which frames it gets goes.
pub(super) const BLIND: ConnView =
    ConnView { version: PROTOCOL_VERSION, reasoning: true, usage: true, subagents: false };

/// Whether `frame`, applied to `state`, changes a transcript: it creates an item in one, starts or
/// ends a sub-agent run, or names a call of a transcript.
pub(super) fn in_transcript(frame: &ServerFrame, state: &UiState) -> bool {
    let facts = frame.facts();
    facts.parent_call_id().is_some()
        || matches!(frame, ServerFrame::SubagentStarted(_) | ServerFrame::SubagentComplete(_))
        || facts.tool_call_id().is_some_and(|id| state.find_call(id).is_some_and(|(path, _)| path.len() > 1))
}

/// The ops of `frame` for a connection that sees streams (`streams`), reasoning (`reasoning`) and
/// transcripts (`subagents`), `before` being the whole state before it: the frame it sees applied
/// to its view of `before`; none where it sees no frame.
pub(super) fn view_ops(
    before: &UiState,
    frame: &ServerFrame,
    streams: bool,
    reasoning: bool,
    subagents: bool,
) -> Result<Vec<PatchOp>, ReduceError> {
    let view = ConnView { version: PROTOCOL_VERSION, reasoning, usage: true, subagents };
    let shown = view.frame_at(frame, before);
    let Some(event) = shown.as_deref().and_then(ServerFrame::ui_event) else { return Ok(Vec::new()) };
    if !streams && event.is_stream_delta() {
        return Ok(Vec::new());
    }
    let base = match streams {
        true => view.state(before).into_owned(),
        false => view.state(&before.without_open_stream()).into_owned(),
    };
    let mut base = base;
    base.apply_with_patch(event)
}
