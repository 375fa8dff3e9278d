"""Tail-first windows and paged history (since 1.2, feature `state_window`, spec/window.md).

A windowed connection holds a *view* of the session's one state: the items from its cursor item on,
the older items that are always held (WINDOW-003: a tool call that awaits a response and its
`tool_output`), and the whole `run`. The view follows from the state and the cursor alone
(`held_view`), so a server needs no memory per connection beyond the cursor. `WindowView` is the
same view as positions: it opens a window (`window_of`), cuts the page before the cursor
(`page_of`), and turns each patch of the whole state into the patch of the view (`project`,
WINDOW-004, WINDOW-005), raising `CursorRemoved` when a cut took the cursor item (WINDOW-006).

A second implementation of `chatwire_schema::window`: tests/test_window_corpus.py requires the
same views, pages and projected ops as the Rust crate on fixtures/window-views/cases.jsonl. The
limits are read from the schemas this package ships, which the crate generates.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Final

from chatwire.validate import load_schema

JsonObject = dict[str, Any]


def _maximum(schema_name: str, *path: str, bound: str = "maximum") -> int:
    node: Any = load_schema(schema_name)
    for key in path:
        node = node[key]
    value: int = node[bound]
    return value


#: The largest `window` a `session.hello` may ask for (WINDOW-001).
MAX_WINDOW_ITEMS: Final[int] = _maximum("session.hello.json", "properties", "window")
#: The largest `limit` of a `chat.history_request` (WINDOW-007).
MAX_HISTORY_PAGE_ITEMS: Final[int] = _maximum("chat.history_request.json", "properties", "limit")


class ProjectError(Exception):
    """A patch of the whole state that has no patch of a view."""


class CursorRemoved(ProjectError):
    """The patch removes the window's first item: the connection needs a fresh window (WINDOW-006)."""


class Unsupported(ProjectError):
    """An op a reducer's patch never has (`move`, `copy`, or a path that is not the state's)."""


def always_held(items: list[JsonObject], index: int) -> bool:
    """Whether the item at `index` is held by every windowed connection even when older than its
    window (WINDOW-003): a call that awaits (or awaited) a response, and that call's output item."""
    if not 0 <= index < len(items):
        return False
    item = items[index]
    if item["kind"] == "tool_call":
        return bool(item.get("awaiting_response"))
    if item["kind"] == "tool_output" and index > 0:
        call = items[index - 1]
        return call["kind"] == "tool_call" and bool(call.get("awaiting_response")) and call["id"] == item["tool_call_id"]
    return False


@dataclass
class WindowView:
    """Where a windowed connection's view stands in the whole state, as positions."""

    #: The window the connection asked for: a fresh window after a cut has this size (WINDOW-006).
    size: int
    #: Position of the cursor item; 0 when the connection holds every item.
    start: int = 0
    #: Positions of the always-held items before `start`, ascending.
    pinned: list[int] = field(default_factory=list)

    @classmethod
    def open(cls, state: JsonObject, size: int) -> WindowView:
        """The newest `size` items and the always-held items before them (WINDOW-002)."""
        items = state["items"]
        start = max(0, len(items) - size)
        return cls(size, start, [i for i in range(start) if always_held(items, i)])

    @classmethod
    def at_cursor(cls, state: JsonObject, size: int, cursor: str | None) -> WindowView | None:
        """The view of a client holding `state` from `cursor` on (None: every item), or None when
        no item has that id."""
        items = state["items"]
        if cursor is None:
            return cls(size, 0, [])
        start = next((i for i, item in enumerate(items) if item["id"] == cursor), None)
        if start is None:
            return None
        return cls(size, start, [i for i in range(start) if always_held(items, i)])

    def holds_all(self) -> bool:
        return self.start == 0

    def cursor(self, state: JsonObject) -> str | None:
        """The id of the window's first item, None when the connection holds every item."""
        items = state["items"]
        if self.start == 0 or self.start >= len(items):
            return None
        cursor: str = items[self.start]["id"]
        return cursor

    def window(self, state: JsonObject) -> JsonObject:
        """What a windowed snapshot says about the rest: `before` (absent at the first item) and `total`."""
        about: JsonObject = {}
        cursor = self.cursor(state)
        if cursor is not None:
            about["before"] = cursor
        about["total"] = len(state["items"])
        return about

    def items(self, state: JsonObject) -> list[JsonObject]:
        items: list[JsonObject] = state["items"]
        start = min(self.start, len(items))
        return [items[i] for i in self.pinned if i < len(items)] + items[start:]

    def view(self, state: JsonObject) -> JsonObject:
        """The view itself: the held items, the whole run and, since 1.3, the whole usage."""
        view: JsonObject = {"items": self.items(state), "run": state["run"]}
        if "usage" in state:
            view["usage"] = state["usage"]
        return view

    def page(self, state: JsonObject, limit: int) -> tuple[list[JsonObject], str | None]:
        """The page of up to `limit` items just before the cursor and the next cursor, moving the
        view to hold them (WINDOW-008). A view holding every item gets an empty page."""
        items: list[JsonObject] = state["items"]
        end = min(self.start, len(items))
        first = max(0, end - limit)
        self.start = first
        self.pinned = [p for p in self.pinned if p < first]
        return items[first:end], self.cursor(state)

    def _position(self, index: int) -> int | None:
        if index >= self.start:
            return len(self.pinned) + index - self.start
        try:
            return self.pinned.index(index)
        except ValueError:
            return None

    def project(self, ops: list[JsonObject]) -> list[JsonObject]:
        """Turns `ops`, a patch of the whole state, into the patch of this view, moving the view
        along (WINDOW-004, WINDOW-005). Raises ProjectError and leaves the view unchanged when it
        cannot: `CursorRemoved` means a fresh window is due (WINDOW-006)."""
        nxt = WindowView(self.size, self.start, list(self.pinned))
        out = [projected for op in ops if (projected := nxt._project_op(op)) is not None]
        self.start, self.pinned = nxt.start, nxt.pinned
        return out

    def _project_op(self, op: JsonObject) -> JsonObject | None:
        name = op["op"]
        path: str = op["path"]
        unsupported = Unsupported(f"op {name} at {path} cannot be projected onto a window")
        if not path.startswith("/items"):
            if name in ("move", "copy"):
                raise unsupported
            return copy.deepcopy(op)
        rest = path[len("/items") :]
        if not rest.startswith("/"):
            raise unsupported
        index_text, _, member = rest[1:].partition("/")
        has_member = "/" in rest[1:]
        if index_text == "-":
            if name == "add" and not has_member:
                return copy.deepcopy(op)  # appended: the newest item is always in the window
            raise unsupported
        if not index_text.isdigit():
            raise unsupported
        index = int(index_text)
        before_cursor = self.start > 0 and index <= self.start
        if name == "add" and not has_member and before_cursor:
            # Inserted before the cursor item: everything from `index` on moves up by one.
            self.start += 1
            moved = sum(1 for p in self.pinned if p < index)
            self.pinned[moved:] = [p + 1 for p in self.pinned[moved:]]
            value = op["value"]
            kind = value.get("kind") if isinstance(value, dict) else None
            if kind == "tool_call":
                held = value.get("awaiting_response") is True
            elif kind == "tool_output":
                held = index > 0 and (index - 1) in self.pinned
            else:
                held = False
            if not held:
                return None
            self.pinned.insert(moved, index)
            return {**copy.deepcopy(op), "path": f"/items/{moved}"}
        if name == "remove" and not has_member and before_cursor:
            raise CursorRemoved("the patch removes the window's first item")
        if name in ("move", "copy"):
            raise unsupported
        at = self._position(index)
        if at is None:
            return None
        return {**copy.deepcopy(op), "path": f"/items/{at}/{member}" if has_member else f"/items/{at}"}


def held_view(state: JsonObject, cursor: str | None) -> JsonObject | None:
    """The view of `state` a connection holds from `cursor` (None: every item), or None when no
    item has that id."""
    view = WindowView.at_cursor(state, 1, cursor)
    return None if view is None else view.view(state)


def window_of(state: JsonObject, size: int) -> tuple[JsonObject, JsonObject]:
    """The view of the newest `size` items of `state`, and what its snapshot's `window` says."""
    view = WindowView.open(state, size)
    return view.view(state), view.window(state)


def page_of(state: JsonObject, cursor: str, limit: int) -> tuple[list[JsonObject], str | None] | None:
    """The items of a page before `cursor` and the next cursor, or None when no item has that id."""
    view = WindowView.at_cursor(state, 1, cursor)
    return None if view is None else view.page(state, limit)
