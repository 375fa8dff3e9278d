"""The Python reducer against the Rust one, on fixtures/reducer-traces/traces.jsonl.

The corpus is written by schema/tests/shared_corpora.rs: each trace folds events over a state
with `chatwire_schema::reduce` and records, per event, whether it was applied or which refusal
refused it, and the final state. One rule, two implementations: they must agree on every step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import ReduceError, reduce
from chatwire.reducer import without_open_stream
from conftest import FIXTURES

TRACES = [json.loads(line) for line in (FIXTURES / "reducer-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_corpus_is_there_and_exercises_every_refusal() -> None:
    refusals = {s["refused"]["requirement"] for t in TRACES for s in t["steps"] if s["refused"]}
    assert len(TRACES) >= 100
    assert refusals == {"STATE-015", *(f"STATE-0{n}" for n in [*range(20, 36), *range(45, 52), *range(58, 64)])}
    # Since 1.3: traces that reason and report usage, and end holding both.
    finals = [t["final"] for t in TRACES if t["name"].startswith("reasoning-usage-")]
    assert sum(any(i["kind"] == "reasoning" for i in f["items"]) for f in finals) > len(finals) // 4
    assert sum("usage" in f for f in finals) > len(finals) // 4


@pytest.mark.parametrize("trace", TRACES, ids=[t["name"] for t in TRACES])
def test_python_reducer_agrees_with_rust(trace: dict[str, Any]) -> None:
    state = trace["initial"]
    for n, step in enumerate(trace["steps"]):
        before = json.dumps(state, sort_keys=True)
        try:
            state = reduce(state, step["event"])
            verdict = None
        except ReduceError as e:
            verdict = {"requirement": e.requirement, "kind": e.kind}
            # A refusal leaves the state exactly as it was.
            assert json.dumps(state, sort_keys=True) == before
        assert verdict == step["refused"], f"step {n}: {step['event']}"
    assert state == trace["final"]
    # Same members, not only equal values: null and absent must not be confused.
    assert json.dumps(state, sort_keys=True) == json.dumps(trace["final"], sort_keys=True)


@pytest.mark.parametrize("trace", TRACES, ids=[t["name"] for t in TRACES])
def test_the_fold_without_deltas_is_the_state_without_its_open_stream(trace: dict[str, Any]) -> None:
    """The view of a connection without `assistant_stream` (spec/streaming.md, and REASON-002 for
    reasoning), after every prefix."""
    full = trace["initial"]
    plain = trace["initial"]
    for step in trace["steps"]:
        if step["refused"] is not None:
            continue
        event = step["event"]
        full = reduce(full, event)
        if event["type"] not in ("chat.assistant_message_delta", "chat.reasoning_delta"):
            plain = reduce(plain, event)
        assert plain == without_open_stream(full)
