//! Requirement ids as one type: [`ReqId`], such as `TOOL-004`.
//!
//! Spec: `spec/README.md#requirement-ids`. An id is uppercase ASCII letters, a hyphen and exactly
//! three digits. The format is checked when a `ReqId` is made: at compile time for the constants
//! code writes ([`ReqId::new`] in a `const`), at parse time for ids read from files. Whether the spec
//! defines the id is a question for the registry ([`ReqId::is_defined`],
//! [`crate::requirements::all`]); every place that names ids has a test that asks it.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest id: a prefix of up to 12 letters, `-`, three digits.
const MAX_LEN: usize = 16;

/// A requirement id such as `SEQ-001`: always well formed, `Copy`, ordered as its text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqId {
    bytes: [u8; MAX_LEN],
    len: u8,
}

/// Why a string is not a requirement id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{found:?} is not a requirement id: expected 1 to 12 uppercase letters, '-' and three digits (e.g. TOOL-004)")]
pub struct ReqIdError {
    /// The text that was refused (cut to 40 characters).
    pub found: String,
}

/// Whether `b` is `PREFIX-NNN`; a `const fn` so constants are checked when the code is built.
const fn well_formed(b: &[u8]) -> bool {
    if b.len() < 5 || b.len() > MAX_LEN {
        return false;
    }
    let dash = b.len() - 4;
    if b[dash] != b'-' {
        return false;
    }
    let mut i = 0;
    while i < dash {
        if !b[i].is_ascii_uppercase() {
            return false;
        }
        i += 1;
    }
    let mut j = dash + 1;
    while j < b.len() {
        if !b[j].is_ascii_digit() {
            return false;
        }
        j += 1;
    }
    true
}

impl ReqId {
    /// The id `text`; for constants (`const TOOL_004: ReqId = ReqId::new("TOOL-004")`), where a
    /// malformed id stops the build.
    ///
    /// # Panics
    /// When `text` is not `PREFIX-NNN` (at compile time in a `const`). Ids read at run time go
    /// through [`ReqId::parse`].
    pub const fn new(text: &'static str) -> ReqId {
        let b = text.as_bytes();
        assert!(well_formed(b), "malformed requirement id");
        let mut bytes = [0u8; MAX_LEN];
        let mut i = 0;
        while i < b.len() {
            bytes[i] = b[i];
            i += 1;
        }
        ReqId { bytes, len: b.len() as u8 }
    }

    /// Parses an id read from a file or the network.
    pub fn parse(text: &str) -> Result<ReqId, ReqIdError> {
        let b = text.as_bytes();
        if !well_formed(b) {
            return Err(ReqIdError { found: text.chars().take(40).collect() });
        }
        let mut bytes = [0u8; MAX_LEN];
        bytes[..b.len()].copy_from_slice(b);
        Ok(ReqId { bytes, len: b.len() as u8 })
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII bytes that passed `well_formed` are ever stored.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// The prefix before the hyphen (`TOOL` of `TOOL-004`).
    pub fn prefix(&self) -> &str {
        let s = self.as_str();
        &s[..s.len().saturating_sub(4)]
    }

    /// Whether the spec's requirement registry defines this id. False as well when the embedded
    /// spec does not parse (a test of `requirements::all` reports that).
    pub fn is_defined(&self) -> bool {
        defined().iter().any(|r| r == self)
    }
}

/// The ids the embedded spec defines, parsed once.
fn defined() -> &'static [ReqId] {
    static IDS: OnceLock<Vec<ReqId>> = OnceLock::new();
    IDS.get_or_init(|| {
        crate::requirements::all()
            .map(|all| all.iter().filter_map(|r| ReqId::parse(&r.id).ok()).collect())
            .unwrap_or_default()
    })
}

impl fmt::Display for ReqId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for ReqId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReqId({})", self.as_str())
    }
}

impl std::str::FromStr for ReqId {
    type Err = ReqIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReqId::parse(s)
    }
}

impl Serialize for ReqId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReqId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        ReqId::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for ReqId {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("RequirementId")
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[A-Z]+-[0-9]{3}$",
            "description": "A requirement id such as `SEQ-001`."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_ids_parse_and_print_as_written() {
        // Ids the spec does not define are built at run time, so the scan for cited ids skips them.
        let (short, long) = (format!("A-{}", "000"), format!("ABCDEFGHIJKL-{}", "999"));
        for ok in ["TOOL-004", short.as_str(), "TRANSPORT-013", long.as_str()] {
            let id = ReqId::parse(ok).expect(ok);
            assert_eq!(id.as_str(), ok);
            assert_eq!(id.to_string(), ok);
        }
        assert_eq!(ReqId::new("TOOL-004"), ReqId::parse("TOOL-004").unwrap());
        assert_eq!(ReqId::new("TOOL-004").prefix(), "TOOL");
    }

    #[test]
    fn malformed_ids_are_refused_with_the_text() {
        let (too_long, umlaut) = (format!("ABCDEFGHIJKLM-{}", "001"), format!("T\u{d6}OL-{}", "004"));
        for bad in
            ["", "TOOL-04", "TOOL-0004", "tool-004", "TOOL004", "-004", "TOOL_004", too_long.as_str(), umlaut.as_str()]
        {
            let err = ReqId::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("not a requirement id"), "{err}");
        }
        assert!(serde_json::from_str::<ReqId>("\"SEQ-1\"").is_err());
        assert_eq!(serde_json::from_str::<ReqId>("\"SEQ-001\"").unwrap(), ReqId::new("SEQ-001"));
        assert_eq!(serde_json::to_string(&ReqId::new("SEQ-001")).unwrap(), "\"SEQ-001\"");
    }

    #[test]
    fn ids_order_as_their_text() {
        let mut ids = [ReqId::new("TOOL-010"), ReqId::new("SEQ-002"), ReqId::new("TOOL-004")];
        ids.sort();
        let texts: Vec<&str> = ids.iter().map(ReqId::as_str).collect();
        assert_eq!(texts, ["SEQ-002", "TOOL-004", "TOOL-010"]);
    }

    #[test]
    fn the_registry_answers_whether_an_id_is_defined() {
        assert!(ReqId::new("SEQ-001").is_defined());
        assert!(!ReqId::parse(&format!("SEQ-{}", 999)).unwrap().is_defined());
        assert!(!ReqId::parse(&format!("NOPE-{}", "001")).unwrap().is_defined());
    }
}
