"""`chatwire.check_script` against `AgentScript::validate` on fixtures/agent-scripts/cases.jsonl."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import ScriptError, check_script
from conftest import FIXTURES

CASES = [json.loads(line) for line in (FIXTURES / "agent-scripts" / "cases.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_corpus_has_every_verdict() -> None:
    kinds = {c["verdict"].get("kind", "valid") for c in CASES}
    assert kinds == {
        "valid",
        "EmptyBatch",
        "BadSettleOrder",
        "DelayTooLong",
        "StepAfterEnd",
        "MissingComponentType",
        "SchemaWithoutResponse",
        "TooManyChunks",
        "EmptyChunk",
        "ChunksDiffer",
        "ChunksOfRedacted",
        "MixedCurrencies",
    }
    assert any("retry" in c["verdict"] for c in CASES), "no refusal inside a retry"


@pytest.mark.parametrize("case", CASES, ids=[f"case-{n:03}" for n in range(len(CASES))])
def test_check_script_agrees_with_rust(case: dict[str, Any]) -> None:
    want = case["verdict"]
    try:
        check_script(case["script"])
        got: dict[str, Any] = {"valid": True}
    except ScriptError as e:
        got = {"valid": False, "kind": e.kind, "turn": e.turn, "step": e.step, "ms": e.ms, "call": e.call}
        if e.chunk is not None:
            got["chunk"] = e.chunk
        if e.retry is not None:
            got["retry"] = e.retry
    assert got == want
