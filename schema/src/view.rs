//! What one connection sees of the session: its negotiated minor's shapes (`COMPAT-005`, in
//! [`crate::older_minor`]) and only the 1.3 features in force on it (`REASON-001`, `USAGE-004`,
//! `SUBAGENT-001`, `SUBAGENT-002`).
//!
//! Spec: `spec/reasoning.md#older-connections`, `spec/usage.md#older-connections`,
//! `spec/subagents.md#where-the-feature-is-not-in-force`. The session has
//! one state, one log and one seq space; a [`ConnView`] is a function of them, so a server, a
//! server after a restart and the conformance monitor agree on what a connection holds without
//! remembering anything per connection:
//! - where `reasoning` is not in force, no `reasoning` item, no `chat.reasoning_delta` or
//!   `chat.reasoning` frame, and each patch of the state projected onto the view (indices counted
//!   without the hidden items, ops on them dropped);
//! - where `usage` is not in force, no `usage` on `chat.run_complete`, no `state.usage`, no op on
//!   `/usage`;
//! - where `subagents` is not in force, no `subagent` on a tool call and no frame of a transcript:
//!   each finished text of a top-level call's sub-agent is that call's output instead (a
//!   `chat.tool_output` whose `stdout` is the text and a blank line), so the call reads as a tool
//!   with streamed output. Which frame that is depends on where the host sits, so a frame of a
//!   session with sub-agents is seen through [`ConnView::frame_at`] and its patch through
//!   [`ConnView::patch_at`], both given the state before it.
//!
//! The view commutes with the reducer: the fold of the events a connection sees
//! ([`ConnView::sees_event`], [`ConnView::frame`]) equals the view of the fold of all of them
//! (tested below over random event sequences).

use std::borrow::Cow;

use serde_json::Value;

use crate::chat::retry_accepted::RetryAccepted;
use crate::chat::tool_output::ToolOutput;
use crate::patch_op::PatchOp;
use crate::reducer::{output_item_id, ReduceError};
use crate::session::welcome::Capability;
use crate::state_patch::USAGE_PATH;
use crate::ui_event::UiEvent;
use crate::ui_state::{DisplayItem, ToolCallItem, ToolOutputItem};
use crate::{older_minor, Id, ProtocolVersion, ServerFrame, UiState};

/// What an older connection's output of a sub-agent's host adds per finished text: the text and
/// a blank line (`SUBAGENT-002`).
pub const SUBAGENT_TEXT_SEPARATOR: &str = "\n\n";

/// The minor that added `reasoning` and `usage`.
pub const REASONING_USAGE_SINCE: ProtocolVersion = ProtocolVersion { major: 1, minor: 3 };

/// What a connection sees: its minor, and whether `reasoning`, `usage` and `subagents` are in
/// force on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnView {
    /// The negotiated minor.
    pub version: ProtocolVersion,
    /// Whether `reasoning` is in force (`REASON-001`).
    pub reasoning: bool,
    /// Whether `usage` is in force (`USAGE-004`).
    pub usage: bool,
    /// Whether `subagents` is in force (`SUBAGENT-001`).
    pub subagents: bool,
}

impl ConnView {
    /// The view of a connection that negotiated `version` with `features` in force (the welcome's
    /// `features`; `None` before 1.1).
    pub fn new(version: ProtocolVersion, features: Option<&[Capability]>) -> ConnView {
        let has = |c: Capability| version >= REASONING_USAGE_SINCE && features.is_some_and(|f| f.contains(&c));
        ConnView {
            version,
            reasoning: has(Capability::Reasoning),
            usage: has(Capability::Usage),
            subagents: has(Capability::Subagents),
        }
    }

    /// Whether the view is the whole state (the newest minor with every 1.3 feature).
    pub fn is_whole(&self) -> bool {
        self.reasoning && self.usage && self.subagents && self.version >= REASONING_USAGE_SINCE
    }

    /// Whether the feature of this wire name, a frame type's
    /// [`crate::frame_facts::ServerFrameKind::feature`], is in force.
    fn has_feature(&self, feature: &str) -> bool {
        match feature {
            "reasoning" => self.reasoning,
            "subagents" => self.subagents,
            "usage" => self.usage,
            _ => true,
        }
    }

    /// Whether the connection sees `item`.
    pub fn sees_item(&self, item: &DisplayItem) -> bool {
        self.reasoning || !matches!(item, DisplayItem::Reasoning(_))
    }

    /// Whether the connection receives `event` as itself (its frame may still lose members,
    /// [`ConnView::frame`]). Where `subagents` is not in force, a finished text of a sub-agent
    /// still reaches the connection, as its host's output ([`ConnView::frame_at`]).
    pub fn sees_event(&self, event: UiEvent<'_>) -> bool {
        let reasoning = matches!(event, UiEvent::Reasoning(_) | UiEvent::ReasoningDelta(_));
        let subagent = matches!(event, UiEvent::SubagentStarted(_) | UiEvent::SubagentComplete(_))
            || event.parent_call_id().is_some();
        (self.reasoning || !reasoning) && (self.subagents || !subagent)
    }

    /// `state` as the connection sees it.
    pub fn state<'a>(&self, state: &'a UiState) -> Cow<'a, UiState> {
        let hides_items = (!self.reasoning && holds_reasoning_anywhere(&state.items))
            || (!self.subagents
                && state.items.iter().any(|i| matches!(i, DisplayItem::ToolCall(c) if c.subagent.is_some())));
        let hides_usage = !self.usage && state.usage.is_some();
        let state = match hides_items || hides_usage {
            false => Cow::Borrowed(state),
            true => Cow::Owned(UiState {
                items: match hides_items {
                    true => self.items(&state.items, true),
                    false => state.items.clone(),
                },
                run: state.run.clone(),
                usage: if self.usage { state.usage.clone() } else { None },
            }),
        };
        match state {
            Cow::Borrowed(s) => older_minor::state(s, self.version),
            Cow::Owned(s) => Cow::Owned(older_minor::state(&s, self.version).into_owned()),
        }
    }

    /// The items of a transcript (`top` for the top level) as the connection sees them: without
    /// reasoning where `reasoning` is not in force; where `subagents` is not, every host without
    /// its `subagent` and, at the top level, followed by the output its sub-agent's finished texts
    /// make (`SUBAGENT-002`).
    fn items(&self, items: &[DisplayItem], top: bool) -> Vec<DisplayItem> {
        let mut out = Vec::with_capacity(items.len());
        for item in items.iter().filter(|i| self.sees_item(i)) {
            let DisplayItem::ToolCall(call) = item else {
                out.push(item.clone());
                continue;
            };
            let Some(sub) = &call.subagent else {
                out.push(item.clone());
                continue;
            };
            let mut seen = call.clone();
            if self.subagents {
                let mut nested = (**sub).clone();
                nested.items = self.items(&sub.items, false);
                seen.subagent = Some(Box::new(nested));
                out.push(DisplayItem::ToolCall(seen));
                continue;
            }
            seen.subagent = None;
            out.push(DisplayItem::ToolCall(seen));
            if let Some(output) = top.then(|| texts_as_output(call)).flatten() {
                out.push(DisplayItem::ToolOutput(output));
            }
        }
        out
    }

    /// `frame` as the connection sees it, `before` being the session's state before it: what
    /// [`ConnView::frame`] gives, except that where `subagents` is not in force a text that ends
    /// or appends an item of a top-level call's transcript becomes that call's
    /// `chat.tool_output` (`SUBAGENT-002`), and a frame naming a call of a transcript is not sent.
    pub fn frame_at<'a>(&self, frame: &'a ServerFrame, before: &UiState) -> Option<Cow<'a, ServerFrame>> {
        if let ServerFrame::RetryAccepted(retry) = frame {
            return match self.retry(retry, before) {
                None => self.frame(frame),
                Some(seen) => older_minor::frame(&ServerFrame::RetryAccepted(seen), self.version)
                    .map(|f| Cow::Owned(f.into_owned())),
            };
        }
        if self.subagents {
            return self.frame(frame);
        }
        let depth = |id: &crate::Id| before.find_call(id).map(|(path, _)| path.len());
        match frame {
            ServerFrame::AssistantMessage(m) => match &m.parent_call_id {
                Some(host) if depth(host) == Some(1) => {
                    let output = ServerFrame::ToolOutput(ToolOutput {
                        seq: m.seq,
                        tool_call_id: host.clone(),
                        command: None,
                        approval: None,
                        stdout: Some(format!("{}{SUBAGENT_TEXT_SEPARATOR}", m.markdown)),
                        stderr: None,
                        exit_code: None,
                        ts: m.ts.clone(),
                    });
                    older_minor::frame(&output, self.version).map(|f| Cow::Owned(f.into_owned()))
                }
                _ => self.frame(frame),
            },
            ServerFrame::ToolProgress(f) if depth(&f.tool_call_id).is_some_and(|d| d > 1) => None,
            ServerFrame::ToolOutput(f) if depth(&f.tool_call_id).is_some_and(|d| d > 1) => None,
            ServerFrame::ToolCallComplete(f) if depth(&f.tool_call_id).is_some_and(|d| d > 1) => None,
            ServerFrame::ToolCallDismiss(f) if depth(&f.tool_call_id).is_some_and(|d| d > 1) => None,
            _ => self.frame(frame),
        }
    }

    /// A `chat.retry_accepted` naming only items the view of `before` holds, so the connection's
    /// reducer folds it into its view (`STATE-044`); `None` where it names them already. A retry
    /// after a hidden reasoning item is, in the view, a retry after the last item the view holds
    /// before it; the removed items are those the view holds, a host's output (where `subagents`
    /// is not in force) right after its host.
    fn retry(&self, retry: &RetryAccepted, before: &UiState) -> Option<RetryAccepted> {
        if self.reasoning && self.subagents {
            return None;
        }
        let at = before.items.iter().rposition(|i| i.id() == &retry.after_item_id);
        let after = match at {
            Some(at) if !self.sees_item(&before.items[at]) => {
                let shown = before.items[..at].iter().rev().find(|i| self.sees_item(i));
                shown.map_or_else(|| retry.after_item_id.clone(), |i| i.id().clone())
            }
            _ => retry.after_item_id.clone(),
        };
        let removed_items = before.items[at.map_or(before.items.len(), |at| at + 1)..].iter();
        let by_id: std::collections::HashMap<&Id, &DisplayItem> = removed_items.map(|i| (i.id(), i)).collect();
        let mut removed = Vec::with_capacity(retry.removed_item_ids.len());
        for id in &retry.removed_item_ids {
            match by_id.get(id) {
                Some(item) if !self.sees_item(item) => {}
                Some(DisplayItem::ToolCall(call)) if !self.subagents => {
                    removed.push(id.clone());
                    removed.extend(texts_as_output(call).map(|output| output.id));
                }
                _ => removed.push(id.clone()),
            }
        }
        let same = after == retry.after_item_id && removed == retry.removed_item_ids;
        (!same).then(|| RetryAccepted { after_item_id: after, removed_item_ids: removed, ..retry.clone() })
    }

    /// `frame` as the connection sees it; `None` for a frame it never receives. Exact for every
    /// frame of a connection where `subagents` is in force, and for every frame of a session
    /// without sub-agents; a frame of a transcript needs [`ConnView::frame_at`].
    pub fn frame<'a>(&self, frame: &'a ServerFrame) -> Option<Cow<'a, ServerFrame>> {
        if frame.kind().feature.is_some_and(|f| !self.has_feature(f)) {
            return None;
        }
        if !self.subagents && frame.facts().parent_call_id().is_some() {
            return None;
        }
        match frame {
            ServerFrame::RunComplete(end) if !self.usage && end.usage.is_some() => {
                let mut seen = end.clone();
                seen.usage = None;
                Some(Cow::Owned(ServerFrame::RunComplete(seen)))
            }
            _ => older_minor::frame(frame, self.version),
        }
    }

    /// The connection's patch for `frame`, whose patch of the whole state, from `before`, is
    /// `ops`: [`ConnView::patch`] for a frame of the top level; for a frame that changes a
    /// transcript, and where `subagents` is not in force in a session with a host, the patch of
    /// what the connection sees of the frame ([`ConnView::frame_at`]) applied to its view of
    /// `before` (O(items): the view is built). The view commutes with the reducer, so the two
    /// agree.
    pub fn patch_at(
        &self,
        before: &UiState,
        frame: &ServerFrame,
        ops: Vec<PatchOp>,
    ) -> Result<Vec<PatchOp>, ReduceError> {
        let inside = |id: &crate::Id| before.find_call(id).is_some_and(|(path, _)| path.len() > 1);
        let in_transcript = frame.facts().parent_call_id().is_some()
            || matches!(frame, ServerFrame::SubagentStarted(_) | ServerFrame::SubagentComplete(_))
            || frame.facts().tool_call_id().is_some_and(inside);
        // Where `subagents` is not in force, a host's output shifts the items after it: positions
        // in the view are not positions in the state.
        let shifted = !self.subagents
            && before.items.iter().any(|i| matches!(i, DisplayItem::ToolCall(c) if c.subagent.is_some()));
        if self.is_whole() || !(in_transcript || shifted) {
            return Ok(self.patch(before, ops));
        }
        let Some(shown) = self.frame_at(frame, before) else { return Ok(Vec::new()) };
        let Some(event) = shown.ui_event() else { return Ok(Vec::new()) };
        self.state(before).into_owned().apply_with_patch(event)
    }

    /// The ops of a patch of the whole state, whose base is `before`, as the connection's patch
    /// of its view: ops on hidden items and on `/usage` dropped where unseen, item indices counted
    /// among the items the connection sees, then the minor's shapes ([`older_minor::patch`]).
    pub fn patch(&self, before: &UiState, ops: Vec<PatchOp>) -> Vec<PatchOp> {
        let adds_hidden = ops.iter().any(
            |op| matches!(op, PatchOp::Add { value, .. } | PatchOp::Replace { value, .. } if holds_reasoning(value)),
        );
        let ops = match !self.reasoning && (adds_hidden || before.items.iter().any(|i| !self.sees_item(i))) {
            true => project_items(before, ops),
            false => ops,
        };
        let ops = match self.usage {
            true => ops,
            false => ops.into_iter().filter(|op| !is_usage_op(op)).collect(),
        };
        older_minor::patch(ops, self.version)
    }
}

/// Whether `items` or a transcript they host holds a `reasoning` item.
fn holds_reasoning_anywhere(items: &[DisplayItem]) -> bool {
    let mut found = false;
    crate::subagent::visit_items(items, &mut |i| found |= matches!(i, DisplayItem::Reasoning(_)));
    found
}

/// The output a connection without `subagents` sees for a top-level host: its sub-agent's
/// finished texts, each followed by a blank line (`SUBAGENT-002`); `None` before the first.
fn texts_as_output(call: &ToolCallItem) -> Option<ToolOutputItem> {
    let sub = call.subagent.as_deref()?;
    let mut stdout = String::new();
    for item in &sub.items {
        if let DisplayItem::AssistantMarkdown(m) = item {
            if !m.streaming {
                stdout.push_str(&m.markdown);
                stdout.push_str(SUBAGENT_TEXT_SEPARATOR);
            }
        }
    }
    if stdout.is_empty() {
        return None;
    }
    Some(ToolOutputItem {
        id: output_item_id(&call.id).ok()?,
        invocation_id: call.invocation_id.clone(),
        tool_call_id: call.id.clone(),
        tool_name: call.tool_name.clone(),
        command: None,
        approvals: Vec::new(),
        stdout,
        stderr: String::new(),
        exit_code: None,
    })
}

/// Whether `op` addresses the state's usage: an op a connection where `usage` is not in force
/// never gets (`USAGE-004`).
pub fn is_usage_op(op: &PatchOp) -> bool {
    let path = op.path();
    path == USAGE_PATH || path.strip_prefix(USAGE_PATH).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether a patch value is, or holds in an item list, a `reasoning` item.
fn holds_reasoning(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.get("kind").and_then(Value::as_str) == Some("reasoning")
                || map.get("items").is_some_and(holds_reasoning)
        }
        Value::Array(list) => list.iter().any(holds_reasoning),
        _ => false,
    }
}

/// Removes `reasoning` items from a whole item list or state value.
fn strip_reasoning(value: &mut Value) {
    match value {
        Value::Array(list) => list.retain(|v| v.get("kind").and_then(Value::as_str) != Some("reasoning")),
        Value::Object(map) => {
            if let Some(items) = map.get_mut("items") {
                strip_reasoning(items);
            }
        }
        _ => {}
    }
}

/// The patch projected onto the items without reasoning: `hidden[i]` tells whether the whole
/// state's item `i` is a reasoning item, kept up to date as the ops add and remove items.
fn project_items(before: &UiState, ops: Vec<PatchOp>) -> Vec<PatchOp> {
    let mut hidden: Vec<bool> = before.items.iter().map(|i| matches!(i, DisplayItem::Reasoning(_))).collect();
    let seen_index =
        |hidden: &[bool], index: usize| index - hidden[..index.min(hidden.len())].iter().filter(|h| **h).count();
    let mut out = Vec::with_capacity(ops.len());
    for mut op in ops {
        let path = op.path().to_owned();
        if path == "/items" {
            if let PatchOp::Add { value, .. } | PatchOp::Replace { value, .. } = &mut op {
                hidden = value.as_array().map(|l| l.iter().map(holds_reasoning).collect()).unwrap_or_default();
                strip_reasoning(value);
            }
            out.push(op);
            continue;
        }
        let Some(rest) = path.strip_prefix("/items/") else {
            out.push(op);
            continue;
        };
        let (token, below) = match rest.split_once('/') {
            Some((token, below)) => (token, Some(below)),
            None => (rest, None),
        };
        if token == "-" {
            let is_hidden = matches!(&op, PatchOp::Add { value, .. } if holds_reasoning(value));
            hidden.push(is_hidden);
            if !is_hidden {
                out.push(op);
            }
            continue;
        }
        let Ok(index) = token.parse::<usize>() else {
            out.push(op);
            continue;
        };
        let seen = seen_index(&hidden, index);
        let is_hidden = match (&op, below) {
            // An insertion: the new item's kind decides.
            (PatchOp::Add { value, .. }, None) => {
                let is_hidden = holds_reasoning(value);
                hidden.insert(index.min(hidden.len()), is_hidden);
                is_hidden
            }
            (PatchOp::Remove { .. }, None) => match index < hidden.len() {
                true => hidden.remove(index),
                false => false,
            },
            _ => hidden.get(index).copied().unwrap_or(false),
        };
        if is_hidden {
            continue;
        }
        let path = match below {
            Some(below) => format!("/items/{seen}/{below}"),
            None => format!("/items/{seen}"),
        };
        out.push(op.with_path(path));
    }
    out
}

#[cfg(test)]
mod tests;
