"""The Python patch builder against the Rust one, on fixtures/state-patches/patches.jsonl.

The corpus is written by schema/tests/shared_corpora.rs from `UiState::apply_with_patch` and
`state_patch::catch_up` over the traces of fixtures/reducer-traces/: for each trace, the patch of
every committed event, the catch-up from the middle to the end, and where that catch-up fails when
applied to a wrong base. Python must build the same ops in the same order, and its RFC 6902
applier must agree with the json-patch crate on where a guarded patch fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire import ReduceError
from chatwire.patch import CatchUpError, PatchError, apply_patch, apply_with_patch, catch_up
from conftest import FIXTURES

CASES = [json.loads(line) for line in (FIXTURES / "state-patches" / "patches.jsonl").read_text(encoding="utf-8").splitlines()]
TRACES = {
    t["name"]: t
    for t in (json.loads(line) for line in (FIXTURES / "reducer-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines())
}


def committed_events(name: str) -> list[dict[str, Any]]:
    return [s["event"] for s in TRACES[name]["steps"] if s["refused"] is None]


def test_the_corpus_covers_every_kind_of_op_and_both_failures() -> None:
    ops = {op["op"] for c in CASES for p in c["patches"] for op in p}
    assert ops == {"add", "remove", "replace", "test"}
    assert {c["wrong_base"]["kind"] for c in CASES if c["wrong_base"]} == {"test_failed", "no_target"}
    assert set(TRACES) == {c["name"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_per_event_patches_equal_rust_and_apply(case: dict[str, Any]) -> None:
    state = case["initial"]
    events = committed_events(case["name"])
    assert len(events) == len(case["patches"])
    for n, (event, expected) in enumerate(zip(events, case["patches"])):
        after, patch = apply_with_patch(state, event)
        assert patch == expected, f"event {n}: {event}"
        # STATE-038: applied to the state before, the patch gives exactly the state after.
        assert apply_patch(state, patch) == after
        state = after
    assert state == case["final"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_catch_up_equals_rust_and_fails_on_a_wrong_base_where_rust_does(case: dict[str, Any]) -> None:
    events = committed_events(case["name"])
    start = case["catch_up"]["from"]
    base = case["initial"]
    for event in events[:start]:
        base, _ = apply_with_patch(base, event)
    reached, patch = catch_up(base, events[start:])
    assert patch == case["catch_up"]["patch"]
    assert reached == case["final"]
    assert apply_patch(base, patch) == case["final"]  # RESUME-019
    wrong = case["wrong_base"]
    if wrong is None:
        return
    shifted = {**base, "items": base["items"][1:]}
    with pytest.raises(PatchError) as failed:
        apply_patch(shifted, patch)
    assert (failed.value.op, failed.value.kind) == (wrong["fails_at"], wrong["kind"])


def test_a_refused_event_ends_a_catch_up_and_names_its_position() -> None:
    start = {"items": [], "run": {"status": "idle"}}
    stray = {"type": "chat.run_started", "seq": 5, "invocation_id": "inv-1", "ts": "2026-11-22T10:00:00Z"}
    with pytest.raises(CatchUpError) as refused:
        catch_up(start, [stray])
    assert refused.value.position == 0 and refused.value.refusal.requirement == "STATE-024"
    with pytest.raises(ReduceError):
        apply_with_patch(start, stray)
    assert start == {"items": [], "run": {"status": "idle"}}


@pytest.mark.parametrize(
    ("patch", "op", "kind"),
    [
        ([{"op": "test", "path": "/run/status", "value": "running"}], 0, "test_failed"),
        ([{"op": "remove", "path": "/items/0"}], 0, "no_target"),
        ([{"op": "add", "path": "/items/1", "value": {}}], 0, "no_target"),
        ([{"op": "replace", "path": "/run/nope", "value": 1}], 0, "no_target"),
        ([{"op": "add", "path": "items", "value": 1}], 0, "no_target"),
        ([{"op": "test", "path": "/run"}], 0, "no_target"),
        ([{"op": "add", "path": "/items/-", "value": 1}, {"op": "test", "path": "/items/0", "value": True}], 1, "test_failed"),
        (["not an op"], 0, "no_target"),
    ],
)
def test_a_patch_that_does_not_apply_is_a_typed_error_and_changes_nothing(patch: list[Any], op: int, kind: str) -> None:
    state = {"items": [], "run": {"status": "idle"}}
    with pytest.raises(PatchError) as failed:
        apply_patch(state, patch)
    assert (failed.value.op, failed.value.kind) == (op, kind)
    assert state == {"items": [], "run": {"status": "idle"}}
