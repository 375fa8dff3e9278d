"""The kit's 1.2 rules that have no corpus of their own: `cancel_refusals` and `CancelScope`
(mirroring `chatwire_schema::reducer`'s tests, since 1.3 with a reasoning stream), `older_minor`
(mirroring `chatwire_schema::older_minor`'s), `response_schema` carried from a script to the
call's item, and a run slice's usage (`slice_usage`, SCRIPT-028)."""

from __future__ import annotations

from typing import Any

from chatwire import ToolBatch, apply_with_patch, check_script, empty_state, plan_turn, reduce
from chatwire import older_minor
from chatwire.facts import MAX_SAFE_INTEGER
from chatwire.reducer import CancelScope, cancel_refusals
from chatwire.usage import slice_usage

TS = "2026-01-01T00:00:00Z"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _call(call_id: str, status: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "id": call_id, "invocation_id": "inv-1", "tool_name": "t", "interaction_type": "auto_tool",
            "display": "inline", "awaiting_response": False, "status": status, "payload": {}, **extra, "ts": TS}  # fmt: skip


def _user() -> dict[str, Any]:
    return {"kind": "user_message", "id": "u-1", "invocation_id": "inv-1", "client_message_id": "m-1", "text": "hi", "ts": TS}


def _state(items: list[dict[str, Any]], status: str) -> dict[str, Any]:
    return {"items": items, "run": {"status": status, "invocation_id": "inv-1"}}


def test_a_cancel_is_refused_in_the_stated_order_and_accepted_only_for_the_current_open_run() -> None:
    running = _state([_user(), _call("c-1", "running")], "running")
    assert cancel_refusals(running, "inv-1", True) == []
    assert cancel_refusals(running, "inv-1", False) == ["capability_not_offered"]
    assert cancel_refusals(running, "inv-9", True) == ["unknown_invocation", "run_not_active"]
    assert cancel_refusals(_state([_user()], "completed"), "inv-1", True) == ["run_not_active"]
    assert cancel_refusals(_state([_user()], "cancelled"), "inv-1", True) == ["run_not_active"]
    waiting = _state([_user()], "awaiting_input")
    assert cancel_refusals(waiting, "inv-1", True) == []
    assert CancelScope.of(running, "inv-1") == CancelScope(reopens=False, stream=None, open_calls=("c-1",))
    assert CancelScope.of(waiting, "inv-1").reopens


def test_a_cancel_scope_has_the_open_stream_and_the_turns_open_calls_in_item_order() -> None:
    items = [_user(), _call("c-2", "pending", awaiting_response=True), _call("c-1", "running"), _call("c-0", "completed")]
    items.append({"kind": "assistant_markdown", "id": "am-1", "invocation_id": "inv-1", "markdown": "The fir", "streaming": True, "ts": TS})
    scope = CancelScope.of(_state(items, "running"), "inv-1")
    assert scope == CancelScope(reopens=False, stream=("am-1", "The fir"), open_calls=("c-2", "c-1"))
    assert CancelScope.of(_state(items, "running"), "inv-2") == CancelScope(reopens=False, stream=None, open_calls=())


def test_an_older_minor_sees_no_response_schema_in_states_frames_or_patches() -> None:
    call = _call("c-1", "pending", awaiting_response=True, response_schema={"type": "string"})
    full = _state([call], "awaiting_input")
    older = older_minor.state(full, "1.1")
    assert "response_schema" not in older["items"][0] and "response_schema" in full["items"][0]
    assert older_minor.state(full, "1.2") is full
    ops = older_minor.patch([{"op": "add", "path": "/items/-", "value": call}], "1.1")
    assert "response_schema" not in ops[0]["value"]
    kept = older_minor.patch([{"op": "add", "path": "/items/-", "value": call}], "1.2")
    assert "response_schema" in kept[0]["value"]
    replaced = older_minor.patch([{"op": "replace", "path": "/items", "value": [call]}], "1.0")
    assert "response_schema" not in replaced[0]["value"][0]
    frame = {"type": "chat.tool_call", "seq": 5, "tool_call_id": "c-1", "response_schema": {"type": "string"}}
    assert older_minor.frame(frame, "1.1") == {"type": "chat.tool_call", "seq": 5, "tool_call_id": "c-1"}
    assert older_minor.frame(frame, "1.2") is frame
    answer = {"type": "chat.cancel_accepted", "seq": 6, "in_reply_to": "x", "invocation_id": "inv-1", "ts": TS}
    assert older_minor.frame(answer, "1.0") is None and older_minor.frame(answer, "1.2") is answer
    assert [older_minor.knows_response_schema(v) for v in ("1.0", "1.1", "1.2", "1.10")] == [False, False, True, True]


def test_a_scripted_calls_response_schema_reaches_its_frame_and_its_item() -> None:
    call = {"tool_name": "ask", "interaction_type": "ui_tool", "component_type": "Form", "display": "inline",
            "response_schema": SCHEMA, "outcome": {"kind": "await_response"}}  # fmt: skip
    script = {"turns": [{"steps": [{"op": "tool_calls", "calls": [call]}]}]}
    check_script(script)
    batch = plan_turn(script, 0)[0]
    assert isinstance(batch, ToolBatch)
    wire = batch.calls[0].tool_call
    assert wire["response_schema"] == SCHEMA
    accepted = {"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "m-1", "invocation_id": "inv-1", "item_id": "u-1", "text": "hi", "ts": TS}
    state = reduce(reduce(empty_state(), accepted), {"type": "chat.run_started", "seq": 4, "invocation_id": "inv-1", "ts": TS})
    event = {"type": "chat.tool_call", "seq": 5, "invocation_id": "inv-1", "tool_call_id": "c-1", **wire, "ts": TS}
    after, ops = apply_with_patch(state, event)
    assert after["items"][1]["response_schema"] == SCHEMA
    assert ops[0]["value"]["response_schema"] == SCHEMA


def test_an_older_minor_never_sees_a_frame_a_later_minor_added() -> None:
    page = {"type": "chat.history_page", "seq": 9, "in_reply_to": "hr-1", "items": [], "before": None, "has_more": False}
    cancelled = {"type": "chat.cancel_accepted", "seq": 9, "in_reply_to": "c-1", "invocation_id": "inv-1", "ts": "2026-11-26T10:04:00Z"}
    for frame in (page, cancelled):
        assert older_minor.frame(frame, "1.1") is None
        assert older_minor.frame(frame, "1.2") is frame
    delta = {"type": "chat.assistant_message_delta", "seq": 3, "invocation_id": "inv-1", "item_id": "a-1", "delta": "x", "ts": "2026-11-26T10:04:00Z"}
    assert older_minor.frame(delta, "1.0") is None
    assert older_minor.frame(delta, "1.1") is delta


def test_a_cancel_mid_reasoning_stream_ends_it_with_a_reasoning_frame_of_the_text_so_far() -> None:
    # CANCEL-004 for a reasoning stream (since 1.3): a chat.reasoning ends it (STATE-055), not a message.
    thinking = {"kind": "reasoning", "id": "rs-1", "invocation_id": "inv-1", "text": "First this, ", "streaming": True, "ts": TS}
    state = _state([_user(), thinking], "running")
    scope = CancelScope.of(state, "inv-1")
    assert scope == CancelScope(reopens=False, stream=("rs-1", "First this, "), open_calls=(), stream_is_reasoning=True)
    end = scope.stream_end("inv-1", TS)
    assert end == {"type": "chat.reasoning", "invocation_id": "inv-1", "item_id": "rs-1", "text": "First this, ", "ts": TS}
    after = reduce(state, end)
    assert after["items"][-1] == {k: v for k, v in thinking.items() if k != "streaming"}
    text = CancelScope.of(_state([_user(), {**thinking, "kind": "assistant_markdown", "markdown": "Th"}], "running"), "inv-1")
    assert (text.stream_is_reasoning, text.stream_end("inv-1", TS)["type"]) == (False, "chat.assistant_message")  # type: ignore[index]
    assert CancelScope.of(_state([_user()], "running"), "inv-1").stream_end("inv-1", TS) is None


def test_a_slices_usage_sums_its_steps_and_keeps_its_sum_past_the_integer_limit() -> None:
    # SCRIPT-028: member by member, a member present when any step carried it (USAGE-003).
    first = slice_usage(None, {"input_tokens": 4.0, "output_tokens": 1})
    assert first == {"input_tokens": 4, "output_tokens": 1}
    both = slice_usage(first, {"input_tokens": 1, "output_tokens": 2, "reasoning_tokens": 3, "cost": {"amount": "0.01", "currency": "USD"}})
    assert both == {"input_tokens": 5, "output_tokens": 3, "reasoning_tokens": 3, "cost": {"amount": "0.01", "currency": "USD"}}
    huge = {"input_tokens": MAX_SAFE_INTEGER, "output_tokens": 0}
    assert slice_usage(both, huge) == both  # STATE-063 would refuse the sum: the slice keeps its own
