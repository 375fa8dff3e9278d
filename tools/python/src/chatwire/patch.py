"""`ui_state_patch` payloads in Python: the patch of one event, the catch-up of a resume, and an
RFC 6902 applier.

Spec: `spec/ui-state.md#ui_state_patch` (STATE-036..040) and `spec/resume.md#catch-up`
(RESUME-017..019). This is a second implementation of `chatwire_schema::state_patch`
(schema/src/state_patch.rs); tests/test_state_patches.py proves the two build the same patches
on fixtures/state-patches/, op for op. A patch is never a diff of two whole states: the event says
which items it can touch, and only those are compared, so a patch's size follows the change.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Final, Literal

from chatwire.facts import ITEM_MEMBERS
from chatwire.reducer import JsonObject, ReduceError, _apply, open_reasoning, open_stream, retry_cut

__all__ = ["CatchUpError", "PatchError", "apply_patch", "apply_with_patch", "catch_up"]

PatchOp = JsonObject

# The order in which Rust serializes each item's members: member ops follow it, so that a patch
# equals the Rust one op for op (a Python dict keeps the order members were added in instead).
_MEMBER_ORDER: Final[dict[str, tuple[str, ...]]] = ITEM_MEMBERS


#: The path of the state's usage sums (since 1.3, `spec/usage.md`).
USAGE_PATH: Final = "/usage"


class PatchError(ValueError):
    """A patch that does not apply: `op` is the failing op's index; `kind` is `test_failed` (a
    `test` whose value differs) or `no_target` (a path that is not there, or a malformed op)."""

    def __init__(self, op: int, kind: Literal["test_failed", "no_target"], message: str) -> None:
        super().__init__(f"op {op}: {message}")
        self.op = op
        self.kind = kind


class CatchUpError(ValueError):
    """An event of a catch-up that the reducer refuses: `position` in the events, and the refusal."""

    def __init__(self, position: int, refusal: ReduceError) -> None:
        super().__init__(f"event {position}: {refusal}")
        self.position = position
        self.refusal = refusal


def apply_with_patch(state: JsonObject, event: JsonObject) -> tuple[JsonObject, list[PatchOp]]:
    """Applies `event` to a copy of `state` exactly like `reduce`, and returns the new state and
    the JSON Patch from `state` to it (`UiState::apply_with_patch`). Raises `ReduceError` on a
    refusal; `state` is never changed."""
    after = copy.deepcopy(state)
    ops = _patched(after, event)
    return after, ops


def catch_up(base: JsonObject, events: Iterable[JsonObject]) -> tuple[JsonObject, list[PatchOp]]:
    """The catch-up of a resume (RESUME-017): folds `events` over `base` and returns the state
    reached and one patch from `base` to it: the per-event patches in order, except that a run of
    deltas appending to one stream gives one `test` and `replace` of its text (O(text), not
    O(text^2)). Raises `CatchUpError` at the first refused event; `base` is never changed."""
    state = copy.deepcopy(base)
    patch: list[PatchOp] = []
    stale_text: int | None = None  # the open stream whose text deltas changed since the last op
    for position, event in enumerate(events):
        try:
            if _appends_to_stream(state, event):
                _apply(state, event)
                stale_text = len(state["items"]) - 1
                continue
            if stale_text is not None:
                patch.extend(_stream_text_ops(state, stale_text))
                stale_text = None
            patch.extend(_patched(state, event))
        except ReduceError as refusal:
            raise CatchUpError(position, refusal) from None
    if stale_text is not None:
        patch.extend(_stream_text_ops(state, stale_text))
    return state, patch


def apply_patch(document: Any, patch: list[PatchOp]) -> Any:
    """Applies an RFC 6902 patch to a copy of `document`, all or nothing; raises `PatchError`."""
    doc = copy.deepcopy(document)
    for n, op in enumerate(patch):
        doc = _apply_op(doc, op, n)
    return doc


# ---------------------------------------------------------------- building


def _patched(state: JsonObject, event: JsonObject) -> list[PatchOp]:
    """Applies `event` to `state` in place and returns its patch; on refusal `state` is unchanged."""
    items: list[JsonObject] = state["items"]
    len_before = len(items)
    run_before = copy.deepcopy(state["run"])
    usage_before = state.get("usage")
    # Since 1.3 (STATE-056, STATE-057): only a run's end with usage, or a rewind, changes the sums.
    usage_changes = (event["type"] == "chat.run_complete" and event.get("usage") is not None) or (
        event["type"] == "chat.rewind_complete" and usage_before is not None
    )
    usage_was = copy.deepcopy(usage_before) if usage_changes else None
    touched = _touched_by(state, event)
    _apply(state, event)
    items = state["items"]
    ops: list[PatchOp] = []
    inserted = 0  # an output item inserted after its call is not an append
    what = touched[0]
    if what == "item":
        _, index, before = touched
        ops.extend(_item_ops(items, index, before))
    elif what == "output":
        _, call, before = touched
        if before is not None:
            ops.extend(_item_ops(items, call + 1, before))
        else:
            inserted = 1
            ops.append(_test_id(call, items[call]["id"]))
            ops.append({"op": "add", "path": _item_path(call + 1), "value": copy.deepcopy(items[call + 1])})
    elif what == "cut":
        _, start, ids = touched
        for offset in range(len(ids) - 1, -1, -1):
            ops.append(_test_id(start + offset, ids[offset]))
            ops.append({"op": "remove", "path": _item_path(start + offset)})
    elif what == "stream_append":
        ops.extend(_stream_text_ops(state, touched[1]))
    elif what == "stream_end":
        index = touched[1]
        ops.append(_test_id(index, items[index]["id"]))
        ops.append({"op": "remove", "path": f"{_item_path(index)}/streaming"})
        ops.append({"op": "replace", "path": f"{_item_path(index)}/ts", "value": items[index]["ts"]})
    for item in items[len_before + inserted :]:
        ops.append({"op": "add", "path": "/items/-", "value": copy.deepcopy(item)})
    if state["run"] != run_before:
        ops.append({"op": "replace", "path": "/run", "value": copy.deepcopy(state["run"])})
    usage = state.get("usage")
    if usage_changes and usage is not None and usage != usage_was:
        # The sums whole: their size follows the invocations the state holds, not its items.
        ops.append({"op": "replace" if usage_before is not None else "add", "path": USAGE_PATH, "value": copy.deepcopy(usage)})
    return ops


def _touched_by(state: JsonObject, e: JsonObject) -> tuple[Any, ...]:
    """What `e` may change in place, read before it is applied (a refused event is refused before
    the result is used)."""
    items: list[JsonObject] = state["items"]
    kind = e["type"]

    def call_index(call_id: str) -> int | None:
        return next((n for n in range(len(items) - 1, -1, -1) if items[n]["kind"] == "tool_call" and items[n]["id"] == call_id), None)

    if kind in ("chat.tool_progress", "chat.tool_call_complete", "chat.tool_call_dismiss"):
        index = call_index(e["tool_call_id"])
        return ("item", index, copy.deepcopy(items[index])) if index is not None else ("nothing",)
    if kind == "chat.tool_output":
        call = call_index(e["tool_call_id"])
        if call is None:
            return ("nothing",)
        nxt = items[call + 1] if call + 1 < len(items) else None
        has_output = nxt is not None and nxt["kind"] == "tool_output" and nxt["tool_call_id"] == e["tool_call_id"]
        return ("output", call, copy.deepcopy(nxt) if has_output else None)
    if kind == "chat.rewind_complete":
        cut = next((n for n, i in enumerate(items) if i["invocation_id"] == e["before_invocation_id"]), None)
        return ("cut", cut, [i["id"] for i in items[cut:]]) if cut is not None else ("nothing",)
    if kind == "chat.retry_accepted":
        named = next((n for n in range(len(items) - 1, -1, -1) if items[n]["id"] == e["after_item_id"]), None)
        if named is None:
            return ("nothing",)
        cut = retry_cut(items, named)
        return ("cut", cut, [i["id"] for i in items[cut:]])
    if kind == "chat.assistant_message_delta" and _is_open_stream(state, e):
        return ("stream_append", len(items) - 1)
    if kind == "chat.assistant_message" and _is_open_stream(state, e):
        return ("stream_end", len(items) - 1)
    if kind == "chat.reasoning_delta" and _is_open_reasoning(state, e):
        return ("stream_append", len(items) - 1)
    if kind == "chat.reasoning" and _is_open_reasoning(state, e):
        # The end of a reasoning stream may also redact it and add its payload: member ops.
        return ("item", len(items) - 1, copy.deepcopy(items[-1]))
    return ("nothing",)


def _is_open_stream(state: JsonObject, e: JsonObject) -> bool:
    stream = open_stream(state)
    return stream is not None and stream["id"] == e["item_id"] and stream["invocation_id"] == e["invocation_id"]


def _is_open_reasoning(state: JsonObject, e: JsonObject) -> bool:
    stream = open_reasoning(state)
    return stream is not None and stream["id"] == e["item_id"] and stream["invocation_id"] == e["invocation_id"]


def _appends_to_stream(state: JsonObject, e: JsonObject) -> bool:
    """Whether `e` is a delta that appends to the open stream, text or reasoning (since 1.3)."""
    if e["type"] == "chat.assistant_message_delta":
        return _is_open_stream(state, e)
    return e["type"] == "chat.reasoning_delta" and _is_open_reasoning(state, e)


def _stream_text_ops(state: JsonObject, index: int) -> list[PatchOp]:
    """A `test` of the stream's id and a `replace` of its whole text: an assistant message's
    `markdown`, a reasoning item's `text`."""
    item = state["items"][index]
    member = "text" if item["kind"] == "reasoning" else "markdown"
    return [_test_id(index, item["id"]), {"op": "replace", "path": f"{_item_path(index)}/{member}", "value": item[member]}]


def _item_ops(items: list[JsonObject], index: int, before: JsonObject) -> list[PatchOp]:
    """A `test` of the item's id, then one op per member that appeared, changed or went away."""
    after = items[index]
    base = _item_path(index)
    order = _MEMBER_ORDER.get(after["kind"], ())
    keys = [k for k in order if k in after] + [k for k in after if k not in order]
    changes: list[PatchOp] = []
    for key in keys:
        path = f"{base}/{_escape(key)}"
        if key not in before:
            changes.append({"op": "add", "path": path, "value": copy.deepcopy(after[key])})
        elif not _json_equal(before[key], after[key]):
            changes.append({"op": "replace", "path": path, "value": copy.deepcopy(after[key])})
    gone = [k for k in order if k in before and k not in after] + [k for k in before if k not in after and k not in order]
    changes.extend({"op": "remove", "path": f"{base}/{_escape(k)}"} for k in gone)
    return [_test_id(index, after["id"]), *changes] if changes else []


def _test_id(index: int, item_id: str) -> PatchOp:
    return {"op": "test", "path": f"{_item_path(index)}/id", "value": item_id}


def _item_path(index: int) -> str:
    return f"/items/{index}"


def _escape(token: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


# ---------------------------------------------------------------- applying (RFC 6902)


def _tokens(pointer: Any, n: int) -> list[str]:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise PatchError(n, "no_target", f"{pointer!r} is not a JSON Pointer")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _array_index(token: str, length: int, n: int, *, appending: bool) -> int:
    if appending and token == "-":
        return length
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(n, "no_target", f"{token!r} is not an array index")
    index = int(token)
    if index > length or (index == length and not appending):
        raise PatchError(n, "no_target", f"index {index} is out of bounds")
    return index


def _parent(doc: Any, tokens: list[str], n: int) -> Any:
    target = doc
    for token in tokens[:-1]:
        target = _child(target, token, n)
    return target


def _child(target: Any, token: str, n: int) -> Any:
    if isinstance(target, dict) and token in target:
        return target[token]
    if isinstance(target, list):
        return target[_array_index(token, len(target), n, appending=False)]
    raise PatchError(n, "no_target", f"no member {token!r}")


def _get(doc: Any, pointer: Any, n: int) -> Any:
    target = doc
    for token in _tokens(pointer, n):
        target = _child(target, token, n)
    return target


def _remove(doc: Any, pointer: Any, n: int) -> Any:
    tokens = _tokens(pointer, n)
    if not tokens:
        raise PatchError(n, "no_target", "cannot remove the whole document")
    parent = _parent(doc, tokens, n)
    if isinstance(parent, list):
        return parent.pop(_array_index(tokens[-1], len(parent), n, appending=False))
    if isinstance(parent, dict) and tokens[-1] in parent:
        return parent.pop(tokens[-1])
    raise PatchError(n, "no_target", f"nothing at {pointer}")


def _add(doc: Any, pointer: Any, value: Any, n: int) -> Any:
    tokens = _tokens(pointer, n)
    if not tokens:
        return value
    parent = _parent(doc, tokens, n)
    if isinstance(parent, list):
        parent.insert(_array_index(tokens[-1], len(parent), n, appending=True), value)
    elif isinstance(parent, dict):
        parent[tokens[-1]] = value
    else:
        raise PatchError(n, "no_target", f"the parent of {pointer} is not a container")
    return doc


def _apply_op(doc: Any, op: Any, n: int) -> Any:
    if not isinstance(op, dict) or not isinstance(op.get("op"), str):
        raise PatchError(n, "no_target", "an op is an object with a string `op`")
    kind, path = op["op"], op.get("path")
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(n, "no_target", f"{kind} needs a value")
    if kind == "test":
        if not _json_equal(_get(doc, path, n), op["value"]):
            raise PatchError(n, "test_failed", f"the value at {path} differs")
        return doc
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]), n)
    if kind == "remove":
        _remove(doc, path, n)
        return doc
    if kind == "replace":
        if not _tokens(path, n):
            return copy.deepcopy(op["value"])
        _remove(doc, path, n)
        return _add(doc, path, copy.deepcopy(op["value"]), n)
    if kind in ("move", "copy"):
        value = _get(doc, op.get("from"), n)
        if kind == "move":
            _remove(doc, op.get("from"), n)
        return _add(doc, path, copy.deepcopy(value), n)
    raise PatchError(n, "no_target", f"unknown op {kind!r}")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, but `1` is `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)
