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
//! - a rewind removes from the end, each removal after a `test` of the removed item's id;
//! - a changed run is one `replace` of `/run`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::frame::UiEvent;
use crate::reducer::ReduceError;
use crate::ui_state::{DisplayItem, UiState};
use crate::Id;

/// One operation of a JSON Patch (RFC 6902). `path` and `from` are JSON Pointers (RFC 6901).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum PatchOp {
    /// Adds `value` at `path`: inserts into an array (`-` appends), sets an object member.
    Add {
        /// Where.
        path: String,
        /// What.
        value: Value,
    },
    /// Removes the value at `path`.
    Remove {
        /// Where.
        path: String,
    },
    /// Replaces the value at `path`, which must exist.
    Replace {
        /// Where.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Moves the value at `from` to `path`.
    Move {
        /// Where from.
        from: String,
        /// Where to.
        path: String,
    },
    /// Copies the value at `from` to `path`.
    Copy {
        /// Where from.
        from: String,
        /// Where to.
        path: String,
    },
    /// Fails the whole patch unless the value at `path` equals `value`.
    Test {
        /// Where.
        path: String,
        /// The value expected there.
        value: Value,
    },
}

impl PatchOp {
    /// The op's `path`.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Remove { path }
            | PatchOp::Replace { path, .. }
            | PatchOp::Move { path, .. }
            | PatchOp::Copy { path, .. }
            | PatchOp::Test { path, .. } => path,
        }
    }
}

/// What an event can change besides appending: the items it names, as they were before.
enum Touched {
    /// Nothing in place (appends and run changes are found afterwards).
    Nothing,
    /// The item at this index, and its JSON before the event.
    Item(usize, Value),
    /// A `chat.tool_output` for the call at this index: its output item right after it either
    /// exists (with its JSON before) or is about to be inserted there.
    Output { call: usize, before: Option<Value> },
    /// A rewind: the items from this index on, by id, are about to be cut.
    Cut(usize, Vec<Id>),
}

impl UiState {
    /// Applies one event exactly like [`UiState::apply`] and returns the JSON Patch that turns the
    /// state's JSON before the event into its JSON after it. On error the state is unchanged and
    /// no patch is returned.
    pub fn apply_with_patch(&mut self, event: UiEvent<'_>) -> Result<Vec<PatchOp>, ReduceError> {
        let len_before = self.items.len();
        let run_before = self.run.clone();
        let touched = self.touched_by(event);
        self.apply(event)?;
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
        }
        if self.items.len() > len_before + inserted {
            for item in &self.items[len_before + inserted..] {
                ops.push(PatchOp::Add { path: "/items/-".into(), value: item_json(item) });
            }
        }
        if self.run != run_before {
            ops.push(PatchOp::Replace { path: "/run".into(), value: to_json(&self.run) });
        }
        Ok(ops)
    }

    /// What `event` may change in place, read before it is applied. An event the reducer will
    /// refuse may name nothing that exists; it is refused before the result is used.
    fn touched_by(&self, event: UiEvent<'_>) -> Touched {
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
            UiEvent::UserMessageAccepted(_)
            | UiEvent::RunStarted(_)
            | UiEvent::AssistantMessage(_)
            | UiEvent::ToolCall(_)
            | UiEvent::RunComplete(_) => Touched::Nothing,
        }
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
