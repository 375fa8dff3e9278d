//! JSON Patch (RFC 6902) operations, and the patch that turns the UiState before an event into
//! the state after it, built from what the reducer changed.
//!
//! The payload of the `ui_state_patch` frame (since 1.1). The patch is never found by diffing two
//! whole states: [`UiState::apply_with_patch`] knows from the event which items it can touch
//! (the tool call it names, that call's output item, the items a rewind cuts) and compares only
//! those, so a patch's size follows the change, not the state:
//! - an appended item is one `add` at `/items/-`;
//! - an item changed in place gets a `test` of its id at its index, then one op per changed
//!   member (`/items/N/status`, …), so a patch applied to the wrong base fails instead of
//!   corrupting another item;
//! - an output item inserted after its call is a `test` of the call's id, then one `add`;
//! - a rewind or a retry removes from the end, each removal after a `test` of the removed item's id;
//! - a changed run is one `replace` of `/run`;
//! - streamed text (since 1.1, `spec/streaming.md`): the delta that opens a stream appends its item
//!   (`add /items/-`, `streaming: true`); a delta that appends to it is a `test` of its id and a
//!   `replace` of its whole `markdown` (RFC 6902 cannot append to a string); the message that ends
//!   it is a `test` of its id, a `remove` of `streaming` and a `replace` of `ts`. A server never
//!   sends the patch of a delta (`STREAM-002`); these patches serve catch-ups.
//!
//! [`catch_up`] concatenates those patches over the events a resumed client missed (`RESUME-017`),
//! with one `replace` of a stream's text per run of consecutive deltas in place of one per delta.

use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::patch_op::PatchOp;
use crate::reducer::ReduceError;
use crate::ui_event::UiEvent;
use crate::ui_state::{DisplayItem, UiState};
use crate::Id;

mod shape;
pub use shape::{check_shape, PatchBase, PatchShapeError};

/// The path of the state's usage sums (since 1.3, `spec/usage.md`).
pub const USAGE_PATH: &str = "/usage";

/// What an event can change besides appending: the items it names, as they were before.
enum Touched {
    /// Nothing in place (appends and run changes are found afterwards).
    Nothing,
    /// The item at this index, and its JSON before the event.
    Item(usize, Value),
    /// A `chat.tool_output` for the call at this index: its output item right after it either
    /// exists (with its JSON before) or is about to be inserted there.
    Output { call: usize, before: Option<Value> },
    /// A rewind or a retry: the items from this index on, by id, are about to be cut.
    Cut(usize, Vec<Id>),
    /// A delta appending to the open stream, the item at this index: only its text changes.
    StreamAppend(usize),
    /// A message ending the open stream, the item at this index.
    StreamEnd(usize),
    /// Since 1.3: an event that changes something inside the top-level item at this index, a
    /// sub-agent transcript or its host's `subagent` (`STATE-064` … `STATE-067`), and that item's
    /// JSON before it. Its ops follow the path down, each changed item behind a `test` of its id.
    Within(usize, Value),
}

impl UiState {
    /// Applies one event exactly like [`UiState::apply`] and returns the JSON Patch that turns the
    /// state's JSON before the event into its JSON after it. On error the state is unchanged and
    /// no patch is returned.
    pub fn apply_with_patch(&mut self, event: UiEvent<'_>) -> Result<Vec<PatchOp>, ReduceError> {
        self.patched(event, |state| state.apply(event))
    }

    /// Applies `event` with `apply` (the reducer, scanning or indexed) and builds its patch.
    pub(crate) fn patched(
        &mut self,
        event: UiEvent<'_>,
        apply: impl FnOnce(&mut UiState) -> Result<(), ReduceError>,
    ) -> Result<Vec<PatchOp>, ReduceError> {
        let len_before = self.items.len();
        let run_before = self.run.clone();
        let usage_before = self.usage.is_some();
        let usage_changes = matches!(event, UiEvent::RunComplete(e) if e.usage.is_some())
            || matches!(event, UiEvent::RewindComplete(_)) && usage_before;
        let usage_was = if usage_changes { self.usage.clone() } else { None };
        let touched = self.touched_by(event);
        apply(self)?;
        // An output item inserted after its call is not an append.
        let inserted = usize::from(matches!(touched, Touched::Output { before: None, .. }));

        let mut ops = Vec::new();
        match touched {
            Touched::Nothing => {}
            Touched::Item(index, before) => self.item_ops(index, &before, &mut ops),
            Touched::Output { call, before: Some(before) } => self.item_ops(call + 1, &before, &mut ops),
            Touched::Output { call, before: None } => {
                ops.push(test_id(call, self.items[call].id()));
                ops.push(PatchOp::Add { path: item_path(call + 1), value: item_json(&self.items[call + 1]) });
            }
            Touched::Cut(from, ids) => {
                for (offset, id) in ids.iter().enumerate().rev() {
                    ops.push(test_id(from + offset, id));
                    ops.push(PatchOp::Remove { path: item_path(from + offset) });
                }
            }
            Touched::StreamAppend(index) => self.stream_text_ops(index, &mut ops),
            Touched::Within(index, before) => {
                let after = item_json(&self.items[index]);
                let mut changes = Vec::new();
                if let (Value::Object(old), Value::Object(new)) = (&before, &after) {
                    deep_member_ops(&item_path(index), old, new, &mut changes);
                }
                if !changes.is_empty() {
                    ops.push(test_id(index, self.items[index].id()));
                    ops.extend(changes);
                }
            }
            Touched::StreamEnd(index) => {
                let DisplayItem::AssistantMarkdown(item) = &self.items[index] else {
                    unreachable!("StreamEnd names the open stream, an assistant_markdown item")
                };
                ops.push(test_id(index, &item.id));
                ops.push(PatchOp::Remove { path: format!("{}/streaming", item_path(index)) });
                ops.push(PatchOp::Replace {
                    path: format!("{}/ts", item_path(index)),
                    value: Value::String(item.ts.clone()),
                });
            }
        }
        if self.items.len() > len_before + inserted {
            for item in &self.items[len_before + inserted..] {
                ops.push(PatchOp::Add { path: "/items/-".into(), value: item_json(item) });
            }
        }
        if self.run != run_before {
            ops.push(PatchOp::Replace { path: "/run".into(), value: to_json(&self.run) });
        }
        // Since 1.3 (STATE-056, STATE-057): the usage sums, whole (their size follows the
        // invocations the state holds, not the items).
        if usage_changes && self.usage != usage_was {
            if let Some(usage) = &self.usage {
                let path = USAGE_PATH.to_owned();
                ops.push(match usage_before {
                    true => PatchOp::Replace { path, value: to_json(usage) },
                    false => PatchOp::Add { path, value: to_json(usage) },
                });
            }
        }
        Ok(ops)
    }

    /// What `event` may change in place, read before it is applied. An event the reducer will
    /// refuse may name nothing that exists; it is refused before the result is used.
    fn touched_by(&self, event: UiEvent<'_>) -> Touched {
        if let Some(top) = self.within(event) {
            return Touched::Within(top, item_json(&self.items[top]));
        }
        let call_index =
            |id: &Id| self.items.iter().rposition(|i| matches!(i, DisplayItem::ToolCall(c) if &c.id == id));
        match event {
            UiEvent::ToolProgress(e) => self.touch_item(call_index(&e.tool_call_id)),
            UiEvent::ToolCallComplete(e) => self.touch_item(call_index(&e.tool_call_id)),
            UiEvent::ToolCallDismiss(e) => self.touch_item(call_index(&e.tool_call_id)),
            UiEvent::ToolOutput(e) => match call_index(&e.tool_call_id) {
                Some(call) => {
                    let before = match self.items.get(call + 1) {
                        Some(DisplayItem::ToolOutput(o)) if o.tool_call_id == e.tool_call_id => {
                            Some(item_json(&self.items[call + 1]))
                        }
                        _ => None,
                    };
                    Touched::Output { call, before }
                }
                None => Touched::Nothing,
            },
            UiEvent::RewindComplete(e) => {
                match self.items.iter().position(|i| i.invocation_id() == &e.before_invocation_id) {
                    Some(cut) => Touched::Cut(cut, self.items[cut..].iter().map(|i| i.id().clone()).collect()),
                    None => Touched::Nothing,
                }
            }
            UiEvent::RetryAccepted(e) => match self.items.iter().rposition(|i| i.id() == &e.after_item_id) {
                Some(named) => {
                    let cut = crate::reducer::retry_cut(&self.items, named);
                    Touched::Cut(cut, self.items[cut..].iter().map(|i| i.id().clone()).collect())
                }
                None => Touched::Nothing,
            },
            UiEvent::AssistantMessageDelta(e) if self.is_open_stream(&e.item_id, &e.invocation_id) => {
                Touched::StreamAppend(self.items.len() - 1)
            }
            UiEvent::AssistantMessage(e) if self.is_open_stream(&e.item_id, &e.invocation_id) => {
                Touched::StreamEnd(self.items.len() - 1)
            }
            UiEvent::ReasoningDelta(e) if self.is_open_reasoning(&e.item_id, &e.invocation_id) => {
                Touched::StreamAppend(self.items.len() - 1)
            }
            // The end of a reasoning stream may also redact it and add its payload: member ops.
            UiEvent::Reasoning(e) if self.is_open_reasoning(&e.item_id, &e.invocation_id) => {
                self.touch_item(Some(self.items.len() - 1))
            }
            UiEvent::ReasoningDelta(_)
            | UiEvent::Reasoning(_)
            | UiEvent::SubagentStarted(_)
            | UiEvent::SubagentComplete(_) => Touched::Nothing,
            UiEvent::UserMessageAccepted(_)
            | UiEvent::RunStarted(_)
            | UiEvent::AssistantMessage(_)
            | UiEvent::AssistantMessageDelta(_)
            | UiEvent::ToolCall(_)
            | UiEvent::RunComplete(_) => Touched::Nothing,
        }
    }

    /// The top-level item whose inside `event` changes (since 1.3): the host of the transcript an
    /// item goes into, the host a sub-agent frame names, the ancestor of a nested call a call
    /// event names. `None` for an event of the top level, and for one the reducer will refuse.
    fn within(&self, event: UiEvent<'_>) -> Option<usize> {
        let top_of = |id: &Id| self.find_call(id).map(|(path, _)| path[0]);
        let nested_call = |id: &Id| self.find_call(id).filter(|(path, _)| path.len() > 1).map(|(path, _)| path[0]);
        match event {
            UiEvent::SubagentStarted(e) => top_of(&e.tool_call_id),
            UiEvent::SubagentComplete(e) => top_of(&e.tool_call_id),
            UiEvent::ToolProgress(e) => nested_call(&e.tool_call_id),
            UiEvent::ToolOutput(e) => nested_call(&e.tool_call_id),
            UiEvent::ToolCallComplete(e) => nested_call(&e.tool_call_id),
            UiEvent::ToolCallDismiss(e) => nested_call(&e.tool_call_id),
            _ => event.parent_call_id().and_then(top_of),
        }
    }

    /// Whether the open stream is the item `id` of the invocation `invocation`: a delta of it
    /// appends, a message of it ends it.
    fn is_open_stream(&self, id: &Id, invocation: &Id) -> bool {
        self.open_stream().is_some_and(|s| &s.id == id && &s.invocation_id == invocation)
    }

    /// Whether the open reasoning stream (since 1.3) is the item `id` of `invocation`.
    fn is_open_reasoning(&self, id: &Id, invocation: &Id) -> bool {
        self.open_reasoning().is_some_and(|s| &s.id == id && &s.invocation_id == invocation)
    }

    /// The ops that bring the text of the stream at `index` up to date: a `test` of its id and a
    /// `replace` of its `markdown` (a reasoning stream's `text`).
    fn stream_text_ops(&self, index: usize, ops: &mut Vec<PatchOp>) {
        let (id, member, text) = match &self.items[index] {
            DisplayItem::AssistantMarkdown(item) => (&item.id, "markdown", &item.markdown),
            DisplayItem::Reasoning(item) => (&item.id, "text", &item.text),
            _ => unreachable!("only an open stream's text is replaced, an assistant_markdown or reasoning item"),
        };
        ops.push(test_id(index, id));
        ops.push(PatchOp::Replace {
            path: format!("{}/{member}", item_path(index)),
            value: Value::String(text.clone()),
        });
    }

    fn touch_item(&self, index: Option<usize>) -> Touched {
        match index {
            Some(i) => Touched::Item(i, item_json(&self.items[i])),
            None => Touched::Nothing,
        }
    }

    /// Member-level ops for the item at `index`, which was `before`: a `test` of its id, then one
    /// op per member that appeared, changed or went away. Nothing when the item did not change.
    fn item_ops(&self, index: usize, before: &Value, ops: &mut Vec<PatchOp>) {
        let after = item_json(&self.items[index]);
        let (Value::Object(old), Value::Object(new)) = (before, &after) else {
            // Items always serialize as objects; replace the whole item if that ever changes.
            ops.push(test_id(index, self.items[index].id()));
            ops.push(PatchOp::Replace { path: item_path(index), value: after });
            return;
        };
        let changes = member_ops(&item_path(index), old, new);
        if !changes.is_empty() {
            ops.push(test_id(index, self.items[index].id()));
            ops.extend(changes);
        }
    }
}

/// One op per member of `new` that is absent from or different in `old`, one per member gone.
fn member_ops(base: &str, old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    for (key, value) in new {
        let path = format!("{base}/{}", escape(key));
        match old.get(key) {
            Some(previous) if previous == value => {}
            Some(_) => ops.push(PatchOp::Replace { path, value: value.clone() }),
            None => ops.push(PatchOp::Add { path, value: value.clone() }),
        }
    }
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        ops.push(PatchOp::Remove { path: format!("{base}/{}", escape(key)) });
    }
    ops
}

/// [`member_ops`] for an item that may host a sub-agent (since 1.3): a changed `subagent` is
/// diffed member by member, and its transcript item by item ([`transcript_ops`]), so a nested
/// change costs ops that follow the change, not the transcript.
fn deep_member_ops(base: &str, old: &Map<String, Value>, new: &Map<String, Value>, ops: &mut Vec<PatchOp>) {
    for (key, value) in new {
        let path = format!("{base}/{}", escape(key));
        match (key.as_str(), old.get(key), value) {
            (_, Some(previous), _) if previous == value => {}
            ("subagent", Some(Value::Object(was)), Value::Object(now)) => {
                for (member, value) in now {
                    let member_path = format!("{path}/{}", escape(member));
                    match (member.as_str(), was.get(member), value) {
                        (_, Some(previous), _) if previous == value => {}
                        ("items", Some(Value::Array(was)), Value::Array(now)) => {
                            transcript_ops(&member_path, was, now, ops)
                        }
                        (_, Some(_), _) => ops.push(PatchOp::Replace { path: member_path, value: value.clone() }),
                        (_, None, _) => ops.push(PatchOp::Add { path: member_path, value: value.clone() }),
                    }
                }
                for member in was.keys().filter(|k| !now.contains_key(*k)) {
                    ops.push(PatchOp::Remove { path: format!("{path}/{}", escape(member)) });
                }
            }
            (_, Some(_), _) => ops.push(PatchOp::Replace { path, value: value.clone() }),
            (_, None, _) => ops.push(PatchOp::Add { path, value: value.clone() }),
        }
    }
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        ops.push(PatchOp::Remove { path: format!("{base}/{}", escape(key)) });
    }
}

/// The ops that turn a transcript's items `old` into `new` (both at `base`): a changed item is a
/// `test` of its id and its member ops, an item inserted (an output after its call) a `test` of
/// the item before it and an `add`, appended items `add`s at `base/-`. A transcript never loses
/// items (cuts remove top-level items whole); should it, the whole list is replaced.
fn transcript_ops(base: &str, old: &[Value], new: &[Value], ops: &mut Vec<PatchOp>) {
    let id = |v: &Value| v.get("id").cloned();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while j < new.len() {
        if i < old.len() && id(&old[i]) == id(&new[j]) {
            if let (Value::Object(was), Value::Object(now)) = (&old[i], &new[j]) {
                let mut changes = Vec::new();
                deep_member_ops(&format!("{base}/{j}"), was, now, &mut changes);
                if !changes.is_empty() {
                    out.push(PatchOp::Test { path: format!("{base}/{j}/id"), value: id(&new[j]).unwrap_or_default() });
                    out.extend(changes);
                }
            }
            i += 1;
        } else if i >= old.len() {
            out.push(PatchOp::Add { path: format!("{base}/-"), value: new[j].clone() });
        } else if j > 0 && !old.iter().any(|o| id(o) == id(&new[j])) {
            out.push(PatchOp::Test {
                path: format!("{base}/{}/id", j - 1),
                value: id(&new[j - 1]).unwrap_or_default(),
            });
            out.push(PatchOp::Add { path: format!("{base}/{j}"), value: new[j].clone() });
        } else {
            ops.push(PatchOp::Replace { path: base.to_owned(), value: Value::Array(new.to_vec()) });
            return;
        }
        j += 1;
    }
    if i < old.len() {
        ops.push(PatchOp::Replace { path: base.to_owned(), value: Value::Array(new.to_vec()) });
        return;
    }
    ops.extend(out);
}

fn test_id(index: usize, id: &Id) -> PatchOp {
    PatchOp::Test { path: format!("{}/id", item_path(index)), value: Value::String(id.to_string()) }
}

fn item_path(index: usize) -> String {
    format!("/items/{index}")
}

/// RFC 6901 escaping of one reference token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn item_json(item: &DisplayItem) -> Value {
    to_json(item)
}

/// UiState parts serialize infallibly: every map key is a string and every number finite.
fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("UiState parts always serialize to JSON")
}

/// How many events of a catch-up [`catch_up`] applies before it indexes the state.
const CATCH_UP_SCANNED_EVENTS: usize = 16;

/// The state a catch-up folds: a few events scan, past that an index keeps the cost
/// O(items + events) however many the retention lets through.
enum Folding {
    Scanned(UiState),
    Indexed(crate::IndexedUiState),
}

impl Folding {
    fn state(&self) -> &UiState {
        match self {
            Folding::Scanned(state) => state,
            Folding::Indexed(state) => state,
        }
    }

    fn apply(&mut self, event: UiEvent<'_>) -> Result<(), ReduceError> {
        match self {
            Folding::Scanned(state) => state.apply(event),
            Folding::Indexed(state) => state.apply(event),
        }
    }

    fn apply_with_patch(&mut self, event: UiEvent<'_>) -> Result<Vec<PatchOp>, ReduceError> {
        match self {
            Folding::Scanned(state) => state.apply_with_patch(event),
            Folding::Indexed(state) => state.apply_with_patch(event),
        }
    }

    fn into_state(self) -> UiState {
        match self {
            Folding::Scanned(state) => state,
            Folding::Indexed(state) => state.into_state(),
        }
    }
}

/// The catch-up of a resume (`RESUME-017`): folds `events`, the events committed after the
/// client's `last_seq`, over `base`, the state of `last_seq`, and returns the state reached and
/// the one patch that turns `base` into it.
///
/// The patch is the concatenation of the [`UiState::apply_with_patch`] patches of the events, in
/// order (the catch-up `spec/resume.md` names as valid), except that a run of consecutive deltas
/// appending to the same stream gives one `test` and one `replace` of its text, the text after the
/// last of them, in place of one pair per delta (inside a sub-agent's transcript, since 1.3, the
/// last delta's `test`s of host and item and its `replace`): a catch-up over a long stream is
/// O(text), not O(text²). It satisfies `STATE-038` and `STATE-039`, and `STATE-040` against `events`; applied
/// to any other base, its `test` ops fail wherever an event changes an existing item. No events
/// give an empty patch and `base` itself.
///
/// A refused event ends the catch-up: the error carries its position in `events` and the
/// reducer's refusal, as [`crate::reduce_all`] does. `base` is never changed.
pub fn catch_up<'a>(
    base: &UiState,
    events: impl IntoIterator<Item = UiEvent<'a>>,
) -> Result<(UiState, Vec<PatchOp>), (usize, ReduceError)> {
    let mut patch = Vec::new();
    let mut state = Folding::Scanned(base.clone());
    // The index of the open stream whose text appending deltas changed since the last op.
    let mut stale_text: Option<usize> = None;
    // Since 1.3: the open stream of a transcript that appending deltas changed since the last op,
    // with the ops of the last of them. Those ops (a `test` of the host, of the item, and a
    // `replace` of its whole text) depend only on the state they leave, so the run's last delta's
    // stand for the whole run.
    let mut stale_nested: Option<(Id, Vec<PatchOp>)> = None;
    for (position, event) in events.into_iter().enumerate() {
        if position == CATCH_UP_SCANNED_EVENTS {
            if let Folding::Scanned(scanned) = state {
                state = Folding::Indexed(crate::IndexedUiState::new(scanned));
            }
        }
        let appends = match event {
            UiEvent::AssistantMessageDelta(e) => state.state().is_open_stream(&e.item_id, &e.invocation_id),
            UiEvent::ReasoningDelta(e) => state.state().is_open_reasoning(&e.item_id, &e.invocation_id),
            _ => false,
        };
        let appends_nested = match event {
            UiEvent::AssistantMessageDelta(e) if e.parent_call_id.is_some() => Some(&e.item_id),
            UiEvent::ReasoningDelta(e) if e.parent_call_id.is_some() => Some(&e.item_id),
            _ => None,
        }
        .filter(|item| state.state().is_open_stream_anywhere(item));
        if appends {
            flush_nested(&mut stale_nested, &mut patch);
            state.apply(event).map_err(|refusal| (position, refusal))?;
            stale_text = Some(state.state().items.len() - 1);
            continue;
        }
        if let Some(index) = stale_text.take() {
            state.state().stream_text_ops(index, &mut patch);
        }
        if let Some(item) = appends_nested {
            let ops = state.apply_with_patch(event).map_err(|refusal| (position, refusal))?;
            match &mut stale_nested {
                Some((open, last)) if open == item => *last = ops,
                _ => {
                    flush_nested(&mut stale_nested, &mut patch);
                    stale_nested = Some((item.clone(), ops));
                }
            }
            continue;
        }
        flush_nested(&mut stale_nested, &mut patch);
        patch.extend(state.apply_with_patch(event).map_err(|refusal| (position, refusal))?);
    }
    if let Some(index) = stale_text {
        state.state().stream_text_ops(index, &mut patch);
    }
    flush_nested(&mut stale_nested, &mut patch);
    Ok((state.into_state(), patch))
}

/// Puts the ops of a run of deltas into a transcript's open stream (see [`catch_up`]) into the patch.
fn flush_nested(stale: &mut Option<(Id, Vec<PatchOp>)>, patch: &mut Vec<PatchOp>) {
    if let Some((_, ops)) = stale.take() {
        patch.extend(ops);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ops_serialize_as_rfc_6902() {
        let ops = vec![
            PatchOp::Test { path: "/items/0/id".into(), value: json!("a") },
            PatchOp::Add { path: "/items/-".into(), value: json!({"id": "b"}) },
            PatchOp::Remove { path: "/items/1".into() },
            PatchOp::Replace { path: "/run".into(), value: json!({"status": "idle"}) },
            PatchOp::Move { from: "/a".into(), path: "/b".into() },
            PatchOp::Copy { from: "/a".into(), path: "/c".into() },
        ];
        let wire = serde_json::to_value(&ops).unwrap();
        assert_eq!(
            wire,
            json!([
                {"op": "test", "path": "/items/0/id", "value": "a"},
                {"op": "add", "path": "/items/-", "value": {"id": "b"}},
                {"op": "remove", "path": "/items/1"},
                {"op": "replace", "path": "/run", "value": {"status": "idle"}},
                {"op": "move", "from": "/a", "path": "/b"},
                {"op": "copy", "from": "/a", "path": "/c"},
            ])
        );
        let back: Vec<PatchOp> = serde_json::from_value(wire).unwrap();
        assert_eq!(back, ops);
        assert!(serde_json::from_value::<PatchOp>(json!({"op": "add", "path": "/x"})).is_err(), "add needs a value");
        assert!(serde_json::from_value::<PatchOp>(json!({"op": "frob", "path": "/x"})).is_err());
    }

    fn state_with_call() -> (UiState, Vec<crate::ServerFrame>) {
        let frames: Vec<crate::ServerFrame> = [
            json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": "m-1", "invocation_id": "inv-1",
                   "item_id": "u-1", "text": "hi", "ts": "2026-11-22T10:00:00Z"}),
            json!({"type": "chat.run_started", "seq": 2, "invocation_id": "inv-1", "ts": "2026-11-22T10:00:00Z"}),
            json!({"type": "chat.tool_call", "seq": 3, "invocation_id": "inv-1", "tool_call_id": "tc-1",
                   "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline",
                   "payload": {}, "call_index": 0, "ts": "2026-11-22T10:00:00Z"}),
            json!({"type": "chat.tool_call", "seq": 4, "invocation_id": "inv-1", "tool_call_id": "tc-2",
                   "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline",
                   "payload": {}, "call_index": 1, "ts": "2026-11-22T10:00:00Z"}),
        ]
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
        let mut state = UiState::default();
        for f in &frames {
            state.apply(f.ui_event().unwrap()).unwrap();
        }
        let settle: crate::ServerFrame = serde_json::from_value(json!({"type": "chat.tool_call_complete", "seq": 5,
            "tool_call_id": "tc-1", "status": "completed", "ts": "2026-11-22T10:00:01Z"}))
        .unwrap();
        (state, vec![settle])
    }

    #[test]
    fn built_patches_have_the_required_shape_and_broken_ones_are_named() {
        let (base, frames) = state_with_call();
        let events: Vec<UiEvent<'_>> = frames.iter().map(|f| f.ui_event().unwrap()).collect();
        let ops = base.clone().apply_with_patch(events[0]).unwrap();
        assert_eq!(check_shape(&base, &events, &ops), Ok(()));

        let requirement = |ops: &[PatchOp]| check_shape(&base, &events, ops).map_err(|e| e.requirement);
        let unguarded: Vec<PatchOp> = ops.iter().filter(|o| !matches!(o, PatchOp::Test { .. })).cloned().collect();
        assert_eq!(requirement(&unguarded), Err("STATE-039"));
        // The other call (tc-2, index 2) is not named by the settle of tc-1.
        let other = vec![
            PatchOp::Test { path: "/items/2/id".into(), value: json!("tc-2") },
            PatchOp::Replace { path: "/items/2/status".into(), value: json!("completed") },
        ];
        assert_eq!(requirement(&other), Err("STATE-040"));
        assert_eq!(requirement(&[PatchOp::Replace { path: "/items".into(), value: json!([]) }]), Err("STATE-040"));
        assert_eq!(requirement(&[PatchOp::Replace { path: "".into(), value: json!({}) }]), Err("STATE-040"));
        assert_eq!(
            requirement(&[PatchOp::Move { from: "/items/0".into(), path: "/items/-".into() }]),
            Err("STATE-040")
        );
        assert_eq!(requirement(&[PatchOp::Replace { path: "/items/-".into(), value: json!({}) }]), Err("STATE-040"));
        // An insertion must follow a tested item; an index past the end names nothing.
        let insert = vec![PatchOp::Add { path: "/items/2".into(), value: json!({"id": "tc-1.output"}) }];
        assert_eq!(requirement(&insert), Err("STATE-039"));
        assert_eq!(requirement(&[PatchOp::Remove { path: "/items/3".into() }]), Err("STATE-038"));
        assert_eq!(requirement(&[PatchOp::Remove { path: "/items/x".into() }]), Err("STATE-038"));
        assert_eq!(requirement(&[PatchOp::Replace { path: "/run".into(), value: json!({"status": "idle"}) }]), Ok(()));
    }

    #[test]
    fn member_ops_escape_names_and_cover_add_replace_remove() {
        let old = json!({"a/b": 1, "same": true, "gone": 0});
        let new = json!({"a/b": 2, "same": true, "new~": "x"});
        let ops = member_ops("/items/3", old.as_object().unwrap(), new.as_object().unwrap());
        assert_eq!(
            ops,
            vec![
                PatchOp::Replace { path: "/items/3/a~1b".into(), value: json!(2) },
                PatchOp::Add { path: "/items/3/new~0".into(), value: json!("x") },
                PatchOp::Remove { path: "/items/3/gone".into() },
            ]
        );
    }
}
