//! The reducer's rules for sub-agent runs (since 1.3, `spec/subagents.md`): `STATE-064`,
//! `STATE-066`, the call-naming rules of `STATE-067`, and their refusals `STATE-068` …
//! `STATE-075`. The rules that add items to a transcript are in `transcript.rs`, written once for
//! every transcript.

use crate::chat::subagent_complete::SubagentComplete;
use crate::chat::subagent_complete::SubagentEnd;
use crate::chat::subagent_started::SubagentStarted;
use crate::subagent::{open_stream_of, transcript_at_mut, SubagentState, SubagentStatus, MAX_SUBAGENT_DEPTH};
use crate::ui_state::{DisplayItem, ToolCallItem, ToolCallStatus, UiState};
use crate::Id;

use super::{output_item_id, ReduceError};

impl UiState {
    /// `STATE-064`: a running call starts hosting a sub-agent run.
    pub(super) fn apply_subagent_started(&mut self, e: &SubagentStarted) -> Result<(), ReduceError> {
        let (path, call) =
            self.find_call(&e.tool_call_id).ok_or_else(|| ReduceError::UnknownToolCall(e.tool_call_id.clone()))?;
        self.ensure_running(&call.invocation_id)?;
        let has_output = output_item_id(&call.id).is_ok_and(|output| {
            let (index, hosts) = path.split_last().expect("a found call has a path");
            matches!(
                crate::subagent::transcript_at(&self.items, hosts).and_then(|t| t.get(index + 1)),
                Some(DisplayItem::ToolOutput(o)) if o.id == output
            )
        });
        if call.status != ToolCallStatus::Running || call.awaiting_response || call.subagent.is_some() || has_output {
            return Err(ReduceError::NotSubagentHost(e.tool_call_id.clone()));
        }
        // The call sits in a transcript at depth path.len() - 1; its sub-agent runs one deeper.
        if path.len() > MAX_SUBAGENT_DEPTH {
            return Err(ReduceError::SubagentTooDeep(e.tool_call_id.clone()));
        }
        self.ensure_thread_continues(e)?;
        let call = self.call_at_mut(&path);
        call.subagent = Some(Box::new(SubagentState {
            thread_id: e.thread_id.clone(),
            name: e.name.clone(),
            input: e.input.clone(),
            continues: e.continues.clone(),
            answers_return: e.answers_return,
            status: SubagentStatus::Running,
            items: Vec::new(),
            response: None,
            returned: false,
            before: None,
            total: None,
        }));
        Ok(())
    }

    /// `STATE-070`: `continues` names the thread's latest call, and `answers_return` is that
    /// call's `returned`; a new thread names no call.
    fn ensure_thread_continues(&self, e: &SubagentStarted) -> Result<(), ReduceError> {
        let latest = self.latest_call_of_thread(&e.thread_id);
        let returned = latest.and_then(|c| c.subagent.as_deref()).is_some_and(|s| s.returned);
        if latest.map(|c| &c.id) != e.continues.as_ref() || returned != e.answers_return {
            return Err(ReduceError::ThreadMismatch(e.thread_id.clone()));
        }
        Ok(())
    }

    /// `STATE-066`: the sub-agent run ends; the host stays open until it settles.
    pub(super) fn apply_subagent_complete(&mut self, e: &SubagentComplete) -> Result<(), ReduceError> {
        let (path, call) =
            self.find_call(&e.tool_call_id).ok_or_else(|| ReduceError::UnknownToolCall(e.tool_call_id.clone()))?;
        let sub = match call.subagent.as_deref() {
            Some(sub) if sub.status == SubagentStatus::Running => sub,
            _ => return Err(ReduceError::SubagentNotRunning(e.tool_call_id.clone())),
        };
        self.ensure_running(&call.invocation_id)?;
        let open_call = sub.items.iter().any(super::requests::is_open_call);
        if open_stream_of(&sub.items).is_some() || open_call {
            return Err(ReduceError::SubagentBusy(e.tool_call_id.clone()));
        }
        if e.returned && e.status != SubagentEnd::Completed {
            return Err(ReduceError::ReturnedNotCompleted(e.tool_call_id.clone()));
        }
        let sub = self.call_at_mut(&path).subagent.as_mut().expect("checked above");
        sub.status = e.status.into();
        sub.response = e.response.clone();
        sub.returned = e.returned;
        Ok(())
    }

    /// The call at `path`, which [`UiState::find_call`] found.
    pub(super) fn call_at_mut(&mut self, path: &[usize]) -> &mut ToolCallItem {
        let (index, hosts) = path.split_last().expect("a found call has a path");
        match transcript_at_mut(&mut self.items, hosts).and_then(|t| t.get_mut(*index)) {
            Some(DisplayItem::ToolCall(call)) => call,
            _ => unreachable!("find_call returned the path of a tool call"),
        }
    }

    /// The open call `id`, anywhere, for the rules that name a call (`STATE-025`, `STATE-026`,
    /// `STATE-067`).
    pub(super) fn open_call_mut(&mut self, id: &Id) -> Result<&mut ToolCallItem, ReduceError> {
        let (path, call) = self.find_call(id).ok_or_else(|| ReduceError::UnknownToolCall(id.clone()))?;
        if call.status.is_terminal() {
            return Err(ReduceError::AlreadySettled { id: call.id.clone(), status: call.status });
        }
        Ok(self.call_at_mut(&path))
    }
}

impl ToolCallItem {
    /// `STATE-073`: refuses to settle a call whose sub-agent still runs.
    pub(super) fn ensure_subagent_ended(&self) -> Result<(), ReduceError> {
        match &self.subagent {
            Some(sub) if sub.status == SubagentStatus::Running => Err(ReduceError::SubagentRunning(self.id.clone())),
            _ => Ok(()),
        }
    }

    /// Whether the call is a **waiting host** (`STATE-067`): its sub-agent runs but waits for the
    /// user, its transcript without an open stream and every open call in it `pending` or a
    /// waiting host itself; a run slice may end `awaiting_input` around it.
    pub(super) fn is_waiting_host(&self) -> bool {
        let Some(sub) = self.subagent.as_deref() else { return false };
        if sub.status != SubagentStatus::Running || open_stream_of(&sub.items).is_some() {
            return false;
        }
        let mut open = sub
            .items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::ToolCall(c) if !c.status.is_terminal() => Some(c),
                _ => None,
            })
            .peekable();
        open.peek().is_some() && open.all(|c| c.status == ToolCallStatus::Pending || c.is_waiting_host())
    }
}
