//! The kill matrix's table: for each planted fault of the reference, the scenarios that exercise
//! what it breaks, the requirements it violates, how it is caught and under which offer. The test
//! that runs it is `../kill_matrix.rs`.

/// Scenarios every fault runs in addition to its own: one plain turn, one human-in-the-loop turn
/// and one resume, so that a fault that breaks something basic is caught whatever its table says.
pub const ALWAYS: &[&str] = &["turn-say-completed", "hitl-submit", "resume-after-disconnect"];

use super::row::{Caught, Expectation, Offer};

pub const TABLE: &[Expectation] = &[
    // The completion is announced but not logged, so a reload shows the call pending again: the
    // settled state does not survive resume (RESUME-009) and the event was not committed (RESUME-011).
    // Genuine too: the call comes back pending, so its item changes after it settled (TOOL-010), and
    // after a kill -9 the turn is not continued (SCRIPT-014). That a second response to the call is
    // then executed (TOOL-012) follows: the server answers by the state the resume's snapshot, already
    // found apart, gave the connection (one fault, one charge: conformance/src/consequence.rs).
    Expectation {
        fault: "completion-not-persisted",
        scenarios: &["inline-completed-survives-resume", "resume-pending-then-answer", "crash-after-response"],
        violates: &["RESUME-009", "SCRIPT-014", "TOOL-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The resume snapshot leaves pending calls out: a pending call must stay answerable from the
    // resumed connection (RESUME-008). One fault, one charge: the monitor knows the session's state
    // at the welcome and marks the snapshot apart under RESUME-008 (the requirement a left-out
    // pending call breaks), so each check of the resumed state is charged under it, and the
    // completion of the left-out call (STATE-025) and the final state (TOOL-016) follow from it.
    Expectation {
        fault: "pending-lost-on-resume",
        scenarios: &["inline-pending-survives-resume", "rapid-reconnects", "artifact-surface-survives-resume"],
        violates: &["RESUME-008"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The rewind is announced but not logged: it must survive resume, reload and restart (REWIND-004).
    // Genuine too: a repeated rewind names the removed invocation again, which the reducer refuses
    // (STATE-024). That the next message then follows the removed items (REWIND-008) follows from the
    // state the reload gave back, already found apart (one fault, one charge).
    Expectation {
        fault: "rewind-not-persisted",
        scenarios: &["rewind-basic", "rewind-reload-then-continue", "rewind-survives-restart"],
        violates: &["REWIND-004", "RESUME-011", "STATE-024"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The state is cut at another invocation than the one announced: the rewind is not carried out
    // as sent (REWIND-003) and the update differs from the fold of the events (STATE-004, STATE-033).
    // Genuine too: every later snapshot holds another cut than the one announced (REWIND-004); the
    // golden snapshots taken while the patched state is apart from the fold are charged under STATE-038.
    Expectation {
        fault: "rewind-wrong-cut",
        scenarios: &["rewind-basic", "rewind-to-first-message", "rewind-repeat-is-harmless"],
        violates: &["STATE-038", "STATE-040", "REWIND-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Display order follows settlement: the sent state no longer equals the reducer's fold
    // (STATE-004), because batch items leave call order (MULTI-004). One fault, one charge: the
    // first such update is charged under STATE-004, and the client stays apart from the fold until
    // an update gives it again (`monitor::diverge`), so the golden snapshots of the reordered state
    // (declared MULTI-004, STATE-015) are charged under it too.
    Expectation {
        fault: "display-order-by-completion",
        scenarios: &["multi-tool-out-of-order", "multi-tool-progress-and-failure", "multi-tool-output-placement"],
        violates: &["STATE-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::V1_0,
    },
    // `completed` while a call awaits input: terminal statuses need no open call (RUN-004), and the
    // reducer refuses it (STATE-031, reported through STATE-006).
    // One frame, one charge: the steps that expected awaiting_input saw the run_complete the reducer
    // refuses (STATE-031), so they are charged under it, not under RUN-003, MULTI-005, SCRIPT-010 or STATE-030.
    Expectation {
        fault: "terminal-while-awaiting",
        scenarios: &["multi-tool-mixed-hitl", "multi-tool-two-pending-answered-out-of-order"],
        violates: &["STATE-031"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A second response is executed again: responses are idempotent (TOOL-012) and a settled call
    // never changes (TOOL-010).
    // One frame, one charge: the steps that expected tool_call_settled saw the very completion the
    // monitor charged TOOL-010 (a settled call settles again), so they are charged under it.
    Expectation {
        fault: "duplicate-response-executed",
        scenarios: &[
            "hitl-duplicate-response",
            "inline-completed-survives-resume",
            "attach-answer-in-one-tab-settles-in-the-other",
        ],
        violates: &["TOOL-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The dismissal is announced but not logged: settled calls survive resume (RESUME-009).
    // Genuine too: the dismissed call comes back pending and is completed (TOOL-010), and that answer
    // runs the superseded turn again, not the latest (STATE-034). That the answer is taken rather than
    // refused as settled (TOOL-012) follows from the state the resume gave back, already found apart.
    Expectation {
        fault: "dismissal-not-persisted",
        scenarios: &["dismissal-client-survives-resume", "multi-tool-server-dismissal", "dismissal-superseded*"],
        violates: &["RESUME-009", "RESUME-011", "TOOL-010", "STATE-034"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // seq starts at 1 after a reload: seq strictly grows across reconnects and restarts (SEQ-001),
    // and the restarted server refuses the resume whose last_seq is above its restarted counter, so
    // the session is not resumable after the restart (RESUME-010).
    Expectation {
        fault: "seq-restarts-after-restart",
        scenarios: &["restart-resume", "seq-grows-across-restarts"],
        violates: &["SEQ-001", "RESUME-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Any token resumes: a wrong token must be rejected (RESUME-004), identically (RESUME-005).
    Expectation {
        fault: "resume-skips-token-check",
        scenarios: &["resume-rejected", "resume-rejected-indistinguishable"],
        violates: &["RESUME-004", "RESUME-005"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // ui_state_updated drops progress: every update equals the fold of the events (STATE-004); on a
    // connection with patches, the patch drops its progress ops and gives another state (STATE-038).
    // One fault, one charge: the final golden snapshot (declared MULTI-004) lacks the dropped
    // progress, so it is charged under the STATE-004 finding the client's state is apart since.
    Expectation {
        fault: "state-diverges",
        scenarios: &["multi-tool-progress-and-failure"],
        violates: &["STATE-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::V1_0,
    },
    // Bad input closes the connection: a non-fatal error keeps it open (ERROR-003) and each kind of
    // bad input has its error code (ERROR-006, ERROR-007, ERROR-008).
    Expectation {
        fault: "drop-connection-on-error",
        scenarios: &["errors-malformed-and-binary", "errors-unknown-type-variants", "errors-hello-required"],
        violates: &["ERROR-006", "ERROR-007", "SESSION-001"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The completion goes out before its commit and the server dies: every event is committed before
    // it is sent (RESUME-011), a committed response is executed exactly once (RESUME-012). The planted
    // fault also kills the restarted process when it replays the response, so the backend never comes
    // back on its storage (RESUME-010).
    Expectation {
        fault: "announce-before-commit",
        scenarios: &["crash-after-response"],
        violates: &["RESUME-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Unknown types are ignored: they must get `unknown_type` (ERROR-007).
    Expectation {
        fault: "unknown-type-ignored",
        scenarios: &["errors-unknown-type-variants", "errors-malformed-and-binary"],
        violates: &["ERROR-007"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // corr differs from tool_call_id (TOOL-004), which the reducer refuses (STATE-029 via STATE-006).
    Expectation {
        fault: "corr-mismatch",
        scenarios: &["multi-tool-progress-and-failure"],
        violates: &["TOOL-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // No snapshot after a resumed welcome (STATE-002); the resume handshake is incomplete (RESUME-001).
    Expectation {
        fault: "snapshot-missing-on-resume",
        scenarios: &["rapid-reconnects"],
        violates: &["RESUME-001", "RESUME-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Deadlines are ignored: a pending call past its deadline must expire (TOOL-018, SCRIPT-013).
    // Genuine too: the call that should have expired takes a late response and settles again (TOOL-012).
    // The step that waits for the expiry's run_started times out: no expiry (TOOL-018); a settlement
    // before its run_started would be the always-on check's RUN-007 finding instead. After a resume
    // whose snapshot shows the call still pending (TOOL-018), the response is executed rather than
    // refused as settled: the call never settled in the server's state, so TOOL-012 follows.
    Expectation {
        fault: "expiry-ignored",
        scenarios: &["expiry-then-response", "expiry-while-disconnected"],
        violates: &["TOOL-018"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A handshake without subprotocol is refused: it must be accepted and speak v1 (TRANSPORT-004).
    Expectation {
        fault: "subprotocol-required",
        scenarios: &["transport-no-subprotocol", "transport-ping-pong"],
        violates: &["TRANSPORT-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // conformance_script is advertised by a production backend: listed exactly in conformance mode
    // (SCRIPT-003). Only the scenario outside conformance mode can see it.
    Expectation {
        fault: "script-capability-unconditional",
        scenarios: &["script-refused-outside-conformance", "script-capability-listed"],
        violates: &["SCRIPT-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // conformance_script is missing in conformance mode: every scripted scenario turns n/a, so only
    // the scenario that needs no capability fails (SCRIPT-003).
    Expectation {
        fault: "script-capability-missing",
        scenarios: &["script-capability-listed"],
        violates: &["SCRIPT-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A production backend plays a client's script: scripts only in conformance mode (SCRIPT-001).
    // Connections dropped on an orderly shutdown: they should be closed with 1001 (TRANSPORT-009), a
    // SHOULD, so the should-level scenario warns.
    Expectation {
        fault: "shutdown-without-close",
        scenarios: &["shutdown-orderly-close"],
        violates: &["TRANSPORT-009"],
        cascades: &[],
        caught_by: Caught::ShouldWarning,
        offer: Offer::Default,
    },
    Expectation {
        fault: "script-accepted-outside-conformance",
        scenarios: &["script-refused-outside-conformance", "script-with-resume-refused"],
        violates: &["SCRIPT-001"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // An integer written 4.0 or 1e3 is refused: it is the integer it denotes (INT-001).
    Expectation {
        fault: "integer-spellings-refused",
        scenarios: &["int-integer-spellings"],
        violates: &["INT-001"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Numbers beyond 2^53 - 1 inside opaque values are taken and rounded: they must be refused
    // (INT-002, with invalid_frame: ERROR-008).
    Expectation {
        fault: "opaque-numbers-unbounded",
        scenarios: &["int-opaque-numbers"],
        violates: &["INT-002"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The expiry is counted again from the server's start: the deadline is kept across the restart
    // (TOOL-019), so the call has expired by the first resume.
    Expectation {
        fault: "expiry-reset-on-restart",
        scenarios: &["expiry-deadline-passes-while-down", "expiry-survives-restart"],
        violates: &["TOOL-019", "TOOL-018", "RESUME-014"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A call running alone at the crash is run again: it must be failed as interrupted (SCRIPT-015).
    Expectation {
        fault: "running-call-continued-after-restart",
        scenarios: &["restart-interrupts-lone-running-call", "multi-tool-restart-mid-batch"],
        violates: &["SCRIPT-015"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The cursor is checked before the token: resume_rejected comes first (RESUME-016).
    Expectation {
        fault: "cursor-checked-before-token",
        scenarios: &["resume-rejected-wins-over-cursor-ahead"],
        violates: &["RESUME-016", "RESUME-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Tool call ids of 122 characters: at most 121 (ID-003), or the reducer cannot form the output
    // item id (STATE-015, through STATE-006) and the states part (STATE-004).
    // Genuine too: only the announced id is long, so the response to the pending call as announced
    // is refused (unknown_tool_call) instead of settled (TOOL-016). Its step waited for the slice the
    // response opens; no RUN-007 is broken (a settlement before run_started would be the always-on
    // check's).
    Expectation {
        fault: "tool-call-id-too-long",
        scenarios: &["hitl-submit", "auto-tool-progress-output"],
        violates: &["ID-003", "STATE-015", "TOOL-016"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A null submit is refused: it completes the call like any value (TOOL-021).
    Expectation {
        fault: "null-submit-refused",
        scenarios: &["hitl-submit-null"],
        violates: &["TOOL-021"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A ui_tool without component_type is accepted in a script: invalid_script (SCRIPT-018).
    Expectation {
        fault: "componentless-ui-tool-accepted",
        scenarios: &["invalid-script-rules"],
        violates: &["SCRIPT-018", "SCRIPT-002"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A patch without its last op: applied to its base it no longer gives the fold of the events
    // (STATE-038).
    Expectation {
        fault: "patch-missing-op",
        scenarios: &["patch-multi-tool-turn"],
        violates: &["STATE-038"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // base_seq names the seq before the latest state frame (STATE-037).
    Expectation {
        fault: "patch-wrong-base-seq",
        scenarios: &["patch-multi-tool-turn"],
        violates: &["STATE-037"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Patches on a connection whose hello left ui_state_patch out: a frame of a feature not in force
    // (SESSION-015) in place of the ui_state_updated STATE-003 requires.
    // One frame, one charge: the step that expected the update saw the patch the monitor charged SESSION-015.
    Expectation {
        fault: "patch-without-feature",
        scenarios: &["features-subset-updates-only"],
        violates: &["SESSION-015"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // `features` in a 1.0 welcome: a member 1.0 does not define (COMPAT-005, SESSION-013).
    Expectation {
        fault: "v11-member-on-v10-connection",
        scenarios: &["version-1-0-offer-no-1-1-frames"],
        violates: &["COMPAT-005"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A catch-up patch from the first state instead of last_seq's: it does not turn the state of
    // last_seq into the session's (RESUME-017), nor give what a snapshot holds (RESUME-019).
    Expectation {
        fault: "catch-up-wrong-base",
        scenarios: &["resume-catch-up"],
        violates: &["RESUME-019"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A history page leaves out the item just before the cursor: pages are not exactly the items
    // before the cursor (WINDOW-008).
    Expectation {
        fault: "page-skips-boundary-item",
        scenarios: &["window-reload-opens-tail-and-pages-back", "window-pages-while-a-run-appends"],
        violates: &["WINDOW-008"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A history page repeats the cursor item, which the window already holds (WINDOW-008).
    Expectation {
        fault: "page-repeats-boundary-item",
        scenarios: &["window-reload-opens-tail-and-pages-back", "window-pages-while-a-run-appends"],
        violates: &["WINDOW-008"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A window holds only its newest items: an awaiting call older than it is left out (WINDOW-003).
    Expectation {
        fault: "window-drops-old-pending-call",
        scenarios: &["window-keeps-an-old-pending-call"],
        violates: &["WINDOW-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A windowed connection gets the patches of the whole state, ops on items it does not hold
    // included: they are not projected onto its view (WINDOW-005), and a cut that removes its
    // cursor item reaches it as that patch, not as a fresh window (WINDOW-006).
    Expectation {
        fault: "unheld-change-sent",
        scenarios: &["window-keeps-an-old-pending-call", "window-rewind-between-pages"],
        violates: &["WINDOW-005", "WINDOW-006"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Pages come from a copy taken when the window opened: a cursor a cut removed still pages, with
    // removed items, where stale_cursor is due (WINDOW-010).
    Expectation {
        fault: "page-from-cache",
        scenarios: &["window-rewind-between-pages"],
        violates: &["WINDOW-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A catch-up patch without its last op: its base_seq is right and it applies, but the state it
    // gives is not the session's (RESUME-019). Killed by the always-on patch oracle where another
    // tab saw the whole turn the resumed one missed, and by the comparison with a snapshot.
    Expectation {
        fault: "catch-up-missing-op",
        scenarios: &["resume-catch-up-seen-by-another-tab", "resume-catch-up"],
        violates: &["RESUME-019"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // No bound on the send queue: a client that stops reading is never closed with 4008
    // (TRANSPORT-016), caught through the close-and-resume contract, not through memory.
    Expectation {
        fault: "unbounded-send-queue",
        scenarios: &["send-queue-overflow-resume"],
        violates: &["TRANSPORT-016"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A backend that meets 1.0 as released but neither of the two errata above (INT-002,
    // TRANSPORT-016). The matrix judges the raw verdicts; the command line reports both as errata
    // warnings on a 1.0 connection and fails them only with --strict (conformance/tests/errata.rs).
    Expectation {
        fault: "errata-of-1-0-unmet",
        scenarios: &["int-opaque-numbers", "send-queue-overflow-resume"],
        violates: &["INT-002", "TRANSPORT-016"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::V1_0,
    },
    // The first delta after a resume repeats the chunk the resumed state already ends with: the
    // stream does not continue exactly after the resumed text (STREAM-003).
    Expectation {
        fault: "stream-chunk-repeated-after-resume",
        scenarios: &["stream-resume-catch-up", "stream-resume-snapshot", "stream-takeover"],
        violates: &["STREAM-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The first delta due after a resume is committed but never sent: a chunk is lost (STREAM-003).
    // Not attach-mid-stream (nor above): the lost delta still reaches the other tab, and which tab
    // the runner reads first decides whether it is charged as ATTACH-004, -007, -008 or STREAM-003.
    Expectation {
        fault: "stream-chunk-lost-on-resume",
        scenarios: &["stream-resume-catch-up", "stream-resume-snapshot", "stream-takeover"],
        violates: &["STREAM-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The end frame's markdown differs from the streamed text: not the say's whole markdown
    // (SCRIPT-019), and the reducer refuses it (STATE-043, STATE-047).
    // One frame, one charge: the step saw the end frame the monitor charged (SCRIPT-019, STATE-047).
    Expectation {
        fault: "stream-final-text-differs",
        scenarios: &["stream-basic"],
        violates: &["SCRIPT-019", "STATE-047"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Recovery leaves a stream open: after the restart the item still streams and the run runs
    // (STREAM-004, SCRIPT-021).
    Expectation {
        fault: "stream-left-open-after-restart",
        scenarios: &["stream-restart-mid-stream"],
        violates: &["STREAM-004", "SCRIPT-021"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A retry plays the turn's own steps again, so the kept costly tool runs again: the retried
    // run must play retries[k] only (SCRIPT-020) and leave the kept call alone (RETRY-002).
    // One frame, one charge: the step saw the frame the monitor charged SCRIPT-020 (the kept tool runs again).
    Expectation {
        fault: "retry-reexecutes-kept-tool",
        scenarios: &["retry-keeps-completed-tool"],
        violates: &["SCRIPT-020"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The state is cut one item later than chat.retry_accepted announces: the state frames are not
    // the fold of the announced cut (STATE-038, STATE-044) and the state after a reload keeps an
    // item the retry removed (RETRY-003).
    Expectation {
        fault: "retry-cuts-wrong-item",
        scenarios: &["retry-survives-reload-and-restart", "retry-removed-call-response"],
        violates: &["RETRY-003", "STATE-038", "RETRY-001"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The cancel is answered, but nothing closes the run: the next event is the run's own (CANCEL-003).
    // Not cancel-races-last-step: whether its cancel meets the run still going is timing.
    Expectation {
        fault: "cancel-ignored",
        scenarios: &[
            "cancel-after-response-one-order",
            "cancel-after-retry-one-order",
            "cancel-awaiting-input",
            "cancel-closes-open-calls",
            "cancel-during-wait-next-turn-at-once",
            "cancel-mid-stream",
            "cancel-refusals",
            "cancel-survives-restart",
            "cancel-unknown-type-before-1-2",
        ],
        violates: &["CANCEL-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The cancelled stream's end drops its last chunk: not the text streamed so far (CANCEL-004,
    // and the reducer's STATE-047 on the client's side).
    Expectation {
        fault: "cancel-stream-loses-chunks",
        scenarios: &["cancel-mid-stream", "cancel-survives-restart"],
        violates: &["CANCEL-004", "STATE-047"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A tool of a cancelled run reports completed when it finishes (CANCEL-005; the call had settled,
    // TOOL-010).
    Expectation {
        fault: "cancel-tool-settles-completed",
        scenarios: &["cancel-closes-open-calls"],
        violates: &["CANCEL-005", "TOOL-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The closing events are not logged: after a kill -9 the run comes back and fails interrupted
    // instead of staying cancelled (CANCEL-008).
    Expectation {
        fault: "cancel-undone-by-restart",
        scenarios: &["cancel-survives-restart"],
        violates: &["CANCEL-008"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A late cancel naming a finished turn stops the newer run (CANCEL-001).
    Expectation {
        fault: "cancel-stops-newer-invocation",
        scenarios: &["cancel-refusals"],
        violates: &["CANCEL-001"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A value that breaks the response_schema completes the call (TOOL-023; on a 1.1 connection
    // TOOL-025).
    Expectation {
        fault: "response-accepted-against-schema",
        scenarios: &["hitl-response-schema*"],
        violates: &["TOOL-023", "TOOL-025"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A resume with multi_attach in force takes the other tab over: it is closed 4001 instead of
    // staying live (ATTACH-001).
    Expectation {
        fault: "attach-takes-over",
        scenarios: &["attach-two-tabs-one-turn", "attach-eight-tabs-stay-live"],
        violates: &["ATTACH-001", "ATTACH-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The events a request causes reach only the requesting tab (ATTACH-004). The other tab's
    // steps that wait for those events prove ATTACH-004 alone; an answer reaching it is the
    // monitor's ATTACH-005 finding (answer-to-every-tab), not theirs.
    Expectation {
        fault: "event-only-to-requester",
        scenarios: &["attach-two-tabs-one-turn", "attach-other-tab-message-and-cancel"],
        violates: &["ATTACH-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // An answer goes to every attached tab, not only the requester (ATTACH-005).
    Expectation {
        fault: "answer-to-every-tab",
        scenarios: &["attach-two-tabs-one-turn", "attach-answer-in-one-tab-settles-in-the-other"],
        violates: &["ATTACH-005"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // The fan-out waits for a tab that stopped reading, so the other tab stalls (ATTACH-010).
    // Genuine too: the stalled tab is never closed 4008 with its queue bounded (TRANSPORT-016).
    Expectation {
        fault: "stalled-tab-slows-others",
        scenarios: &["attach-stalled-tab-alone-closed"],
        violates: &["ATTACH-010", "TRANSPORT-016"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A replica that lost the run lease still commits the run's steps: after a pause, the hung
    // replica goes on with a run another replica recovered (CLUSTER-003). Genuine too: it numbers
    // those frames from what it held before the pause, seqs the recovery already used
    // (CLUSTER-002), so the two tabs get different frames under one seq (ATTACH-006) and their
    // views part (ATTACH-007).
    Expectation {
        fault: "ownership-not-fenced",
        scenarios: &["cluster-paused-driver-is-fenced"],
        violates: &["ATTACH-006", "ATTACH-007", "CLUSTER-002", "CLUSTER-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Cluster,
    },
    // The commit that ends a run is not announced: the tab on the other replica never sees the
    // end of the run (CLUSTER-006).
    Expectation {
        fault: "notification-lost",
        scenarios: &["cluster-two-tabs-on-two-replicas", "cluster-resume-on-another-replica-mid-turn"],
        violates: &["CLUSTER-006"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Cluster,
    },
    // A resume snapshot carries each reasoning item's payload re-encoded: the item the client
    // reloads is not the one the agent produced (REASON-004); the reload variant of the restart
    // scenario resumes by snapshot.
    Expectation {
        fault: "reasoning-payload-altered",
        scenarios: &["reasoning-survives-restart"],
        violates: &["REASON-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Reasoning frames and items reach the 1.3 tab whose hello left reasoning out (REASON-001).
    // That tab is windowed: its window opened on the view without reasoning, and the patches of
    // the leaked view no longer apply to it (WINDOW-005).
    Expectation {
        fault: "reasoning-leaked",
        scenarios: &["reasoning-and-usage-unseen-where-not-in-force"],
        violates: &["REASON-001"],
        cascades: &["WINDOW-005"],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A slice's run_complete carries its last usage step's usage, not the sum (USAGE-003,
    // SCRIPT-028); the state then sums the wrong figure.
    Expectation {
        fault: "usage-not-summed",
        scenarios: &["reasoning-streamed-redacted-and-usage"],
        violates: &["USAGE-003", "SCRIPT-028"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A resume snapshot restores a redacted reasoning's text from its encrypted copy: the state a
    // reload gives holds what the run withheld (REASON-003); a catch-up gives the state's own
    // item, so only the reload variant sees it.
    Expectation {
        fault: "redacted-reasoning-reloaded",
        scenarios: &["reasoning-redacted-stays-redacted-on-reload"],
        violates: &["REASON-003"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A continued thread whose latest run returned is started without answers_return: the
    // reference's own reducer refuses the frame (STATE-070), so the turn is abandoned there.
    Expectation {
        fault: "continued-thread-new-prompt",
        scenarios: &["subagent-continue-answers-return"],
        violates: &["SUBAGENT-005"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A retry that keeps a host starts its sub-agent again (SUBAGENT-012, not RETRY-002: the frame
    // runs the kept sub-agent). Genuine too: the kept host has settled, so the start is a frame of
    // a settled call (TOOL-010) that the reducer refuses, the call hosting a sub-agent already
    // (STATE-068).
    Expectation {
        fault: "retry-reruns-subagent",
        scenarios: &["subagent-retry-keeps-then-removes-host"],
        violates: &["SUBAGENT-012", "STATE-068", "TOOL-010"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // A cancel closes the sub-agent's transcript, then the sub-agent sends one more chunk of the
    // stream the cancel ended (SUBAGENT-011, not CANCEL-005: the frame is the sub-agent's; its
    // transcript no longer runs, so the reducer refuses the chunk, STATE-071, as CANCEL-005's
    // settlement after a cancel is also TOOL-010's).
    Expectation {
        fault: "cancel-leaves-subagent-running",
        scenarios: &["subagent-cancelled-mid-stream"],
        violates: &["SUBAGENT-011", "STATE-071"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Default,
    },
    // Each replica numbers frames from its own counter: the two tabs get different frames under
    // one seq (CLUSTER-002, and ATTACH-006 for the two attached tabs). Genuine too: the replica
    // behind reads the others' commits from its own counter, so its tab misses what they committed
    // (ATTACH-004, CLUSTER-006) and the tabs' views part (ATTACH-007). Its tab's patches, built
    // on a base it never got, are not charged again: once one seq names two frames, the monitor
    // no longer folds a connection's seq gap from the session's frames by seq.
    Expectation {
        fault: "seq-per-replica",
        scenarios: &["cluster-two-tabs-on-two-replicas"],
        violates: &["ATTACH-004", "ATTACH-006", "ATTACH-007", "CLUSTER-002", "CLUSTER-006"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Cluster,
    },
    // Nobody claims the lease of a killed replica: the run is never recovered (CLUSTER-004).
    Expectation {
        fault: "recovery-only-at-restart",
        scenarios: &["cluster-kill-driver-mid-stream", "cluster-kill-driver-mid-tool"],
        violates: &["CLUSTER-004"],
        cascades: &[],
        caught_by: Caught::MustFailure,
        offer: Offer::Cluster,
    },
];
