// Generated from fixtures/protocol-facts.json by tools/npm/scripts/generate.mjs. Do not edit: change
// chatwire_schema (Rust), run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

import type { Capability, ClientFrameType, ErrorCode, ServerFrameType } from "./protocol.js";

/** The protocol version these types describe (`MAJOR.MINOR`). */
export const PROTOCOL_VERSION = "1.3";
/** The WebSocket subprotocol of this major version (`TRANSPORT-003`). */
export const SUBPROTOCOL = "chatwire.v1";
/** Every protocol version this package speaks, newest first (`SESSION-003`). */
export const SUPPORTED_VERSIONS = [
  "1.3",
  "1.2",
  "1.1",
  "1.0"
] as const;
/** The released minors of this major, oldest first; their schemas never change (`COMPAT-012`). */
export const RELEASED_VERSIONS = [
  "1.0",
  "1.1",
  "1.2"
] as const;
/** The `v` of every UiState frame. */
export const UI_STATE_VERSION = "ui_state_v1";

/** The `limits.max_frame_bytes` a server should announce (`TRANSPORT-013`). */
export const DEFAULT_MAX_FRAME_BYTES = 1048576;
/** The smallest `limits.max_frame_bytes` a server may announce (`TRANSPORT-005`). */
export const MIN_MAX_FRAME_BYTES = 65536;
/** Above this many times `max_frame_bytes` a server may close with 1009 unread (`TRANSPORT-007`). */
export const HARD_CAP_FACTOR = 16;
/** After this many `resume_rejected` on one connection a server closes it with 1008 (`RESUME-013`). */
export const REFUSED_RESUMES_PER_CONNECTION = 8;
/** The most bytes a server queues for a connection that does not take its frames (`TRANSPORT-016`). */
export const SEND_QUEUE_MAX_BYTES = 16777216;
/** The fewest connections a `multi_attach` server keeps attached to one session (`ATTACH-003`). */
export const MIN_ATTACHED_CONNECTIONS = 8;
/** The largest `window` a `session.hello` may ask for (`WINDOW-001`). */
export const MAX_WINDOW_ITEMS = 1000;
/** The largest `limit` of a `chat.history_request` (`WINDOW-007`). */
export const MAX_HISTORY_PAGE_ITEMS = 500;
/** The largest integer on the wire (`INT-001`). */
export const MAX_SAFE_INTEGER = 9007199254740991;
/** What turns a `tool_call_id` into the id of its `tool_output` item (`STATE-015`). */
export const OUTPUT_ID_SUFFIX = ".output";
/** The identifier rule (`ID-001`), as a regular expression. */
export const ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$";

/** The keywords a response schema may use (`TOOL-022`), in the spec's order. */
export const RESPONSE_SCHEMA_KEYWORDS = [
  "type",
  "properties",
  "required",
  "enum",
  "items",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "additionalProperties",
  "title",
  "description"
] as const;
/** The JSON Schema type names a response schema's `type` may list. */
export const RESPONSE_SCHEMA_TYPES = [
  "null",
  "boolean",
  "object",
  "array",
  "number",
  "integer",
  "string"
] as const;
/** How deep response schemas nest (`properties`, `items`, `additionalProperties`), at most. */
export const RESPONSE_SCHEMA_MAX_DEPTH = 16;

/** Close codes by name (`spec/transport.md#close-codes`). */
export const CLOSE_CODES = {
  "normal": 1000,
  "going_away": 1001,
  "protocol_error": 1002,
  "invalid_payload": 1007,
  "policy_violation": 1008,
  "message_too_big": 1009,
  "session_taken_over": 4001,
  "unsupported_version": 4002,
  "session_detached": 4003,
  "send_queue_overflow": 4008
} as const;
/** The close code that follows each fatal error code (`TRANSPORT-008`); the other codes are not fatal. */
export const FATAL_CLOSE_CODES = {
  "unsupported_version": 4002,
  "session_taken_over": 4001,
  "session_detached": 4003
} as const satisfies { readonly [C in ErrorCode]?: number };
/** Every error code with whether it is fatal, its close code and the minor that added it (`spec/errors.md#codes`). */
export const ERROR_CODE_FACTS = [
  {
    "code": "malformed_frame",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "binary_frame",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "unknown_type",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "invalid_frame",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "frame_too_large",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "hello_required",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "already_open",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "unsupported_version",
    "fatal": true,
    "close_code": 4002,
    "since": "1.0"
  },
  {
    "code": "resume_rejected",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "resume_cursor_ahead",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "script_not_allowed",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "invalid_script",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "duplicate_message",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "run_in_progress",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "unknown_tool_call",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "tool_call_settled",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "tool_call_not_awaiting",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "unknown_invocation",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "session_taken_over",
    "fatal": true,
    "close_code": 4001,
    "since": "1.0"
  },
  {
    "code": "internal_error",
    "fatal": false,
    "close_code": null,
    "since": "1.0"
  },
  {
    "code": "capability_not_offered",
    "fatal": false,
    "close_code": null,
    "since": "1.1"
  },
  {
    "code": "unknown_item",
    "fatal": false,
    "close_code": null,
    "since": "1.1"
  },
  {
    "code": "item_not_in_latest_turn",
    "fatal": false,
    "close_code": null,
    "since": "1.1"
  },
  {
    "code": "retry_keeps_open_call",
    "fatal": false,
    "close_code": null,
    "since": "1.1"
  },
  {
    "code": "run_not_active",
    "fatal": false,
    "close_code": null,
    "since": "1.2"
  },
  {
    "code": "response_invalid",
    "fatal": false,
    "close_code": null,
    "since": "1.2"
  },
  {
    "code": "session_detached",
    "fatal": true,
    "close_code": 4003,
    "since": "1.2"
  },
  {
    "code": "stale_cursor",
    "fatal": false,
    "close_code": null,
    "since": "1.2"
  }
] as const satisfies readonly { readonly code: ErrorCode; readonly fatal: boolean; readonly close_code: number | null; readonly since: string }[];
/** The order of a client frame's checks: the first failing one names the error (`spec/errors.md#codes`). */
export const ERROR_ORDER = {
  "frame_checks": [
    "binary_frame",
    "frame_too_large",
    "malformed_frame",
    "unknown_type",
    "invalid_frame",
    "hello_required",
    "already_open"
  ],
  "own_checks": {
    "session.hello": [
      "unsupported_version",
      "script_not_allowed",
      "invalid_script",
      "resume_rejected",
      "resume_cursor_ahead"
    ],
    "chat.user_message": [
      "duplicate_message",
      "run_in_progress"
    ],
    "chat.tool_call_response": [
      "unknown_tool_call",
      "tool_call_settled",
      "tool_call_not_awaiting",
      "response_invalid"
    ],
    "chat.retry": [
      "capability_not_offered",
      "run_in_progress",
      "unknown_item",
      "item_not_in_latest_turn",
      "retry_keeps_open_call"
    ],
    "chat.cancel": [
      "capability_not_offered",
      "unknown_invocation",
      "run_not_active"
    ],
    "chat.history_request": [
      "capability_not_offered",
      "stale_cursor"
    ]
  }
} as const satisfies { readonly frame_checks: readonly ErrorCode[]; readonly own_checks: { readonly [T in ClientFrameType]?: readonly ErrorCode[] } };

/** The server frames that are events for the reducer, in schema order (`spec/ui-state.md#events`). */
export const EVENT_TYPES = [
  "chat.user_message_accepted",
  "chat.run_started",
  "chat.assistant_message",
  "chat.assistant_message_delta",
  "chat.tool_call",
  "chat.tool_progress",
  "chat.tool_output",
  "chat.tool_call_complete",
  "chat.tool_call_dismiss",
  "chat.run_complete",
  "chat.rewind_complete",
  "chat.retry_accepted",
  "chat.reasoning_delta",
  "chat.reasoning",
  "chat.subagent_started",
  "chat.subagent_complete"
] as const satisfies readonly ServerFrameType[];
/** The server frame types that answer each client frame when it is accepted; an `error` answers any it refuses (`ERROR-004`). */
export const ANSWERED_BY = {
  "session.hello": [
    "session.welcome"
  ],
  "chat.user_message": [
    "chat.user_message_accepted"
  ],
  "chat.tool_call_response": [
    "chat.tool_call_complete",
    "chat.tool_call_dismiss"
  ],
  "chat.rewind": [
    "chat.rewind_complete"
  ],
  "chat.retry": [
    "chat.retry_accepted"
  ],
  "chat.cancel": [
    "chat.cancel_accepted"
  ],
  "chat.history_request": [
    "chat.history_page"
  ]
} as const satisfies { readonly [T in ClientFrameType]: readonly ServerFrameType[] };
/** Per server frame type: the minor that added it, whether it carries a state, whether it is an event, whether it answers a client frame (`always`, `sometimes`, `never`), the ids it introduces (`ID-002`) and the members later minors added. */
export const SERVER_FRAME_FACTS = {
  "session.welcome": {
    "since": "1.0",
    "carries_state": false,
    "event": false,
    "answer": "always",
    "introduces": [],
    "members_since": {
      "limits.max_attached_connections": "1.2",
      "features": "1.1",
      "resume_retention": "1.1"
    }
  },
  "ui_state_snapshot": {
    "since": "1.0",
    "carries_state": true,
    "event": false,
    "answer": "never",
    "introduces": [],
    "members_since": {
      "state.items[].streaming": "1.1",
      "state.items[].response_schema": "1.2",
      "state.items[].subagent": "1.3",
      "state.usage": "1.3",
      "state.usage.total": "1.3",
      "window": "1.2"
    }
  },
  "ui_state_updated": {
    "since": "1.0",
    "carries_state": true,
    "event": false,
    "answer": "never",
    "introduces": [],
    "members_since": {
      "state.items[].streaming": "1.1",
      "state.items[].response_schema": "1.2",
      "state.items[].subagent": "1.3",
      "state.usage": "1.3",
      "state.usage.total": "1.3"
    }
  },
  "ui_state_patch": {
    "since": "1.1",
    "carries_state": true,
    "event": false,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "chat.user_message_accepted": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "always",
    "introduces": [
      {
        "kind": "invocation",
        "member": "invocation_id",
        "rule": "always"
      },
      {
        "kind": "item",
        "member": "item_id",
        "rule": "always"
      }
    ],
    "members_since": {}
  },
  "chat.run_started": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "chat.assistant_message": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [
      {
        "kind": "item",
        "member": "item_id",
        "rule": "unless_open_stream"
      }
    ],
    "members_since": {
      "parent_call_id": "1.3"
    }
  },
  "chat.assistant_message_delta": {
    "since": "1.1",
    "carries_state": true,
    "event": true,
    "answer": "never",
    "introduces": [
      {
        "kind": "item",
        "member": "item_id",
        "rule": "unless_held"
      }
    ],
    "members_since": {
      "parent_call_id": "1.3"
    }
  },
  "chat.tool_call": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [
      {
        "kind": "tool_call",
        "member": "tool_call_id",
        "rule": "always"
      }
    ],
    "members_since": {
      "parent_call_id": "1.3",
      "response_schema": "1.2"
    }
  },
  "chat.tool_progress": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "chat.tool_output": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "chat.tool_call_complete": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "sometimes",
    "introduces": [],
    "members_since": {}
  },
  "chat.tool_call_dismiss": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "sometimes",
    "introduces": [],
    "members_since": {}
  },
  "chat.run_complete": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {
      "usage": "1.3"
    }
  },
  "chat.rewind_complete": {
    "since": "1.0",
    "carries_state": false,
    "event": true,
    "answer": "always",
    "introduces": [],
    "members_since": {}
  },
  "chat.retry_accepted": {
    "since": "1.1",
    "carries_state": false,
    "event": true,
    "answer": "always",
    "introduces": [],
    "members_since": {}
  },
  "chat.cancel_accepted": {
    "since": "1.2",
    "carries_state": false,
    "event": false,
    "answer": "always",
    "introduces": [],
    "members_since": {}
  },
  "chat.history_page": {
    "since": "1.2",
    "carries_state": false,
    "event": false,
    "answer": "always",
    "introduces": [],
    "members_since": {
      "tool_call_id": "1.3",
      "items[].subagent": "1.3"
    }
  },
  "chat.reasoning_delta": {
    "since": "1.3",
    "carries_state": true,
    "event": true,
    "answer": "never",
    "introduces": [
      {
        "kind": "item",
        "member": "item_id",
        "rule": "unless_held"
      }
    ],
    "members_since": {}
  },
  "chat.reasoning": {
    "since": "1.3",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [
      {
        "kind": "item",
        "member": "item_id",
        "rule": "unless_open_stream"
      }
    ],
    "members_since": {}
  },
  "chat.subagent_started": {
    "since": "1.3",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "chat.subagent_complete": {
    "since": "1.3",
    "carries_state": false,
    "event": true,
    "answer": "never",
    "introduces": [],
    "members_since": {}
  },
  "error": {
    "since": "1.0",
    "carries_state": false,
    "event": false,
    "answer": "sometimes",
    "introduces": [],
    "members_since": {}
  }
} as const satisfies { readonly [T in ServerFrameType]: ServerFrameFacts };
/** Per client frame type: the minor that added it, what answers it, the call, item or invocation member it names, and the members later minors added. */
export const CLIENT_FRAME_FACTS = {
  "session.hello": {
    "since": "1.0",
    "answered_by": [
      "session.welcome"
    ],
    "names": null,
    "members_since": {
      "resume.before": "1.2",
      "script.turns[].steps[].chunks": "1.1",
      "script.turns[].steps[].chunk_delay_ms": "1.1",
      "script.turns[].steps[].calls[].response_schema": "1.2",
      "script.turns[].steps[].calls[].subagent": "1.3",
      "script.turns[].retries": "1.1",
      "script.turns[].retries[].steps[].chunks": "1.1",
      "script.turns[].retries[].steps[].chunk_delay_ms": "1.1",
      "script.turns[].retries[].steps[].calls[].response_schema": "1.2",
      "script.turns[].retries[].steps[].calls[].subagent": "1.3",
      "features": "1.1",
      "window": "1.2"
    }
  },
  "chat.user_message": {
    "since": "1.0",
    "answered_by": [
      "chat.user_message_accepted"
    ],
    "names": null,
    "members_since": {}
  },
  "chat.tool_call_response": {
    "since": "1.0",
    "answered_by": [
      "chat.tool_call_complete",
      "chat.tool_call_dismiss"
    ],
    "names": {
      "kind": "tool_call",
      "member": "tool_call_id"
    },
    "members_since": {}
  },
  "chat.rewind": {
    "since": "1.0",
    "answered_by": [
      "chat.rewind_complete"
    ],
    "names": {
      "kind": "invocation",
      "member": "before_invocation_id"
    },
    "members_since": {}
  },
  "chat.retry": {
    "since": "1.1",
    "answered_by": [
      "chat.retry_accepted"
    ],
    "names": {
      "kind": "item",
      "member": "after_item_id"
    },
    "members_since": {}
  },
  "chat.cancel": {
    "since": "1.2",
    "answered_by": [
      "chat.cancel_accepted"
    ],
    "names": {
      "kind": "invocation",
      "member": "invocation_id"
    },
    "members_since": {}
  },
  "chat.history_request": {
    "since": "1.2",
    "answered_by": [
      "chat.history_page"
    ],
    "names": {
      "kind": "item",
      "member": "before"
    },
    "members_since": {
      "tool_call_id": "1.3"
    }
  }
} as const satisfies { readonly [T in ClientFrameType]: ClientFrameFacts };
/** The reducer's refusals: the Rust variant's name (`ReduceError::kind`) and the rule it reports (spec/ui-state.md#refusals). */
export const REDUCE_REFUSALS = {
  "DuplicateItemId": "STATE-020",
  "InvocationReused": "STATE-021",
  "NotInRun": "STATE-022",
  "RunInProgress": "STATE-023",
  "UnknownInvocation": "STATE-024",
  "UnknownToolCall": "STATE-025",
  "AlreadySettled": "STATE-026",
  "NotRunning": "STATE-027",
  "NotAwaiting": "STATE-028",
  "CorrMismatch": "STATE-029",
  "NothingAwaited": "STATE-030",
  "OpenToolCalls": "STATE-031",
  "OpenToolCallsAtNewTurn": "STATE-032",
  "RewindMismatch": "STATE-033",
  "OutputIdTooLong": "STATE-015",
  "StaleInvocation": "STATE-034",
  "MissingComponentType": "STATE-035",
  "NotStreaming": "STATE-045",
  "StreamOpen": "STATE-046",
  "StreamTextMismatch": "STATE-047",
  "UnknownItem": "STATE-048",
  "NotInLatestTurn": "STATE-049",
  "OpenCallKept": "STATE-050",
  "RetryMismatch": "STATE-051",
  "NotReasoningStream": "STATE-058",
  "UsageCurrencyMismatch": "STATE-059",
  "ReasoningStreamOpen": "STATE-060",
  "ReasoningTextMismatch": "STATE-061",
  "RedactedWithText": "STATE-062",
  "UsageOverflow": "STATE-063",
  "NotSubagentHost": "STATE-068",
  "SubagentTooDeep": "STATE-069",
  "ThreadMismatch": "STATE-070",
  "SubagentNotRunning": "STATE-071",
  "SubagentBusy": "STATE-072",
  "SubagentRunning": "STATE-073",
  "OutputOfHost": "STATE-074",
  "ReturnedNotCompleted": "STATE-075"
} as const;
/** The members of the UiState later minors added, by path, with that minor. */
export const UI_STATE_MEMBERS_SINCE = {
  "items[].streaming": "1.1",
  "items[].response_schema": "1.2",
  "items[].subagent": "1.3",
  "usage": "1.3",
  "usage.total": "1.3"
} as const;

/** Every capability with the minor that defines it and whether it is a feature (in force only where negotiated, `SESSION-012`). */
export const CAPABILITY_FACTS = [
  {
    "name": "rewind",
    "since": "1.0",
    "feature": false
  },
  {
    "name": "tool_output",
    "since": "1.0",
    "feature": false
  },
  {
    "name": "tool_expiry",
    "since": "1.0",
    "feature": false
  },
  {
    "name": "conformance_script",
    "since": "1.0",
    "feature": false
  },
  {
    "name": "restart_durability",
    "since": "1.0",
    "feature": false
  },
  {
    "name": "ui_state_patch",
    "since": "1.1",
    "feature": true
  },
  {
    "name": "resume_catch_up",
    "since": "1.1",
    "feature": true
  },
  {
    "name": "assistant_stream",
    "since": "1.1",
    "feature": true
  },
  {
    "name": "retry",
    "since": "1.1",
    "feature": false
  },
  {
    "name": "cancel",
    "since": "1.2",
    "feature": false
  },
  {
    "name": "multi_attach",
    "since": "1.2",
    "feature": true
  },
  {
    "name": "state_window",
    "since": "1.2",
    "feature": true
  },
  {
    "name": "reasoning",
    "since": "1.3",
    "feature": true
  },
  {
    "name": "usage",
    "since": "1.3",
    "feature": true
  },
  {
    "name": "subagents",
    "since": "1.3",
    "feature": true
  }
] as const satisfies readonly { readonly name: Capability; readonly since: string; readonly feature: boolean }[];
/** Per supported version, oldest first: the frame types, capabilities, features and error codes a connection that negotiated it may see (`COMPAT-005`). */
export const VERSION_FACTS = {
  "1.0": {
    "client_frames": [
      "session.hello",
      "chat.user_message",
      "chat.tool_call_response",
      "chat.rewind"
    ],
    "server_frames": [
      "session.welcome",
      "ui_state_snapshot",
      "ui_state_updated",
      "chat.user_message_accepted",
      "chat.run_started",
      "chat.assistant_message",
      "chat.tool_call",
      "chat.tool_progress",
      "chat.tool_output",
      "chat.tool_call_complete",
      "chat.tool_call_dismiss",
      "chat.run_complete",
      "chat.rewind_complete",
      "error"
    ],
    "capabilities": [
      "rewind",
      "tool_output",
      "tool_expiry",
      "conformance_script",
      "restart_durability"
    ],
    "features": [],
    "error_codes": [
      "malformed_frame",
      "binary_frame",
      "unknown_type",
      "invalid_frame",
      "frame_too_large",
      "hello_required",
      "already_open",
      "unsupported_version",
      "resume_rejected",
      "resume_cursor_ahead",
      "script_not_allowed",
      "invalid_script",
      "duplicate_message",
      "run_in_progress",
      "unknown_tool_call",
      "tool_call_settled",
      "tool_call_not_awaiting",
      "unknown_invocation",
      "session_taken_over",
      "internal_error"
    ]
  },
  "1.1": {
    "client_frames": [
      "session.hello",
      "chat.user_message",
      "chat.tool_call_response",
      "chat.rewind",
      "chat.retry"
    ],
    "server_frames": [
      "session.welcome",
      "ui_state_snapshot",
      "ui_state_updated",
      "ui_state_patch",
      "chat.user_message_accepted",
      "chat.run_started",
      "chat.assistant_message",
      "chat.assistant_message_delta",
      "chat.tool_call",
      "chat.tool_progress",
      "chat.tool_output",
      "chat.tool_call_complete",
      "chat.tool_call_dismiss",
      "chat.run_complete",
      "chat.rewind_complete",
      "chat.retry_accepted",
      "error"
    ],
    "capabilities": [
      "rewind",
      "tool_output",
      "tool_expiry",
      "conformance_script",
      "restart_durability",
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream",
      "retry"
    ],
    "features": [
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream"
    ],
    "error_codes": [
      "malformed_frame",
      "binary_frame",
      "unknown_type",
      "invalid_frame",
      "frame_too_large",
      "hello_required",
      "already_open",
      "unsupported_version",
      "resume_rejected",
      "resume_cursor_ahead",
      "script_not_allowed",
      "invalid_script",
      "duplicate_message",
      "run_in_progress",
      "unknown_tool_call",
      "tool_call_settled",
      "tool_call_not_awaiting",
      "unknown_invocation",
      "session_taken_over",
      "internal_error",
      "capability_not_offered",
      "unknown_item",
      "item_not_in_latest_turn",
      "retry_keeps_open_call"
    ]
  },
  "1.2": {
    "client_frames": [
      "session.hello",
      "chat.user_message",
      "chat.tool_call_response",
      "chat.rewind",
      "chat.retry",
      "chat.cancel",
      "chat.history_request"
    ],
    "server_frames": [
      "session.welcome",
      "ui_state_snapshot",
      "ui_state_updated",
      "ui_state_patch",
      "chat.user_message_accepted",
      "chat.run_started",
      "chat.assistant_message",
      "chat.assistant_message_delta",
      "chat.tool_call",
      "chat.tool_progress",
      "chat.tool_output",
      "chat.tool_call_complete",
      "chat.tool_call_dismiss",
      "chat.run_complete",
      "chat.rewind_complete",
      "chat.retry_accepted",
      "chat.cancel_accepted",
      "chat.history_page",
      "error"
    ],
    "capabilities": [
      "rewind",
      "tool_output",
      "tool_expiry",
      "conformance_script",
      "restart_durability",
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream",
      "retry",
      "cancel",
      "multi_attach",
      "state_window"
    ],
    "features": [
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream",
      "multi_attach",
      "state_window"
    ],
    "error_codes": [
      "malformed_frame",
      "binary_frame",
      "unknown_type",
      "invalid_frame",
      "frame_too_large",
      "hello_required",
      "already_open",
      "unsupported_version",
      "resume_rejected",
      "resume_cursor_ahead",
      "script_not_allowed",
      "invalid_script",
      "duplicate_message",
      "run_in_progress",
      "unknown_tool_call",
      "tool_call_settled",
      "tool_call_not_awaiting",
      "unknown_invocation",
      "session_taken_over",
      "internal_error",
      "capability_not_offered",
      "unknown_item",
      "item_not_in_latest_turn",
      "retry_keeps_open_call",
      "run_not_active",
      "response_invalid",
      "session_detached",
      "stale_cursor"
    ]
  },
  "1.3": {
    "client_frames": [
      "session.hello",
      "chat.user_message",
      "chat.tool_call_response",
      "chat.rewind",
      "chat.retry",
      "chat.cancel",
      "chat.history_request"
    ],
    "server_frames": [
      "session.welcome",
      "ui_state_snapshot",
      "ui_state_updated",
      "ui_state_patch",
      "chat.user_message_accepted",
      "chat.run_started",
      "chat.assistant_message",
      "chat.assistant_message_delta",
      "chat.tool_call",
      "chat.tool_progress",
      "chat.tool_output",
      "chat.tool_call_complete",
      "chat.tool_call_dismiss",
      "chat.run_complete",
      "chat.rewind_complete",
      "chat.retry_accepted",
      "chat.cancel_accepted",
      "chat.history_page",
      "chat.reasoning_delta",
      "chat.reasoning",
      "chat.subagent_started",
      "chat.subagent_complete",
      "error"
    ],
    "capabilities": [
      "rewind",
      "tool_output",
      "tool_expiry",
      "conformance_script",
      "restart_durability",
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream",
      "retry",
      "cancel",
      "multi_attach",
      "state_window",
      "reasoning",
      "usage",
      "subagents"
    ],
    "features": [
      "ui_state_patch",
      "resume_catch_up",
      "assistant_stream",
      "multi_attach",
      "state_window",
      "reasoning",
      "usage",
      "subagents"
    ],
    "error_codes": [
      "malformed_frame",
      "binary_frame",
      "unknown_type",
      "invalid_frame",
      "frame_too_large",
      "hello_required",
      "already_open",
      "unsupported_version",
      "resume_rejected",
      "resume_cursor_ahead",
      "script_not_allowed",
      "invalid_script",
      "duplicate_message",
      "run_in_progress",
      "unknown_tool_call",
      "tool_call_settled",
      "tool_call_not_awaiting",
      "unknown_invocation",
      "session_taken_over",
      "internal_error",
      "capability_not_offered",
      "unknown_item",
      "item_not_in_latest_turn",
      "retry_keeps_open_call",
      "run_not_active",
      "response_invalid",
      "session_detached",
      "stale_cursor"
    ]
  }
} as const satisfies { readonly [version: string]: VersionFacts };

/** A kind of id a session keeps unique (`ID-002`). */
export type IdKind = "invocation" | "item" | "tool_call";

/** What {@link SERVER_FRAME_FACTS} states of one server frame type. */
export interface ServerFrameFacts {
  readonly since: string;
  readonly carries_state: boolean;
  readonly event: boolean;
  readonly answer: "always" | "sometimes" | "never";
  /** `unless_open_stream`: not new when it ends the open stream; `unless_held`: new only when the state holds no such item. */
  readonly introduces: readonly { readonly kind: IdKind; readonly member: string; readonly rule: "always" | "unless_open_stream" | "unless_held" }[];
  readonly members_since: { readonly [path: string]: string };
}

/** What {@link CLIENT_FRAME_FACTS} states of one client frame type. */
export interface ClientFrameFacts {
  readonly since: string;
  readonly answered_by: readonly ServerFrameType[];
  readonly names: { readonly kind: IdKind; readonly member: string } | null;
  readonly members_since: { readonly [path: string]: string };
}

/** What {@link VERSION_FACTS} states of one version. */
export interface VersionFacts {
  readonly client_frames: readonly ClientFrameType[];
  readonly server_frames: readonly ServerFrameType[];
  readonly capabilities: readonly Capability[];
  readonly features: readonly Capability[];
  readonly error_codes: readonly ErrorCode[];
}
