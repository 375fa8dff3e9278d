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

/// One schema violation: where in the frame, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer into the frame (`""` is the frame itself).
    pub instance_path: String,
    /// What the schema says is wrong.
    pub message: String,
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
    /// Compiles the schemas generated from the types (identical to the committed files, which CI checks).
    pub fn new() -> Self {
        let mut by_type = HashMap::new();
        for doc in all_schemas() {
            let Some((wire, direction)) = doc.message else { continue };
            let validator = jsonschema::draft202012::new(&doc.schema)
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
        // Fast path: most frames are valid, and `is_valid` skips building error iterators.
        if validator.is_valid(frame) {
            return Ok(wire);
        }
        let mut violations = Vec::new();
        for error in validator.iter_errors(frame) {
            refine(&error, &mut violations);
        }
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
