"""What one committed change sends to each connection attached to its session.

Since 1.2 (`multi_attach`, spec/attach.md) a session has several connections, each with its own
version, features and window. One change is committed once; then each connection gets its view of
it: every event without `in_reply_to`, an answer only where its request came from (ATTACH-004,
ATTACH-005); deltas only where streams are seen (STREAM-005); one state frame per change, under
the same seq everywhere (ATTACH-006), as a patch from that connection's own base or a whole state
(STATE-036), projected onto its window where it holds one (`chatwire.window`, WINDOW-004..006).
Since 1.3 each connection sees only the features in force on it (`chatwire.view.ConnView`): no
reasoning frame or item where `reasoning` is not (REASON-001), no usage where `usage` is not
(USAGE-004), its patches projected onto that view.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Protocol

from chatwire import validate_server_frame
from chatwire.attach import is_answer
from chatwire.facts import UI_STATE_VERSION
from chatwire.reducer import without_open_stream
from chatwire.window import ProjectError, WindowView
from negotiation import Negotiated

JsonObject = dict[str, Any]

DELTA: Final = "chat.assistant_message_delta"
#: A delta of a reasoning stream (since 1.3): a stream like assistant text (STATE-054, REASON-002).
REASONING_DELTA: Final = "chat.reasoning_delta"
DELTAS: Final = frozenset({DELTA, REASONING_DELTA})


class Peer(Protocol):
    """The transport's side of a connection; both methods return at once (a bounded outbox)."""

    negotiated: Negotiated

    def send_text(self, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    async def paced(self) -> None:
        """Returns once the client has taken most of what was sent to it, or at once when it
        takes nothing at all (then its send queue fills and it is closed with 4008)."""


def dumps(frame: JsonObject) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def seen_state(state: JsonObject, negotiated: Negotiated) -> JsonObject:
    """The state as a connection sees it: without the open stream unless it streams (STREAM-005,
    REASON-002), without `response_schema` before 1.2 (TOOL-025), without reasoning items and
    usage where those features are not in force (REASON-001, USAGE-004)."""
    return negotiated.view.state(state if negotiated.streams else without_open_stream(state))


def snapshot(seq: int, state: JsonObject, n: Negotiated, window: WindowView | None) -> JsonObject:
    """A `ui_state_snapshot` of `state` as the connection sees it; windowed where it holds a
    window: its view, and `window` saying what the view leaves out (WINDOW-002)."""
    seen = seen_state(state, n)
    frame: JsonObject = {"type": "ui_state_snapshot", "seq": seq, "v": UI_STATE_VERSION}
    if window is None:
        frame["state"] = seen
    else:
        frame["state"] = window.view(seen)
        frame["window"] = window.window(seen)
    return frame


@dataclass(eq=False)
class Attached:
    """One connection attached to a session, and what the session keeps for it alone."""

    peer: Peer
    #: The seq of the latest frame that carried a state to it: its next patch's base (STATE-037).
    last_state_seq: int
    #: Where its view stands (`state_window`): None where it holds the whole state.
    window: WindowView | None = None


class ViewOps:
    """The ops of one unit of events in both views of the state: with the open stream (a
    connection that streams) and without it, where a stream's end appends the whole item (STATE-012),
    and the state before the unit each applies to (the base a connection's view projects them from)."""

    def __init__(self, before: JsonObject) -> None:
        self.streaming: list[JsonObject] = []
        self.plain: list[JsonObject] = []
        self.before = before
        self.before_plain = without_open_stream(before)

    def add(self, frame_type: str, ops: list[JsonObject], ended_stream: JsonObject | None) -> None:
        self.streaming.extend(ops)
        if frame_type in DELTAS:
            return
        if ended_stream is not None:
            self.plain.append({"op": "add", "path": "/items/-", "value": ended_stream})
        else:
            self.plain.extend(ops)


class _Outgoing:
    """One attached connection's frames of this change, and where its view ends up."""

    def __init__(self, a: Attached) -> None:
        self.attached = a
        self.n: Negotiated = a.peer.negotiated
        self.base = a.last_state_seq
        self.window = None if a.window is None else WindowView(a.window.size, a.window.start, list(a.window.pinned))
        self.frames: list[JsonObject] = []


class FanOut:
    """Builds each attached connection's frames of one change; `send` hands them over after the
    commit (RESUME-011), and only then moves each connection's base and window."""

    def __init__(self, attached: list[Attached], origin: Peer | None) -> None:
        self._out = [_Outgoing(a) for a in attached]
        origin_attached = origin is not None and any(a.peer is origin for a in attached)
        # An answer whose connection has gone may go to those attached (ATTACH-005's MAY).
        self._answered = [o for o in self._out if o.attached.peer is origin] if origin_attached else self._out

    def answer(self, frame: JsonObject, before: JsonObject | None = None) -> None:
        """`frame` to the connection it answers; an answer that is an event (a retry's cut names
        items) as its view of the state `before` names it."""
        for o in self._answered:
            seen = o.n.view.frame(frame) if before is None else o.n.view.frame_at(frame, before)
            if seen is not None:
                o.frames.append(seen)

    def event(self, frame: JsonObject, before: JsonObject) -> None:
        """`frame`, committed on the state `before`, to each connection that sees it, as it sees it."""
        if is_answer(frame):
            self.answer(frame, before)
            return
        for o in self._out:
            if frame["type"] not in DELTAS or o.n.streams:
                seen = o.n.view.frame_at(frame, before)
                if seen is not None:
                    o.frames.append(seen)

    def moved_by_deltas(self, seq: int, frame_type: str) -> None:
        """A unit of deltas is the state frame of every streaming connection that gets it (STREAM-002)."""
        for o in self._out:
            if o.n.streams and (frame_type != REASONING_DELTA or o.n.view.reasoning):
                o.base = seq

    def all_stream(self) -> bool:
        return bool(self._out) and all(o.n.streams for o in self._out)

    def state_frame(self, state: JsonObject, seq: int, ops: ViewOps, reasoning_only: bool = False) -> None:
        """Each connection's state frame of the change at `seq`, from its base and in its view.
        `reasoning_only`: every event of the unit is a reasoning frame, so a connection where
        `reasoning` is not in force received none of them and gets no state frame either (REASON-001)."""
        for o in self._out:
            conn = o.n.view
            if reasoning_only and not conn.reasoning:
                continue
            mine = conn.patch(ops.before, ops.streaming) if o.n.streams else conn.patch(ops.before_plain, ops.plain)
            if o.window is not None:
                try:
                    mine = o.window.project(mine)
                except ProjectError:
                    # WINDOW-006: a cut took the cursor item: a fresh window of the size asked for.
                    o.window = WindowView.open(seen_state(state, o.n), o.window.size)
                    o.frames.append(snapshot(seq, state, o.n, o.window))
                    o.base = seq
                    continue
            if o.n.patches:
                o.frames.append({"type": "ui_state_patch", "seq": seq, "base_seq": o.base, "v": UI_STATE_VERSION, "patch": mine})
            else:
                seen = seen_state(state, o.n)
                view = seen if o.window is None else o.window.view(seen)
                o.frames.append({"type": "ui_state_updated", "seq": seq, "v": UI_STATE_VERSION, "state": view})
            o.base = seq

    def check(self, before: JsonObject, events: list[JsonObject]) -> None:
        """FRAME-002: a bug here must not reach a client."""
        _check_outgoing(before, events)
        for o in self._out:
            _check_outgoing(before, [f for f in o.frames if f["type"].startswith("ui_state")])

    def send(self) -> None:
        for o in self._out:
            o.attached.last_state_seq = o.base
            o.attached.window = o.window
            for frame in o.frames:
                o.attached.peer.send_text(dumps(frame))


def _check_outgoing(before: JsonObject, wire: list[JsonObject]) -> None:
    """A whole state is validated item by item only where it changed: validating every item of
    every update costs the square of the session's size (a 600-item turn spent 94% of its time
    there)."""
    checked = before["items"]
    for frame in wire:
        if frame["type"] == "ui_state_updated":
            items = frame["state"]["items"]
            fresh = [it for i, it in enumerate(items) if i >= len(checked) or it != checked[i]]
            validate_server_frame({**frame, "state": {**frame["state"], "items": fresh}})
            checked = items
        else:
            validate_server_frame(frame)
