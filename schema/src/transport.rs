//! Transport facts of the WebSocket binding: close codes and frame-size limits.
//!
//! Spec: `spec/transport.md` (close codes, frame size limit). Servers, the conformance runner and
//! tests take these numbers from here so that there is one place they are written.

use crate::ErrorCode;

/// The smallest `limits.max_frame_bytes` a server may announce (`TRANSPORT-005`).
pub const MIN_MAX_FRAME_BYTES: u64 = 65_536;

/// A server may close with [`CloseCode::MessageTooBig`] a message longer than this many times its
/// `limits.max_frame_bytes` without reading it (`TRANSPORT-007`).
pub const HARD_CAP_FACTOR: u64 = 16;

/// After this many `resume_rejected` errors on one connection a server closes it with
/// [`CloseCode::PolicyViolation`] (`RESUME-013`).
pub const REFUSED_RESUMES_PER_CONNECTION: u32 = 8;

/// Most bytes of frames a server holds for one connection that the connection has not taken yet
/// (`TRANSPORT-016`): beyond it the server closes with [`CloseCode::SendQueueOverflow`].
pub const SEND_QUEUE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The fewest connections a server with `multi_attach` keeps attached to one session at once; its
/// welcome's `limits.max_attached_connections` is at least this (since 1.2, `ATTACH-003`).
pub const MIN_ATTACHED_CONNECTIONS: u32 = 8;

/// A WebSocket close code Chatwire gives a meaning to (`spec/transport.md#close-codes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseCode {
    /// 1000: normal closure, by either side.
    Normal,
    /// 1001: the server is shutting down (`TRANSPORT-009`), or a peer stopped answering pings and
    /// reading (`TRANSPORT-011`, `TRANSPORT-020`).
    GoingAway,
    /// 1002: the peer broke the WebSocket protocol (RFC 6455 section 7.4.1).
    ProtocolError,
    /// 1007: a text message that is not valid UTF-8 (RFC 6455 section 8.1).
    InvalidPayload,
    /// 1008: the connection broke a server policy (no `session.hello` in time, too many refused resumes).
    PolicyViolation,
    /// 1009: a message above the hard cap (`TRANSPORT-007`).
    MessageTooBig,
    /// 4001: after a fatal `session_taken_over` error.
    SessionTakenOver,
    /// 4002: after a fatal `unsupported_version` error.
    UnsupportedVersion,
    /// 4003: after a fatal `session_detached` error (since 1.2, `ATTACH-003`).
    SessionDetached,
    /// 4008: the client did not take its frames fast enough; the session is intact, resume
    /// (`TRANSPORT-016`).
    SendQueueOverflow,
}

impl CloseCode {
    /// Every close code, in numeric order.
    pub const ALL: &'static [CloseCode] = &[
        CloseCode::Normal,
        CloseCode::GoingAway,
        CloseCode::ProtocolError,
        CloseCode::InvalidPayload,
        CloseCode::PolicyViolation,
        CloseCode::MessageTooBig,
        CloseCode::SessionTakenOver,
        CloseCode::UnsupportedVersion,
        CloseCode::SessionDetached,
        CloseCode::SendQueueOverflow,
    ];

    /// The number sent in the close frame.
    pub const fn code(self) -> u16 {
        match self {
            CloseCode::Normal => 1000,
            CloseCode::GoingAway => 1001,
            CloseCode::ProtocolError => 1002,
            CloseCode::InvalidPayload => 1007,
            CloseCode::PolicyViolation => 1008,
            CloseCode::MessageTooBig => 1009,
            CloseCode::SessionTakenOver => 4001,
            CloseCode::UnsupportedVersion => 4002,
            CloseCode::SessionDetached => 4003,
            CloseCode::SendQueueOverflow => 4008,
        }
    }

    /// The close code with this number, if Chatwire gives it a meaning.
    pub fn from_code(code: u16) -> Option<CloseCode> {
        CloseCode::ALL.iter().copied().find(|c| c.code() == code)
    }

    /// A short reason phrase for the close frame (informative: peers must not rely on it).
    pub const fn reason(self) -> &'static str {
        match self {
            CloseCode::Normal => "normal closure",
            CloseCode::GoingAway => "going away",
            CloseCode::ProtocolError => "websocket protocol error",
            CloseCode::InvalidPayload => "text frame is not valid utf-8",
            CloseCode::PolicyViolation => "policy violation",
            CloseCode::MessageTooBig => "message too big",
            CloseCode::SessionTakenOver => "session taken over",
            CloseCode::UnsupportedVersion => "unsupported version",
            CloseCode::SessionDetached => "session detached",
            CloseCode::SendQueueOverflow => "send queue overflow",
        }
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> u16 {
        code.code()
    }
}

impl std::fmt::Display for CloseCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl ErrorCode {
    /// The close code a server closes with right after sending this error (`TRANSPORT-008`), or
    /// `None` for a non-fatal code, after which the connection stays open.
    pub const fn close_code(self) -> Option<CloseCode> {
        match self {
            ErrorCode::SessionTakenOver => Some(CloseCode::SessionTakenOver),
            ErrorCode::UnsupportedVersion => Some(CloseCode::UnsupportedVersion),
            ErrorCode::SessionDetached => Some(CloseCode::SessionDetached),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_are_distinct() {
        for c in CloseCode::ALL {
            assert_eq!(CloseCode::from_code(c.code()), Some(*c));
            assert!(!c.reason().is_empty() && c.reason().len() <= 123, "a close reason fits a control frame");
        }
        assert!(CloseCode::ALL.windows(2).all(|w| w[0].code() < w[1].code()));
        assert_eq!(CloseCode::from_code(1003), None);
    }

    #[test]
    fn exactly_the_three_fatal_codes_close() {
        let fatal: Vec<ErrorCode> = ErrorCode::ALL.iter().copied().filter(|c| c.is_fatal()).collect();
        assert_eq!(fatal, vec![ErrorCode::UnsupportedVersion, ErrorCode::SessionTakenOver, ErrorCode::SessionDetached]);
        assert_eq!(ErrorCode::SessionDetached.close_code().map(u16::from), Some(4003));
        assert_eq!(ErrorCode::SessionTakenOver.close_code().map(u16::from), Some(4001));
        assert_eq!(ErrorCode::UnsupportedVersion.close_code().map(u16::from), Some(4002));
    }
}
