//! Reading a JSON Schema's shape for the walker (`walk.rs`): enum-like value sets, tagged and
//! untagged union branches, `Option<T>` in either spelling, document-local `$ref`s, required and
//! type sets, numeric bounds (integer formats included), and short renderings for findings.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use chatwire_schema::ProtocolVersion;
use serde_json::{Map, Value};

use super::rules::{Flow, Rule};

/// Keywords that only document: a change is [`Rule::AnnotationChanged`].
pub(super) const ANNOTATIONS: &[&str] =
    &["description", "title", "examples", "default", "$comment", "$id", "readOnly", "writeOnly"];

/// The values an enum-like schema admits, with each value's branch when it came from a union.
pub(super) struct ValueSet {
    pub(super) values: Vec<(Value, Option<Value>)>,
    pub(super) from_union: bool,
}

impl ValueSet {
    pub(super) fn listing(&self) -> String {
        let shown: Vec<String> = self.values.iter().map(|(v, _)| v.to_string()).collect();
        format!("[{}]", shown.join(", "))
    }
}

/// The rule an addition is reported under. An addition annotated with a minor newer than the
/// baseline reaches only connections that negotiated that minor (`COMPAT-005`, `COMPAT-006`), so
/// it is a [`Rule::NegotiatedAddition`] whatever its direction, with one exception: a required
/// member added to a client → server message stays an ERR, because a server still speaks the
/// older minor and must keep accepting the frame without it (`COMPAT-007`).
pub(crate) fn addition_rule(
    rule: Rule,
    flow: Flow,
    since: Option<ProtocolVersion>,
    baseline: ProtocolVersion,
    detail: String,
) -> (Rule, String) {
    match since {
        Some(since) if rule == Rule::RequiredPropertyAdded && flow != Flow::ServerToClient => {
            (rule, format!("{detail}; since {since}, but a server must still accept {baseline} frames without it"))
        }
        Some(since) if since > baseline => (Rule::NegotiatedAddition, format!("{detail} (since {since})")),
        Some(since) => {
            (rule, format!("{detail}; annotated since {since}, which is not newer than the baseline {baseline}"))
        }
        None => (rule, detail),
    }
}

/// `const`, `enum`, or a `oneOf`/`anyOf` whose every branch is a `const` (schemars' documented enums).
pub(super) fn value_set(m: &Map<String, Value>, root: &Value) -> Option<ValueSet> {
    if let Some(c) = m.get("const") {
        return Some(ValueSet { values: vec![(c.clone(), None)], from_union: false });
    }
    if let Some(Value::Array(list)) = m.get("enum") {
        return Some(ValueSet { values: list.iter().map(|v| (v.clone(), None)).collect(), from_union: false });
    }
    let branches = ["oneOf", "anyOf"].iter().find_map(|k| m.get(*k).and_then(Value::as_array))?;
    let mut values = Vec::new();
    for branch in branches {
        let branch = match branch.get("$ref").and_then(Value::as_str) {
            Some(r) => resolve(root, r)?,
            None => branch,
        };
        let is_plain_const =
            branch.get("const").is_some() && !branch.as_object()?.keys().any(|k| k == "properties" || k == "enum");
        if !is_plain_const {
            return None;
        }
        values.push((branch["const"].clone(), Some(branch.clone())));
    }
    (!values.is_empty()).then_some(ValueSet { values, from_union: true })
}

/// A tagged union: the tag property and each branch by its tag value.
pub(super) fn tagged_branches(branches: &[Value], root: &Value) -> Option<(String, BTreeMap<String, Value>)> {
    let resolved: Vec<&Value> = branches
        .iter()
        .map(|b| match b.get("$ref").and_then(Value::as_str) {
            Some(r) => resolve(root, r),
            None => Some(b),
        })
        .collect::<Option<_>>()?;
    let first = resolved.first()?.get("properties")?.as_object()?;
    'candidates: for (tag, schema) in first {
        if schema.get("const").is_none() {
            continue;
        }
        let mut map = BTreeMap::new();
        for (branch, original) in resolved.iter().zip(branches) {
            let Some(value) = branch.pointer(&format!("/properties/{}/const", escape(tag))) else {
                continue 'candidates;
            };
            if map.insert(plain(value), original.clone()).is_some() {
                continue 'candidates;
            }
        }
        return Some((tag.clone(), map));
    }
    None
}

/// Keys for untagged union branches (`$ref` target or `type`), if they are unique.
pub(super) fn branch_keys(branches: &[Value]) -> Option<BTreeMap<String, Value>> {
    let mut map = BTreeMap::new();
    for b in branches {
        let key = if let Some(r) = b.get("$ref").and_then(Value::as_str) {
            format!("$ref={}", r.rsplit('/').next().unwrap_or(r))
        } else {
            format!("type={}", b.get("type")?)
        };
        if map.insert(key, b.clone()).is_some() {
            return None;
        }
    }
    Some(map)
}

/// Splits `Option<T>`: `(true, T)` for `"type": [.., "null"]` with another type, or a two-branch
/// `anyOf`/`oneOf` with one `{"type": "null"}` branch; `(false, schema)` otherwise.
pub(super) fn split_nullable(schema: &Value) -> (bool, Cow<'_, Value>) {
    let Some(m) = schema.as_object() else { return (false, Cow::Borrowed(schema)) };
    if let Some(Value::Array(types)) = m.get("type") {
        let null = Value::String("null".into());
        if types.contains(&null) && types.len() > 1 {
            let rest: Vec<Value> = types.iter().filter(|t| **t != null).cloned().collect();
            let mut inner = m.clone();
            let rest = if rest.len() == 1 { rest[0].clone() } else { Value::Array(rest) };
            inner.insert("type".into(), rest);
            return (true, Cow::Owned(Value::Object(inner)));
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = m.get(key) else { continue };
        let is_null = |b: &Value| b.get("type") == Some(&Value::String("null".into())) && b.get("const").is_none();
        if branches.len() == 2 && branches.iter().filter(|b| is_null(b)).count() == 1 {
            let other = branches.iter().find(|b| !is_null(b)).cloned().unwrap_or(Value::Bool(true));
            let mut inner = match other {
                Value::Object(o) => o,
                other => return (true, Cow::Owned(other)),
            };
            for (k, v) in m {
                if k != key {
                    inner.insert(k.clone(), v.clone());
                }
            }
            return (true, Cow::Owned(Value::Object(inner)));
        }
    }
    (false, Cow::Borrowed(schema))
}

pub(super) fn ref_of(m: &Map<String, Value>) -> Option<&str> {
    m.get("$ref").and_then(Value::as_str)
}

pub(super) fn as_map(v: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    v.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// Resolves a document-local reference (`#`, `#/$defs/Name`, any `#/json/pointer`).
pub(super) fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        Some(root)
    } else {
        root.pointer(pointer)
    }
}

/// The target of a `$ref` with the keywords beside it laid over it (those win on a clash).
pub(super) fn inline_ref(m: &Map<String, Value>, root: &Value) -> Result<Value, String> {
    let Some(reference) = ref_of(m) else { return Ok(Value::Object(m.clone())) };
    let target = resolve(root, reference).ok_or_else(|| reference.to_owned())?;
    let mut out = match target {
        Value::Object(t) => t.clone(),
        other if m.len() == 1 => return Ok(other.clone()),
        _ => Map::new(),
    };
    for (k, v) in m {
        if k != "$ref" {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

pub(super) fn strip_annotations(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    }
}

pub(super) fn required_set(m: &Map<String, Value>) -> BTreeSet<&str> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(super) fn type_set(t: Option<&Value>) -> Option<BTreeSet<String>> {
    match t? {
        Value::String(s) => Some(BTreeSet::from([s.clone()])),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

/// Whether every instance of JSON type `t` is accepted by a schema allowing `types`.
pub(super) fn covered(t: &str, types: &BTreeSet<String>) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

/// The bound `key` puts on instances, counting the range an integer `format` implies for
/// `minimum`/`maximum` (the Rust types reject values outside it, see [`Rule::FormatAdded`]).
pub(super) fn effective_bound(key: &str, m: &Map<String, Value>) -> Option<f64> {
    let explicit = m.get(key).and_then(Value::as_f64);
    let implied = m.get("format").and_then(Value::as_str).filter(|f| !f.is_empty() && *f != "float" && *f != "double");
    let implied = implied.and_then(format_range).and_then(|(min, max)| match key {
        "minimum" => Some(min),
        "maximum" => Some(max),
        _ => None,
    });
    match (explicit, implied) {
        (Some(e), Some(i)) if key == "minimum" => Some(e.max(i)),
        (Some(e), Some(i)) => Some(e.min(i)),
        (e, i) => e.or(i),
    }
}

/// The value range of an integer or float format, for ordering format changes.
pub(super) fn format_range(format: &str) -> Option<(f64, f64)> {
    Some(match format {
        "int8" => (i8::MIN as f64, i8::MAX as f64),
        "uint8" => (0.0, u8::MAX as f64),
        "int16" => (i16::MIN as f64, i16::MAX as f64),
        "uint16" => (0.0, u16::MAX as f64),
        "int32" => (i32::MIN as f64, i32::MAX as f64),
        "uint32" => (0.0, u32::MAX as f64),
        "int64" | "int" => (i64::MIN as f64, i64::MAX as f64),
        "uint64" | "uint" => (0.0, u64::MAX as f64),
        "float" => (f32::MIN as f64, f32::MAX as f64),
        "double" => (f64::MIN, f64::MAX),
        _ => return None,
    })
}

/// A JSON Pointer token for a property name.
pub(super) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

pub(super) fn pointer_token(v: &Value) -> String {
    escape(&plain(v))
}

/// A value without quotes when it is a string.
pub(super) fn plain(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// A short rendering of a schema for details.
pub(super) fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(59).collect::<String>())
    } else {
        s
    }
}
