//! Identifiers used on the wire.
//!
//! Spec: `spec/overview.md#identifiers`. One id names one thing end to end: a
//! `tool_call_id` is the interaction id from `chat.tool_call` to its settlement,
//! an `invocation_id` names the turn that produced a display item.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// Longest id accepted on the wire, in bytes.
pub const ID_MAX_LEN: usize = 128;

/// The id pattern as written in the JSON Schema; [`Id::parse`] enforces the same rule.
pub const ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$";

/// An opaque identifier: 1–128 ASCII characters, first one alphanumeric, then
/// alphanumerics or `.` `_` `:` `-`.
///
/// The same rule is enforced by serde and by the generated schema, so a frame
/// that one accepts the other accepts too.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Id(String);

/// Why a string is not a valid [`Id`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The string is empty.
    #[error("id is empty")]
    Empty,
    /// The string is longer than [`ID_MAX_LEN`] bytes.
    #[error("id is longer than {ID_MAX_LEN} bytes")]
    TooLong,
    /// The string contains a character outside the allowed set.
    #[error("id contains {0:?}, outside [A-Za-z0-9._:-] (first character alphanumeric)")]
    BadCharacter(char),
}

impl Id {
    /// Checks `s` against the id rule.
    pub fn parse(s: impl Into<String>) -> Result<Self, IdError> {
        let s = s.into();
        let mut chars = s.chars();
        let first = chars.next().ok_or(IdError::Empty)?;
        if s.len() > ID_MAX_LEN {
            return Err(IdError::TooLong);
        }
        if !first.is_ascii_alphanumeric() {
            return Err(IdError::BadCharacter(first));
        }
        if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))) {
            return Err(IdError::BadCharacter(bad));
        }
        Ok(Id(s))
    }

    /// Builds an id from a string the caller knows to be valid (generated ids).
    ///
    /// # Panics
    /// If `s` breaks the id rule: only for ids made by code, never for input.
    pub fn new_unchecked_valid(s: impl Into<String>) -> Self {
        match Self::parse(s) {
            Ok(id) => id,
            Err(e) => panic!("generated id is invalid: {e}"),
        }
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Id {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        Id::parse(s)
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        id.0
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl JsonSchema for Id {
    fn schema_name() -> Cow<'static, str> {
        "Id".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.",
            "type": "string",
            "pattern": ID_PATTERN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_typical_ids() {
        for s in ["a", "tc_1", "inv-2.x:y", &"a".repeat(128)] {
            assert!(Id::parse(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn rejects_bad_ids() {
        assert_eq!(Id::parse(""), Err(IdError::Empty));
        assert_eq!(Id::parse("a".repeat(129)), Err(IdError::TooLong));
        assert_eq!(Id::parse("_x"), Err(IdError::BadCharacter('_')));
        assert_eq!(Id::parse("a b"), Err(IdError::BadCharacter(' ')));
        assert_eq!(Id::parse("é"), Err(IdError::BadCharacter('é')));
    }
}
