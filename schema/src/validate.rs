//! Frame validation that names the exact field: read `type`, then validate against that
//! variant's schema (a plain `oneOf` reports one useless error at the root).
//!
//! Spec: `spec/overview.md#frames`. Used by the `chatwire-schema validate` tool, the reference
//! backend and the conformance runner alike.

use std::collections::HashMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::frame::{ClientFrame, ServerFrame};
use crate::schema_gen::{all_schemas, Direction};
use crate::ProtocolVersion;

/// One schema violation: where in the frame, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer into the frame (`""` is the frame itself).
    pub instance_path: String,
    /// What the schema says is wrong.
    pub message: String,
}

/// The end of the message of a violation of the number bound (`INT-002`).
const UNSAFE_NUMBER_NOTE: &str = "the integers a JSON reader represents exactly (INT-002)";

impl Violation {
    /// Whether the violation is a number beyond ±(2^53 − 1) (`INT-002`), at any depth, opaque
    /// values included, rather than a breach of the frame's schema.
    pub fn is_unsafe_number(&self) -> bool {
        self.message.ends_with(UNSAFE_NUMBER_NOTE)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.instance_path.is_empty() { "/" } else { &self.instance_path };
        write!(f, "{path}: {}", self.message)
    }
}

/// Why a frame is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not JSON at all.
    #[error("not valid JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("a frame must be a JSON object")]
    NotObject,
    /// An object without a string `type`.
    #[error("the frame has no string \"type\" field")]
    MissingType,
    /// `type` names no frame of this direction.
    #[error("unknown frame type {0:?}")]
    UnknownType(String),
    /// The frame breaks its message schema.
    #[error("{} schema violation(s): {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Violation>),
    /// The schema accepts the frame but the Rust type does not: a bug in chatwire-schema itself.
    #[error("schema and types disagree (chatwire-schema bug): {0}")]
    SchemaTypeMismatch(String),
}

/// Compiled validators for every message of both directions. Build once; `Send + Sync`.
pub struct FrameValidator {
    by_type: HashMap<(Direction, String), jsonschema::Validator>,
}

impl fmt::Debug for FrameValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameValidator").field("messages", &self.by_type.len()).finish()
    }
}

impl Default for FrameValidator {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameValidator {
    /// Compiles the schemas generated from the types (identical to the committed files, which CI
    /// checks): every message of every minor, the newest included.
    pub fn new() -> Self {
        Self::from_docs(all_schemas())
    }

    /// Compiles the schemas of one protocol version: the types cut down to what `version` defines
    /// (`crate::since::project`). A frame, member or value added in a later minor is refused, as
    /// `COMPAT-005` requires of the frames on a connection that negotiated `version`.
    pub fn for_version(version: ProtocolVersion) -> Self {
        Self::from_docs(crate::since::schemas_for(version))
    }

    fn from_docs(docs: Vec<crate::schema_gen::SchemaDoc>) -> Self {
        let mut by_type = HashMap::new();
        for doc in docs {
            let Some((wire, direction)) = doc.message else { continue };
            // `format` asserts here (2020-12 makes it an annotation by default): `ts` must be an
            // RFC 3339 date-time (`FRAME-004`). Unknown formats (schemars' `uint64`, …) stay
            // annotations; their ranges are asserted through minimum/maximum.
            let validator = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&doc.schema)
                .unwrap_or_else(|e| panic!("generated schema {} does not compile: {e}", doc.file));
            by_type.insert((direction, wire), validator);
        }
        FrameValidator { by_type }
    }

    /// Validates a parsed frame against its variant's schema; returns its `type`.
    pub fn check<'v>(&self, direction: Direction, frame: &'v Value) -> Result<&'v str, FrameError> {
        let object = frame.as_object().ok_or(FrameError::NotObject)?;
        let wire = object.get("type").and_then(Value::as_str).ok_or(FrameError::MissingType)?;
        let validator =
            self.by_type.get(&(direction, wire.to_owned())).ok_or_else(|| FrameError::UnknownType(wire.to_owned()))?;
        // INT-002 bounds numbers inside opaque values too, which no schema can say (they take any JSON).
        let mut violations = Vec::new();
        unsafe_numbers(frame, &mut Vec::new(), &mut violations);
        // Fast path: most frames are valid, and `is_valid` skips building error iterators.
        if violations.is_empty() && validator.is_valid(frame) {
            return Ok(wire);
        }
        let mut schema_violations = Vec::new();
        for error in validator.iter_errors(frame) {
            refine(&error, &mut schema_violations);
        }
        // An integer field beyond its range is already reported by its schema bound.
        violations.retain(|n| !schema_violations.iter().any(|s| s.instance_path == n.instance_path));
        violations.extend(schema_violations);
        if violations.is_empty() {
            Ok(wire)
        } else {
            Err(FrameError::Invalid(violations))
        }
    }

    /// Parses, validates and deserializes a client frame.
    pub fn parse_client(&self, text: &str) -> Result<ClientFrame, FrameError> {
        self.parse(Direction::ClientToServer, text)
    }

    /// Parses, validates and deserializes a server frame.
    pub fn parse_server(&self, text: &str) -> Result<ServerFrame, FrameError> {
        self.parse(Direction::ServerToClient, text)
    }

    /// Validates and deserializes an already parsed frame.
    pub fn from_value<T: DeserializeOwned>(&self, direction: Direction, value: Value) -> Result<T, FrameError> {
        self.check(direction, &value)?;
        serde_json::from_value(value).map_err(|e| FrameError::SchemaTypeMismatch(e.to_string()))
    }

    fn parse<T: DeserializeOwned>(&self, direction: Direction, text: &str) -> Result<T, FrameError> {
        let value: Value = serde_json::from_str(text).map_err(|e| FrameError::NotJson(e.to_string()))?;
        self.from_value(direction, value)
    }

    /// Every message `type` of a direction this validator knows.
    pub fn types(&self, direction: Direction) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_type.keys().filter(|(d, _)| *d == direction).map(|(_, w)| w.as_str()).collect();
        v.sort_unstable();
        v
    }
}

/// One step of the way from a frame to a value inside it.
enum PathStep<'v> {
    Member(&'v str),
    Index(usize),
}

/// Collects every number of `value` whose absolute value is beyond 2^53 − 1 (`INT-002`), at any
/// depth, with its JSON Pointer. Integer fields have the bound in their schema as well; opaque
/// values (`payload`, `value`, `result`) have it only here. Every member of every frame is walked,
/// so the way down is kept as borrowed steps and spelled as a pointer only for a violation.
fn unsafe_numbers<'v>(value: &'v Value, path: &mut Vec<PathStep<'v>>, out: &mut Vec<Violation>) {
    match value {
        Value::Number(n) => {
            let limit = crate::MAX_SAFE_INTEGER.unsigned_abs();
            let beyond = match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => u > limit,
                (None, Some(i)) => i.unsigned_abs() > limit,
                // Every finite f64 beyond 2^53 − 1 is also at least 2^53, so the comparison is exact.
                (None, None) => n.as_f64().is_none_or(|f| f.abs() > limit as f64),
            };
            if beyond {
                out.push(Violation {
                    instance_path: pointer(path),
                    message: format!("{n} is beyond ±(2^53 − 1), {UNSAFE_NUMBER_NOTE}"),
                });
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(PathStep::Index(index));
                unsafe_numbers(item, path, out);
                path.pop();
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                path.push(PathStep::Member(key));
                unsafe_numbers(member, path, out);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// The JSON Pointer (RFC 6901) of `path`.
fn pointer(path: &[PathStep<'_>]) -> String {
    let mut pointer = String::new();
    for step in path {
        pointer.push('/');
        match step {
            PathStep::Member(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            PathStep::Index(index) => pointer.push_str(&index.to_string()),
        }
    }
    pointer
}

/// Flattens an error into violations. A failed `oneOf` over a tagged union (a nested
/// `#[serde(tag = ...)]` enum) is replaced by the errors of the one branch whose tag matched,
/// so the report names the exact field instead of "not valid under any of the schemas".
fn refine(error: &jsonschema::ValidationError<'_>, out: &mut Vec<Violation>) {
    use jsonschema::error::ValidationErrorKind;
    let here = error.instance_path().to_string();
    // A branch is ruled out when its own discriminator failed: a `const` (the tag of a tagged
    // union) or the instance's basic type (the `null` branch of an optional field).
    let ruled_out = |branch: &Vec<jsonschema::ValidationError<'static>>| {
        branch.iter().any(|e| match e.kind() {
            ValidationErrorKind::Constant { .. } => true,
            ValidationErrorKind::Type { .. } => e.instance_path().to_string() == here,
            _ => false,
        })
    };
    let context = match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => Some(context),
        _ => None,
    };
    if let Some(context) = context {
        let candidates: Vec<_> = context.iter().filter(|b| !ruled_out(b)).collect();
        if candidates.len() == 1 && !candidates[0].is_empty() {
            for e in candidates[0] {
                refine(e, out);
            }
            return;
        }
    }
    out.push(Violation { instance_path: here, message: error.to_string() });
}

/// The direction a wire `type` travels in, if it names a frame.
pub fn direction_of(wire: &str) -> Option<Direction> {
    if ClientFrame::TYPES.contains(&wire) {
        Some(Direction::ClientToServer)
    } else if ServerFrame::TYPES.contains(&wire) {
        Some(Direction::ServerToClient)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn response(value: &str) -> Value {
        let text = format!(
            r#"{{"type": "chat.tool_call_response", "id": "r-1", "tool_call_id": "tc-1", "outcome": {{"action": "submit", "value": {value}}}}}"#
        );
        serde_json::from_str(&text).expect("test frame is JSON")
    }

    // INT-002: the bound holds at any depth of an opaque value, for every spelling of a number.
    #[test]
    fn numbers_beyond_the_safe_range_are_refused_anywhere() {
        let validator = FrameValidator::new();
        for ok in
            ["9007199254740991", "-9007199254740991", "4.0", "1e3", "-0", "0.1", "1e-300", "{\"a\": [1, 2.5]}", "null"]
        {
            let frame = response(ok);
            assert_eq!(validator.check(Direction::ClientToServer, &frame), Ok("chat.tool_call_response"), "{ok}");
        }
        for (bad, path) in [
            ("9007199254740992", "/outcome/value"),
            ("-9007199254740992", "/outcome/value"),
            ("18446744073709551616", "/outcome/value"),
            ("1.5e300", "/outcome/value"),
            ("{\"deep\": [0, {\"n\": 9.1e15}]}", "/outcome/value/deep/1/n"),
            ("{\"a/b~c\": 1e16}", "/outcome/value/a~1b~0c"),
        ] {
            let frame = response(bad);
            match validator.check(Direction::ClientToServer, &frame) {
                Err(FrameError::Invalid(v)) => {
                    assert_eq!(v.len(), 1, "{bad}: {v:?}");
                    assert_eq!(v[0].instance_path, path, "{bad}");
                    assert!(v[0].message.contains("INT-002"), "{}", v[0].message);
                    assert!(v[0].is_unsafe_number(), "{}", v[0].message);
                }
                other => panic!("{bad}: expected a violation, got {other:?}"),
            }
        }
    }

    // An integer field out of range is reported once, by its schema bound.
    #[test]
    fn an_integer_field_out_of_range_is_reported_once() {
        let validator = FrameValidator::new();
        let frame = json!({"type": "chat.run_started", "seq": 9007199254740992u64, "invocation_id": "inv-1", "ts": "2026-01-15T10:00:00Z"});
        match validator.check(Direction::ServerToClient, &frame) {
            Err(FrameError::Invalid(v)) => assert_eq!(v.len(), 1, "{v:?}"),
            other => panic!("expected a violation, got {other:?}"),
        }
    }
}
