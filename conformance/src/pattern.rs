//! Partial JSON matching with placeholders (`{{name}}`), and placeholder substitution for frames
//! the runner sends.
//!
//! Matching unifies: an unbound placeholder captures the value it meets, a bound one must equal
//! it. A failed match binds nothing.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use chatwire_monitor::text::{excerpt, truncate};

/// Values captured by placeholders during a scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings(BTreeMap<String, Value>);

impl Bindings {
    /// The value bound to `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Binds `name`, replacing any earlier value.
    pub fn set(&mut self, name: impl Into<String>, value: Value) {
        self.0.insert(name.into(), value);
    }

    /// Every binding, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// Placeholder that matches any present value.
pub const ANY: &str = "any";
/// Placeholder that requires the field to be absent.
pub const ABSENT: &str = "absent";
/// Operator: `{"$contains": [p, ...]}` matches an array holding, for each pattern, an element that
/// matches it (in any order, other elements allowed).
pub const CONTAINS: &str = "$contains";
/// Operator: `{"$excludes": [p, ...]}` matches an array holding no element that matches any pattern.
pub const EXCLUDES: &str = "$excludes";

/// The operator of a pattern object whose only key is `$contains` or `$excludes` with an array.
fn operator(pattern: &Value) -> Option<(&'static str, &Vec<Value>)> {
    let map = pattern.as_object().filter(|m| m.len() == 1)?;
    let (key, operand) = map.iter().next()?;
    let name = [CONTAINS, EXCLUDES].into_iter().find(|op| op == key)?;
    Some((name, operand.as_array()?))
}

/// The name inside `{{name}}` when the whole string is one placeholder.
pub fn placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.is_empty() || inner.contains("{{") || inner.contains("}}") {
        None
    } else {
        Some(inner.trim())
    }
}

/// Where and why a frame does not match a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON Pointer of the first difference.
    pub path: String,
    /// What was expected there.
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "at {path}: expected {}, found {}", self.expected, self.found)
    }
}

/// Matches `actual` against `pattern`; on success the captures are added to `bindings`.
///
/// Objects match when every key of the pattern matches (extra keys are ignored); arrays need the
/// same length and element-wise matches, unless the pattern is a [`CONTAINS`] or [`EXCLUDES`]
/// operator; scalars must be equal.
pub fn match_value(pattern: &Value, actual: &Value, bindings: &mut Bindings) -> Result<(), Mismatch> {
    let mut tentative = bindings.clone();
    unify(pattern, Some(actual), &mut tentative, &mut String::new())?;
    *bindings = tentative;
    Ok(())
}

fn unify(pattern: &Value, actual: Option<&Value>, bindings: &mut Bindings, path: &mut String) -> Result<(), Mismatch> {
    let mismatch = |path: &str, expected: String, actual: Option<&Value>| Mismatch {
        path: path.to_owned(),
        expected,
        found: actual.map_or_else(|| "nothing (field absent)".to_owned(), |v| excerpt(v, 80)),
    };
    if let Value::String(s) = pattern {
        if let Some(name) = placeholder(s) {
            return match (name, actual) {
                (ABSENT, None) => Ok(()),
                (ABSENT, Some(_)) => Err(mismatch(path, "the field to be absent".into(), actual)),
                (_, None) => Err(mismatch(path, format!("a value for {{{{{name}}}}}"), None)),
                (ANY, Some(_)) => Ok(()),
                (_, Some(v)) => match bindings.get(name) {
                    Some(bound) if bound == v => Ok(()),
                    Some(bound) => Err(mismatch(path, format!("{{{{{name}}}}} = {}", excerpt(bound, 60)), actual)),
                    None => {
                        bindings.set(name, v.clone());
                        Ok(())
                    }
                },
            };
        }
    }
    let Some(actual) = actual else {
        return Err(mismatch(path, excerpt(pattern, 60), None));
    };
    if let Some((op, wanted)) = operator(pattern) {
        let Value::Array(items) = actual else {
            return Err(mismatch(path, format!("an array ({op})"), Some(actual)));
        };
        for want in wanted {
            // Each element is tried on a copy: a failed or excluded match binds nothing.
            let hit = items.iter().enumerate().find_map(|(i, item)| {
                let mut trial = bindings.clone();
                let mut at = format!("{path}/{i}");
                unify(want, Some(item), &mut trial, &mut at).ok().map(|()| (i, trial))
            });
            match (op, hit) {
                (CONTAINS, Some((_, trial))) => *bindings = trial,
                (CONTAINS, None) => {
                    return Err(mismatch(path, format!("an array containing {}", excerpt(want, 60)), Some(actual)))
                }
                (_, Some((i, _))) => {
                    return Err(mismatch(
                        &format!("{path}/{i}"),
                        format!("no element matching {}", excerpt(want, 60)),
                        items.get(i),
                    ))
                }
                (_, None) => {}
            }
        }
        return Ok(());
    }
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, sub) in p {
                // A key that is a bound placeholder names the member by its value (an id-keyed
                // map such as state.usage.invocations).
                let bound = placeholder(key).and_then(|name| bindings.get(name)).and_then(Value::as_str);
                let key = bound.map_or_else(|| key.clone(), str::to_owned);
                let key = &key;
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                let result = unify(sub, a.get(key), bindings, path);
                path.truncate(len);
                result?;
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(a)) => {
            if p.len() != a.len() {
                return Err(mismatch(path, format!("an array of {} element(s)", p.len()), Some(actual)));
            }
            for (i, (sub, got)) in p.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                let result = unify(sub, Some(got), bindings, path);
                path.truncate(len);
                result?;
            }
            Ok(())
        }
        (Value::Number(p), Value::Number(a)) if p.as_f64() == a.as_f64() => Ok(()),
        (p, a) if p == a => Ok(()),
        (p, _) => Err(mismatch(path, excerpt(p, 60), Some(actual))),
    }
}

/// Why a placeholder could not be replaced in a frame to send.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("placeholder {{{{{0}}}}} is not bound")]
pub struct Unbound(pub String);

/// Replaces placeholders in `template`: a whole-string placeholder becomes the bound value (of any
/// JSON type), one inside a longer string is interpolated as text. `lookup` resolves built-ins first.
pub fn substitute(
    template: &Value,
    bindings: &Bindings,
    lookup: &dyn Fn(&str) -> Option<Value>,
) -> Result<Value, Unbound> {
    let resolve = |name: &str| lookup(name).or_else(|| bindings.get(name).cloned()).ok_or_else(|| Unbound(name.into()));
    Ok(match template {
        Value::String(s) => {
            if let Some(name) = placeholder(s) {
                resolve(name)?
            } else {
                Value::String(interpolate(s, &resolve)?)
            }
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, bindings, lookup)).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), substitute(v, bindings, lookup)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn interpolate(s: &str, resolve: &dyn Fn(&str) -> Result<Value, Unbound>) -> Result<String, Unbound> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else { break };
        out.push_str(&rest[..start]);
        let name = rest[start + 2..start + len].trim();
        match resolve(name)? {
            Value::String(v) => out.push_str(&v),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn partial_objects_and_captures() {
        let mut b = Bindings::default();
        let frame = json!({"type": "chat.tool_call", "tool_call_id": "tc-9", "seq": 4, "payload": {"a": 1}});
        match_value(&json!({"type": "chat.tool_call", "tool_call_id": "{{tool_call:1}}"}), &frame, &mut b).unwrap();
        assert_eq!(b.get("tool_call:1"), Some(&json!("tc-9")));
        // A bound placeholder must be equal.
        let other = json!({"type": "chat.tool_call", "tool_call_id": "tc-10"});
        let err = match_value(&json!({"tool_call_id": "{{tool_call:1}}"}), &other, &mut b).unwrap_err();
        assert_eq!(err.path, "/tool_call_id");
        assert!(err.expected.contains("tc-9"), "{err}");
    }

    #[test]
    fn failed_match_binds_nothing() {
        let mut b = Bindings::default();
        let err = match_value(&json!({"a": "{{x}}", "b": 2}), &json!({"a": 1, "b": 3}), &mut b).unwrap_err();
        assert_eq!(err.path, "/b");
        assert_eq!(b, Bindings::default());
    }

    #[test]
    fn any_absent_arrays_and_numbers() {
        let mut b = Bindings::default();
        let frame = json!({"list": [1, {"k": "v"}], "n": 1.0});
        match_value(&json!({"list": ["{{any}}", {"k": "v"}], "n": 1, "missing": "{{absent}}"}), &frame, &mut b)
            .unwrap();
        assert!(match_value(&json!({"list": [1]}), &frame, &mut b).is_err());
        assert!(match_value(&json!({"n": "{{absent}}"}), &frame, &mut b).is_err());
        assert!(match_value(&json!({"missing": "{{any}}"}), &frame, &mut b).is_err());
        let err = match_value(&json!({"missing": 1}), &frame, &mut b).unwrap_err();
        assert!(err.found.contains("absent"), "{err}");
    }

    #[test]
    fn contains_and_excludes_operators() {
        let mut b = Bindings::default();
        let frame = json!({"caps": ["rewind", "conformance_script", "tool_output"], "n": 3});
        match_value(&json!({"caps": {"$contains": ["tool_output", "rewind"]}}), &frame, &mut b).unwrap();
        match_value(&json!({"caps": {"$contains": []}}), &frame, &mut b).unwrap();
        let err = match_value(&json!({"caps": {"$contains": ["restart_durability"]}}), &frame, &mut b).unwrap_err();
        assert_eq!(err.path, "/caps");
        assert!(err.expected.contains("restart_durability"), "{err}");
        match_value(&json!({"caps": {"$excludes": ["restart_durability", "x"]}}), &frame, &mut b).unwrap();
        let err = match_value(&json!({"caps": {"$excludes": ["conformance_script"]}}), &frame, &mut b).unwrap_err();
        assert_eq!(err.path, "/caps/1");
        assert!(err.found.contains("conformance_script"), "{err}");
        // Not an array, or absent: no match either way.
        assert!(match_value(&json!({"n": {"$contains": [3]}}), &frame, &mut b).is_err());
        assert!(match_value(&json!({"missing": {"$excludes": ["a"]}}), &frame, &mut b).is_err());
        // Elements are patterns: captures bind on contains, never on excludes.
        let calls = json!({"items": [{"kind": "a", "id": "x1"}, {"kind": "b", "id": "y1"}]});
        match_value(&json!({"items": {"$contains": [{"kind": "b", "id": "{{b}}"}]}}), &calls, &mut b).unwrap();
        assert_eq!(b.get("b"), Some(&json!("y1")));
        match_value(&json!({"items": {"$excludes": [{"kind": "c", "id": "{{c}}"}]}}), &calls, &mut b).unwrap();
        assert_eq!(b.get("c"), None);
        // An object with another key beside the operator is an ordinary pattern.
        let odd = json!({"f": {"$contains": [1], "other": 2}});
        assert!(match_value(&odd, &json!({"f": {"$contains": [1], "other": 2}}), &mut b).is_ok());
    }

    #[test]
    fn substitution_keeps_types_and_interpolates() {
        let mut b = Bindings::default();
        b.set("tool_call:1", json!("tc-1"));
        let lookup = |name: &str| (name == "last_seq").then(|| json!(7));
        let out = substitute(
            &json!({"tool_call_id": "{{tool_call:1}}", "last_seq": "{{last_seq}}", "text": "x {{tool_call:1}} y"}),
            &b,
            &lookup,
        )
        .unwrap();
        assert_eq!(out, json!({"tool_call_id": "tc-1", "last_seq": 7, "text": "x tc-1 y"}));
        assert_eq!(substitute(&json!("{{nope}}"), &b, &lookup), Err(Unbound("nope".into())));
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("abc", 5), "abc");
        assert!(truncate(&"x".repeat(100), 10).starts_with("xxxxxxxxxx…"));
    }
}
