//! Fault injection: deliberately planted bugs, a testing aid for the conformance suite.
//!
//! A conformance suite proves its power by failing on a backend that is wrong in one known way.
//! `chatwire-reference serve --fault NAME` runs the reference backend with exactly one such bug.
//! Each fault lives at the one place where such a bug would realistically be written; with no
//! fault configured every hook here is the identity, so normal mode is never affected.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::{DisplayItem, Id, ServerFrame, UiState};

/// One planted bug. See [`Fault::description`] for what each one breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// A `completed` settlement is announced but never written to the log.
    CompletionNotPersisted,
    /// Pending tool calls are left out of the resume snapshot.
    PendingLostOnResume,
    /// A rewind is announced but never written to the log.
    RewindNotPersisted,
    /// The server cuts one invocation later (or earlier) than the rewind it announces.
    RewindWrongCut,
    /// Tool calls of a turn are displayed in the order they settled instead of call order.
    DisplayOrderByCompletion,
    /// `run_complete` says `completed` while a tool call still awaits input.
    TerminalWhileAwaiting,
    /// A second response to a settled call is executed again and completes it a second time.
    DuplicateResponseExecuted,
    /// A dismissal is announced but never written to the log.
    DismissalNotPersisted,
    /// `seq` starts again at 1 whenever a session is loaded from the database.
    SeqRestartsAfterRestart,
    /// Resume accepts any token.
    ResumeSkipsTokenCheck,
    /// `ui_state_updated` drops tool progress, so it differs from the fold of the events sent.
    StateDiverges,
    /// Bad input closes the connection instead of getting an `error` frame.
    DropConnectionOnError,
    /// A completion is sent before it is committed, and the process dies in between.
    AnnounceBeforeCommit,
    /// Frames of an unknown type are silently ignored.
    UnknownTypeIgnored,
    /// `chat.tool_call` carries a `corr` that differs from its `tool_call_id`.
    CorrMismatch,
    /// A resumed session gets its welcome but no `ui_state_snapshot`.
    SnapshotMissingOnResume,
    /// Expiry deadlines are never acted on.
    ExpiryIgnored,
    /// A handshake that offers no subprotocol is refused with HTTP 400.
    SubprotocolRequired,
    /// `conformance_script` is listed in the capabilities outside conformance mode too.
    ScriptCapabilityUnconditional,
    /// `conformance_script` is left out of the capabilities in conformance mode.
    ScriptCapabilityMissing,
    /// A script in `session.hello` is played outside conformance mode too.
    ScriptAcceptedOutsideConformance,
    /// An orderly shutdown drops the connections without a close frame (a SHOULD: TRANSPORT-009).
    ShutdownWithoutClose,
}

/// `--fault` named no known fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault {0:?} (see --list-faults)")]
pub struct UnknownFault(pub String);

impl Fault {
    /// Every fault, in the order `--list-faults` prints them.
    pub const ALL: &'static [Fault] = &[
        Fault::CompletionNotPersisted,
        Fault::PendingLostOnResume,
        Fault::RewindNotPersisted,
        Fault::RewindWrongCut,
        Fault::DisplayOrderByCompletion,
        Fault::TerminalWhileAwaiting,
        Fault::DuplicateResponseExecuted,
        Fault::DismissalNotPersisted,
        Fault::SeqRestartsAfterRestart,
        Fault::ResumeSkipsTokenCheck,
        Fault::StateDiverges,
        Fault::DropConnectionOnError,
        Fault::AnnounceBeforeCommit,
        Fault::UnknownTypeIgnored,
        Fault::CorrMismatch,
        Fault::SnapshotMissingOnResume,
        Fault::ExpiryIgnored,
        Fault::SubprotocolRequired,
        Fault::ScriptCapabilityUnconditional,
        Fault::ScriptCapabilityMissing,
        Fault::ScriptAcceptedOutsideConformance,
        Fault::ShutdownWithoutClose,
    ];

    /// The name used with `--fault`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::CompletionNotPersisted => "completion-not-persisted",
            Fault::PendingLostOnResume => "pending-lost-on-resume",
            Fault::RewindNotPersisted => "rewind-not-persisted",
            Fault::RewindWrongCut => "rewind-wrong-cut",
            Fault::DisplayOrderByCompletion => "display-order-by-completion",
            Fault::TerminalWhileAwaiting => "terminal-while-awaiting",
            Fault::DuplicateResponseExecuted => "duplicate-response-executed",
            Fault::DismissalNotPersisted => "dismissal-not-persisted",
            Fault::SeqRestartsAfterRestart => "seq-restarts-after-restart",
            Fault::ResumeSkipsTokenCheck => "resume-skips-token-check",
            Fault::StateDiverges => "state-diverges",
            Fault::DropConnectionOnError => "drop-connection-on-error",
            Fault::AnnounceBeforeCommit => "announce-before-commit",
            Fault::UnknownTypeIgnored => "unknown-type-ignored",
            Fault::CorrMismatch => "corr-mismatch",
            Fault::SnapshotMissingOnResume => "snapshot-missing-on-resume",
            Fault::ExpiryIgnored => "expiry-ignored",
            Fault::SubprotocolRequired => "subprotocol-required",
            Fault::ScriptCapabilityUnconditional => "script-capability-unconditional",
            Fault::ScriptCapabilityMissing => "script-capability-missing",
            Fault::ScriptAcceptedOutsideConformance => "script-accepted-outside-conformance",
            Fault::ShutdownWithoutClose => "shutdown-without-close",
        }
    }

    /// One line on what the bug breaks, for `--list-faults`.
    pub fn description(self) -> &'static str {
        match self {
            Fault::CompletionNotPersisted => "a completed tool call comes back pending once the session is reloaded",
            Fault::PendingLostOnResume => "pending tool calls are missing from the resume snapshot",
            Fault::RewindNotPersisted => "rewound turns come back once the session is reloaded",
            Fault::RewindWrongCut => "the state is cut one invocation away from the announced rewind",
            Fault::DisplayOrderByCompletion => "tool calls are shown in settle order instead of call order",
            Fault::TerminalWhileAwaiting => "run_complete says completed while a tool call awaits input",
            Fault::DuplicateResponseExecuted => "a second response re-executes and sends a second completion",
            Fault::DismissalNotPersisted => "a dismissed tool call comes back open once the session is reloaded",
            Fault::SeqRestartsAfterRestart => "seq starts again at 1 when a session is reloaded or the server restarts",
            Fault::ResumeSkipsTokenCheck => "resume accepts a wrong resume token",
            Fault::StateDiverges => "ui_state_updated drops tool progress and differs from the events sent",
            Fault::DropConnectionOnError => "bad input closes the connection instead of sending an error frame",
            Fault::AnnounceBeforeCommit => "a completion is sent before it is committed; the server dies in between",
            Fault::UnknownTypeIgnored => "frames of an unknown type get no error",
            Fault::CorrMismatch => "chat.tool_call carries a corr different from its tool_call_id",
            Fault::SnapshotMissingOnResume => "a resumed session gets no ui_state_snapshot",
            Fault::ExpiryIgnored => "pending tool calls never expire",
            Fault::SubprotocolRequired => "a handshake that offers no subprotocol is refused",
            Fault::ScriptCapabilityUnconditional => "conformance_script is listed outside conformance mode too",
            Fault::ScriptCapabilityMissing => "conformance_script is not listed in conformance mode",
            Fault::ScriptAcceptedOutsideConformance => "scripts are played outside conformance mode too",
            Fault::ShutdownWithoutClose => "an orderly shutdown drops connections without closing them with 1001",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Fault {
    type Err = UnknownFault;
    fn from_str(s: &str) -> Result<Self, UnknownFault> {
        Fault::ALL.iter().copied().find(|f| f.name() == s).ok_or_else(|| UnknownFault(s.to_owned()))
    }
}

/// The configured fault, if any, with the hooks the server calls at the places the bugs live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults(Option<Fault>);

impl Faults {
    /// Wraps the configured fault.
    pub fn new(fault: Option<Fault>) -> Self {
        Faults(fault)
    }

    /// Whether this fault is the configured one.
    pub fn is(self, fault: Fault) -> bool {
        self.0 == Some(fault)
    }

    /// Whether an event the server applied is written to the log.
    pub fn persists(self, frame: &ServerFrame) -> bool {
        use chatwire_schema::chat::tool_call_complete::CompletionStatus;
        match frame {
            ServerFrame::ToolCallComplete(c) if c.status == CompletionStatus::Completed => {
                !self.is(Fault::CompletionNotPersisted)
            }
            ServerFrame::ToolCallDismiss(_) => !self.is(Fault::DismissalNotPersisted),
            ServerFrame::RewindComplete(_) => !self.is(Fault::RewindNotPersisted),
            _ => true,
        }
    }

    /// The frame put on the wire for an event the server applied.
    pub fn announce(self, frame: ServerFrame) -> ServerFrame {
        match frame {
            ServerFrame::RunComplete(mut rc)
                if self.is(Fault::TerminalWhileAwaiting) && rc.status == RunCompleteStatus::AwaitingInput =>
            {
                rc.status = RunCompleteStatus::Completed;
                rc.reason = None;
                ServerFrame::RunComplete(rc)
            }
            ServerFrame::ToolCall(mut tc) if self.is(Fault::CorrMismatch) => {
                tc.corr = Some(Id::new_unchecked_valid(format!("corr-{}", tc.call_index)));
                ServerFrame::ToolCall(tc)
            }
            other => other,
        }
    }

    /// The state put on the wire in `ui_state_updated` (`snapshot` false) or `ui_state_snapshot`.
    pub fn present<'s>(self, state: &'s UiState, snapshot: bool) -> Cow<'s, UiState> {
        match self.0 {
            Some(Fault::StateDiverges) if !snapshot => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::ToolCall(c) = item {
                        c.progress = None;
                    }
                }
                Cow::Owned(s)
            }
            Some(Fault::DisplayOrderByCompletion) => Cow::Owned(order_by_completion(state)),
            _ => Cow::Borrowed(state),
        }
    }
}

/// Reorders the tool calls of each invocation (with their output items) so that settled calls
/// come first, in the order they settled, then the open ones.
fn order_by_completion(state: &UiState) -> UiState {
    let mut out = state.clone();
    let mut start = 0;
    while start < out.items.len() {
        let inv = out.items[start].invocation_id().clone();
        let end =
            out.items[start..].iter().position(|i| i.invocation_id() != &inv).map_or(out.items.len(), |p| start + p);
        // Group each tool call with the output item that follows it.
        let slots: Vec<usize> = (start..end).filter(|&i| matches!(out.items[i], DisplayItem::ToolCall(_))).collect();
        if slots.len() > 1 {
            let first = slots[0];
            let mut groups: Vec<Vec<DisplayItem>> = Vec::new();
            let mut rest: Vec<DisplayItem> = Vec::new();
            for item in out.items.drain(first..end) {
                match item {
                    DisplayItem::ToolCall(_) => groups.push(vec![item]),
                    DisplayItem::ToolOutput(_) if !groups.is_empty() => {
                        if let Some(g) = groups.last_mut() {
                            g.push(item);
                        }
                    }
                    other => rest.push(other),
                }
            }
            groups.sort_by_key(|g| match &g[0] {
                DisplayItem::ToolCall(c) => (c.settled_ts.is_none(), c.settled_ts.clone()),
                _ => (true, None),
            });
            let reordered: Vec<DisplayItem> = groups.into_iter().flatten().chain(rest).collect();
            let len = reordered.len();
            out.items.splice(first..first, reordered);
            start = first + len;
        } else {
            start = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for f in Fault::ALL {
            assert_eq!(f.name().parse::<Fault>(), Ok(*f));
            assert!(seen.insert(f.name()));
            assert!(!f.description().is_empty());
        }
        assert!(Fault::ALL.len() >= 15);
        assert_eq!("no-such-fault".parse::<Fault>(), Err(UnknownFault("no-such-fault".into())));
    }

    #[test]
    fn no_fault_changes_nothing() {
        let faults = Faults::new(None);
        let state = UiState::default();
        assert!(matches!(faults.present(&state, false), Cow::Borrowed(_)));
    }
}
