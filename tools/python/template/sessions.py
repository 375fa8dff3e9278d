"""Sessions of the template backend: the protocol logic between the transport and the store.

Every change goes through `Hub.emit`: the events are folded with `chatwire.reduce` (the state the
server sends is the reducer's, STATE-004), committed in one transaction, and only then handed to
the connection (commit before send, RESUME-011). The agent is `chatwire.script`'s player in
conformance mode and a stand-in echo agent otherwise: replace `Hub.plan` with your model.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import secrets
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final, Literal, Protocol

from chatwire.facts import FATAL_CLOSE_CODES, UI_STATE_VERSION, is_fatal
from chatwire import (
    AwaitInput,
    Decision,
    End,
    FrameError,
    PlannedCall,
    ReduceError,
    RunTool,
    Say,
    ScriptError,
    Settlement,
    ToolBatch,
    Wait,
    check_script,
    empty_state,
    plan_turn,
    reduce,
    response_settlement,
    validate_server_frame,
)
from store import KEEP_CURSOR, Commit, SessionRow, Store

JsonObject = dict[str, Any]

SERVER_NAME: Final = "chatwire-python-template/0.1.0"
#: What `Hub._next` returns after carrying out one decision.
CARRIED_OUT: Final = "carried out"
# The protocol versions this template speaks, newest first: 1.0 only. It implements no 1.1 feature
# (ui_state_patch, resume_catch_up), so it does not offer 1.1 although the package's facts list it;
# a client offering ["1.1", "1.0"] gets 1.0 and the runner reports the 1.1 scenarios not applicable.
TEMPLATE_VERSIONS: Final[tuple[str, ...]] = ("1.0",)


class Peer(Protocol):
    """The transport's side of a connection; both methods return at once (a bounded outbox)."""

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
    import json

    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Session(SessionRow):
    """A session held in memory: the stored row (kept equal to what is committed) and what only
    lives while the process does."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    peer: Peer | None = None
    driver: asyncio.Task[None] | None = None
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)

    def send(self, frame: JsonObject) -> None:
        if self.peer is not None:
            self.peer.send_text(dumps(frame))


# One unit is one event, or the calls of one batch; each unit is followed by one ui_state_updated.
Unit = list[JsonObject]


class Hub:
    """Every session of this backend instance."""

    def __init__(self, store: Store, *, conformance: bool, max_frame_bytes: int) -> None:
        self.store = store
        self.conformance = conformance
        self.max_frame_bytes = max_frame_bytes
        self.sessions: dict[str, Session] = {}

    # ---------------------------------------------------------------- agent

    def plan(self, session: Session, turn: int, user_text: str) -> list[Decision]:
        """The agent's decisions for a turn. Conformance mode plays the session's script; a real
        backend asks its model here and maps its answers to the same decisions."""
        if session.agent["kind"] == "script":
            script: JsonObject | None = session.agent.get("script")
            return plan_turn(script, turn)
        quoted = "".join(f"> {line}\n" for line in user_text.splitlines())
        return [Say(f"You said:\n\n{quoted}"), End("completed", None, "completed")]

    def capabilities(self) -> list[str]:
        caps = ["rewind", "tool_output", "tool_expiry", "restart_durability"]
        if self.conformance:
            caps.append("conformance_script")  # SCRIPT-003: exactly in conformance mode
        return caps

    # ---------------------------------------------------------------- committing and sending

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
    ) -> None:
        """Applies, commits, then sends. Raises ReduceError (nothing committed) when the reducer
        refuses an event (STATE-006)."""
        state = s.state
        seq = s.next_seq
        frames: list[JsonObject] = []
        events: list[JsonObject] = []
        for unit in units:
            for event in unit:
                frame = {"type": event["type"], "seq": seq, **{k: v for k, v in event.items() if k != "type"}}
                state = reduce(state, frame)
                frames.append(frame)
                events.append(frame)
                seq += 1
            frames.append({"type": "ui_state_updated", "seq": seq, "v": UI_STATE_VERSION, "state": state})
            seq += 1
        # FRAME-002: a bug here must not reach the client. A whole state is validated item by item
        # only where it changed: validating every item of every update costs the square of the
        # session's size (a 600-item turn spent 94% of its time there).
        checked = s.state["items"]
        for frame in frames:
            if frame["type"] == "ui_state_updated":
                items = frame["state"]["items"]
                fresh = [it for i, it in enumerate(items) if i >= len(checked) or it != checked[i]]
                validate_server_frame({**frame, "state": {**frame["state"], "items": fresh}})
                checked = items
            else:
                validate_server_frame(frame)
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
        for frame in frames:
            s.send(frame)

    def error_frame(self, code: str, message: str, in_reply_to: str | None, seq: int | None) -> JsonObject:
        frame: JsonObject = {"type": "error"}
        if seq is not None:
            frame["seq"] = seq
        frame.update({"code": code, "message": message})
        if in_reply_to is not None:
            frame["in_reply_to"] = in_reply_to
        frame["fatal"] = is_fatal(code)  # ERROR-002
        if code == "unsupported_version":
            frame["supported_versions"] = list(TEMPLATE_VERSIONS)
        return frame

    def send_session_error(self, s: Session, peer: Peer, refusal: Refusal, in_reply_to: str | None) -> None:
        """An error on a connection bound to `s`: it takes the next seq (SEQ-002), committed first."""
        seq = s.next_seq
        self.store.commit(s.id, Commit(next_seq=seq + 1))
        s.next_seq = seq + 1
        peer.send_text(dumps(self.error_frame(refusal.code, refusal.message, in_reply_to, seq)))

    # ---------------------------------------------------------------- hello

    async def hello(self, peer: Peer, hello: JsonObject) -> Session:
        """Opens or resumes a session; raises Refusal (the connection stays unbound)."""
        offered = set(hello["versions"])
        version = next((v for v in TEMPLATE_VERSIONS if v in offered), None)  # newest first (SESSION-003)
        if version is None:
            raise Refusal("unsupported_version", "none of the offered versions is supported")
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
        if resume is not None:
            return await self._resume(peer, hello, version, resume)
        return self._open(peer, hello, version, script)

    def _open(self, peer: Peer, hello: JsonObject, version: str, script: JsonObject | None) -> Session:
        token = new_id("rt", 16)
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
        self.store.create_session(s)
        self.sessions[s.id] = s
        s.peer = peer
        self._greet(s, hello["id"], version, token, resumed=False, first=1)
        return s

    async def _resume(self, peer: Peer, hello: JsonObject, version: str, resume: JsonObject) -> Session:
        # One message for an unknown session and a wrong token (RESUME-005).
        rejected = Refusal("resume_rejected", "resume refused: unknown session or wrong resume token")
        s = self.load(resume["session_id"])
        if s is None:
            raise rejected
        async with s.lock:
            if not hmac.compare_digest(hash_token(resume["resume_token"]), s.token_hash):
                raise rejected
            if int(resume["last_seq"]) > s.next_seq - 1:
                raise Refusal("resume_cursor_ahead", f"last_seq {int(resume['last_seq'])} is ahead of the last seq sent on this session")
            old = s.peer
            if old is not None and old is not peer:
                # SESSION-010: the newest connection wins; the old one gets a fatal error and 4001.
                self.send_session_error(s, old, Refusal("session_taken_over", "another connection resumed this session"), None)
                old.close(FATAL_CLOSE_CODES["session_taken_over"], "session taken over")
            first = s.next_seq
            self.store.commit(s.id, Commit(next_seq=first + 2))
            s.next_seq = first + 2
            s.peer = peer
            self._greet(s, hello["id"], version, resume["resume_token"], resumed=True, first=first)
        return s

    def _greet(self, s: Session, hello_id: str, version: str, token: str, *, resumed: bool, first: int) -> None:
        welcome = {
            "type": "session.welcome",
            "seq": first,
            "in_reply_to": hello_id,
            "version": version,
            "session_id": s.id,
            "resume_token": token,
            "resumed": resumed,
            "capabilities": self.capabilities(),
            "limits": {"max_frame_bytes": self.max_frame_bytes},
            "server": SERVER_NAME,
        }
        snapshot = {"type": "ui_state_snapshot", "seq": first + 1, "v": UI_STATE_VERSION, "state": s.state}
        s.send(welcome)
        s.send(snapshot)

    def load(self, session_id: str) -> Session | None:
        s = self.sessions.get(session_id)
        if s is not None:
            return s
        row = self.store.load_session(session_id)
        if row is None:
            return None
        s = Session(row.id, row.token_hash, row.agent, row.state, row.next_seq, row.turns, row.cursor, row.accepted)
        self.sessions[s.id] = s
        for call, deadline in self.store.deadlines(s.id).items():
            self._arm(s, call, deadline)
        return s

    def detach(self, s: Session, peer: Peer) -> None:
        if s.peer is peer:
            s.peer = None
        self._evict_if_idle(s)

    def _evict_if_idle(self, s: Session) -> None:
        # Bounded memory: a session nobody watches and nothing drives lives only in the store.
        if s.peer is None and s.driver is None and not s.timers and not s.lock.locked():
            self.sessions.pop(s.id, None)

    # ---------------------------------------------------------------- client frames

    async def handle(self, s: Session, peer: Peer, frame: JsonObject) -> None:
        """A schema-valid client frame other than `session.hello`, on a connection bound to `s`."""
        async with s.lock:
            if s.peer is not peer:
                return  # SESSION-011: the session was taken over; this connection is no longer served
            try:
                kind = frame["type"]
                if kind == "chat.user_message":
                    self._user_message(s, frame)
                elif kind == "chat.tool_call_response":
                    self._tool_call_response(s, frame)
                elif kind == "chat.rewind":
                    self._rewind(s, frame)
                else:
                    raise Refusal("unknown_type", f"unknown frame type {kind!r}")
            except Refusal as refusal:
                self.send_session_error(s, peer, refusal, frame.get("id"))
            except (ReduceError, FrameError, sqlite3.Error) as e:
                # ERROR-009: the server's own failure; emit committed nothing, so nothing changed.
                print(f"template: session {s.id}: failed on a valid request: {e}", file=sys.stderr)
                self.send_session_error(s, peer, Refusal("internal_error", "the server failed and the session is unchanged"), frame.get("id"))

    def _user_message(self, s: Session, msg: JsonObject) -> None:
        # TURN-006: a duplicate is told so even during a run; run_in_progress would say it was not accepted.
        if msg["id"] in s.accepted:
            raise Refusal("duplicate_message", f"message {msg['id']} was already accepted")
        if s.state["run"]["status"] == "running":
            raise Refusal("run_in_progress", "a run is in progress; wait for run_complete")
        ts = now_ts()
        units: list[Unit] = []
        superseded = [c["id"] for c in _open_calls(s.state, None)]
        for call in superseded:  # TURN-004
            units.append([{"type": "chat.tool_call_dismiss", "tool_call_id": call, "initiated_by": "server", "reason": "superseded", "ts": ts}])
        invocation = new_id("inv", 8)
        units.append(
            [
                {
                    "type": "chat.user_message_accepted",
                    "in_reply_to": msg["id"],
                    "invocation_id": invocation,
                    "item_id": new_id("um", 8),
                    "text": msg["text"],
                    "ts": ts,
                }
            ]
        )
        units.append([{"type": "chat.run_started", "invocation_id": invocation, "ts": ts}])
        cursor = {"invocation_id": invocation, "turn": s.turns, "decision": 0, "user_text": msg["text"], "batch": None}
        self.emit(
            s,
            units,
            cursor=cursor,
            turns=s.turns + 1,
            requests=(msg,),
            accepted_message=msg["id"],
            remove_timers=tuple(superseded),
        )
        self.start_driver(s)

    def _tool_call_response(self, s: Session, response: JsonObject) -> None:
        call = _tool_call(s.state, response["tool_call_id"])
        if call is None:
            raise Refusal("unknown_tool_call", f"no tool call {response['tool_call_id']} in this session")
        if call["status"] not in ("pending", "running"):
            raise Refusal("tool_call_settled", f"tool call {call['id']} has already settled")
        if call["status"] != "pending":
            raise Refusal("tool_call_not_awaiting", f"tool call {call['id']} does not await a response")
        planned = self._planned_call(s, call["id"])
        settlement = response_settlement(planned, response) if planned is not None else _bare_settlement(response)
        opens_slice = s.state["run"]["status"] != "running"
        units: list[Unit] = []
        if opens_slice:  # RUN-007
            units.append([{"type": "chat.run_started", "invocation_id": call["invocation_id"], "ts": now_ts()}])
        units.append([_settlement_event(call["id"], settlement)])
        # The response and its settlement commit together (RESUME-012): executed exactly once.
        self.emit(s, units, requests=(response,), remove_timers=(call["id"],))
        if opens_slice:
            self.start_driver(s)

    def _rewind(self, s: Session, rewind: JsonObject) -> None:
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
        dropped_calls = tuple(c["id"] for c in _open_calls(s.state, None) if c["invocation_id"] in removed)
        event = {
            "type": "chat.rewind_complete",
            "in_reply_to": rewind["id"],
            "before_invocation_id": before,
            "removed_invocation_ids": removed,
            "ts": now_ts(),
        }
        # The scripted agent is not rewound: the next message runs the next turn (SCRIPT-004).
        self.emit(s, [[event]], cursor=None, requests=(rewind,), remove_timers=dropped_calls)

    def _planned_call(self, s: Session, tool_call_id: str) -> PlannedCall | None:
        cursor = s.cursor
        if cursor is None or cursor.get("batch") is None:
            return None
        batch = cursor["batch"]
        decisions = self.plan(s, cursor["turn"], cursor["user_text"])
        made = decisions[batch["decision"]]
        if not isinstance(made, ToolBatch) or tool_call_id not in batch["call_ids"]:
            return None
        planned: PlannedCall = made.calls[batch["call_ids"].index(tool_call_id)]
        return planned

    # ---------------------------------------------------------------- expiry

    def _arm(self, s: Session, tool_call_id: str, deadline_ms: int) -> None:
        loop = asyncio.get_running_loop()
        delay = max(0.0, (deadline_ms - now_ms()) / 1000)
        old = s.timers.pop(tool_call_id, None)
        if old is not None:
            old.cancel()
        s.timers[tool_call_id] = loop.call_later(delay, lambda: _spawn(self._expire(s, tool_call_id)))

    async def _expire(self, s: Session, tool_call_id: str) -> None:
        async with s.lock:
            s.timers.pop(tool_call_id, None)
            call = _tool_call(s.state, tool_call_id)
            if call is None or call["status"] != "pending":
                self.store.commit(s.id, Commit(next_seq=s.next_seq, remove_timers=[tool_call_id]))
                return
            opens_slice = s.state["run"]["status"] != "running"
            ts = now_ts()
            units: list[Unit] = []
            if opens_slice:  # RUN-007
                units.append([{"type": "chat.run_started", "invocation_id": call["invocation_id"], "ts": ts}])
            units.append([{"type": "chat.tool_call_complete", "tool_call_id": tool_call_id, "status": "expired", "error": "expired", "ts": ts}])
            try:
                self.emit(s, units, remove_timers=(tool_call_id,))
            except (ReduceError, FrameError, sqlite3.Error) as e:
                print(f"template: session {s.id}: cannot expire {tool_call_id}: {e}", file=sys.stderr)
                return
            if opens_slice:
                self.start_driver(s)
        self._evict_if_idle(s)

    # ---------------------------------------------------------------- the turn driver

    def start_driver(self, s: Session) -> None:
        if s.driver is None or s.driver.done():
            s.driver = _spawn(self._drive(s))

    async def _drive(self, s: Session) -> None:
        """Carries out the turn's decisions one by one, each committed with the cursor after it.
        Bounded: every iteration advances the cursor or stops; a plan is finite."""
        try:
            while True:
                async with s.lock:
                    pause = self._next(s)
                if pause is None:
                    return
                if pause == CARRIED_OUT:
                    # Let the writer and other sessions run between decisions: a long turn played
                    # in one go would hold the event loop (no frame written, no pong) until it ends.
                    # A client that reads, if slowly, sets the pace; one that stopped does not.
                    peer = s.peer
                    await (peer.paced() if peer is not None else asyncio.sleep(0))
                    continue
                await asyncio.sleep(pause[0] / 1000)
                async with s.lock:
                    if not self._still_at(s, pause[1]):
                        return
                    self._after_pause(s)
        finally:
            s.driver = None
            self._evict_if_idle(s)

    def _still_at(self, s: Session, position: tuple[str, int]) -> bool:
        c = s.cursor
        return c is not None and (c["invocation_id"], c["decision"]) == position and self._running(s, c)

    def _running(self, s: Session, cursor: JsonObject) -> bool:
        run = s.state["run"]
        return bool(run["status"] == "running" and run.get("invocation_id") == cursor["invocation_id"])

    def _next(self, s: Session) -> tuple[int, tuple[str, int]] | Literal["carried out"] | None:
        """Carries out the next decision unless it needs a pause first: returns CARRIED_OUT after
        carrying one out, (ms, position) to pause at before the decision at `position`, or None
        when the slice is over."""
        c = s.cursor
        if c is None or not self._running(s, c):
            return None
        decisions = self.plan(s, c["turn"], c["user_text"])
        d = decisions[c["decision"]]
        position = (c["invocation_id"], c["decision"])
        try:
            if isinstance(d, (Wait, RunTool)) and not c.get("paused"):
                ms = d.ms if isinstance(d, Wait) else d.run_ms
                if ms > 0:
                    return (ms, position)
            self._carry_out(s, c, d)
        except (ReduceError, FrameError) as e:
            self._abandon(s, e)
            return None
        except sqlite3.Error as e:
            # Nothing was committed or sent; the turn resumes from its cursor after a restart.
            print(f"template: session {s.id}: cannot commit, turn paused: {e}", file=sys.stderr)
            return None
        if isinstance(d, AwaitInput) and s.cursor is c:
            return None  # the slice ended awaiting input; a settlement restarts the driver
        return CARRIED_OUT

    def _after_pause(self, s: Session) -> None:
        # The pause is not committed: after a crash during it, it is simply taken again.
        assert s.cursor is not None
        s.cursor = {**s.cursor, "paused": True}

    def _advance(self, c: JsonObject, **changes: Any) -> JsonObject:
        return {**c, "decision": c["decision"] + 1, "paused": False, **changes}

    def _carry_out(self, s: Session, c: JsonObject, d: Decision) -> None:
        inv = c["invocation_id"]
        ts = now_ts()
        if isinstance(d, Say):
            event = {"type": "chat.assistant_message", "invocation_id": inv, "item_id": new_id("am", 8), "markdown": d.markdown, "ts": ts}
            self.emit(s, [[event]], cursor=self._advance(c))
        elif isinstance(d, Wait):
            s.cursor = self._advance(c)  # a wait sends nothing, so there is nothing to commit
        elif isinstance(d, ToolBatch):
            ids = [new_id("tc", 8) for _ in d.calls]
            batch = [
                {"type": "chat.tool_call", "invocation_id": inv, "tool_call_id": call_id, **call.tool_call, "ts": ts}
                for call_id, call in zip(ids, d.calls)
            ]
            units: list[Unit] = [batch]
            timers: dict[str, int] = {}
            for call_id, call in zip(ids, d.calls):
                if call.awaiting_response:  # SCRIPT-009: outputs of awaited calls right after the batch
                    units.extend([[_output_event(call_id, part, ts)] for part in call.output_parts])
                    if call.expire_after_ms is not None:
                        timers[call_id] = now_ms() + call.expire_after_ms
            cursor = self._advance(c, batch={"decision": c["decision"], "call_ids": ids})
            self.emit(s, units, cursor=cursor, add_timers=timers)
            for call_id, deadline in timers.items():
                self._arm(s, call_id, deadline)
        elif isinstance(d, RunTool):
            call_id = c["batch"]["call_ids"][d.call_index]
            units = [[{"type": "chat.tool_progress", "tool_call_id": call_id, **p, "ts": ts}] for p in d.progress]
            units.extend([[_output_event(call_id, part, ts)] for part in d.output_parts])
            units.append([_settlement_event(call_id, d.settlement, ts)])
            self.emit(s, units, cursor=self._advance(c))
        elif isinstance(d, AwaitInput):
            call_ids = [c["batch"]["call_ids"][i] for i in d.call_indices]
            still_pending = [i for i in call_ids if (_tool_call(s.state, i) or {}).get("status") == "pending"]
            if still_pending:
                event = {"type": "chat.run_complete", "invocation_id": inv, "status": "awaiting_input", "reason": "awaiting_user_input", "ts": ts}
                self.emit(s, [[event]])
            else:
                s.cursor = self._advance(c, batch=None)
                self.store.commit(s.id, Commit(next_seq=s.next_seq, cursor=s.cursor))
        elif isinstance(d, End):
            end: JsonObject = {"type": "chat.run_complete", "invocation_id": inv, "status": d.status}
            if d.reason is not None:
                end["reason"] = d.reason
            if d.error is not None:
                end["error"] = d.error
            end["ts"] = ts
            self.emit(s, [[end]], cursor=None)

    def _abandon(self, s: Session, cause: Exception) -> None:
        print(f"template: session {s.id}: turn abandoned: {cause}", file=sys.stderr)
        invocation = s.state["run"].get("invocation_id")
        if s.state["run"]["status"] == "running" and invocation is not None:
            self.end_run_failed(s, invocation, "agent_error", f"the agent step could not be carried out: {cause}")

    def end_run_failed(self, s: Session, invocation: str, reason: str, error: str) -> None:
        """Ends a run that cannot go on: running calls fail, pending ones are dismissed by the
        server, the run fails (SCRIPT-015 after a crash)."""
        ts = now_ts()
        units: list[Unit] = []
        dismissed: list[str] = []
        for call in _open_calls(s.state, invocation):
            if call["status"] == "running":
                units.append([{"type": "chat.tool_call_complete", "tool_call_id": call["id"], "status": "failed", "error": error, "ts": ts}])
            else:
                dismissed.append(call["id"])
                units.append([{"type": "chat.tool_call_dismiss", "tool_call_id": call["id"], "initiated_by": "server", "reason": reason, "ts": ts}])
        units.append([{"type": "chat.run_complete", "invocation_id": invocation, "status": "failed", "reason": reason, "error": error, "ts": ts}])
        self.emit(s, units, cursor=None, remove_timers=tuple(dismissed))

    # ---------------------------------------------------------------- restart

    async def recover(self) -> int:
        """Picks up what a stop interrupted: a turn between steps continues from its cursor
        (SCRIPT-014), a turn whose tool was running is interrupted (SCRIPT-015), and deadlines are
        armed again (TOOL-019)."""
        ids = self.store.sessions_with_unfinished_work()
        for session_id in ids:
            s = self.load(session_id)
            if s is None:
                continue
            async with s.lock:
                run = s.state["run"]
                if run["status"] != "running":
                    continue
                invocation = run.get("invocation_id")
                c = s.cursor
                interrupted = any(call["status"] == "running" for call in _open_calls(s.state, invocation))
                if c is not None and c["invocation_id"] == invocation and not interrupted:
                    s.cursor = {**c, "paused": False}
                    self.start_driver(s)
                elif invocation is not None:
                    self.end_run_failed(s, invocation, "interrupted", "interrupted")
        return len(ids)


# ---------------------------------------------------------------- helpers

_tasks: set[asyncio.Task[None]] = set()


def _spawn(coro: Any) -> asyncio.Task[None]:
    """Starts a task and keeps a reference until it ends (asyncio holds only weak ones)."""
    task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


def _open_calls(state: JsonObject, invocation: str | None) -> list[JsonObject]:
    return [
        i
        for i in state["items"]
        if i["kind"] == "tool_call" and i["status"] in ("pending", "running") and (invocation is None or i["invocation_id"] == invocation)
    ]


def _tool_call(state: JsonObject, tool_call_id: str) -> JsonObject | None:
    for item in state["items"]:
        if item["kind"] == "tool_call" and item["id"] == tool_call_id:
            result: JsonObject = item
            return result
    return None


def _output_event(tool_call_id: str, part: JsonObject, ts: str) -> JsonObject:
    return {"type": "chat.tool_output", "tool_call_id": tool_call_id, **part, "ts": ts}


def _settlement_event(tool_call_id: str, settlement: Settlement, ts: str | None = None) -> JsonObject:
    return {"type": settlement.frame_type, "tool_call_id": tool_call_id, **copy.deepcopy(settlement.fields), "ts": ts or now_ts()}


def _bare_settlement(response: JsonObject) -> Settlement:
    """A response to a pending call the current plan does not know (none in this template)."""
    dummy = PlannedCall(0, {}, True, (), None, None)
    return response_settlement(dummy, response)
