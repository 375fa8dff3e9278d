//! The rules that add to a transcript (`STATE-012`, `STATE-013`, `STATE-042`, `STATE-054`,
//! `STATE-055`), written once for the top level and for every sub-agent transcript
//! (`STATE-065`): the frame's `parent_call_id` picks the transcript, and each rule sees only that
//! transcript's items, its open stream and its last item. The id checks (`STATE-020`) look at the
//! whole state; they are answered before the transcript is borrowed.

use crate::chat::assistant_message::AssistantMessage;
use crate::chat::assistant_message_delta::AssistantMessageDelta;
use crate::chat::reasoning::Reasoning;
use crate::chat::reasoning_delta::ReasoningDelta;
use crate::chat::tool_call::{InteractionType, ToolCall};
use crate::subagent::{transcript_at_mut, SubagentStatus};
use crate::ui_event::UiEvent;
use crate::ui_state::{AssistantMarkdownItem, DisplayItem, ReasoningItem, ToolCallItem, ToolCallStatus, UiState};
use crate::Id;

use super::{output_item_id, Lookup, ReduceError};

impl UiState {
    /// Applies an item-creating event to the transcript its `parent_call_id` names, the top level
    /// when it names none.
    pub(super) fn apply_to_transcript(&mut self, event: UiEvent<'_>, lookup: Lookup<'_>) -> Result<(), ReduceError> {
        let hosts = match event.parent_call_id() {
            None => Vec::new(),
            Some(parent) => self.running_host(parent)?,
        };
        let invocation = event.invocation_id().expect("an item-creating event names its invocation");
        self.ensure_running(invocation)?;
        // STATE-020 across every transcript, asked before a transcript is borrowed mutably.
        let taken = |state: &UiState, id: &Id| state.id_taken(id, lookup);
        match event {
            UiEvent::AssistantMessage(e) => {
                let taken = taken(self, &e.item_id);
                message(transcript_mut(self, &hosts), e, taken)
            }
            UiEvent::AssistantMessageDelta(e) => {
                let taken = taken(self, &e.item_id);
                message_delta(transcript_mut(self, &hosts), e, taken)
            }
            UiEvent::ReasoningDelta(e) => {
                let taken = taken(self, &e.item_id);
                reasoning_delta(transcript_mut(self, &hosts), e, taken)
            }
            UiEvent::Reasoning(e) => {
                let taken = taken(self, &e.item_id);
                reasoning(transcript_mut(self, &hosts), e, taken)
            }
            UiEvent::ToolCall(e) => {
                let output = output_item_id(&e.tool_call_id).map(|id| taken(self, &id));
                let taken = taken(self, &e.tool_call_id);
                tool_call(transcript_mut(self, &hosts), e, taken, output)
            }
            _ => unreachable!("only item-creating events are applied to a transcript"),
        }
    }

    /// The path of the hosts down to the transcript of `parent`, which must host a running
    /// sub-agent (`STATE-025`, `STATE-071`): the call's path itself.
    pub(super) fn running_host(&self, parent: &Id) -> Result<Vec<usize>, ReduceError> {
        let (path, call) = self.find_call(parent).ok_or_else(|| ReduceError::UnknownToolCall(parent.clone()))?;
        match &call.subagent {
            Some(sub) if sub.status == SubagentStatus::Running => Ok(path),
            _ => Err(ReduceError::SubagentNotRunning(parent.clone())),
        }
    }

    /// Whether an item of any transcript has this id (`STATE-020`).
    pub(super) fn id_taken(&self, id: &Id, lookup: Lookup<'_>) -> bool {
        match lookup {
            Lookup::Scan => self.holds_item_anywhere(id),
            Lookup::Index(index) => index.ids.contains(id),
        }
    }
}

/// The transcript at the end of `hosts`, which [`UiState::running_host`] found.
fn transcript_mut<'a>(state: &'a mut UiState, hosts: &[usize]) -> &'a mut Vec<DisplayItem> {
    transcript_at_mut(&mut state.items, hosts).expect("running_host found the transcript")
}

/// The open text stream of a transcript, to append to or end.
fn open_text_mut(items: &mut [DisplayItem]) -> Option<&mut AssistantMarkdownItem> {
    match items.last_mut() {
        Some(DisplayItem::AssistantMarkdown(m)) if m.streaming => Some(m),
        _ => None,
    }
}

/// The open reasoning stream of a transcript.
fn open_reasoning_mut(items: &mut [DisplayItem]) -> Option<&mut ReasoningItem> {
    match items.last_mut() {
        Some(DisplayItem::Reasoning(r)) if r.streaming => Some(r),
        _ => None,
    }
}

/// `STATE-046`: refuses while a text stream is open.
fn no_open_text(items: &[DisplayItem]) -> Result<(), ReduceError> {
    match items.last() {
        Some(DisplayItem::AssistantMarkdown(m)) if m.streaming => Err(ReduceError::StreamOpen(m.id.clone())),
        _ => Ok(()),
    }
}

/// `STATE-060`: refuses while a reasoning stream is open.
pub(super) fn no_open_reasoning(items: &[DisplayItem]) -> Result<(), ReduceError> {
    match items.last() {
        Some(DisplayItem::Reasoning(r)) if r.streaming => Err(ReduceError::ReasoningStreamOpen(r.id.clone())),
        _ => Ok(()),
    }
}

/// `STATE-012`, `STATE-043`: a whole message, or the end of the open text stream.
fn message(items: &mut Vec<DisplayItem>, e: &AssistantMessage, taken: bool) -> Result<(), ReduceError> {
    no_open_reasoning(items)?;
    if let Some(stream) = open_text_mut(items) {
        if stream.id != e.item_id {
            return Err(ReduceError::StreamOpen(stream.id.clone()));
        }
        if stream.invocation_id == e.invocation_id {
            if stream.markdown != e.markdown {
                return Err(ReduceError::StreamTextMismatch(e.item_id.clone()));
            }
            stream.streaming = false;
            stream.ts = e.ts.clone();
            return Ok(());
        }
    }
    if taken {
        return Err(ReduceError::DuplicateItemId(e.item_id.clone()));
    }
    items.push(DisplayItem::AssistantMarkdown(AssistantMarkdownItem {
        id: e.item_id.clone(),
        invocation_id: e.invocation_id.clone(),
        markdown: e.markdown.clone(),
        streaming: false,
        ts: e.ts.clone(),
    }));
    Ok(())
}

/// `STATE-042`: a delta opens or grows the open text stream.
fn message_delta(items: &mut Vec<DisplayItem>, e: &AssistantMessageDelta, taken: bool) -> Result<(), ReduceError> {
    no_open_reasoning(items)?;
    if let Some(stream) = open_text_mut(items) {
        if stream.id != e.item_id {
            return Err(ReduceError::StreamOpen(stream.id.clone()));
        }
        if stream.invocation_id != e.invocation_id {
            return Err(ReduceError::NotStreaming(e.item_id.clone()));
        }
        stream.markdown.push_str(&e.delta);
        return Ok(());
    }
    if taken {
        return Err(ReduceError::NotStreaming(e.item_id.clone()));
    }
    items.push(DisplayItem::AssistantMarkdown(AssistantMarkdownItem {
        id: e.item_id.clone(),
        invocation_id: e.invocation_id.clone(),
        markdown: e.delta.clone(),
        streaming: true,
        ts: e.ts.clone(),
    }));
    Ok(())
}

/// `STATE-054`: a reasoning delta opens or grows the open reasoning stream.
fn reasoning_delta(items: &mut Vec<DisplayItem>, e: &ReasoningDelta, taken: bool) -> Result<(), ReduceError> {
    if let Some(open) = crate::subagent::open_stream_of(items) {
        if open != &e.item_id {
            return Err(ReduceError::ReasoningStreamOpen(open.clone()));
        }
        return match open_reasoning_mut(items) {
            Some(stream) if stream.invocation_id == e.invocation_id => {
                stream.text.push_str(&e.text);
                Ok(())
            }
            // The open stream is a text stream, or another invocation's.
            _ => Err(ReduceError::NotReasoningStream(e.item_id.clone())),
        };
    }
    if taken {
        return Err(ReduceError::NotReasoningStream(e.item_id.clone()));
    }
    items.push(DisplayItem::Reasoning(ReasoningItem {
        id: e.item_id.clone(),
        invocation_id: e.invocation_id.clone(),
        text: e.text.clone(),
        streaming: true,
        redacted: false,
        encrypted: None,
        ts: e.ts.clone(),
    }));
    Ok(())
}

/// `STATE-055`: a whole reasoning item, or the end of the open reasoning stream.
fn reasoning(items: &mut Vec<DisplayItem>, e: &Reasoning, taken: bool) -> Result<(), ReduceError> {
    if e.redacted && !e.text.is_empty() {
        return Err(ReduceError::RedactedWithText(e.item_id.clone()));
    }
    if let Some(open) = crate::subagent::open_stream_of(items) {
        if open != &e.item_id {
            return Err(ReduceError::ReasoningStreamOpen(open.clone()));
        }
        let Some(stream) = open_reasoning_mut(items) else {
            // The open stream is a text stream: a reasoning frame cannot end it.
            return Err(ReduceError::NotReasoningStream(e.item_id.clone()));
        };
        if stream.invocation_id == e.invocation_id {
            if !e.redacted && stream.text != e.text {
                return Err(ReduceError::ReasoningTextMismatch(e.item_id.clone()));
            }
            stream.streaming = false;
            if e.redacted {
                stream.redacted = true;
                stream.text.clear();
            }
            if e.encrypted.is_some() {
                stream.encrypted = e.encrypted.clone();
            }
            stream.ts = e.ts.clone();
            return Ok(());
        }
    }
    if taken {
        return Err(ReduceError::DuplicateItemId(e.item_id.clone()));
    }
    items.push(DisplayItem::Reasoning(ReasoningItem {
        id: e.item_id.clone(),
        invocation_id: e.invocation_id.clone(),
        text: e.text.clone(),
        streaming: false,
        redacted: e.redacted,
        encrypted: e.encrypted.clone(),
        ts: e.ts.clone(),
    }));
    Ok(())
}

/// `STATE-013`: a new call, `pending` when it awaits a response and `running` otherwise.
/// `output_taken` answers whether the id of its future output item is taken, or why the call's id
/// cannot name one.
fn tool_call(
    items: &mut Vec<DisplayItem>,
    e: &ToolCall,
    taken: bool,
    output_taken: Result<bool, ReduceError>,
) -> Result<(), ReduceError> {
    // STATE-046, STATE-060: a stream ends before a tool batch starts.
    no_open_text(items)?;
    no_open_reasoning(items)?;
    if let Some(corr) = &e.corr {
        if corr != &e.tool_call_id {
            return Err(ReduceError::CorrMismatch { id: e.tool_call_id.clone(), corr: corr.clone() });
        }
    }
    let needs_component = matches!(e.interaction_type, InteractionType::UiTool | InteractionType::UiSurface);
    if needs_component && e.component_type.is_none() {
        return Err(ReduceError::MissingComponentType(e.tool_call_id.clone()));
    }
    if taken {
        return Err(ReduceError::DuplicateItemId(e.tool_call_id.clone()));
    }
    if output_taken? {
        let output = output_item_id(&e.tool_call_id)?;
        return Err(ReduceError::DuplicateItemId(output));
    }
    items.push(DisplayItem::ToolCall(ToolCallItem {
        id: e.tool_call_id.clone(),
        invocation_id: e.invocation_id.clone(),
        tool_name: e.tool_name.clone(),
        component_type: e.component_type.clone(),
        workflow_name: e.workflow_name.clone(),
        interaction_type: e.interaction_type,
        display: e.display,
        awaiting_response: e.awaiting_response,
        status: if e.awaiting_response { ToolCallStatus::Pending } else { ToolCallStatus::Running },
        payload: e.payload.clone(),
        response_schema: e.response_schema.clone(),
        progress: None,
        summary: None,
        result: None,
        error: None,
        dismissal: None,
        ts: e.ts.clone(),
        settled_ts: None,
        subagent: None,
    }));
    Ok(())
}
