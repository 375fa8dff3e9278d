"""Sessions of the template backend: the handshake and the client's requests.

`Hub` is the whole protocol logic between the transport (server.py) and the store (store.py):
core.py commits and sends, turns.py plays the agent, this file opens and resumes sessions
(with a catch-up patch where `resume_catch_up` is in force) and answers `chat.user_message`,
`chat.tool_call_response`, `chat.rewind`, `chat.retry` (1.1), `chat.cancel` and
`chat.history_request` (1.2). With `multi_attach` (1.2) a resume attaches beside the session's
other connections (spec/attach.md); with `state_window` a connection may hold a window of the
newest items and page back (spec/window.md).
"""

from __future__ import annotations

import hmac
import sqlite3
import sys
from typing import Final

from chatwire import CatchUpError, FrameError, ReduceError, ScriptError, catch_up, check_script, empty_state, older_minor, reduce, response_settlement
from chatwire.attach import MIN_ATTACHED_CONNECTIONS, detached_code, resume_attaches
from chatwire.facts import FATAL_CLOSE_CODES, UI_STATE_VERSION
from chatwire.reducer import CancelScope, cancel_refusals, latest_user_invocation, open_stream_id, retry_cut, without_open_stream
from chatwire.response_schema import Violation, check_value
from chatwire.window import MAX_WINDOW_ITEMS, ProjectError, WindowView
from core import SERVER_NAME, JsonObject, Refusal, Session, Unit, hash_token, new_id, now_ts
from fanout import DELTAS, Attached, Peer, dumps, seen_state, snapshot
from negotiation import Negotiated, NoCommonVersion, capabilities, negotiate
from store import Commit
from turns import Turns, bare_settlement, open_calls, settlement_event, tool_call

#: The most events a catch-up covers, announced as the welcome's `resume_retention` (RESUME-018):
#: enough for a reconnect after seconds or minutes of a busy turn; a client that missed more gets
#: the snapshot, as in 1.0.
RESUME_RETENTION: Final = 1000

#: How many connections a session keeps attached at once (ATTACH-003): the least the spec allows.
MAX_ATTACHED_CONNECTIONS: Final = MIN_ATTACHED_CONNECTIONS


class Hub(Turns):
    """Every session of this backend instance."""

    # ---------------------------------------------------------------- hello

    async def hello(self, peer: Peer, hello: JsonObject) -> Session:
        """Opens or resumes a session; raises Refusal (the connection stays unbound)."""
        try:
            negotiated = negotiate(self.versions, hello)
        except NoCommonVersion:
            raise Refusal("unsupported_version", "none of the offered versions is supported") from None
        script = hello.get("script")
        resume = hello.get("resume")
        if script is not None:
            if not self.conformance:
                raise Refusal("script_not_allowed", "this server does not run scripts: it is not in conformance mode")
            if resume is not None:
                raise Refusal("script_not_allowed", "a script can only open a new session, not resume one")
            try:
                check_script(script)
            except ScriptError as e:
                raise Refusal("invalid_script", f"the script cannot run: {e}") from None
        peer.negotiated = negotiated
        if resume is not None:
            return await self._resume(peer, hello, resume)
        return self._open(peer, hello)

    def _open(self, peer: Peer, hello: JsonObject) -> Session:
        token = new_id("rt", 16)
        script = hello.get("script")
        agent: JsonObject = {"kind": "script", "script": script} if self.conformance else {"kind": "echo"}
        s = Session(
            id=new_id("s", 16),
            token_hash=hash_token(token),
            agent=agent,
            state=empty_state(),
            next_seq=3,  # the welcome is 1 and its snapshot 2 (SESSION-005)
            turns=0,
            cursor=None,
            accepted=set(),
        )
        self.store.create_session(s, snapshot_seq=2)
        self.sessions[s.id] = s
        size = _window_size(peer.negotiated, hello)
        a = Attached(peer, 1, WindowView.open(s.state, size) if size is not None else None)
        s.attached.append(a)
        self._greet(s, a, hello["id"], token, resumed=False, first=1, catch_up_patch=None)
        return s

    async def _resume(self, peer: Peer, hello: JsonObject, resume: JsonObject) -> Session:
        # One message for an unknown session and a wrong token (RESUME-005).
        rejected = Refusal("resume_rejected", "resume refused: unknown session or wrong resume token")
        s = self.load(resume["session_id"])
        if s is None:
            raise rejected
        async with s.lock:
            if not hmac.compare_digest(hash_token(resume["resume_token"]), s.token_hash):
                raise rejected
            last_seq = int(resume["last_seq"])
            if last_seq > s.next_seq - 1:
                raise Refusal("resume_cursor_ahead", f"last_seq {last_seq} is ahead of the last seq sent on this session")
            n = peer.negotiated
            if resume_attaches(n.features):
                # ATTACH-001: beside the others; past the bound the earliest goes (ATTACH-003).
                while len(s.attached) >= MAX_ATTACHED_CONNECTIONS:
                    # ATTACH-011: a 1.0 or 1.1 connection is ended as its version defines, by a takeover.
                    earliest = s.attached[0].peer
                    code = detached_code(earliest.negotiated.version)
                    self._displace(s, earliest, code, "one connection too many attached to this session")
            else:
                # ATTACH-002, SESSION-010: the newest connection wins; every other gets a fatal error and 4001.
                for other in [a.peer for a in s.attached if a.peer is not peer]:
                    self._displace(s, other, "session_taken_over", "another connection resumed this session")
            # WINDOW-011, WINDOW-012: a window where the hello asks for one or the resume names the cursor held.
            size = _window_size(n, hello)
            held = resume.get("before")
            if n.windows and size is None and held is not None:
                size = MAX_WINDOW_ITEMS
            window = (size, held) if size is not None else None
            caught = self._catch_up(s, last_seq, n, window) if n.catches_up else None
            first = s.next_seq
            # The state frame's view is this connection's: where it streams, a base for a streaming
            # resume even while a stream is open (STREAM-006).
            streamed = [first + 1] if n.streams else []
            self.store.commit(s.id, Commit(next_seq=first + 2, state_seqs=[first + 1], streamed_state_seqs=streamed))
            s.next_seq = first + 2
            a = Attached(peer, first + 1)
            if caught is not None:
                a.window = caught[1]
            elif size is not None:
                a.window = WindowView.open(seen_state(s.state, n), size)
            s.attached.append(a)
            patch = (last_seq, caught[0]) if caught is not None else None
            self._greet(s, a, hello["id"], resume["resume_token"], resumed=True, first=first, catch_up_patch=patch)
        return s

    def _displace(self, s: Session, peer: Peer, code: str, message: str) -> None:
        """Ends a connection's hold on the session: a fatal error of its own seq, then its close code."""
        s.attached = [a for a in s.attached if a.peer is not peer]
        self.send_session_error(s, peer, Refusal(code, message), None)
        peer.close(FATAL_CLOSE_CODES[code], code.replace("_", " "))

    def _greet(self, s: Session, a: Attached, hello_id: str, token: str, *, resumed: bool, first: int, catch_up_patch: tuple[int, list[JsonObject]] | None) -> None:
        """The welcome at `first`, then at `first + 1` the catch-up patch (RESUME-017) or the
        snapshot, windowed where the connection holds a window (WINDOW-002)."""
        n: Negotiated = a.peer.negotiated
        welcome: JsonObject = {
            "type": "session.welcome",
            "seq": first,
            "in_reply_to": hello_id,
            "version": n.version,
            "session_id": s.id,
            "resume_token": token,
            "resumed": resumed,
            "capabilities": capabilities(n, conformance=self.conformance),
            "limits": {"max_frame_bytes": self.max_frame_bytes},
            "server": SERVER_NAME,
        }
        if n.features is not None:  # SESSION-013: exactly on 1.1 and later
            welcome["features"] = list(n.features)
        if n.catches_up:  # RESUME-018
            welcome["resume_retention"] = RESUME_RETENTION
        if n.attaches:  # ATTACH-003
            welcome["limits"]["max_attached_connections"] = MAX_ATTACHED_CONNECTIONS
        a.peer.send_text(dumps(welcome))
        if catch_up_patch is not None:
            base_seq, patch = catch_up_patch
            a.peer.send_text(dumps({"type": "ui_state_patch", "seq": first + 1, "base_seq": base_seq, "v": UI_STATE_VERSION, "patch": patch}))
        else:
            a.peer.send_text(dumps(snapshot(first + 1, s.state, n, a.window)))
        a.last_state_seq = first + 1

    def _catch_up(self, s: Session, last_seq: int, n: Negotiated, window: tuple[int, str | None] | None) -> tuple[list[JsonObject], WindowView | None] | None:
        """The patch from the state of `last_seq`, rebuilt from the log, to the state this
        connection sees (RESUME-017, RESUME-019), or None when the resume gets a snapshot
        (RESUME-018, STREAM-006). On a windowed connection, `window` is its size and the cursor
        of the view it held (None: every item): the patch is that of the view, and the window
        after it is returned too; a cursor a cut removed gets the snapshot (WINDOW-012)."""
        log = self.store.catch_up_log(s.id, last_seq, RESUME_RETENTION)
        if log is None:
            return None
        after = log.after
        try:
            base = empty_state()
            for event in log.before:
                base = reduce(base, event)
            # STREAM-006: a frame sent while a stream was open is a base only where both its
            # connection and this one stream. The store says so of every state frame: a delta's
            # seq, and the snapshot or catch-up a streaming connection got when it resumed
            # mid-stream, from which a second resume is owed a catch-up (RESUME-017).
            if open_stream_id(base) is not None and not (n.streams and log.streamed):
                return None
            if not n.streams:  # the view without deltas (STREAM-005, REASON-002)
                base = without_open_stream(base)
                after = [e for e in after if e["type"] not in DELTAS]
            # The catch-up of the connection's view: without what it never receives (REASON-001,
            # USAGE-004, TOOL-025), the view commuting with the reducer.
            after = n.view.events(base, after)
            base = n.view.state(base)
            reached, patch = catch_up(base, after)
        except (ReduceError, CatchUpError) as e:
            print(f"template: session {s.id}: the log does not fold ({e}); snapshot", file=sys.stderr)
            return None
        patch = older_minor.patch(patch, n.version)  # TOOL-025
        if reached != seen_state(s.state, n):
            print(f"template: session {s.id}: the log does not fold to the state; snapshot", file=sys.stderr)
            return None
        if window is None:
            return patch, None
        view = WindowView.at_cursor(base, window[0], window[1])
        if view is None:
            return None
        try:
            return view.project(patch), view
        except ProjectError:
            return None

    # ---------------------------------------------------------------- client frames

    async def handle(self, s: Session, peer: Peer, frame: JsonObject) -> None:
        """A schema-valid client frame other than `session.hello`, on a connection bound to `s`."""
        async with s.lock:
            a = s.attachment(peer)
            if a is None:
                return  # SESSION-011: the session was taken over; this connection is no longer served
            try:
                kind = frame["type"]
                if kind == "chat.user_message":
                    self._user_message(s, peer, frame)
                elif kind == "chat.tool_call_response":
                    self._tool_call_response(s, peer, frame)
                elif kind == "chat.rewind":
                    self._rewind(s, peer, frame)
                elif kind == "chat.retry" and peer.negotiated.knows_client_type(kind):
                    self._retry(s, peer, frame)
                elif kind == "chat.cancel" and peer.negotiated.knows_client_type(kind):
                    self._cancel(s, peer, frame)
                elif kind == "chat.history_request" and peer.negotiated.knows_client_type(kind):
                    self._history(s, a, frame)
                else:
                    raise Refusal("unknown_type", f"unknown frame type {kind!r}")
            except Refusal as refusal:
                self.send_session_error(s, peer, refusal, frame.get("id"))
            except (ReduceError, FrameError, sqlite3.Error) as e:
                # ERROR-009: the server's own failure; emit committed nothing, so nothing changed.
                print(f"template: session {s.id}: failed on a valid request: {e}", file=sys.stderr)
                self.send_session_error(s, peer, Refusal("internal_error", "the server failed and the session is unchanged"), frame.get("id"))

    def _history(self, s: Session, a: Attached, request: JsonObject) -> None:
        """One page of the items before the connection's cursor, to it alone (WINDOW-008); a
        `before` that is not its current cursor is stale (WINDOW-010). Changes no state."""
        n = a.peer.negotiated
        if not n.windows:  # WINDOW-007
            raise Refusal("capability_not_offered", "state_window is not in force on this connection")
        seen = seen_state(s.state, n)
        view = a.window or WindowView(MAX_WINDOW_ITEMS)  # a connection without a window holds every item
        if request["before"] != view.cursor(seen):
            raise Refusal("stale_cursor", f"{request['before']} is not this connection's cursor; page from the latest window")
        moved = WindowView(view.size, view.start, list(view.pinned))
        items, before = moved.page(seen, int(request["limit"]))
        seq = s.next_seq
        page: JsonObject = {"type": "chat.history_page", "seq": seq, "in_reply_to": request["id"], "items": items}
        if before is not None:
            page["before"] = before
        page["total"] = len(seen["items"])
        self.store.commit(s.id, Commit(next_seq=seq + 1))
        s.next_seq = seq + 1
        a.window = moved
        a.peer.send_text(dumps(page))

    def _user_message(self, s: Session, origin: Peer, msg: JsonObject) -> None:
        # TURN-006: a duplicate is told so even during a run; run_in_progress would say it was not accepted.
        if msg["id"] in s.accepted:
            raise Refusal("duplicate_message", f"message {msg['id']} was already accepted")
        if s.state["run"]["status"] == "running":
            raise Refusal("run_in_progress", "a run is in progress; wait for run_complete")
        ts = now_ts()
        units: list[Unit] = []
        superseded = [c["id"] for c in open_calls(s.state, None)]
        for call in superseded:  # TURN-004
            units.append([{"type": "chat.tool_call_dismiss", "tool_call_id": call, "initiated_by": "server", "reason": "superseded", "ts": ts}])
        invocation = new_id("inv", 8)
        accepted = {"type": "chat.user_message_accepted", "in_reply_to": msg["id"], "invocation_id": invocation, "item_id": new_id("um", 8), "text": msg["text"], "ts": ts}
        units.append([accepted])
        units.append([{"type": "chat.run_started", "invocation_id": invocation, "ts": ts}])
        cursor = {"invocation_id": invocation, "turn": s.turns, "decision": 0, "user_text": msg["text"], "batch": None}
        self.emit(s, units, origin=origin, cursor=cursor, turns=s.turns + 1, requests=(msg,), accepted_message=msg["id"], remove_timers=tuple(superseded))
        self.start_driver(s)

    def _tool_call_response(self, s: Session, origin: Peer, response: JsonObject) -> None:
        negotiated = origin.negotiated
        call = tool_call(s.state, response["tool_call_id"])
        if call is None:  # also a call a rewind or a retry removed (RETRY-005)
            raise Refusal("unknown_tool_call", f"no tool call {response['tool_call_id']} in this session")
        if call["status"] not in ("pending", "running"):
            raise Refusal("tool_call_settled", f"tool call {call['id']} has already settled")
        if call["status"] != "pending":
            raise Refusal("tool_call_not_awaiting", f"tool call {call['id']} does not await a response")
        outcome = response["outcome"]
        if "response_schema" in call and outcome["action"] == "submit":  # TOOL-023; a dismiss is never checked
            violation = check_value(call["response_schema"], outcome["value"])
            if violation is not None:
                raise _response_refusal(violation, negotiated)
        planned = self.planned_call(s, call["id"])
        settlement = response_settlement(planned, response) if planned is not None else bare_settlement(response)
        opens_slice = s.state["run"]["status"] != "running"
        units: list[Unit] = []
        if opens_slice:  # RUN-007
            units.append([{"type": "chat.run_started", "invocation_id": call["invocation_id"], "ts": now_ts()}])
        units.append([settlement_event(call["id"], settlement)])
        # The response and its settlement commit together (RESUME-012): executed exactly once.
        self.emit(s, units, origin=origin, requests=(response,), remove_timers=(call["id"],))
        if opens_slice:
            self.start_driver(s)

    def _cancel(self, s: Session, origin: Peer, cancel: JsonObject) -> None:
        """Refused in the order of CANCEL-006, else `chat.cancel_accepted` and the events that close
        the run in one commit, durable before sent (CANCEL-002..005, CANCEL-008); the driver stops
        at once, so no wait, chunk delay or running tool of the cancelled run delays the next turn."""
        invocation = cancel["invocation_id"]
        failing = cancel_refusals(s.state, invocation, origin.negotiated.offers("cancel"))
        if failing:
            messages = {
                "capability_not_offered": "this server does not offer cancel",
                "unknown_invocation": f"no invocation {invocation} in the effective state",
                "run_not_active": f"invocation {invocation} has no run in progress",
            }
            raise Refusal(failing[0], messages[failing[0]])
        ts = now_ts()
        scope = CancelScope.of(s.state, invocation)
        units: list[Unit] = []
        if scope.reopens:  # RUN-007: only a slice in progress can end (STATE-022)
            units.append([{"type": "chat.run_started", "invocation_id": invocation, "ts": ts}])
        stream_end = scope.stream_end(invocation, ts)  # CANCEL-004: exactly the text streamed so far
        if stream_end is not None:
            units.append([stream_end])
        for call in scope.open_calls:
            units.append([{"type": "chat.tool_call_dismiss", "tool_call_id": call, "initiated_by": "client", "reason": "cancelled", "ts": ts}])
        # The slice ends here: it carries what its usage steps added so far (SCRIPT-028).
        units.append([self.slice_end(s, invocation, "cancelled", "cancelled", None, ts)])
        answer = {"type": "chat.cancel_accepted", "in_reply_to": cancel["id"], "invocation_id": invocation, "ts": ts}
        self.emit(s, units, origin=origin, cursor=None, requests=(cancel,), remove_timers=scope.open_calls, answer=answer)
        self.stop_driver(s)  # CANCEL-005: nothing more of the cancelled run

    def _rewind(self, s: Session, origin: Peer, rewind: JsonObject) -> None:
        if s.state["run"]["status"] == "running":
            raise Refusal("run_in_progress", "a run is in progress; wait for run_complete")
        items = s.state["items"]
        before = rewind["before_invocation_id"]
        cut = next((n for n, item in enumerate(items) if item["invocation_id"] == before), None)
        if cut is None:
            raise Refusal("unknown_invocation", f"no invocation {before} in the effective state")
        removed: list[str] = []
        for item in items[cut:]:
            if item["invocation_id"] not in removed:
                removed.append(item["invocation_id"])
        dropped_calls = tuple(c["id"] for c in open_calls(s.state, None) if c["invocation_id"] in removed)
        event = {"type": "chat.rewind_complete", "in_reply_to": rewind["id"], "before_invocation_id": before, "removed_invocation_ids": removed, "ts": now_ts()}
        # The scripted agent is not rewound: the next message runs the next turn (SCRIPT-004).
        self.emit(s, [[event]], origin=origin, cursor=None, requests=(rewind,), remove_timers=dropped_calls)

    def _retry(self, s: Session, origin: Peer, retry: JsonObject) -> None:
        """RETRY-004's checks in order, then the cut, and the turn runs again (RETRY-001)."""
        if s.state["run"]["status"] == "running":
            raise Refusal("run_in_progress", "a run is in progress; wait for run_complete")
        items = s.state["items"]
        after = retry["after_item_id"]
        named = next((n for n in range(len(items) - 1, -1, -1) if items[n]["id"] == after), None)
        if named is None:
            raise Refusal("unknown_item", f"no item {after} in the effective state")
        invocation = latest_user_invocation(s.state)
        if items[named]["invocation_id"] != invocation:
            raise Refusal("item_not_in_latest_turn", f"item {after} is not in the latest turn")
        cut = retry_cut(items, named)
        kept_open = [c["id"] for c in open_calls({**s.state, "items": items[:cut]}, None)]
        if kept_open:
            raise Refusal("retry_keeps_open_call", f"the retry would keep open tool calls: {kept_open}")
        assert invocation is not None
        removed_calls = tuple(c["id"] for c in open_calls({**s.state, "items": items[cut:]}, None))
        turn, retries = self.store.turn_and_retries(s.id, invocation)
        if turn < 0:  # the state names a turn the log does not: never plays another turn's steps
            raise Refusal("internal_error", "the turn to retry is not in the session's log")
        ts = now_ts()
        accepted = {"type": "chat.retry_accepted", "in_reply_to": retry["id"], "invocation_id": invocation, "after_item_id": after, "removed_item_ids": [i["id"] for i in items[cut:]], "ts": ts}
        started = {"type": "chat.run_started", "invocation_id": invocation, "ts": ts}
        user_text = next((i["text"] for i in items if i["kind"] == "user_message" and i["invocation_id"] == invocation), "")
        cursor = {"invocation_id": invocation, "turn": turn, "retry": retries, "decision": 0, "user_text": user_text, "batch": None}
        self.emit(s, [[accepted], [started]], origin=origin, cursor=cursor, requests=(retry,), remove_timers=removed_calls)
        self.start_driver(s)


def _response_refusal(violation: Violation, negotiated: Negotiated) -> Refusal:
    """A value that breaks its call's `response_schema`: `response_invalid` on 1.2, `invalid_frame`
    before (TOOL-023, TOOL-025), naming the JSON Pointer of the failing part (TOOL-024)."""
    code = "response_invalid" if older_minor.knows_response_schema(negotiated.version) else "invalid_frame"
    where = f"value{violation.pointer}" if violation.pointer else "the value"
    return Refusal(code, f"{where} breaks the call's response_schema ({violation.keyword}): {violation.message}")


def _window_size(n: Negotiated, hello: JsonObject) -> int | None:
    """The window a hello asks for where `state_window` is in force (WINDOW-001: ignored elsewhere)."""
    size = hello.get("window")
    return int(size) if n.windows and size is not None else None
