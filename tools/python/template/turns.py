"""The agent's side of the template: the turn driver, deadlines, and recovery after a restart.

The agent is `chatwire.script`'s player in conformance mode and a stand-in echo agent otherwise:
replace `Turns.plan` with your model. A turn is a list of decisions carried out one at a time,
each committed with the cursor after it, so that a restart continues where the last commit left
off (SCRIPT-014).
"""

from __future__ import annotations

import asyncio
import copy
import re
import sqlite3
import sys
from typing import Any, Final, Literal

from chatwire import (
    AwaitInput,
    Decision,
    End,
    FrameError,
    PlannedCall,
    Reason,
    ReduceError,
    RunTool,
    Say,
    Settlement,
    ToolBatch,
    UsageStep,
    Wait,
    plan_turn,
    response_settlement,
)
from chatwire.reducer import CancelScope, open_stream_id
from chatwire.usage import UsageError, slice_usage, usage_added
from core import HubCore, JsonObject, Session, Unit, new_id, now_ms, now_ts
from fanout import DELTA, REASONING_DELTA
from negotiation import implements
from store import Commit

#: What `Turns._next` returns after carrying out one decision.
CARRIED_OUT: Final = "carried out"
Position = tuple[str, int, int]  # invocation, decision, chunk


class Turns(HubCore):
    """Plays each session's turns and acts on the deadlines of pending calls."""

    @property
    def streams_say(self) -> bool:
        """Whether a `say` with chunks is streamed (SCRIPT-019): when the server implements
        `assistant_stream`, i.e. speaks 1.1 or later, whichever connections see the stream."""
        return implements(self.versions, "assistant_stream")

    @property
    def reasons(self) -> bool:
        """Whether a `reason` step is played (SCRIPT-027): when the server implements `reasoning`,
        i.e. speaks 1.3, whichever connections see it; otherwise it is played as nothing."""
        return implements(self.versions, "reasoning")

    def plan(self, session: Session, turn: int, user_text: str, retry: int | None = None) -> list[Decision]:
        """The agent's decisions for a turn, or for its `retry`-th retry. Conformance mode plays
        the session's script; a real backend asks its model here and maps its answers to the
        same decisions."""
        if session.agent["kind"] == "script":
            script: JsonObject | None = session.agent.get("script")
            return plan_turn(script, turn, retry)
        quoted = "".join(f"> {line}\n" for line in user_text.splitlines())
        reply = f"You said:\n\n{quoted}"
        # The echo streams its reply word by word (each with the whitespace after it), as a model would.
        words = tuple(w for w in re.findall(r"\S*\s*", reply) if w)
        return [Say(reply, words, 0), End("completed", None, "completed")]

    # ---------------------------------------------------------------- the driver

    def start_driver(self, s: Session) -> None:
        if s.driver is None or s.driver.done():
            s.driver = _spawn(self._drive(s))

    def stop_driver(self, s: Session) -> None:
        """Stops the driver now, wherever it waits (a `wait`, a chunk delay, a tool's `run_ms`, the
        client's pace); called under the session's lock after a commit that ended its run, so the
        driver is not inside a decision and the next turn's driver starts at once (CANCEL-005)."""
        driver, s.driver = s.driver, None
        if driver is not None:
            driver.cancel()

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
                    await _paced(s)
                    continue
                await asyncio.sleep(pause[0] / 1000)
                async with s.lock:
                    if not self._still_at(s, pause[1]):
                        return
                    # The pause is not committed: after a crash during it, it is simply taken again.
                    assert s.cursor is not None
                    s.cursor = {**s.cursor, "paused": True}
        finally:
            if s.driver is asyncio.current_task():  # not a driver started after this one was stopped
                s.driver = None
            self.evict_if_idle(s)

    def _still_at(self, s: Session, position: Position) -> bool:
        c = s.cursor
        return c is not None and _position(c) == position and self._running(s, c)

    def _running(self, s: Session, cursor: JsonObject) -> bool:
        run = s.state["run"]
        return bool(run["status"] == "running" and run.get("invocation_id") == cursor["invocation_id"])

    def _decisions(self, s: Session, c: JsonObject) -> list[Decision]:
        return self.plan(s, c["turn"], c["user_text"], c.get("retry"))

    def _next(self, s: Session) -> tuple[int, Position] | Literal["carried out"] | None:
        """Carries out the next decision unless it needs a pause first: returns CARRIED_OUT after
        carrying one out (or one chunk of it), (ms, position) to pause at first, or None when the
        slice is over."""
        c = s.cursor
        if c is None or not self._running(s, c):
            return None
        d = self._decisions(s, c)[c["decision"]]
        try:
            if not c.get("paused"):
                ms = 0
                if isinstance(d, (Wait, RunTool)):
                    ms = d.ms if isinstance(d, Wait) else d.run_ms
                elif isinstance(d, (Say, Reason)) and self._streams(d) and 0 < c.get("chunk", 0) < len(d.chunks):
                    ms = d.chunk_delay_ms  # before each chunk after the first (SCRIPT-019, SCRIPT-027)
                if ms > 0:
                    return (ms, _position(c))
            self._carry_out(s, c, d)
        except (ReduceError, FrameError) as e:
            self._abandon(s, e)
        except sqlite3.Error as e:
            # Nothing was committed: the turn stays where it is and continues from its cursor after a restart.
            print(f"template: session {s.id}: cannot commit, turn paused: {e}", file=sys.stderr)
            return None
        if isinstance(d, AwaitInput) and s.cursor is c:
            return None  # the slice ended awaiting input; a settlement restarts the driver
        return CARRIED_OUT

    def _streams(self, d: Say | Reason) -> bool:
        """Whether the step is streamed chunk by chunk: a redacted reasoning never is (rule 10)."""
        return self.streams_say and not (isinstance(d, Reason) and (d.redacted or not self.reasons))

    def _advance(self, c: JsonObject, **changes: Any) -> JsonObject:
        return {**c, "decision": c["decision"] + 1, "paused": False, "chunk": 0, "stream_item": None, **changes}

    def _carry_out(self, s: Session, c: JsonObject, d: Decision) -> None:
        inv = c["invocation_id"]
        ts = now_ts()
        if isinstance(d, Say):
            item = c.get("stream_item") or new_id("am", 8)
            chunk = c.get("chunk", 0)
            if self.streams_say and chunk < len(d.chunks):  # SCRIPT-019: one delta per chunk
                delta = {"type": DELTA, "invocation_id": inv, "item_id": item, "delta": d.chunks[chunk], "ts": ts}
                self.emit(s, [[delta]], cursor={**c, "chunk": chunk + 1, "stream_item": item, "paused": False})
                return
            event = {"type": "chat.assistant_message", "invocation_id": inv, "item_id": item, "markdown": d.markdown, "ts": ts}
            self.emit(s, [[event]], cursor=self._advance(c))
        elif isinstance(d, Reason):
            self._reason(s, c, d, ts)
        elif isinstance(d, UsageStep):
            # No frame (SCRIPT-028): the sum rides on the next commit's cursor, and a crash before
            # it redoes the step along with everything else since that commit.
            s.cursor = self._advance(c, usage=slice_usage(c.get("usage"), d.usage))
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
                self.arm(s, call_id, deadline)
        elif isinstance(d, RunTool):
            call_id = c["batch"]["call_ids"][d.call_index]
            units = [[{"type": "chat.tool_progress", "tool_call_id": call_id, **p, "ts": ts}] for p in d.progress]
            units.extend([[_output_event(call_id, part, ts)] for part in d.output_parts])
            units.append([settlement_event(call_id, d.settlement, ts)])
            self.emit(s, units, cursor=self._advance(c))
        elif isinstance(d, AwaitInput):
            call_ids = [c["batch"]["call_ids"][i] for i in d.call_indices]
            still_pending = [i for i in call_ids if (tool_call(s.state, i) or {}).get("status") == "pending"]
            if still_pending:
                event = self.slice_end(s, inv, "awaiting_input", "awaiting_user_input", None, ts)
                # The next slice (after the answer) adds up its own usage.
                self.emit(s, [[event]], cursor={**c, "usage": None})
            else:
                s.cursor = self._advance(c, batch=None)
                self.store.commit(s.id, Commit(next_seq=s.next_seq, cursor=s.cursor))
        elif isinstance(d, End):
            self.emit(s, [[self.slice_end(s, inv, d.status, d.reason, d.error, ts)]], cursor=None)

    def _reason(self, s: Session, c: JsonObject, d: Reason, ts: str) -> None:
        """SCRIPT-027: one `chat.reasoning`, streamed first where the server streams; nothing where
        it does not implement `reasoning`. The payload goes out byte for byte (REASON-004)."""
        inv = c["invocation_id"]
        if not self.reasons:
            s.cursor = self._advance(c)
            return
        item = c.get("stream_item") or new_id("rs", 8)
        chunk = c.get("chunk", 0)
        if self._streams(d) and chunk < len(d.chunks):
            delta = {"type": REASONING_DELTA, "invocation_id": inv, "item_id": item, "text": d.chunks[chunk], "ts": ts}
            self.emit(s, [[delta]], cursor={**c, "chunk": chunk + 1, "stream_item": item, "paused": False})
            return
        event: JsonObject = {"type": "chat.reasoning", "invocation_id": inv, "item_id": item, "text": d.text}
        if d.redacted:
            event["redacted"] = True
        if d.encrypted is not None:
            event["encrypted"] = d.encrypted
        event["ts"] = ts
        self.emit(s, [[event]], cursor=self._advance(c))

    def slice_end(self, s: Session, invocation: str, status: str, reason: str | None, error: str | None, ts: str) -> JsonObject:
        """The `chat.run_complete` that ends the current run slice, carrying what the slice's `usage`
        steps added up to (SCRIPT-028, USAGE-003), none when it had none. A sum the session's
        total cannot take (STATE-063) is left off rather than refused: the run still ends."""
        end: JsonObject = {"type": "chat.run_complete", "invocation_id": invocation, "status": status}
        if reason is not None:
            end["reason"] = reason
        if error is not None:
            end["error"] = error
        c = s.cursor
        usage = c.get("usage") if c is not None and c["invocation_id"] == invocation else None
        if usage is not None:
            try:
                usage_added(s.state.get("usage"), invocation, usage)
                end["usage"] = usage
            except UsageError as e:
                print(f"template: session {s.id}: the slice's usage cannot be added ({e}); left off", file=sys.stderr)
        end["ts"] = ts
        return end

    def _abandon(self, s: Session, cause: Exception) -> None:
        print(f"template: session {s.id}: turn abandoned: {cause}", file=sys.stderr)
        invocation = s.state["run"].get("invocation_id")
        if s.state["run"]["status"] == "running" and invocation is not None:
            self.end_run_failed(s, invocation, "agent_error", f"the agent step could not be carried out: {cause}")

    def end_run_failed(self, s: Session, invocation: str, reason: str, error: str) -> None:
        """Ends a run that cannot go on: an open stream ends with the text so far (STREAM-004),
        running calls fail, pending ones are dismissed by the server, the run fails (SCRIPT-015,
        SCRIPT-021 after a crash)."""
        ts = now_ts()
        units: list[Unit] = []
        stream_end = CancelScope.of(s.state, invocation).stream_end(invocation, ts)  # text or reasoning
        if stream_end is not None:
            units.append([stream_end])
        dismissed: list[str] = []
        for call in open_calls(s.state, invocation):
            if call["status"] == "running":
                units.append([{"type": "chat.tool_call_complete", "tool_call_id": call["id"], "status": "failed", "error": error, "ts": ts}])
            else:
                dismissed.append(call["id"])
                units.append([{"type": "chat.tool_call_dismiss", "tool_call_id": call["id"], "initiated_by": "server", "reason": reason, "ts": ts}])
        units.append([self.slice_end(s, invocation, "failed", reason, error, ts)])
        self.emit(s, units, cursor=None, remove_timers=tuple(dismissed))

    def planned_call(self, s: Session, tool_call_id: str) -> PlannedCall | None:
        """The scripted call a pending call is, from the cursor's current batch."""
        cursor = s.cursor
        if cursor is None or cursor.get("batch") is None:
            return None
        batch = cursor["batch"]
        made = self._decisions(s, cursor)[batch["decision"]]
        if not isinstance(made, ToolBatch) or tool_call_id not in batch["call_ids"]:
            return None
        planned: PlannedCall = made.calls[batch["call_ids"].index(tool_call_id)]
        return planned

    # ---------------------------------------------------------------- expiry

    def after_load(self, s: Session) -> None:
        for call, deadline in self.store.deadlines(s.id).items():
            self.arm(s, call, deadline)

    def arm(self, s: Session, tool_call_id: str, deadline_ms: int) -> None:
        loop = asyncio.get_running_loop()
        delay = max(0.0, (deadline_ms - now_ms()) / 1000)
        old = s.timers.pop(tool_call_id, None)
        if old is not None:
            old.cancel()
        s.timers[tool_call_id] = loop.call_later(delay, lambda: _spawn(self._expire(s, tool_call_id)))

    async def _expire(self, s: Session, tool_call_id: str) -> None:
        async with s.lock:
            s.timers.pop(tool_call_id, None)
            call = tool_call(s.state, tool_call_id)
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
        self.evict_if_idle(s)

    # ---------------------------------------------------------------- restart

    async def recover(self) -> int:
        """Picks up what a stop interrupted: a turn between steps continues from its cursor
        (SCRIPT-014); a turn whose tool was running or whose stream was open is interrupted
        (SCRIPT-015, SCRIPT-021); deadlines are armed again (TOOL-019)."""
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
                running = any(call["status"] == "running" for call in open_calls(s.state, invocation))
                interrupted = running or open_stream_id(s.state) is not None
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


async def _paced(s: Session) -> None:
    """Waits until one attached client has taken most of what was sent to it: the turn goes at the
    pace of the fastest tab, and a stalled one is left to its send-queue bound (ATTACH-010)."""
    pacing = [asyncio.ensure_future(a.peer.paced()) for a in s.attached]
    if not pacing:
        await asyncio.sleep(0)
        return
    _, waiting = await asyncio.wait(pacing, return_when=asyncio.FIRST_COMPLETED)
    for task in waiting:
        task.cancel()


def _position(c: JsonObject) -> Position:
    return (c["invocation_id"], c["decision"], c.get("chunk", 0))


def open_calls(state: JsonObject, invocation: str | None) -> list[JsonObject]:
    return [
        i
        for i in state["items"]
        if i["kind"] == "tool_call" and i["status"] in ("pending", "running") and (invocation is None or i["invocation_id"] == invocation)
    ]


def tool_call(state: JsonObject, tool_call_id: str) -> JsonObject | None:
    for item in state["items"]:
        if item["kind"] == "tool_call" and item["id"] == tool_call_id:
            result: JsonObject = item
            return result
    return None


def _output_event(tool_call_id: str, part: JsonObject, ts: str) -> JsonObject:
    return {"type": "chat.tool_output", "tool_call_id": tool_call_id, **part, "ts": ts}


def settlement_event(tool_call_id: str, settlement: Settlement, ts: str | None = None) -> JsonObject:
    return {"type": settlement.frame_type, "tool_call_id": tool_call_id, **copy.deepcopy(settlement.fields), "ts": ts or now_ts()}


def bare_settlement(response: JsonObject) -> Settlement:
    """A response to a pending call the current plan does not know (none in this template)."""
    dummy = PlannedCall(0, {}, True, (), None, None)
    return response_settlement(dummy, response)
