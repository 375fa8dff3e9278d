//! The AsyncAPI 3.0 document of Chatwire's WebSocket binding (`schema/asyncapi.json`).
//!
//! Generated from the same [`SchemaDoc`]s as `schema/json/`: one message per frame type, each
//! payload a relative `$ref` to the frame's schema file, grouped by direction into the two
//! operations of the application it describes, a Chatwire server. Nothing in it is written by
//! hand except the binding's prose, which points at the spec.

use chatwire_schema::schema_gen::{Direction, SchemaDoc};
use chatwire_schema::{
    CloseCode, ErrorCode, DEFAULT_MAX_FRAME_BYTES, HARD_CAP_FACTOR, MIN_MAX_FRAME_BYTES, PROTOCOL_VERSION, SUBPROTOCOL,
};
use serde_json::{json, Map, Value};

/// File name of the document, next to the `json/` directory its `$ref`s point into.
pub const FILE: &str = "asyncapi.json";

/// The AsyncAPI version the document follows.
const ASYNCAPI_VERSION: &str = "3.0.0";

/// Media type of the payload schemas: JSON Schema draft 2020-12, the draft `schema/json` is
/// written in. Naming it keeps readers from validating them as AsyncAPI's draft-07 dialect.
pub const PAYLOAD_SCHEMA_FORMAT: &str = "application/schema+json;version=2020-12";

/// The one channel: a WebSocket connection carries both directions.
const CHANNEL: &str = "connection";

/// Correlation of a client frame (its `id`) and of the server frames answering it (`in_reply_to`).
const CORRELATION_REQUEST: &str = "clientFrameId";
const CORRELATION_REPLY: &str = "inReplyTo";

/// The document for the frame schemas among `docs`; `schema_dir` is the path from the document
/// to the schema files (`json` for the committed layout).
pub fn document(docs: &[SchemaDoc], schema_dir: &str) -> Value {
    let frames: Vec<(&str, Direction, &SchemaDoc)> = docs
        .iter()
        .filter_map(|doc| doc.message.as_ref().map(|(wire, direction)| (wire.as_str(), *direction, doc)))
        .collect();

    let mut components = Map::new();
    let mut channel_messages = Map::new();
    for (wire, direction, doc) in &frames {
        components.insert((*wire).to_owned(), message(wire, *direction, doc, schema_dir));
        channel_messages.insert((*wire).to_owned(), json!({ "$ref": format!("#/components/messages/{wire}") }));
    }
    let refs_of = |wanted: Direction| -> Vec<Value> {
        frames
            .iter()
            .filter(|(_, direction, _)| *direction == wanted)
            .map(|(wire, _, _)| json!({ "$ref": format!("#/channels/{CHANNEL}/messages/{wire}") }))
            .collect()
    };

    json!({
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "Chatwire",
            "version": PROTOCOL_VERSION.to_string(),
            "description": format!(
                "The Chatwire wire protocol between an agent backend and a chat UI, over WebSocket. \
                 This document describes a Chatwire server: the frames it receives from a client and \
                 the frames it sends. Every frame is one WebSocket text message holding one UTF-8 JSON \
                 object whose `type` names the message (TRANSPORT-001). The normative text, with the \
                 requirement ids cited here, is `spec/` of the repository; the payload schemas are \
                 JSON Schema draft 2020-12 (`{PAYLOAD_SCHEMA_FORMAT}`) in `schema/json/`."
            ),
            "license": { "name": "Apache-2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0" },
            "externalDocs": {
                "description": "Specification (spec/README.md)",
                "url": "https://github.com/chatwire/chatwire/blob/main/spec/README.md"
            },
            "tags": [
                { "name": Direction::ClientToServer.as_str(), "description": "Sent by a client, received by the server." },
                { "name": Direction::ServerToClient.as_str(), "description": "Sent by the server, received by a client." }
            ]
        },
        "servers": {
            "backend": {
                "host": "{host}",
                "pathname": "{path}",
                "protocol": "ws",
                "title": "A Chatwire backend",
                "summary": "Any WebSocket endpoint that speaks Chatwire; use `wss` behind TLS.",
                "description": format!(
                    "The URL path is configuration, not protocol. A client offers the subprotocol \
                     `{SUBPROTOCOL}`; the server selects it (TRANSPORT-003) and also accepts a \
                     handshake that offers none (TRANSPORT-004)."
                ),
                "variables": {
                    "host": { "description": "Host and port of the backend.", "examples": ["127.0.0.1:8080"] },
                    "path": { "description": "URL path the backend serves Chatwire on.", "default": "/", "examples": ["/", "/chat"] }
                }
            }
        },
        "defaultContentType": "application/json",
        "channels": {
            CHANNEL: {
                "address": null,
                "title": "A Chatwire connection",
                "summary": "One WebSocket connection; both directions travel on it.",
                "description": format!(
                    "Frames travel as text messages; the server sends no binary message \
                     (TRANSPORT-001) and answers one with an `error` of code `binary_frame` \
                     (TRANSPORT-002). The server announces in `session.welcome` the largest \
                     message it accepts, `limits.max_frame_bytes` (at least {MIN_MAX_FRAME_BYTES} \
                     bytes, TRANSPORT-005; recommended {DEFAULT_MAX_FRAME_BYTES}, TRANSPORT-013), \
                     and answers a larger one with an `error` of code `frame_too_large` \
                     (TRANSPORT-006); above {HARD_CAP_FACTOR} times the limit it may close with \
                     {} instead (TRANSPORT-007). `x-chatwire-close-codes` lists the close codes \
                     Chatwire gives a meaning to, with the fatal error each one follows \
                     (TRANSPORT-008).",
                    CloseCode::MessageTooBig.code()
                ),
                "messages": channel_messages,
                "x-chatwire-close-codes": close_codes(),
                "bindings": {
                    "ws": {
                        "method": "GET",
                        "headers": {
                            "type": "object",
                            "properties": {
                                "Sec-WebSocket-Protocol": {
                                    "type": "string",
                                    "description": format!("Offers `{SUBPROTOCOL}` (TRANSPORT-003); optional (TRANSPORT-004).")
                                }
                            }
                        },
                        "bindingVersion": "0.1.0"
                    }
                }
            }
        },
        "operations": {
            "receiveClientFrames": {
                "action": "receive",
                "channel": { "$ref": format!("#/channels/{CHANNEL}") },
                "title": "Client frames",
                "summary": "The frames a client sends and the server receives.",
                "tags": [{ "name": Direction::ClientToServer.as_str() }],
                "messages": refs_of(Direction::ClientToServer)
            },
            "sendServerFrames": {
                "action": "send",
                "channel": { "$ref": format!("#/channels/{CHANNEL}") },
                "title": "Server frames",
                "summary": "The frames the server sends to a client.",
                "tags": [{ "name": Direction::ServerToClient.as_str() }],
                "messages": refs_of(Direction::ServerToClient)
            }
        },
        "components": {
            "messages": components,
            "correlationIds": {
                CORRELATION_REQUEST: {
                    "description": "The client-chosen `id` of a client frame; the server's answers to it carry the same value as `in_reply_to`.",
                    "location": "$message.payload#/id"
                },
                CORRELATION_REPLY: {
                    "description": "The `id` of the client frame this server frame answers.",
                    "location": "$message.payload#/in_reply_to"
                }
            }
        }
    })
}

/// Every close code with its reason phrase, and the fatal error code it follows, if any.
fn close_codes() -> Value {
    CloseCode::ALL
        .iter()
        .map(|close| {
            let mut entry = Map::new();
            entry.insert("code".into(), close.code().into());
            entry.insert("reason".into(), close.reason().into());
            if let Some(error) = ErrorCode::ALL.iter().find(|e| e.close_code() == Some(*close)) {
                entry.insert("after_error".into(), error.as_str().into());
            }
            Value::Object(entry)
        })
        .collect()
}

/// One frame type as an AsyncAPI message; its payload is the frame's schema file.
fn message(wire: &str, direction: Direction, doc: &SchemaDoc, schema_dir: &str) -> Value {
    let mut message = Map::new();
    message.insert("name".into(), wire.into());
    message.insert("title".into(), wire.into());
    if let Some(description) = doc.schema.get("description").and_then(Value::as_str) {
        message.insert("summary".into(), description.into());
    }
    message.insert("contentType".into(), "application/json".into());
    // A frame correlates by the field its schema has: a request's `id`, an answer's `in_reply_to`.
    let has = |field: &str| doc.schema.pointer(&format!("/properties/{field}")).is_some();
    let correlation = match direction {
        Direction::ServerToClient if has("in_reply_to") => Some(CORRELATION_REPLY),
        Direction::ClientToServer if has("id") => Some(CORRELATION_REQUEST),
        _ => None,
    };
    if let Some(name) = correlation {
        message.insert("correlationId".into(), json!({ "$ref": format!("#/components/correlationIds/{name}") }));
    }
    message.insert("tags".into(), json!([{ "name": direction.as_str() }]));
    message.insert(
        "payload".into(),
        json!({
            "schemaFormat": PAYLOAD_SCHEMA_FORMAT,
            "schema": { "$ref": format!("./{schema_dir}/{}", doc.file) }
        }),
    );
    Value::Object(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatwire_schema::schema_gen::all_schemas;
    use chatwire_schema::{ClientFrame, ServerFrame};

    fn wires_of(doc: &Value, operation: &str) -> Vec<String> {
        doc["operations"][operation]["messages"]
            .as_array()
            .expect("operation messages")
            .iter()
            .map(|m| {
                let r = m["$ref"].as_str().expect("a $ref");
                r.rsplit('/').next().expect("a message name").to_owned()
            })
            .collect()
    }

    #[test]
    fn every_frame_type_is_a_message_of_its_direction_and_nothing_else() {
        let doc = document(&all_schemas(), "json");
        assert_eq!(wires_of(&doc, "receiveClientFrames"), ClientFrame::TYPES.to_vec());
        assert_eq!(wires_of(&doc, "sendServerFrames"), ServerFrame::TYPES.to_vec());
        let components = doc["components"]["messages"].as_object().expect("components");
        assert_eq!(components.len(), ClientFrame::TYPES.len() + ServerFrame::TYPES.len());
    }

    #[test]
    fn requests_and_the_answers_naming_them_share_a_correlation() {
        let doc = document(&all_schemas(), "json");
        let correlation = |wire: &str| doc["components"]["messages"][wire]["correlationId"]["$ref"].clone();
        let request = json!(format!("#/components/correlationIds/{CORRELATION_REQUEST}"));
        let reply = json!(format!("#/components/correlationIds/{CORRELATION_REPLY}"));
        for wire in ClientFrame::TYPES {
            assert_eq!(correlation(wire), request, "{wire}");
        }
        for wire in ["session.welcome", "chat.user_message_accepted", "chat.rewind_complete", "error"] {
            assert_eq!(correlation(wire), reply, "{wire}");
        }
        assert_eq!(correlation("chat.assistant_message"), Value::Null, "a frame that answers nothing");
    }

    #[test]
    fn close_codes_name_the_fatal_error_they_follow() {
        let codes = close_codes();
        let codes = codes.as_array().expect("a list");
        assert_eq!(codes.len(), CloseCode::ALL.len());
        let after = |code: u16| codes.iter().find(|c| c["code"] == code).map(|c| c["after_error"].clone());
        assert_eq!(after(4001), Some(json!("session_taken_over")));
        assert_eq!(after(4002), Some(json!("unsupported_version")));
        assert_eq!(after(1000), Some(Value::Null));
    }

    #[test]
    fn payloads_are_relative_refs_to_the_frame_schema_files() {
        let doc = document(&all_schemas(), "json");
        let hello = &doc["components"]["messages"]["session.hello"];
        assert_eq!(hello["payload"]["schema"]["$ref"], "./json/session.hello.json");
        assert_eq!(hello["payload"]["schemaFormat"], PAYLOAD_SCHEMA_FORMAT);
        assert_eq!(hello["tags"][0]["name"], "client-to-server");
        assert_eq!(doc["info"]["version"], PROTOCOL_VERSION.to_string());
    }
}
