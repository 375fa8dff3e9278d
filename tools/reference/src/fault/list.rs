//! The planted faults: one entry each (name, wire name, what it breaks), and their `--fault`
//! names.

use std::fmt;
use std::str::FromStr;

/// Declares [`Fault`] with its `--fault` names and descriptions from one list.
macro_rules! faults {
    ($($(#[$doc:meta])* $variant:ident = $name:literal: $description:literal,)+) => {
        /// One planted bug. See [`Fault::description`] for what each one breaks.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Fault {
            $($(#[$doc])* $variant,)+
        }

        impl Fault {
            /// Every fault, in the order `--list-faults` prints them.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant,)+];

            /// The name used with `--fault`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Fault::$variant => $name,)+
                }
            }

            /// One line on what the bug breaks, for `--list-faults`.
            pub fn description(self) -> &'static str {
                match self {
                    $(Fault::$variant => $description,)+
                }
            }
        }
    };
}

faults! {
    /// A replica that lost the run lease still commits the run's steps.
    OwnershipNotFenced = "ownership-not-fenced":
        "a replica whose run lease expired and was claimed still commits steps (two replicas drive one run)",
    /// The commit that ends a run is never announced to other replicas.
    NotificationLost = "notification-lost":
        "the commit that ends a run is not announced; a tab on another replica stalls until it resumes",
    /// Each replica numbers a session's frames from what it last saw itself.
    SeqPerReplica = "seq-per-replica":
        "each replica allocates seqs from its own memory, so two replicas send different frames with one seq",
    /// A run whose replica died is recovered only when that replica starts again.
    RecoveryOnlyAtRestart = "recovery-only-at-restart":
        "a run whose replica died stalls until that same replica restarts",
    /// A `completed` settlement is announced but never written to the log.
    CompletionNotPersisted = "completion-not-persisted":
        "a completed tool call comes back pending once the session is reloaded",
    /// Pending tool calls are left out of the resume snapshot.
    PendingLostOnResume = "pending-lost-on-resume": "pending tool calls are missing from the resume snapshot",
    /// A rewind is announced but never written to the log.
    RewindNotPersisted = "rewind-not-persisted": "rewound turns come back once the session is reloaded",
    /// The server cuts one invocation later (or earlier) than the rewind it announces.
    RewindWrongCut = "rewind-wrong-cut": "the state is cut one invocation away from the announced rewind",
    /// Tool calls of a turn are displayed in the order they settled instead of call order.
    DisplayOrderByCompletion = "display-order-by-completion":
        "tool calls are shown in settle order instead of call order",
    /// `run_complete` says `completed` while a tool call still awaits input.
    TerminalWhileAwaiting = "terminal-while-awaiting": "run_complete says completed while a tool call awaits input",
    /// A second response to a settled call is executed again and completes it a second time.
    DuplicateResponseExecuted = "duplicate-response-executed":
        "a second response re-executes and sends a second completion",
    /// A dismissal is announced but never written to the log.
    DismissalNotPersisted = "dismissal-not-persisted":
        "a dismissed tool call comes back open once the session is reloaded",
    /// `seq` starts again at 1 whenever a session is loaded from the database.
    SeqRestartsAfterRestart = "seq-restarts-after-restart":
        "seq starts again at 1 when a session is reloaded or the server restarts",
    /// Resume accepts any token.
    ResumeSkipsTokenCheck = "resume-skips-token-check": "resume accepts a wrong resume token",
    /// `ui_state_updated` drops tool progress, so it differs from the fold of the events sent.
    StateDiverges = "state-diverges": "ui_state_updated drops tool progress and differs from the events sent",
    /// Bad input closes the connection instead of getting an `error` frame.
    DropConnectionOnError = "drop-connection-on-error":
        "bad input closes the connection instead of sending an error frame",
    /// A completion is sent before it is committed, and the process dies in between.
    AnnounceBeforeCommit = "announce-before-commit":
        "a completion is sent before it is committed; the server dies in between",
    /// Frames of an unknown type are silently ignored.
    UnknownTypeIgnored = "unknown-type-ignored": "frames of an unknown type get no error",
    /// `chat.tool_call` carries a `corr` that differs from its `tool_call_id`.
    CorrMismatch = "corr-mismatch": "chat.tool_call carries a corr different from its tool_call_id",
    /// A resumed session gets its welcome but no `ui_state_snapshot`.
    SnapshotMissingOnResume = "snapshot-missing-on-resume": "a resumed session gets no ui_state_snapshot",
    /// Expiry deadlines are never acted on.
    ExpiryIgnored = "expiry-ignored": "pending tool calls never expire",
    /// A handshake that offers no subprotocol is refused with HTTP 400.
    SubprotocolRequired = "subprotocol-required": "a handshake that offers no subprotocol is refused",
    /// `conformance_script` is listed in the capabilities outside conformance mode too.
    ScriptCapabilityUnconditional = "script-capability-unconditional":
        "conformance_script is listed outside conformance mode too",
    /// `conformance_script` is left out of the capabilities in conformance mode.
    ScriptCapabilityMissing = "script-capability-missing": "conformance_script is not listed in conformance mode",
    /// A script in `session.hello` is played outside conformance mode too.
    ScriptAcceptedOutsideConformance = "script-accepted-outside-conformance":
        "scripts are played outside conformance mode too",
    /// An orderly shutdown drops the connections without a close frame (a SHOULD: TRANSPORT-009).
    ShutdownWithoutClose = "shutdown-without-close":
        "an orderly shutdown drops connections without closing them with 1001",
    /// An integer field written with a fraction or an exponent (`4.0`, `1e3`) is refused.
    IntegerSpellingsRefused = "integer-spellings-refused":
        "an integer written 4.0 or 1e3 (a resume's last_seq, a script's delays) is refused as invalid",
    /// Numbers beyond ±(2^53 − 1) inside opaque values are accepted (and rounded to a double).
    OpaqueNumbersUnbounded = "opaque-numbers-unbounded":
        "numbers beyond 2^53 - 1 inside payloads and submitted values are accepted and rounded",
    /// After a restart, a pending call's deadline is counted again from the server's start.
    ExpiryResetOnRestart = "expiry-reset-on-restart":
        "a pending call's expiry is counted again from the server's start after a restart",
    /// After a restart, a tool that was running is run again instead of being failed as interrupted.
    RunningCallContinuedAfterRestart = "running-call-continued-after-restart":
        "a call that was running when the server died is run again instead of failed as interrupted",
    /// A resume's `last_seq` is checked before its token.
    CursorCheckedBeforeToken = "cursor-checked-before-token":
        "a resume with a wrong token and a cursor ahead gets resume_cursor_ahead, revealing the session",
    /// Tool call ids go on the wire longer than 121 characters.
    ToolCallIdTooLong = "tool-call-id-too-long":
        "tool call ids are sent 122 characters long, so their output item id is not a valid id",
    /// A submit whose `value` is `null` is refused as if the value were missing.
    NullSubmitRefused = "null-submit-refused": "a submit whose value is null is refused as if the value were missing",
    /// A script whose `ui_tool` has no `component_type` is accepted.
    ComponentlessUiToolAccepted = "componentless-ui-tool-accepted":
        "a script with a ui_tool without component_type is accepted (and breaks its run later)",
    /// A `ui_state_patch` of two or more ops goes out without its last op.
    PatchMissingOp = "patch-missing-op":
        "a ui_state_patch leaves out its last op, so the state it gives differs from the events",
    /// A `ui_state_patch` names the seq before its base as `base_seq`.
    PatchWrongBaseSeq = "patch-wrong-base-seq": "a ui_state_patch names the seq before its base as base_seq",
    /// Patches are sent on every 1.1 connection, whatever its hello's `features` asked for.
    PatchWithoutFeature = "patch-without-feature":
        "ui_state_patch is sent on 1.1 connections whose hello left ui_state_patch out of features",
    /// The welcome of a 1.0 connection carries the 1.1 member `features` (empty).
    V11MemberOnV10Connection = "v11-member-on-v10-connection":
        "the welcome of a 1.0 connection carries the 1.1 member features",
    /// A catch-up patch is built from the session's first (empty) state instead of `last_seq`'s.
    CatchUpWrongBase = "catch-up-wrong-base":
        "a catch-up patch is built from the session's first state, not last_seq's, so it replays every earlier event",
    /// A catch-up patch of two or more ops goes out without its last op: its base_seq is right and
    /// it applies, but it does not give the session's state.
    CatchUpMissingOp = "catch-up-missing-op":
        "a catch-up patch leaves out its last op, so the state it gives is not the session's",
    /// A connection's send queue has no bound: a client that stops reading is never closed with 4008.
    UnboundedSendQueue = "unbounded-send-queue":
        "a client that stops reading gets its frames queued without bound instead of a 4008 close",
    /// A backend that meets protocol 1.0 as released and none of its errata: both
    /// `opaque-numbers-unbounded` (INT-002) and `unbounded-send-queue` (TRANSPORT-016), rules
    /// added after 1.0's release (`spec/versioning.md#frozen-requirement-sets`).
    ErrataOf10Unmet = "errata-of-1-0-unmet":
        "meets 1.0 as released but not its errata: opaque numbers unbounded (INT-002) and an unbounded send queue (TRANSPORT-016)",
    /// The first delta sent after a resume mid-stream repeats the chunk before it.
    StreamChunkRepeatedAfterResume = "stream-chunk-repeated-after-resume":
        "the first delta after a resume mid-stream carries the previous chunk again in front of its own",
    /// The first delta due after a resume mid-stream is committed but never sent.
    StreamChunkLostOnResume = "stream-chunk-lost-on-resume":
        "the first delta due after a resume mid-stream is committed but not sent, so the client misses a chunk",
    /// The end of a stream goes out with a text other than the one its deltas built.
    StreamFinalTextDiffers = "stream-final-text-differs":
        "the assistant message ending a stream carries the streamed text plus a space",
    /// A stream open when the server stopped is left open by recovery, and its run with it.
    StreamLeftOpenAfterRestart = "stream-left-open-after-restart":
        "after a restart, a stream that was open stays open and its run running, never ended",
    /// A retry plays the turn's own steps again, running its kept tool calls a second time.
    RetryReexecutesKeptTool = "retry-reexecutes-kept-tool":
        "an accepted retry plays the turn's steps again (its tool calls run again) instead of retries[k]",
    /// The state is cut one item later than the retry announces.
    RetryCutsWrongItem = "retry-cuts-wrong-item":
        "a retry keeps one more item than its chat.retry_accepted announces",
    /// A cancel is answered but the run goes on.
    CancelIgnored = "cancel-ignored": "a chat.cancel is answered chat.cancel_accepted but the run goes on as scripted",
    /// The stream a cancel ends loses its last chunk.
    CancelStreamLosesChunks = "cancel-stream-loses-chunks":
        "the stream a cancel ends carries the text streamed so far without its last chunk",
    /// A tool running when its run was cancelled still reports `completed` when it finishes.
    CancelToolSettlesCompleted = "cancel-tool-settles-completed":
        "a tool running when its run was cancelled sends chat.tool_call_complete completed when it finishes",
    /// The events that close a cancelled run are sent but not written to the log.
    CancelUndoneByRestart = "cancel-undone-by-restart":
        "a cancel's closing events are sent but not logged, so a restart brings the run back and fails it interrupted",
    /// A cancel stops the session's current run whichever invocation it names.
    CancelStopsNewerInvocation = "cancel-stops-newer-invocation":
        "a late cancel naming a finished turn stops the newer run in progress instead of being refused",
    /// A response is accepted without being checked against the call's response_schema.
    ResponseAcceptedAgainstSchema = "response-accepted-against-schema":
        "a submitted value that breaks the call's response_schema is accepted and completes the call",
    /// A resume with `multi_attach` in force still takes the session over from the other tabs.
    AttachTakesOver = "attach-takes-over": "a resume with multi_attach in force takes the session over instead of attaching",
    /// The events of a change a request caused go only to the tab that sent the request.
    EventOnlyToRequester = "event-only-to-requester":
        "the events a request causes (a dismissal, a cancel's run_complete) reach only the tab that sent it",
    /// Answers (`in_reply_to`) go to every attached tab, not only the one that asked.
    AnswerToEveryTab = "answer-to-every-tab": "answers such as chat.user_message_accepted go to every attached tab",
    /// The fan-out waits for the slowest tab, so one tab that stops reading stalls the others.
    StalledTabSlowsOthers = "stalled-tab-slows-others":
        "one attached tab that stops reading stalls the session's other tabs",
    /// A history page leaves out the item just before the cursor.
    PageSkipsBoundaryItem = "page-skips-boundary-item": "a history page leaves out the item just before the cursor",
    /// A history page ends with the cursor item, which the client already holds.
    PageRepeatsBoundaryItem = "page-repeats-boundary-item":
        "a history page repeats the cursor item, which the window already holds",
    /// A window holds only its newest items: a form asked long ago is not in it.
    WindowDropsOldPendingCall = "window-drops-old-pending-call":
        "a window leaves out the awaiting tool calls older than it",
    /// A windowed connection gets the patch of the whole state, ops on items it does not hold included.
    UnheldChangeSent = "unheld-change-sent":
        "a windowed connection gets patches of the whole state, addressing items it does not hold",
    /// Pages come from a copy taken when the window opened: a cursor a cut removed still pages, with removed items.
    PageFromCache = "page-from-cache":
        "pages are served from a copy of the history taken at open, so a cursor a cut removed returns removed items",
    /// A resume snapshot re-encodes the reasoning items' encrypted payloads.
    ReasoningPayloadAltered = "reasoning-payload-altered":
        "the resume snapshot carries each reasoning item's encrypted payload altered (not byte-identical)",
    /// Reasoning frames reach every 1.3 connection, reasoning in force or not.
    ReasoningLeaked = "reasoning-leaked":
        "chat.reasoning and chat.reasoning_delta reach 1.3 connections whose hello left reasoning out",
    /// A run slice's usage is its last usage step's, not their sum.
    UsageNotSummed = "usage-not-summed":
        "a run slice's chat.run_complete carries the usage of its last usage step instead of the sum of all of them",
    /// A resume snapshot shows a redacted reasoning's payload as its text.
    RedactedReasoningReloaded = "redacted-reasoning-reloaded":
        "the resume snapshot holds each redacted reasoning item's encrypted payload as its text",
    /// A continued sub-agent thread whose latest run returned starts as a new prompt.
    ContinuedThreadNewPrompt = "continued-thread-new-prompt":
        "a call continuing a sub-agent thread whose latest run ended with its return call sends chat.subagent_started without answers_return: the input goes to the sub-agent as a new prompt, not as the return call's result",
    /// A retry that keeps a host starts its sub-agent again.
    RetryRerunsSubagent = "retry-reruns-subagent":
        "a retry whose cut keeps a call hosting a sub-agent starts that sub-agent again (chat.subagent_started on the kept host) instead of keeping its transcript",
    /// A cancel closes a sub-agent's transcript, but the sub-agent streams on.
    CancelLeavesSubagentRunning = "cancel-leaves-subagent-running":
        "after a cancel closed a sub-agent's open stream, the sub-agent sends one more chunk of it: its run was never stopped",
}

/// `--fault` named no known fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault {0:?} (see --list-faults)")]
pub struct UnknownFault(pub String);

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
}

/// The correct server: every seam is the identity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NoFault;
