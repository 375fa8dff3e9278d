"""Renders src/chatwire/protocol_facts.py from fixtures/protocol-facts.json (used by generate.py).

The document is chatwire-schema's (`chatwire_schema::protocol_facts`, written by
`cargo run -p chatwire-schema-tool -- export`); the module states the same facts as typed Python
constants, one per line, so that a changed fact shows as a one-line diff and mypy --strict checks
every use. Nothing in the module is typed by hand.
"""

from __future__ import annotations

from typing import Any, Callable

HEADER = '''"""Protocol facts as chatwire-schema states them, typed.

Generated from fixtures/protocol-facts.json by tools/python/scripts/generate.py. Do not edit: change
chatwire_schema (Rust), run `cargo run -p chatwire-schema-tool -- export`, then scripts/generate.py.
`chatwire.facts` is the documented face of these constants.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class ErrorCodeFact(NamedTuple):
    """An error code: whether it is fatal, the close code after it, the minor that added it."""

    code: str
    fatal: bool
    close_code: int | None
    since: str


class CapabilityFact(NamedTuple):
    """A capability: the minor that defines it, whether it is a feature (negotiated, SESSION-012)."""

    name: str
    since: str
    feature: bool


class IdSlot(NamedTuple):
    """An id a server frame introduces (ID-002): its kind, its member and when it is new."""

    kind: str
    member: str
    rule: str


class NamedId(NamedTuple):
    """The call, item or invocation member a client frame names."""

    kind: str
    member: str


class ServerFrameFacts(NamedTuple):
    """What every frame of one server frame type shares."""

    since: str
    carries_state: bool
    event: bool
    answer: str
    introduces: tuple[IdSlot, ...]
    members_since: dict[str, str]


class ClientFrameFacts(NamedTuple):
    """What every frame of one client frame type shares."""

    since: str
    answered_by: tuple[str, ...]
    names: NamedId | None
    members_since: dict[str, str]


class VersionFacts(NamedTuple):
    """What a connection that negotiated one version may see (COMPAT-005)."""

    client_frames: tuple[str, ...]
    server_frames: tuple[str, ...]
    capabilities: tuple[str, ...]
    features: tuple[str, ...]
    error_codes: tuple[str, ...]

'''


def literal(value: Any) -> str:
    """A Python literal for a JSON scalar, or a tuple of them."""
    if isinstance(value, list):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    raise ValueError(f"not a scalar or a list of scalars: {value!r}")


def block(values: list[Any]) -> str:
    """A tuple literal, one element a line."""
    return "(\n" + "".join(f"    {literal(v)},\n" for v in values) + ")"


def mapping(entries: dict[str, Any], render: Callable[[Any], str] = literal, indent: str = "    ") -> str:
    """A dict literal, one entry a line."""
    if not entries:
        return "{}"
    lines = [f"{indent}{key!r}: {render(value)}," for key, value in entries.items()]
    return "{\n" + "\n".join(lines) + "\n" + indent[4:] + "}"


def constant(doc: str, name: str, type_: str, value: str) -> str:
    return f"#: {doc}\n{name}: Final[{type_}] = {value}"


def server_frame(f: dict[str, Any]) -> str:
    slots = [f"IdSlot({s['kind']!r}, {s['member']!r}, {s['rule']!r})" for s in f["introduces"]]
    introduces = "(" + ", ".join(slots) + ("," if len(slots) == 1 else "") + ")"
    return (
        f"ServerFrameFacts(since={f['since']!r}, carries_state={f['carries_state']!r}, event={f['event']!r}, "
        f"answer={f['answer']!r}, introduces={introduces}, members_since={mapping(f['members_since'], indent='        ')})"
    )


def client_frame(f: dict[str, Any]) -> str:
    names = "None" if f["names"] is None else "NamedId({!r}, {!r})".format(f["names"]["kind"], f["names"]["member"])
    return (
        f"ClientFrameFacts(since={f['since']!r}, answered_by={literal(f['answered_by'])}, names={names}, "
        f"members_since={mapping(f['members_since'], indent='        ')})"
    )


def render(facts: dict[str, Any]) -> str:
    frames = facts["frames"]
    server = {wire: server_frame(f) for wire, f in frames["server"].items()}
    client = {wire: client_frame(f) for wire, f in frames["client"].items()}
    versions = {
        version: "VersionFacts(\n"
        + "".join(f"        {key}={literal(v[key])},\n" for key in ("client_frames", "server_frames", "capabilities", "features", "error_codes"))
        + "    )"
        for version, v in facts["versions"].items()
    }
    error_codes = "(\n" + "".join(
        f"    ErrorCodeFact({e['code']!r}, {e['fatal']!r}, {e['close_code']!r}, {e['since']!r}),\n" for e in facts["error_codes"]
    ) + ")"
    capabilities = "(\n" + "".join(
        f"    CapabilityFact({c['name']!r}, {c['since']!r}, {c['feature']!r}),\n" for c in facts["capabilities"]
    ) + ")"
    order = facts["error_order"]
    response = facts["response_schema"]
    scalars = [
        ("The protocol version this package describes (`MAJOR.MINOR`).", "PROTOCOL_VERSION", "str", "protocol_version"),
        ("Every protocol version the crate speaks, newest first (SESSION-003).", "SUPPORTED_VERSIONS", "tuple[str, ...]", "supported_versions"),
        ("The released minors, oldest first; their schemas never change (COMPAT-012).", "RELEASED_VERSIONS", "tuple[str, ...]", "released_versions"),
        ("The WebSocket subprotocol (TRANSPORT-003).", "SUBPROTOCOL", "str", "subprotocol"),
        ("The `v` of every UiState frame.", "UI_STATE_VERSION", "str", "ui_state_version"),
        ("The `limits.max_frame_bytes` a server should announce (TRANSPORT-013).", "DEFAULT_MAX_FRAME_BYTES", "int", "default_max_frame_bytes"),
        ("The smallest `limits.max_frame_bytes` a server may announce (TRANSPORT-005).", "MIN_MAX_FRAME_BYTES", "int", "min_max_frame_bytes"),
        ("Above this many times `max_frame_bytes` a server may close with 1009 unread (TRANSPORT-007).", "HARD_CAP_FACTOR", "int", "hard_cap_factor"),
        ("After this many `resume_rejected` on one connection a server closes it with 1008 (RESUME-013).", "REFUSED_RESUMES_PER_CONNECTION", "int", "refused_resumes_per_connection"),
        ("The most bytes of frames a server holds for a connection that has not taken them (TRANSPORT-016).", "SEND_QUEUE_MAX_BYTES", "int", "send_queue_max_bytes"),
        ("The fewest connections a `multi_attach` server keeps attached to one session (ATTACH-003).", "MIN_ATTACHED_CONNECTIONS", "int", "min_attached_connections"),
        ("The largest `window` a `session.hello` may ask for (WINDOW-001).", "MAX_WINDOW_ITEMS", "int", "max_window_items"),
        ("The largest `limit` of a `chat.history_request` (WINDOW-007).", "MAX_HISTORY_PAGE_ITEMS", "int", "max_history_page_items"),
        ("The largest integer on the wire (INT-001).", "MAX_SAFE_INTEGER", "int", "max_safe_integer"),
        ("Longest `wait` / `run_ms` of a script, in milliseconds.", "MAX_SCRIPT_DELAY_MS", "int", "max_script_delay_ms"),
        ("Longest `expire_after_ms` of a script.", "MAX_EXPIRY_MS", "int", "max_expiry_ms"),
        ("Most `chunks` of one scripted say.", "MAX_SAY_CHUNKS", "int", "max_say_chunks"),
        ("How deep a sub-agent may run: a top-level call's at depth 1 (STATE-069, since 1.3).", "MAX_SUBAGENT_DEPTH", "int", "max_subagent_depth"),
        ("What turns a `tool_call_id` into the id of its `tool_output` item (STATE-015).", "OUTPUT_ID_SUFFIX", "str", "output_id_suffix"),
        ("The identifier rule (ID-001), as a regular expression.", "ID_PATTERN", "str", "id_pattern"),
        ("The server frames that are events for the reducer, in schema order.", "EVENT_TYPES", "tuple[str, ...]", "events"),
    ]
    out = [HEADER]
    for doc, name, type_, key in scalars:
        value = facts[key]
        out.append(constant(doc, name, type_, block(value) if isinstance(value, list) else literal(value)))
    out += [
        constant("The keywords a response schema may use (TOOL-022), in the spec's order.", "RESPONSE_SCHEMA_KEYWORDS", "tuple[str, ...]", block(response["keywords"])),
        constant("The JSON Schema type names a response schema's `type` may list.", "RESPONSE_SCHEMA_TYPES", "tuple[str, ...]", block(response["types"])),
        constant("How deep response schemas nest, at most.", "RESPONSE_SCHEMA_MAX_DEPTH", "int", literal(response["max_depth"])),
        constant("Close codes by name (`going_away`: 1001, `session_taken_over`: 4001, ...).", "CLOSE_CODES", "dict[str, int]", mapping(facts["close_codes"])),
        constant("Every error code of the closed list (spec/errors.md#codes), with its facts.", "ERROR_CODE_FACTS", "tuple[ErrorCodeFact, ...]", error_codes),
        constant("The checks every client frame goes through, first to last (spec/errors.md#codes).", "FRAME_CHECKS", "tuple[str, ...]", block(order["frame_checks"])),
        constant("The ordered own checks of the client frame types that have them (TURN-006, RESUME-016).", "OWN_CHECKS", "dict[str, tuple[str, ...]]", mapping(order["own_checks"])),
        constant("The reducer's refusals: the Rust variant's name and the rule it reports.", "REDUCE_REFUSALS", "dict[str, str]", mapping(facts["reduce_refusals"])),
        constant("Every capability, with the minor that defines it and whether it is a feature.", "CAPABILITY_FACTS", "tuple[CapabilityFact, ...]", capabilities),
        constant("The server frame types that answer each client frame when it is accepted (ERROR-004: an error answers a refusal).", "ANSWERED_BY", "dict[str, tuple[str, ...]]", mapping({w: f["answered_by"] for w, f in frames["client"].items()})),
        constant("Per server frame type, what its frames share.", "SERVER_FRAME_FACTS", "dict[str, ServerFrameFacts]", mapping(server, str)),
        constant("Per client frame type, what its frames share.", "CLIENT_FRAME_FACTS", "dict[str, ClientFrameFacts]", mapping(client, str)),
        constant("Each display item kind's members, in the order the crate serializes them (patch member ops follow it).", "ITEM_MEMBERS", "dict[str, tuple[str, ...]]", mapping(facts["item_members"])),
        constant("The UiState members later minors added, by path, with that minor.", "UI_STATE_MEMBERS_SINCE", "dict[str, str]", mapping(facts["ui_state_members_since"])),
        constant("Per supported version, oldest first: what a connection that negotiated it may see.", "VERSION_FACTS", "dict[str, VersionFacts]", mapping(versions, str)),
    ]
    return "\n".join(out) + "\n"
