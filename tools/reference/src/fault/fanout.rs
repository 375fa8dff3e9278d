//! The fan-out seam: what goes on the wire for each event and state change, and to whom.

use chatwire_schema::view::{ConnView, REASONING_USAGE_SINCE};
use std::borrow::Cow;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{DisplayItem, Id, ServerFrame, UiState};

use super::list::{Fault, NoFault};

/// Faults of what the connections are sent; the defaults are the correct server.
pub(crate) trait FanoutFaults: Send + Sync + std::fmt::Debug {
    /// What a connection of `view` is sent of the session's frames (`REASON-001`, `USAGE-004`).
    fn sent_view(&self, view: ConnView) -> ConnView {
        view
    }

    /// The frame put on the wire for an applied event.
    fn announce(&self, frame: ServerFrame) -> ServerFrame {
        frame
    }

    /// The frame put on the wire for the `chat.assistant_message` that ends a stream (after
    /// [`FanoutFaults::announce`]).
    fn announce_stream_end(&self, frame: ServerFrame) -> ServerFrame {
        frame
    }

    /// The first delta announced on a connection that resumed mid-stream (`STREAM-003`), given
    /// the text of the delta committed before it; `None` sends nothing.
    fn first_delta_after_resume(&self, frame: ServerFrame, _previous: Option<&str>) -> Option<ServerFrame> {
        Some(frame)
    }

    /// The state put on the wire in `ui_state_updated` (`snapshot` false) or `ui_state_snapshot`.
    fn present<'s>(&self, state: &'s UiState, _snapshot: bool) -> Cow<'s, UiState> {
        Cow::Borrowed(state)
    }

    /// The ops put on the wire in a `ui_state_patch`.
    fn patch<'o>(&self, ops: &'o [PatchOp]) -> Cow<'o, [PatchOp]> {
        Cow::Borrowed(ops)
    }

    /// The `base_seq` put on the wire in a `ui_state_patch`, given the right one.
    fn patch_base_seq(&self, base_seq: u64) -> u64 {
        base_seq
    }

    /// Whether the events of a change a request caused go to its sender alone.
    fn events_only_to_requester(&self) -> bool {
        false
    }

    /// Whether answers go to every attached connection, not only the requester's.
    fn answers_to_all(&self) -> bool {
        false
    }

    /// Whether a change waits until every attached connection has taken its frames.
    fn fan_out_waits_for_slowest(&self) -> bool {
        false
    }
}

impl FanoutFaults for NoFault {}

impl FanoutFaults for Fault {
    fn sent_view(&self, view: ConnView) -> ConnView {
        match self {
            Fault::ReasoningLeaked if view.version >= REASONING_USAGE_SINCE => ConnView { reasoning: true, ..view },
            _ => view,
        }
    }

    fn announce(&self, frame: ServerFrame) -> ServerFrame {
        match frame {
            frame if *self == Fault::ToolCallIdTooLong => lengthen_tool_call_id(frame),
            ServerFrame::RunComplete(mut rc)
                if *self == Fault::TerminalWhileAwaiting && rc.status == RunCompleteStatus::AwaitingInput =>
            {
                rc.status = RunCompleteStatus::Completed;
                rc.reason = None;
                ServerFrame::RunComplete(rc)
            }
            ServerFrame::ToolCall(mut tc) if *self == Fault::CorrMismatch => {
                tc.corr = Some(Id::new_unchecked_valid(format!("corr-{}", tc.call_index)));
                ServerFrame::ToolCall(tc)
            }
            other => other,
        }
    }

    fn announce_stream_end(&self, frame: ServerFrame) -> ServerFrame {
        match frame {
            ServerFrame::AssistantMessage(mut am) if *self == Fault::StreamFinalTextDiffers => {
                am.markdown.push(' ');
                ServerFrame::AssistantMessage(am)
            }
            other => other,
        }
    }

    fn first_delta_after_resume(&self, frame: ServerFrame, previous: Option<&str>) -> Option<ServerFrame> {
        match (self, frame) {
            (Fault::StreamChunkLostOnResume, _) => None,
            (Fault::StreamChunkRepeatedAfterResume, ServerFrame::AssistantMessageDelta(mut d)) => {
                d.delta = format!("{}{}", previous.unwrap_or_default(), d.delta);
                Some(ServerFrame::AssistantMessageDelta(d))
            }
            (_, frame) => Some(frame),
        }
    }

    fn present<'s>(&self, state: &'s UiState, snapshot: bool) -> Cow<'s, UiState> {
        match self {
            Fault::StateDiverges if !snapshot => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::ToolCall(c) = item {
                        c.progress = None;
                    }
                }
                Cow::Owned(s)
            }
            Fault::DisplayOrderByCompletion => Cow::Owned(order_by_completion(state)),
            _ => Cow::Borrowed(state),
        }
    }

    fn patch<'o>(&self, ops: &'o [PatchOp]) -> Cow<'o, [PatchOp]> {
        let mut ops = ops.to_vec();
        match self {
            Fault::PatchMissingOp if ops.len() >= 2 => {
                ops.pop();
            }
            // The patch counterpart of the update that drops tool progress.
            Fault::StateDiverges => ops.retain(|op| !op.path().ends_with("/progress")),
            _ => {}
        }
        Cow::Owned(ops)
    }

    fn patch_base_seq(&self, base_seq: u64) -> u64 {
        if *self == Fault::PatchWrongBaseSeq {
            base_seq.saturating_sub(1)
        } else {
            base_seq
        }
    }

    fn events_only_to_requester(&self) -> bool {
        *self == Fault::EventOnlyToRequester
    }

    fn answers_to_all(&self) -> bool {
        *self == Fault::AnswerToEveryTab
    }

    fn fan_out_waits_for_slowest(&self) -> bool {
        *self == Fault::StalledTabSlowsOthers
    }
}

/// Fault `tool-call-id-too-long`: every frame names its call by an id padded to 122 characters,
/// one more than `ID-003` allows (the id itself stays a valid identifier).
fn lengthen_tool_call_id(mut frame: ServerFrame) -> ServerFrame {
    let id = match &mut frame {
        ServerFrame::ToolCall(f) => {
            f.corr = None;
            Some(&mut f.tool_call_id)
        }
        ServerFrame::ToolProgress(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolOutput(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolCallComplete(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolCallDismiss(f) => Some(&mut f.tool_call_id),
        _ => None,
    };
    if let Some(id) = id {
        let pad = 122usize.saturating_sub(id.as_str().len() + 1);
        *id = Id::new_unchecked_valid(format!("{id}-{}", "x".repeat(pad)));
    }
    frame
}

/// Reorders the tool calls of each invocation (with their output items) so that settled calls
/// come first, in the order they settled, then the open ones.
fn order_by_completion(state: &UiState) -> UiState {
    let mut out = state.clone();
    let mut start = 0;
    while start < out.items.len() {
        let inv = out.items[start].invocation_id().clone();
        let end =
            out.items[start..].iter().position(|i| i.invocation_id() != &inv).map_or(out.items.len(), |p| start + p);
        // Group each tool call with the output item that follows it.
        let slots: Vec<usize> = (start..end).filter(|&i| matches!(out.items[i], DisplayItem::ToolCall(_))).collect();
        if slots.len() > 1 {
            let first = slots[0];
            let mut groups: Vec<Vec<DisplayItem>> = Vec::new();
            let mut rest: Vec<DisplayItem> = Vec::new();
            for item in out.items.drain(first..end) {
                match item {
                    DisplayItem::ToolCall(_) => groups.push(vec![item]),
                    DisplayItem::ToolOutput(_) if !groups.is_empty() => {
                        if let Some(g) = groups.last_mut() {
                            g.push(item);
                        }
                    }
                    other => rest.push(other),
                }
            }
            groups.sort_by_key(|g| match &g[0] {
                DisplayItem::ToolCall(c) => (c.settled_ts.is_none(), c.settled_ts.clone()),
                _ => (true, None),
            });
            let reordered: Vec<DisplayItem> = groups.into_iter().flatten().chain(rest).collect();
            let len = reordered.len();
            out.items.splice(first..first, reordered);
            start = first + len;
        } else {
            start = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_fault_changes_nothing() {
        let state = UiState::default();
        assert!(matches!(NoFault.present(&state, false), Cow::Borrowed(_)));
        assert_eq!(NoFault.patch_base_seq(7), 7);
    }
}
