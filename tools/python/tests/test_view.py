"""`chatwire.view.ConnView`: what a connection where `reasoning` or `usage` is not in force sees
(REASON-001, USAGE-004), on the 1.3 traces of fixtures/reducer-traces/ (written by the Rust crate;
their per-event patches are proven equal to Rust's by test_state_patches.py).

For every committed event of every trace and every view: the connection's patch, applied to its
view of the state before, gives its view of the state after (the projection is exact), and the
fold of the frames it receives is its view of the fold of all of them (the view commutes with the
reducer, as `chatwire_schema::view`'s tests prove in Rust)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import reduce
from chatwire.patch import apply_patch, apply_with_patch
from chatwire.view import ConnView, is_usage_op
from conftest import FIXTURES

TRACES = [
    t
    for t in (json.loads(line) for line in (FIXTURES / "reducer-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines())
    if t["name"].startswith("reasoning-usage-")
]

VIEWS = {
    "1.2": ConnView.of("1.2", ["ui_state_patch", "assistant_stream", "reasoning", "usage"]),
    "1.3-no-reasoning": ConnView.of("1.3", ["ui_state_patch", "usage"]),
    "1.3-no-usage": ConnView.of("1.3", ["ui_state_patch", "reasoning"]),
    "1.3-neither": ConnView.of("1.3", []),
}
TS = "2026-01-01T00:00:00Z"


def test_the_traces_hold_reasoning_and_usage() -> None:
    finals = [json.dumps(t["final"]) for t in TRACES]
    assert len(TRACES) >= 20
    assert sum('"kind": "reasoning"' in f for f in finals) > len(TRACES) // 4
    assert sum('"usage"' in f for f in finals) > len(TRACES) // 4


def test_a_view_is_chosen_by_version_and_features() -> None:
    assert VIEWS["1.2"] == ConnView("1.2", reasoning=False, usage=False)
    assert ConnView.of("1.3", None) == ConnView("1.3", reasoning=False, usage=False)
    whole = ConnView.of("1.3", ["reasoning", "usage"])
    assert whole.hides_nothing_new and not VIEWS["1.3-no-usage"].hides_nothing_new


@pytest.mark.parametrize("view_name", sorted(VIEWS))
@pytest.mark.parametrize("trace", TRACES, ids=[t["name"] for t in TRACES])
def test_a_views_patches_and_frames_give_the_view_of_the_state(trace: dict[str, Any], view_name: str) -> None:
    view = VIEWS[view_name]
    state = trace["initial"]
    folded = view.state(state)
    for step in trace["steps"]:
        if step["refused"] is not None:
            continue
        event = step["event"]
        after, ops = apply_with_patch(state, event)
        mine = view.patch(state, ops)
        assert apply_patch(view.state(state), mine) == view.state(after), f"{event}: {mine}"
        if not view.usage:
            assert not any(is_usage_op(op) for op in mine)
        seen = view.frame_at(event, state)
        if seen is not None:
            assert "usage" not in seen or view.usage
            folded = reduce(folded, seen)
        else:
            assert event["type"] in ("chat.reasoning", "chat.reasoning_delta") and not view.reasoning
        assert folded == view.state(after)
        state = after
    assert state == trace["final"]


def test_a_view_without_reasoning_counts_items_without_it() -> None:
    user = {"kind": "user_message", "id": "u-1", "invocation_id": "inv-1", "client_message_id": "m-1", "text": "hi", "ts": TS}
    thought = {"kind": "reasoning", "id": "r-1", "invocation_id": "inv-1", "text": "hmm", "ts": TS}
    said = {"kind": "assistant_markdown", "id": "am-1", "invocation_id": "inv-1", "markdown": "Th", "streaming": True, "ts": TS}
    before = {"items": [user, thought, said], "run": {"status": "running", "invocation_id": "inv-1"}}
    ops = [{"op": "test", "path": "/items/2/id", "value": "am-1"}, {"op": "replace", "path": "/items/2/markdown", "value": "The"}]
    hidden = VIEWS["1.3-no-reasoning"]
    assert hidden.patch(before, ops) == [{**ops[0], "path": "/items/1/id"}, {**ops[1], "path": "/items/1/markdown"}]
    assert hidden.patch(before, [{"op": "test", "path": "/items/1/id", "value": "r-1"}]) == []
    assert hidden.state(before)["items"] == [user, said]
    whole = ConnView.of("1.3", ["reasoning", "usage"])
    assert whole.patch(before, ops) == ops and whole.state(before) is before
