//! `session.welcome` — the server's answer to an accepted `session.hello`.
//!
//! Spec: `spec/session.md#sessionwelcome`.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Id, ProtocolVersion};

/// Confirms the session: the chosen version, the ids to resume it later, and what the server offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionWelcome {
    /// Position of this frame in the session's frame sequence; grows strictly (`SEQ-001`).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `session.hello` this answers.
    pub in_reply_to: Id,
    /// The protocol version chosen for this connection, one of those the client offered.
    pub version: ProtocolVersion,
    /// The session's id; stable across reconnects and server restarts.
    pub session_id: Id,
    /// Secret needed to resume this session; the server may rotate it on every welcome.
    pub resume_token: Id,
    /// True when this welcome resumed an existing session, false when it opened a new one.
    pub resumed: bool,
    /// Optional features this server implements; scenarios needing others are not applicable.
    pub capabilities: Vec<Capability>,
    /// Limits the client must respect.
    pub limits: Limits,
    /// Free-form name and version of the server, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The features in force on this connection (since 1.1; present, possibly empty, on every
    /// connection that negotiated 1.1 or later, `SESSION-013`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    pub features: Option<Vec<Capability>>,
    /// With `resume_catch_up` in force: the most events a catch-up patch covers; a resume that
    /// missed more gets a snapshot (since 1.1, `RESUME-018`).
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    pub resume_retention: Option<u32>,
}

/// Limits a server announces in its welcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Largest text frame the server accepts, in bytes; a larger one gets `frame_too_large`.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub max_frame_bytes: u64,
    /// With `multi_attach` in force: the most connections the session keeps attached at once, at
    /// least [`crate::MIN_ATTACHED_CONNECTIONS`]; one more attaching detaches the earliest
    /// (since 1.2, `ATTACH-003`).
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("x-chatwire-since" = "1.2"), range(min = 8))]
    pub max_attached_connections: Option<u32>,
}

/// An optional feature a server may offer.
///
/// Receivers must tolerate names they do not know (`SESSION-008`): an unknown capability
/// is kept as [`Capability::Other`] and survives a round trip unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Capability {
    /// `rewind` (since 1.0): the server implements `chat.rewind`.
    Rewind,
    /// `tool_output` (since 1.0): the server sends `chat.tool_output` for tool groups.
    ToolOutput,
    /// `tool_expiry` (since 1.0): awaited tool calls can expire.
    ToolExpiry,
    /// `conformance_script` (since 1.0): the server runs `session.hello.script` (conformance mode).
    ConformanceScript,
    /// `restart_durability` (since 1.0): sessions survive a server restart.
    RestartDurability,
    /// `ui_state_patch` (since 1.1, a feature): `ui_state_patch` in place of `ui_state_updated`.
    UiStatePatch,
    /// `resume_catch_up` (since 1.1, a feature): a resume gets a catch-up patch in place of a snapshot.
    ResumeCatchUp,
    /// `assistant_stream` (since 1.1, a feature): assistant text arrives as it is written, in
    /// `chat.assistant_message_delta` frames; in force only with `ui_state_patch` (`STREAM-001`).
    AssistantStream,
    /// `retry` (since 1.1): the server implements `chat.retry` (`spec/retry.md`).
    Retry,
    /// `cancel` (since 1.2): the server implements `chat.cancel` (`spec/cancel.md`).
    Cancel,
    /// `multi_attach` (since 1.2, a feature): a resume of a session that other connections hold
    /// attaches beside them instead of taking it over (`spec/attach.md`).
    MultiAttach,
    /// `state_window` (since 1.2, a feature): a hello may ask for a window of the newest items,
    /// and the connection pages back with `chat.history_request` (`spec/window.md`).
    StateWindow,
    /// `reasoning` (since 1.3, a feature): the agent's reasoning reaches the connection as
    /// `reasoning` items, streamed like assistant text (`spec/reasoning.md`).
    Reasoning,
    /// `usage` (since 1.3, a feature): what each run slice used, on its `chat.run_complete` and
    /// summed in `state.usage` (`spec/usage.md`).
    Usage,
    /// `subagents` (since 1.3, a feature): a sub-agent's transcript inside the tool call that runs
    /// it (`spec/subagents.md`).
    Subagents,
    /// A capability this crate does not know.
    Other(String),
}

impl Capability {
    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            Capability::Rewind => "rewind",
            Capability::ToolOutput => "tool_output",
            Capability::ToolExpiry => "tool_expiry",
            Capability::ConformanceScript => "conformance_script",
            Capability::RestartDurability => "restart_durability",
            Capability::UiStatePatch => "ui_state_patch",
            Capability::ResumeCatchUp => "resume_catch_up",
            Capability::AssistantStream => "assistant_stream",
            Capability::Retry => "retry",
            Capability::Cancel => "cancel",
            Capability::MultiAttach => "multi_attach",
            Capability::StateWindow => "state_window",
            Capability::Reasoning => "reasoning",
            Capability::Usage => "usage",
            Capability::Subagents => "subagents",
            Capability::Other(s) => s,
        }
    }

    /// Every capability this crate knows, in wire-name form.
    pub const KNOWN: &'static [&'static str] = &[
        "rewind",
        "tool_output",
        "tool_expiry",
        "conformance_script",
        "restart_durability",
        "ui_state_patch",
        "resume_catch_up",
        "assistant_stream",
        "retry",
        "cancel",
        "multi_attach",
        "state_window",
        "reasoning",
        "usage",
        "subagents",
    ];

    /// The capabilities that are features (since 1.1): they change what the server sends, so they
    /// are in force only where negotiated (`SESSION-012`).
    pub const FEATURES: &'static [&'static str] = &[
        "ui_state_patch",
        "resume_catch_up",
        "assistant_stream",
        "multi_attach",
        "state_window",
        "reasoning",
        "usage",
        "subagents",
    ];

    /// The minor version that defines this capability as a feature (`spec/session.md#features`),
    /// or `None` for a capability that is not a feature.
    pub fn feature_since(&self) -> Option<ProtocolVersion> {
        match self {
            Capability::UiStatePatch | Capability::ResumeCatchUp | Capability::AssistantStream => {
                Some(ProtocolVersion { major: 1, minor: 1 })
            }
            Capability::MultiAttach | Capability::StateWindow => Some(ProtocolVersion { major: 1, minor: 2 }),
            Capability::Reasoning | Capability::Usage | Capability::Subagents => {
                Some(ProtocolVersion { major: 1, minor: 3 })
            }
            _ => None,
        }
    }

    /// The minor version that defines this capability: a connection that negotiated an older one
    /// never sees it in a welcome (`COMPAT-005`). Unknown names count as 1.0.
    pub fn since(&self) -> ProtocolVersion {
        let minor = match self {
            Capability::UiStatePatch | Capability::ResumeCatchUp | Capability::AssistantStream | Capability::Retry => 1,
            Capability::Cancel | Capability::MultiAttach | Capability::StateWindow => 2,
            Capability::Reasoning | Capability::Usage | Capability::Subagents => 3,
            _ => 0,
        };
        ProtocolVersion { major: 1, minor }
    }

    /// Maps a wire name to a capability; unknown names become [`Capability::Other`].
    pub fn from_wire(s: &str) -> Self {
        match s {
            "rewind" => Capability::Rewind,
            "tool_output" => Capability::ToolOutput,
            "tool_expiry" => Capability::ToolExpiry,
            "conformance_script" => Capability::ConformanceScript,
            "restart_durability" => Capability::RestartDurability,
            "ui_state_patch" => Capability::UiStatePatch,
            "resume_catch_up" => Capability::ResumeCatchUp,
            "assistant_stream" => Capability::AssistantStream,
            "retry" => Capability::Retry,
            "cancel" => Capability::Cancel,
            "multi_attach" => Capability::MultiAttach,
            "state_window" => Capability::StateWindow,
            "reasoning" => Capability::Reasoning,
            "usage" => Capability::Usage,
            "subagents" => Capability::Subagents,
            other => Capability::Other(other.to_owned()),
        }
    }
}

/// The features in force on a connection that negotiated `version` (`SESSION-012`): `None` where
/// the welcome carries no `features` at all (a version before 1.1, `SESSION-013`), else the
/// features the server `implements` that `version` defines, narrowed to those the hello
/// `requested` when it named any; names the server does not know or implement are ignored
/// (`SESSION-016`). `assistant_stream` is in force only together with `ui_state_patch`
/// (`STREAM-001`): a delta has no state frame of its own (`STREAM-002`), so a connection that
/// gets whole states could not show it.
pub fn features_in_force(
    version: ProtocolVersion,
    requested: Option<&[Capability]>,
    implements: &[Capability],
) -> Option<Vec<Capability>> {
    if version < (ProtocolVersion { major: 1, minor: 1 }) {
        return None;
    }
    let mut features: Vec<Capability> = implements
        .iter()
        .filter(|c| c.feature_since().is_some_and(|since| since <= version))
        .filter(|c| requested.is_none_or(|asked| asked.contains(c)))
        .cloned()
        .collect();
    features.sort();
    features.dedup();
    if !features.contains(&Capability::UiStatePatch) {
        features.retain(|c| c != &Capability::AssistantStream);
    }
    Some(features)
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Capability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Capability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Err(serde::de::Error::custom("capability name is empty"));
        }
        Ok(Capability::from_wire(&s))
    }
}

impl JsonSchema for Capability {
    fn schema_name() -> Cow<'static, str> {
        "Capability".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability, and since 1.1 ui_state_patch, resume_catch_up, assistant_stream and retry, since 1.2 cancel, multi_attach and state_window, and since 1.3 reasoning, usage and subagents; receivers must tolerate others.",
            "type": "string",
            "minLength": 1,
            "examples": Capability::KNOWN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ProtocolVersion {
        ProtocolVersion::parse(s).unwrap()
    }

    #[test]
    fn features_in_force_follow_the_version_and_the_request() {
        let all = [Capability::Rewind, Capability::UiStatePatch, Capability::ResumeCatchUp];
        assert_eq!(features_in_force(v("1.0"), None, &all), None, "a 1.0 welcome has no features");
        assert_eq!(
            features_in_force(v("1.1"), None, &all),
            Some(vec![Capability::UiStatePatch, Capability::ResumeCatchUp]),
            "without a request every implemented feature of 1.1, and no plain capability"
        );
        let asked = [Capability::UiStatePatch, Capability::Other("teleport".into()), Capability::Rewind];
        assert_eq!(features_in_force(v("1.1"), Some(&asked), &all), Some(vec![Capability::UiStatePatch]));
        assert_eq!(features_in_force(v("1.1"), Some(&[]), &all), Some(vec![]));
        assert_eq!(features_in_force(v("1.1"), None, &[Capability::Rewind]), Some(vec![]));
    }

    #[test]
    fn assistant_stream_is_in_force_only_with_ui_state_patch() {
        // STREAM-001
        let all = [Capability::UiStatePatch, Capability::AssistantStream, Capability::Retry];
        assert_eq!(
            features_in_force(v("1.1"), None, &all),
            Some(vec![Capability::UiStatePatch, Capability::AssistantStream]),
            "retry is a plain capability, never a feature"
        );
        let stream_only = [Capability::AssistantStream];
        assert_eq!(features_in_force(v("1.1"), Some(&stream_only), &all), Some(vec![]), "asked without patches");
        assert_eq!(
            features_in_force(v("1.1"), None, &[Capability::AssistantStream, Capability::ResumeCatchUp]),
            Some(vec![Capability::ResumeCatchUp]),
            "a server without ui_state_patch never streams"
        );
        assert_eq!(features_in_force(v("1.0"), None, &all), None);
        for name in ["assistant_stream", "retry"] {
            let c = Capability::from_wire(name);
            assert_eq!(c.as_str(), name);
            assert!(Capability::KNOWN.contains(&name));
            assert_eq!(Capability::FEATURES.contains(&name), c.feature_since().is_some(), "{name}");
        }
    }
}
