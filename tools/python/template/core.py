"""The core of the template's sessions: the session in memory and the one way state changes.

Every change goes through `HubCore.emit`: the events are folded with the kit's reducer (the state
the server sends is the reducer's, STATE-004), committed in one transaction, and only then handed
to the connection (commit before send, RESUME-011). What the connection gets follows what it
negotiated: a `ui_state_patch` built from the reducer's change set or a whole `ui_state_updated`
(STATE-036), with or without the open stream (STREAM-005), with or without the members of a newer
minor (`chatwire.older_minor`, COMPAT-005).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final, Protocol

from chatwire import apply_with_patch, older_minor, validate_server_frame
from chatwire.facts import UI_STATE_VERSION, is_fatal
from chatwire.reducer import open_stream, without_open_stream
from negotiation import Negotiated
from store import KEEP_CURSOR, Commit, SessionRow, Store

JsonObject = dict[str, Any]

SERVER_NAME: Final = "chatwire-python-template/0.2.0"
DELTA: Final = "chat.assistant_message_delta"


class Peer(Protocol):
    """The transport's side of a connection; both methods return at once (a bounded outbox)."""

    negotiated: Negotiated

    def send_text(self, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    async def paced(self) -> None:
        """Returns once the client has taken most of what was sent to it, or at once when it
        takes nothing at all (then its send queue fills and it is closed with 4008)."""


class Refusal(Exception):
    """A client frame the server cannot accept: answered with an `error` of this code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def now_ts() -> str:
    """An RFC 3339 timestamp with offset (FRAME-004)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id(prefix: str, random_bytes: int) -> str:
    """A fresh id from a CSPRNG (SESSION-007 wants 128 bits for session ids and tokens)."""
    return f"{prefix}-{secrets.token_hex(random_bytes)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def dumps(frame: JsonObject) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def seen_state(state: JsonObject, negotiated: Negotiated) -> JsonObject:
    """The state as a connection sees it: without the open stream unless it streams (STREAM-005),
    without `response_schema` before 1.2 (TOOL-025)."""
    return older_minor.state(state if negotiated.streams else without_open_stream(state), negotiated.version)


@dataclass
class Session(SessionRow):
    """A session held in memory: the stored row (kept equal to what is committed) and what only
    lives while the process does."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    peer: Peer | None = None
    driver: asyncio.Task[None] | None = None
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    #: The seq of the latest frame that carried a state to the attached peer: the next patch's base (STATE-037).
    last_state_seq: int = 0

    def send(self, frame: JsonObject) -> None:
        if self.peer is not None:
            self.peer.send_text(dumps(frame))


# One unit is one event, or the calls of one batch; each unit is followed by one state frame,
# except a unit of deltas, which is its own state frame (STREAM-002).
Unit = list[JsonObject]


class HubCore:
    """Every session of this backend instance, and how a change is committed and sent."""

    def __init__(self, store: Store, *, conformance: bool, max_frame_bytes: int, versions: tuple[str, ...]) -> None:
        self.store = store
        self.conformance = conformance
        self.max_frame_bytes = max_frame_bytes
        self.versions = versions
        self.sessions: dict[str, Session] = {}

    def emit(
        self,
        s: Session,
        units: list[Unit],
        *,
        cursor: Any = KEEP_CURSOR,
        turns: int | None = None,
        requests: tuple[JsonObject, ...] = (),
        accepted_message: str | None = None,
        add_timers: dict[str, int] | None = None,
        remove_timers: tuple[str, ...] = (),
        answer: JsonObject | None = None,
    ) -> None:
        """Applies, commits, then sends. Raises ReduceError (nothing committed) when the reducer
        refuses an event (STATE-006). `answer` (e.g. `chat.cancel_accepted`) goes first, to the
        attached connection only, the sender: it takes a seq and changes no state (CANCEL-002)."""
        view = s.peer.negotiated if s.peer is not None else None
        state = s.state
        seq = s.next_seq
        base = s.last_state_seq
        wire: list[JsonObject] = []
        events: list[JsonObject] = []
        state_seqs: list[int] = []
        # STREAM-006: the state frames that went only to connections that see streams. This
        # template attaches one connection at a time, so that is whether the attached one streams.
        streamed_state_seqs: list[int] = []
        if answer is not None:
            wire.append({"type": answer["type"], "seq": seq, **{k: v for k, v in answer.items() if k != "type"}})
            seq += 1
        for unit in units:
            ops: list[JsonObject] = []
            only_deltas = True
            for event in unit:
                frame = {"type": event["type"], "seq": seq, **{k: v for k, v in event.items() if k != "type"}}
                stream = open_stream(state)
                ends_stream = frame["type"] == "chat.assistant_message" and stream is not None and stream["id"] == frame["item_id"]
                state, event_ops = apply_with_patch(state, frame)
                if ends_stream and view is not None and not view.streams:
                    # The connection never saw the stream: the whole item is new to it (STATE-012).
                    event_ops = [{"op": "add", "path": "/items/-", "value": state["items"][-1]}]
                ops.extend(event_ops)
                events.append(frame)
                seq += 1
                if frame["type"] != DELTA:
                    only_deltas = False
                    wire.append(frame)
                elif view is not None and view.streams:
                    wire.append(frame)
            if only_deltas:
                # STREAM-002: a delta is the state frame of a streaming connection and the base of
                # its next patch; a connection that does not stream has not moved.
                state_seqs.append(seq - 1)
                streamed_state_seqs.append(seq - 1)  # deltas go only to streaming connections
                if view is not None and view.streams:
                    base = seq - 1
                continue
            if view is not None and view.patches:
                ops = older_minor.patch(ops, view.version)
                wire.append({"type": "ui_state_patch", "seq": seq, "base_seq": base, "v": UI_STATE_VERSION, "patch": ops})
            elif view is not None:
                wire.append({"type": "ui_state_updated", "seq": seq, "v": UI_STATE_VERSION, "state": seen_state(state, view)})
            state_seqs.append(seq)
            if view is not None and view.streams:
                streamed_state_seqs.append(seq)
            base = seq
            seq += 1
        _check_outgoing(s.state, wire)
        self.store.commit(
            s.id,
            Commit(
                next_seq=seq,
                state=state if units else None,
                turns=turns,
                cursor=cursor,
                events=events,
                requests=list(requests),
                accepted_message=accepted_message,
                add_timers=add_timers or {},
                remove_timers=list(remove_timers),
                state_seqs=state_seqs,
                streamed_state_seqs=streamed_state_seqs,
            ),
        )
        s.state = state
        s.next_seq = seq
        s.last_state_seq = base
        if turns is not None:
            s.turns = turns
        if cursor is not KEEP_CURSOR:
            s.cursor = cursor
        if accepted_message is not None:
            s.accepted.add(accepted_message)
        for call in remove_timers:
            handle = s.timers.pop(call, None)
            if handle is not None:
                handle.cancel()
        for frame in wire:
            seen = older_minor.frame(frame, view.version) if view is not None else None
            if seen is not None:
                s.send(seen)

    def error_frame(self, code: str, message: str, in_reply_to: str | None, seq: int | None) -> JsonObject:
        frame: JsonObject = {"type": "error"}
        if seq is not None:
            frame["seq"] = seq
        frame.update({"code": code, "message": message})
        if in_reply_to is not None:
            frame["in_reply_to"] = in_reply_to
        frame["fatal"] = is_fatal(code)  # ERROR-002
        if code == "unsupported_version":
            frame["supported_versions"] = list(self.versions)
        return frame

    def send_session_error(self, s: Session, peer: Peer, refusal: Refusal, in_reply_to: str | None) -> None:
        """An error on a connection bound to `s`: it takes the next seq (SEQ-002), committed first."""
        seq = s.next_seq
        self.store.commit(s.id, Commit(next_seq=seq + 1))
        s.next_seq = seq + 1
        peer.send_text(dumps(self.error_frame(refusal.code, refusal.message, in_reply_to, seq)))

    def load(self, session_id: str) -> Session | None:
        s = self.sessions.get(session_id)
        if s is not None:
            return s
        row = self.store.load_session(session_id)
        if row is None:
            return None
        s = Session(row.id, row.token_hash, row.agent, row.state, row.next_seq, row.turns, row.cursor, row.accepted)
        self.sessions[s.id] = s
        self.after_load(s)
        return s

    def after_load(self, s: Session) -> None:
        """What a session loaded from the store needs besides its row (the turn driver arms its deadlines)."""

    def detach(self, s: Session, peer: Peer) -> None:
        if s.peer is peer:
            s.peer = None
        self.evict_if_idle(s)

    def evict_if_idle(self, s: Session) -> None:
        # Bounded memory: a session nobody watches and nothing drives lives only in the store.
        if s.peer is None and s.driver is None and not s.timers and not s.lock.locked():
            self.sessions.pop(s.id, None)


def _check_outgoing(before: JsonObject, wire: list[JsonObject]) -> None:
    """FRAME-002: a bug here must not reach the client. A whole state is validated item by item
    only where it changed: validating every item of every update costs the square of the
    session's size (a 600-item turn spent 94% of its time there)."""
    checked = before["items"]
    for frame in wire:
        if frame["type"] == "ui_state_updated":
            items = frame["state"]["items"]
            fresh = [it for i, it in enumerate(items) if i >= len(checked) or it != checked[i]]
            validate_server_frame({**frame, "state": {**frame["state"], "items": fresh}})
            checked = items
        else:
            validate_server_frame(frame)
