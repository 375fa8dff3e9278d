"""What one connection sees of the session (since 1.3): its negotiated minor's shapes
(`chatwire.older_minor`, COMPAT-005) and only the 1.3 features in force on it, as
`chatwire_schema::view::ConnView` for `reasoning` and `usage`.

Spec: `spec/reasoning.md#older-connections`, `spec/usage.md#older-connections`. The session has
one state, one log and one seq space; a `ConnView` is a function of them:

- where `reasoning` is not in force (every 1.0-1.2 connection, and a 1.3 one whose hello left it
  out), no `reasoning` item, no `chat.reasoning_delta` or `chat.reasoning` frame, and each patch
  of the state projected onto the view: item indices counted without the hidden items, ops on
  them dropped (REASON-001);
- where `usage` is not in force, no `usage` on `chat.run_complete`, no `state.usage`, no op on
  `/usage` (USAGE-004).

The view commutes with the reducer: folding the frames a connection sees gives the view of the
fold of all of them, and a connection's patch applied to its view of the state before gives its
view of the state after (tests/test_view.py proves both on the 1.3 traces of
fixtures/reducer-traces/, whose patches tests/test_state_patches.py proves equal to Rust's).
Sub-agent transcripts (`subagents`) are not covered: a backend that offers that feature needs
the view of `chatwire_schema::view` for them too.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Final

from chatwire import older_minor
from chatwire.facts import CAPABILITY_FACTS, version_key
from chatwire.patch import USAGE_PATH
from chatwire.reducer import EVENT_TYPES, reduce

__all__ = ["REASONING_FRAMES", "REASONING_USAGE_SINCE", "ConnView", "is_usage_op"]

JsonObject = dict[str, Any]

#: The minor that added `reasoning` and `usage`.
REASONING_USAGE_SINCE: Final = next(c.since for c in CAPABILITY_FACTS if c.name == "reasoning")

#: The frames of the feature `reasoning`: a connection where it is not in force gets none.
REASONING_FRAMES: Final = frozenset({"chat.reasoning_delta", "chat.reasoning"})


def is_usage_op(op: JsonObject) -> bool:
    """Whether `op` addresses the state's usage: an op a connection where `usage` is not in force
    never gets (USAGE-004)."""
    path = str(op["path"])
    return path == USAGE_PATH or path.startswith(USAGE_PATH + "/")


def _is_reasoning(value: Any) -> bool:
    """Whether a patch value is, or holds in an item list, a `reasoning` item."""
    if isinstance(value, dict):
        return value.get("kind") == "reasoning" or ("items" in value and _is_reasoning(value["items"]))
    if isinstance(value, list):
        return any(_is_reasoning(v) for v in value)
    return False


def _strip_reasoning(value: Any) -> Any:
    """A whole item list or state value without its `reasoning` items."""
    if isinstance(value, list):
        return [v for v in value if not (isinstance(v, dict) and v.get("kind") == "reasoning")]
    if isinstance(value, dict) and "items" in value:
        return {**value, "items": _strip_reasoning(value["items"])}
    return value


@dataclass(frozen=True)
class ConnView:
    """What a connection sees: its minor, and whether `reasoning` and `usage` are in force on it."""

    version: str
    reasoning: bool
    usage: bool

    @staticmethod
    def of(version: str, features: tuple[str, ...] | list[str] | None) -> ConnView:
        """The view of a connection that negotiated `version` with `features` in force (the
        welcome's `features`; None before 1.1)."""
        newer = version_key(version) >= version_key(REASONING_USAGE_SINCE)
        has = set(features or ()) if newer else set()
        return ConnView(version, "reasoning" in has, "usage" in has)

    @property
    def hides_nothing_new(self) -> bool:
        """Whether the view holds every 1.3 item and member (older shapes may still differ)."""
        return self.reasoning and self.usage

    def sees_item(self, item: JsonObject) -> bool:
        """Whether the connection sees `item`."""
        return self.reasoning or item["kind"] != "reasoning"

    def sees_event(self, frame: JsonObject) -> bool:
        """Whether the connection receives `frame` (its members may still differ, `frame`)."""
        return self.reasoning or frame["type"] not in REASONING_FRAMES

    def state(self, ui_state: JsonObject) -> JsonObject:
        """`ui_state` as the connection sees it (the same object when nothing differs)."""
        hides_items = not self.reasoning and any(i["kind"] == "reasoning" for i in ui_state["items"])
        hides_usage = not self.usage and "usage" in ui_state
        if hides_items or hides_usage:
            seen = {k: v for k, v in ui_state.items() if k != "usage" or self.usage}
            if hides_items:
                seen["items"] = [i for i in ui_state["items"] if self.sees_item(i)]
            ui_state = seen
        return older_minor.state(ui_state, self.version)

    def frame(self, server_frame: JsonObject) -> JsonObject | None:
        """`server_frame` as the connection sees it; None for a frame it never receives."""
        if not self.sees_event(server_frame):
            return None
        if not self.usage and server_frame["type"] == "chat.run_complete" and "usage" in server_frame:
            server_frame = {k: v for k, v in server_frame.items() if k != "usage"}
        return older_minor.frame(server_frame, self.version)

    def frame_at(self, server_frame: JsonObject, before: JsonObject) -> JsonObject | None:
        """`frame` seen by the connection, `before` being the session's state before it: where
        `reasoning` is not in force, a `chat.retry_accepted` names only items the view holds. A
        retry after a reasoning item is, in the view, a retry after the last item it holds before
        that one (the turn's user message at the latest), and the items it removes are those of
        them the view holds, so the connection's reducer folds the frame into its view.
        `chatwire_schema::view::ConnView::frame_at` maps it the same way."""
        if self.reasoning or server_frame["type"] != "chat.retry_accepted":
            return self.frame(server_frame)
        items = before["items"]
        hidden = {i["id"] for i in items if not self.sees_item(i)}
        after = server_frame["after_item_id"]
        if after in hidden:
            at = max(n for n, i in enumerate(items) if i["id"] == after)
            after = next((i["id"] for i in reversed(items[:at]) if self.sees_item(i)), after)
        removed = [r for r in server_frame["removed_item_ids"] if r not in hidden]
        return self.frame({**server_frame, "after_item_id": after, "removed_item_ids": removed})

    def patch(self, before: JsonObject, ops: list[JsonObject]) -> list[JsonObject]:
        """The ops of a patch of the whole state, whose base is `before`, as the connection's patch
        of its view: ops on hidden items and on `/usage` dropped where unseen, item indices
        counted among the items the connection sees, then the minor's shapes."""
        if not self.reasoning and (
            any(op["op"] in ("add", "replace") and _is_reasoning(op.get("value")) for op in ops)
            or any(not self.sees_item(i) for i in before["items"])
        ):
            ops = _project_items(before, ops)
        if not self.usage:
            ops = [op for op in ops if not is_usage_op(op)]
        return older_minor.patch(ops, self.version)

    def events(self, before: JsonObject, frames: list[JsonObject]) -> list[JsonObject]:
        """The frames of a log, from the session's state `before`, as the connection sees them, in
        order (a catch-up's events). Raises ReduceError where the log does not fold."""
        out: list[JsonObject] = []
        for f in frames:
            seen = self.frame_at(f, before)
            if seen is not None:
                out.append(seen)
            if f["type"] in EVENT_TYPES:
                before = reduce(before, f)
        return out


def _project_items(before: JsonObject, ops: list[JsonObject]) -> list[JsonObject]:
    """The patch projected onto the items without reasoning: `hidden[i]` tells whether the whole
    state's item `i` is a reasoning item, kept up to date as the ops add and remove items."""
    hidden = [i["kind"] == "reasoning" for i in before["items"]]
    out: list[JsonObject] = []
    for op in ops:
        path = str(op["path"])
        if path == "/items":
            if op["op"] in ("add", "replace"):
                value = op["value"]
                hidden = [_is_reasoning(v) for v in value] if isinstance(value, list) else []
                op = {**op, "value": _strip_reasoning(value)}
            out.append(op)
            continue
        if not path.startswith("/items/"):
            out.append(op)
            continue
        token, _, below = path[len("/items/") :].partition("/")
        if token == "-":
            is_hidden = op["op"] == "add" and _is_reasoning(op.get("value"))
            hidden.append(is_hidden)
            if not is_hidden:
                out.append(op)
            continue
        if not token.isdigit():
            out.append(op)
            continue
        index = int(token)
        seen = index - sum(hidden[: min(index, len(hidden))])
        if not below and op["op"] == "add":  # an insertion: the new item's kind decides
            is_hidden = _is_reasoning(op.get("value"))
            hidden.insert(min(index, len(hidden)), is_hidden)
        elif not below and op["op"] == "remove":
            is_hidden = hidden.pop(index) if index < len(hidden) else False
        else:
            is_hidden = hidden[index] if index < len(hidden) else False
        if is_hidden:
            continue
        moved = copy.copy(op)
        moved["path"] = f"/items/{seen}/{below}" if below else f"/items/{seen}"
        out.append(moved)
    return out
