//! Which minor version added a message, member or value, and the schemas of an older minor.
//!
//! Spec: `spec/versioning.md#since-annotations`. Everything a minor version adds to the published
//! schemas carries the annotation [`SINCE_KEYWORD`] with that minor (`"x-chatwire-since": "1.1"`),
//! written by `#[schemars(extend("x-chatwire-since" = "1.1"))]` on the type, field or variant.
//! Two readers depend on it:
//! - the protocol-change gate (`chatwire-schema diff`) classifies an annotated addition newer than
//!   its baseline as a negotiated addition rather than a breaking one (`COMPAT-015`);
//! - [`project`] cuts the current schemas down to what an older minor defines, which is what a
//!   connection that negotiated that minor may carry (`COMPAT-005`), and what
//!   `chatwire-schema check` compares with the released copy of that minor (`COMPAT-012`).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::schema_gen::{all_schemas, collect_refs, SchemaDoc};
use crate::ProtocolVersion;

/// The schema keyword naming the minor version that added a message, member or value.
pub const SINCE_KEYWORD: &str = "x-chatwire-since";

/// Every minor version of major 1 that has been released, oldest first. Its schemas are
/// committed under `schema/releases/v1/<MAJOR.MINOR>/` and never change (`COMPAT-012`).
pub const RELEASED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion { major: 1, minor: 0 },
    ProtocolVersion { major: 1, minor: 1 },
    ProtocolVersion { major: 1, minor: 2 },
];

/// String formats the published schemas started stating in a minor after 1.0, with that minor.
/// A format is not a message, member or value, so it carries no annotation. It states a rule the
/// older minor already had in prose (`date-time` on every `ts`: FRAME-004 required RFC 3339 in 1.0),
/// so [`project`] keeps it and validators of every minor assert it; only the comparison with an
/// older minor's released copy, which never changes (`COMPAT-012`), leaves it out
/// ([`without_later_formats`]). The change gate reports it as `format-added` (INFO, server → client).
pub const FORMATS_SINCE: &[(&str, ProtocolVersion)] = &[("date-time", ProtocolVersion { major: 1, minor: 1 })];

/// Whether a node's `format` is one [`FORMATS_SINCE`] dates after `version`.
fn format_newer(map: &serde_json::Map<String, Value>, version: ProtocolVersion) -> bool {
    let format = map.get("format").and_then(Value::as_str);
    FORMATS_SINCE.iter().any(|(name, since)| format == Some(*name) && *since > version)
}

/// The schema without the formats [`FORMATS_SINCE`] dates after `version`: the shape the released
/// schemas of `version` state (`COMPAT-012`).
pub fn without_later_formats(schema: &Value, version: ProtocolVersion) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !(k.as_str() == "format" && format_newer(map, version)))
                .map(|(k, v)| (k.clone(), without_later_formats(v, version)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| without_later_formats(v, version)).collect()),
        other => other.clone(),
    }
}

/// The version a schema node is annotated with, if it carries a well-formed annotation.
pub fn since_of(schema: &Value) -> Option<ProtocolVersion> {
    schema.get(SINCE_KEYWORD).and_then(Value::as_str).and_then(|s| ProtocolVersion::parse(s).ok())
}

/// The version a node is annotated with, looking through a `$ref` to its definition in `root`
/// when the node itself carries none (an added variant is often a bare `$ref`).
pub fn since_through_ref(schema: &Value, root: &Value) -> Option<ProtocolVersion> {
    since_of(schema).or_else(|| {
        let target = schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
        since_of(root.get("$defs")?.get(target)?)
    })
}

/// Whether a node is annotated with a version newer than `version`, so that `version` lacks it.
fn newer(schema: &Value, root: &Value, version: ProtocolVersion) -> bool {
    since_through_ref(schema, root).is_some_and(|since| since > version)
}

/// The document as the minor `version` defines it: every member, union branch and documented
/// value annotated with a newer minor removed, with the definitions only they used. `None` when
/// the whole document is newer than `version`.
pub fn project(doc: &Value, version: ProtocolVersion) -> Option<Value> {
    if newer(doc, doc, version) {
        return None;
    }
    let mut out = doc.clone();
    strip(&mut out, doc, version);
    drop_unreachable_defs(&mut out);
    Some(out)
}

/// Every document [`all_schemas`] publishes, as the minor `version` defines them.
pub fn schemas_for(version: ProtocolVersion) -> Vec<SchemaDoc> {
    all_schemas()
        .into_iter()
        .filter_map(|d| project(&d.schema, version).map(|schema| SchemaDoc { schema, ..d }))
        .collect()
}

fn strip(node: &mut Value, root: &Value, version: ProtocolVersion) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                let gone: Vec<String> =
                    props.iter().filter(|(_, s)| newer(s, root, version)).map(|(k, _)| k.clone()).collect();
                for name in &gone {
                    props.shift_remove(name);
                }
                if let Some(Value::Array(required)) = map.get_mut("required") {
                    required.retain(|r| r.as_str().is_none_or(|r| !gone.iter().any(|g| g == r)));
                }
            }
            for key in ["oneOf", "anyOf"] {
                if let Some(Value::Array(branches)) = map.get_mut(key) {
                    branches.retain(|b| !newer(b, root, version));
                }
            }
            for (key, value) in map.iter_mut() {
                if key == "$defs" {
                    if let Value::Object(defs) = value {
                        defs.retain(|_, d| !newer(d, root, version));
                        defs.values_mut().for_each(|d| strip(d, root, version));
                    }
                } else {
                    strip(value, root, version);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip(v, root, version)),
        _ => {}
    }
}

/// Removes the `$defs` entries nothing outside `$defs` reaches any more.
fn drop_unreachable_defs(doc: &mut Value) {
    let Some(Value::Object(defs)) = doc.get("$defs").cloned() else { return };
    let mut reached = BTreeSet::new();
    let mut body = doc.clone();
    if let Value::Object(m) = &mut body {
        m.shift_remove("$defs");
    }
    collect_refs(&body, &defs, &mut reached);
    let Some(Value::Object(kept)) = doc.get_mut("$defs") else { return };
    kept.retain(|name, _| reached.contains(name));
    if kept.is_empty() {
        if let Value::Object(m) = doc {
            m.shift_remove("$defs");
        }
    }
}

/// The schema with its documentation removed (`description`, `title`, `examples`, `$comment`):
/// what a validator enforces. A released minor may have its prose clarified later; its shape
/// never changes (`COMPAT-012`).
pub fn without_prose(schema: &Value) -> Value {
    fn walk(node: &Value, names: bool) -> Value {
        match node {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| names || !matches!(k.as_str(), "description" | "title" | "examples" | "$comment"))
                    .map(|(k, v)| {
                        // The keys of `properties` and `$defs` are names, not keywords.
                        let child_names = !names && matches!(k.as_str(), "properties" | "$defs");
                        (k.clone(), walk(v, child_names))
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, false)).collect()),
            other => other.clone(),
        }
    }
    walk(schema, false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn v(s: &str) -> ProtocolVersion {
        ProtocolVersion::parse(s).unwrap()
    }

    #[test]
    fn projection_removes_newer_members_branches_values_and_their_defs() {
        let doc = json!({
            "type": "object",
            "properties": {
                "seq": {"type": "integer"},
                "features": {"x-chatwire-since": "1.1", "type": "array", "items": {"$ref": "#/$defs/Feature"}},
                "mode": {"oneOf": [
                    {"const": "a"},
                    {"const": "b", "x-chatwire-since": "1.1"}
                ]},
                "frame": {"oneOf": [{"$ref": "#/$defs/Old"}, {"$ref": "#/$defs/New"}]}
            },
            "required": ["seq", "features"],
            "$defs": {
                "Feature": {"type": "string"},
                "Old": {"type": "object"},
                "New": {"x-chatwire-since": "1.1", "type": "object"}
            }
        });
        let old = project(&doc, v("1.0")).unwrap();
        assert_eq!(
            old,
            json!({
                "type": "object",
                "properties": {
                    "seq": {"type": "integer"},
                    "mode": {"oneOf": [{"const": "a"}]},
                    "frame": {"oneOf": [{"$ref": "#/$defs/Old"}]}
                },
                "required": ["seq"],
                "$defs": {"Old": {"type": "object"}}
            })
        );
        assert_eq!(project(&doc, v("1.1")).unwrap(), doc, "nothing is newer than 1.1");
        assert_eq!(project(&json!({"x-chatwire-since": "1.1"}), v("1.0")), None);
    }

    #[test]
    fn the_validator_of_1_0_refuses_what_1_1_added_and_accepts_the_rest() {
        use crate::{Direction, FrameError, FrameValidator};
        let (v10, v11) = (FrameValidator::for_version(v("1.0")), FrameValidator::for_version(v("1.1")));
        let patch = json!({"type": "ui_state_patch", "seq": 3, "base_seq": 2, "v": "ui_state_v1", "patch": []});
        assert_eq!(v10.check(Direction::ServerToClient, &patch), Err(FrameError::UnknownType("ui_state_patch".into())));
        assert_eq!(v11.check(Direction::ServerToClient, &patch), Ok("ui_state_patch"));
        let welcome = json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h-1", "version": "1.1",
            "session_id": "s-1", "resume_token": "rt-1", "resumed": false, "capabilities": [],
            "limits": {"max_frame_bytes": 1048576}, "features": []});
        assert!(matches!(v10.check(Direction::ServerToClient, &welcome), Err(FrameError::Invalid(_))));
        assert_eq!(v11.check(Direction::ServerToClient, &welcome), Ok("session.welcome"));
        let mut plain = welcome.clone();
        plain.as_object_mut().unwrap().remove("features");
        assert_eq!(v10.check(Direction::ServerToClient, &plain), Ok("session.welcome"));
        let hello = json!({"type": "session.hello", "id": "h-1", "versions": ["1.1"], "features": ["ui_state_patch"]});
        assert!(matches!(v10.check(Direction::ClientToServer, &hello), Err(FrameError::Invalid(_))));
        assert_eq!(v11.check(Direction::ClientToServer, &hello), Ok("session.hello"));
    }

    #[test]
    fn a_format_dated_after_a_release_is_kept_by_projection_and_left_out_of_its_shape() {
        let doc = json!({
            "type": "object",
            "properties": {
                "ts": {"type": "string", "format": "date-time"},
                "seq": {"type": "integer", "format": "uint64", "minimum": 0}
            }
        });
        assert_eq!(project(&doc, v("1.0")).unwrap(), doc, "FRAME-004 holds on 1.0 connections too");
        let shape = without_later_formats(&doc, v("1.0"));
        assert_eq!(shape["properties"]["ts"], json!({"type": "string"}));
        assert_eq!(shape["properties"]["seq"], doc["properties"]["seq"], "integer formats are 1.0's");
        assert_eq!(without_later_formats(&doc, v("1.1")), doc);
    }

    #[test]
    fn prose_is_dropped_but_members_named_like_keywords_stay() {
        let doc = json!({
            "description": "d",
            "properties": {"description": {"type": "string", "title": "t"}},
            "$defs": {"title": {"examples": [1], "type": "integer"}}
        });
        assert_eq!(
            without_prose(&doc),
            json!({"properties": {"description": {"type": "string"}}, "$defs": {"title": {"type": "integer"}}})
        );
    }
}
