//! Generates the published JSON Schemas from the Rust types.
//!
//! Spec: `spec/overview.md#schemas`. One file per message (cut out of the union so that it is
//! exactly the variant serde accepts), the two unions, and the UiState and script documents.

use std::collections::{BTreeMap, BTreeSet};

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

use crate::frame::{ClientFrame, ServerFrame};
use crate::script::AgentScript;
use crate::ui_state::UiState;

/// Base of every published schema's `$id`; identifiers only, never fetched.
pub const SCHEMA_ID_BASE: &str = "https://chatwire.dev/schema/v1/";

/// File name of the client → server union.
pub const CLIENT_UNION_FILE: &str = "client-frame.json";
/// File name of the server → client union.
pub const SERVER_UNION_FILE: &str = "server-frame.json";

/// Which way a frame travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Sent by a client to a server.
    ClientToServer,
    /// Sent by a server to a client.
    ServerToClient,
}

impl Direction {
    /// Short name used in file listings and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client-to-server",
            Direction::ServerToClient => "server-to-client",
        }
    }
}

/// One generated schema document.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaDoc {
    /// File name under `schema/json/`.
    pub file: String,
    /// The schema.
    pub schema: Value,
    /// For a single-message file: the wire `type` and its direction.
    pub message: Option<(String, Direction)>,
}

/// Every schema the crate publishes, in a stable order.
pub fn all_schemas() -> Vec<SchemaDoc> {
    let mut out = Vec::new();
    for (direction, union_file, union) in [
        (Direction::ClientToServer, CLIENT_UNION_FILE, root_schema::<ClientFrame>()),
        (Direction::ServerToClient, SERVER_UNION_FILE, root_schema::<ServerFrame>()),
    ] {
        for (wire, variant) in variants(&union) {
            let file = format!("{wire}.json");
            let schema = standalone(&file, &wire, variant, &union);
            out.push(SchemaDoc { file, schema, message: Some((wire, direction)) });
        }
        out.push(SchemaDoc { file: union_file.to_owned(), schema: document(union_file, None, union), message: None });
    }
    out.push(SchemaDoc {
        file: "ui-state.json".into(),
        schema: document("ui-state.json", Some("UiState"), root_schema::<UiState>()),
        message: None,
    });
    out.push(SchemaDoc {
        file: "agent-script.json".into(),
        schema: document("agent-script.json", Some("AgentScript"), root_schema::<AgentScript>()),
        message: None,
    });
    out
}

/// A schema generated for `T` (draft 2020-12), as JSON.
pub fn root_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with_transform(RecursiveTransform(bound_integer_format))
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Gives every fixed-width integer its Rust range, 64-bit ones capped at ±(2^53 − 1) so that a
/// JavaScript client reads every value exactly (`spec/overview.md#integers`). schemars only names the width in `format`,
/// which validators do not enforce, so without the bounds the schema would accept numbers
/// (e.g. an `exit_code` of 2^31) that serde refuses.
fn bound_integer_format(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let (min, max): (Value, Value) = match object.get("format").and_then(Value::as_str) {
        Some("uint8") => (0.into(), u8::MAX.into()),
        Some("uint16") => (0.into(), u16::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("uint64") => (0.into(), crate::MAX_SAFE_INTEGER.into()),
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("int64") => ((-crate::MAX_SAFE_INTEGER).into(), crate::MAX_SAFE_INTEGER.into()),
        _ => return,
    };
    // A bound the type already states (e.g. `#[schemars(range(...))]`) is the tighter one: keep it.
    let min = object.shift_remove("minimum").unwrap_or(min);
    let max = object.shift_remove("maximum").unwrap_or(max);
    // Rebuilt so that the bounds sit right after `format`, where a reader looks for them.
    let mut bounded = Map::new();
    for (key, value) in std::mem::take(object) {
        let is_format = key == "format";
        bounded.insert(key, value);
        if is_format {
            bounded.insert("minimum".into(), min.clone());
            bounded.insert("maximum".into(), max.clone());
        }
    }
    *object = bounded;
}

/// Writes a schema as the committed files hold it: pretty, with a final newline.
pub fn to_pretty(schema: &Value) -> String {
    let mut s = serde_json::to_string_pretty(schema).expect("a JSON value always serializes");
    s.push('\n');
    s
}

/// The `(wire type, variant schema)` pairs of a tagged union, in declaration order.
pub fn variants(union: &Value) -> Vec<(String, &Value)> {
    let Some(Value::Array(one_of)) = union.get("oneOf") else { return Vec::new() };
    one_of
        .iter()
        .filter_map(|v| {
            let wire = v.pointer("/properties/type/const")?.as_str()?;
            Some((wire.to_owned(), v))
        })
        .collect()
}

/// Puts `$schema`, `$id`, `title`, `description` first, then the rest, `$defs` last.
fn document(file: &str, title: Option<&str>, schema: Value) -> Value {
    let Value::Object(mut body) = schema else { return schema };
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        body.remove("$schema").unwrap_or_else(|| "https://json-schema.org/draft/2020-12/schema".into()),
    );
    out.insert("$id".into(), Value::String(format!("{SCHEMA_ID_BASE}{file}")));
    let title = title.map(str::to_owned).or_else(|| body.get("title").and_then(Value::as_str).map(str::to_owned));
    body.remove("title");
    if let Some(title) = title {
        out.insert("title".into(), Value::String(title));
    }
    if let Some(d) = body.remove("description") {
        out.insert("description".into(), d);
    }
    let defs = body.remove("$defs");
    out.extend(body);
    if let Some(defs) = defs {
        out.insert("$defs".into(), defs);
    }
    Value::Object(out)
}

/// A self-contained schema for one variant: the variant plus the `$defs` it reaches.
fn standalone(file: &str, wire: &str, variant: &Value, union: &Value) -> Value {
    let all_defs = union.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut needed = BTreeSet::new();
    collect_refs(variant, &all_defs, &mut needed);
    let mut schema = variant.as_object().cloned().unwrap_or_default();
    if !needed.is_empty() {
        let defs: Map<String, Value> = all_defs
            .into_iter()
            .filter(|(name, _)| needed.contains(name))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        schema.insert("$defs".into(), Value::Object(defs));
    }
    document(file, Some(wire), Value::Object(schema))
}

/// Adds to `needed` the name of every `$defs` entry `node` refers to, and of those they refer to.
pub(crate) fn collect_refs(node: &Value, defs: &Map<String, Value>, needed: &mut BTreeSet<String>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                if let Some(name) = r.strip_prefix("#/$defs/") {
                    if needed.insert(name.to_owned()) {
                        if let Some(def) = defs.get(name) {
                            collect_refs(def, defs, needed);
                        }
                    }
                }
            }
            map.values().for_each(|v| collect_refs(v, defs, needed));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, defs, needed)),
        _ => {}
    }
}
