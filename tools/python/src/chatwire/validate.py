"""Frame validation that names the failing field, as `chatwire_schema::FrameValidator` does.

Spec: `spec/overview.md#frames` and `#integers`. A frame is checked against the schema of its own
`type` (a plain `oneOf` over the union reports one useless error at the root), with the schemas
shipped in this package (Draft 2020-12). Integers follow INT-001: `4.0` and `1e3` are integers,
anything beyond ±(2^53 − 1) or the field's own range is refused, because the schemas state those
bounds as `minimum`/`maximum` and JSON Schema's `integer` is "a number without a fractional part".
`format: date-time` (every `ts`, FRAME-004) is asserted, as the Rust validator asserts it; the other
formats the schemas carry (`uint64`, `int32`, ...) are annotations whose ranges the bounds state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Any, Final

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from rfc3339_validator import validate_rfc3339

from chatwire.facts import MAX_SAFE_INTEGER

__all__ = [
    "Direction",
    "FrameError",
    "FrameErrorKind",
    "Violation",
    "client_types",
    "format_checker",
    "is_date_time",
    "load_schema",
    "parse_client_frame",
    "parse_json",
    "parse_server_frame",
    "server_types",
    "validate_client_frame",
    "validate_server_frame",
]

#: Deepest nesting of arrays and objects a frame may have; deeper text is not read as JSON, as
#: serde_json (the Rust validator's parser) refuses it past its recursion limit of 128.
MAX_NESTING: Final = 128


class Direction(str, Enum):
    """Which way a frame travels."""

    CLIENT_TO_SERVER = "client-to-server"
    SERVER_TO_CLIENT = "server-to-client"


_UNIONS: Final = {
    Direction.CLIENT_TO_SERVER: "client-frame.json",
    Direction.SERVER_TO_CLIENT: "server-frame.json",
}


@dataclass(frozen=True)
class Violation:
    """One schema violation: where in the frame (a JSON Pointer, `""` is the frame) and what."""

    instance_path: str
    message: str

    def __str__(self) -> str:
        return f"{self.instance_path or '/'}: {self.message}"


class FrameErrorKind(str, Enum):
    """Why a frame is not acceptable; the error code a server answers with is in the comment."""

    NOT_JSON = "not_json"  # malformed_frame
    NOT_OBJECT = "not_object"  # malformed_frame
    MISSING_TYPE = "missing_type"  # unknown_type
    UNKNOWN_TYPE = "unknown_type"  # unknown_type
    INVALID = "invalid"  # invalid_frame


class FrameError(ValueError):
    """A frame that its direction's schemas refuse, with the violations that name each field."""

    def __init__(self, kind: FrameErrorKind, message: str, violations: tuple[Violation, ...] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.violations = violations

    @property
    def error_code(self) -> str:
        """The `error.code` a server answers this frame with (`spec/errors.md`)."""
        return {
            FrameErrorKind.NOT_JSON: "malformed_frame",
            FrameErrorKind.NOT_OBJECT: "malformed_frame",
            FrameErrorKind.MISSING_TYPE: "unknown_type",
            FrameErrorKind.UNKNOWN_TYPE: "unknown_type",
            FrameErrorKind.INVALID: "invalid_frame",
        }[self.kind]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _too_deep(text: str | bytes) -> bool:
    """Whether brackets outside strings nest deeper than MAX_NESTING (checked before parsing, so
    that no recursive step of the parser, the validator or a deepcopy can exhaust the stack)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False  # the common case, without a byte-by-byte walk
    depth = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > MAX_NESTING:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


def parse_json(text: str | bytes) -> Any:
    """Parses JSON text strictly: `NaN` and `Infinity`, which Python's json accepts, are refused,
    and so is nesting deeper than MAX_NESTING."""
    if _too_deep(text):
        raise FrameError(FrameErrorKind.NOT_JSON, f"not valid JSON: nested deeper than {MAX_NESTING} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as e:
        raise FrameError(FrameErrorKind.NOT_JSON, f"not valid JSON: {e}") from None


def _utc_minute(checked: str) -> int:
    """Minute of the day in UTC of a date-time `validate_rfc3339` accepted (upper case)."""
    local = int(checked[11:13]) * 60 + int(checked[14:16])
    if checked.endswith("Z"):
        return local
    sign = -1 if checked[-6] == "-" else 1
    return (local - sign * (int(checked[-5:-3]) * 60 + int(checked[-2:]))) % (24 * 60)


def is_date_time(text: str) -> bool:
    """Whether `text` is an RFC 3339 date-time (FRAME-004), exactly as fixtures/formats/date-time.json
    states the rule for every implementation.

    rfc3339-validator checks the grammar and the calendar (the check jsonschema uses for
    `date-time`); two things RFC 3339 allows it refuses, so they are mapped onto what it accepts:
    the year 0000 (a leap year, as 2000 is, in the proleptic Gregorian calendar), and a leap second
    (`:60`), which is valid where `:59` is, at 23:59 UTC only (RFC 3339 section 5.7).
    """
    upper = text.upper()
    if upper[:4] == "0000":
        upper = "2000" + upper[4:]
    if upper[17:19] != "60":
        return bool(validate_rfc3339(upper))
    candidate = upper[:17] + "59" + upper[19:]
    return bool(validate_rfc3339(candidate)) and _utc_minute(candidate) == 23 * 60 + 59


def _date_time_format(instance: object) -> bool:
    return not isinstance(instance, str) or is_date_time(instance)


def format_checker() -> FormatChecker:
    """The formats the schemas assert: `date-time` only (see `is_date_time`)."""
    checker = FormatChecker(formats=())
    checker.checks("date-time")(_date_time_format)
    return checker


_FORMATS: Final = format_checker()


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """One of the schemas shipped with the package, by file name (`chat.tool_call.json`)."""
    text = resources.files("chatwire").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@lru_cache(maxsize=None)
def _registry() -> Registry:
    docs = [load_schema(p.name) for p in resources.files("chatwire").joinpath("schemas").iterdir() if p.name.endswith(".json")]
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs if "$id" in d)


@lru_cache(maxsize=None)
def _types(direction: Direction) -> frozenset[str]:
    union = load_schema(_UNIONS[direction])
    return frozenset(branch["properties"]["type"]["const"] for branch in union["oneOf"])


def client_types() -> frozenset[str]:
    """Every `type` a client may send."""
    return _types(Direction.CLIENT_TO_SERVER)


def server_types() -> frozenset[str]:
    """Every `type` a server may send."""
    return _types(Direction.SERVER_TO_CLIENT)


@lru_cache(maxsize=None)
def _validator(wire_type: str) -> Draft202012Validator:
    # `format` asserts `date-time` only, as the Rust validator does (FRAME-004).
    return Draft202012Validator(load_schema(f"{wire_type}.json"), registry=_registry(), format_checker=_FORMATS)


def _pointer(error: ValidationError) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in error.absolute_path)


def _refine(error: ValidationError, out: list[Violation]) -> None:
    """Flattens an error into violations. A failed `oneOf`/`anyOf` over a tagged union is replaced
    by the errors of the one branch whose tag matched, so the report names the exact field."""
    here = _pointer(error)
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[int, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)

        def ruled_out(errors: list[ValidationError]) -> bool:
            # A branch is ruled out when its own discriminator failed: a `const` (the tag of a
            # tagged union) or the instance's basic type (the `null` branch of an optional field).
            return any(e.validator == "const" or (e.validator == "type" and _pointer(e) == here) for e in errors)

        candidates = [b for b in branches.values() if not ruled_out(b)]
        if len(candidates) == 1:
            for sub in candidates[0]:
                _refine(sub, out)
            return
    out.append(Violation(here, error.message))


def _unsafe_numbers(value: Any, path: str, out: list[Violation]) -> None:
    """Every number beyond ±(2^53 − 1) at any depth (INT-002): opaque values (`payload`, `value`,
    `result`) take any JSON, so no schema bound reaches their numbers."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        if not abs(value) <= MAX_SAFE_INTEGER:  # also catches inf and nan
            out.append(Violation(path, f"{value} is beyond ±(2^53 − 1), the integers a JSON reader represents exactly (INT-002)"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _unsafe_numbers(item, f"{path}/{index}", out)
    elif isinstance(value, dict):
        for key, member in value.items():
            _unsafe_numbers(member, path + "/" + str(key).replace("~", "~0").replace("/", "~1"), out)


def _validate(direction: Direction, frame: Any) -> str:
    if not isinstance(frame, dict):
        raise FrameError(FrameErrorKind.NOT_OBJECT, "a frame must be a JSON object")
    wire = frame.get("type")
    if not isinstance(wire, str):
        raise FrameError(FrameErrorKind.MISSING_TYPE, 'the frame has no string "type" field')
    if wire not in _types(direction):
        raise FrameError(FrameErrorKind.UNKNOWN_TYPE, f"unknown frame type {wire!r}")
    validator = _validator(wire)
    unsafe: list[Violation] = []
    _unsafe_numbers(frame, "", unsafe)
    if not unsafe and validator.is_valid(frame):
        return wire
    schema_violations: list[Violation] = []
    for error in sorted(validator.iter_errors(frame), key=lambda e: list(map(str, e.absolute_path))):
        _refine(error, schema_violations)
    # An integer field beyond its range is already reported by its schema bound.
    violations = [n for n in unsafe if all(s.instance_path != n.instance_path for s in schema_violations)]
    violations.extend(schema_violations)
    if not violations:
        return wire
    text = "; ".join(map(str, violations))
    raise FrameError(FrameErrorKind.INVALID, f"{len(violations)} schema violation(s): {text}", tuple(violations))


def validate_client_frame(frame: Any) -> str:
    """Checks a parsed frame a client sent; returns its `type` or raises `FrameError`."""
    return _validate(Direction.CLIENT_TO_SERVER, frame)


def validate_server_frame(frame: Any) -> str:
    """Checks a parsed frame a server sent; returns its `type` or raises `FrameError`."""
    return _validate(Direction.SERVER_TO_CLIENT, frame)


def parse_client_frame(text: str | bytes) -> dict[str, Any]:
    """Parses and checks the text of a client frame; raises `FrameError` (its `error_code` is the
    code to answer with, in the precedence of `spec/errors.md`: JSON, type, schema)."""
    frame = parse_json(text)
    validate_client_frame(frame)
    result: dict[str, Any] = frame
    return result


def parse_server_frame(text: str | bytes) -> dict[str, Any]:
    """Parses and checks the text of a server frame; raises `FrameError`."""
    frame = parse_json(text)
    validate_server_frame(frame)
    result: dict[str, Any] = frame
    return result
