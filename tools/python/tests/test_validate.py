"""`validate_client_frame` / `validate_server_frame` on every frame of fixtures/messages.

The Rust FrameValidator judges the same corpus in `cargo test -p chatwire-schema --test corpus`:
every valid frame is accepted as its directory's type, every invalid one is refused the way the
case says (`expect`), naming the field the case names (`expect_path`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatwire import FrameError, FrameErrorKind, client_types, is_date_time, parse_client_frame, read_ui_state, validate_client_frame, validate_server_frame
from conftest import FIXTURES

MESSAGES = FIXTURES / "messages"
VALID = sorted((MESSAGES / "valid").glob("*/*.json"))
INVALID = sorted((MESSAGES / "invalid").glob("*/*.json"))


def _validator(direction: str) -> Any:
    return validate_client_frame if direction == "client-to-server" else validate_server_frame


def _direction(folder: str) -> str:
    return "client-to-server" if folder in client_types() else "server-to-client"


@pytest.mark.parametrize("path", VALID, ids=[p.relative_to(MESSAGES).as_posix() for p in VALID])
def test_valid_fixture_is_accepted_as_its_type(path: Path) -> None:
    frame = json.loads(path.read_text(encoding="utf-8"))
    assert _validator(_direction(path.parent.name))(frame) == path.parent.name


@pytest.mark.parametrize("path", INVALID, ids=[p.relative_to(MESSAGES).as_posix() for p in INVALID])
def test_invalid_fixture_is_refused_naming_the_field(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    direction = case["direction"] if path.parent.name == "envelope" else _direction(path.parent.name)
    with pytest.raises(FrameError) as refused:
        _validator(direction)(case["frame"])
    assert refused.value.kind == FrameErrorKind(case["expect"])
    if case["expect"] == "invalid":
        assert case["expect_path"] in [v.instance_path for v in refused.value.violations]


@pytest.mark.parametrize(
    ("number", "accepted"),
    [(4, True), (4.0, True), (1e3, True), (-0.0, True), (4.5, False), (-1, False), (2**53 - 1, True), (2**53, False), (1e300, False), ("4", False)],
)
def test_int_001_integer_spellings_and_range(number: Any, accepted: bool) -> None:
    # INT-001: a zero fraction or an exponent is the integer it denotes; beyond 2^53 - 1 is refused.
    frame = {"type": "chat.run_started", "seq": number, "invocation_id": "inv-1", "ts": "2026-01-15T10:00:00Z"}
    if accepted:
        assert validate_server_frame(frame) == "chat.run_started"
    else:
        with pytest.raises(FrameError) as refused:
            validate_server_frame(frame)
        assert [v.instance_path for v in refused.value.violations] == ["/seq"]


def test_a_tagged_union_error_names_the_field_inside_the_matching_branch() -> None:
    frame = {"type": "chat.tool_call_response", "id": "r-1", "tool_call_id": "tc-1", "outcome": {"action": "submit"}}
    with pytest.raises(FrameError) as refused:
        validate_client_frame(frame)
    assert [v.instance_path for v in refused.value.violations] == ["/outcome"]
    assert "value" in refused.value.violations[0].message


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", "malformed_frame"),
        ('{"type": "chat.user_message", "id": "m-1", "text": NaN}', "malformed_frame"),
        ("[1]", "malformed_frame"),
        ('{"id": "m-1"}', "unknown_type"),
        ('{"type": "chat.run_started", "seq": 1, "invocation_id": "i", "ts": "t"}', "unknown_type"),
        ('{"type": "chat.user_message", "id": "m-1", "text": "hi", "extra": 1}', "invalid_frame"),
    ],
)
def test_parse_client_frame_maps_each_failure_to_its_error_code(text: str, code: str) -> None:
    with pytest.raises(FrameError) as refused:
        parse_client_frame(text)
    assert refused.value.error_code == code


def test_nesting_beyond_the_limit_is_not_json_and_within_it_is_fine() -> None:
    deep = '{"type": "chat.user_message", "id": "m-1", "text": "x", "extra": ' + "[" * 200 + "]" * 200 + "}"
    with pytest.raises(FrameError) as refused:
        parse_client_frame(deep)
    assert refused.value.error_code == "malformed_frame"
    # Brackets inside strings do not count.
    text = '{"type": "chat.user_message", "id": "m-1", "text": "' + "[" * 300 + '"}'
    assert parse_client_frame(text)["text"] == "[" * 300
    shallow = '{"type": "chat.user_message", "id": "m-1", "text": "x", "extra": ' + "[" * 100 + "]" * 100 + "}"
    with pytest.raises(FrameError) as refused:
        parse_client_frame(shallow)
    assert refused.value.error_code == "invalid_frame"


@pytest.mark.parametrize(("number", "accepted"), [(2**53 - 1, True), (-(2**53 - 1), True), (2**53, False), (-(2**53), False), (1e16, False), (0.5, True)])
def test_int_002_numbers_inside_opaque_values_are_bounded_too(number: Any, accepted: bool) -> None:
    frame = {"type": "chat.tool_call_response", "id": "r-1", "tool_call_id": "tc-1", "outcome": {"action": "submit", "value": {"deep": [number]}}}
    if accepted:
        assert validate_client_frame(frame) == "chat.tool_call_response"
    else:
        with pytest.raises(FrameError) as refused:
            validate_client_frame(frame)
        assert [v.instance_path for v in refused.value.violations] == ["/outcome/value/deep/0"]


DATE_TIME_CASES = json.loads((FIXTURES / "formats" / "date-time.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("text", "valid"),
    [(t, True) for t in DATE_TIME_CASES["valid"]] + [(t, False) for t in DATE_TIME_CASES["invalid"]],
)
def test_frame_004_is_date_time_agrees_with_the_shared_list(text: str, valid: bool) -> None:
    # fixtures/formats/date-time.json is the list chatwire-schema and the npm package agree on.
    assert is_date_time(text) is valid


@pytest.mark.parametrize(
    ("text", "valid"),
    [(t, True) for t in DATE_TIME_CASES["valid"]] + [(t, False) for t in DATE_TIME_CASES["invalid"]],
)
def test_frame_004_every_ts_is_checked_as_a_date_time(text: str, valid: bool) -> None:
    frame = {"type": "chat.run_started", "seq": 1, "invocation_id": "inv-1", "ts": text}
    if valid:
        assert validate_server_frame(frame) == "chat.run_started"
    else:
        with pytest.raises(FrameError) as refused:
            validate_server_frame(frame)
        assert [v.instance_path for v in refused.value.violations] == ["/ts"]


def test_frame_004_read_ui_state_checks_the_ts_of_items() -> None:
    traces = (FIXTURES / "reducer-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    state = next(s for s in (json.loads(line)["final"] for line in traces) if s["items"] and "ts" in s["items"][0])
    assert len(read_ui_state(state).items) == len(state["items"])
    state["items"][0]["ts"] = "2026-01-15 10:00:00Z"
    with pytest.raises(FrameError) as refused:
        read_ui_state(state)
    assert refused.value.kind == FrameErrorKind.INVALID
