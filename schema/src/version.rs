//! Protocol and UiState versions.
//!
//! Spec: `spec/session.md#version-negotiation` and `spec/versioning.md`.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// The WebSocket subprotocol a Chatwire v1 server selects (`Sec-WebSocket-Protocol`).
pub const SUBPROTOCOL: &str = "chatwire.v1";

/// The protocol version this crate defines.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion { major: 1, minor: 3 };

/// Every protocol version this crate can speak, newest first.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    PROTOCOL_VERSION,
    ProtocolVersion { major: 1, minor: 2 },
    ProtocolVersion { major: 1, minor: 1 },
    ProtocolVersion { major: 1, minor: 0 },
];

/// Default largest inbound text frame a server accepts, in bytes (1 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: u64 = 1024 * 1024;

/// A protocol version `MAJOR.MINOR`, written on the wire as a string such as `"1.0"`.
///
/// Minor versions add only what a conforming peer of the same major can ignore;
/// anything else is a new major (`spec/versioning.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProtocolVersion {
    /// Incompatible changes bump this.
    pub major: u16,
    /// Additive changes bump this.
    pub minor: u16,
}

/// The version string pattern in the schema; [`ProtocolVersion::parse`] enforces the same rule.
pub const VERSION_PATTERN: &str = "^(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})$";

/// Why a string is not a protocol version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("protocol version must look like MAJOR.MINOR (e.g. \"1.0\"), got {0:?}")]
pub struct VersionError(pub String);

impl ProtocolVersion {
    /// Parses `MAJOR.MINOR`: decimal numbers of 1-4 digits without leading zeros.
    pub fn parse(s: &str) -> Result<Self, VersionError> {
        let bad = || VersionError(s.to_owned());
        let (major, minor) = s.split_once('.').ok_or_else(bad)?;
        let number = |part: &str| -> Result<u16, VersionError> {
            let well_formed = !part.is_empty()
                && part.len() <= 4
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part == "0" || !part.starts_with('0'));
            if !well_formed {
                return Err(bad());
            }
            part.parse().map_err(|_| bad())
        };
        Ok(ProtocolVersion { major: number(major)?, minor: number(minor)? })
    }

    /// Picks the version to speak: the newest supported version that the client offered.
    pub fn negotiate(offered: &[ProtocolVersion], supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        supported.iter().copied().filter(|v| offered.contains(v)).max()
    }
}

impl TryFrom<String> for ProtocolVersion {
    type Error = VersionError;
    fn try_from(s: String) -> Result<Self, VersionError> {
        Self::parse(&s)
    }
}

impl From<ProtocolVersion> for String {
    fn from(v: ProtocolVersion) -> String {
        v.to_string()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl JsonSchema for ProtocolVersion {
    fn schema_name() -> Cow<'static, str> {
        "ProtocolVersion".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A protocol version MAJOR.MINOR, e.g. \"1.0\".",
            "type": "string",
            "pattern": VERSION_PATTERN,
        })
    }
}

/// The UiState format carried by `ui_state_snapshot` and `ui_state_updated` (`v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum UiStateVersion {
    /// UiState v1 (since protocol 1.0): the whole state in every frame.
    #[serde(rename = "ui_state_v1")]
    V1,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let v = ProtocolVersion::parse("1.12").unwrap();
        assert_eq!(v, ProtocolVersion { major: 1, minor: 12 });
        assert_eq!(v.to_string(), "1.12");
        for bad in ["1", "1.", ".1", "01.0", "1.00", "v1.0", "1.0.0", "99999.0", "1.-1", ""] {
            assert!(ProtocolVersion::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn negotiation_picks_newest_common() {
        let v = |s| ProtocolVersion::parse(s).unwrap();
        assert_eq!(ProtocolVersion::negotiate(&[v("1.0"), v("2.0")], &[v("1.0")]), Some(v("1.0")));
        assert_eq!(ProtocolVersion::negotiate(&[v("1.0"), v("1.1")], &[v("1.1"), v("1.0")]), Some(v("1.1")));
        assert_eq!(ProtocolVersion::negotiate(&[v("2.0")], &[v("1.0")]), None);
    }
}
