//! `chat.reasoning` (since 1.3, feature `reasoning`) — a whole reasoning item, or the end of the
//! open reasoning stream.
//!
//! Spec: `spec/reasoning.md`, reducer rule `STATE-055`, refusals `STATE-058` … `STATE-062`. Naming
//! the open reasoning stream it ends it (its `text` is the deltas' concatenation, unless
//! `redacted`); naming a new item it appends a whole `reasoning` item. `encrypted` is an opaque
//! payload the server may hand back to its model later, kept byte for byte (`REASON-004`).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::Id;

/// The largest `encrypted` payload of a reasoning item, in bytes (= characters: the payload is
/// ASCII, [`ENCRYPTED_PATTERN`]).
pub const MAX_REASONING_PAYLOAD_BYTES: usize = 64 * 1024;

/// The alphabet of `encrypted`: base64 and base64url with padding, so that its length in
/// characters (what JSON Schema's `maxLength` counts) is its length in bytes.
pub const ENCRYPTED_PATTERN: &str = "^[A-Za-z0-9+/_=-]*$";

/// A reasoning item, whole, or the end of the open reasoning stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct Reasoning {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn whose run reasons; its run slice is in progress (`STATE-022`).
    pub invocation_id: Id,
    /// The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
    /// `STATE-065`); absent for an item of the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub parent_call_id: Option<Id>,
    /// Id of the `reasoning` item: the open stream it ends, or a new item.
    pub item_id: Id,
    /// The whole reasoning; `""` when `redacted` (`REASON-003`, `STATE-062`).
    pub text: String,
    /// Present and `true` when the run withholds the text: the item then holds none.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub redacted: bool,
    /// An opaque payload for the agent's model, never interpreted by a client (`REASON-005`).
    #[serde(default, deserialize_with = "encrypted", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_REASONING_PAYLOAD_BYTES), regex(pattern = ENCRYPTED_PATTERN))]
    pub encrypted: Option<String>,
    /// When the reasoning ended (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// Whether `s` is a well-formed `encrypted` payload: at most [`MAX_REASONING_PAYLOAD_BYTES`] of
/// [`ENCRYPTED_PATTERN`]'s alphabet.
pub fn is_encrypted_payload(s: &str) -> bool {
    s.len() <= MAX_REASONING_PAYLOAD_BYTES
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'=' | b'-'))
}

/// Deserializes `encrypted`, holding it to [`is_encrypted_payload`].
pub(crate) fn encrypted<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = Option::<String>::deserialize(d)?;
    match value {
        Some(s) if !is_encrypted_payload(&s) => Err(serde::de::Error::custom(format!(
            "encrypted must be at most {MAX_REASONING_PAYLOAD_BYTES} base64 characters"
        ))),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_payloads_are_bounded_base64() {
        assert!(is_encrypted_payload("EiQKIgoaZ2VtaW5pLTI="));
        assert!(is_encrypted_payload(&"A".repeat(MAX_REASONING_PAYLOAD_BYTES)));
        assert!(!is_encrypted_payload(&"A".repeat(MAX_REASONING_PAYLOAD_BYTES + 1)));
        assert!(!is_encrypted_payload("not base64!"));
        let frame = r#"{"seq": 3, "invocation_id": "inv-1", "item_id": "r-1", "text": "", "redacted": true, "encrypted": "é", "ts": "2026-01-01T00:00:00Z"}"#;
        assert!(serde_json::from_str::<Reasoning>(frame).is_err());
    }
}
