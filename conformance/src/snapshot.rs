//! Golden snapshots: a normalized projection of the final UiState and of the frame-type transcript,
//! stored as insta `.snap` files under `fixtures/snapshots/`. The workspace tests assert them with
//! insta; the CLI parses the same files itself and prints a line diff, so no cargo is needed.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

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
                    sorted.insert(k.clone(), normalized);
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
        "tool_call_id" | "corr" => KeyKind::Id("tool_call"),
        "item_id" => KeyKind::Id("item"),
        _ => return None,
    })
}

/// The text of a snapshot: the normalized state and the transcript, as pretty JSON.
pub fn projection(normalizer: &mut Normalizer, state: &Value, transcript: &[String]) -> String {
    let mut doc = Map::new();
    doc.insert("state".into(), normalizer.normalize(state));
    doc.insert("transcript".into(), Value::Array(transcript.iter().cloned().map(Value::String).collect()));
    serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default()
}

/// The file name of a scenario's snapshot.
pub fn file_name(scenario: &str, snapshot: &str) -> String {
    format!("{scenario}__{snapshot}.snap")
}

/// The body of an insta `.snap` file: everything after the metadata header (`---` … `---`).
pub fn parse_snap(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            let body: Vec<&str> = lines.collect();
            return Some(body.join("\n").trim_end().to_owned());
        }
    }
    None
}

/// Golden snapshots by file name.
#[derive(Clone, Debug, Default)]
pub struct SnapshotStore {
    files: BTreeMap<String, String>,
}

impl SnapshotStore {
    /// The snapshots embedded in the binary at build time.
    pub fn embedded() -> Self {
        SnapshotStore {
            files: crate::catalog::EMBEDDED_SNAPSHOTS.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect(),
        }
    }

    /// The `.snap` files of a directory.
    pub fn from_dir(dir: &Path) -> std::io::Result<Self> {
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            if name.ends_with(".snap") {
                files.insert(name.to_owned(), std::fs::read_to_string(&path)?);
            }
        }
        Ok(SnapshotStore { files })
    }

    /// The golden body for a scenario's snapshot, if stored and readable.
    pub fn golden(&self, scenario: &str, snapshot: &str) -> Option<Result<String, String>> {
        let file = file_name(scenario, snapshot);
        self.files.get(&file).map(|text| parse_snap(text).ok_or_else(|| format!("{file} is not an insta .snap file")))
    }
}

/// A readable line diff (`-` golden, `+` actual) with a little context; empty when equal.
pub fn line_diff(expected: &str, actual: &str, max_lines: usize) -> Vec<String> {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    if a == b {
        return Vec::new();
    }
    // LCS table; snapshots are small, and the size is capped so a huge answer cannot blow up memory.
    const CAP: usize = 4000;
    if a.len() > CAP || b.len() > CAP {
        return vec![format!("(snapshot too large to diff: {} vs {} lines)", a.len(), b.len())];
    }
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    // Keep changed lines with two lines of context around them.
    let changed: Vec<usize> = ops.iter().enumerate().filter(|(_, (c, _))| *c != ' ').map(|(k, _)| k).collect();
    let mut out = Vec::new();
    let mut last_shown: Option<usize> = None;
    for (k, (c, line)) in ops.iter().enumerate() {
        let near = changed.iter().any(|&x| x.abs_diff(k) <= 2);
        if !near {
            continue;
        }
        if last_shown.is_some_and(|l| k > l + 1) {
            out.push("  …".to_owned());
        }
        out.push(format!("{c} {line}"));
        last_shown = Some(k);
        if out.len() >= max_lines {
            out.push(format!("  … ({} changed lines in all)", changed.len()));
            break;
        }
    }
    out
}

/// Differences between two JSON values as `path: expected X, got Y` lines (at most `max`).
pub fn json_diff(expected: &Value, actual: &Value, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    diff_into(expected, actual, &mut String::new(), &mut out, max);
    out
}

fn diff_into(expected: &Value, actual: &Value, path: &mut String, out: &mut Vec<String>, max: usize) {
    if out.len() >= max || expected == actual {
        return;
    }
    let show = |v: &Value| crate::pattern::excerpt(v, 100);
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let len = path.len();
                path.push('/');
                path.push_str(k);
                match a.get(k) {
                    Some(av) => diff_into(ev, av, path, out, max),
                    None if out.len() < max => out.push(format!("{path}: expected {}, missing", show(ev))),
                    None => {}
                }
                path.truncate(len);
            }
            for (k, av) in a {
                if !e.contains_key(k) && out.len() < max {
                    out.push(format!("{path}/{k}: unexpected {}", show(av)));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff_into(ev, av, path, out, max);
                path.truncate(len);
            }
            if e.len() != a.len() && out.len() < max {
                out.push(format!("{}: expected {} element(s), got {}", display(path), e.len(), a.len()));
            }
        }
        _ => out.push(format!("{}: expected {}, got {}", display(path), show(expected), show(actual))),
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
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

    #[test]
    fn snap_files_parse() {
        let text = "---\nsource: conformance/tests/reference.rs\nexpression: projection\n---\n{\n  \"a\": 1\n}\n";
        assert_eq!(parse_snap(text).unwrap(), "{\n  \"a\": 1\n}");
        assert_eq!(parse_snap("no header"), None);
        assert_eq!(parse_snap("---\nunterminated"), None);
    }

    #[test]
    fn line_diff_shows_changes_with_context() {
        let golden = "a\nb\nc\nd\ne\nf\ng";
        let actual = "a\nb\nc\nX\ne\nf\ng";
        let diff = line_diff(golden, actual, 20);
        assert!(diff.contains(&"- d".to_owned()), "{diff:?}");
        assert!(diff.contains(&"+ X".to_owned()), "{diff:?}");
        assert!(diff.contains(&"  c".to_owned()), "{diff:?}");
        assert!(!diff.contains(&"  a".to_owned()), "{diff:?}");
        assert!(line_diff(golden, golden, 20).is_empty());
    }

    #[test]
    fn json_diff_names_paths() {
        let diff = json_diff(&json!({"a": [1, 2], "b": "x"}), &json!({"a": [1, 3], "c": true}), 10);
        assert!(diff.contains(&"/a/1: expected 2, got 3".to_owned()), "{diff:?}");
        assert!(diff.iter().any(|l| l.starts_with("/b: expected \"x\", missing")), "{diff:?}");
        assert!(diff.iter().any(|l| l.starts_with("/c: unexpected true")), "{diff:?}");
    }
}
