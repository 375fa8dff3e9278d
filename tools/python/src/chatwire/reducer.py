"""The UiState reducer in Python: `reduce(state, event) -> state`.

Spec: `spec/ui-state.md#reducer-rules`. This is a second implementation of
`chatwire_schema::reduce` (schema/src/reducer.rs), the reference semantics; the two are proven
equal by tests/test_reducer_traces.py on the corpus the Rust crate writes to
fixtures/reducer-traces/, and on sub-agent transcripts (since 1.3, subagents.py) by
tests/test_subagent_traces.py on fixtures/subagent-traces/. It works on plain JSON values, exactly as they travel: a state is the
`state` member of a `ui_state_snapshot`, an event is a server frame.

Null and absent: an optional member sent as `null` is the same as an absent one (serde reads both
as `None`), and the state never holds a `null` for an optional member; it leaves the member out.
That includes `result: null` of `chat.tool_call_complete`, which leaves the item without `result`.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Final

from chatwire import facts, subagents
from chatwire.facts import ID_PATTERN, OUTPUT_ID_SUFFIX
from chatwire.refusals import ReduceError
from chatwire.refusals import ensure_running as _ensure_running
from chatwire.subagents import open_calls_among, open_stream_of, transcript_at
from chatwire.usage import UsageError, usage_added

__all__ = [
    "EVENT_TYPES",
    "OUTPUT_ID_SUFFIX",
    "CancelScope",
    "ReduceError",
    "cancel_refusals",
    "empty_state",
    "latest_user_invocation",
    "open_reasoning",
    "open_stream",
    "open_stream_id",
    "output_item_id",
    "reduce",
    "reduce_all",
    "retry_cut",
    "without_open_stream",
]

JsonObject = dict[str, Any]

_ID: Final = re.compile(ID_PATTERN)
_OPEN: Final = ("pending", "running")

#: The server frames that change the state; every other frame leaves it alone.
EVENT_TYPES: Final = frozenset(facts.EVENT_TYPES)

def empty_state() -> JsonObject:
    """The state of a new session (`STATE-005`)."""
    return {"items": [], "run": {"status": "idle"}}


def output_item_id(tool_call_id: str) -> str:
    """The id of a call's `tool_output` item; refused when it is not a valid id (`ID-003`)."""
    candidate = tool_call_id + OUTPUT_ID_SUFFIX
    if not _ID.fullmatch(candidate):
        raise ReduceError("OutputIdTooLong", f"tool call id {tool_call_id} is too long to name its output item")
    return candidate


def reduce(state: JsonObject, event: JsonObject) -> JsonObject:
    """Applies `event` to a copy of `state`; raises `ReduceError` and leaves `state` alone on refusal."""
    nxt = copy.deepcopy(state)
    _apply(nxt, event)
    return nxt


def reduce_all(state: JsonObject, events: list[JsonObject]) -> JsonObject:
    """Folds `events` over `state`, stopping at the first refused one (its `ReduceError` propagates)."""
    nxt = copy.deepcopy(state)
    for event in events:
        _apply(nxt, event)
    return nxt


def _opt(frame: JsonObject, key: str) -> Any:
    """An optional member: `None` when absent or null."""
    return frame.get(key)


def _set_opt(target: JsonObject, key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def _int(value: Any) -> int:
    # INT-001: `4.0` is the integer 4; the state carries it as an integer, like serde does.
    return int(value)


def _active(state: JsonObject) -> bool:
    return bool(state["run"]["status"] == "running")


def _current(state: JsonObject) -> str:
    return str(state["run"].get("invocation_id") or "unknown")


def _has_invocation(state: JsonObject, invocation: str) -> bool:
    return any(i["invocation_id"] == invocation for i in state["items"])


def _open_calls(state: JsonObject, invocation: str | None) -> list[JsonObject]:
    """Open calls of every transcript, a host before its transcript's (since 1.3)."""
    return open_calls_among(state["items"], invocation)


def _ensure_new_id(state: JsonObject, item_id: str) -> None:
    """`STATE-020`: ids are unique across every transcript."""
    if subagents.holds_item_anywhere(state, item_id):
        raise ReduceError("DuplicateItemId", f"an item with id {item_id} already exists")


def _find_call(state: JsonObject, tool_call_id: str) -> tuple[list[int], JsonObject]:
    found = subagents.find_call(state, tool_call_id)
    if found is None:
        raise ReduceError("UnknownToolCall", f"unknown tool call {tool_call_id}")
    return found


def _open_call(state: JsonObject, tool_call_id: str) -> JsonObject:
    call = _find_call(state, tool_call_id)[1]
    if call["status"] not in _OPEN:
        raise ReduceError("AlreadySettled", f"tool call {tool_call_id} already settled as {call['status']}")
    return call


def _transcript(state: JsonObject, e: JsonObject) -> list[JsonObject]:
    """The transcript an item-creating event adds to (`STATE-065`): the top level, or that of the
    call its `parent_call_id` names, which must host a running sub-agent; then the run is checked."""
    parent = _opt(e, "parent_call_id")
    hosts = [] if parent is None else subagents.running_host(state, parent)
    _ensure_running(state, e["invocation_id"])
    return transcript_at(state["items"], hosts)


def latest_user_invocation(state: JsonObject) -> str | None:
    """The invocation of the newest `user_message` item: the latest turn."""
    for item in reversed(state["items"]):
        if item["kind"] == "user_message":
            return str(item["invocation_id"])
    return None


def retry_cut(items: list[JsonObject], named: int) -> int:
    """The index of the first item a retry after `items[named]` removes (`STATE-044`): right after
    the item, or after its output item when it is a tool call, since a call's output stays with it."""
    cut = named + 1
    item = items[named]
    if item["kind"] == "tool_call" and cut < len(items):
        nxt = items[cut]
        if nxt["kind"] == "tool_output" and nxt["tool_call_id"] == item["id"]:
            cut += 1
    return cut


def cancel_refusals(state: JsonObject, invocation_id: str, offers_cancel: bool) -> list[str]:
    """Every check of `CANCEL-006` that a `chat.cancel` of `invocation_id` fails, in the spec's
    order (the first decides the code; none means accepted), as `chatwire_schema::reducer::cancel_refusals`."""
    failing: list[str] = []
    if not offers_cancel:
        failing.append("capability_not_offered")
    if not _has_invocation(state, invocation_id):
        failing.append("unknown_invocation")
    run = state["run"]
    if run.get("invocation_id") != invocation_id or run["status"] not in ("running", "awaiting_input"):
        failing.append("run_not_active")
    return failing


@dataclass(frozen=True)
class CancelScope:
    """What an accepted cancel closes (`CANCEL-003`, `CANCEL-004`), in the order its events close
    them, as `chatwire_schema::reducer::CancelScope`: a turn awaiting input first gets a run slice
    again (`RUN-007`, only a slice in progress can end, `STATE-022`); then the run's open stream
    (`STATE-046`), every open call of the turn in item order, and the run."""

    #: The turn waits for the user: a `chat.run_started` opens the slice the cancel then ends.
    reopens: bool
    #: The open stream of the cancelled run, text or reasoning, as (item id, the text streamed so
    #: far), or None.
    stream: tuple[str, str] | None
    #: Every `pending` or `running` call of the turn, in item order.
    open_calls: tuple[str, ...]
    #: Whether that stream is a reasoning stream (since 1.3): a `chat.reasoning` ends it, not a
    #: `chat.assistant_message` (`STATE-055`, `spec/reasoning.md`).
    stream_is_reasoning: bool = False

    @staticmethod
    def of(state: JsonObject, invocation_id: str) -> CancelScope:
        """What a cancel of `invocation_id` closes in `state`."""
        text = open_stream(state)
        reasoning = open_reasoning(state)
        run = state["run"]
        stream: tuple[str, str] | None = None
        if text is not None and text["invocation_id"] == invocation_id:
            stream = (text["id"], text["markdown"])
        elif reasoning is not None and reasoning["invocation_id"] == invocation_id:
            stream = (reasoning["id"], reasoning["text"])
        return CancelScope(
            reopens=run["status"] == "awaiting_input" and run.get("invocation_id") == invocation_id,
            stream=stream,
            open_calls=tuple(c["id"] for c in _open_calls(state, invocation_id)),
            stream_is_reasoning=stream is not None and text is None,
        )

    def stream_end(self, invocation_id: str, ts: str) -> JsonObject | None:
        """The event that ends the open stream with exactly the text streamed so far (`CANCEL-004`):
        a `chat.assistant_message`, or for a reasoning stream a `chat.reasoning`; None without one."""
        if self.stream is None:
            return None
        item_id, streamed = self.stream
        if self.stream_is_reasoning:
            return {"type": "chat.reasoning", "invocation_id": invocation_id, "item_id": item_id, "text": streamed, "ts": ts}
        return {"type": "chat.assistant_message", "invocation_id": invocation_id, "item_id": item_id, "markdown": streamed, "ts": ts}


def open_stream(state: JsonObject) -> JsonObject | None:
    """The open stream (`STATE-042`): the last item, when it is an `assistant_markdown` still streaming."""
    return _open_text(state["items"])


def open_reasoning(state: JsonObject) -> JsonObject | None:
    """The open reasoning stream (`STATE-054`, since 1.3): the last item, when it is a `reasoning`
    item still streaming."""
    return _open_reasoning(state["items"])


def _open_text(items: list[JsonObject]) -> JsonObject | None:
    stream = open_stream_of(items)
    return stream if stream is not None and stream["kind"] == "assistant_markdown" else None


def _open_reasoning(items: list[JsonObject]) -> JsonObject | None:
    stream = open_stream_of(items)
    return stream if stream is not None and stream["kind"] == "reasoning" else None


def open_stream_id(state: JsonObject) -> str | None:
    """The id of the open stream of either kind, text or reasoning: at most one is open, always the
    last item (`STATE-046`, `STATE-060`)."""
    stream = open_stream(state) or open_reasoning(state)
    return None if stream is None else str(stream["id"])


def without_open_stream(state: JsonObject) -> JsonObject:
    """The view of a connection without `assistant_stream`: `state` without its open stream, text
    or reasoning (`REASON-002`), nor that of any sub-agent transcript (`STREAM-011`)."""
    view = copy.deepcopy(state)
    if open_stream_id(view) is not None:
        view["items"].pop()
    subagents.strip_nested_streams(view["items"])
    return view


def _ensure_no_open_stream(items: list[JsonObject]) -> None:
    """`STATE-046`, on one transcript."""
    stream = _open_text(items)
    if stream is not None:
        raise ReduceError("StreamOpen", f"assistant message {stream['id']} is still streaming")


def _ensure_no_open_reasoning(items: list[JsonObject]) -> None:
    """`STATE-060`, on one transcript."""
    stream = _open_reasoning(items)
    if stream is not None:
        raise ReduceError("ReasoningStreamOpen", f"reasoning {stream['id']} is still streaming")


def _apply_reasoning_delta(state: JsonObject, e: JsonObject) -> None:
    """`STATE-054`: a reasoning delta opens or grows the open reasoning stream of its transcript."""
    items = _transcript(state, e)
    item_id = e["item_id"]
    open_one = open_stream_of(items)
    if open_one is not None:
        if open_one["id"] != item_id:
            raise ReduceError("ReasoningStreamOpen", f"item {open_one['id']} is still streaming")
        stream = _open_reasoning(items)
        if stream is None or stream["invocation_id"] != e["invocation_id"]:
            # The open stream is a text stream, or another invocation's.
            raise ReduceError("NotReasoningStream", f"item {item_id} is not an open reasoning stream of this invocation")
        stream["text"] += e["text"]
        return
    if subagents.holds_item_anywhere(state, item_id):
        raise ReduceError("NotReasoningStream", f"item {item_id} exists and is not an open reasoning stream")
    items.append(
        {"kind": "reasoning", "id": item_id, "invocation_id": e["invocation_id"], "text": e["text"], "streaming": True, "ts": e["ts"]}
    )


def _apply_reasoning(state: JsonObject, e: JsonObject) -> None:
    """`STATE-055`: a whole reasoning item, or the end of the open reasoning stream of its transcript."""
    items = _transcript(state, e)
    item_id = e["item_id"]
    redacted = _opt(e, "redacted") is True
    encrypted = _opt(e, "encrypted")
    if redacted and e["text"] != "":
        raise ReduceError("RedactedWithText", f"reasoning {item_id} is redacted but carries text")
    open_one = open_stream_of(items)
    if open_one is not None:
        if open_one["id"] != item_id:
            raise ReduceError("ReasoningStreamOpen", f"item {open_one['id']} is still streaming")
        stream = _open_reasoning(items)
        if stream is None:
            # The open stream is a text stream: a reasoning frame cannot end it.
            raise ReduceError("NotReasoningStream", f"item {item_id} is not an open reasoning stream")
        if stream["invocation_id"] == e["invocation_id"]:
            if not redacted and stream["text"] != e["text"]:
                raise ReduceError("ReasoningTextMismatch", f"the text ending reasoning {item_id} differs from its deltas")
            del stream["streaming"]
            if redacted:
                stream["redacted"] = True
                stream["text"] = ""
            if encrypted is not None:
                stream["encrypted"] = encrypted
            stream["ts"] = e["ts"]
            return
    _ensure_new_id(state, item_id)
    item: JsonObject = {"kind": "reasoning", "id": item_id, "invocation_id": e["invocation_id"], "text": e["text"]}
    if redacted:
        item["redacted"] = True
    _set_opt(item, "encrypted", encrypted)
    item["ts"] = e["ts"]
    items.append(item)


def _usage_after(state: JsonObject, e: JsonObject) -> JsonObject | None:
    """`STATE-056`: the state's usage after `e`, computed before anything changes so that a refusal
    (`STATE-059`, `STATE-063`) leaves the state as it was; None when `e` carries no usage."""
    usage = _opt(e, "usage")
    if usage is None:
        return None
    try:
        return usage_added(state.get("usage"), e["invocation_id"], usage)
    except UsageError as error:
        raise ReduceError(error.kind, str(error)) from None


def _apply(state: JsonObject, e: JsonObject) -> None:
    kind = e["type"]
    items: list[JsonObject] = state["items"]
    if kind == "chat.user_message_accepted":  # STATE-010
        if _active(state):
            raise ReduceError("RunInProgress", f"a run of invocation {_current(state)} is already in progress")
        open_calls = [c["id"] for c in _open_calls(state, None)]
        if open_calls:
            raise ReduceError("OpenToolCallsAtNewTurn", f"a new turn began while tool calls are open: {open_calls}")
        if _has_invocation(state, e["invocation_id"]):
            raise ReduceError("InvocationReused", f"invocation {e['invocation_id']} already exists")
        _ensure_new_id(state, e["item_id"])
        items.append(
            {
                "kind": "user_message",
                "id": e["item_id"],
                "invocation_id": e["invocation_id"],
                "client_message_id": e["in_reply_to"],
                "text": e["text"],
                "ts": e["ts"],
            }
        )
    elif kind == "chat.run_started":  # STATE-011
        if _active(state):
            raise ReduceError("RunInProgress", f"a run of invocation {_current(state)} is already in progress")
        invocation = e["invocation_id"]
        if not _has_invocation(state, invocation):
            raise ReduceError("UnknownInvocation", f"unknown invocation {invocation}")
        if latest_user_invocation(state) != invocation:
            raise ReduceError("StaleInvocation", f"invocation {invocation} is not the latest turn, so no run of it can start")
        state["run"] = {"status": "running", "invocation_id": invocation}
    elif kind == "chat.assistant_message":  # STATE-012
        items = _transcript(state, e)
        _ensure_no_open_reasoning(items)  # STATE-060
        stream = _open_text(items)
        if stream is not None:  # STATE-043 ends the open stream, STATE-046 refuses any other message
            if stream["id"] != e["item_id"]:
                raise ReduceError("StreamOpen", f"assistant message {stream['id']} is still streaming")
            if stream["invocation_id"] == e["invocation_id"]:
                if stream["markdown"] != e["markdown"]:
                    raise ReduceError("StreamTextMismatch", f"the text ending stream {e['item_id']} differs from its deltas")
                del stream["streaming"]
                stream["ts"] = e["ts"]
                return
        _ensure_new_id(state, e["item_id"])
        items.append(
            {
                "kind": "assistant_markdown",
                "id": e["item_id"],
                "invocation_id": e["invocation_id"],
                "markdown": e["markdown"],
                "ts": e["ts"],
            }
        )
    elif kind == "chat.assistant_message_delta":  # STATE-042
        items = _transcript(state, e)
        _ensure_no_open_reasoning(items)  # STATE-060
        stream = _open_text(items)
        if stream is not None:
            if stream["id"] != e["item_id"]:
                raise ReduceError("StreamOpen", f"assistant message {stream['id']} is still streaming")
            if stream["invocation_id"] != e["invocation_id"]:
                raise ReduceError("NotStreaming", f"item {e['item_id']} is not an open stream of this invocation")
            stream["markdown"] += e["delta"]
            return
        if subagents.holds_item_anywhere(state, e["item_id"]):
            raise ReduceError("NotStreaming", f"item {e['item_id']} exists and is not an open stream")
        items.append(
            {
                "kind": "assistant_markdown",
                "id": e["item_id"],
                "invocation_id": e["invocation_id"],
                "markdown": e["delta"],
                "streaming": True,
                "ts": e["ts"],
            }
        )
    elif kind == "chat.tool_call":  # STATE-013
        call_id = e["tool_call_id"]
        items = _transcript(state, e)
        _ensure_no_open_stream(items)  # STATE-046
        _ensure_no_open_reasoning(items)  # STATE-060
        corr = _opt(e, "corr")
        if corr is not None and corr != call_id:
            raise ReduceError("CorrMismatch", f"corr {corr} differs from tool_call_id {call_id}")
        if e["interaction_type"] in ("ui_tool", "ui_surface") and _opt(e, "component_type") is None:
            raise ReduceError("MissingComponentType", f"tool call {call_id} is a ui_tool or ui_surface but has no component_type")
        _ensure_new_id(state, call_id)
        _ensure_new_id(state, output_item_id(call_id))
        item: JsonObject = {
            "kind": "tool_call",
            "id": call_id,
            "invocation_id": e["invocation_id"],
            "tool_name": e["tool_name"],
        }
        _set_opt(item, "component_type", _opt(e, "component_type"))
        _set_opt(item, "workflow_name", _opt(e, "workflow_name"))
        item.update(
            {
                "interaction_type": e["interaction_type"],
                "display": e["display"],
                "awaiting_response": e["awaiting_response"],
                "status": "pending" if e["awaiting_response"] else "running",
                "payload": copy.deepcopy(e["payload"]),
            }
        )
        _set_opt(item, "response_schema", copy.deepcopy(_opt(e, "response_schema")))  # since 1.2
        item["ts"] = e["ts"]
        items.append(item)
    elif kind == "chat.tool_progress":  # STATE-014
        call = _open_call(state, e["tool_call_id"])
        if call["status"] != "running":
            raise ReduceError("NotRunning", f"tool call {e['tool_call_id']} is not running")
        progress: JsonObject = {}
        _set_opt(progress, "message", _opt(e, "message"))
        fraction = _opt(e, "fraction")
        # A fraction is a float in the state, as serde writes it (`1` arrives, `1.0` is kept).
        _set_opt(progress, "fraction", float(fraction) if fraction is not None else None)
        call["progress"] = progress
    elif kind == "chat.tool_output":  # STATE-015
        call_id = e["tool_call_id"]
        path, call = _find_call(state, call_id)
        if call["status"] not in _OPEN:
            raise ReduceError("AlreadySettled", f"tool call {call_id} already settled as {call['status']}")
        if "subagent" in call:  # STATE-074: a host's output is its transcript
            raise ReduceError("OutputOfHost", f"tool call {call_id} hosts a sub-agent, whose transcript is its output")
        output_id = output_item_id(call_id)
        items = transcript_at(items, path[:-1])
        at = path[-1] + 1
        exists = at < len(items) and items[at]["kind"] == "tool_output" and items[at]["id"] == output_id
        if not exists:
            # An item created after the call may have taken the id (STATE-020).
            _ensure_new_id(state, output_id)
            items.insert(
                at,
                {
                    "kind": "tool_output",
                    "id": output_id,
                    "invocation_id": call["invocation_id"],
                    "tool_call_id": call_id,
                    "tool_name": call["tool_name"],
                    "approvals": [],
                    "stdout": "",
                    "stderr": "",
                },
            )
        out = items[at]
        if _opt(e, "command") is not None:
            out["command"] = e["command"]
        if _opt(e, "approval") is not None:
            out["approvals"].append(e["approval"])
        if _opt(e, "stdout") is not None:
            out["stdout"] += e["stdout"]
        if _opt(e, "stderr") is not None:
            out["stderr"] += e["stderr"]
        if _opt(e, "exit_code") is not None:
            out["exit_code"] = _int(e["exit_code"])
    elif kind == "chat.tool_call_complete":  # STATE-016
        call = _open_call(state, e["tool_call_id"])
        subagents.ensure_subagent_ended(call)  # STATE-073
        status = e["status"]
        if status == "expired" and call["status"] != "pending":
            raise ReduceError("NotAwaiting", f"tool call {e['tool_call_id']} does not await a response, so it cannot expire")
        call["status"] = status
        _set_opt(call, "result", copy.deepcopy(_opt(e, "result")))
        _set_opt(call, "error", _opt(e, "error"))
        _set_opt(call, "summary", _opt(e, "summary"))
        call["settled_ts"] = e["ts"]
    elif kind == "chat.tool_call_dismiss":  # STATE-017
        call = _open_call(state, e["tool_call_id"])
        subagents.ensure_subagent_ended(call)  # STATE-073
        call["status"] = "dismissed"
        dismissal: JsonObject = {"initiated_by": e["initiated_by"]}
        _set_opt(dismissal, "reason", _opt(e, "reason"))
        call["dismissal"] = dismissal
        call["settled_ts"] = e["ts"]
    elif kind == "chat.run_complete":  # STATE-018
        invocation = e["invocation_id"]
        _ensure_running(state, invocation)
        _ensure_no_open_stream(items)  # STATE-046
        _ensure_no_open_reasoning(items)  # STATE-060
        status = e["status"]
        open_calls_of_run = _open_calls(state, invocation)
        if status == "awaiting_input":
            # A waiting host waits with its nested form (STATE-067).
            running = [c["id"] for c in open_calls_of_run if c["status"] == "running" and not subagents.is_waiting_host(c)]
            if running:
                raise ReduceError("OpenToolCalls", f"run of invocation {invocation} ended {status} while tool calls are open: {running}")
            if not open_calls_of_run:
                raise ReduceError("NothingAwaited", f"run of invocation {invocation} ended awaiting input but no tool call of it is pending")
        elif open_calls_of_run:
            ids = [c["id"] for c in open_calls_of_run]
            raise ReduceError("OpenToolCalls", f"run of invocation {invocation} ended {status} while tool calls are open: {ids}")
        usage = _usage_after(state, e)  # STATE-056, checked before anything changes
        if usage is not None:
            state["usage"] = usage
        state["run"]["status"] = status
    elif kind == "chat.rewind_complete":  # STATE-019
        if _active(state):
            raise ReduceError("RunInProgress", f"a run of invocation {_current(state)} is already in progress")
        before = e["before_invocation_id"]
        cut = next((n for n, i in enumerate(items) if i["invocation_id"] == before), None)
        if cut is None:
            raise ReduceError("UnknownInvocation", f"unknown invocation {before}")
        removed: list[str] = []
        for item in items[cut:]:
            if item["invocation_id"] not in removed:
                removed.append(item["invocation_id"])
        if removed != list(e["removed_invocation_ids"]):
            raise ReduceError("RewindMismatch", f"rewind removes {removed} but the frame says {e['removed_invocation_ids']}")
        del items[cut:]
        if "usage" in state:  # STATE-057: the turns' entries go, the total stays
            for gone in removed:
                state["usage"]["invocations"].pop(gone, None)
        state["run"] = {"status": "idle"}
    elif kind == "chat.retry_accepted":  # STATE-044
        if _active(state):
            raise ReduceError("RunInProgress", f"a run of invocation {_current(state)} is already in progress")
        after = e["after_item_id"]
        kept = next((n for n in range(len(items) - 1, -1, -1) if items[n]["id"] == after), None)
        if kept is None:
            raise ReduceError("UnknownItem", f"unknown item {after}")
        turn = items[kept]["invocation_id"]
        if turn != e["invocation_id"] or latest_user_invocation(state) != turn:
            raise ReduceError("NotInLatestTurn", f"item {after} is not in the latest turn named by the retry")
        kept = retry_cut(items, kept) - 1
        open_kept = [c["id"] for c in open_calls_among(items[: kept + 1], None)]
        if open_kept:
            raise ReduceError("OpenCallKept", f"a retry would keep open tool calls: {open_kept}")
        removed_ids = [i["id"] for i in items[kept + 1 :]]
        if removed_ids != list(e["removed_item_ids"]):
            raise ReduceError("RetryMismatch", f"retry removes {removed_ids} but the frame says {e['removed_item_ids']}")
        del items[kept + 1 :]
        state["run"] = {"status": "idle"}
    elif kind == "chat.reasoning_delta":  # STATE-054
        _apply_reasoning_delta(state, e)
    elif kind == "chat.reasoning":  # STATE-055
        _apply_reasoning(state, e)
    elif kind == "chat.subagent_started":  # STATE-064
        subagents.start(state, e)
    elif kind == "chat.subagent_complete":  # STATE-066
        subagents.complete(state, e)
    else:
        raise ValueError(f"{kind!r} is not an event frame")
