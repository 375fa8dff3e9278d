"""Typed frames: the schema decides, the generated pydantic models give types.

The models in `chatwire.models` are generated from the same schemas, but pydantic's lax integers
read `"4"` as 4 (they must stay lax to read `4.0` as 4, INT-001). These readers therefore check
the schema first (`validate_*_frame`, which names the failing field) and only then build the model,
so a frame is accepted exactly when the schema accepts it.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from chatwire.models.client_frame import ClientFrame
from chatwire.models.server_frame import ServerFrame
from chatwire.models.ui_state import UiState
from chatwire.validate import FrameError, FrameErrorKind, Violation, format_checker, load_schema, validate_client_frame, validate_server_frame

__all__ = ["read_client_frame", "read_server_frame", "read_ui_state"]


def read_client_frame(frame: Any) -> ClientFrame:
    """A parsed client frame as its model; raises `FrameError` when the schema refuses it."""
    validate_client_frame(frame)
    return ClientFrame.model_validate(frame)


def read_server_frame(frame: Any) -> ServerFrame:
    """A parsed server frame as its model; raises `FrameError` when the schema refuses it."""
    validate_server_frame(frame)
    return ServerFrame.model_validate(frame)


def read_ui_state(state: Any) -> UiState:
    """A UiState (the `state` of a snapshot or update) as its model; raises `FrameError`."""
    validator = Draft202012Validator(load_schema("ui-state.json"), format_checker=format_checker())
    errors = list(validator.iter_errors(state))
    if errors:
        violations = tuple(Violation("".join(f"/{p}" for p in e.absolute_path), e.message) for e in errors)
        raise FrameError(FrameErrorKind.INVALID, "; ".join(map(str, violations)), violations)
    return UiState.model_validate(state)
