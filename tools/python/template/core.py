"""The core of the template's sessions: the session in memory and the one way state changes.

Every change goes through `HubCore.emit`: the events are folded with the kit's reducer (the state
the server sends is the reducer's, STATE-004), committed in one transaction, and only then handed
to the connections attached to the session (commit before send, RESUME-011; since 1.2 several,
`multi_attach`). What each gets follows what it negotiated (fanout.py): a `ui_state_patch` built
from the reducer's change set or a whole `ui_state_updated` (STATE-036), with or without the open
stream (STREAM-005), with or without the members of a newer minor (`chatwire.older_minor`,
COMPAT-005), projected onto its window where it holds one (`state_window`).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final

from chatwire import apply_with_patch
from chatwire.facts import is_fatal
from chatwire.reducer import open_stream_id
from chatwire.view import REASONING_FRAMES
from fanout import DELTAS, Attached, FanOut, Peer, ViewOps, dumps
from store import KEEP_CURSOR, Commit, SessionRow, Store

JsonObject = dict[str, Any]

SERVER_NAME: Final = "chatwire-python-template/0.2.0"


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


@dataclass
class Session(SessionRow):
    """A session held in memory: the stored row (kept equal to what is committed) and what only
    lives while the process does."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: The connections attached, earliest first (ATTACH-003 detaches from the front).
    attached: list[Attached] = field(default_factory=list)
    driver: asyncio.Task[None] | None = None
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)

    def attachment(self, peer: Peer) -> Attached | None:
        return next((a for a in self.attached if a.peer is peer), None)


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
        origin: Peer | None = None,
        cursor: Any = KEEP_CURSOR,
        turns: int | None = None,
        requests: tuple[JsonObject, ...] = (),
        accepted_message: str | None = None,
        add_timers: dict[str, int] | None = None,
        remove_timers: tuple[str, ...] = (),
        answer: JsonObject | None = None,
    ) -> None:
        """Applies, commits, then sends to every attached connection, each in its own view.
        Raises ReduceError (nothing committed) when the reducer refuses an event (STATE-006).

        `origin` is the connection whose request this is: an event that answers it (`in_reply_to`)
        goes to it alone, the others get only the change's state frame (ATTACH-004, ATTACH-005).
        `answer` (e.g. `chat.cancel_accepted`) goes first, to `origin` only: it takes a seq and
        changes no state (CANCEL-002)."""
        fan = FanOut(s.attached, origin)
        state = s.state
        seq = s.next_seq
        events: list[JsonObject] = []
        state_seqs: list[int] = []
        # STREAM-006: the state frames that went only to connections that see streams.
        streamed_state_seqs: list[int] = []
        if answer is not None:
            fan.answer({"type": answer["type"], "seq": seq, **{k: v for k, v in answer.items() if k != "type"}})
            seq += 1
        for unit in units:
            ops = ViewOps(state)
            only_deltas = True
            for event in unit:
                frame = {"type": event["type"], "seq": seq, **{k: v for k, v in event.items() if k != "type"}}
                # The end of the open stream, text or reasoning (STATE-043, STATE-055).
                ends_stream = frame["type"] in ("chat.assistant_message", "chat.reasoning") and open_stream_id(state) == frame["item_id"]
                before = state
                state, event_ops = apply_with_patch(state, frame)
                ops.add(frame["type"], event_ops, state["items"][-1] if ends_stream else None)
                events.append(frame)
                seq += 1
                if frame["type"] not in DELTAS:
                    only_deltas = False
                fan.event(frame, before)
            if only_deltas:
                # STREAM-002: a delta is the state frame of a streaming connection and the base of
                # its next patch; a connection that does not stream (or see reasoning) has not moved.
                state_seqs.append(seq - 1)
                streamed_state_seqs.append(seq - 1)  # deltas go only to streaming connections
                fan.moved_by_deltas(seq - 1, unit[-1]["type"])
                continue
            fan.state_frame(state, seq, ops, reasoning_only=all(e["type"] in REASONING_FRAMES for e in unit))
            state_seqs.append(seq)
            if fan.all_stream():
                streamed_state_seqs.append(seq)
            seq += 1
        fan.check(s.state, events)
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
        fan.send()

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
        s.attached = [a for a in s.attached if a.peer is not peer]
        self.evict_if_idle(s)

    def evict_if_idle(self, s: Session) -> None:
        # Bounded memory: a session nobody watches and nothing drives lives only in the store.
        if not s.attached and s.driver is None and not s.timers and not s.lock.locked():
            self.sessions.pop(s.id, None)

