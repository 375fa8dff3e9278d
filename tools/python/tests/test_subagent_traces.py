"""The Python reducer on sub-agent transcripts (since 1.3, `STATE-064` ... `STATE-075`), against the
Rust one on fixtures/subagent-traces/traces.jsonl.

The corpus is written by schema/tests/support/corpus_subagents.rs: written traces that start,
stream, finalize, continue, cancel and cut sub-agent runs, one from a snapshot taken mid-nested-
stream, each step judged by `chatwire_schema::reduce` with the state after it. The Python reducer
must agree on every step: the same refusal, or the same state.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import ReduceError, reduce
from chatwire.reducer import without_open_stream
from conftest import FIXTURES

TRACES = [
    json.loads(line) for line in (FIXTURES / "subagent-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
]


def test_the_corpus_is_there_and_meets_every_sub_agent_refusal() -> None:
    refusals = {s["refused"]["requirement"] for t in TRACES for s in t["steps"] if s["refused"]}
    assert {f"STATE-0{n}" for n in range(68, 76)} <= refusals
    assert any(t["initial"]["items"] for t in TRACES), "a trace starts from a snapshot holding a transcript"
    nested = [s for t in TRACES for s in t["steps"] if "parent_call_id" in s["event"] and s["refused"] is None]
    assert {s["event"]["type"] for s in nested} == {
        "chat.assistant_message",
        "chat.assistant_message_delta",
        "chat.reasoning",
        "chat.reasoning_delta",
        "chat.tool_call",
    }


@pytest.mark.parametrize("trace", TRACES, ids=[t["name"] for t in TRACES])
def test_python_reducer_agrees_with_rust_on_every_step(trace: dict[str, Any]) -> None:
    state = trace["initial"]
    for step in trace["steps"]:
        before = json.dumps(state, sort_keys=True)
        where = f"seq {step['event']['seq']} {step['event']['type']}"
        try:
            state = reduce(state, step["event"])
            verdict = None
        except ReduceError as e:
            verdict = {"requirement": e.requirement, "kind": e.kind}
            # A refusal leaves the state exactly as it was.
            assert json.dumps(state, sort_keys=True) == before, where
        assert verdict == step["refused"], where
        # Same members, not only equal values: null and absent must not be confused.
        assert json.dumps(state, sort_keys=True) == json.dumps(step["state"], sort_keys=True), where
    assert state == trace["final"]


#: The traces that start from the empty state (the others start mid-stream, from a snapshot).
FROM_EMPTY = [t for t in TRACES if not t["initial"]["items"]]


@pytest.mark.parametrize("trace", FROM_EMPTY, ids=[t["name"] for t in FROM_EMPTY])
def test_without_open_streams_is_the_fold_without_deltas(trace: dict[str, Any]) -> None:
    """A connection without `assistant_stream` sees no open stream of any transcript (`STREAM-011`):
    folding the committed events but the deltas gives `without_open_stream` of the full fold, after
    every prefix."""
    full = plain = trace["initial"]
    for step in trace["steps"]:
        if step["refused"] is not None:
            continue
        event = step["event"]
        full = reduce(full, event)
        if not event["type"].endswith("_delta"):
            plain = reduce(plain, event)
        assert plain == without_open_stream(full), f"seq {event['seq']}"
