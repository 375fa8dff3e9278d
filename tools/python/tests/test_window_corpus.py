"""The Python windows (`chatwire.window`) against the Rust ones, on fixtures/window-views/cases.jsonl.

The corpus is written by schema/tests/window_corpus.rs from `chatwire_schema::window` over the
states of fixtures/state-patches/patches.jsonl: for drawn cursors, sizes and limits, the items a
window and a view hold, the page before a cursor, and each next patch projected onto the view.
Python must hold the same items, cut the same pages and project op for op.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire.attach import MIN_ATTACHED_CONNECTIONS
from chatwire.patch import apply_patch
from chatwire.window import MAX_HISTORY_PAGE_ITEMS, MAX_WINDOW_ITEMS, CursorRemoved, ProjectError, WindowView, held_view, page_of, window_of
from conftest import FIXTURES

_LINES = (FIXTURES / "window-views" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
LIMITS = json.loads(_LINES[0])["limits"]
TRACES = [json.loads(line) for line in _LINES[1:]]
PATCHES = {
    t["name"]: t for t in (json.loads(line) for line in (FIXTURES / "state-patches" / "patches.jsonl").read_text(encoding="utf-8").splitlines())
}


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


def test_the_limits_are_the_crates() -> None:
    assert (MAX_WINDOW_ITEMS, MAX_HISTORY_PAGE_ITEMS, MIN_ATTACHED_CONNECTIONS) == (
        LIMITS["max_window_items"],
        LIMITS["max_history_page_items"],
        LIMITS["min_attached_connections"],
    )


def test_the_corpus_reaches_every_branch() -> None:
    cases = [c for t in TRACES for c in t["cases"]]
    assert any(c["project"] and c["project"].get("error") == "cursor_removed" for c in cases)
    assert any(c["project"] and "projected" in c["project"] and len(c["project"]["projected"]) < len(c["project"]["ops"]) for c in cases)
    assert any(c["page"] and c["page"]["before"] is None for c in cases)
    assert any(c["cursor"] is not None and len(c["held"]) > 0 for c in cases)
    assert {t["name"] for t in TRACES} == set(PATCHES)


@pytest.mark.parametrize("trace", TRACES, ids=[t["name"] for t in TRACES])
def test_views_pages_and_projections_equal_rust(trace: dict[str, Any]) -> None:
    source = PATCHES[trace["name"]]
    states = [source["initial"]]
    for patch in source["patches"]:
        states.append(apply_patch(states[-1], patch))
    for case in trace["cases"]:
        at, where = case["at"], f"{trace['name']} at {case['at']}"
        state, cursor = states[at], case["cursor"]
        view, about = window_of(state, case["size"])
        expected_about = {k: v for k, v in case["window"].items() if k != "ids" and v is not None}
        assert (ids(view["items"]), about) == (case["window"]["ids"], expected_about), where
        held = held_view(state, cursor)
        assert held is not None and ids(held["items"]) == case["held"], where
        if cursor is not None:
            page = page_of(state, cursor, case["limit"])
            assert page is not None and (ids(page[0]), page[1]) == (case["page"]["ids"], case["page"]["before"]), where
        expected = case["project"]
        if expected is None:
            continue
        moving = WindowView.at_cursor(state, case["size"], cursor)
        assert moving is not None
        if "error" in expected:
            kind = CursorRemoved if expected["error"] == "cursor_removed" else ProjectError
            with pytest.raises(kind):
                moving.project(expected["ops"])
            continue
        assert moving.project(expected["ops"]) == expected["projected"], where
        assert moving.start == expected["start"], where
        # The view moved with the patch is the view of the new state from the same cursor (WINDOW-004).
        after = states[at + 1]
        assert ids(moving.items(after)) == ids((held_view(after, moving.cursor(after)) or {"items": []})["items"]) or moving.holds_all(), where


def test_a_project_that_fails_leaves_the_view_as_it_was() -> None:
    state = {"items": [{"kind": "user_message", "id": f"um-{n}", "invocation_id": "inv-1", "text": "x", "ts": "2026-11-22T10:00:00Z"} for n in range(4)], "run": {"status": "idle"}}
    view = WindowView.open(state, 2)
    before = (view.start, list(view.pinned))
    with pytest.raises(CursorRemoved):
        view.project([{"op": "replace", "path": "/run", "value": {"status": "idle"}}, {"op": "remove", "path": "/items/1"}])
    assert (view.start, view.pinned) == before
