//! Fault injection: deliberately planted bugs, a testing aid for the conformance suite.
//!
//! A conformance suite proves its power by failing on a backend that is wrong in one known way.
//! `chatwire-reference serve --fault NAME` runs the reference backend with exactly one such bug.
//!
//! Every fault is one entry of the list in [`faults!`](self) below (name, wire name, what it
//! breaks) and one arm in the `Hooks` implementation of [`Fault`]: the server core calls the
//! hooks at its seams (transport, refusals, handshake, emit, load, deadlines) and never names a
//! fault. With no fault configured the core runs `NoFault`, whose hooks are the identity.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_response::ResponseOutcome;
use chatwire_schema::script::{ScriptError, ScriptTurn};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{ClientFrame, DisplayItem, ErrorCode, Id, ProtocolVersion, ServerFrame, ToolCallStatus, UiState};

use crate::agent::Agent;
use crate::hooks::{Hooks, RefusalAction};
use crate::session::Refusal;
use crate::transport::{ConnHandle, Outgoing};
use crate::util::rfc3339_now;

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

/// The correct server: every hook is the identity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NoFault;

impl Hooks for NoFault {}

/// The hooks of the configured fault, or of the correct server.
pub(crate) fn hooks(fault: Option<Fault>) -> Box<dyn Hooks> {
    match fault {
        Some(f) => Box::new(f),
        None => Box::new(NoFault),
    }
}

impl Hooks for Fault {
    fn fences_commits(&self) -> bool {
        *self != Fault::OwnershipNotFenced
    }

    fn syncs_before_commit(&self) -> bool {
        *self != Fault::SeqPerReplica
    }

    fn notifies(&self, active: bool) -> bool {
        // The commit that ends the work is the one never announced: a tab elsewhere waits for
        // the run's end until it resumes.
        active || *self != Fault::NotificationLost
    }

    fn reaps_expired_leases(&self) -> bool {
        *self != Fault::RecoveryOnlyAtRestart
    }

    fn requires_subprotocol(&self) -> bool {
        *self == Fault::SubprotocolRequired
    }

    fn closes_on_shutdown(&self) -> bool {
        *self != Fault::ShutdownWithoutClose
    }

    fn on_refusal(&self, refusal: &Refusal, request: Option<&ClientFrame>) -> RefusalAction {
        match (self, refusal.code, request) {
            (Fault::DropConnectionOnError, _, _) => RefusalAction::Drop,
            (Fault::UnknownTypeIgnored, ErrorCode::UnknownType, _) => RefusalAction::Ignore,
            (Fault::DuplicateResponseExecuted, ErrorCode::ToolCallSettled, Some(ClientFrame::ToolCallResponse(r))) => {
                let result = match &r.outcome {
                    ResponseOutcome::Submit { value } => Some(value.clone()),
                    ResponseOutcome::Dismiss { .. } => None,
                };
                RefusalAction::Instead(Box::new(ServerFrame::ToolCallComplete(ToolCallComplete {
                    seq: 0,
                    tool_call_id: r.tool_call_id.clone(),
                    status: CompletionStatus::Completed,
                    result,
                    error: None,
                    summary: None,
                    in_reply_to: Some(r.id.clone()),
                    ts: rfc3339_now(),
                })))
            }
            _ => RefusalAction::Answer,
        }
    }

    fn refuses_valid_frame(&self, frame: &serde_json::Value) -> Option<Refusal> {
        let refused = match self {
            Fault::IntegerSpellingsRefused => has_integer_spelled_as_float(frame),
            Fault::NullSubmitRefused => {
                frame.get("type").and_then(serde_json::Value::as_str) == Some("chat.tool_call_response")
                    && frame.pointer("/outcome/action").and_then(serde_json::Value::as_str) == Some("submit")
                    && frame.pointer("/outcome/value").is_some_and(serde_json::Value::is_null)
            }
            _ => false,
        };
        refused.then(|| Refusal::new(ErrorCode::InvalidFrame, "frame breaks its schema: a value is missing or invalid"))
    }

    fn bounds_opaque_numbers(&self) -> bool {
        !matches!(self, Fault::OpaqueNumbersUnbounded | Fault::ErrataOf10Unmet)
    }

    fn refuses_script(&self, error: &ScriptError) -> bool {
        !(*self == Fault::ComponentlessUiToolAccepted && matches!(error, ScriptError::MissingComponentType { .. }))
    }

    fn checks_cursor_before_token(&self) -> bool {
        *self == Fault::CursorCheckedBeforeToken
    }

    fn continues_interrupted_turns(&self) -> bool {
        *self == Fault::RunningCallContinuedAfterRestart
    }

    fn reloaded_deadline(&self, stored: i64, expire_after_ms: Option<u64>) -> i64 {
        match expire_after_ms {
            Some(ms) if *self == Fault::ExpiryResetOnRestart => {
                crate::util::now_ms().saturating_add(i64::try_from(ms).unwrap_or(i64::MAX))
            }
            _ => stored,
        }
    }

    fn accepts_scripts_anywhere(&self) -> bool {
        *self == Fault::ScriptAcceptedOutsideConformance
    }

    fn capabilities(&self, mut caps: Vec<Capability>) -> Vec<Capability> {
        match self {
            Fault::ScriptCapabilityMissing => caps.retain(|c| *c != Capability::ConformanceScript),
            Fault::ScriptCapabilityUnconditional if !caps.contains(&Capability::ConformanceScript) => {
                caps.insert(caps.len().min(3), Capability::ConformanceScript)
            }
            _ => {}
        }
        caps
    }

    fn token_matches(&self, matches: bool) -> bool {
        matches || *self == Fault::ResumeSkipsTokenCheck
    }

    fn resume_snapshot<'s>(&self, state: &'s UiState) -> Option<Cow<'s, UiState>> {
        match self {
            Fault::SnapshotMissingOnResume => None,
            Fault::PendingLostOnResume => {
                let mut s = state.clone();
                s.items.retain(|i| !matches!(i, DisplayItem::ToolCall(c) if c.status == ToolCallStatus::Pending));
                Some(Cow::Owned(s))
            }
            _ => Some(self.present(state, true)),
        }
    }

    fn applied_instead(&self, frame: &ServerFrame, state: &UiState) -> Option<ServerFrame> {
        if let (Fault::CancelStreamLosesChunks, ServerFrame::AssistantMessage(m)) = (self, frame) {
            // The state keeps the whole streamed text; only the announced end lost its tail.
            let open = state.open_stream().filter(|o| o.id == m.item_id && o.markdown != m.markdown)?;
            let mut applied = m.clone();
            applied.markdown = open.markdown.clone();
            return Some(ServerFrame::AssistantMessage(applied));
        }
        if let (Fault::RetryCutsWrongItem, ServerFrame::RetryAccepted(ra)) = (self, frame) {
            // Cut after the first item the announced cut removes, when there is one.
            let next = ra.removed_item_ids.first()?;
            let named = state.items.iter().rposition(|i| i.id() == next)?;
            let cut = chatwire_schema::reducer::retry_cut(&state.items, named);
            let mut applied = ra.clone();
            applied.after_item_id = next.clone();
            applied.removed_item_ids = state.items[cut..].iter().map(|i| i.id().clone()).collect();
            return Some(ServerFrame::RetryAccepted(applied));
        }
        let ServerFrame::RewindComplete(rc) = frame else { return None };
        if *self != Fault::RewindWrongCut {
            return None;
        }
        let invocations = state.invocations();
        let cut = invocations.iter().position(|i| *i == &rc.before_invocation_id)?;
        if invocations.len() < 2 {
            return None;
        }
        let wrong = if cut + 1 < invocations.len() { cut + 1 } else { cut - 1 };
        let mut applied = rc.clone();
        applied.before_invocation_id = invocations[wrong].clone();
        applied.removed_invocation_ids = invocations[wrong..].iter().map(|i| (*i).clone()).collect();
        Some(ServerFrame::RewindComplete(applied))
    }

    // A faulty build folds the whole log at every load, as before checkpoints: a fault that
    // keeps an event out of the log must come back on reload, whatever the state in memory.
    fn checkpoints(&self) -> bool {
        false
    }

    fn persists(&self, frame: &ServerFrame) -> bool {
        match frame {
            ServerFrame::ToolCallComplete(c) if c.status == CompletionStatus::Completed => {
                *self != Fault::CompletionNotPersisted
            }
            ServerFrame::ToolCallDismiss(_) => *self != Fault::DismissalNotPersisted,
            ServerFrame::RewindComplete(_) => *self != Fault::RewindNotPersisted,
            ServerFrame::RunComplete(r) if r.status == RunCompleteStatus::Cancelled => {
                *self != Fault::CancelUndoneByRestart
            }
            _ => true,
        }
    }

    fn announce(&self, frame: ServerFrame) -> ServerFrame {
        match frame {
            frame if *self == Fault::ToolCallIdTooLong => lengthen_tool_call_id(frame),
            ServerFrame::RunComplete(mut rc)
                if *self == Fault::TerminalWhileAwaiting && rc.status == RunCompleteStatus::AwaitingInput =>
            {
                rc.status = RunCompleteStatus::Completed;
                rc.reason = None;
                ServerFrame::RunComplete(rc)
            }
            ServerFrame::ToolCall(mut tc) if *self == Fault::CorrMismatch => {
                tc.corr = Some(Id::new_unchecked_valid(format!("corr-{}", tc.call_index)));
                ServerFrame::ToolCall(tc)
            }
            other => other,
        }
    }

    fn present<'s>(&self, state: &'s UiState, snapshot: bool) -> Cow<'s, UiState> {
        match self {
            Fault::StateDiverges if !snapshot => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::ToolCall(c) = item {
                        c.progress = None;
                    }
                }
                Cow::Owned(s)
            }
            Fault::DisplayOrderByCompletion => Cow::Owned(order_by_completion(state)),
            _ => Cow::Borrowed(state),
        }
    }

    fn before_commit(&self, wire: &[String], conn: Option<&ConnHandle>) {
        if *self == Fault::AnnounceBeforeCommit
            && wire.iter().any(|t| t.contains("\"type\":\"chat.tool_call_complete\""))
        {
            announce_then_die(wire, conn);
        }
    }

    fn loaded_next_seq(&self, stored: u64) -> u64 {
        if *self == Fault::SeqRestartsAfterRestart {
            1
        } else {
            stored
        }
    }

    fn arms_deadlines(&self) -> bool {
        *self != Fault::ExpiryIgnored
    }

    fn welcome_features(&self, in_force: Option<Vec<Capability>>) -> Option<Vec<Capability>> {
        match in_force {
            None if *self == Fault::V11MemberOnV10Connection => Some(Vec::new()),
            other => other,
        }
    }

    fn sends_patches(&self, in_force: bool, version: ProtocolVersion) -> bool {
        in_force || (*self == Fault::PatchWithoutFeature && version >= ProtocolVersion { major: 1, minor: 1 })
    }

    fn catch_up_from_memory(&self) -> bool {
        *self != Fault::CatchUpWrongBase
    }

    fn catch_up_split(&self, before: usize) -> usize {
        if *self == Fault::CatchUpWrongBase {
            0
        } else {
            before
        }
    }

    fn catch_up_patch(&self, mut ops: Vec<PatchOp>) -> Vec<PatchOp> {
        if *self == Fault::CatchUpMissingOp && ops.len() >= 2 {
            ops.pop();
        }
        ops
    }

    fn patch(&self, mut ops: Vec<PatchOp>) -> Vec<PatchOp> {
        match self {
            Fault::PatchMissingOp if ops.len() >= 2 => {
                ops.pop();
            }
            // The patch counterpart of the update that drops tool progress.
            Fault::StateDiverges => ops.retain(|op| !op.path().ends_with("/progress")),
            _ => {}
        }
        ops
    }

    fn patch_base_seq(&self, base_seq: u64) -> u64 {
        if *self == Fault::PatchWrongBaseSeq {
            base_seq.saturating_sub(1)
        } else {
            base_seq
        }
    }

    fn first_delta_after_resume(&self, frame: ServerFrame, previous: Option<&str>) -> Option<ServerFrame> {
        match (self, frame) {
            (Fault::StreamChunkLostOnResume, _) => None,
            (Fault::StreamChunkRepeatedAfterResume, ServerFrame::AssistantMessageDelta(mut d)) => {
                d.delta = format!("{}{}", previous.unwrap_or_default(), d.delta);
                Some(ServerFrame::AssistantMessageDelta(d))
            }
            (_, frame) => Some(frame),
        }
    }

    fn announce_stream_end(&self, frame: ServerFrame) -> ServerFrame {
        match frame {
            ServerFrame::AssistantMessage(mut am) if *self == Fault::StreamFinalTextDiffers => {
                am.markdown.push(' ');
                ServerFrame::AssistantMessage(am)
            }
            other => other,
        }
    }

    fn ends_open_streams(&self) -> bool {
        *self != Fault::StreamLeftOpenAfterRestart
    }

    fn agent(&self, agent: Arc<dyn Agent>) -> Arc<dyn Agent> {
        match self {
            Fault::RetryReexecutesKeptTool => Arc::new(ReplaysTurnOnRetry(agent)),
            _ => agent,
        }
    }

    fn send_queue_bound(&self, bound: usize) -> Option<usize> {
        (!matches!(self, Fault::UnboundedSendQueue | Fault::ErrataOf10Unmet)).then_some(bound)
    }

    // A server without a queue bound has no write deadline either: the short one would drop the
    // paused reader before anyone sees the queue grow, and whether it does would depend on how
    // fast the machine is. Only the liveness deadline ends the connection.
    fn write_timeout(&self, write: std::time::Duration, liveness: std::time::Duration) -> std::time::Duration {
        match self {
            Fault::UnboundedSendQueue | Fault::ErrataOf10Unmet => write.max(liveness),
            _ => write,
        }
    }

    fn cancel_target(&self, named: &Id, state: &UiState) -> Id {
        // A known turn other than the current run: the late cancel of an earlier turn.
        match (self, &state.run.invocation_id) {
            (Fault::CancelStopsNewerInvocation, Some(current)) if current != named && state.has_invocation(named) => {
                current.clone()
            }
            _ => named.clone(),
        }
    }

    fn cancel_closes_run(&self) -> bool {
        *self != Fault::CancelIgnored
    }

    fn cancelled_stream_text(&self, streamed: String) -> String {
        match self {
            // Without the last chunk: the text up to the last space, as a chunk boundary would be.
            Fault::CancelStreamLosesChunks => match streamed.trim_end().rfind(' ') {
                Some(cut) if cut > 0 => streamed[..cut].to_owned(),
                _ => streamed,
            },
            _ => streamed,
        }
    }

    fn settles_after_cancel(&self) -> bool {
        *self == Fault::CancelToolSettlesCompleted
    }

    fn checks_response_schema(&self) -> bool {
        *self != Fault::ResponseAcceptedAgainstSchema
    }

    fn attaches(&self, in_force: bool) -> bool {
        in_force && *self != Fault::AttachTakesOver
    }

    fn events_only_to_requester(&self) -> bool {
        *self == Fault::EventOnlyToRequester
    }

    fn answers_to_all(&self) -> bool {
        *self == Fault::AnswerToEveryTab
    }

    fn fan_out_waits_for_slowest(&self) -> bool {
        *self == Fault::StalledTabSlowsOthers
    }

    fn pins_older_items(&self) -> bool {
        *self != Fault::WindowDropsOldPendingCall
    }

    fn projects_patches(&self) -> bool {
        *self != Fault::UnheldChangeSent
    }

    fn page_items(&self, mut items: Vec<DisplayItem>, cursor_item: Option<&DisplayItem>) -> Vec<DisplayItem> {
        match self {
            Fault::PageSkipsBoundaryItem => {
                items.pop();
            }
            Fault::PageRepeatsBoundaryItem => items.extend(cursor_item.cloned()),
            _ => {}
        }
        items
    }

    fn pages_from_cache(&self) -> bool {
        *self == Fault::PageFromCache
    }
}

/// Fault `retry-reexecutes-kept-tool`: an agent that answers a retry by playing its turn again.
#[derive(Debug)]
struct ReplaysTurnOnRetry(Arc<dyn Agent>);

impl Agent for ReplaysTurnOnRetry {
    fn plan_turn(&self, turn_index: u64, user_text: &str) -> Option<ScriptTurn> {
        self.0.plan_turn(turn_index, user_text)
    }

    fn plan_retry(&self, turn_index: u64, _retry_index: u64, user_text: &str) -> Option<ScriptTurn> {
        self.0.plan_turn(turn_index, user_text)
    }
}

/// Fault `integer-spellings-refused`: whether an integer field of a client frame (a resume's
/// `last_seq`, a script's delays, indices and exit codes) is written with a fraction or exponent.
/// Opaque values (`payload`, `value`) hold any number and are not looked at.
fn has_integer_spelled_as_float(frame: &serde_json::Value) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Number(n) => n.is_f64(),
            serde_json::Value::Array(items) => items.iter().any(walk),
            serde_json::Value::Object(members) => {
                members.iter().any(|(key, member)| key != "payload" && key != "value" && walk(member))
            }
            _ => false,
        }
    }
    frame.pointer("/resume/last_seq").is_some_and(serde_json::Value::is_f64) || frame.get("script").is_some_and(walk)
}

/// Fault `tool-call-id-too-long`: every frame names its call by an id padded to 122 characters,
/// one more than `ID-003` allows (the id itself stays a valid identifier).
fn lengthen_tool_call_id(mut frame: ServerFrame) -> ServerFrame {
    let id = match &mut frame {
        ServerFrame::ToolCall(f) => {
            f.corr = None;
            Some(&mut f.tool_call_id)
        }
        ServerFrame::ToolProgress(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolOutput(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolCallComplete(f) => Some(&mut f.tool_call_id),
        ServerFrame::ToolCallDismiss(f) => Some(&mut f.tool_call_id),
        _ => None,
    };
    if let Some(id) = id {
        let pad = 122usize.saturating_sub(id.as_str().len() + 1);
        *id = Id::new_unchecked_valid(format!("{id}-{}", "x".repeat(pad)));
    }
    frame
}

/// Fault `announce-before-commit`: the frames go out, the commit never happens.
fn announce_then_die(wire: &[String], conn: Option<&ConnHandle>) -> ! {
    if let Some(conn) = conn {
        for text in wire {
            conn.send(Outgoing::Text(text.clone()));
        }
        let handle = tokio::runtime::Handle::current();
        if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
            let (ack, done) = tokio::sync::oneshot::channel();
            if conn.send(Outgoing::Flush(ack)) {
                // Give this worker's queue (the writer task may sit in it) to another thread while we
                // wait, bounded, for the writer to flush what was announced.
                tokio::task::block_in_place(|| {
                    let _ = handle.block_on(tokio::time::timeout(Duration::from_secs(2), done));
                });
            }
        }
    }
    eprintln!("chatwire-reference: fault announce-before-commit: dying before the commit");
    std::process::abort();
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
        let state = UiState::default();
        assert!(matches!(NoFault.present(&state, false), Cow::Borrowed(_)));
        assert!(matches!(NoFault.resume_snapshot(&state), Some(Cow::Borrowed(_))));
        assert!(NoFault.closes_on_shutdown() && NoFault.arms_deadlines() && !NoFault.requires_subprotocol());
        assert_eq!(NoFault.loaded_next_seq(7), 7);
    }
}
