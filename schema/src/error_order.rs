//! The order in which a server checks a client frame: when a frame fails several checks, the first
//! failing one decides the error code. Spec: `spec/errors.md#codes` (`TURN-006`, `RESUME-016`,
//! `TOOL-027`).
//!
//! One table for the reference backend, the runner and, through `fixtures/protocol-facts.json`,
//! the Python package; a test keeps it equal to the order spec/errors.md states.

use crate::ErrorCode;

/// The checks every client frame goes through, first to last, before its own.
pub const FRAME_CHECKS: &[ErrorCode] = &[
    ErrorCode::BinaryFrame,
    ErrorCode::FrameTooLarge,
    ErrorCode::MalformedFrame,
    ErrorCode::UnknownType,
    ErrorCode::InvalidFrame,
    ErrorCode::HelloRequired,
    ErrorCode::AlreadyOpen,
];

/// The client frame types whose own checks have a stated order, with that order.
pub const OWN_CHECKS: &[(&str, &[ErrorCode])] = &[
    (
        "session.hello",
        &[
            ErrorCode::UnsupportedVersion,
            ErrorCode::ScriptNotAllowed,
            ErrorCode::InvalidScript,
            ErrorCode::ResumeRejected,
            ErrorCode::ResumeCursorAhead,
        ],
    ),
    ("chat.user_message", &[ErrorCode::DuplicateMessage, ErrorCode::RunInProgress]),
    (
        "chat.tool_call_response",
        &[
            ErrorCode::UnknownToolCall,
            ErrorCode::ToolCallSettled,
            ErrorCode::ToolCallNotAwaiting,
            ErrorCode::ResponseInvalid,
        ],
    ),
    (
        "chat.retry",
        &[
            ErrorCode::CapabilityNotOffered,
            ErrorCode::RunInProgress,
            ErrorCode::UnknownItem,
            ErrorCode::ItemNotInLatestTurn,
            ErrorCode::RetryKeepsOpenCall,
        ],
    ),
    ("chat.cancel", &[ErrorCode::CapabilityNotOffered, ErrorCode::UnknownInvocation, ErrorCode::RunNotActive]),
    ("chat.history_request", &[ErrorCode::CapabilityNotOffered, ErrorCode::StaleCursor]),
];

/// The own checks of a client frame type, first to last (empty when its checks cannot both fail).
pub fn own_checks(frame_type: &str) -> &'static [ErrorCode] {
    OWN_CHECKS.iter().find(|(t, _)| *t == frame_type).map_or(&[], |(_, c)| c)
}

/// Of the codes a frame of `frame_type` would earn, the one a server must answer with: the first
/// in [`FRAME_CHECKS`], then in the type's [`own_checks`]; `None` when none of them is ordered.
pub fn first_failing(frame_type: &str, failing: &[ErrorCode]) -> Option<ErrorCode> {
    FRAME_CHECKS.iter().chain(own_checks(frame_type)).copied().find(|c| failing.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backticked error codes of `text`, in order.
    fn codes_in(text: &str) -> Vec<ErrorCode> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|word| ErrorCode::ALL.iter().copied().find(|c| c.as_str() == word))
            .collect()
    }

    #[test]
    fn the_order_is_the_one_spec_errors_md_states() {
        let spec = crate::requirements::SPEC_FILES
            .iter()
            .find(|(name, _)| *name == "errors.md")
            .map(|(_, text)| *text)
            .expect("errors.md is embedded");
        let start = spec.find("Checks happen in this order").expect("the order paragraph");
        let paragraph = &spec[start..start + spec[start..].find("\n\n").expect("paragraph end")];
        assert_eq!(codes_in(paragraph), FRAME_CHECKS, "{paragraph}");
        for (frame_type, order) in OWN_CHECKS {
            let row = spec
                .lines()
                .find(|l| l.starts_with(&format!("| `{frame_type}` |")))
                .unwrap_or_else(|| panic!("errors.md has a row for {frame_type}"));
            let cells: Vec<&str> = row.split('|').collect();
            assert_eq!(codes_in(cells[2]), *order, "{row}");
        }
        let rows = spec.lines().filter(|l| l.starts_with("| `") && l.contains("then")).count();
        assert_eq!(rows, OWN_CHECKS.len(), "every ordered row of errors.md is in OWN_CHECKS");
    }

    #[test]
    fn the_first_failing_check_wins() {
        use ErrorCode::*;
        assert_eq!(first_failing("chat.user_message", &[RunInProgress, DuplicateMessage]), Some(DuplicateMessage));
        assert_eq!(first_failing("session.hello", &[ResumeCursorAhead, ResumeRejected]), Some(ResumeRejected));
        assert_eq!(first_failing("chat.user_message", &[RunInProgress, InvalidFrame]), Some(InvalidFrame));
        assert_eq!(first_failing("chat.rewind", &[UnknownInvocation]), None);
        // RETRY-004: a server without `retry` says so first; a run in progress before the item checks.
        assert_eq!(first_failing("chat.retry", &[RunInProgress, CapabilityNotOffered]), Some(CapabilityNotOffered));
        assert_eq!(first_failing("chat.retry", &[UnknownItem, RunInProgress]), Some(RunInProgress));
        assert_eq!(first_failing("chat.retry", &[RetryKeepsOpenCall, ItemNotInLatestTurn]), Some(ItemNotInLatestTurn));
        assert_eq!(first_failing("chat.retry", &[RetryKeepsOpenCall]), Some(RetryKeepsOpenCall));
        // TOOL-027: a value that breaks the schema of a settled call is told the call settled.
        assert_eq!(
            first_failing("chat.tool_call_response", &[ResponseInvalid, ToolCallSettled]),
            Some(ToolCallSettled)
        );
    }
}
