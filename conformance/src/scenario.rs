//! Scenarios as data: the types of a scenario file (one scenario per JSON file under
//! `fixtures/scenarios/`), the meta-schema generated from them (`schema/json/scenario.json`) and the
//! checks a file must pass before it runs.

use std::collections::HashSet;
use std::fmt;

use chatwire_schema::script::AgentScript;
use chatwire_schema::ErrorCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One conformance scenario: a script for the agent and the steps the runner drives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Path of the meta-schema, for editors; ignored by the runner.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Stable id, equal to the file name without `.json`; baselines and reports name it.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,63}$"))]
    pub id: String,
    /// One line saying what behaviour is checked.
    pub title: String,
    /// Longer explanation: why the behaviour matters, which field failure it guards against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How binding the behaviour is: failures of a `should` or `may` scenario are warnings.
    pub level: Level,
    /// The spec requirement ids this scenario covers (e.g. `TOOL-012`).
    #[schemars(length(min = 1))]
    pub requirements: Vec<RequirementId>,
    /// Capabilities the server must offer in its welcome; without them the scenario is not applicable.
    /// A scenario with a `script` needs `conformance_script` implicitly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// Features (since 1.1, `spec/session.md#features`) that must be in force on the scenario's
    /// first connection; without them (a server or an offer that negotiates 1.0, or a server that
    /// does not implement them) the scenario is not applicable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The scripted agent sent in `session.hello.script` by `connect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<AgentScript>,
    /// Whether the scenario runs against the backend in conformance mode (default true). A scenario
    /// with `false` checks what a backend does outside conformance mode (SCRIPT-001, SCRIPT-003): it
    /// gets its own instance of the bundled backend started without `--conformance`, or the one named
    /// by `--plain-url` / `--plain-exec`, and is not applicable without one. It has no `script`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub conformance_mode: bool,
    /// Whether the scenario runs alone (default false): no other scenario runs while it does, and a
    /// spawned backend gives it an instance of its own. For a scenario whose load (tens of megabytes
    /// of frames) could otherwise slow an innocent scenario sharing the backend or the runner into a
    /// timeout charged to a requirement it does not break.
    #[serde(default, skip_serializing_if = "is_false")]
    pub isolated: bool,
    /// What the runner does, in order. The scenario stops at the first step that fails.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

/// A requirement id such as `SEQ-001` (well formed by construction; whether the spec defines it is
/// checked by a test against the registry).
pub type RequirementId = chatwire_schema::ReqId;

/// How binding a scenario is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A MUST of the spec: a failure fails the run.
    Must,
    /// A SHOULD: a failure is reported as a warning.
    Should,
    /// A MAY: a failure is reported as a warning.
    May,
}

impl Level {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::May => "may",
        }
    }
}

/// Name of a connection inside a scenario; steps without `conn` use `main`.
pub type ConnName = Option<String>;

/// One step of a scenario.
///
/// Strings of the form `{{name}}` are placeholders. In an expectation an unbound name captures the
/// value found there and a bound one must equal it; `{{any}}` matches any present value and
/// `{{absent}}` requires the field to be missing. An object whose only key is `$contains` (or
/// `$excludes`) with an array of patterns matches an array that holds an element matching each
/// pattern (or none matching any), in any order. In a frame to send they are replaced by the bound
/// value; built-in names: `session_id`, `resume_token`, `last_seq` (highest seq seen on the session),
/// `last_sent_id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Open a WebSocket connection and, unless `hello` is false, send `session.hello` (with the
    /// scenario's script) and expect `session.welcome` (resumed=false) then `ui_state_snapshot`.
    Connect {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Versions to offer instead of the runner's (`run --versions`; default every version the
        /// runner supports, newest first).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        versions: Option<Vec<String>>,
        /// `session.hello.features` to send instead of the runner's (`run --features`; default none,
        /// so every feature the server implements is in force). Needs `versions`, all 1.1 or later:
        /// a client offering a version below 1.1 sends no `features` (SESSION-014).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        features: Option<Vec<String>>,
        /// Whether to send the scenario's script in the hello (default true).
        #[serde(default = "yes", skip_serializing_if = "is_true")]
        with_script: bool,
        /// Whether to do the hello handshake at all (default true).
        #[serde(default = "yes", skip_serializing_if = "is_true")]
        hello: bool,
        /// Whether to offer the `chatwire.v1` subprotocol in the handshake (default true). With
        /// false the server must accept the handshake, select no subprotocol and speak v1 all the
        /// same (TRANSPORT-004).
        #[serde(default = "yes", skip_serializing_if = "is_true")]
        subprotocol: bool,
    },
    /// Open a new connection and resume the session with the captured id, token and cursor; expect
    /// `session.welcome` (resumed=true, same session) then `ui_state_snapshot`, or, where
    /// `resume_catch_up` is in force on the new connection, a catch-up `ui_state_patch` (RESUME-017).
    Resume {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Cursor to send instead of the one `cursor` picks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_seq: Option<u64>,
        /// Which seq to send as `last_seq` (default: `state` where `resume_catch_up` was in force on
        /// the connection that received the latest state, else `highest`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<ResumeCursor>,
        /// The frame that must follow the welcome (default: either, as the spec allows).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<ResumeAnswer>,
        /// After a catch-up, resume once more with `last_seq` 0 and require the snapshot to hold
        /// exactly the state the catch-up gave (RESUME-019). Only where no event can come between.
        #[serde(default, skip_serializing_if = "is_false")]
        compare_with_snapshot: bool,
    },
    /// Close the connection with code 1000 and wait for the close to complete.
    Disconnect {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
    },
    /// Kill the backend with SIGKILL and start it again on the same storage. Only possible when the
    /// runner started the backend (`--exec` or the bundled one); not applicable with `--url`.
    /// Every open connection is gone afterwards.
    Restart {
        /// Shut down in an orderly way instead: SIGTERM, then every open connection must be closed
        /// with close code 1001 (TRANSPORT-009); a backend still running 10 s (scaled) later is
        /// killed. Then it is started again on the same storage.
        #[serde(default, skip_serializing_if = "is_false")]
        graceful: bool,
        /// Keep the killed backend down this long (ms, not scaled) before starting it again, so
        /// that a deadline can pass while it is down (TOOL-019, RESUME-014). Only with a kill.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 60000))]
        down_ms: Option<u64>,
    },
    /// Send `chat.user_message`.
    UserMessage {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Frame id (default: generated `uN`); reuse one to test idempotency.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The text.
        text: String,
    },
    /// Send `chat.tool_call_response`.
    Respond {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Frame id (default: generated `rN`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The call answered, usually a placeholder such as `{{tool_call:1}}`.
        tool_call: String,
        /// The `outcome` object, e.g. `{"action": "submit", "value": 1}`.
        outcome: Value,
    },
    /// Send `chat.rewind`.
    Rewind {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Frame id (default: generated `wN`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The first invocation to remove, usually a placeholder such as `{{invocation:2}}`.
        before: String,
    },
    /// Send `chat.retry` (since 1.1): cut the latest turn right after an item and run it again.
    Retry {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Frame id (default: generated `yN`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The last item to keep, usually a placeholder bound by an earlier expectation, such as
        /// `{{tool_call:1}}` (a tool call item's id is its call's id) or `{{item:2}}`.
        after_item: String,
    },
    /// Send `chat.cancel` (since 1.2): stop the run of an invocation.
    Cancel {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Frame id (default: generated `xN`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The invocation whose run to stop, usually a placeholder such as `{{invocation:1}}`.
        invocation: String,
    },
    /// Send any JSON value as a text frame (placeholders replaced); may be deliberately invalid.
    Send {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The frame.
        frame: Value,
        /// The server may already have closed the connection (after a takeover, say): a frame that
        /// cannot be sent is then no failure, since what is checked is that it has no effect.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        may_fail: bool,
    },
    /// Send this exact text as a text frame (e.g. malformed JSON).
    SendText {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The text.
        text: String,
    },
    /// Send a WebSocket ping carrying `payload` and wait for the pong that carries the same payload
    /// (TRANSPORT-010). `ui_state_updated` frames arriving meanwhile are taken in; any other frame
    /// fails the step, so ping when the connection is quiet.
    Ping {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The payload, as UTF-8 text; a control frame carries at most 125 bytes.
        #[schemars(length(max = 125))]
        payload: String,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Send a binary frame of this many zero bytes.
    SendBinary {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Number of bytes.
        #[schemars(range(max = 16777216))]
        bytes: usize,
    },
    /// Send one WebSocket frame that breaks RFC 6455 on purpose; the server must close the
    /// connection with the close code TRANSPORT-014 or TRANSPORT-015 names (an `expect_close` step
    /// checks it).
    SendViolation {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// What is wrong with the frame.
        violation: WsViolation,
    },
    /// The next frame (skipping `ui_state_updated` unless `frame.type` asks for it) matches `frame`
    /// partially: every field given must be present and match; others are ignored.
    Expect {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The pattern.
        frame: Value,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// The next `frames.len()` frames (same skipping rule) match the patterns in any order.
    ExpectUnordered {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The patterns.
        #[schemars(length(min = 1))]
        frames: Vec<Value>,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// The next frame is an `error` with this code, `fatal` as the spec says for the code, and
    /// `in_reply_to` naming the last frame sent (or matching `in_reply_to` when given).
    ExpectError {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The error code.
        code: ErrorCode,
        /// Pattern for `in_reply_to`; `{{absent}}` when the sent frame had no readable id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        in_reply_to: Option<String>,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// The server closes the connection (optionally with this close code) without sending other
    /// frames first.
    ExpectClose {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The close code expected.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<u16>,
        /// Frames that arrive before the close are taken in (and checked like every frame) instead
        /// of failing the step: for a close that ends a stream, such as 4008 after a paused read.
        #[serde(default, skip_serializing_if = "is_false")]
        after_frames: bool,
        /// With `after_frames`: the most bytes of frames the connection may deliver before the
        /// close; more fails the step at once (a server that holds more for a client that stopped
        /// reading than its bound plus the socket buffers, TRANSPORT-016).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_bytes: Option<u64>,
        /// A connection that ends without a close frame passes too when the runner had not read it
        /// for at least this many ms (not scaled) when the step began: a server MAY drop a
        /// connection whose closing handshake went unanswered for 5 s (TRANSPORT-016). Without it,
        /// or after a shorter pause, the close code is required.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        drop_allowed_after_ms: Option<u64>,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Stop reading the connection for `ms` milliseconds (scaled by `--timeout-scale` unless
    /// `scaled` is false), then read again: what the server sends meanwhile piles up in its send
    /// queue (TRANSPORT-016).
    PauseReading {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// How long, before scaling.
        #[schemars(range(max = 60000))]
        ms: u64,
        /// Whether `--timeout-scale` stretches the pause (default true). False where the pause must
        /// stay within a protocol constant: a server may drop a connection whose 4008 closing
        /// handshake has not completed in 5 s (TRANSPORT-016).
        #[serde(default = "yes", skip_serializing_if = "is_true")]
        scaled: bool,
    },
    /// The connection's UiState as the runner holds it (snapshot, updates, patches applied) matches
    /// `state` partially, and holds exactly `items` display items when given.
    ExpectState {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// The pattern.
        state: Value,
        /// The exact number of items.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        items: Option<usize>,
    },
    /// No frame at all arrives for `ms` milliseconds (not scaled).
    ExpectSilence {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// How long to listen.
        #[schemars(range(max = 60000))]
        ms: u64,
    },
    /// Read frames until the run is not `running`, the last event's `ui_state_updated` has arrived,
    /// and no frame arrived for `quiet_ms`.
    WaitIdle {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Silence that counts as idle, in ms (default 200, not scaled).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quiet_ms: Option<u64>,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Read a pace connection to measure the backend's own progress rather than a clock: take
    /// what arrives without checking it, until `bytes` bytes of frames have arrived or the server
    /// closes it, then drop it (it is closed afterwards). For a pause in reading another
    /// connection that must last until the backend has produced a given amount, however fast it
    /// is: a second session playing the same script, started after the paused one, has produced
    /// no more than it (TRANSPORT-016's send-queue scenario).
    Drain {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// How many bytes of text frames end the step.
        #[schemars(range(min = 1))]
        bytes: u64,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Do nothing for `ms` milliseconds (not scaled), e.g. to let a deadline pass.
    Sleep {
        /// How long.
        #[schemars(range(max = 60000))]
        ms: u64,
    },
    /// Compare the normalized final UiState and frame-type transcript with the golden snapshot
    /// `fixtures/snapshots/<scenario>__<name>.snap`.
    Snapshot {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection whose state is projected (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Snapshot name, unique in the scenario.
        #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]{0,31}$"))]
        name: String,
    },
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which seq a [`Step::Resume`] sends as `last_seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeCursor {
    /// The seq of the latest frame that carried a state (what a catch-up starts from).
    State,
    /// The seq of the latest frame that carried no state (an event, a welcome): a snapshot is due
    /// (RESUME-018).
    NonState,
    /// The highest seq seen (the 1.0 cursor).
    Highest,
    /// The latest frame that carried a state and after which exactly the welcome's
    /// `resume_retention` events were committed: the oldest base a catch-up is still owed from
    /// (RESUME-017). The connection must have seen every event of the session since that frame.
    Retention,
    /// The same with one event more than `resume_retention` after it: the newest base a snapshot
    /// is owed from (RESUME-018).
    PastRetention,
}

/// The frame a [`Step::Resume`] requires after the welcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeAnswer {
    /// A `ui_state_snapshot`.
    Snapshot,
    /// A catch-up `ui_state_patch` (RESUME-017).
    CatchUp,
}

/// A WebSocket frame that breaks RFC 6455, for [`Step::SendViolation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WsViolation {
    /// A final text frame whose payload is not UTF-8 (TRANSPORT-014: close 1007).
    InvalidUtf8,
    /// A frame with the reserved data opcode 3 (TRANSPORT-015: close 1002).
    ReservedOpcode,
    /// A text frame with RSV1 set, although no extension was negotiated (TRANSPORT-015).
    RsvBitSet,
    /// A continuation frame with no message to continue (TRANSPORT-015).
    ContinuationWithoutStart,
}

impl WsViolation {
    /// What is wrong with the frame, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            WsViolation::InvalidUtf8 => "a text frame that is not UTF-8",
            WsViolation::ReservedOpcode => "reserved opcode 3",
            WsViolation::RsvBitSet => "RSV1 set without an extension",
            WsViolation::ContinuationWithoutStart => "a continuation frame with nothing to continue",
        }
    }
}

impl Step {
    /// A resume that leaves the cursor, `last_seq` and answer to the runner and compares nothing:
    /// the one a reload variant sends as a reload (`Scenario::resumes_by_default`).
    pub fn is_default_resume(&self) -> bool {
        matches!(self, Step::Resume { last_seq: None, cursor: None, answer: None, compare_with_snapshot: false, .. })
    }

    /// The `do` name of the step, used in check ids.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Connect { .. } => "connect",
            Step::Resume { .. } => "resume",
            Step::Disconnect { .. } => "disconnect",
            Step::Restart { .. } => "restart",
            Step::UserMessage { .. } => "user_message",
            Step::Respond { .. } => "respond",
            Step::Rewind { .. } => "rewind",
            Step::Retry { .. } => "retry",
            Step::Cancel { .. } => "cancel",
            Step::Send { .. } => "send",
            Step::SendText { .. } => "send_text",
            Step::SendBinary { .. } => "send_binary",
            Step::SendViolation { .. } => "send_violation",
            Step::Ping { .. } => "ping",
            Step::Expect { .. } => "expect",
            Step::ExpectUnordered { .. } => "expect_unordered",
            Step::ExpectError { .. } => "expect_error",
            Step::ExpectClose { .. } => "expect_close",
            Step::ExpectSilence { .. } => "expect_silence",
            Step::PauseReading { .. } => "pause_reading",
            Step::ExpectState { .. } => "expect_state",
            Step::WaitIdle { .. } => "wait_idle",
            Step::Drain { .. } => "drain",
            Step::Sleep { .. } => "sleep",
            Step::Snapshot { .. } => "snapshot",
        }
    }

    /// The requirements the scenario file names for this step (empty: derived).
    pub fn declared_requirements(&self) -> &[RequirementId] {
        match self {
            Step::Connect { requirements, .. }
            | Step::Resume { requirements, .. }
            | Step::Ping { requirements, .. }
            | Step::Expect { requirements, .. }
            | Step::ExpectUnordered { requirements, .. }
            | Step::ExpectError { requirements, .. }
            | Step::ExpectClose { requirements, .. }
            | Step::ExpectSilence { requirements, .. }
            | Step::ExpectState { requirements, .. }
            | Step::WaitIdle { requirements, .. }
            | Step::Snapshot { requirements, .. } => requirements,
            _ => &[],
        }
    }

    /// The connection the step acts on, if any.
    pub fn conn(&self) -> Option<&str> {
        let name = match self {
            Step::Connect { conn, .. }
            | Step::Resume { conn, .. }
            | Step::Disconnect { conn }
            | Step::UserMessage { conn, .. }
            | Step::Respond { conn, .. }
            | Step::Rewind { conn, .. }
            | Step::Retry { conn, .. }
            | Step::Cancel { conn, .. }
            | Step::Send { conn, .. }
            | Step::SendText { conn, .. }
            | Step::SendBinary { conn, .. }
            | Step::SendViolation { conn, .. }
            | Step::Ping { conn, .. }
            | Step::Expect { conn, .. }
            | Step::ExpectUnordered { conn, .. }
            | Step::ExpectError { conn, .. }
            | Step::ExpectClose { conn, .. }
            | Step::ExpectSilence { conn, .. }
            | Step::PauseReading { conn, .. }
            | Step::Drain { conn, .. }
            | Step::ExpectState { conn, .. }
            | Step::WaitIdle { conn, .. }
            | Step::Snapshot { conn, .. } => conn,
            Step::Restart { .. } | Step::Sleep { .. } => return None,
        };
        Some(name.as_deref().unwrap_or(DEFAULT_CONN))
    }
}

/// The connection name used when a step names none.
pub const DEFAULT_CONN: &str = "main";

/// Why a scenario file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// Not JSON.
    #[error("{file}: not valid JSON: {message}")]
    NotJson {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// Breaks the meta-schema (`schema/json/scenario.json`).
    #[error("{file}: breaks the scenario schema: {}", .violations.join("; "))]
    Schema {
        /// The file.
        file: String,
        /// `path: message` per violation.
        violations: Vec<String>,
    },
    /// Well-formed, but inconsistent.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Two files declare the same id.
    #[error("scenario id {0} is declared twice")]
    DuplicateId(String),
}

/// Validates scenario files against the meta-schema; build once.
pub struct ScenarioLoader {
    meta: jsonschema::Validator,
}

impl fmt::Debug for ScenarioLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScenarioLoader")
    }
}

impl ScenarioLoader {
    /// Compiles the meta-schema generated from [`Scenario`].
    pub fn new() -> Self {
        let schema = schemars::schema_for!(Scenario).to_value();
        let meta = jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("the generated scenario schema does not compile: {e}"));
        ScenarioLoader { meta }
    }

    /// Parses and checks one scenario file. `file` is its name (`<id>.json`).
    pub fn parse(&self, file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ScenarioError::NotJson { file: file.to_owned(), message: e.to_string() })?;
        let violations: Vec<String> = self
            .meta
            .iter_errors(&value)
            .map(|e| {
                let path = e.instance_path().to_string();
                format!("{}: {e}", if path.is_empty() { "/" } else { &path })
            })
            .collect();
        if !violations.is_empty() {
            return Err(ScenarioError::Schema { file: file.to_owned(), violations });
        }
        let scenario: Scenario = serde_json::from_value(value)
            .map_err(|e| ScenarioError::Schema { file: file.to_owned(), violations: vec![e.to_string()] })?;
        scenario.check_consistency().map_err(|message| ScenarioError::Invalid { file: file.to_owned(), message })?;
        let stem = file.strip_suffix(".json").unwrap_or(file);
        if stem != scenario.id {
            return Err(ScenarioError::Invalid {
                file: file.to_owned(),
                message: format!("id {:?} differs from the file name", scenario.id),
            });
        }
        Ok(scenario)
    }

    /// Parses many files; ids must be unique. Sorted by id.
    pub fn parse_all<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Vec<Scenario>, Vec<ScenarioError>> {
        let mut scenarios = Vec::new();
        let mut errors = Vec::new();
        let mut ids = HashSet::new();
        for (file, text) in files {
            match self.parse(file, text) {
                Ok(s) if !ids.insert(s.id.clone()) => errors.push(ScenarioError::DuplicateId(s.id)),
                Ok(s) => scenarios.push(s),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            scenarios.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(scenarios)
        } else {
            Err(errors)
        }
    }
}

impl Default for ScenarioLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl Scenario {
    /// Every capability the scenario needs, the implicit `conformance_script` included.
    pub fn needed_capabilities(&self) -> Vec<String> {
        let mut caps = self.capabilities.clone();
        if self.script.is_some() && !caps.iter().any(|c| c == "conformance_script") {
            caps.push("conformance_script".to_owned());
        }
        caps
    }

    /// The oldest version a server must negotiate for the scenario to apply: 1.2 where it sends
    /// `chat.cancel` or its script gives a call a `response_schema` (1.2 members a server speaking
    /// only 1.1 refuses); 1.1 where it needs a feature, sends `chat.retry`, or its script uses 1.1
    /// members (`chunks`, `retries`); else 1.0. Where the offer negotiates an older version the
    /// scenario is not applicable (the runner asks on a connection of its own first).
    pub fn needs_version(&self) -> chatwire_schema::ProtocolVersion {
        use chatwire_schema::script::ScriptStep;
        let v = |minor| chatwire_schema::ProtocolVersion { major: 1, minor };
        let turns = self.script.iter().flat_map(|s| s.turns.iter());
        let steps = || turns.clone().flat_map(|t| t.steps.iter().chain(t.retries.iter().flat_map(|r| r.steps.iter())));
        let typed = steps().any(
            |s| matches!(s, ScriptStep::ToolCalls { calls, .. } if calls.iter().any(|c| c.response_schema.is_some())),
        );
        if typed || self.steps.iter().any(|s| matches!(s, Step::Cancel { .. })) {
            return v(2);
        }
        let script_1_1 = turns.clone().any(|t| !t.retries.is_empty())
            || steps().any(|s| {
                matches!(s, ScriptStep::Say { chunks: Some(_), .. } | ScriptStep::Say { chunk_delay_ms: Some(_), .. })
            });
        if script_1_1 || !self.features.is_empty() || self.steps.iter().any(|s| matches!(s, Step::Retry { .. })) {
            return v(1);
        }
        // A connection that offers only later versions needs a server that speaks one of them.
        let offered = self.steps.iter().filter_map(|s| match s {
            Step::Connect { versions: Some(versions), .. } => {
                versions.iter().filter_map(|v| chatwire_schema::ProtocolVersion::parse(v).ok()).min()
            }
            _ => None,
        });
        offered.max().unwrap_or(v(0))
    }

    /// Whether the scenario restarts the backend (needs a runner-started backend).
    pub fn restarts(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Restart { .. }))
    }

    /// Whether a step resumes with the runner's default cursor: the steps a reload variant
    /// (`<id>@reload`) turns into reloads, so the snapshot path is proven where the default run
    /// resumes by catch-up. A resume that names its cursor, `last_seq`, answer or a comparison
    /// tests one path on purpose and is left alone.
    pub fn resumes_by_default(&self) -> bool {
        self.steps.iter().any(Step::is_default_resume)
    }

    /// Names of the snapshots the scenario takes, in step order.
    pub fn snapshot_names(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Snapshot { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// What the schema cannot say: the script runs, connections are opened before use, snapshot
    /// names are unique.
    fn check_consistency(&self) -> Result<(), String> {
        if let Some(script) = &self.script {
            script.validate().map_err(|e| format!("script: {e}"))?;
            if !self.conformance_mode {
                return Err("a scenario outside conformance mode has no script to give".into());
            }
        }
        let mut open: HashSet<&str> = HashSet::new();
        let mut snapshots = HashSet::new();
        for (index, step) in self.steps.iter().enumerate() {
            let at = format!("step {} ({})", index + 1, step.kind());
            match step {
                Step::Connect { .. } | Step::Resume { .. } => {
                    open.insert(step.conn().unwrap_or(DEFAULT_CONN));
                }
                Step::Restart { graceful: true, down_ms: Some(_) } => {
                    return Err(format!("{at}: down_ms is for a kill restart, not a graceful one"));
                }
                Step::Restart { .. } => open.clear(),
                Step::Disconnect { .. } | Step::Drain { .. } => {
                    let name = step.conn().unwrap_or(DEFAULT_CONN);
                    if !open.remove(name) {
                        return Err(format!("{at}: connection {name:?} is not open"));
                    }
                }
                Step::Snapshot { name, .. } => {
                    if !snapshots.insert(name.as_str()) {
                        return Err(format!("{at}: snapshot name {name:?} is used twice"));
                    }
                }
                Step::Sleep { .. } => {}
                _ => {
                    let name = step.conn().unwrap_or(DEFAULT_CONN);
                    if !open.contains(name) {
                        return Err(format!("{at}: connection {name:?} is not open"));
                    }
                }
            }
            if let Step::Connect { versions: Some(versions), .. } = step {
                if versions.is_empty() {
                    return Err(format!("{at}: versions must not be empty"));
                }
            }
            if let Step::Connect { versions, features: Some(_), .. } = step {
                // SESSION-014: the runner keeps the client's rule itself.
                match versions {
                    None => return Err(format!("{at}: features need versions (all 1.1 or later, SESSION-014)")),
                    Some(v) if !offers_only_1_1_or_later(v) => {
                        return Err(format!(
                            "{at}: features are not sent with a version below 1.1 offered (SESSION-014): {}",
                            v.join(", ")
                        ))
                    }
                    Some(_) => {}
                }
            }
            if let Step::Resume { last_seq: Some(_), cursor: Some(_), .. } = step {
                return Err(format!("{at}: last_seq and cursor exclude each other"));
            }
            if let Step::Ping { payload, .. } = step {
                // The schema counts characters; the wire limit is in bytes.
                if payload.len() > 125 {
                    return Err(format!("{at}: a ping payload holds at most 125 bytes, this one {}", payload.len()));
                }
            }
        }
        Ok(())
    }
}

/// Whether every version in `versions` parses and is 1.1 or later, so that `features` may be sent
/// with them (SESSION-014).
pub fn offers_only_1_1_or_later(versions: &[String]) -> bool {
    let v1_1 = chatwire_schema::ProtocolVersion { major: 1, minor: 1 };
    versions.iter().all(|v| chatwire_schema::ProtocolVersion::parse(v).is_ok_and(|v| v >= v1_1))
}

/// Matches `text` against a glob of `*` (any run of characters) and `?` (one character).
pub fn glob_match(glob: &str, text: &str) -> bool {
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    // Classic two-pointer wildcard match with backtracking to the last `*`: linear in practice.
    let (mut gi, mut ti, mut star, mut mark) = (0usize, 0usize, None::<usize>, 0usize);
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_like_a_shell() {
        assert!(glob_match("resume-*", "resume-basic"));
        assert!(glob_match("*tool*", "multi-tool-order"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(!glob_match("resume-*", "rewind-basic"));
        assert!(glob_match("*", ""));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
    }

    fn minimal(steps: &str) -> String {
        format!(r#"{{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],"steps":{steps}}}"#)
    }

    #[test]
    fn parses_a_minimal_scenario() {
        let loader = ScenarioLoader::new();
        let s = loader.parse("x.json", &minimal(r#"[{"do":"connect"},{"do":"wait_idle"}]"#)).unwrap();
        assert_eq!(s.steps.len(), 2);
        assert_eq!(s.steps[0].conn(), Some("main"));
        assert!(matches!(s.steps[0], Step::Connect { with_script: true, hello: true, .. }));
    }

    #[test]
    fn refuses_unknown_steps_fields_and_bad_ids() {
        let loader = ScenarioLoader::new();
        let err = loader.parse("x.json", &minimal(r#"[{"do":"teleport"}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
        let err = loader.parse("x.json", &minimal(r#"[{"do":"connect","colour":"red"}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
        let err = loader.parse("y.json", &minimal(r#"[{"do":"connect"}]"#)).unwrap_err();
        assert!(err.to_string().contains("differs from the file name"), "{err}");
        let bad_req = r#"{"id":"x","title":"t","level":"must","requirements":["seq1"],"steps":[{"do":"connect"}]}"#;
        assert!(matches!(loader.parse("x.json", bad_req), Err(ScenarioError::Schema { .. })));
        assert!(matches!(loader.parse("x.json", "{"), Err(ScenarioError::NotJson { .. })));
    }

    #[test]
    fn refuses_steps_on_connections_never_opened() {
        let loader = ScenarioLoader::new();
        let err = loader.parse("x.json", &minimal(r#"[{"do":"user_message","text":"hi"}]"#)).unwrap_err();
        assert!(err.to_string().contains("is not open"), "{err}");
        let err = loader
            .parse("x.json", &minimal(r#"[{"do":"connect"},{"do":"restart"},{"do":"expect","frame":{}}]"#))
            .unwrap_err();
        assert!(err.to_string().contains("is not open"), "{err}");
        let dup = r#"[{"do":"connect"},{"do":"snapshot","name":"a"},{"do":"snapshot","name":"a"}]"#;
        assert!(loader.parse("x.json", &minimal(dup)).unwrap_err().to_string().contains("used twice"));
    }

    #[test]
    fn ping_payloads_and_plain_mode_are_checked() {
        let loader = ScenarioLoader::new();
        let ok =
            loader.parse("x.json", &minimal(r#"[{"do":"connect","subprotocol":false},{"do":"ping","payload":"hi"}]"#));
        assert!(matches!(ok.unwrap().steps[0], Step::Connect { subprotocol: false, .. }));
        // 42 three-byte characters: 42 characters fit the schema, 126 bytes do not fit a control frame.
        let long = format!(r#"[{{"do":"connect"}},{{"do":"ping","payload":"{}"}}]"#, "€".repeat(42));
        assert!(loader.parse("x.json", &minimal(&long)).unwrap_err().to_string().contains("125 bytes"));
        let script = r#"{"turns":[{"steps":[{"op":"say","markdown":"x"}]}]}"#;
        let plain = format!(
            r#"{{"id":"x","title":"t","level":"must","requirements":["SCRIPT-003"],"conformance_mode":false,"script":{script},"steps":[{{"do":"connect"}}]}}"#
        );
        assert!(loader.parse("x.json", &plain).unwrap_err().to_string().contains("no script"));
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let loader = ScenarioLoader::new();
        let text = minimal(r#"[{"do":"connect"}]"#);
        let errors = loader.parse_all([("x.json", text.as_str()), ("x.json", text.as_str())]).unwrap_err();
        assert_eq!(errors, vec![ScenarioError::DuplicateId("x".into())]);
    }
}
