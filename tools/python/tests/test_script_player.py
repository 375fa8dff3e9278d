"""`plan_turn`: the decisions of a scripted turn, in the order the conformance profile prescribes."""

from __future__ import annotations

from typing import Any

import pytest

from chatwire import (
    AwaitInput,
    End,
    Reason,
    RunTool,
    Say,
    ScriptError,
    Settlement,
    ToolBatch,
    UsageStep,
    Wait,
    check_script,
    plan_turn,
    response_settlement,
)

# The example of spec/conformance-profile.md#agentscript.
SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "steps": [
                {"op": "say", "markdown": "Let me check two things."},
                {
                    "op": "tool_calls",
                    "calls": [
                        {"tool_name": "fetch_docs", "interaction_type": "auto_tool", "display": "inline", "payload": {"url": "https://example.com/a"}, "run_ms": 50, "progress": [{"message": "fetching", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"bytes": 512}}},
                        {"tool_name": "confirm", "interaction_type": "ui_tool", "component_type": "ConfirmDialog", "workflow_name": "Deploy", "display": "inline", "payload": {"question": "Deploy now?"}, "output": {"command": "deploy", "approvals": ["approve"]}, "outcome": {"kind": "await_response", "expire_after_ms": 30000, "summary": "confirmed"}},
                        {"tool_name": "shell", "interaction_type": "auto_tool", "display": "inline", "payload": {"cmd": "make"}, "run_ms": 10, "output": {"command": "make", "approvals": ["approve"], "stdout": "ok\n", "exit_code": 0}, "outcome": {"kind": "error", "message": "exit status 2"}},
                    ],
                    "settle_order": [2, 0],
                },
                {"op": "wait", "ms": 100},
                {"op": "end", "status": "completed"},
            ]
        },
        {"steps": [{"op": "end", "status": "failed", "error": "simulated failure"}]},
        {"steps": [{"op": "tool_calls", "calls": [{"tool_name": "bye", "interaction_type": "auto_tool", "display": "inline", "outcome": {"kind": "dismiss", "reason": "not needed"}}]}]},
    ]
}


def test_a_tool_batch_plays_in_settle_order_then_waits_for_input() -> None:
    decisions = plan_turn(SCRIPT, 0)
    assert [type(d) for d in decisions] == [Say, ToolBatch, RunTool, RunTool, AwaitInput, Wait, End]
    batch = decisions[1]
    assert isinstance(batch, ToolBatch)
    # SCRIPT-008: the script's wire fields, awaiting_response from the outcome, call_index in order.
    assert [c.tool_call["call_index"] for c in batch.calls] == [0, 1, 2]
    assert [c.awaiting_response for c in batch.calls] == [False, True, False]
    assert batch.calls[1].tool_call["component_type"] == "ConfirmDialog"
    assert batch.calls[1].expire_after_ms == 30000
    # SCRIPT-009: only the awaited call's output is sent right after the batch, part by part.
    assert batch.calls[1].output_parts == ({"command": "deploy"}, {"approval": "approve"})
    first, second = decisions[2], decisions[3]
    assert isinstance(first, RunTool) and isinstance(second, RunTool)
    # SCRIPT-010: settle_order [2, 0]; SCRIPT-011: command, approvals, stdout, stderr, exit_code.
    assert (first.call_index, first.run_ms) == (2, 10)
    assert first.output_parts == ({"command": "make"}, {"approval": "approve"}, {"stdout": "ok\n"}, {"exit_code": 0})
    assert first.settlement == Settlement("chat.tool_call_complete", {"status": "failed", "error": "exit status 2"})
    assert second.progress == ({"message": "fetching", "fraction": 0.5},)
    assert second.settlement == Settlement("chat.tool_call_complete", {"status": "completed", "result": {"bytes": 512}})
    assert decisions[4] == AwaitInput((1,))
    assert decisions[6] == End("completed", None, "completed")


def test_end_steps_and_implicit_completion() -> None:
    assert plan_turn(SCRIPT, 1) == [End("failed", "simulated failure", "failed")]
    third = plan_turn(SCRIPT, 2)
    assert isinstance(third[1], RunTool)
    assert third[1].settlement == Settlement("chat.tool_call_dismiss", {"initiated_by": "server", "reason": "not needed"})
    # SCRIPT-007: a turn without an end step completes after its last step.
    assert third[-1] == End("completed", None, "completed")


def test_a_message_beyond_the_script_is_exhausted() -> None:
    # SCRIPT-005, with or without a script.
    for script in (SCRIPT, None):
        (end,) = plan_turn(script, 3)
        assert (end.status, end.reason) == ("failed", "script_exhausted") if isinstance(end, End) else False


def test_a_response_settles_by_its_action() -> None:
    batch = plan_turn(SCRIPT, 0)[1]
    assert isinstance(batch, ToolBatch)
    confirm = batch.calls[1]
    submit = {"type": "chat.tool_call_response", "id": "r-1", "tool_call_id": "tc-1", "outcome": {"action": "submit", "value": {"yes": True}}}
    assert response_settlement(confirm, submit) == Settlement(
        "chat.tool_call_complete", {"status": "completed", "result": {"yes": True}, "summary": "confirmed", "in_reply_to": "r-1"}
    )
    dismiss = {"type": "chat.tool_call_response", "id": "r-2", "tool_call_id": "tc-1", "outcome": {"action": "dismiss", "reason": "later"}}
    assert response_settlement(confirm, dismiss) == Settlement(
        "chat.tool_call_dismiss", {"initiated_by": "client", "reason": "later", "in_reply_to": "r-2"}
    )


STREAMED_AND_RETRIED: dict[str, Any] = {
    "turns": [
        {
            "steps": [
                {"op": "say", "markdown": "Rotating the key now.", "chunks": ["Rotating ", "the key ", "now."], "chunk_delay_ms": 200},
                {"op": "end", "status": "failed", "error": "the model's API timed out"},
            ],
            "retries": [{"steps": [{"op": "say", "markdown": "Crawled 1200 pages."}]}],
        }
    ]
}


def test_a_say_with_chunks_carries_them_and_its_delay() -> None:
    say, end = plan_turn(STREAMED_AND_RETRIED, 0)
    assert say == Say("Rotating the key now.", ("Rotating ", "the key ", "now."), 200)
    assert end == End("failed", "the model's API timed out", "failed")
    assert plan_turn(SCRIPT, 0)[0] == Say("Let me check two things.", (), 0)


def test_a_retry_plays_its_own_steps_and_a_missing_one_is_exhausted() -> None:
    # SCRIPT-020: the k-th retry plays retries[k] (completed after its last step), none of the turn's steps.
    assert plan_turn(STREAMED_AND_RETRIED, 0, retry=0) == [Say("Crawled 1200 pages."), End("completed", None, "completed")]
    exhausted = plan_turn(STREAMED_AND_RETRIED, 0, retry=1)
    assert exhausted == [End("failed", "the script has no retry 1 of turn 0", "script_exhausted")]
    assert plan_turn(SCRIPT, 1, retry=0)[0].reason == "script_exhausted"  # type: ignore[union-attr]


def test_reason_and_usage_steps_become_their_decisions() -> None:
    # SCRIPT-027, SCRIPT-028 (since 1.3): a reason step keeps its chunks and payload; a redacted one
    # carries no text; a usage step carries its members, without the op.
    script = {
        "turns": [
            {
                "steps": [
                    {"op": "usage", "input_tokens": 40, "output_tokens": 8, "cost": {"amount": "0.01", "currency": "USD"}},
                    {"op": "reason", "text": "ab", "chunks": ["a", "b"], "chunk_delay_ms": 5, "encrypted": "RW5j"},
                    {"op": "reason", "text": "secret", "redacted": True},
                ]
            }
        ]
    }
    check_script(script)
    usage, streamed, redacted, end = plan_turn(script, 0)
    assert usage == UsageStep({"input_tokens": 40, "output_tokens": 8, "cost": {"amount": "0.01", "currency": "USD"}})
    assert streamed == Reason("ab", ("a", "b"), 5, "RW5j", False)
    assert redacted == Reason("", (), 0, None, True)
    assert end == End("completed", None, "completed")


def test_rules_10_and_11_refuse_chunks_of_a_redacted_reasoning_and_a_second_currency() -> None:
    redacted = {"turns": [{"steps": [{"op": "reason", "text": "ab", "chunks": ["a", "b"], "redacted": True}]}]}
    with pytest.raises(ScriptError) as refused:
        check_script(redacted)
    assert (refused.value.kind, refused.value.step) == ("ChunksOfRedacted", 0)
    differ = {"turns": [{"steps": [{"op": "reason", "text": "ab", "chunks": ["a", "c"]}]}]}
    with pytest.raises(ScriptError) as refused:
        check_script(differ)
    assert refused.value.kind == "ChunksDiffer"
    cost = {"op": "usage", "input_tokens": 1, "output_tokens": 1, "cost": {"amount": "1", "currency": "USD"}}
    euros = {**cost, "cost": {"amount": "1", "currency": "EUR"}}
    # One currency for the whole script, a retry's steps included.
    mixed = {"turns": [{"steps": [cost]}, {"steps": [], "retries": [{"steps": [cost, euros]}]}]}
    with pytest.raises(ScriptError) as refused:
        check_script(mixed)
    assert (refused.value.kind, refused.value.turn, refused.value.retry, refused.value.step) == ("MixedCurrencies", 1, 0, 1)
    check_script({"turns": [{"steps": [cost, cost]}]})


def test_a_call_hosting_a_sub_agent_is_played_without_it() -> None:
    # SCRIPT-029: a server that does not implement subagents (this kit's player, the template) plays
    # the call without its `subagent`: the call, then its outcome.
    host = {"tool_name": "research", "interaction_type": "auto_tool", "display": "inline", "payload": {"q": "fares"},
            "subagent": {"thread": "th-1", "input": "Find fares", "steps": [{"op": "say", "markdown": "Checking."}],
                         "end": {"status": "completed", "response": "TAP", "returned": True}},
            "outcome": {"kind": "result", "value": {"response": "TAP"}}}  # fmt: skip
    script = {"turns": [{"steps": [{"op": "tool_calls", "calls": [host]}]}]}
    check_script(script)
    batch, run, end = plan_turn(script, 0)
    assert isinstance(batch, ToolBatch) and "subagent" not in batch.calls[0].tool_call
    assert run == RunTool(0, 0, (), (), Settlement("chat.tool_call_complete", {"status": "completed", "result": {"response": "TAP"}}))
    assert end == End("completed", None, "completed")
