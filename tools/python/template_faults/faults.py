"""Planted faults in the template backend: the corpus by which the template kill matrix measures the
conformance suite on a backend nobody on the suite's side wrote.

Not part of the template: a team that copies `template/` gets none of this. `serve.py` starts the
template with one fault planted (`--fault NAME`). Each fault is a small change of the template's
behaviour that a team writing a 1.0-1.3 backend could plausibly ship, made by wrapping or replacing
one function of the template (or of what it imports) at start-up, so the template's files stay as a
team copies them. What each fault breaks, and which scenarios show it, is data:
`corpus.json` beside this file, which `conformance/tests/template_kill_matrix.rs` runs.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import chatwire.view
import fanout
import sessions
import turns
from chatwire import older_minor
from chatwire.attach import MIN_ATTACHED_CONNECTIONS
from chatwire.usage import slice_usage
from core import HubCore, JsonObject, Refusal, Session, Unit, now_ts
from fanout import DELTA, FanOut, Peer
from negotiation import TEMPLATE_VERSIONS, Negotiated, negotiate
from sessions import Hub
from store import Commit, Store
from turns import open_calls, tool_call

Plant = Callable[[], None]


@dataclass(frozen=True)
class Fault:
    """One planted fault: its name and the function that plants it."""

    name: str
    plant: Plant


FAULTS: Final[dict[str, Fault]] = {}


def fault(name: str) -> Callable[[Plant], Plant]:
    """Registers the decorated function as the planting of fault `name`."""

    def register(plant: Plant) -> Plant:
        assert name not in FAULTS, f"fault {name} is registered twice"
        FAULTS[name] = Fault(name, plant)
        return plant

    return register


def plant(name: str) -> None:
    """Plants fault `name` into the template's modules; KeyError for an unknown name."""
    FAULTS[name].plant()


def _wrap(owner: object, attribute: str, make: Callable[[Any], Any]) -> None:
    """Replaces `owner.attribute` by `make(original)`."""
    setattr(owner, attribute, make(getattr(owner, attribute)))


# ---------------------------------------------------------------- 1.0


@fault("duplicate-checked-after-run")
def _duplicate_checked_after_run() -> None:
    """The user message's checks in the wrong order: a run in progress is refused before the id is
    looked up, so a resent message that was accepted gets run_in_progress."""

    def make(original: Any) -> Any:
        def user_message(self: Hub, s: Session, origin: Peer, msg: JsonObject) -> None:
            if s.state["run"]["status"] == "running":
                raise Refusal("run_in_progress", "a run is in progress; wait for run_complete")
            original(self, s, origin, msg)

        return user_message

    _wrap(Hub, "_user_message", make)


@fault("settled-call-not-awaiting")
def _settled_call_not_awaiting() -> None:
    """Every call that is not pending "does not await a response": a response to a settled call
    gets tool_call_not_awaiting instead of tool_call_settled."""

    def make(original: Any) -> Any:
        def tool_call_response(self: Hub, s: Session, origin: Peer, response: JsonObject) -> None:
            call = tool_call(s.state, response["tool_call_id"])
            if call is not None and call["status"] != "pending":
                raise Refusal("tool_call_not_awaiting", f"tool call {call['id']} does not await a response")
            original(self, s, origin, response)

        return tool_call_response

    _wrap(Hub, "_tool_call_response", make)


@fault("error-reuses-seq")
def _error_reuses_seq() -> None:
    """An error changes nothing, so it gets no seq of its own: it carries the seq of the latest
    frame the session sent."""

    def send_session_error(self: HubCore, s: Session, peer: Peer, refusal: Refusal, in_reply_to: str | None) -> None:
        frame = self.error_frame(refusal.code, refusal.message, in_reply_to, s.next_seq - 1)
        peer.send_text(fanout.dumps(frame))

    setattr(HubCore, "send_session_error", send_session_error)


@fault("pending-dismissed-on-disconnect")
def _pending_dismissed_on_disconnect() -> None:
    """When the last connection of a session goes, its pending forms are dismissed by the server
    ("nobody is there to answer them"), so a client that comes back finds them closed."""

    def make(original: Any) -> Any:
        def detach(self: Hub, s: Session, peer: Peer) -> None:
            leaving = s.attachment(peer) is not None
            s.attached = [a for a in s.attached if a.peer is not peer]
            pending = [c["id"] for c in open_calls(s.state, None) if c["status"] == "pending"]
            if leaving and not s.attached and pending:
                ts = now_ts()
                units: list[Unit] = [
                    [{"type": "chat.tool_call_dismiss", "tool_call_id": c, "initiated_by": "server", "reason": "client_gone", "ts": ts}]
                    for c in pending
                ]
                self.emit(s, units, remove_timers=tuple(pending))
            original(self, s, peer)

        return detach

    _wrap(Hub, "detach", make)


@fault("rewind-replays-script")
def _rewind_replays_script() -> None:
    """After a rewind the agent's turn counter is the number of user messages left in the state,
    so the next message plays a rewound turn's script again instead of the next turn."""

    def make(original: Any) -> Any:
        def rewind(self: Hub, s: Session, origin: Peer, request: JsonObject) -> None:
            original(self, s, origin, request)
            kept = sum(1 for item in s.state["items"] if item["kind"] == "user_message")
            self.store.commit(s.id, Commit(next_seq=s.next_seq, turns=kept))
            s.turns = kept

        return rewind

    _wrap(Hub, "_rewind", make)


@fault("rewind-without-state-frame")
def _rewind_without_state_frame() -> None:
    """`chat.rewind_complete` says what to cut, so no state frame follows it: the connections keep
    the state before the cut as the base of their next patch or update."""

    def make_event(original: Any) -> Any:
        def event(self: FanOut, frame: JsonObject, before: JsonObject) -> None:
            setattr(self, "_fault_rewound", frame["type"] == "chat.rewind_complete")
            original(self, frame, before)

        return event

    def make_state_frame(original: Any) -> Any:
        def state_frame(self: FanOut, state: JsonObject, seq: int, ops: Any, reasoning_only: bool = False) -> None:
            if not getattr(self, "_fault_rewound", False):
                original(self, state, seq, ops, reasoning_only)

        return state_frame

    _wrap(FanOut, "event", make_event)
    _wrap(FanOut, "state_frame", make_state_frame)


@fault("welcome-lists-newest-capabilities")
def _welcome_lists_newest_capabilities() -> None:
    """The welcome's capabilities are everything the server implements, whatever version the
    connection negotiated: a 1.0 welcome lists retry, ui_state_patch, cancel…"""

    def make(original: Any) -> Any:
        def capabilities(n: Negotiated, *, conformance: bool) -> list[str]:
            caps: list[str] = original(Negotiated(TEMPLATE_VERSIONS[0], n.features), conformance=conformance)
            return caps

        return capabilities

    _wrap(sessions, "capabilities", make)


# ---------------------------------------------------------------- 1.1


@fault("delta-not-a-patch-base")
def _delta_not_a_patch_base() -> None:
    """A delta has no state frame, so it is not taken as one: the patch after a stream names the
    state frame before it as its base."""
    setattr(FanOut, "moved_by_deltas", lambda self, seq, frame_type: None)


@fault("deltas-to-every-connection")
def _deltas_to_every_connection() -> None:
    """Deltas go to every attached connection that knows the frame type, also where
    assistant_stream is not in force."""

    def make(original: Any) -> Any:
        def event(self: FanOut, frame: JsonObject, before: JsonObject) -> None:
            if frame["type"] != DELTA:
                original(self, frame, before)
                return
            for outgoing in getattr(self, "_out"):
                outgoing.frames.append(frame)

        return event

    _wrap(FanOut, "event", make)


@fault("catch-up-from-any-seq")
def _catch_up_from_any_seq() -> None:
    """Any `last_seq` above 0 is taken as a state the client holds: the log is folded up to it,
    even when it names an event, a welcome or an error."""

    def make(original: Any) -> Any:
        def catch_up_log(self: Store, session_id: str, last_seq: int, retention: int) -> Any:
            if last_seq > 0:
                db = getattr(self, "_db")
                db.execute("INSERT OR IGNORE INTO state_frames (session_id, seq, streams) VALUES (?, ?, 0)", (session_id, last_seq))
            return original(self, session_id, last_seq, retention)

        return catch_up_log

    _wrap(Store, "catch_up_log", make)


@fault("retention-off-by-one")
def _retention_off_by_one() -> None:
    """The retention is counted with `>=`: a resume that missed exactly `resume_retention` events
    gets a snapshot instead of a catch-up."""

    def make(original: Any) -> Any:
        def catch_up_log(self: Store, session_id: str, last_seq: int, retention: int) -> Any:
            return original(self, session_id, last_seq, retention - 1)

        return catch_up_log

    _wrap(Store, "catch_up_log", make)


@fault("retry-count-per-message")
def _retry_count_per_message() -> None:
    """The retries of a turn are counted in memory since the latest user message: a new message
    (later rewound) or a restart starts the count again, so a retry replays an earlier retry's steps."""
    counts: dict[tuple[str, str], int] = {}

    def make_user_message(original: Any) -> Any:
        def user_message(self: Hub, s: Session, origin: Peer, msg: JsonObject) -> None:
            original(self, s, origin, msg)
            for key in [k for k in counts if k[0] == s.id]:
                del counts[key]

        return user_message

    def make_turn_and_retries(original: Any) -> Any:
        def turn_and_retries(self: Store, session_id: str, invocation_id: str) -> tuple[int, int]:
            turn, _ = original(self, session_id, invocation_id)
            retries = counts.get((session_id, invocation_id), 0)
            counts[(session_id, invocation_id)] = retries + 1
            return int(turn), retries

        return turn_and_retries

    _wrap(Hub, "_user_message", make_user_message)
    _wrap(Store, "turn_and_retries", make_turn_and_retries)


@fault("welcome-lists-implemented-features")
def _welcome_lists_implemented_features() -> None:
    """The welcome's `features` lists every feature the server implements for the negotiated
    version, not those the hello asked for; what is sent follows the hello."""

    def make(original: Any) -> Any:
        def dumps(frame: JsonObject) -> str:
            if frame["type"] == "session.welcome" and "features" in frame:
                implemented = negotiate(TEMPLATE_VERSIONS, {"versions": [frame["version"]]}).features
                frame = {**frame, "features": list(implemented or ())}
            text: str = original(frame)
            return text

        return dumps

    _wrap(sessions, "dumps", make)


@fault("snapshot-holds-open-stream")
def _snapshot_holds_open_stream() -> None:
    """The resume snapshot is the session's state as it is: a connection without assistant_stream
    gets the open stream item too (the patches leave it out, as they should)."""

    def make(original: Any) -> Any:
        def snapshot(seq: int, state: JsonObject, n: Negotiated, window: Any) -> JsonObject:
            streaming = Negotiated(n.version, (*(n.features or ()), "assistant_stream"))
            frame: JsonObject = original(seq, state, streaming, window)
            return frame

        return snapshot

    _wrap(sessions, "snapshot", make)


# ---------------------------------------------------------------- 1.2


@fault("invalid-response-fails-call")
def _invalid_response_fails_call() -> None:
    """A value that breaks the call's response_schema is refused, and the call is then settled
    `failed` as a rejected value (TOOL-016's "the tool rejects the value"), so the turn goes on."""

    def make(original: Any) -> Any:
        def tool_call_response(self: Hub, s: Session, origin: Peer, response: JsonObject) -> None:
            try:
                original(self, s, origin, response)
            except Refusal as refusal:
                if refusal.code not in ("response_invalid", "invalid_frame"):
                    raise
                self.send_session_error(s, origin, refusal, response["id"])
                call_id = response["tool_call_id"]
                invocation = (tool_call(s.state, call_id) or {})["invocation_id"]
                reopens = s.state["run"]["status"] != "running"
                units: list[Unit] = []
                if reopens:
                    units.append([{"type": "chat.run_started", "invocation_id": invocation, "ts": now_ts()}])
                failed = {"type": "chat.tool_call_complete", "tool_call_id": call_id, "status": "failed", "error": refusal.message, "in_reply_to": response["id"], "ts": now_ts()}
                units.append([failed])
                self.emit(s, units, origin=origin, requests=(response,), remove_timers=(call_id,))
                if reopens:
                    self.start_driver(s)

        return tool_call_response

    _wrap(Hub, "_tool_call_response", make)


@fault("response-schema-on-older-events")
def _response_schema_on_older_events() -> None:
    """`response_schema` is left out of an older connection's states and patches, but not of the
    `chat.tool_call` event it receives."""

    def frame(server_frame: JsonObject, version: str) -> JsonObject | None:
        if server_frame["type"] == "chat.tool_call":
            return server_frame
        return older_minor.frame(server_frame, version)

    # What a connection sees is `chatwire.view.ConnView`, which takes the minor's shapes from older_minor.
    shim = types.SimpleNamespace(frame=frame, patch=older_minor.patch, state=older_minor.state)
    setattr(chatwire.view, "older_minor", shim)


@fault("cancel-refusals-run-first")
def _cancel_refusals_run_first() -> None:
    """A cancel is first checked against the current run: one naming an invocation the state does
    not hold is refused run_not_active instead of unknown_invocation."""

    def make(original: Any) -> Any:
        def cancel_refusals(state: JsonObject, invocation_id: str, offers_cancel: bool) -> list[str]:
            failing: list[str] = original(state, invocation_id, offers_cancel)
            if "run_not_active" in failing:
                failing = ["run_not_active", *(f for f in failing if f != "run_not_active")]
            return failing

        return cancel_refusals

    _wrap(sessions, "cancel_refusals", make)


@fault("cancel-dismissals-by-server")
def _cancel_dismissals_by_server() -> None:
    """The calls a cancel closes are dismissed by the server (it is the server that closes them),
    not `initiated_by: "client"`."""

    def make(original: Any) -> Any:
        def emit(self: HubCore, s: Session, units: list[Unit], **kwargs: Any) -> None:
            answer = kwargs.get("answer")
            if answer is not None and answer["type"] == "chat.cancel_accepted":
                units = [[{**e, "initiated_by": "server"} if e["type"] == "chat.tool_call_dismiss" else e for e in unit] for unit in units]
            original(self, s, units, **kwargs)

        return emit

    _wrap(HubCore, "emit", make)


@fault("attach-whenever-features")
def _attach_whenever_features() -> None:
    """A resume attaches whenever its connection negotiated features at all (1.1 and later), not
    only where multi_attach is in force: a 1.2 "use here" resume without multi_attach, or a 1.1
    tab, attaches instead of taking the session over."""
    setattr(sessions, "resume_attaches", lambda features: features is not None)


@fault("attached-bound-below-announced")
def _attached_bound_below_announced() -> None:
    """The welcome announces the least bound the spec allows, but the session keeps only 4
    connections: the fifth tab's resume detaches the first."""
    setattr(sessions, "MAX_ATTACHED_CONNECTIONS", 4)

    def make(original: Any) -> Any:
        def dumps(frame: JsonObject) -> str:
            limits = frame.get("limits")
            if frame["type"] == "session.welcome" and isinstance(limits, dict) and "max_attached_connections" in limits:
                frame = {**frame, "limits": {**limits, "max_attached_connections": MIN_ATTACHED_CONNECTIONS}}
            text: str = original(frame)
            return text

        return dumps

    _wrap(sessions, "dumps", make)


@fault("window-ignored-on-resume")
def _window_ignored_on_resume() -> None:
    """Only a new session opens with a window: a reload that asks for one gets the whole state."""

    def make(original: Any) -> Any:
        def window_size(n: Negotiated, hello: JsonObject) -> int | None:
            if "resume" in hello:
                return None
            size: int | None = original(n, hello)
            return size

        return window_size

    _wrap(sessions, "_window_size", make)


@fault("windowed-catch-up-of-whole-state")
def _windowed_catch_up_of_whole_state() -> None:
    """A windowed connection's catch-up patch is the whole state's, not projected onto the view it
    holds (its window after the resume is right)."""

    def make(original: Any) -> Any:
        def catch_up(self: Hub, s: Session, last_seq: int, n: Negotiated, window: Any) -> Any:
            windowed = original(self, s, last_seq, n, window)
            if window is None or windowed is None:
                return windowed
            whole = original(self, s, last_seq, n, None)
            return windowed if whole is None else (whole[0], windowed[1])

        return catch_up

    _wrap(Hub, "_catch_up", make)


# ---------------------------------------------------------------- 1.3


@fault("reasoning-payload-altered")
def _reasoning_payload_altered() -> None:
    """The store keeps a reasoning payload in a field sized for a signature: whatever is read back
    from it (the session's state after a restart or a reload of a session no longer in memory, and
    the log a catch-up folds) holds each `encrypted` cut to its first 16 characters, no longer the
    payload the agent produced."""

    def cut(payloads: list[JsonObject]) -> None:
        for holder in payloads:
            if holder.get("kind") == "reasoning" or holder.get("type") == "chat.reasoning":
                if "encrypted" in holder:
                    holder["encrypted"] = holder["encrypted"][:16]

    def make_load(original: Any) -> Any:
        def load_session(self: Store, session_id: str) -> Any:
            row = original(self, session_id)
            if row is not None:
                cut(row.state["items"])
            return row

        return load_session

    def make_log(original: Any) -> Any:
        def catch_up_log(self: Store, session_id: str, last_seq: int, retention: int) -> Any:
            log = original(self, session_id, last_seq, retention)
            if log is not None:
                cut(log.before)
                cut(log.after)
            return log

        return catch_up_log

    _wrap(Store, "load_session", make_load)
    _wrap(Store, "catch_up_log", make_log)


@fault("usage-not-summed")
def _usage_not_summed() -> None:
    """A run slice's usage is overwritten by each `usage` step instead of added to: its
    `chat.run_complete` carries the last step's figures only."""
    setattr(turns, "slice_usage", lambda so_far, step: slice_usage(None, step))
