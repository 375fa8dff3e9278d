//! A UiState held in shared pieces, so the monitor's per-frame cost follows the frame, not the
//! state: the items sit in [`Pieces`], a held copy shares every item it did not change, and a
//! patch is applied in place to the typed items it addresses (RFC 6902, all or nothing).
//!
//! The fast path covers what a patch can say about one item or the run (`add`, `remove`,
//! `replace`, `test`, on a whole item, a member of one, `/items/-` or `/run`). Anything else (a
//! `move` or `copy`, a path outside `/items/N` and `/run`, a value whose typed form would not
//! serialize back to the same JSON, any op that fails) is applied to the whole state's JSON
//! instead, so every patch is judged exactly as RFC 6902 applied to the state's JSON judges it.

use chatwire_schema::state_patch::{PatchBase, PatchOp};
use chatwire_schema::ui_state::RunState;
use chatwire_schema::usage::UsageState;
use chatwire_schema::{DisplayItem, UiState};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::pieces::Pieces;

/// A UiState whose clones share the items they did not change ([`Pieces`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedState {
    items: Pieces<DisplayItem>,
    run: RunState,
    /// The usage sums (since 1.3); an op on `/usage` takes the whole-JSON path.
    usage: Option<UsageState>,
}

impl PatchBase for SharedState {
    fn item_count(&self) -> usize {
        self.items.len()
    }

    fn item(&self, index: usize) -> &DisplayItem {
        self.get(index).expect("PatchBase::item is called below item_count")
    }

    fn to_state(&self) -> UiState {
        SharedState::to_state(self)
    }
}

impl SharedState {
    /// `state` in pieces (O(state): a whole state arrived).
    pub fn from_state(state: &UiState) -> Self {
        SharedState { items: Pieces::from_items(&state.items), run: state.run.clone(), usage: state.usage.clone() }
    }

    /// The whole state (O(state): for a whole comparison or a divergence's report).
    pub fn to_state(&self) -> UiState {
        UiState { items: self.iter().cloned().collect(), run: self.run.clone(), usage: self.usage.clone() }
    }

    /// The item at `index`.
    pub fn get(&self, index: usize) -> Option<&DisplayItem> {
        self.items.get(index)
    }

    /// Whether the last item is an open stream, text or reasoning (`UiState::open_stream_id`).
    pub fn has_open_stream(&self) -> bool {
        let last = self.items.len().checked_sub(1).and_then(|i| self.get(i));
        matches!(last, Some(DisplayItem::AssistantMarkdown(m)) if m.streaming)
            || matches!(last, Some(DisplayItem::Reasoning(r)) if r.streaming)
    }

    /// Every item, in order.
    pub fn iter(&self) -> impl Iterator<Item = &DisplayItem> {
        self.items.iter()
    }

    /// This state brought up to `state`, which differs from it only from item `from` on and in
    /// its run: O(changed items), sharing the items below `from`.
    pub fn synced_to(&self, state: &UiState, from: usize) -> SharedState {
        let mut next = self.clone();
        let from = from.min(next.items.len()).min(state.items.len());
        next.items.truncate(from);
        for item in &state.items[from..] {
            next.items.push(item.clone());
        }
        next.run = state.run.clone();
        next.usage = state.usage.clone();
        next
    }

    /// Whether this state equals `state`, given that they can differ only from item `from` on and
    /// in their runs.
    pub fn equals_from(&self, state: &UiState, from: usize) -> bool {
        self.items.len() == state.items.len()
            && self.run == state.run
            && self.usage == state.usage
            && state.items.iter().enumerate().skip(from).all(|(i, item)| self.get(i) == Some(item))
    }

    /// Applies `ops`, all or nothing, and returns the state they give and the lowest item index
    /// they may have changed (the run aside). Errors read as RFC 6902 applied to the JSON says.
    pub fn apply(&self, ops: &[PatchOp]) -> Result<(SharedState, usize), String> {
        let mut next = self.clone();
        let mut low = usize::MAX;
        for op in ops {
            match next.apply_op(op) {
                Some(changed) => low = low.min(changed),
                None => return self.apply_whole(ops).map(|s| (s, 0)),
            }
        }
        Ok((next, low))
    }

    /// The patch applied to the whole state's JSON: the reference the fast path agrees with.
    fn apply_whole(&self, ops: &[PatchOp]) -> Result<SharedState, String> {
        apply_json(&self.to_state(), ops).map(|s| SharedState::from_state(&s))
    }

    /// One op on the typed state, when the fast path can take it; the lowest item index it may
    /// have changed (`usize::MAX`: none). `None`: leave the patch to [`SharedState::apply_whole`].
    fn apply_op(&mut self, op: &PatchOp) -> Option<usize> {
        if matches!(op, PatchOp::Move { .. } | PatchOp::Copy { .. }) {
            return None;
        }
        let path = op.path();
        if let Some(rest) = path.strip_prefix("/run") {
            if !rest.is_empty() && !rest.starts_with('/') {
                return None;
            }
            let run = edit(&self.run, rest, op)?;
            self.run = run;
            return Some(usize::MAX);
        }
        let rest = path.strip_prefix("/items/")?;
        let (token, below) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if token == "-" {
            // Only an add of a whole item appends; anything else is the JSON's to refuse.
            let PatchOp::Add { value, .. } = op else { return None };
            if !below.is_empty() {
                return None;
            }
            let item = typed(value)?;
            let at = self.items.len();
            self.items.push(item);
            return Some(at);
        }
        let index = array_index(token)?;
        let len = self.items.len();
        if below.is_empty() {
            match op {
                PatchOp::Add { value, .. } if index <= len => {
                    self.items.insert(index, typed(value)?);
                }
                PatchOp::Replace { value, .. } if index < len => {
                    self.items.set(index, typed(value)?);
                }
                PatchOp::Remove { .. } if index < len => {
                    self.items.remove(index);
                }
                PatchOp::Test { value, .. } if index < len => {
                    return (serde_json::to_value(self.get(index)?).ok()? == *value).then_some(usize::MAX);
                }
                _ => return None,
            }
            return Some(index);
        }
        if below == "/id" {
            if let PatchOp::Test { value, .. } = op {
                return (self.get(index)?.id().as_str() == value.as_str()?).then_some(usize::MAX);
            }
        }
        let item = edit(self.get(index)?, below, op)?;
        if matches!(op, PatchOp::Test { .. }) {
            return Some(usize::MAX);
        }
        self.items.set(index, item);
        Some(index)
    }
}

/// Applies `ops` to the JSON of `base`, all or nothing, and reads the result as a UiState: the
/// reference the in-place application ([`SharedState::apply`]) falls back to and agrees with.
pub(crate) fn apply_json(base: &UiState, ops: &[PatchOp]) -> Result<UiState, String> {
    let mut doc = serde_json::to_value(base).map_err(|e| format!("the base state does not serialize: {e}"))?;
    let patch: json_patch::Patch = serde_json::to_value(ops)
        .and_then(serde_json::from_value)
        .map_err(|e| format!("the patch is no RFC 6902 patch: {e}"))?;
    json_patch::patch(&mut doc, &patch).map_err(|e| format!("the patch does not apply: {e}"))?;
    serde_json::from_value(doc).map_err(|e| format!("the patched state is not a UiState: {e}"))
}

/// An RFC 6901 array index: `0` or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    (digits && (token == "0" || !token.starts_with('0'))).then(|| token.parse().ok()).flatten()
}

/// `op`, with its path's remainder `below` (empty: the value itself), applied to the JSON of
/// `value`; the typed result, when it serializes back to exactly that JSON.
fn edit<T: Serialize + DeserializeOwned>(value: &T, below: &str, op: &PatchOp) -> Option<T> {
    let mut doc = serde_json::to_value(value).ok()?;
    let mut local = serde_json::to_value(op).ok()?;
    local["path"] = Value::String(below.to_owned());
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(vec![local])).ok()?;
    json_patch::patch(&mut doc, &patch).ok()?;
    typed(&doc)
}

/// `value` as a `T`, when `T` writes it back unchanged (so later ops see the same JSON).
fn typed<T: Serialize + DeserializeOwned>(value: &Value) -> Option<T> {
    let t = T::deserialize(value).ok()?;
    (serde_json::to_value(&t).ok()? == *value).then_some(t)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn state(n: usize) -> UiState {
        let items: Vec<Value> = (0..n)
            .map(|i| {
                json!({"kind": "assistant_markdown", "id": format!("a-{i}"), "invocation_id": "inv-1",
                "markdown": format!("text {i}"), "ts": "2026-11-22T10:00:00Z"})
            })
            .collect();
        serde_json::from_value(json!({"items": items, "run": {"status": "idle"}})).unwrap()
    }

    fn ops(v: Value) -> Vec<PatchOp> {
        serde_json::from_value(v).unwrap()
    }

    /// Every patch gives what RFC 6902 on the whole JSON gives, fast path or not.
    #[test]
    fn agrees_with_the_whole_json_patch() {
        let base = state(100);
        let shared = SharedState::from_state(&base);
        let item = |id: &str| {
            json!({"kind": "assistant_markdown", "id": id, "invocation_id": "inv-1",
            "markdown": "x", "ts": "2026-11-22T10:00:00Z"})
        };
        let cases = [
            json!([{"op": "add", "path": "/items/-", "value": item("new")}]),
            json!([{"op": "test", "path": "/items/5/id", "value": "a-5"}, {"op": "replace", "path": "/items/5/markdown", "value": "y"}]),
            json!([{"op": "test", "path": "/items/5/id", "value": "a-6"}, {"op": "replace", "path": "/items/5/markdown", "value": "y"}]),
            json!([{"op": "add", "path": "/items/40", "value": item("mid")}, {"op": "remove", "path": "/items/0"}]),
            json!([{"op": "remove", "path": "/items/99"}, {"op": "remove", "path": "/items/98"}]),
            json!([{"op": "remove", "path": "/items/100"}]),
            json!([{"op": "replace", "path": "/run", "value": {"status": "idle"}}]),
            json!([{"op": "replace", "path": "/run/status", "value": "bogus"}]),
            json!([{"op": "add", "path": "/items/3/streaming", "value": true}, {"op": "remove", "path": "/items/3/streaming"}]),
            json!([{"op": "remove", "path": "/items/3/ts"}, {"op": "add", "path": "/items/3/ts", "value": "2026-11-22T10:00:01Z"}]),
            json!([{"op": "add", "path": "/items/3/streaming", "value": false}]),
            json!([{"op": "move", "from": "/items/0", "path": "/items/-"}]),
            json!([{"op": "copy", "from": "/items/0", "path": "/items/1"}]),
            json!([{"op": "replace", "path": "/items/01/markdown", "value": "y"}]),
            json!([{"op": "add", "path": "/items/-", "value": {"kind": "frob"}}]),
            json!([{"op": "test", "path": "/items/2", "value": item("a-2")}]),
            json!([{"op": "replace", "path": "", "value": {"items": [], "run": {"status": "idle"}}}]),
        ];
        for case in cases {
            let ops = ops(case.clone());
            let want = apply_json(&base, &ops);
            let got = shared.apply(&ops).map(|(s, _)| s.to_state());
            assert_eq!(got, want, "{case}");
        }
    }

    #[test]
    fn a_state_syncs_from_a_changed_index() {
        let base = state(200);
        let shared = SharedState::from_state(&base);
        let (next, low) = shared.apply(&ops(json!([{"op": "remove", "path": "/items/199"}]))).unwrap();
        assert_eq!(low, 199);
        assert_eq!(next.to_state().items, base.items[..199]);
        assert_eq!(shared.to_state(), base, "the base keeps its items");
        let mut moved = base.clone();
        moved.items.truncate(150);
        let synced = shared.synced_to(&moved, 150);
        assert_eq!(synced.to_state(), moved);
        assert!(synced.equals_from(&moved, 140) && !shared.equals_from(&moved, 140));
    }
}
