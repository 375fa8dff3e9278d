//! Sub-agents on the run driver (`spec/subagents.md`, `SCRIPT-029`): where in the plan the driver
//! plays while inside sub-agents, the frames that start and end a sub-agent run, and the events
//! that close running transcripts when a run ends early (`SUBAGENT-009`, `SUBAGENT-010`).
//!
//! The cursor's `step`, `batch` and `stream` always describe the level that plays; entering a
//! sub-agent pushes the level above onto `Cursor::outer`, ending it pops it back. The plan holds
//! a nested `say`'s chunks as the step's own strings (only top-level ones are held as offsets).

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::reasoning::Reasoning;
use chatwire_schema::chat::subagent_complete::{SubagentComplete, SubagentEnd};
use chatwire_schema::chat::subagent_started::SubagentStarted;
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::script::{ScriptStep, ScriptSubagent, ScriptSubagentStatus, ScriptToolCall};
use chatwire_schema::{DisplayItem, Id, ServerFrame, ToolCallStatus, UiState};

use crate::agent::{BatchCursor, Cursor, OuterLevel};
use crate::plan::{Chunks, PlanStep, TurnPlan};
use crate::util::rfc3339_now;

/// The host of the level that plays: `None` at the top level.
pub(super) fn host(cursor: &Cursor) -> Option<&Id> {
    cursor.outer.last().map(|level| &level.host)
}

/// The call of `steps[step]` (a `tool_calls` step) that `batch` gave the id `host`.
fn hosting_call<'p>(steps: Level<'p>, level: &OuterLevel) -> Option<&'p ScriptToolCall> {
    let ScriptStep::ToolCalls { calls, .. } = steps.op(level.step)? else { return None };
    let index = level.batch.call_ids.iter().position(|id| *id == level.host)?;
    calls.get(index)
}

/// The steps of one level: the plan's for the top level, a sub-agent's below it.
#[derive(Clone, Copy)]
enum Level<'p> {
    Top(&'p TurnPlan),
    Nested(&'p [ScriptStep]),
}

impl<'p> Level<'p> {
    fn op(self, index: usize) -> Option<&'p ScriptStep> {
        match self {
            Level::Top(plan) => plan.step(index).map(|s| s.op),
            Level::Nested(steps) => steps.get(index),
        }
    }

    fn step(self, index: usize) -> Option<PlanStep<'p>> {
        match self {
            Level::Top(plan) => plan.step(index),
            Level::Nested(steps) => steps.get(index).map(|op| PlanStep { op, chunks: own_chunks(op) }),
        }
    }
}

/// A nested step's chunks, as the step holds them.
fn own_chunks(op: &ScriptStep) -> Chunks<'_> {
    match op {
        ScriptStep::Say { chunks: Some(chunks), .. } => Chunks::of(chunks),
        _ => Chunks::of(&[]),
    }
}

/// The sub-agent whose steps play now (the innermost host's), or `None` at the top level or
/// where the cursor does not fit the plan.
pub(super) fn playing_subagent<'p>(plan: &'p TurnPlan, cursor: &Cursor) -> Option<&'p ScriptSubagent> {
    let mut steps = Level::Top(plan);
    let mut subagent = None;
    for level in &cursor.outer {
        let sub = hosting_call(steps, level)?.subagent.as_deref()?;
        steps = Level::Nested(&sub.steps);
        subagent = Some(sub);
    }
    subagent
}

/// The step the cursor is at, at the level that plays.
pub(super) fn current_step<'p>(plan: &'p TurnPlan, cursor: &Cursor) -> Option<PlanStep<'p>> {
    match playing_subagent(plan, cursor) {
        Some(sub) => Level::Nested(&sub.steps).step(cursor.step),
        None if cursor.outer.is_empty() => Level::Top(plan).step(cursor.step),
        None => None,
    }
}

/// The host's call as scripted: the call of the level above whose sub-agent plays now.
pub(super) fn playing_host<'p>(plan: &'p TurnPlan, cursor: &Cursor) -> Option<&'p ScriptToolCall> {
    let (last, above) = cursor.outer.split_last()?;
    let mut steps = Level::Top(plan);
    for level in above {
        steps = Level::Nested(&hosting_call(steps, level)?.subagent.as_deref()?.steps);
    }
    hosting_call(steps, last)
}

/// Puts `parent` on a frame that creates an item (`STATE-065`): the item goes into that call's
/// transcript.
pub(super) fn in_transcript(mut frame: ServerFrame, parent: Option<&Id>) -> ServerFrame {
    let Some(parent) = parent else { return frame };
    let slot = match &mut frame {
        ServerFrame::AssistantMessage(f) => &mut f.parent_call_id,
        ServerFrame::AssistantMessageDelta(f) => &mut f.parent_call_id,
        ServerFrame::Reasoning(f) => &mut f.parent_call_id,
        ServerFrame::ReasoningDelta(f) => &mut f.parent_call_id,
        ServerFrame::ToolCall(f) => &mut f.parent_call_id,
        _ => return frame,
    };
    *slot = Some(parent.clone());
    frame
}

/// `chat.subagent_started` for the call `host` running `sub` (`SCRIPT-029`): a thread some call
/// of the state already hosts is continued from its latest call (`SUBAGENT-004`), answering its
/// `return` where that run returned (`SUBAGENT-005`); `answers_return` says whether it may.
pub(super) fn started(state: &UiState, host: &Id, sub: &ScriptSubagent, answers_return: bool) -> ServerFrame {
    let latest = state.latest_call_of_thread(&sub.thread);
    let returned = latest.and_then(|c| c.subagent.as_deref()).is_some_and(|s| s.returned);
    ServerFrame::SubagentStarted(SubagentStarted {
        seq: 0,
        tool_call_id: host.clone(),
        thread_id: sub.thread.clone(),
        name: sub.name.clone(),
        input: sub.input.clone(),
        continues: latest.map(|c| c.id.clone()),
        answers_return: returned && answers_return,
        ts: rfc3339_now(),
    })
}

/// The cursor once the driver entered the sub-agent hosted by `host`, the call of the batch at
/// `cursor.batch`: that level kept in `outer`, the sub-agent's steps played from the first.
pub(super) fn entered(cursor: &Cursor, host: &Id) -> Option<Cursor> {
    let batch = cursor.batch.clone()?;
    let mut outer = cursor.outer.clone();
    outer.push(OuterLevel { step: cursor.step, batch, host: host.clone() });
    Some(Cursor { step: 0, batch: None, stream: None, outer, ..cursor.clone() })
}

/// The cursor once the sub-agent that plays has ended and its host settled: the level above, its
/// batch one settlement further.
pub(super) fn left(cursor: &Cursor) -> Option<Cursor> {
    let mut outer = cursor.outer.clone();
    let level = outer.pop()?;
    let batch = BatchCursor { settled: level.batch.settled + 1, ..level.batch };
    Some(Cursor { step: level.step, batch: Some(batch), stream: None, outer, ..cursor.clone() })
}

/// `chat.subagent_complete` as the sub-agent's `end` says (`SCRIPT-029`).
pub(super) fn completed(host: &Id, sub: &ScriptSubagent) -> ServerFrame {
    ServerFrame::SubagentComplete(SubagentComplete {
        seq: 0,
        tool_call_id: host.clone(),
        status: match sub.end.status {
            ScriptSubagentStatus::Completed => SubagentEnd::Completed,
            ScriptSubagentStatus::Failed => SubagentEnd::Failed,
        },
        response: sub.end.response.clone(),
        returned: sub.end.returned,
        ts: rfc3339_now(),
    })
}

/// Whether the transcript `host` hosts has a call still open (a nested form awaiting its answer).
pub(super) fn transcript_has_open_call(state: &UiState, host: &Id) -> bool {
    let Some(sub) = state.tool_call(host).and_then(|c| c.subagent.as_deref()) else { return false };
    sub.items.iter().any(|i| matches!(i, DisplayItem::ToolCall(c) if !c.status.is_terminal()))
}

/// How a run that ends early closes its running transcripts.
#[derive(Clone, Copy)]
pub(super) enum Closing<'a> {
    /// A cancel (`SUBAGENT-010`): open calls dismissed by the client, runs `cancelled`.
    Cancelled { reason: &'a str },
    /// A failure, an interrupted run after a restart (`SUBAGENT-009`): running calls failed with
    /// `error`, pending ones dismissed by the server with `reason`, runs `failed`.
    Failed { reason: &'a str, error: &'a str },
}

/// The events that close every running transcript of `invocation`, the deepest first: its open
/// stream ended with its text so far, its open calls closed, then its run ended; and the calls
/// whose timers go with them.
pub(super) fn close_transcripts(state: &UiState, invocation: &Id, how: Closing<'_>) -> (Vec<ServerFrame>, Vec<Id>) {
    let ts = rfc3339_now();
    let mut frames = Vec::new();
    let mut timers = Vec::new();
    for open in state.open_transcripts(invocation) {
        if let Some((item_id, text, reasoning)) = open.stream {
            let end = match reasoning {
                true => ServerFrame::Reasoning(Reasoning {
                    parent_call_id: Some(open.host.clone()),
                    seq: 0,
                    invocation_id: invocation.clone(),
                    item_id,
                    text,
                    redacted: false,
                    encrypted: None,
                    ts: ts.clone(),
                }),
                false => ServerFrame::AssistantMessage(AssistantMessage {
                    parent_call_id: Some(open.host.clone()),
                    seq: 0,
                    invocation_id: invocation.clone(),
                    item_id,
                    markdown: text,
                    ts: ts.clone(),
                }),
            };
            frames.push(end);
        }
        for (call, status) in open.open_calls {
            timers.push(call.clone());
            frames.push(close_call(call, status, how, &ts));
        }
        let status = match how {
            Closing::Cancelled { .. } => SubagentEnd::Cancelled,
            Closing::Failed { .. } => SubagentEnd::Failed,
        };
        frames.push(ServerFrame::SubagentComplete(SubagentComplete {
            seq: 0,
            tool_call_id: open.host,
            status,
            response: None,
            returned: false,
            ts: ts.clone(),
        }));
    }
    (frames, timers)
}

/// The frame closing one open call of a transcript.
fn close_call(call: Id, status: ToolCallStatus, how: Closing<'_>, ts: &str) -> ServerFrame {
    let dismiss = |initiated_by, reason: &str| {
        ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: call.clone(),
            initiated_by,
            reason: Some(reason.to_owned()),
            in_reply_to: None,
            ts: ts.to_owned(),
        })
    };
    match how {
        Closing::Cancelled { reason } => dismiss(Initiator::Client, reason),
        Closing::Failed { error, .. } if status == ToolCallStatus::Running => {
            ServerFrame::ToolCallComplete(ToolCallComplete {
                seq: 0,
                tool_call_id: call.clone(),
                status: CompletionStatus::Failed,
                result: None,
                error: Some(error.to_owned()),
                summary: None,
                in_reply_to: None,
                ts: ts.to_owned(),
            })
        }
        Closing::Failed { reason, .. } => dismiss(Initiator::Server, reason),
    }
}

/// Whether the call `id` is one of the top level's (not of a transcript).
pub(super) fn is_top_level(state: &UiState, id: &Id) -> bool {
    state.item_path(id).is_some_and(|path| path.len() == 1)
}
