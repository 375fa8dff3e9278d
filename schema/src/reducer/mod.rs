//! The reducer: `reduce(state, event) -> state`, the reference semantics of UiState.
//!
//! Spec: `spec/ui-state.md#reducer-rules`. Backends build the state they send with it and the
//! conformance runner checks every state it receives against it; no other code decides what an
//! event does to the view. It is pure and deterministic: no clock, no randomness, no I/O. An event
//! that breaks a rule is refused with a [`ReduceError`] and leaves the state exactly as it was.

use std::collections::HashSet;

use crate::chat::run_complete::RunCompleteStatus;
use crate::chat::tool_call_complete::CompletionStatus;
use crate::patch_op::PatchOp;
use crate::subagent::{transcript_at_mut, visit_calls, visit_items};
use crate::ui_event::UiEvent;
use crate::ui_state::{
    Dismissal, DisplayItem, Progress, RunState, RunStatus, ToolCallItem, ToolCallStatus, ToolOutputItem, UiState,
    UserMessageItem,
};
use crate::Id;

mod reasoning;
mod refusals;
mod requests;
mod rules;
mod subagents;
mod transcript;

pub use refusals::ReduceError;
pub use requests::{cancel_refusals, is_open_call, retry_cut, retry_refusals, CancelScope};
pub use rules::REFUSAL_RULES;

/// Suffix that turns a `tool_call_id` into the id of its `tool_output` item.
pub const OUTPUT_ID_SUFFIX: &str = ".output";

/// Applies `event` to a copy of `state`: the pure form of [`UiState::apply`].
pub fn reduce(state: &UiState, event: UiEvent<'_>) -> Result<UiState, ReduceError> {
    let mut next = state.clone();
    next.apply(event)?;
    Ok(next)
}

/// Folds a sequence of events over `state`, stopping at the first refused one.
pub fn reduce_all<'a>(
    state: &UiState,
    events: impl IntoIterator<Item = UiEvent<'a>>,
) -> Result<UiState, (usize, ReduceError)> {
    let mut next = state.clone();
    for (i, e) in events.into_iter().enumerate() {
        next.apply(e).map_err(|err| (i, err))?;
    }
    Ok(next)
}

/// How [`UiState::apply_with`] answers "is this id / invocation already in the state?": by
/// scanning the items, or from an index that holds exactly the state's item ids and invocations.
#[derive(Clone, Copy)]
enum Lookup<'a> {
    Scan,
    Index(&'a StateIndex),
}

/// The item ids and invocation ids of a state's items, and how many of its tool calls are open.
/// The open stream needs no entry: it is always the last item ([`UiState::open_stream`]), found
/// in O(1) either way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct StateIndex {
    ids: HashSet<Id>,
    invocations: HashSet<Id>,
    /// Tool calls `pending` or `running`: with none, a new turn and a run's end need no scan.
    open_calls: usize,
}

impl StateIndex {
    fn of(state: &UiState) -> StateIndex {
        let mut index = StateIndex::default();
        // Ids are unique across every transcript; a nested item's turn is its host's.
        visit_items(&state.items, &mut |item| {
            index.ids.insert(item.id().clone());
        });
        for item in &state.items {
            index.invocations.insert(item.invocation_id().clone());
        }
        index.open_calls = state.open_tool_calls(None).count();
        index
    }

    /// Brings the index up to date with `state`, which `event` has just been applied to.
    fn record(&mut self, event: UiEvent<'_>, state: &UiState) {
        match event {
            UiEvent::UserMessageAccepted(e) => {
                self.ids.insert(e.item_id.clone());
                self.invocations.insert(e.invocation_id.clone());
            }
            // The item is new, or it is the stream this event appends to or ends.
            UiEvent::AssistantMessage(e) => {
                self.ids.insert(e.item_id.clone());
            }
            UiEvent::AssistantMessageDelta(e) => {
                self.ids.insert(e.item_id.clone());
            }
            UiEvent::ReasoningDelta(e) => {
                self.ids.insert(e.item_id.clone());
            }
            UiEvent::Reasoning(e) => {
                self.ids.insert(e.item_id.clone());
            }
            UiEvent::ToolCall(e) => {
                self.ids.insert(e.tool_call_id.clone());
                // A new call is pending or running.
                self.open_calls += 1;
            }
            UiEvent::ToolOutput(e) => {
                // Applied, so the id is valid and its item exists now.
                if let Ok(output_id) = output_item_id(&e.tool_call_id) {
                    self.ids.insert(output_id);
                }
            }
            // Applied, so the call was open and has settled.
            UiEvent::ToolCallComplete(_) | UiEvent::ToolCallDismiss(_) => {
                self.open_calls = self.open_calls.saturating_sub(1);
            }
            // A cut removes any number of items: index what is left, as loading a state does.
            UiEvent::RewindComplete(_) | UiEvent::RetryAccepted(_) => *self = StateIndex::of(state),
            UiEvent::RunStarted(_)
            | UiEvent::ToolProgress(_)
            | UiEvent::RunComplete(_)
            | UiEvent::SubagentStarted(_)
            | UiEvent::SubagentComplete(_) => {}
        }
    }
}

/// A [`UiState`] with an index of its item ids and invocations: the form a server holds a live
/// session's state in, and folds long logs with (loading a session, catching up).
///
/// [`IndexedUiState::apply`] is [`UiState::apply`] exactly and [`IndexedUiState::apply_with_patch`]
/// is [`UiState::apply_with_patch`] exactly (same results, same errors, same state, same patch),
/// except that the id checks (`STATE-020`, invocation reuse) look the index up instead of
/// scanning every item, and a new turn or a run's end looks for open tool calls (`STATE-031`,
/// `STATE-032`) only when the index counts some: appending an item, a new turn and a run's end
/// cost the same at 100 items and at 10,000, and folding n events costs O(n) rather than O(n²).
/// The rules themselves live once, in the reducer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexedUiState {
    state: UiState,
    index: StateIndex,
}

impl IndexedUiState {
    /// Indexes `state` (O(items)).
    pub fn new(state: UiState) -> Self {
        let index = StateIndex::of(&state);
        IndexedUiState { state, index }
    }

    /// The state.
    pub fn state(&self) -> &UiState {
        &self.state
    }

    /// The state, without its index.
    pub fn into_state(self) -> UiState {
        self.state
    }

    /// Whether the state holds a display item with this id (O(1), from the index).
    pub fn has_item(&self, id: &Id) -> bool {
        self.index.ids.contains(id)
    }

    /// Applies one event in place, as [`UiState::apply`]. On error the state is unchanged.
    pub fn apply(&mut self, event: UiEvent<'_>) -> Result<(), ReduceError> {
        self.state.apply_with(event, Lookup::Index(&self.index))?;
        self.index.record(event, &self.state);
        Ok(())
    }

    /// Applies one event in place and returns its patch, as [`UiState::apply_with_patch`] (same
    /// state, same patch, same errors), with the id checks answered by the index: what a 1.1
    /// server does per event, at a cost that does not grow with the number of items for an
    /// appended item or a settled call. On error the state is unchanged.
    pub fn apply_with_patch(&mut self, event: UiEvent<'_>) -> Result<Vec<PatchOp>, ReduceError> {
        let index = &self.index;
        let ops = self.state.patched(event, |state| state.apply_with(event, Lookup::Index(index)))?;
        self.index.record(event, &self.state);
        Ok(ops)
    }
}

/// Read access to the state: everything that only looks at a [`UiState`] looks at an indexed one
/// the same way; changes go through the index-keeping methods above.
impl std::ops::Deref for IndexedUiState {
    type Target = UiState;

    fn deref(&self) -> &UiState {
        &self.state
    }
}

impl UiState {
    /// Applies one event in place. On error the state is unchanged.
    pub fn apply(&mut self, event: UiEvent<'_>) -> Result<(), ReduceError> {
        self.apply_with(event, Lookup::Scan)
    }

    fn apply_with(&mut self, event: UiEvent<'_>, lookup: Lookup<'_>) -> Result<(), ReduceError> {
        match event {
            // STATE-010
            UiEvent::UserMessageAccepted(e) => {
                if self.run.status.is_active() {
                    return Err(ReduceError::RunInProgress(self.current_invocation()));
                }
                let open: Vec<Id> = self.open_calls(None, lookup).map(|c| c.id.clone()).collect();
                if !open.is_empty() {
                    return Err(ReduceError::OpenToolCallsAtNewTurn(open));
                }
                if self.knows_invocation(&e.invocation_id, lookup) {
                    return Err(ReduceError::InvocationReused(e.invocation_id.clone()));
                }
                self.ensure_new_id(&e.item_id, lookup)?;
                self.items.push(DisplayItem::UserMessage(UserMessageItem {
                    id: e.item_id.clone(),
                    invocation_id: e.invocation_id.clone(),
                    client_message_id: e.in_reply_to.clone(),
                    text: e.text.clone(),
                    ts: e.ts.clone(),
                }));
            }
            // STATE-011
            UiEvent::RunStarted(e) => {
                if self.run.status.is_active() {
                    return Err(ReduceError::RunInProgress(self.current_invocation()));
                }
                if !self.knows_invocation(&e.invocation_id, lookup) {
                    return Err(ReduceError::UnknownInvocation(e.invocation_id.clone()));
                }
                // Only the newest turn may run: an older one resuming would put its items after a
                // newer turn's and make a later rewind cut through it.
                if self.latest_user_invocation() != Some(&e.invocation_id) {
                    return Err(ReduceError::StaleInvocation(e.invocation_id.clone()));
                }
                self.run = RunState { status: RunStatus::Running, invocation_id: Some(e.invocation_id.clone()) };
            }
            // Each in the transcript its `parent_call_id` names (`transcript.rs`, STATE-065).
            // STATE-012
            UiEvent::AssistantMessage(_) => self.apply_to_transcript(event, lookup)?,
            // STATE-042
            UiEvent::AssistantMessageDelta(_) => self.apply_to_transcript(event, lookup)?,
            // STATE-013
            UiEvent::ToolCall(_) => self.apply_to_transcript(event, lookup)?,
            // STATE-014
            UiEvent::ToolProgress(e) => {
                let call = self.open_call_mut(&e.tool_call_id)?;
                if call.status != ToolCallStatus::Running {
                    return Err(ReduceError::NotRunning(e.tool_call_id.clone()));
                }
                call.progress = Some(Progress { message: e.message.clone(), fraction: e.fraction });
            }
            // STATE-015
            UiEvent::ToolOutput(e) => self.apply_tool_output(e, lookup)?,
            // STATE-016
            UiEvent::ToolCallComplete(e) => {
                let call = self.open_call_mut(&e.tool_call_id)?;
                call.ensure_subagent_ended()?;
                let status = match e.status {
                    CompletionStatus::Completed => ToolCallStatus::Completed,
                    CompletionStatus::Failed => ToolCallStatus::Failed,
                    CompletionStatus::Expired => {
                        if call.status != ToolCallStatus::Pending {
                            return Err(ReduceError::NotAwaiting(e.tool_call_id.clone()));
                        }
                        ToolCallStatus::Expired
                    }
                };
                call.status = status;
                call.result = e.result.clone();
                call.error = e.error.clone();
                call.summary = e.summary.clone();
                call.settled_ts = Some(e.ts.clone());
            }
            // STATE-017
            UiEvent::ToolCallDismiss(e) => {
                let call = self.open_call_mut(&e.tool_call_id)?;
                call.ensure_subagent_ended()?;
                call.status = ToolCallStatus::Dismissed;
                call.dismissal = Some(Dismissal { initiated_by: e.initiated_by, reason: e.reason.clone() });
                call.settled_ts = Some(e.ts.clone());
            }
            // STATE-018
            UiEvent::RunComplete(e) => {
                self.ensure_running(&e.invocation_id)?;
                // STATE-046, STATE-060: a stream ends before its run slice does.
                self.ensure_no_open_stream()?;
                self.ensure_no_open_reasoning()?;
                let inv = Some(&e.invocation_id);
                match e.status {
                    RunCompleteStatus::AwaitingInput => {
                        let running: Vec<Id> = self
                            .open_calls(inv, lookup)
                            // A waiting host waits with its nested form (STATE-067).
                            .filter(|c| c.status == ToolCallStatus::Running && !c.is_waiting_host())
                            .map(|c| c.id.clone())
                            .collect();
                        if !running.is_empty() {
                            return Err(ReduceError::OpenToolCalls {
                                invocation_id: e.invocation_id.clone(),
                                status: e.status,
                                open: running,
                            });
                        }
                        if self.open_calls(inv, lookup).next().is_none() {
                            return Err(ReduceError::NothingAwaited(e.invocation_id.clone()));
                        }
                    }
                    _ => {
                        let open: Vec<Id> = self.open_calls(inv, lookup).map(|c| c.id.clone()).collect();
                        if !open.is_empty() {
                            return Err(ReduceError::OpenToolCalls {
                                invocation_id: e.invocation_id.clone(),
                                status: e.status,
                                open,
                            });
                        }
                    }
                }
                // STATE-056: checked before anything changes.
                if let Some(usage) = self.usage_after(e)? {
                    self.usage = Some(usage);
                }
                self.run.status = match e.status {
                    RunCompleteStatus::AwaitingInput => RunStatus::AwaitingInput,
                    RunCompleteStatus::Completed => RunStatus::Completed,
                    RunCompleteStatus::Failed => RunStatus::Failed,
                    RunCompleteStatus::Cancelled => RunStatus::Cancelled,
                };
            }
            // STATE-019
            UiEvent::RewindComplete(e) => {
                if self.run.status.is_active() {
                    return Err(ReduceError::RunInProgress(self.current_invocation()));
                }
                let cut = self
                    .items
                    .iter()
                    .position(|i| i.invocation_id() == &e.before_invocation_id)
                    .ok_or_else(|| ReduceError::UnknownInvocation(e.before_invocation_id.clone()))?;
                let mut removed: Vec<Id> = Vec::new();
                for item in &self.items[cut..] {
                    if !removed.contains(item.invocation_id()) {
                        removed.push(item.invocation_id().clone());
                    }
                }
                if removed != e.removed_invocation_ids {
                    return Err(ReduceError::RewindMismatch {
                        expected: removed,
                        claimed: e.removed_invocation_ids.clone(),
                    });
                }
                self.items.truncate(cut);
                self.forget_usage_of(&removed);
                self.run = RunState::default();
            }
            // STATE-044
            UiEvent::RetryAccepted(e) => {
                if self.run.status.is_active() {
                    return Err(ReduceError::RunInProgress(self.current_invocation()));
                }
                let known = match lookup {
                    Lookup::Scan => true,
                    Lookup::Index(index) => index.ids.contains(&e.after_item_id),
                };
                let named = known
                    .then(|| self.items.iter().rposition(|i| i.id() == &e.after_item_id))
                    .flatten()
                    .ok_or_else(|| ReduceError::UnknownItem(e.after_item_id.clone()))?;
                let turn = self.items[named].invocation_id();
                if turn != &e.invocation_id || self.latest_user_invocation() != Some(turn) {
                    return Err(ReduceError::NotInLatestTurn(e.after_item_id.clone()));
                }
                let kept = retry_cut(&self.items, named) - 1;
                let open: Vec<Id> = open_calls_among(self.open_calls_scope(&self.items[..=kept], lookup), None)
                    .map(|c| c.id.clone())
                    .collect();
                if !open.is_empty() {
                    return Err(ReduceError::OpenCallKept(open));
                }
                let removed: Vec<Id> = self.items[kept + 1..].iter().map(|i| i.id().clone()).collect();
                if removed != e.removed_item_ids {
                    return Err(ReduceError::RetryMismatch { expected: removed, claimed: e.removed_item_ids.clone() });
                }
                self.items.truncate(kept + 1);
                self.run = RunState::default();
            }
            // STATE-054
            UiEvent::ReasoningDelta(_) => self.apply_to_transcript(event, lookup)?,
            // STATE-055
            UiEvent::Reasoning(_) => self.apply_to_transcript(event, lookup)?,
            // STATE-064
            UiEvent::SubagentStarted(e) => self.apply_subagent_started(e)?,
            // STATE-066
            UiEvent::SubagentComplete(e) => self.apply_subagent_complete(e)?,
        }
        Ok(())
    }

    /// `STATE-015`: output of a call, in an output item right after the call in its transcript.
    fn apply_tool_output(
        &mut self,
        e: &crate::chat::tool_output::ToolOutput,
        lookup: Lookup<'_>,
    ) -> Result<(), ReduceError> {
        let (path, call) =
            self.find_call(&e.tool_call_id).ok_or_else(|| ReduceError::UnknownToolCall(e.tool_call_id.clone()))?;
        if call.status.is_terminal() {
            return Err(ReduceError::AlreadySettled { id: call.id.clone(), status: call.status });
        }
        // STATE-074: a host's output is its transcript.
        if call.subagent.is_some() {
            return Err(ReduceError::OutputOfHost(e.tool_call_id.clone()));
        }
        let (tool_name, invocation_id) = (call.tool_name.clone(), call.invocation_id.clone());
        let output_id = output_item_id(&e.tool_call_id)?;
        let (call_index, hosts) = path.split_last().expect("a found call has a path");
        let at = call_index + 1;
        let exists = matches!(
            crate::subagent::transcript_at(&self.items, hosts).and_then(|t| t.get(at)),
            Some(DisplayItem::ToolOutput(o)) if o.id == output_id
        );
        // An item created after the call may have taken the id (STATE-020).
        if !exists && self.id_taken(&output_id, lookup) {
            return Err(ReduceError::DuplicateItemId(output_id));
        }
        let items = transcript_at_mut(&mut self.items, hosts).expect("find_call found the transcript");
        if !exists {
            items.insert(
                at,
                DisplayItem::ToolOutput(ToolOutputItem {
                    id: output_id,
                    invocation_id,
                    tool_call_id: e.tool_call_id.clone(),
                    tool_name,
                    command: None,
                    approvals: Vec::new(),
                    stdout: String::new(),
                    stderr: String::new(),
                    exit_code: None,
                }),
            );
        }
        let Some(DisplayItem::ToolOutput(out)) = items.get_mut(at) else { unreachable!("inserted above") };
        if let Some(command) = &e.command {
            out.command = Some(command.clone());
        }
        if let Some(approval) = e.approval {
            out.approvals.push(approval);
        }
        if let Some(stdout) = &e.stdout {
            out.stdout.push_str(stdout);
        }
        if let Some(stderr) = &e.stderr {
            out.stderr.push_str(stderr);
        }
        if let Some(code) = e.exit_code {
            out.exit_code = Some(code);
        }
        Ok(())
    }

    /// `STATE-046`: refuses while a stream is open.
    fn ensure_no_open_stream(&self) -> Result<(), ReduceError> {
        match self.open_stream() {
            Some(stream) => Err(ReduceError::StreamOpen(stream.id.clone())),
            None => Ok(()),
        }
    }

    /// The tool call item with this id, in any transcript.
    pub fn tool_call(&self, id: &Id) -> Option<&ToolCallItem> {
        self.find_call(id).map(|(_, call)| call)
    }

    /// Tool calls still `pending` or `running`, of one invocation or of all.
    pub fn open_tool_calls<'s>(&'s self, invocation: Option<&'s Id>) -> impl Iterator<Item = &'s ToolCallItem> + 's {
        open_calls_among(&self.items, invocation)
    }

    /// [`UiState::open_tool_calls`], with no scan when the index knows that no call is open.
    fn open_calls<'s>(
        &'s self,
        invocation: Option<&'s Id>,
        lookup: Lookup<'_>,
    ) -> impl Iterator<Item = &'s ToolCallItem> + 's {
        open_calls_among(self.open_calls_scope(&self.items, lookup), invocation)
    }

    /// `items`, or nothing to scan when the index knows that no call of the state is open.
    fn open_calls_scope<'s>(&self, items: &'s [DisplayItem], lookup: Lookup<'_>) -> &'s [DisplayItem] {
        match lookup {
            Lookup::Index(index) if index.open_calls == 0 => &[],
            _ => items,
        }
    }

    /// Whether any item carries this invocation id.
    pub fn has_invocation(&self, id: &Id) -> bool {
        self.items.iter().any(|i| i.invocation_id() == id)
    }

    /// The distinct invocation ids in display order.
    pub fn invocations(&self) -> Vec<&Id> {
        let mut out: Vec<&Id> = Vec::new();
        for item in &self.items {
            if out.last() != Some(&item.invocation_id()) && !out.contains(&item.invocation_id()) {
                out.push(item.invocation_id());
            }
        }
        out
    }

    /// The invocation of the newest user message: the only turn that may run.
    pub fn latest_user_invocation(&self) -> Option<&Id> {
        self.items.iter().rev().find_map(|i| match i {
            DisplayItem::UserMessage(m) => Some(&m.invocation_id),
            _ => None,
        })
    }

    fn current_invocation(&self) -> Id {
        self.run.invocation_id.clone().unwrap_or_else(|| Id::new_unchecked_valid("unknown"))
    }

    fn ensure_running(&self, invocation_id: &Id) -> Result<(), ReduceError> {
        if self.run.status == RunStatus::Running && self.run.invocation_id.as_ref() == Some(invocation_id) {
            Ok(())
        } else {
            Err(ReduceError::NotInRun(invocation_id.clone()))
        }
    }

    fn knows_invocation(&self, id: &Id, lookup: Lookup<'_>) -> bool {
        match lookup {
            Lookup::Scan => self.has_invocation(id),
            Lookup::Index(index) => index.invocations.contains(id),
        }
    }

    fn ensure_new_id(&self, id: &Id, lookup: Lookup<'_>) -> Result<(), ReduceError> {
        match self.id_taken(id, lookup) {
            true => Err(ReduceError::DuplicateItemId(id.clone())),
            false => Ok(()),
        }
    }
}

/// The tool calls among `items` and in their transcripts still `pending` or `running`, of one
/// invocation or of all, in display order (a host before its transcript's calls).
fn open_calls_among<'s>(
    items: &'s [DisplayItem],
    invocation: Option<&'s Id>,
) -> impl Iterator<Item = &'s ToolCallItem> + 's {
    let mut open = Vec::new();
    visit_calls(items, &mut |c| {
        if !c.status.is_terminal() && invocation.is_none_or(|inv| &c.invocation_id == inv) {
            open.push(c);
        }
    });
    open.into_iter()
}

/// The id of a tool call's `tool_output` item: the call id followed by [`OUTPUT_ID_SUFFIX`].
pub fn output_item_id(tool_call_id: &Id) -> Result<Id, ReduceError> {
    Id::parse(format!("{tool_call_id}{OUTPUT_ID_SUFFIX}"))
        .map_err(|_| ReduceError::OutputIdTooLong(tool_call_id.clone()))
}
