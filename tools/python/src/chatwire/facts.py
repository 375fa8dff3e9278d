"""Protocol facts, as `chatwire-schema` states them: versions, limits, close codes, error codes.

One rule, one place: these numbers live in the Rust crate (`chatwire_schema::transport`,
`version`, `error_frame`, `script`, `reducer`). Its test schema/tests/shared_corpora.rs writes
them to fixtures/protocol-facts.json, and scripts/generate.py copies that file into this package
(drift-checked in CI); nothing here is typed in by hand.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final


def _load() -> dict[str, Any]:
    text = resources.files("chatwire").joinpath("protocol-facts.json").read_text(encoding="utf-8")
    facts: dict[str, Any] = json.loads(text)
    return facts


_FACTS: Final = _load()

#: Every protocol version the crate speaks, newest first (SESSION-003).
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = tuple(_FACTS["supported_versions"])
#: The WebSocket subprotocol (TRANSPORT-003).
SUBPROTOCOL: Final[str] = _FACTS["subprotocol"]
#: The `v` of every UiState frame.
UI_STATE_VERSION: Final[str] = _FACTS["ui_state_version"]
#: The `limits.max_frame_bytes` a server should announce (TRANSPORT-013).
DEFAULT_MAX_FRAME_BYTES: Final[int] = _FACTS["default_max_frame_bytes"]
#: The smallest `limits.max_frame_bytes` a server may announce (TRANSPORT-005).
MIN_MAX_FRAME_BYTES: Final[int] = _FACTS["min_max_frame_bytes"]
#: Above this many times `max_frame_bytes` a server may close with 1009 unread (TRANSPORT-007).
HARD_CAP_FACTOR: Final[int] = _FACTS["hard_cap_factor"]
#: After answering this many resumes on one connection with `resume_rejected`, a server closes it
#: with 1008 (RESUME-013).
REFUSED_RESUMES_PER_CONNECTION: Final[int] = _FACTS["refused_resumes_per_connection"]
#: The most bytes of frames a server may hold for one connection that has not taken them; a frame
#: that would pass it is not queued and the connection is closed with 4008 (TRANSPORT-016).
SEND_QUEUE_MAX_BYTES: Final[int] = _FACTS["send_queue_max_bytes"]
#: The largest integer on the wire (INT-001).
MAX_SAFE_INTEGER: Final[int] = _FACTS["max_safe_integer"]
#: Close codes by name (`going_away`: 1001, `session_taken_over`: 4001, …).
CLOSE_CODES: Final[dict[str, int]] = dict(_FACTS["close_codes"])
#: Every error code of the closed list (spec/errors.md#codes).
ERROR_CODES: Final[tuple[str, ...]] = tuple(e["code"] for e in _FACTS["error_codes"])
#: The close code that follows each fatal error code (TRANSPORT-008); the others are not fatal.
FATAL_CLOSE_CODES: Final[dict[str, int]] = {e["code"]: e["close_code"] for e in _FACTS["error_codes"] if e["fatal"]}
#: Longest `wait` / `run_ms` of a script, in milliseconds.
MAX_SCRIPT_DELAY_MS: Final[int] = _FACTS["max_script_delay_ms"]
#: Longest `expire_after_ms` of a script.
MAX_EXPIRY_MS: Final[int] = _FACTS["max_expiry_ms"]
MAX_SAY_CHUNKS: Final[int] = _FACTS["max_say_chunks"]
#: What turns a `tool_call_id` into the id of its `tool_output` item (STATE-015).
OUTPUT_ID_SUFFIX: Final[str] = _FACTS["output_id_suffix"]
#: The identifier rule (ID-001), as a regular expression.
ID_PATTERN: Final[str] = _FACTS["id_pattern"]


def is_fatal(code: str) -> bool:
    """Whether the server closes the connection after an error of this code (ERROR-002)."""
    return code in FATAL_CLOSE_CODES


#: The checks every client frame goes through, first to last: when several fail, the first decides
#: the error code (spec/errors.md#codes).
FRAME_CHECKS: Final[tuple[str, ...]] = tuple(_FACTS["error_order"]["frame_checks"])
#: The ordered own checks of the client frame types that have them (TURN-006, RESUME-016).
OWN_CHECKS: Final[dict[str, tuple[str, ...]]] = {
    frame_type: tuple(codes) for frame_type, codes in _FACTS["error_order"]["own_checks"].items()
}


def first_failing(frame_type: str, failing: list[str] | tuple[str, ...] | set[str]) -> str | None:
    """Of the codes a frame of `frame_type` would earn, the one a server must answer with."""
    for code in FRAME_CHECKS + OWN_CHECKS.get(frame_type, ()):
        if code in failing:
            return code
    return None
