"""The generated pydantic models read what the schemas accept and refuse what they refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from chatwire import FrameError, client_types, read_client_frame, read_server_frame, read_ui_state
from chatwire.models.client_frame import ClientFrame
from chatwire.models.server_frame import ServerFrame, ServerFrameChatToolCall
from conftest import FIXTURES

MESSAGES = FIXTURES / "messages"
VALID = sorted((MESSAGES / "valid").glob("*/*.json"))
INVALID = sorted(p for p in (MESSAGES / "invalid").glob("*/*.json") if p.parent.name != "envelope")


@pytest.mark.parametrize("path", VALID, ids=[p.relative_to(MESSAGES).as_posix() for p in VALID])
def test_every_valid_fixture_reads_and_writes_back_unchanged(path: Path) -> None:
    frame = json.loads(path.read_text(encoding="utf-8"))
    model = ClientFrame if path.parent.name in client_types() else ServerFrame
    parsed = model.model_validate(frame)
    assert parsed.root.type == path.parent.name
    assert json.loads(parsed.model_dump_json(exclude_unset=True, by_alias=True)) == frame


@pytest.mark.parametrize("path", INVALID, ids=[p.relative_to(MESSAGES).as_posix() for p in INVALID])
def test_every_invalid_fixture_is_refused_by_the_readers(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    read = read_client_frame if path.parent.name in client_types() else read_server_frame
    with pytest.raises(FrameError):
        read(case["frame"])
    model = ClientFrame if path.parent.name in client_types() else ServerFrame
    try:
        model.model_validate(case["frame"])
    except ValidationError:
        return
    # The two gaps of the bare models, which is why the readers check the schema first: lax
    # pydantic integers read a numeric string, and a `ts` stays the wire string (generate.py maps
    # date-time to str), so only the schema check asserts its format.
    numeric_string = any(isinstance(v, str) and v.isdigit() for v in _leaves(case["frame"]))
    assert numeric_string or case["expect_path"].endswith("ts"), case["rule"]


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_states_of_the_trace_corpus_read_as_ui_state() -> None:
    lines = (FIXTURES / "reducer-traces" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines[:40]:
        final = json.loads(line)["final"]
        assert json.loads(read_ui_state(final).model_dump_json(exclude_unset=True, by_alias=True)) == final


def test_a_tool_call_model_is_typed() -> None:
    call = ServerFrameChatToolCall.model_validate(
        {
            "type": "chat.tool_call",
            "seq": 7,
            "invocation_id": "inv-1",
            "tool_call_id": "tc-1",
            "tool_name": "confirm",
            "component_type": "ConfirmDialog",
            "interaction_type": "ui_tool",
            "awaiting_response": True,
            "display": "inline",
            "payload": {},
            "call_index": 0,
            "ts": "2026-01-15T10:00:00Z",
        }
    )
    assert call.awaiting_response is True
    assert call.interaction_type.value == "ui_tool"
