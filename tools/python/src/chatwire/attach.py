"""Several connections on one session (since 1.2, feature `multi_attach`, spec/attach.md).

With `multi_attach` in force a resume attaches beside the session's other connections instead of
taking it over (ATTACH-001); every event and state frame goes to each attached connection, an
answer only to the one that asked (ATTACH-004, ATTACH-005); past the bound the earliest attached
connection is detached (ATTACH-003), or taken over where its version has no detach (ATTACH-011).
The bound's least value is read from the welcome's schema,
which the Rust crate generates.
"""

from __future__ import annotations

from typing import Any, Final

from chatwire.facts import ERROR_CODE_FACTS, version_key
from chatwire.validate import load_schema


def _min_attached() -> int:
    limits = load_schema("session.welcome.json")["$defs"]["Limits"]["properties"]["max_attached_connections"]
    least: int = limits["minimum"]
    return least


#: The least `limits.max_attached_connections` a welcome with `multi_attach` may announce (ATTACH-003).
MIN_ATTACHED_CONNECTIONS: Final[int] = _min_attached()


def is_answer(frame: dict[str, Any]) -> bool:
    """Whether `frame` answers one connection's request (it carries `in_reply_to`): sent only on
    the connection the request came on (ATTACH-005); every other frame goes to every attached one."""
    return frame.get("in_reply_to") is not None


def resume_attaches(features: tuple[str, ...] | None) -> bool:
    """Whether a resume on a connection with these features in force attaches beside the others
    (ATTACH-001) rather than taking the session over from all of them (ATTACH-002)."""
    return "multi_attach" in (features or ())


def detached_code(version: str) -> str:
    """The error code a connection that negotiated `version` is ended with when it is detached past
    the bound (ATTACH-003); its close code is `FATAL_CLOSE_CODES` of it. `session_detached` where
    that version defines it, else the takeover it does define, `session_taken_over` (ATTACH-011):
    an older client would take an unknown code for a dropped connection and resume (COMPAT-005)."""
    since = next(e.since for e in ERROR_CODE_FACTS if e.code == "session_detached")
    return "session_detached" if version_key(version) >= version_key(since) else "session_taken_over"
