//! What one connection sees of the session: its negotiated minor's shapes (`COMPAT-005`, in
//! [`crate::older_minor`]) and only the 1.3 features in force on it (`REASON-001`, `USAGE-004`).
//!
//! Spec: `spec/reasoning.md#older-connections`, `spec/usage.md#older-connections`. The session has
//! one state, one log and one seq space; a [`ConnView`] is a function of them, so a server, a
//! server after a restart and the conformance monitor agree on what a connection holds without
//! remembering anything per connection:
//! - where `reasoning` is not in force, no `reasoning` item, no `chat.reasoning_delta` or
//!   `chat.reasoning` frame, and each patch of the state projected onto the view (indices counted
//!   without the hidden items, ops on them dropped);
//! - where `usage` is not in force, no `usage` on `chat.run_complete`, no `state.usage`, no op on
//!   `/usage`.
//!
//! The view commutes with the reducer: the fold of the events a connection sees
//! ([`ConnView::sees_event`], [`ConnView::frame`]) equals the view of the fold of all of them
//! (tested below over random event sequences).

use std::borrow::Cow;

use serde_json::Value;

use crate::patch_op::PatchOp;
use crate::session::welcome::Capability;
use crate::state_patch::USAGE_PATH;
use crate::ui_event::UiEvent;
use crate::ui_state::DisplayItem;
use crate::{older_minor, ProtocolVersion, ServerFrame, UiState};

/// The minor that added `reasoning` and `usage`.
pub const REASONING_USAGE_SINCE: ProtocolVersion = ProtocolVersion { major: 1, minor: 3 };

/// What a connection sees: its minor, and whether `reasoning` and `usage` are in force on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnView {
    /// The negotiated minor.
    pub version: ProtocolVersion,
    /// Whether `reasoning` is in force (`REASON-001`).
    pub reasoning: bool,
    /// Whether `usage` is in force (`USAGE-004`).
    pub usage: bool,
}

impl ConnView {
    /// The view of a connection that negotiated `version` with `features` in force (the welcome's
    /// `features`; `None` before 1.1).
    pub fn new(version: ProtocolVersion, features: Option<&[Capability]>) -> ConnView {
        let has = |c: Capability| version >= REASONING_USAGE_SINCE && features.is_some_and(|f| f.contains(&c));
        ConnView { version, reasoning: has(Capability::Reasoning), usage: has(Capability::Usage) }
    }

    /// Whether the view is the whole state (the newest minor with every 1.3 feature).
    pub fn is_whole(&self) -> bool {
        self.reasoning && self.usage && self.version >= REASONING_USAGE_SINCE
    }

    /// Whether the connection sees `item`.
    pub fn sees_item(&self, item: &DisplayItem) -> bool {
        self.reasoning || !matches!(item, DisplayItem::Reasoning(_))
    }

    /// Whether the connection receives `event` at all (its frame may still lose members,
    /// [`ConnView::frame`]).
    pub fn sees_event(&self, event: UiEvent<'_>) -> bool {
        self.reasoning || !matches!(event, UiEvent::Reasoning(_) | UiEvent::ReasoningDelta(_))
    }

    /// `state` as the connection sees it.
    pub fn state<'a>(&self, state: &'a UiState) -> Cow<'a, UiState> {
        let hides_items = !self.reasoning && state.items.iter().any(|i| !self.sees_item(i));
        let hides_usage = !self.usage && state.usage.is_some();
        let state = match hides_items || hides_usage {
            false => Cow::Borrowed(state),
            true => Cow::Owned(UiState {
                items: state.items.iter().filter(|i| self.sees_item(i)).cloned().collect(),
                run: state.run.clone(),
                usage: if self.usage { state.usage.clone() } else { None },
            }),
        };
        match state {
            Cow::Borrowed(s) => older_minor::state(s, self.version),
            Cow::Owned(s) => Cow::Owned(older_minor::state(&s, self.version).into_owned()),
        }
    }

    /// `frame` as the connection sees it; `None` for a frame it never receives.
    pub fn frame<'a>(&self, frame: &'a ServerFrame) -> Option<Cow<'a, ServerFrame>> {
        match frame {
            ServerFrame::Reasoning(_) | ServerFrame::ReasoningDelta(_) if !self.reasoning => None,
            ServerFrame::RunComplete(end) if !self.usage && end.usage.is_some() => {
                let mut seen = end.clone();
                seen.usage = None;
                Some(Cow::Owned(ServerFrame::RunComplete(seen)))
            }
            _ => older_minor::frame(frame, self.version),
        }
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
