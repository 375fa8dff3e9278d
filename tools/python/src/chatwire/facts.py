"""Protocol facts, as `chatwire-schema` states them: versions, limits, close codes, error codes,
the event list, what answers each client frame, and per-frame and per-version tables.

One rule, one place: these facts live in the Rust crate (`chatwire_schema::protocol_facts`, from
`transport`, `version`, `error_frame`, `error_order`, `frame_facts`, `script`, `reducer`), which
`chatwire-schema-tool export` writes to fixtures/protocol-facts.json; scripts/generate.py renders
that file as the typed constants of `chatwire.protocol_facts` (drift-checked in CI). Nothing here
is typed in by hand; this module names them and adds the lookups a backend needs.
"""

from __future__ import annotations

from typing import Final

from chatwire.protocol_facts import (
    ANSWERED_BY,
    CAPABILITY_FACTS,
    CLIENT_FRAME_FACTS,
    CLOSE_CODES,
    DEFAULT_MAX_FRAME_BYTES,
    ERROR_CODE_FACTS,
    EVENT_TYPES,
    FRAME_CHECKS,
    HARD_CAP_FACTOR,
    ID_PATTERN,
    ITEM_MEMBERS,
    MAX_EXPIRY_MS,
    MAX_HISTORY_PAGE_ITEMS,
    MAX_SAFE_INTEGER,
    MAX_SAY_CHUNKS,
    MAX_SUBAGENT_DEPTH,
    MAX_SCRIPT_DELAY_MS,
    MAX_WINDOW_ITEMS,
    MIN_ATTACHED_CONNECTIONS,
    MIN_MAX_FRAME_BYTES,
    OUTPUT_ID_SUFFIX,
    OWN_CHECKS,
    PROTOCOL_VERSION,
    REDUCE_REFUSALS,
    REFUSED_RESUMES_PER_CONNECTION,
    RELEASED_VERSIONS,
    SEND_QUEUE_MAX_BYTES,
    SERVER_FRAME_FACTS,
    SUBPROTOCOL,
    SUPPORTED_VERSIONS,
    UI_STATE_MEMBERS_SINCE,
    UI_STATE_VERSION,
    VERSION_FACTS,
)

__all__ = [
    "ANSWERED_BY",
    "CAPABILITY_FACTS",
    "CLIENT_FRAME_FACTS",
    "CLOSE_CODES",
    "DEFAULT_MAX_FRAME_BYTES",
    "ERROR_CODES",
    "ERROR_CODE_FACTS",
    "EVENT_TYPES",
    "FATAL_CLOSE_CODES",
    "FRAME_CHECKS",
    "HARD_CAP_FACTOR",
    "ID_PATTERN",
    "ITEM_MEMBERS",
    "MAX_EXPIRY_MS",
    "MAX_HISTORY_PAGE_ITEMS",
    "MAX_SAFE_INTEGER",
    "MAX_SAY_CHUNKS",
    "MAX_SUBAGENT_DEPTH",
    "MAX_SCRIPT_DELAY_MS",
    "MAX_WINDOW_ITEMS",
    "MIN_ATTACHED_CONNECTIONS",
    "MIN_MAX_FRAME_BYTES",
    "OUTPUT_ID_SUFFIX",
    "OWN_CHECKS",
    "PROTOCOL_VERSION",
    "REDUCE_REFUSALS",
    "REFUSED_RESUMES_PER_CONNECTION",
    "RELEASED_VERSIONS",
    "SEND_QUEUE_MAX_BYTES",
    "SERVER_FRAME_FACTS",
    "SUBPROTOCOL",
    "SUPPORTED_VERSIONS",
    "UI_STATE_MEMBERS_SINCE",
    "UI_STATE_VERSION",
    "VERSION_FACTS",
    "first_failing",
    "frame_since",
    "is_fatal",
    "member_since",
    "version_key",
]

#: Every error code of the closed list (spec/errors.md#codes).
ERROR_CODES: Final[tuple[str, ...]] = tuple(e.code for e in ERROR_CODE_FACTS)
#: The close code that follows each fatal error code (TRANSPORT-008); the others are not fatal.
FATAL_CLOSE_CODES: Final[dict[str, int]] = {
    e.code: e.close_code for e in ERROR_CODE_FACTS if e.fatal and e.close_code is not None
}


def is_fatal(code: str) -> bool:
    """Whether the server closes the connection after an error of this code (ERROR-002)."""
    return code in FATAL_CLOSE_CODES


def first_failing(frame_type: str, failing: list[str] | tuple[str, ...] | set[str]) -> str | None:
    """Of the codes a frame of `frame_type` would earn, the one a server must answer with."""
    for code in FRAME_CHECKS + OWN_CHECKS.get(frame_type, ()):
        if code in failing:
            return code
    return None


def version_key(version: str) -> tuple[int, ...]:
    """`MAJOR.MINOR` as numbers, for comparing versions (`"1.10"` is after `"1.2"`)."""
    return tuple(int(part) for part in version.split("."))


def frame_since(frame_type: str) -> str | None:
    """The minor that added a frame type, or None for a type the protocol does not define."""
    facts = SERVER_FRAME_FACTS.get(frame_type) or CLIENT_FRAME_FACTS.get(frame_type)
    return None if facts is None else facts.since


def member_since(frame_type: str, path: str) -> str | None:
    """The minor after the frame type's own that added the member at `path` (`"response_schema"`,
    `"resume.before"`), or None when the member came with the frame type."""
    facts = SERVER_FRAME_FACTS.get(frame_type) or CLIENT_FRAME_FACTS.get(frame_type)
    return None if facts is None else facts.members_since.get(path)
