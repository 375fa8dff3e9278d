//! The protocol's facts as one JSON document, `fixtures/protocol-facts.json`: what another language
//! reads instead of typing it again.
//!
//! Every value is taken from the constant, the frame fact ([`crate::frame_facts`]) or the schema
//! annotation ([`crate::since`]) that states it: versions and limits, close codes, error codes with
//! their close codes, the minor that added them and their precedence ([`crate::error_order`]), the
//! capabilities and features of each minor, and per frame type its minor, whether it carries a
//! state, whether it is an event for the reducer, whether it answers a client frame, the ids it
//! introduces, what answers a client frame, the members a later minor added; the frames,
//! capabilities, features and error codes of each supported version; the reducer's refusals with
//! the rules they report; each display item's members in the order the crate serializes them.
//!
//! `chatwire-schema-tool export` writes [`document_text`] to the file and `check` compares it;
//! the TypeScript package (`tools/npm/scripts/generate.mjs`) and the Python kit
//! (`tools/python/scripts/generate.py`) generate their tables from the file.

use serde_json::{json, Map, Value};

use crate::error_frame::ErrorCode;
use crate::error_order::{FRAME_CHECKS, OWN_CHECKS};
use crate::frame::{ClientFrame, ServerFrame};
use crate::frame_facts::{ClientFrameKind, ServerFrameKind};
use crate::reducer::ReduceError;
use crate::schema_gen::{all_schemas, SchemaDoc};
use crate::session::welcome::Capability;
use crate::since::{since_of, since_through_ref, RELEASED_VERSIONS};
use crate::transport::{
    CloseCode, HARD_CAP_FACTOR, MIN_ATTACHED_CONNECTIONS, MIN_MAX_FRAME_BYTES, REFUSED_RESUMES_PER_CONNECTION,
    SEND_QUEUE_MAX_BYTES,
};
use crate::ui_event::UiEvent;
use crate::version::{
    ProtocolVersion, UiStateVersion, DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, SUBPROTOCOL, SUPPORTED_VERSIONS,
};

/// Where the repository keeps the document, relative to its root.
pub const FILE: &str = "fixtures/protocol-facts.json";

/// The oldest minor of major 1: what carries no `x-chatwire-since` annotation was there from it.
const FIRST: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

/// The document as the repository commits it: pretty JSON with a final newline.
pub fn document_text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("a JSON value always serializes");
    text.push('\n');
    text
}

/// The document.
pub fn document() -> Value {
    let schemas = all_schemas();
    let error_since = value_since(&schemas, "error.json", "ErrorCode");
    let mut facts = json!({
        "supported_versions": SUPPORTED_VERSIONS,
        "subprotocol": SUBPROTOCOL,
        "ui_state_version": UiStateVersion::V1,
        "default_max_frame_bytes": DEFAULT_MAX_FRAME_BYTES,
        "min_max_frame_bytes": MIN_MAX_FRAME_BYTES,
        "hard_cap_factor": HARD_CAP_FACTOR,
        "refused_resumes_per_connection": REFUSED_RESUMES_PER_CONNECTION,
        "send_queue_max_bytes": SEND_QUEUE_MAX_BYTES,
        "max_safe_integer": crate::MAX_SAFE_INTEGER,
        "close_codes": close_codes(),
        "error_codes": ErrorCode::ALL
            .iter()
            .map(|c| json!({
                "code": c.as_str(),
                "fatal": c.is_fatal(),
                "close_code": c.close_code().map(CloseCode::code),
                "since": error_since.get(c.as_str()).copied().unwrap_or(FIRST),
            }))
            .collect::<Vec<_>>(),
        "max_script_delay_ms": crate::script::MAX_SCRIPT_DELAY_MS,
        "max_expiry_ms": crate::script::MAX_EXPIRY_MS,
        "max_say_chunks": crate::script::MAX_SAY_CHUNKS,
        "output_id_suffix": crate::reducer::OUTPUT_ID_SUFFIX,
        "id_pattern": crate::id::ID_PATTERN,
        "error_order": {
            "frame_checks": FRAME_CHECKS.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            "own_checks": OWN_CHECKS
                .iter()
                .map(|(t, codes)| (t.to_string(), json!(codes.iter().map(|c| c.as_str()).collect::<Vec<_>>())))
                .collect::<Map<String, Value>>(),
        },
    });
    let more = json!({
        "protocol_version": PROTOCOL_VERSION,
        "released_versions": RELEASED_VERSIONS,
        "min_attached_connections": MIN_ATTACHED_CONNECTIONS,
        "max_window_items": crate::window::MAX_WINDOW_ITEMS,
        "max_history_page_items": crate::window::MAX_HISTORY_PAGE_ITEMS,
        "max_reasoning_payload_bytes": crate::MAX_REASONING_PAYLOAD_BYTES,
        "max_subagent_depth": crate::subagent::MAX_SUBAGENT_DEPTH,
        "reasoning_payload_pattern": crate::chat::reasoning::ENCRYPTED_PATTERN,
        "usage_amount_pattern": crate::usage::AMOUNT_PATTERN,
        "usage_currency_pattern": crate::usage::CURRENCY_PATTERN,
        "response_schema": {
            "keywords": crate::response_schema::KEYWORDS,
            "types": crate::response_schema::TYPES,
            "max_depth": crate::response_schema::MAX_DEPTH,
        },
        "capabilities": Capability::KNOWN
            .iter()
            .map(|name| {
                let c = Capability::from_wire(name);
                json!({"name": name, "since": c.since(), "feature": c.feature_since().is_some()})
            })
            .collect::<Vec<_>>(),
        "events": UiEvent::TYPES,
        "reduce_refusals": ReduceError::RULES
            .iter()
            .map(|(kind, requirement)| ((*kind).to_owned(), json!(requirement)))
            .collect::<Map<String, Value>>(),
        "frames": {
            "client": ClientFrame::kinds().into_iter().map(|(wire, kind)| {
                (wire.to_owned(), client_frame(&schemas, wire, kind))
            }).collect::<Map<String, Value>>(),
            "server": ServerFrame::kinds().into_iter().map(|(wire, kind)| {
                (wire.to_owned(), server_frame(&schemas, wire, kind))
            }).collect::<Map<String, Value>>(),
        },
        "ui_state_members_since": members_since(doc(&schemas, "ui-state.json")),
        "item_members": item_members(doc(&schemas, "ui-state.json")),
        "versions": versions(&schemas, &error_since),
    });
    if let (Value::Object(facts), Value::Object(more)) = (&mut facts, more) {
        facts.extend(more);
    }
    facts
}

/// Close codes by name: `GoingAway` is `going_away`, the name a reader looks a code up by.
fn close_codes() -> Map<String, Value> {
    CloseCode::ALL.iter().map(|c| (snake_case(&format!("{c:?}")), json!(c.code()))).collect()
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// The generated schema document `file`.
fn doc<'a>(schemas: &'a [SchemaDoc], file: &str) -> &'a Value {
    &schemas.iter().find(|d| d.file == file).unwrap_or_else(|| panic!("the crate publishes {file}")).schema
}

/// The minor that added a frame type: its document's annotation, else the first minor.
fn frame_since(schemas: &[SchemaDoc], wire: &str) -> ProtocolVersion {
    since_of(doc(schemas, &format!("{wire}.json"))).unwrap_or(FIRST)
}

fn client_frame(schemas: &[SchemaDoc], wire: &str, kind: ClientFrameKind) -> Value {
    let since = frame_since(schemas, wire);
    json!({
        "since": since,
        "answered_by": kind.answered_by,
        "names": kind.names.map(|n| json!({"kind": n.kind.as_str(), "member": n.member})),
        "members_since": members_after(doc(schemas, &format!("{wire}.json")), since),
    })
}

fn server_frame(schemas: &[SchemaDoc], wire: &str, kind: ServerFrameKind) -> Value {
    let schema = doc(schemas, &format!("{wire}.json"));
    let since = frame_since(schemas, wire);
    json!({
        "since": since,
        "carries_state": kind.carries_state,
        "event": kind.event,
        "answer": answer(schema),
        "introduces": kind
            .introduces
            .iter()
            .map(|slot| json!({"kind": slot.kind.as_str(), "member": slot.member, "rule": slot.rule.as_str()}))
            .collect::<Vec<_>>(),
        "members_since": members_after(schema, since),
    })
}

/// Whether a server frame answers a client frame (`in_reply_to`): `always` (required),
/// `sometimes` (optional: a tool call settled by the client, an error to a readable frame) or
/// `never`.
fn answer(schema: &Value) -> &'static str {
    let required = schema["required"].as_array().is_some_and(|r| r.iter().any(|m| m == "in_reply_to"));
    match (schema["properties"].get("in_reply_to").is_some(), required) {
        (true, true) => "always",
        (true, false) => "sometimes",
        (false, _) => "never",
    }
}

/// The members of a frame's document a minor after the frame's own added.
fn members_after(schema: &Value, since: ProtocolVersion) -> Map<String, Value> {
    let later = |v: &Value| v.as_str().and_then(|s| ProtocolVersion::parse(s).ok()).is_some_and(|v| v > since);
    members_since(schema).into_iter().filter(|(_, v)| later(v)).collect()
}

/// Every member a minor after the document's own added, by its path (`resume.before`;
/// `items[].streaming` for a member of an array's items), with that minor, in schema order.
fn members_since(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    walk_members(schema, schema, "", &mut Vec::new(), &mut out);
    out
}

fn walk_members<'a>(
    node: &'a Value,
    root: &'a Value,
    prefix: &str,
    seen: &mut Vec<&'a str>,
    out: &mut Map<String, Value>,
) {
    if let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        // A recursive definition (a response schema's properties) is walked once per path.
        if seen.contains(&target) {
            return;
        }
        if let Some(def) = root.get("$defs").and_then(|d| d.get(target)) {
            seen.push(target);
            walk_members(def, root, prefix, seen, out);
            seen.pop();
        }
    }
    if let Some(Value::Object(props)) = node.get("properties") {
        for (name, prop) in props {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
            if let Some(since) = since_through_ref(prop, root) {
                out.entry(path.clone()).or_insert(json!(since));
            }
            walk_members(prop, root, &path, seen, out);
        }
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            for branch in branches {
                walk_members(branch, root, prefix, seen, out);
            }
        }
    }
    if let Some(items) = node.get("items") {
        walk_members(items, root, &format!("{prefix}[]"), seen, out);
    }
}

/// The minor of each documented value of the enum `def` of the document `file` (`oneOf` of
/// `const` branches), for the values a later minor added.
fn value_since(schemas: &[SchemaDoc], file: &str, def: &str) -> std::collections::HashMap<String, ProtocolVersion> {
    let schema = doc(schemas, file);
    let branches =
        schema["$defs"][def]["oneOf"].as_array().unwrap_or_else(|| panic!("{file} defines {def} as a oneOf"));
    branches.iter().filter_map(|b| Some((b.get("const")?.as_str()?.to_owned(), since_of(b)?))).collect()
}

/// Per display item `kind`, its members in the order the crate serializes them (the schema's
/// order): the order a patch's member ops follow (`spec/ui-state.md#ui_state_patch`).
fn item_members(ui_state: &Value) -> Map<String, Value> {
    let branches = ui_state["$defs"]["DisplayItem"]["oneOf"].as_array().expect("DisplayItem is a oneOf");
    branches
        .iter()
        .filter_map(|branch| {
            let props = branch["properties"].as_object()?;
            let kind = props.get("kind")?.get("const")?.as_str()?;
            Some((kind.to_owned(), json!(props.keys().collect::<Vec<_>>())))
        })
        .collect()
}

/// Per supported version, oldest first: the frame types, capabilities, features and error codes
/// a connection that negotiated it may see.
fn versions(
    schemas: &[SchemaDoc],
    error_since: &std::collections::HashMap<String, ProtocolVersion>,
) -> Map<String, Value> {
    let mut supported = SUPPORTED_VERSIONS.to_vec();
    supported.sort();
    let client: Vec<(&str, ProtocolVersion)> =
        ClientFrame::TYPES.iter().map(|w| (*w, frame_since(schemas, w))).collect();
    let server: Vec<(&str, ProtocolVersion)> =
        ServerFrame::TYPES.iter().map(|w| (*w, frame_since(schemas, w))).collect();
    let up_to = |list: &[(&str, ProtocolVersion)], v: ProtocolVersion| -> Vec<String> {
        list.iter().filter(|(_, since)| *since <= v).map(|(name, _)| (*name).to_owned()).collect()
    };
    supported
        .into_iter()
        .map(|v| {
            let capabilities: Vec<Capability> =
                Capability::KNOWN.iter().map(|name| Capability::from_wire(name)).filter(|c| c.since() <= v).collect();
            let entry = json!({
                "client_frames": up_to(&client, v),
                "server_frames": up_to(&server, v),
                "capabilities": capabilities.iter().map(Capability::as_str).collect::<Vec<_>>(),
                "features": capabilities
                    .iter()
                    .filter(|c| c.feature_since().is_some_and(|since| since <= v))
                    .map(Capability::as_str)
                    .collect::<Vec<_>>(),
                "error_codes": ErrorCode::ALL
                    .iter()
                    .filter(|c| error_since.get(c.as_str()).copied().unwrap_or(FIRST) <= v)
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>(),
            });
            (v.to_string(), entry)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_type_is_described_and_answers_name_server_frames() {
        let facts = document();
        let client = facts["frames"]["client"].as_object().expect("client frames");
        let server = facts["frames"]["server"].as_object().expect("server frames");
        assert_eq!(client.keys().map(String::as_str).collect::<Vec<_>>(), ClientFrame::TYPES);
        assert_eq!(server.keys().map(String::as_str).collect::<Vec<_>>(), ServerFrame::TYPES);
        for (wire, frame) in client {
            for answer in frame["answered_by"].as_array().expect("answered_by") {
                let answer = answer.as_str().expect("a wire name");
                assert_ne!(server[answer]["answer"], "never", "{wire} is answered by {answer}, which answers nothing");
            }
        }
    }

    #[test]
    fn versions_grow_and_the_newest_is_everything() {
        let facts = document();
        let versions = facts["versions"].as_object().expect("versions");
        let newest = &versions[&PROTOCOL_VERSION.to_string()];
        assert_eq!(newest["client_frames"].as_array().map(Vec::len), Some(ClientFrame::TYPES.len()));
        assert_eq!(newest["server_frames"].as_array().map(Vec::len), Some(ServerFrame::TYPES.len()));
        assert_eq!(newest["error_codes"].as_array().map(Vec::len), Some(ErrorCode::ALL.len()));
        let oldest = &versions["1.0"];
        assert_eq!(oldest["features"], json!([]), "1.0 has no features (SESSION-012)");
        assert!(!oldest["client_frames"].as_array().expect("a list").contains(&json!("chat.retry")));
        assert!(!oldest["error_codes"].as_array().expect("a list").contains(&json!("capability_not_offered")));
        let mut previous = 0;
        for entry in versions.values() {
            let size = entry["server_frames"].as_array().map_or(0, Vec::len)
                + entry["capabilities"].as_array().map_or(0, Vec::len);
            assert!(size >= previous, "a later minor only adds");
            previous = size;
        }
    }

    #[test]
    fn every_error_code_states_the_minor_its_annotation_names() {
        let annotated = value_since(&all_schemas(), "error.json", "ErrorCode");
        for code in ErrorCode::ALL {
            let since = annotated.get(code.as_str()).copied().unwrap_or(FIRST);
            assert_eq!(code.since(), since, "{code}: ErrorCode::since and its x-chatwire-since annotation differ");
        }
        assert_eq!(ErrorCode::SessionDetached.since().to_string(), "1.2");
    }

    #[test]
    fn members_a_later_minor_added_are_found_through_refs() {
        let facts = document();
        let hello = &facts["frames"]["client"]["session.hello"]["members_since"];
        assert_eq!(hello["features"], "1.1");
        assert_eq!(hello["window"], "1.2");
        assert_eq!(hello["resume.before"], "1.2");
        assert_eq!(facts["frames"]["server"]["chat.tool_call"]["members_since"]["response_schema"], "1.2");
        assert_eq!(
            facts["frames"]["server"]["session.welcome"]["members_since"]["limits.max_attached_connections"],
            "1.2"
        );
        assert_eq!(facts["ui_state_members_since"]["items[].response_schema"], "1.2");
        assert_eq!(facts["frames"]["server"]["error"]["answer"], "sometimes");
        assert_eq!(facts["frames"]["server"]["chat.run_started"]["answer"], "never");
    }
}
