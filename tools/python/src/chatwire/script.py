"""The scripted agent of the conformance profile, as a library: validation and a turn planner.

Spec: `spec/conformance-profile.md`. A backend in conformance mode swaps its model for this
player; everything else (persistence, reducer, transport) stays its own. The player never sends
or stores anything: `plan_turn` turns `turns[n]` of a script into the agent's *decisions*, in the
order SCRIPT-006 … SCRIPT-013 prescribe, and the backend carries each out through its real path,
committing the index of the next decision (its durable cursor, SCRIPT-014) with the frames.

`check_script` holds the rules of `AgentScript::validate` (schema/src/script.rs) that the schema
cannot express; tests/test_script_corpus.py proves it agrees with the Rust rules on the corpus
the Rust crate writes to fixtures/agent-scripts/.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Union

from chatwire.facts import MAX_EXPIRY_MS, MAX_SAY_CHUNKS, MAX_SCRIPT_DELAY_MS

__all__ = [
    "MAX_EXPIRY_MS",
    "MAX_SAY_CHUNKS",
    "MAX_SCRIPT_DELAY_MS",
    "AwaitInput",
    "Decision",
    "End",
    "PlannedCall",
    "Reason",
    "RunTool",
    "Say",
    "ScriptError",
    "Settlement",
    "ToolBatch",
    "UsageStep",
    "Wait",
    "check_script",
    "plan_turn",
    "response_settlement",
    "self_settling",
    "settle_sequence",
]

JsonObject = dict[str, Any]


class ScriptError(ValueError):
    """Why a script that fits `agent-script.json` cannot run: answer `invalid_script` (SCRIPT-002).

    `kind` is the name of the Rust `ScriptError` variant: `EmptyBatch`, `BadSettleOrder`,
    `DelayTooLong`, `StepAfterEnd`, `MissingComponentType` and `SchemaWithoutResponse` (which name the `call`),
    `TooManyChunks`, `EmptyChunk` (which names the `chunk`) or `ChunksDiffer`, and since 1.3
    `ChunksOfRedacted` and `MixedCurrencies`. A rule broken in a turn's retry (Rust's `InRetry`)
    has `retry` set and `step` indexing that retry's steps."""

    def __init__(
        self,
        kind: str,
        turn: int,
        step: int,
        message: str,
        ms: int | None = None,
        call: int | None = None,
        chunk: int | None = None,
    ) -> None:
        super().__init__(f"turn {turn} step {step}: {message}")
        self.kind = kind
        self.turn = turn
        self.step = step
        self.ms = ms
        self.call = call
        self.chunk = chunk
        self.retry: int | None = None


def _awaits(call: JsonObject) -> bool:
    return bool(call["outcome"]["kind"] == "await_response")


def self_settling(calls: list[JsonObject]) -> list[int]:
    """Indices of the calls that settle without the client (every outcome but `await_response`)."""
    return [i for i, c in enumerate(calls) if not _awaits(c)]


def settle_sequence(calls: list[JsonObject], settle_order: list[Any] | None) -> list[int]:
    """The order in which the self-settling calls of a batch settle."""
    return [int(i) for i in settle_order] if settle_order is not None else self_settling(calls)


def check_script(script: JsonObject) -> None:
    """Raises `ScriptError` when a schema-valid script breaks a rule of `AgentScript::validate`:
    an empty batch, a `ui_tool` or `ui_surface` call without a `component_type`, a
    `settle_order` that is not a permutation of the self-settling calls, a delay over its limit,
    a step after `end`, or `say` chunks that are too many, empty or do not concatenate to the
    markdown; since 1.3 a `reason` step's chunks by the same rules and never beside `redacted`
    (rule 10), and one currency for every `cost` of the script (rule 11, `USAGE-002`). A turn's
    retries follow the same rules. The first broken rule in script order is reported."""
    currency: list[str] = []  # the script's one currency, once a cost named it (rule 11)
    for turn, t in enumerate(script["turns"]):
        _check_steps(turn, t["steps"], currency)
        for retry, r in enumerate(t.get("retries") or []):
            try:
                _check_steps(turn, r["steps"], currency)
            except ScriptError as e:
                e.retry = retry
                raise


def _check_chunks(turn: int, step: int, s: JsonObject, text: str) -> None:
    """Rules 7 and 8, and 10 for a `reason` step: the chunks of a step whose whole text is `text`."""
    chunks = s.get("chunks")
    if chunks is not None:
        if len(chunks) > MAX_SAY_CHUNKS:
            raise ScriptError("TooManyChunks", turn, step, f"{len(chunks)} chunks, more than {MAX_SAY_CHUNKS}")
        empty = next((n for n, c in enumerate(chunks) if c == ""), None)
        if empty is not None:
            raise ScriptError("EmptyChunk", turn, step, f"chunk {empty} is empty", chunk=empty)
        if "".join(chunks) != text:
            raise ScriptError("ChunksDiffer", turn, step, "the chunks do not concatenate to the step's text")
    delay = s.get("chunk_delay_ms")
    if delay is not None and int(delay) > MAX_SCRIPT_DELAY_MS:
        raise ScriptError("DelayTooLong", turn, step, f"delay of {int(delay)} ms is over the limit", int(delay))


def _check_steps(turn: int, steps: list[JsonObject], currency: list[str]) -> None:
    ended = False
    for step, s in enumerate(steps):
        if ended:
            raise ScriptError("StepAfterEnd", turn, step, "nothing may follow an end step")
        op = s["op"]
        if op == "say":
            _check_chunks(turn, step, s, s["markdown"])
        elif op == "reason":  # rule 10 (since 1.3): a redacted reasoning is never streamed
            if s.get("redacted") is True and s.get("chunks") is not None:
                raise ScriptError("ChunksOfRedacted", turn, step, "a redacted reason step has no chunks")
            _check_chunks(turn, step, s, s["text"])
        elif op == "usage":  # rule 11 (since 1.3, USAGE-002): one session, one currency
            cost = s.get("cost")
            if cost is not None:
                if not currency:
                    currency.append(cost["currency"])
                elif cost["currency"] != currency[0]:
                    message = f"cost in {cost['currency']}, but the script's costs are in {currency[0]}"
                    raise ScriptError("MixedCurrencies", turn, step, message)
        elif op == "wait":
            ms = int(s["ms"])
            if ms > MAX_SCRIPT_DELAY_MS:
                raise ScriptError("DelayTooLong", turn, step, f"delay of {ms} ms is over the limit", ms)
        elif op == "end":
            ended = True
        elif op == "tool_calls":
            calls = s["calls"]
            if not calls:
                raise ScriptError("EmptyBatch", turn, step, "tool_calls has no calls")
            for index, c in enumerate(calls):
                if c["interaction_type"] in ("ui_tool", "ui_surface") and not c.get("component_type"):
                    # SCRIPT-018: the call could not be sent without breaking TOOL-005.
                    message = f"call {index} is a ui_tool or ui_surface without a component_type"
                    raise ScriptError("MissingComponentType", turn, step, message, call=index)
                if c.get("response_schema") is not None and not _awaits(c):
                    # SCRIPT-022: nothing would ever be checked against it.
                    message = f"call {index} carries a response_schema but does not await a response"
                    raise ScriptError("SchemaWithoutResponse", turn, step, message, call=index)
                run_ms = int(c.get("run_ms", 0))
                if run_ms > MAX_SCRIPT_DELAY_MS:
                    raise ScriptError("DelayTooLong", turn, step, f"delay of {run_ms} ms is over the limit", run_ms)
                expiry = c["outcome"].get("expire_after_ms") if _awaits(c) else None
                if expiry is not None and int(expiry) > MAX_EXPIRY_MS:
                    raise ScriptError("DelayTooLong", turn, step, f"delay of {int(expiry)} ms is over the limit", int(expiry))
            order = s.get("settle_order")
            if order is not None:
                given = [int(i) for i in order]
                if len(set(given)) != len(given) or set(given) != set(self_settling(calls)):
                    raise ScriptError(
                        "BadSettleOrder",
                        turn,
                        step,
                        "settle_order must list each call that does not await a response exactly once",
                    )


@dataclass(frozen=True)
class Settlement:
    """How a call settles: the event `type` and its members besides `seq`, `tool_call_id` and `ts`."""

    frame_type: str
    fields: JsonObject


@dataclass(frozen=True)
class PlannedCall:
    """One call of a batch. `tool_call` holds the `chat.tool_call` members the script dictates
    (SCRIPT-008); the backend adds `seq`, `invocation_id`, `tool_call_id` and `ts`."""

    call_index: int
    tool_call: JsonObject
    awaiting_response: bool
    #: The `chat.tool_output` members of each part, in SCRIPT-011 order (without `tool_call_id`).
    output_parts: tuple[JsonObject, ...]
    #: Milliseconds after its `chat.tool_call` at which an unanswered awaited call expires.
    expire_after_ms: int | None
    #: The `summary` of a submitted awaited call (SCRIPT-012).
    summary: str | None


@dataclass(frozen=True)
class Say:
    """Send one `chat.assistant_message` with this markdown (SCRIPT-006). With `chunks` (since
    1.1) a server that implements `assistant_stream` streams it instead (SCRIPT-019): one
    `chat.assistant_message_delta` per chunk, pausing `chunk_delay_ms` before each after the
    first, then the `chat.assistant_message` with the whole markdown; one item id for all."""

    markdown: str
    chunks: tuple[str, ...] = ()
    chunk_delay_ms: int = 0


@dataclass(frozen=True)
class Reason:
    """Send one `chat.reasoning` (since 1.3, SCRIPT-027) with one new item id: `text` (`""` and
    `redacted: true` when `redacted`) and `encrypted` byte for byte (REASON-004). With `chunks`, a
    server that implements `assistant_stream` streams it first: one `chat.reasoning_delta` per
    chunk, pausing `chunk_delay_ms` before each after the first, as a `Say`. A server that does not
    implement `reasoning` carries it out as nothing."""

    text: str
    chunks: tuple[str, ...] = ()
    chunk_delay_ms: int = 0
    encrypted: str | None = None
    redacted: bool = False


@dataclass(frozen=True)
class UsageStep:
    """Add `usage` to the run slice's usage (since 1.3, SCRIPT-028): no frame; the slice's
    `chat.run_complete` carries the sum (`usage_plus`), whatever status ends it (USAGE-003)."""

    usage: JsonObject


@dataclass(frozen=True)
class Wait:
    """Pause `ms` milliseconds with the run still in progress; no frame (SCRIPT-006)."""

    ms: int


@dataclass(frozen=True)
class ToolBatch:
    """Send every call's `chat.tool_call` in call order and one `ui_state_updated` after the last
    (MULTI-001, MULTI-002), then the `output_parts` of the awaited calls in call order (SCRIPT-009),
    and arm the deadline of each awaited call that has `expire_after_ms` (SCRIPT-013)."""

    calls: tuple[PlannedCall, ...]


@dataclass(frozen=True)
class RunTool:
    """Run one self-settling call of the current batch: pause `run_ms`, then send its progress
    reports, its output parts and its settlement, in that order (SCRIPT-010)."""

    call_index: int
    run_ms: int
    progress: tuple[JsonObject, ...]
    output_parts: tuple[JsonObject, ...]
    settlement: Settlement


@dataclass(frozen=True)
class AwaitInput:
    """The batch's self-settling calls are done. While any of `call_indices` is still pending,
    end the slice with `chat.run_complete` `awaiting_input` and go on to the next decision only
    once every one has settled (answered or expired, SCRIPT-010, MULTI-006)."""

    call_indices: tuple[int, ...]


@dataclass(frozen=True)
class End:
    """End the turn with `chat.run_complete` (SCRIPT-005, SCRIPT-007)."""

    status: str
    error: str | None = None
    reason: str | None = None


Decision = Union[Say, Reason, UsageStep, Wait, ToolBatch, RunTool, AwaitInput, End]


def _output_parts(call: JsonObject) -> tuple[JsonObject, ...]:
    out = call.get("output")
    if out is None:
        return ()
    parts: list[JsonObject] = []
    if out.get("command") is not None:
        parts.append({"command": out["command"]})
    for approval in out.get("approvals") or []:
        parts.append({"approval": approval})
    if out.get("stdout") is not None:
        parts.append({"stdout": out["stdout"]})
    if out.get("stderr") is not None:
        parts.append({"stderr": out["stderr"]})
    if out.get("exit_code") is not None:
        parts.append({"exit_code": int(out["exit_code"])})
    return tuple(parts)


def _settlement(outcome: JsonObject) -> Settlement:
    kind = outcome["kind"]
    if kind == "result":
        fields: JsonObject = {"status": "completed", "result": copy.deepcopy(outcome["value"])}
        if outcome.get("summary") is not None:
            fields["summary"] = outcome["summary"]
        return Settlement("chat.tool_call_complete", fields)
    if kind == "error":
        return Settlement("chat.tool_call_complete", {"status": "failed", "error": outcome["message"]})
    if kind == "dismiss":
        fields = {"initiated_by": "server"}
        if outcome.get("reason") is not None:
            fields["reason"] = outcome["reason"]
        return Settlement("chat.tool_call_dismiss", fields)
    raise ValueError(f"outcome {kind!r} does not settle by itself")


def _planned_call(index: int, call: JsonObject) -> PlannedCall:
    awaiting = _awaits(call)
    wire: JsonObject = {
        "tool_name": call["tool_name"],
        "interaction_type": call["interaction_type"],
        "display": call["display"],
        "awaiting_response": awaiting,
        "payload": copy.deepcopy(call.get("payload") or {}),
        "call_index": index,
    }
    for key in ("component_type", "workflow_name"):
        if call.get(key) is not None:
            wire[key] = call[key]
    if call.get("response_schema") is not None:  # since 1.2 (SCRIPT-022)
        wire["response_schema"] = copy.deepcopy(call["response_schema"])
    outcome = call["outcome"]
    expiry = outcome.get("expire_after_ms") if awaiting else None
    return PlannedCall(
        call_index=index,
        tool_call=wire,
        awaiting_response=awaiting,
        output_parts=_output_parts(call),
        expire_after_ms=int(expiry) if expiry is not None else None,
        summary=outcome.get("summary") if awaiting else None,
    )


@dataclass
class _Planner:
    decisions: list[Decision] = field(default_factory=list)

    def step(self, s: JsonObject) -> None:
        op = s["op"]
        if op == "say":
            self.decisions.append(Say(s["markdown"], tuple(s.get("chunks") or ()), int(s.get("chunk_delay_ms") or 0)))
        elif op == "reason":
            encrypted = s.get("encrypted")
            chunks = tuple(s.get("chunks") or ())
            redacted = s.get("redacted") is True
            self.decisions.append(Reason("" if redacted else s["text"], chunks, int(s.get("chunk_delay_ms") or 0), encrypted, redacted))
        elif op == "usage":
            self.decisions.append(UsageStep({k: copy.deepcopy(v) for k, v in s.items() if k != "op" and v is not None}))
        elif op == "wait":
            self.decisions.append(Wait(int(s["ms"])))
        elif op == "end":
            self.decisions.append(End(s["status"], s.get("error"), s["status"]))
        elif op == "tool_calls":
            calls: list[JsonObject] = s["calls"]
            self.decisions.append(ToolBatch(tuple(_planned_call(i, c) for i, c in enumerate(calls))))
            for index in settle_sequence(calls, s.get("settle_order")):
                c = calls[index]
                self.decisions.append(
                    RunTool(
                        call_index=index,
                        run_ms=int(c.get("run_ms", 0)),
                        progress=tuple(
                            {k: p[k] for k in ("message", "fraction") if p.get(k) is not None} for p in c.get("progress") or []
                        ),
                        output_parts=_output_parts(c),
                        settlement=_settlement(c["outcome"]),
                    )
                )
            awaited = tuple(i for i, c in enumerate(calls) if _awaits(c))
            if awaited:
                self.decisions.append(AwaitInput(awaited))
        else:
            raise ValueError(f"unknown script op {op!r}")


def plan_turn(script: JsonObject | None, n: int, retry: int | None = None) -> list[Decision]:
    """The decisions of the turn that answers the n-th accepted user message (SCRIPT-004), always
    ending with an `End`: the turn's own, `completed` after its last step (SCRIPT-007), or `failed`
    with reason `script_exhausted` when the script has no `turns[n]` or there is no script
    (SCRIPT-005). With `retry` = k, the run slice of the turn's k-th accepted retry: the steps of
    `turns[n].retries[k]`, or `script_exhausted` when there is none (SCRIPT-020). The script must
    have passed `check_script`."""
    turns = script["turns"] if script is not None else []
    if n >= len(turns):
        return [End("failed", f"the script has no turn {n}", "script_exhausted")]
    steps: list[JsonObject] = turns[n]["steps"]
    if retry is not None:
        retries = turns[n].get("retries") or []
        if retry >= len(retries):
            return [End("failed", f"the script has no retry {retry} of turn {n}", "script_exhausted")]
        steps = retries[retry]["steps"]
    planner = _Planner()
    for s in steps:
        planner.step(s)
    if not planner.decisions or not isinstance(planner.decisions[-1], End):
        planner.decisions.append(End("completed", None, "completed"))
    return planner.decisions


def response_settlement(call: PlannedCall, response: JsonObject) -> Settlement:
    """How a `chat.tool_call_response` settles an awaited call (SCRIPT-012, TOOL-016, TOOL-017):
    a submit completes it with the submitted value and the script's summary, a dismiss dismisses it
    on the client's behalf. Both carry `in_reply_to` = the response's `id`."""
    outcome = response["outcome"]
    if outcome["action"] == "submit":
        fields: JsonObject = {"status": "completed", "result": copy.deepcopy(outcome["value"])}
        if call.summary is not None:
            fields["summary"] = call.summary
        fields["in_reply_to"] = response["id"]
        return Settlement("chat.tool_call_complete", fields)
    fields = {"initiated_by": "client"}
    if outcome.get("reason") is not None:
        fields["reason"] = outcome["reason"]
    fields["in_reply_to"] = response["id"]
    return Settlement("chat.tool_call_dismiss", fields)
