//! The one seam between the server core and planted faults ([`crate::fault`]).
//!
//! The core calls these hooks at the edges of its layers: the transport (upgrade, shutdown), the
//! refusal path, the handshake (capabilities, token check, resume snapshot), emission (what is
//! applied, logged, announced and presented, and the moment before the commit), loading from
//! the database, and arming deadlines. Request handlers and the run driver call none of them.
//! Every default is the identity, which is what a correct server does.

use std::borrow::Cow;
use std::sync::Arc;

use chatwire_schema::script::ScriptError;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{ClientFrame, DisplayItem, Id, ProtocolVersion, ServerFrame, UiState};

use crate::agent::Agent;
use crate::session::Refusal;
use crate::transport::ConnHandle;

/// What the connection does with a refused frame.
#[derive(Debug)]
pub(crate) enum RefusalAction {
    /// Send the typed `error` (the correct behaviour).
    Answer,
    /// Send nothing.
    Ignore,
    /// Drop the connection without an answer.
    Drop,
    /// Send this frame (its seq stamped) instead of the error.
    Instead(Box<ServerFrame>),
}

/// Hooks at the seams of the server core; the defaults are the correct server.
pub(crate) trait Hooks: Send + Sync + std::fmt::Debug {
    /// Transport: refuse an upgrade that offers no subprotocol.
    fn requires_subprotocol(&self) -> bool {
        false
    }

    /// Transport: close open connections with 1001 on an orderly shutdown.
    fn closes_on_shutdown(&self) -> bool {
        true
    }

    /// Parse: a refusal for a frame the frame validator accepts (`None`: the frame is accepted).
    fn refuses_valid_frame(&self, _frame: &serde_json::Value) -> Option<Refusal> {
        None
    }

    /// Parse: whether numbers beyond ±(2^53 − 1) inside opaque values are refused (`INT-002`).
    fn bounds_opaque_numbers(&self) -> bool {
        true
    }

    /// Refusals: how a refused `request` (when it parsed) is answered.
    fn on_refusal(&self, _refusal: &Refusal, _request: Option<&ClientFrame>) -> RefusalAction {
        RefusalAction::Answer
    }

    /// Handshake: play scripts even outside conformance mode.
    fn accepts_scripts_anywhere(&self) -> bool {
        false
    }

    /// Handshake: whether a script that fails validation with `error` is refused (`invalid_script`).
    fn refuses_script(&self, _error: &ScriptError) -> bool {
        true
    }

    /// Handshake: whether a resume's `last_seq` is checked before its token.
    fn checks_cursor_before_token(&self) -> bool {
        false
    }

    /// Handshake: the capabilities listed in `session.welcome`.
    fn capabilities(&self, caps: Vec<Capability>) -> Vec<Capability> {
        caps
    }

    /// Handshake: the welcome's `features`, given the features in force (`None` on 1.0).
    fn welcome_features(&self, in_force: Option<Vec<Capability>>) -> Option<Vec<Capability>> {
        in_force
    }

    /// Handshake: whether a connection that negotiated `version` gets patches, given whether
    /// `ui_state_patch` is in force on it.
    fn sends_patches(&self, in_force: bool, _version: ProtocolVersion) -> bool {
        in_force
    }

    /// Catch-up: how many of the `before` events committed before the resume's `last_seq` the
    /// patch's base state folds (all of them: the state of `last_seq`).
    fn catch_up_split(&self, before: usize) -> usize {
        before
    }

    /// Catch-up: whether a catch-up may be put together from the patches of the events committed
    /// in this process, rather than from a fold of the log.
    fn catch_up_from_memory(&self) -> bool {
        true
    }

    /// Catch-up: the ops put on the wire in the catch-up patch that answers a resume (`RESUME-017`).
    fn catch_up_patch(&self, ops: Vec<PatchOp>) -> Vec<PatchOp> {
        ops
    }

    /// Handshake: whether a resume token is accepted, given whether it matched.
    fn token_matches(&self, matches: bool) -> bool {
        matches
    }

    /// Handshake: the state sent in the resume snapshot, or `None` to send no snapshot.
    fn resume_snapshot<'s>(&self, state: &'s UiState) -> Option<Cow<'s, UiState>> {
        Some(self.present(state, true))
    }

    /// Emit: a frame applied to the state in place of `frame` (which is still announced).
    fn applied_instead(&self, _frame: &ServerFrame, _state: &UiState) -> Option<ServerFrame> {
        None
    }

    /// Emit: whether an applied event is written to the log.
    fn persists(&self, _frame: &ServerFrame) -> bool {
        true
    }

    /// Load and emit: whether the session's state is checkpointed (`store::Checkpoint`). A
    /// checkpoint is taken of the state in memory, which some faults make differ from the log.
    fn checkpoints(&self) -> bool {
        true
    }

    /// Emit: the frame put on the wire for an applied event.
    fn announce(&self, frame: ServerFrame) -> ServerFrame {
        frame
    }

    /// Emit: the first delta announced on a connection that resumed mid-stream (`STREAM-003`),
    /// given the text of the delta committed before it; `None` sends nothing.
    fn first_delta_after_resume(&self, frame: ServerFrame, _previous: Option<&str>) -> Option<ServerFrame> {
        Some(frame)
    }

    /// Emit: the frame put on the wire for the `chat.assistant_message` that ends a stream
    /// (after [`Hooks::announce`]).
    fn announce_stream_end(&self, frame: ServerFrame) -> ServerFrame {
        frame
    }

    /// Emit: the state put on the wire in `ui_state_updated` (`snapshot` false) or `ui_state_snapshot`.
    fn present<'s>(&self, state: &'s UiState, _snapshot: bool) -> Cow<'s, UiState> {
        Cow::Borrowed(state)
    }

    /// Emit: the ops put on the wire in a `ui_state_patch`.
    fn patch(&self, ops: Vec<PatchOp>) -> Vec<PatchOp> {
        ops
    }

    /// Emit: the `base_seq` put on the wire in a `ui_state_patch`, given the right one.
    fn patch_base_seq(&self, base_seq: u64) -> u64 {
        base_seq
    }

    /// Transport: the bound on a connection's unsent bytes (`TRANSPORT-016`), `None` for none.
    fn send_queue_bound(&self, bound: usize) -> Option<usize> {
        Some(bound)
    }

    /// Transport: how long one write to the socket may block before the connection is dropped,
    /// given the configured one and the liveness deadline (two idle periods, `TRANSPORT-011`).
    fn write_timeout(&self, write: std::time::Duration, _liveness: std::time::Duration) -> std::time::Duration {
        write
    }

    /// Handshake: whether a resume attaches (`multi_attach` in force, `ATTACH-001`) rather than
    /// taking the session over.
    fn attaches(&self, in_force: bool) -> bool {
        in_force
    }

    /// Fan-out: whether the events of a change a request caused go to its sender alone.
    fn events_only_to_requester(&self) -> bool {
        false
    }

    /// Fan-out: whether answers go to every attached connection, not only the requester's.
    fn answers_to_all(&self) -> bool {
        false
    }

    /// Fan-out: whether a change waits until every attached connection has taken its frames.
    fn fan_out_waits_for_slowest(&self) -> bool {
        false
    }

    /// Windows: whether a window holds the always-held items older than it (`WINDOW-003`).
    fn pins_older_items(&self) -> bool {
        true
    }

    /// Windows: whether a windowed connection's patches are projected onto its view (`WINDOW-005`).
    fn projects_patches(&self) -> bool {
        true
    }

    /// Windows: the items a `chat.history_page` carries, given the right ones and the cursor item.
    fn page_items(&self, items: Vec<DisplayItem>, _cursor_item: Option<&DisplayItem>) -> Vec<DisplayItem> {
        items
    }

    /// Windows: whether pages come from a copy of the older items taken when the window opened,
    /// for any cursor that copy holds (`WINDOW-010`).
    fn pages_from_cache(&self) -> bool {
        false
    }

    /// Emit: called with the frames of a change right before it is committed.
    fn before_commit(&self, _wire: &[String], _conn: Option<&ConnHandle>) {}

    /// Load: the first unused seq of a session read from the database.
    fn loaded_next_seq(&self, stored: u64) -> u64 {
        stored
    }

    /// Load: whether a turn whose tool was running when the server stopped is continued (the tool
    /// run again) instead of ended as interrupted (`SCRIPT-015`).
    fn continues_interrupted_turns(&self) -> bool {
        false
    }

    /// Load: whether recovery ends a stream that was open when the server stopped (`STREAM-004`).
    fn ends_open_streams(&self) -> bool {
        true
    }

    /// Load: the agent a session runs, given the one it names.
    fn agent(&self, agent: Arc<dyn Agent>) -> Arc<dyn Agent> {
        agent
    }

    /// Deadlines: the deadline (ms since the epoch) re-armed at load for a call whose stored one is
    /// `stored`; `expire_after_ms` is the call's own duration, when known.
    fn reloaded_deadline(&self, stored: i64, _expire_after_ms: Option<u64>) -> i64 {
        stored
    }

    /// Deadlines: whether tool-call deadlines are acted on.
    fn arms_deadlines(&self) -> bool {
        true
    }

    /// Cancel: the invocation a `chat.cancel` is checked against and stops, given the one it
    /// named and the session's state (`CANCEL-001`: always the named one).
    fn cancel_target(&self, named: &Id, _state: &UiState) -> Id {
        named.clone()
    }

    /// Cancel: whether an accepted cancel closes the run (`CANCEL-003`); `false` answers it and
    /// lets the run go on.
    fn cancel_closes_run(&self) -> bool {
        true
    }

    /// Cancel: the text the end of a cancelled stream carries, given the text streamed so far
    /// (`CANCEL-004`).
    fn cancelled_stream_text(&self, streamed: String) -> String {
        streamed
    }

    /// Cancel: whether a tool that was running when its run was cancelled still reports its
    /// result when it finishes (`CANCEL-005`: never).
    fn settles_after_cancel(&self) -> bool {
        false
    }

    /// Responses: whether a response's value is checked against its call's `response_schema`
    /// before it is accepted (`TOOL-023`).
    fn checks_response_schema(&self) -> bool {
        true
    }

    /// Cluster: whether the run holder's commits are fenced by its lease token (`CLUSTER-003`).
    fn fences_commits(&self) -> bool {
        true
    }

    /// Cluster: whether a replica reads what others committed before it judges a request or
    /// commits, and commits only from the newest seq (`CLUSTER-002`).
    fn syncs_before_commit(&self) -> bool {
        true
    }

    /// Cluster: whether other replicas are told of a commit after which the session is
    /// `active` (its run or calls still open) or not (`CLUSTER-006`).
    fn notifies(&self, _active: bool) -> bool {
        true
    }

    /// Cluster: whether a replica claims leases nobody renewed and recovers their sessions
    /// (`CLUSTER-004`), rather than waiting for the replica that held them to restart.
    fn reaps_expired_leases(&self) -> bool {
        true
    }
}
