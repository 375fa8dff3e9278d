//! Ids, timestamps and secrets out of what is shown: a [`Normalizer`] names every id by a stable
//! numbered placeholder (`[tool_call:1]`), so a finding's frame, its message and a golden snapshot
//! of one scenario name the same id the same way.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

/// Replaces ids with stable numbered placeholders (`[tool_call:1]`), timestamps with `[ts]` and
/// secrets with `[token]`, and sorts object keys. One instance per scenario, so the same id gets the
/// same placeholder everywhere in it.
#[derive(Clone, Debug, Default)]
pub struct Normalizer {
    names: HashMap<String, String>,
    counters: HashMap<&'static str, usize>,
}

impl Normalizer {
    /// A normalized copy of `value`.
    pub fn normalize(&mut self, value: &Value) -> Value {
        self.walk(value, None)
    }

    /// The placeholder for an id of a kind (`session`, `invocation`, `tool_call`, `item`); the first
    /// kind an id is seen with names it.
    pub fn id(&mut self, kind: &'static str, raw: &str) -> String {
        if let Some(name) = self.names.get(raw) {
            return name.clone();
        }
        // An output item id is its call's id plus `.output`: keep the relation visible.
        if let Some(call) = raw.strip_suffix(chatwire_schema::reducer::OUTPUT_ID_SUFFIX) {
            if let Some(name) = self.names.get(call) {
                return format!("{name}{}", chatwire_schema::reducer::OUTPUT_ID_SUFFIX);
            }
        }
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        let name = format!("[{kind}:{n}]");
        self.names.insert(raw.to_owned(), name.clone());
        name
    }

    fn walk(&mut self, value: &Value, key: Option<&str>) -> Value {
        match value {
            Value::Object(map) => {
                let item_kind = map.get("kind").and_then(Value::as_str).map(str::to_owned);
                // `state.usage.invocations` (since 1.3) is keyed by invocation id.
                let keyed_by_invocation = key == Some("invocations");
                let mut sorted: BTreeMap<String, Value> = BTreeMap::new();
                for (k, v) in map {
                    let normalized = if k == "id" && item_kind.is_some() {
                        match (item_kind.as_deref(), v.as_str()) {
                            (Some("tool_call"), Some(s)) => Value::String(self.id("tool_call", s)),
                            (Some("tool_output"), Some(s)) => Value::String(self.id("item", s)),
                            (_, Some(s)) => Value::String(self.id("item", s)),
                            _ => self.walk(v, Some(k)),
                        }
                    } else {
                        self.walk(v, Some(k))
                    };
                    let k = match keyed_by_invocation {
                        true => self.id("invocation", k),
                        false => k.clone(),
                    };
                    sorted.insert(k, normalized);
                }
                // Sorted keys, except that the discriminator (`type` of a frame, `kind` of an item)
                // leads, so a reader sees first what the object is.
                let mut out = Map::new();
                for lead in ["type", "kind"] {
                    if let Some(v) = sorted.remove(lead) {
                        out.insert(lead.to_owned(), v);
                    }
                }
                out.extend(sorted);
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.walk(v, key)).collect()),
            Value::String(s) => Value::String(match key.and_then(kind_of_key) {
                Some(KeyKind::Timestamp) => "[ts]".to_owned(),
                Some(KeyKind::Secret) => "[token]".to_owned(),
                Some(KeyKind::Id(kind)) => self.id(kind, s),
                None => s.clone(),
            }),
            other => other.clone(),
        }
    }
}

enum KeyKind {
    Timestamp,
    Secret,
    Id(&'static str),
}

fn kind_of_key(key: &str) -> Option<KeyKind> {
    Some(match key {
        "ts" | "settled_ts" => KeyKind::Timestamp,
        "resume_token" => KeyKind::Secret,
        "session_id" => KeyKind::Id("session"),
        "invocation_id" | "before_invocation_id" | "removed_invocation_ids" => KeyKind::Id("invocation"),
        "tool_call_id" | "corr" | "parent_call_id" | "continues" => KeyKind::Id("tool_call"),
        "item_id" => KeyKind::Id("item"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_become_stable_placeholders() {
        let mut n = Normalizer::default();
        let state = json!({
            "run": {"status": "completed", "invocation_id": "inv-a"},
            "items": [
                {"kind": "user_message", "id": "it-1", "invocation_id": "inv-a", "client_message_id": "u1", "text": "hi", "ts": "2026-01-01T00:00:00Z"},
                {"kind": "tool_call", "id": "tc-x", "invocation_id": "inv-a", "ts": "2026-01-01T00:00:01Z"},
                {"kind": "tool_output", "id": "tc-x.output", "tool_call_id": "tc-x", "invocation_id": "inv-a"},
            ],
        });
        let out = n.normalize(&state);
        assert_eq!(out["run"]["invocation_id"], "[invocation:1]");
        assert_eq!(out["items"][0]["id"], "[item:1]");
        assert_eq!(out["items"][0]["ts"], "[ts]");
        assert_eq!(out["items"][0]["client_message_id"], "u1");
        assert_eq!(out["items"][1]["id"], "[tool_call:1]");
        assert_eq!(out["items"][2]["id"], "[tool_call:1].output");
        assert_eq!(out["items"][2]["tool_call_id"], "[tool_call:1]");
        // Keys are sorted, the discriminator first.
        let keys: Vec<&String> = out["items"][0].as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "kind");
        let mut sorted = keys[1..].to_vec();
        sorted.sort();
        assert_eq!(keys[1..], sorted[..]);
    }
}
