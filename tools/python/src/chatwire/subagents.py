"""Sub-agent transcripts in the Python reducer (since 1.3, feature `subagents`, spec/subagents.md).

A tool call item that hosts a sub-agent run holds its transcript in `subagent.items`: items of the
same kinds as the top level, folded by the same rules (`STATE-065`). Ids are unique across every
transcript (`STATE-020`), so a call or an item is found by id alone; a path says where it sits: its
index in the top level, then in each host's transcript on the way down. The reference is
`chatwire_schema::reduce` (schema/src/subagent.rs, schema/src/reducer/subagents.rs); the two are
proven equal by tests/test_subagent_traces.py on fixtures/subagent-traces/traces.jsonl.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chatwire.facts import MAX_SUBAGENT_DEPTH
from chatwire.refusals import ReduceError, ensure_running

JsonObject = dict[str, Any]

_OPEN = ("pending", "running")


def _transcript_of(item: JsonObject) -> list[JsonObject] | None:
    sub = item.get("subagent") if item["kind"] == "tool_call" else None
    return None if sub is None else list_of(sub["items"])


def list_of(value: Any) -> list[JsonObject]:
    """`value`, a JSON array of items, typed as one."""
    items: list[JsonObject] = value
    return items


def item_path(items: list[JsonObject], item_id: str) -> list[int] | None:
    """Where the item `item_id` sits, in any transcript, or None."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item["id"] == item_id:
            return [index]
        nested = _transcript_of(item)
        below = None if nested is None else item_path(nested, item_id)
        if below is not None:
            return [index, *below]
    return None


def transcript_at(items: list[JsonObject], hosts: list[int]) -> list[JsonObject]:
    """The transcript at the end of `hosts` (each a host's index in the transcript above)."""
    for index in hosts:
        nested = _transcript_of(items[index])
        assert nested is not None, "a path's hosts host transcripts"
        items = nested
    return items


def find_call(state: JsonObject, call_id: str) -> tuple[list[int], JsonObject] | None:
    """The tool call `call_id`, in any transcript, and its path."""
    path = item_path(state["items"], call_id)
    if path is None:
        return None
    item = transcript_at(state["items"], path[:-1])[path[-1]]
    return (path, item) if item["kind"] == "tool_call" else None


def holds_item_anywhere(state: JsonObject, item_id: str) -> bool:
    """Whether some transcript, the top level included, holds an item with this id (`STATE-020`)."""
    return item_path(state["items"], item_id) is not None


def calls(items: list[JsonObject]) -> Iterator[JsonObject]:
    """Every tool call of `items` and of their transcripts, in display order (a host before its transcript)."""
    for item in items:
        if item["kind"] == "tool_call":
            yield item
            nested = _transcript_of(item)
            if nested is not None:
                yield from calls(nested)


def open_calls_among(items: list[JsonObject], invocation: str | None) -> list[JsonObject]:
    """The calls among `items` and in their transcripts still `pending` or `running`, of one invocation or of all."""
    return [c for c in calls(items) if c["status"] in _OPEN and (invocation is None or c["invocation_id"] == invocation)]


def open_stream_of(items: list[JsonObject]) -> JsonObject | None:
    """The open stream of a transcript, text or reasoning: its last item, when that one streams."""
    if items and items[-1]["kind"] in ("assistant_markdown", "reasoning") and items[-1].get("streaming") is True:
        return items[-1]
    return None


def strip_nested_streams(items: list[JsonObject]) -> None:
    """Removes the open stream of every transcript the items host (`STREAM-011`)."""
    for item in items:
        nested = _transcript_of(item)
        if nested is None:
            continue
        if open_stream_of(nested) is not None:
            nested.pop()
        strip_nested_streams(nested)


def is_waiting_host(call: JsonObject) -> bool:
    """A **waiting host** (`STATE-067`): its sub-agent runs but waits for the user, its transcript
    without an open stream and every open call in it `pending` or a waiting host itself."""
    sub = call.get("subagent")
    if sub is None or sub["status"] != "running" or open_stream_of(sub["items"]) is not None:
        return False
    open_calls = [c for c in sub["items"] if c["kind"] == "tool_call" and c["status"] in _OPEN]
    return bool(open_calls) and all(c["status"] == "pending" or is_waiting_host(c) for c in open_calls)


def running_host(state: JsonObject, parent: str) -> list[int]:
    """The path of `parent`, which must host a running sub-agent (`STATE-025`, `STATE-071`)."""
    found = find_call(state, parent)
    if found is None:
        raise ReduceError("UnknownToolCall", f"unknown tool call {parent}")
    path, call = found
    if call.get("subagent", {}).get("status") != "running":
        raise ReduceError("SubagentNotRunning", f"tool call {parent} hosts no running sub-agent")
    return path


def ensure_subagent_ended(call: JsonObject) -> None:
    """`STATE-073`: a call whose sub-agent still runs cannot settle."""
    if call.get("subagent", {}).get("status") == "running":
        raise ReduceError("SubagentRunning", f"the sub-agent of tool call {call['id']} is still running")


def _latest_call_of_thread(state: JsonObject, thread: str) -> JsonObject | None:
    latest = None
    for call in calls(state["items"]):
        if call.get("subagent", {}).get("thread_id") == thread:
            latest = call
    return latest


def start(state: JsonObject, e: JsonObject) -> None:
    """`STATE-064`: a running call starts hosting a sub-agent run (`STATE-068`, `STATE-069`, `STATE-070`)."""
    call_id = e["tool_call_id"]
    found = find_call(state, call_id)
    if found is None:
        raise ReduceError("UnknownToolCall", f"unknown tool call {call_id}")
    path, call = found
    ensure_running(state, call["invocation_id"])
    transcript = transcript_at(state["items"], path[:-1])
    after = path[-1] + 1
    has_output = (
        after < len(transcript) and transcript[after]["kind"] == "tool_output" and transcript[after]["tool_call_id"] == call_id
    )
    if call["status"] != "running" or call["awaiting_response"] or "subagent" in call or has_output:
        raise ReduceError("NotSubagentHost", f"tool call {call_id} cannot host a sub-agent")
    # The call sits in a transcript at depth len(path) - 1; its sub-agent runs one deeper.
    if len(path) > MAX_SUBAGENT_DEPTH:
        raise ReduceError("SubagentTooDeep", f"a sub-agent of tool call {call_id} would run deeper than {MAX_SUBAGENT_DEPTH}")
    thread = e["thread_id"]
    latest = _latest_call_of_thread(state, thread)
    returned = latest is not None and latest["subagent"].get("returned") is True
    answers_return = e.get("answers_return") is True
    if (None if latest is None else latest["id"]) != e.get("continues") or returned != answers_return:
        raise ReduceError("ThreadMismatch", f"the run of tool call {call_id} does not continue thread {thread} as it stands")
    sub: JsonObject = {"thread_id": thread}
    if e.get("name") is not None:
        sub["name"] = e["name"]
    sub["input"] = e["input"]
    if e.get("continues") is not None:
        sub["continues"] = e["continues"]
    if answers_return:
        sub["answers_return"] = True
    sub.update({"status": "running", "items": []})
    call["subagent"] = sub


def complete(state: JsonObject, e: JsonObject) -> None:
    """`STATE-066`: the sub-agent run ends (`STATE-071`, `STATE-072`, `STATE-075`); its host stays open."""
    call_id = e["tool_call_id"]
    found = find_call(state, call_id)
    if found is None:
        raise ReduceError("UnknownToolCall", f"unknown tool call {call_id}")
    call = found[1]
    sub = call.get("subagent")
    if sub is None or sub["status"] != "running":
        raise ReduceError("SubagentNotRunning", f"tool call {call_id} hosts no running sub-agent")
    ensure_running(state, call["invocation_id"])
    open_call = any(i["kind"] == "tool_call" and i["status"] in _OPEN for i in sub["items"])
    if open_stream_of(sub["items"]) is not None or open_call:
        raise ReduceError("SubagentBusy", f"the sub-agent of tool call {call_id} still streams or has open calls")
    returned = e.get("returned") is True
    if returned and e["status"] != "completed":
        raise ReduceError("ReturnedNotCompleted", f"the sub-agent of tool call {call_id} returned but did not complete")
    sub["status"] = e["status"]
    if e.get("response") is not None:
        sub["response"] = e["response"]
    else:
        sub.pop("response", None)
    if returned:
        sub["returned"] = True
    else:
        sub.pop("returned", None)
