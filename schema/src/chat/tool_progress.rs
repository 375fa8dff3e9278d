//! `chat.tool_progress` — streamed progress of a running tool call.
//!
//! Spec: `spec/tool-calls.md#chattool_progress`, reducer rule `STATE-014`.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::Id;

/// Progress of a `running` tool call; replaces the item's previous progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolProgress {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The running tool call.
    pub tool_call_id: Id,
    /// A short human-readable status line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How much is done, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Fraction>,
    /// When the progress was observed (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// A number from 0 to 1 inclusive.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Fraction(f64);

/// Why a number is not a [`Fraction`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("fraction must be between 0 and 1, got {0}")]
pub struct FractionError(pub f64);

impl Fraction {
    /// Checks that `v` lies in `[0, 1]`.
    pub fn new(v: f64) -> Result<Self, FractionError> {
        if (0.0..=1.0).contains(&v) {
            Ok(Fraction(v))
        } else {
            Err(FractionError(v))
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Fraction {
    type Error = FractionError;
    fn try_from(v: f64) -> Result<Self, FractionError> {
        Fraction::new(v)
    }
}

impl From<Fraction> for f64 {
    fn from(f: Fraction) -> f64 {
        f.0
    }
}

impl JsonSchema for Fraction {
    fn schema_name() -> Cow<'static, str> {
        "Fraction".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A number from 0 to 1 inclusive.",
            "type": "number",
            "minimum": 0,
            "maximum": 1,
        })
    }
}
