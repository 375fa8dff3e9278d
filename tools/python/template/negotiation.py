"""What a connection negotiated: its protocol version and the features in force on it.

spec/session.md, SESSION-003 (the newest common version) and SESSION-012..016 (features). Every
connection carries its own `Negotiated`: the same session can be resumed by a 1.0 client and by a
1.3 client, and what the server sends (patches or whole states, deltas or not, reasoning and usage
or not) follows the connection, never the session. A later version is one more row in `_SINCE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from chatwire.response_schema import SchemaError, check_schema
from chatwire.view import ConnView

#: The versions the template speaks, newest first (`--versions` narrows it).
TEMPLATE_VERSIONS: Final[tuple[str, ...]] = ("1.3", "1.2", "1.1", "1.0")

# What each version adds: features (in force only when negotiated, SESSION-012), capabilities that
# are not features, and client frame types. Each list is in the order the schema crate lists them.
_SINCE: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "1.0": {"features": (), "capabilities": ("rewind", "tool_output", "tool_expiry"), "client_types": (), "hello_members": ()},
    "1.1": {
        "features": ("ui_state_patch", "resume_catch_up", "assistant_stream"),
        "capabilities": ("retry",),
        "client_types": ("chat.retry",),
        "hello_members": ("features",),
    },
    "1.2": {
        "features": ("multi_attach", "state_window"),
        "capabilities": ("cancel",),
        "client_types": ("chat.cancel", "chat.history_request"),
        "hello_members": ("window",),
    },
    # 1.3 also defines `subagents`, which the template does not implement: it is not offered, and a
    # scripted call that hosts a sub-agent is played without it (SCRIPT-029).
    "1.3": {"features": ("reasoning", "usage"), "capabilities": (), "client_types": (), "hello_members": ()},
}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _up_to(version: str, what: str) -> tuple[str, ...]:
    return tuple(name for since, adds in _SINCE.items() if _key(since) <= _key(version) for name in adds[what])


class NoCommonVersion(Exception):
    """None of the offered versions is one this server speaks (SESSION-004)."""


@dataclass(frozen=True)
class Negotiated:
    """One connection's version and features in force; `features` is None on 1.0 (no welcome member)."""

    version: str
    features: tuple[str, ...] | None

    @property
    def patches(self) -> bool:
        """State frames go out as `ui_state_patch` (STATE-036)."""
        return "ui_state_patch" in (self.features or ())

    @property
    def streams(self) -> bool:
        """Deltas go out and states include the open stream (`assistant_stream`, STREAM-005)."""
        return "assistant_stream" in (self.features or ())

    @property
    def catches_up(self) -> bool:
        """A resume may be answered with a catch-up patch (RESUME-017)."""
        return "resume_catch_up" in (self.features or ())

    @property
    def attaches(self) -> bool:
        """A resume attaches beside the session's other connections (`multi_attach`, ATTACH-001)."""
        return "multi_attach" in (self.features or ())

    @property
    def windows(self) -> bool:
        """A hello may ask for a window and the connection may page back (`state_window`, WINDOW-001)."""
        return "state_window" in (self.features or ())

    @property
    def view(self) -> ConnView:
        """What the connection sees of reasoning and usage (REASON-001, USAGE-004) and its minor's shapes."""
        return ConnView.of(self.version, self.features)

    def offers(self, capability: str) -> bool:
        """Whether the welcome of this connection lists `capability` (a 1.1 welcome lists no `cancel`)."""
        return capability in _up_to(self.version, "capabilities")

    def knows_client_type(self, frame_type: str) -> bool:
        """Whether the negotiated version defines this client frame (ERROR-007 otherwise)."""
        newer = {t for since, adds in _SINCE.items() if _key(since) > _key(self.version) for t in adds["client_types"]}
        return frame_type not in newer


def undefined_hello_members(spoken: tuple[str, ...], hello: dict[str, Any]) -> list[str]:
    """Members of a hello that no version this server speaks defines: a 1.0-only server's hello
    schema is closed, so it refuses `features` with `invalid_frame` (FRAME-003, spec/session.md#features)."""
    newest = max(spoken, key=_key)
    newer = {m for since, adds in _SINCE.items() if _key(since) > _key(newest) for m in adds["hello_members"]}
    return sorted(newer & hello.keys())


def response_schema_error(hello: dict[str, Any]) -> str | None:
    """The first `response_schema` of the hello's script that TOOL-022 does not allow, or None.
    JSON Schema cannot bound the depth of a recursive definition, so the schema check lets a
    schema nested deeper than 16 through; it breaks the hello's shape all the same, which
    SCRIPT-026 answers with `invalid_frame`, not `invalid_script`."""
    script = hello.get("script")
    turns = script.get("turns", []) if isinstance(script, dict) else []
    for t, turn in enumerate(turns):
        runs = [turn.get("steps", [])] + [retry.get("steps", []) for retry in turn.get("retries", [])]
        for steps in runs:
            calls = [call for step in steps if step.get("op") == "tool_calls" for call in step.get("calls", [])]
            for call in calls:
                if call.get("response_schema") is None:
                    continue
                try:
                    check_schema(call["response_schema"])
                except SchemaError as e:
                    return f"turn {t}: response_schema {e}"
    return None


def negotiate(spoken: tuple[str, ...], hello: dict[str, Any]) -> Negotiated:
    """The newest version both speak (SESSION-003) and the features in force on it (SESSION-012):
    those the hello names, or all when it names none; unknown names are ignored (SESSION-016);
    `assistant_stream` only with `ui_state_patch` (STREAM-001)."""
    offered = set(hello["versions"])
    version = next((v for v in spoken if v in offered), None)
    if version is None:
        raise NoCommonVersion()
    if _key(version) < (1, 1):
        return Negotiated(version, None)
    requested = hello.get("features")
    features = [f for f in _up_to(version, "features") if requested is None or f in requested]
    if "ui_state_patch" not in features and "assistant_stream" in features:
        features.remove("assistant_stream")
    return Negotiated(version, tuple(features))


def implements(spoken: tuple[str, ...], name: str) -> bool:
    """Whether the server implements a feature or capability: one of the newest version it speaks."""
    newest = max(spoken, key=_key)
    return name in _up_to(newest, "features") + _up_to(newest, "capabilities")


def capabilities(negotiated: Negotiated, *, conformance: bool) -> list[str]:
    """The welcome's `capabilities`: what the server can do, as the negotiated version names it
    (a 1.0 welcome lists no 1.1 capability, COMPAT-005)."""
    caps = [*_up_to(negotiated.version, "capabilities"), *_up_to(negotiated.version, "features")]
    if conformance:
        caps.append("conformance_script")  # SCRIPT-003: exactly in conformance mode
    caps.append("restart_durability")
    return caps
