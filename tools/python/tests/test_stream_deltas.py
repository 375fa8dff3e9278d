"""The Python reducer on streamed text (STATE-042), against fixtures/stream-deltas/cases.jsonl.

The corpus is written by schema/tests/stream_deltas_corpus.rs from `chatwire_schema::reduce`: each
`step` applies one delta to a state and records the new state or the refusing requirement; each
`fold` applies a whole stream. The template commits every delta through `chatwire.reduce`, and a
catch-up over a stream folds them, so both must agree with Rust on every case.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import ReduceError, apply_with_patch, catch_up, reduce
from conftest import FIXTURES

CASES = [json.loads(line) for line in (FIXTURES / "stream-deltas" / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
STEPS = [c for c in CASES if c["kind"] == "step"]
FOLDS = [c for c in CASES if c["kind"] == "fold"]


def test_the_corpus_has_both_kinds_and_every_refusal_of_a_delta() -> None:
    assert STEPS and FOLDS
    refused = {c["result"]["refused"] for c in STEPS if "refused" in c["result"]}
    assert refused == {"STATE-022", "STATE-045", "STATE-046", "STATE-058", "STATE-060"}
    assert any(c["delta"]["type"] == "chat.reasoning_delta" and "state" in c["result"] for c in STEPS)


@pytest.mark.parametrize("case", STEPS, ids=[c["name"] for c in STEPS])
def test_one_delta_gives_the_rust_state_or_refusal(case: dict[str, Any]) -> None:
    before = json.dumps(case["state"], sort_keys=True)
    try:
        outcome: dict[str, Any] = {"state": reduce(case["state"], case["delta"])}
    except ReduceError as e:
        outcome = {"refused": e.requirement}
        assert json.dumps(case["state"], sort_keys=True) == before
    assert outcome == case["result"]
    if "state" in outcome:
        # The patch builder's fold agrees with the reducer's (a delta's patch only serves catch-ups).
        assert apply_with_patch(case["state"], case["delta"])[0] == outcome["state"]


@pytest.mark.parametrize("case", FOLDS, ids=[c["name"] for c in FOLDS])
def test_a_whole_stream_folds_to_the_rust_state_and_catches_up_in_one_replace(case: dict[str, Any]) -> None:
    state = case["state"]
    for delta in case["deltas"]:
        state = reduce(state, delta)
    assert state == case["final"]
    reached, patch = catch_up(case["state"], case["deltas"])
    assert reached == case["final"]
    # However many deltas append to an open stream, its text is replaced once (O(text), not O(text^2)).
    assert sum(op["op"] == "replace" and op["path"].endswith(("/markdown", "/text")) for op in patch) <= 1
