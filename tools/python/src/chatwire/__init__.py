"""Chatwire for Python backends.

* `chatwire.models`: pydantic v2 models of every frame and of the UiState, generated from the
  JSON Schemas (`models.server_frame.ServerFrame`, `models.client_frame.ClientFrame`,
  `models.ui_state.UiState`, `models.agent_script.AgentScript`).
* `validate_client_frame` / `validate_server_frame`: the schemas shipped in this package, chosen
  by `type`, with errors that name the failing field; `read_client_frame` / `read_server_frame`
  check the schema and return the model; `is_date_time` is the RFC 3339 check every `ts` passes.
* `reduce`: the UiState reducer, proven equal to the Rust reference on a shared corpus.
* `apply_with_patch` / `catch_up`: the `ui_state_patch` of one event and the catch-up patch of a
  resume, built from what the reducer changed (op for op the Rust ones); `apply_patch` (RFC 6902).
* `check_script` / `plan_turn`: the conformance profile's scripted agent as a library.
* `chatwire.response_schema`: the checker of a call's typed answer (since 1.2, TOOL-022..024);
  `chatwire.reducer.cancel_refusals` / `CancelScope`: what a `chat.cancel` is refused with or closes
  (since 1.2, CANCEL-003..006); `chatwire.older_minor`: a 1.0 or 1.1 connection's view (TOOL-025);
  `chatwire.view.ConnView`: what a connection sees where `reasoning` or `usage` is not in force
  (since 1.3, REASON-001, USAGE-004); `chatwire.usage`: usage sums (STATE-056, SCRIPT-028).
* `chatwire.window`: a windowed connection's view, its snapshot, its pages and its share of each
  patch (since 1.2, WINDOW-*), proven equal to `chatwire_schema::window` on a shared corpus;
  `chatwire.attach`: who gets what when several connections hold a session (since 1.2, ATTACH-*).
* `chatwire.facts`: versions, limits, close and error codes, as chatwire-schema states them.
"""

from chatwire.patch import CatchUpError, PatchError, apply_patch, apply_with_patch, catch_up
from chatwire.reducer import EVENT_TYPES, ReduceError, empty_state, output_item_id, reduce, reduce_all
from chatwire.script import (
    MAX_EXPIRY_MS,
    MAX_SCRIPT_DELAY_MS,
    AwaitInput,
    Decision,
    End,
    PlannedCall,
    Reason,
    RunTool,
    Say,
    ScriptError,
    Settlement,
    ToolBatch,
    UsageStep,
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

__version__ = "1.3.0.dev1"

__all__ = [
    "EVENT_TYPES",
    "MAX_EXPIRY_MS",
    "MAX_SCRIPT_DELAY_MS",
    "AwaitInput",
    "CatchUpError",
    "Decision",
    "Direction",
    "End",
    "FrameError",
    "FrameErrorKind",
    "PatchError",
    "PlannedCall",
    "Reason",
    "ReduceError",
    "RunTool",
    "Say",
    "ScriptError",
    "Settlement",
    "ToolBatch",
    "UsageStep",
    "Violation",
    "Wait",
    "apply_patch",
    "apply_with_patch",
    "catch_up",
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
