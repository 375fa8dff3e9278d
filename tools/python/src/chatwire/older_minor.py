"""What a connection that negotiated an older minor sees of the session (`COMPAT-005`), as
`chatwire_schema::older_minor`: the same events and states, without the frames and members a newer
minor added.

Spec: `spec/versioning.md#since-annotations`. A session has one state and one seq space; a server
sends each connection its negotiated minor's view of them. Which minor added which frame and member
is a protocol fact (`chatwire.facts`). Today's only such member is `response_schema` (since 1.2,
`TOOL-025`) on `chat.tool_call` and on a tool call item; the 1.2 server frames
(`chat.cancel_accepted`, `chat.history_page`) only ever answer a 1.2 frame.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from chatwire.facts import SERVER_FRAME_FACTS, member_since, version_key

__all__ = ["RESPONSE_SCHEMA_SINCE", "frame", "knows_response_schema", "patch", "state"]

JsonObject = dict[str, Any]

#: The minor that added `response_schema` (`TOOL-025`), on a call and on a call item alike.
RESPONSE_SCHEMA_SINCE: Final = version_key(member_since("chat.tool_call", "response_schema") or "1.0")


def knows_response_schema(version: str) -> bool:
    """Whether `version` defines `response_schema` (and `response_invalid`, TOOL-025)."""
    return version_key(version) >= RESPONSE_SCHEMA_SINCE


def _older(version: str) -> bool:
    return not knows_response_schema(version)


def state(ui_state: JsonObject, version: str) -> JsonObject:
    """`ui_state` as a connection that negotiated `version` sees it (the same object when nothing differs)."""
    if not _older(version) or not any(i["kind"] == "tool_call" and "response_schema" in i for i in ui_state["items"]):
        return ui_state
    view = copy.deepcopy(ui_state)
    for item in view["items"]:
        if item["kind"] == "tool_call":
            item.pop("response_schema", None)
    return view


def frame(server_frame: JsonObject, version: str) -> JsonObject | None:
    """`server_frame` as a connection that negotiated `version` sees it; None for a frame that
    minor does not define (a server never sends it there)."""
    facts = SERVER_FRAME_FACTS.get(server_frame["type"])
    if facts is not None and version_key(facts.since) > version_key(version):
        return None
    if not _older(version):
        return server_frame
    if server_frame["type"] == "chat.tool_call" and "response_schema" in server_frame:
        return {k: v for k, v in server_frame.items() if k != "response_schema"}
    return server_frame


def patch(ops: list[JsonObject], version: str) -> list[JsonObject]:
    """The ops of a `ui_state_patch` as a connection that negotiated `version` sees them: a tool
    call item an op adds or replaces comes without `response_schema` (the member never changes
    after the call is made, so no op addresses it alone)."""
    if not _older(version):
        return ops
    return [{**op, "value": _strip(op["value"])} if op["op"] in ("add", "replace") else op for op in ops]


def _strip(value: Any) -> Any:
    """`value` without `response_schema` on a tool call item, or on every item of an item list or state."""
    if isinstance(value, dict):
        if value.get("kind") == "tool_call":
            return {k: v for k, v in value.items() if k != "response_schema"}
        if "items" in value:
            return {**value, "items": _strip(value["items"])}
        return value
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
