"""Chatwire for Python backends.

* `chatwire.models`: pydantic v2 models of every frame and of the UiState, generated from the
  JSON Schemas (`models.server_frame.ServerFrame`, `models.client_frame.ClientFrame`,
  `models.ui_state.UiState`, `models.agent_script.AgentScript`).
* `validate_client_frame` / `validate_server_frame`: the schemas shipped in this package, chosen
  by `type`, with errors that name the failing field; `read_client_frame` / `read_server_frame`
  check the schema and return the model; `is_date_time` is the RFC 3339 check every `ts` passes.
* `reduce`: the UiState reducer, proven equal to the Rust reference on a shared corpus.
* `check_script` / `plan_turn`: the conformance profile's scripted agent as a library.
* `chatwire.facts`: versions, limits, close and error codes, as chatwire-schema states them.
"""

from chatwire.reducer import EVENT_TYPES, ReduceError, empty_state, output_item_id, reduce, reduce_all
from chatwire.script import (
    MAX_EXPIRY_MS,
    MAX_SCRIPT_DELAY_MS,
    AwaitInput,
    Decision,
    End,
    PlannedCall,
    RunTool,
    Say,
    ScriptError,
    Settlement,
    ToolBatch,
    Wait,
    check_script,
    plan_turn,
    response_settlement,
    self_settling,
    settle_sequence,
)
from chatwire.typed import read_client_frame, read_server_frame, read_ui_state
from chatwire.validate import (
    Direction,
    FrameError,
    FrameErrorKind,
    Violation,
    client_types,
    format_checker,
    is_date_time,
    load_schema,
    parse_client_frame,
    parse_json,
    parse_server_frame,
    server_types,
    validate_client_frame,
    validate_server_frame,
)

__version__ = "0.1.0"

__all__ = [
    "EVENT_TYPES",
    "MAX_EXPIRY_MS",
    "MAX_SCRIPT_DELAY_MS",
    "AwaitInput",
    "Decision",
    "Direction",
    "End",
    "FrameError",
    "FrameErrorKind",
    "PlannedCall",
    "ReduceError",
    "RunTool",
    "Say",
    "ScriptError",
    "Settlement",
    "ToolBatch",
    "Violation",
    "Wait",
    "check_script",
    "client_types",
    "empty_state",
    "format_checker",
    "is_date_time",
    "load_schema",
    "output_item_id",
    "parse_client_frame",
    "parse_json",
    "parse_server_frame",
    "plan_turn",
    "read_client_frame",
    "read_server_frame",
    "read_ui_state",
    "reduce",
    "reduce_all",
    "response_settlement",
    "self_settling",
    "server_types",
    "settle_sequence",
    "validate_client_frame",
    "validate_server_frame",
]
