//! One step of a scenario (`Scenario::steps`), the resume cursors and answers a step names, and
//! the WebSocket violations a step can send.

use chatwire_schema::ErrorCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A requirement id such as `SEQ-001` (well formed by construction; whether the spec defines it is
/// checked by a test against the registry).
pub type RequirementId = chatwire_schema::ReqId;

/// Name of a connection inside a scenario; steps without `conn` use `main`.
pub type ConnName = Option<String>;

/// The connection name used when a step names none.
pub const DEFAULT_CONN: &str = "main";

/// The name of the second tab a reconnect sweep keeps attached beside the main connection
/// (`run --sweep-watch`): a name the runner gives a connection of its own.
pub const SWEEP_WATCH: &str = "sweep-watch";

pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn is_true(b: &bool) -> bool {
    *b
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

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
        /// The replica (0-based) the connection goes to, where the backend is a cluster (`run
        /// --replicas N`); needs the scenario's `replicas` above it. Absent: the runner spreads
        /// connections round-robin, and a connection that reconnects goes to another replica than
        /// it was on (see `Scenario::replicas`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 7))]
        replica: Option<u32>,
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
        /// `session.hello.window` (since 1.2, `WINDOW-001`) in place of the scenario's `window`;
        /// 0 asks for none. A hello with a window offers only the runner's versions from 1.2 on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 1000))]
        window: Option<u32>,
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
        /// The replica (0-based) the new connection goes to (both, with `compare_with_snapshot`), where the backend is a cluster (`run
        /// --replicas N`); needs the scenario's `replicas` above it. Absent: the runner spreads
        /// connections round-robin, and a connection that reconnects goes to another replica than
        /// it was on (see `Scenario::replicas`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 7))]
        replica: Option<u32>,
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
        /// Take the session over from its other connections (since 1.2, `ATTACH-002`): where the
        /// session negotiated 1.2 or later, the resume offers only 1.1 and later with `features`
        /// that leave `multi_attach` out; on older sessions every resume takes over.
        #[serde(default, skip_serializing_if = "is_false")]
        takeover: bool,
        /// `session.hello.window` in place of the scenario's `window`, as for `connect`; a
        /// windowed resume sends the cursor of the view the connection held as `resume.before`
        /// (`WINDOW-012`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 1000))]
        window: Option<u32>,
    },
    /// Close the connection with code 1000 and wait for the close to complete.
    Disconnect {
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
    },
    /// Kill one replica of the cluster (its whole process group) with SIGKILL, as a crashed
    /// instance. Every connection on it is gone afterwards (a connection whose replica the
    /// scenario does not name may have been on it, so the scenario must resume it before use).
    /// Only with a backend the runner starts; not applicable with `--url`.
    KillReplica {
        /// The replica, 0-based; below the scenario's `replicas`.
        #[schemars(range(max = 7))]
        replica: u32,
        /// Start it again after this many ms (not scaled; the step waits). Absent: it stays down
        /// until `start_replica`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 60000))]
        down_ms: Option<u64>,
    },
    /// Start a replica killed by `kill_replica` again, on the same port and store, and wait until
    /// it is ready.
    StartReplica {
        /// The replica, 0-based.
        #[schemars(range(max = 7))]
        replica: u32,
    },
    /// Stop one replica with SIGSTOP (a hung instance): it keeps its connections and leases but
    /// answers nothing until `continue_replica`. A resume of a connection on it drops that
    /// connection without a closing handshake.
    PauseReplica {
        /// The replica, 0-based.
        #[schemars(range(max = 7))]
        replica: u32,
    },
    /// Continue a replica stopped by `pause_replica` (SIGCONT).
    ContinueReplica {
        /// The replica, 0-based.
        #[schemars(range(max = 7))]
        replica: u32,
    },
    /// Kill the backend with SIGKILL and start it again on the same storage. Only possible when the
    /// runner started the backend (`--exec` or the bundled one); not applicable with `--url`.
    /// Every open connection is gone afterwards. On a cluster: every replica (down ones are
    /// started too, paused ones killed as well).
    Restart {
        /// Shut down in an orderly way instead: SIGTERM, then every open connection must be closed
        /// with close code 1001 (TRANSPORT-009); a backend still running 10 s (scaled) later is
        /// killed. Then it is started again on the same storage (on a cluster: every replica, a
        /// paused one continued so that it gets the signal).
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
    /// every event another connection of the session already got has arrived too (on a cluster a
    /// tab on another instance hears of events later, `CLUSTER-006`), and no frame arrived for
    /// `quiet_ms`.
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
        /// Once `bytes` arrived, read on until no frame came for this many ms (not scaled): the
        /// pace's turn is over, and so, by the same measure, is the paused session's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 60000))]
        quiet_ms: Option<u64>,
        /// Step deadline in ms before `--timeout-scale` (default 5000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Page a windowed connection back to the session's first item (since 1.2, `WINDOW-009`): send
    /// `chat.history_request` with its current cursor and `limit` until a `chat.history_page`
    /// comes without `before`; the monitor checks each page and the view they build.
    PageThrough {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// Connection name (default `main`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: ConnName,
        /// Items per page, 1 to 500.
        #[schemars(range(min = 1, max = 500))]
        limit: u32,
    },
    /// Attach connections named `<prefix>-1`, `<prefix>-2`, … (each a resume, `ATTACH-001`) until
    /// as many are open as the latest welcome's `limits.max_attached_connections` (since 1.2,
    /// `ATTACH-003`); a bound above 64 makes the scenario not applicable.
    AttachToBound {
        /// The requirement ids this step proves; when absent they are derived from the step and the
        /// scenario's ids (rules: conformance/src/attribution.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requirements: Vec<RequirementId>,
        /// The names of the new connections start with this.
        prefix: String,
        /// The replica (0-based) every new connection goes to, as for `connect`; absent: spread
        /// round-robin.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(max = 7))]
        replica: Option<u32>,
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
            Step::KillReplica { .. } => "kill_replica",
            Step::StartReplica { .. } => "start_replica",
            Step::PauseReplica { .. } => "pause_replica",
            Step::ContinueReplica { .. } => "continue_replica",
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
            Step::PageThrough { .. } => "page_through",
            Step::Sleep { .. } => "sleep",
            Step::AttachToBound { .. } => "attach_to_bound",
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
            | Step::AttachToBound { requirements, .. }
            | Step::PageThrough { requirements, .. }
            | Step::Snapshot { requirements, .. } => requirements,
            // Actions: what they assert is derived (attribution.rs).
            Step::Disconnect { .. }
            | Step::Restart { .. }
            | Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. }
            | Step::UserMessage { .. }
            | Step::Respond { .. }
            | Step::Rewind { .. }
            | Step::Retry { .. }
            | Step::Cancel { .. }
            | Step::Send { .. }
            | Step::SendText { .. }
            | Step::SendBinary { .. }
            | Step::SendViolation { .. }
            | Step::PauseReading { .. }
            | Step::Drain { .. }
            | Step::Sleep { .. } => &[],
        }
    }

    /// The replica the connections this step opens go to, where it names one (`connect`,
    /// `resume`, `attach_to_bound`).
    pub fn opens_on(&self) -> Option<u32> {
        match self {
            Step::Connect { replica, .. } | Step::Resume { replica, .. } | Step::AttachToBound { replica, .. } => {
                *replica
            }
            Step::Disconnect { .. }
            | Step::Restart { .. }
            | Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. }
            | Step::UserMessage { .. }
            | Step::Respond { .. }
            | Step::Rewind { .. }
            | Step::Retry { .. }
            | Step::Cancel { .. }
            | Step::Send { .. }
            | Step::SendText { .. }
            | Step::SendBinary { .. }
            | Step::SendViolation { .. }
            | Step::Ping { .. }
            | Step::Expect { .. }
            | Step::ExpectUnordered { .. }
            | Step::ExpectError { .. }
            | Step::ExpectClose { .. }
            | Step::ExpectSilence { .. }
            | Step::PauseReading { .. }
            | Step::ExpectState { .. }
            | Step::WaitIdle { .. }
            | Step::Drain { .. }
            | Step::PageThrough { .. }
            | Step::Sleep { .. }
            | Step::Snapshot { .. } => None,
        }
    }

    /// The replica the step kills, starts, pauses or continues.
    pub fn acts_on_replica(&self) -> Option<u32> {
        match self {
            Step::KillReplica { replica, .. }
            | Step::StartReplica { replica }
            | Step::PauseReplica { replica }
            | Step::ContinueReplica { replica } => Some(*replica),
            Step::Connect { .. }
            | Step::Resume { .. }
            | Step::AttachToBound { .. }
            | Step::Disconnect { .. }
            | Step::Restart { .. }
            | Step::UserMessage { .. }
            | Step::Respond { .. }
            | Step::Rewind { .. }
            | Step::Retry { .. }
            | Step::Cancel { .. }
            | Step::Send { .. }
            | Step::SendText { .. }
            | Step::SendBinary { .. }
            | Step::SendViolation { .. }
            | Step::Ping { .. }
            | Step::Expect { .. }
            | Step::ExpectUnordered { .. }
            | Step::ExpectError { .. }
            | Step::ExpectClose { .. }
            | Step::ExpectSilence { .. }
            | Step::PauseReading { .. }
            | Step::ExpectState { .. }
            | Step::WaitIdle { .. }
            | Step::Drain { .. }
            | Step::PageThrough { .. }
            | Step::Sleep { .. }
            | Step::Snapshot { .. } => None,
        }
    }

    /// Whether the step needs processes the runner controls: a restart, or a step on one replica.
    pub fn controls_processes(&self) -> bool {
        matches!(self, Step::Restart { .. }) || self.acts_on_replica().is_some()
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
            | Step::PageThrough { conn, .. }
            | Step::ExpectState { conn, .. }
            | Step::WaitIdle { conn, .. }
            | Step::Snapshot { conn, .. } => conn,
            Step::Restart { .. }
            | Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. }
            | Step::Sleep { .. }
            | Step::AttachToBound { .. } => return None,
        };
        Some(name.as_deref().unwrap_or(DEFAULT_CONN))
    }
}
