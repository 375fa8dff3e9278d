"""`response_schema` (since 1.2): the one checker of a call's typed answer, as Rust's.

Spec: `spec/tool-calls.md#response_schema` (TOOL-022..TOOL-024). A response schema is a JSON Schema
using only `KEYWORDS`, nested at most `MAX_DEPTH` deep, so every implementation checks a value the
same way: this module mirrors `chatwire_schema::response_schema` and is proven equal to it on
`fixtures/response-schemas/cases.jsonl` (tests/test_response_schemas.py): the same schema refusals,
and for every value the same first failing JSON Pointer and keyword, in the order TOOL-024 states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

KEYWORDS = (
    "type", "properties", "required", "enum", "items", "minimum", "maximum",
    "minLength", "maxLength", "additionalProperties", "title", "description",
)  # fmt: skip
TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
MAX_DEPTH = 16


class SchemaError(ValueError):
    """Why a JSON value is not a response schema; `kind` is the Rust `SchemaError` variant's name."""

    def __init__(self, kind: str, at: str, message: str) -> None:
        super().__init__(f"{at}: {message}")
        self.kind = kind
        self.at = at


@dataclass(frozen=True)
class Violation:
    """The first failing check: the JSON Pointer of the failing part of the value, and the keyword."""

    pointer: str
    keyword: str
    message: str


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_uint(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_schema(schema: Any, at: str = "", depth: int = 0) -> None:
    """Raises `SchemaError` unless `schema` is a response schema (TOOL-022)."""
    if depth > MAX_DEPTH:
        raise SchemaError("TooDeep", at, f"response schemas nest at most {MAX_DEPTH} deep")
    if not isinstance(schema, dict):
        raise SchemaError("NotAnObject", at, "a response schema is a json object")

    def bad(keyword: str, expected: str) -> SchemaError:
        return SchemaError("BadKeyword", at, f"{keyword} must be {expected}")

    for keyword, value in schema.items():
        if keyword == "type":
            names = value if isinstance(value, list) and value else [value] if isinstance(value, str) else None
            if names is None or not all(isinstance(n, str) and n in TYPES for n in names):
                raise bad("type", "a type name or a non-empty array of them")
        elif keyword == "properties":
            if not isinstance(value, dict):
                raise bad("properties", "an object of schemas")
            for name, sub in value.items():
                check_schema(sub, f"{at}/properties/{_escape(name)}", depth + 1)
        elif keyword == "required":
            if not (isinstance(value, list) and all(isinstance(n, str) for n in value)):
                raise bad("required", "an array of property names")
        elif keyword == "enum":
            if not (isinstance(value, list) and value):
                raise bad("enum", "a non-empty array")
        elif keyword == "items":
            check_schema(value, f"{at}/items", depth + 1)
        elif keyword == "additionalProperties":
            if not isinstance(value, bool):
                check_schema(value, f"{at}/additionalProperties", depth + 1)
        elif keyword in ("minimum", "maximum"):
            if not _is_number(value):
                raise bad(keyword, "a number")
        elif keyword in ("minLength", "maxLength"):
            if not _is_uint(value):
                raise bad(keyword, "a non-negative integer")
        elif keyword in ("title", "description"):
            if not isinstance(value, str):
                raise bad(keyword, "a string")
        else:
            raise SchemaError("UnknownKeyword", at, f"keyword {keyword} is not in the response_schema subset")


def _has_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "number":
        return _is_number(value)
    if name == "integer":
        return _is_number(value) and math.isfinite(value) and float(value).is_integer()
    if name == "string":
        return isinstance(value, str)
    return False


def _json_equal(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and _json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return type(a) is type(b) and bool(a == b)


def _fmt(number: Any) -> str:
    return str(float(number)) if isinstance(number, float) else str(number)


def _check(schema: dict[str, Any], value: Any, pointer: str) -> Violation | None:
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else [t for t in types if isinstance(t, str)]
        if not any(_has_type(value, n) for n in names):
            return Violation(pointer, "type", f"expected {' or '.join(names)}")
    options = schema.get("enum")
    if isinstance(options, list) and not any(_json_equal(o, value) for o in options):
        return Violation(pointer, "enum", "not one of the allowed values")
    if isinstance(value, str):
        length = len(value)
        if _is_uint(schema.get("minLength")) and length < schema["minLength"]:
            return Violation(pointer, "minLength", f"shorter than {schema['minLength']} characters")
        if _is_uint(schema.get("maxLength")) and length > schema["maxLength"]:
            return Violation(pointer, "maxLength", f"longer than {schema['maxLength']} characters")
    if _is_number(value):
        if _is_number(schema.get("minimum")) and value < schema["minimum"]:
            return Violation(pointer, "minimum", f"less than {_fmt(schema['minimum'])}")
        if _is_number(schema.get("maximum")) and value > schema["maximum"]:
            return Violation(pointer, "maximum", f"greater than {_fmt(schema['maximum'])}")
    if isinstance(value, dict):
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if isinstance(name, str) and name not in value:
                    return Violation(f"{pointer}/{_escape(name)}", "required", f"required property {name} is missing")
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, sub in properties.items():
                if name in value and isinstance(sub, dict):
                    found = _check(sub, value[name], f"{pointer}/{_escape(name)}")
                    if found:
                        return found
        extra = schema.get("additionalProperties")
        if extra is not None:
            for name, member in value.items():
                if isinstance(properties, dict) and name in properties:
                    continue
                if extra is False:
                    return Violation(f"{pointer}/{_escape(name)}", "additionalProperties", f"property {name} is not allowed")
                if isinstance(extra, dict):
                    found = _check(extra, member, f"{pointer}/{_escape(name)}")
                    if found:
                        return found
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for index, element in enumerate(value):
            found = _check(items, element, f"{pointer}/{index}")
            if found:
                return found
    return None


def check_value(schema: dict[str, Any], value: Any) -> Violation | None:
    """The first failure of `value` against the response schema `schema` (checked first with
    `check_schema`), in the order of TOOL-024; `None` when it fits."""
    return _check(schema, value, "")
