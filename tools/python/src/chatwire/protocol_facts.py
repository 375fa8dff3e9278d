"""Protocol facts as chatwire-schema states them, typed.

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


#: The protocol version this package describes (`MAJOR.MINOR`).
PROTOCOL_VERSION: Final[str] = '1.3'
#: Every protocol version the crate speaks, newest first (SESSION-003).
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (
    '1.3',
    '1.2',
    '1.1',
    '1.0',
)
#: The released minors, oldest first; their schemas never change (COMPAT-012).
RELEASED_VERSIONS: Final[tuple[str, ...]] = (
    '1.0',
    '1.1',
    '1.2',
)
#: The WebSocket subprotocol (TRANSPORT-003).
SUBPROTOCOL: Final[str] = 'chatwire.v1'
#: The `v` of every UiState frame.
UI_STATE_VERSION: Final[str] = 'ui_state_v1'
#: The `limits.max_frame_bytes` a server should announce (TRANSPORT-013).
DEFAULT_MAX_FRAME_BYTES: Final[int] = 1048576
#: The smallest `limits.max_frame_bytes` a server may announce (TRANSPORT-005).
MIN_MAX_FRAME_BYTES: Final[int] = 65536
#: Above this many times `max_frame_bytes` a server may close with 1009 unread (TRANSPORT-007).
HARD_CAP_FACTOR: Final[int] = 16
#: After this many `resume_rejected` on one connection a server closes it with 1008 (RESUME-013).
REFUSED_RESUMES_PER_CONNECTION: Final[int] = 8
#: The most bytes of frames a server holds for a connection that has not taken them (TRANSPORT-016).
SEND_QUEUE_MAX_BYTES: Final[int] = 16777216
#: The fewest connections a `multi_attach` server keeps attached to one session (ATTACH-003).
MIN_ATTACHED_CONNECTIONS: Final[int] = 8
#: The largest `window` a `session.hello` may ask for (WINDOW-001).
MAX_WINDOW_ITEMS: Final[int] = 1000
#: The largest `limit` of a `chat.history_request` (WINDOW-007).
MAX_HISTORY_PAGE_ITEMS: Final[int] = 500
#: The largest integer on the wire (INT-001).
MAX_SAFE_INTEGER: Final[int] = 9007199254740991
#: Longest `wait` / `run_ms` of a script, in milliseconds.
MAX_SCRIPT_DELAY_MS: Final[int] = 60000
#: Longest `expire_after_ms` of a script.
MAX_EXPIRY_MS: Final[int] = 600000
#: Most `chunks` of one scripted say.
MAX_SAY_CHUNKS: Final[int] = 1000
#: How deep a sub-agent may run: a top-level call's at depth 1 (STATE-069, since 1.3).
MAX_SUBAGENT_DEPTH: Final[int] = 4
#: What turns a `tool_call_id` into the id of its `tool_output` item (STATE-015).
OUTPUT_ID_SUFFIX: Final[str] = '.output'
#: The identifier rule (ID-001), as a regular expression.
ID_PATTERN: Final[str] = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'
#: The server frames that are events for the reducer, in schema order.
EVENT_TYPES: Final[tuple[str, ...]] = (
    'chat.user_message_accepted',
    'chat.run_started',
    'chat.assistant_message',
    'chat.assistant_message_delta',
    'chat.tool_call',
    'chat.tool_progress',
    'chat.tool_output',
    'chat.tool_call_complete',
    'chat.tool_call_dismiss',
    'chat.run_complete',
    'chat.rewind_complete',
    'chat.retry_accepted',
    'chat.reasoning_delta',
    'chat.reasoning',
    'chat.subagent_started',
    'chat.subagent_complete',
)
#: The keywords a response schema may use (TOOL-022), in the spec's order.
RESPONSE_SCHEMA_KEYWORDS: Final[tuple[str, ...]] = (
    'type',
    'properties',
    'required',
    'enum',
    'items',
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'additionalProperties',
    'title',
    'description',
)
#: The JSON Schema type names a response schema's `type` may list.
RESPONSE_SCHEMA_TYPES: Final[tuple[str, ...]] = (
    'null',
    'boolean',
    'object',
    'array',
    'number',
    'integer',
    'string',
)
#: How deep response schemas nest, at most.
RESPONSE_SCHEMA_MAX_DEPTH: Final[int] = 16
#: Close codes by name (`going_away`: 1001, `session_taken_over`: 4001, ...).
CLOSE_CODES: Final[dict[str, int]] = {
    'normal': 1000,
    'going_away': 1001,
    'protocol_error': 1002,
    'invalid_payload': 1007,
    'policy_violation': 1008,
    'message_too_big': 1009,
    'session_taken_over': 4001,
    'unsupported_version': 4002,
    'session_detached': 4003,
    'send_queue_overflow': 4008,
}
#: Every error code of the closed list (spec/errors.md#codes), with its facts.
ERROR_CODE_FACTS: Final[tuple[ErrorCodeFact, ...]] = (
    ErrorCodeFact('malformed_frame', False, None, '1.0'),
    ErrorCodeFact('binary_frame', False, None, '1.0'),
    ErrorCodeFact('unknown_type', False, None, '1.0'),
    ErrorCodeFact('invalid_frame', False, None, '1.0'),
    ErrorCodeFact('frame_too_large', False, None, '1.0'),
    ErrorCodeFact('hello_required', False, None, '1.0'),
    ErrorCodeFact('already_open', False, None, '1.0'),
    ErrorCodeFact('unsupported_version', True, 4002, '1.0'),
    ErrorCodeFact('resume_rejected', False, None, '1.0'),
    ErrorCodeFact('resume_cursor_ahead', False, None, '1.0'),
    ErrorCodeFact('script_not_allowed', False, None, '1.0'),
    ErrorCodeFact('invalid_script', False, None, '1.0'),
    ErrorCodeFact('duplicate_message', False, None, '1.0'),
    ErrorCodeFact('run_in_progress', False, None, '1.0'),
    ErrorCodeFact('unknown_tool_call', False, None, '1.0'),
    ErrorCodeFact('tool_call_settled', False, None, '1.0'),
    ErrorCodeFact('tool_call_not_awaiting', False, None, '1.0'),
    ErrorCodeFact('unknown_invocation', False, None, '1.0'),
    ErrorCodeFact('session_taken_over', True, 4001, '1.0'),
    ErrorCodeFact('internal_error', False, None, '1.0'),
    ErrorCodeFact('capability_not_offered', False, None, '1.1'),
    ErrorCodeFact('unknown_item', False, None, '1.1'),
    ErrorCodeFact('item_not_in_latest_turn', False, None, '1.1'),
    ErrorCodeFact('retry_keeps_open_call', False, None, '1.1'),
    ErrorCodeFact('run_not_active', False, None, '1.2'),
    ErrorCodeFact('response_invalid', False, None, '1.2'),
    ErrorCodeFact('session_detached', True, 4003, '1.2'),
    ErrorCodeFact('stale_cursor', False, None, '1.2'),
)
#: The checks every client frame goes through, first to last (spec/errors.md#codes).
FRAME_CHECKS: Final[tuple[str, ...]] = (
    'binary_frame',
    'frame_too_large',
    'malformed_frame',
    'unknown_type',
    'invalid_frame',
    'hello_required',
    'already_open',
)
#: The ordered own checks of the client frame types that have them (TURN-006, RESUME-016).
OWN_CHECKS: Final[dict[str, tuple[str, ...]]] = {
    'session.hello': ('unsupported_version', 'script_not_allowed', 'invalid_script', 'resume_rejected', 'resume_cursor_ahead'),
    'chat.user_message': ('duplicate_message', 'run_in_progress'),
    'chat.tool_call_response': ('unknown_tool_call', 'tool_call_settled', 'tool_call_not_awaiting', 'response_invalid'),
    'chat.retry': ('capability_not_offered', 'run_in_progress', 'unknown_item', 'item_not_in_latest_turn', 'retry_keeps_open_call'),
    'chat.cancel': ('capability_not_offered', 'unknown_invocation', 'run_not_active'),
    'chat.history_request': ('capability_not_offered', 'stale_cursor'),
}
#: The reducer's refusals: the Rust variant's name and the rule it reports.
REDUCE_REFUSALS: Final[dict[str, str]] = {
    'DuplicateItemId': 'STATE-020',
    'InvocationReused': 'STATE-021',
    'NotInRun': 'STATE-022',
    'RunInProgress': 'STATE-023',
    'UnknownInvocation': 'STATE-024',
    'UnknownToolCall': 'STATE-025',
    'AlreadySettled': 'STATE-026',
    'NotRunning': 'STATE-027',
    'NotAwaiting': 'STATE-028',
    'CorrMismatch': 'STATE-029',
    'NothingAwaited': 'STATE-030',
    'OpenToolCalls': 'STATE-031',
    'OpenToolCallsAtNewTurn': 'STATE-032',
    'RewindMismatch': 'STATE-033',
    'OutputIdTooLong': 'STATE-015',
    'StaleInvocation': 'STATE-034',
    'MissingComponentType': 'STATE-035',
    'NotStreaming': 'STATE-045',
    'StreamOpen': 'STATE-046',
    'StreamTextMismatch': 'STATE-047',
    'UnknownItem': 'STATE-048',
    'NotInLatestTurn': 'STATE-049',
    'OpenCallKept': 'STATE-050',
    'RetryMismatch': 'STATE-051',
    'NotReasoningStream': 'STATE-058',
    'UsageCurrencyMismatch': 'STATE-059',
    'ReasoningStreamOpen': 'STATE-060',
    'ReasoningTextMismatch': 'STATE-061',
    'RedactedWithText': 'STATE-062',
    'UsageOverflow': 'STATE-063',
    'NotSubagentHost': 'STATE-068',
    'SubagentTooDeep': 'STATE-069',
    'ThreadMismatch': 'STATE-070',
    'SubagentNotRunning': 'STATE-071',
    'SubagentBusy': 'STATE-072',
    'SubagentRunning': 'STATE-073',
    'OutputOfHost': 'STATE-074',
    'ReturnedNotCompleted': 'STATE-075',
}
#: Every capability, with the minor that defines it and whether it is a feature.
CAPABILITY_FACTS: Final[tuple[CapabilityFact, ...]] = (
    CapabilityFact('rewind', '1.0', False),
    CapabilityFact('tool_output', '1.0', False),
    CapabilityFact('tool_expiry', '1.0', False),
    CapabilityFact('conformance_script', '1.0', False),
    CapabilityFact('restart_durability', '1.0', False),
    CapabilityFact('ui_state_patch', '1.1', True),
    CapabilityFact('resume_catch_up', '1.1', True),
    CapabilityFact('assistant_stream', '1.1', True),
    CapabilityFact('retry', '1.1', False),
    CapabilityFact('cancel', '1.2', False),
    CapabilityFact('multi_attach', '1.2', True),
    CapabilityFact('state_window', '1.2', True),
    CapabilityFact('reasoning', '1.3', True),
    CapabilityFact('usage', '1.3', True),
    CapabilityFact('subagents', '1.3', True),
)
#: The server frame types that answer each client frame when it is accepted (ERROR-004: an error answers a refusal).
ANSWERED_BY: Final[dict[str, tuple[str, ...]]] = {
    'session.hello': ('session.welcome',),
    'chat.user_message': ('chat.user_message_accepted',),
    'chat.tool_call_response': ('chat.tool_call_complete', 'chat.tool_call_dismiss'),
    'chat.rewind': ('chat.rewind_complete',),
    'chat.retry': ('chat.retry_accepted',),
    'chat.cancel': ('chat.cancel_accepted',),
    'chat.history_request': ('chat.history_page',),
}
#: Per server frame type, what its frames share.
SERVER_FRAME_FACTS: Final[dict[str, ServerFrameFacts]] = {
    'session.welcome': ServerFrameFacts(since='1.0', carries_state=False, event=False, answer='always', introduces=(), members_since={
        'limits.max_attached_connections': '1.2',
        'features': '1.1',
        'resume_retention': '1.1',
    }),
    'ui_state_snapshot': ServerFrameFacts(since='1.0', carries_state=True, event=False, answer='never', introduces=(), members_since={
        'state.items[].streaming': '1.1',
        'state.items[].response_schema': '1.2',
        'state.items[].subagent': '1.3',
        'state.usage': '1.3',
        'state.usage.total': '1.3',
        'window': '1.2',
    }),
    'ui_state_updated': ServerFrameFacts(since='1.0', carries_state=True, event=False, answer='never', introduces=(), members_since={
        'state.items[].streaming': '1.1',
        'state.items[].response_schema': '1.2',
        'state.items[].subagent': '1.3',
        'state.usage': '1.3',
        'state.usage.total': '1.3',
    }),
    'ui_state_patch': ServerFrameFacts(since='1.1', carries_state=True, event=False, answer='never', introduces=(), members_since={}),
    'chat.user_message_accepted': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='always', introduces=(IdSlot('invocation', 'invocation_id', 'always'), IdSlot('item', 'item_id', 'always')), members_since={}),
    'chat.run_started': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(), members_since={}),
    'chat.assistant_message': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(IdSlot('item', 'item_id', 'unless_open_stream'),), members_since={
        'parent_call_id': '1.3',
    }),
    'chat.assistant_message_delta': ServerFrameFacts(since='1.1', carries_state=True, event=True, answer='never', introduces=(IdSlot('item', 'item_id', 'unless_held'),), members_since={
        'parent_call_id': '1.3',
    }),
    'chat.tool_call': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(IdSlot('tool_call', 'tool_call_id', 'always'),), members_since={
        'parent_call_id': '1.3',
        'response_schema': '1.2',
    }),
    'chat.tool_progress': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(), members_since={}),
    'chat.tool_output': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(), members_since={}),
    'chat.tool_call_complete': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='sometimes', introduces=(), members_since={}),
    'chat.tool_call_dismiss': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='sometimes', introduces=(), members_since={}),
    'chat.run_complete': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='never', introduces=(), members_since={
        'usage': '1.3',
    }),
    'chat.rewind_complete': ServerFrameFacts(since='1.0', carries_state=False, event=True, answer='always', introduces=(), members_since={}),
    'chat.retry_accepted': ServerFrameFacts(since='1.1', carries_state=False, event=True, answer='always', introduces=(), members_since={}),
    'chat.cancel_accepted': ServerFrameFacts(since='1.2', carries_state=False, event=False, answer='always', introduces=(), members_since={}),
    'chat.history_page': ServerFrameFacts(since='1.2', carries_state=False, event=False, answer='always', introduces=(), members_since={
        'tool_call_id': '1.3',
        'items[].subagent': '1.3',
    }),
    'chat.reasoning_delta': ServerFrameFacts(since='1.3', carries_state=True, event=True, answer='never', introduces=(IdSlot('item', 'item_id', 'unless_held'),), members_since={}),
    'chat.reasoning': ServerFrameFacts(since='1.3', carries_state=False, event=True, answer='never', introduces=(IdSlot('item', 'item_id', 'unless_open_stream'),), members_since={}),
    'chat.subagent_started': ServerFrameFacts(since='1.3', carries_state=False, event=True, answer='never', introduces=(), members_since={}),
    'chat.subagent_complete': ServerFrameFacts(since='1.3', carries_state=False, event=True, answer='never', introduces=(), members_since={}),
    'error': ServerFrameFacts(since='1.0', carries_state=False, event=False, answer='sometimes', introduces=(), members_since={}),
}
#: Per client frame type, what its frames share.
CLIENT_FRAME_FACTS: Final[dict[str, ClientFrameFacts]] = {
    'session.hello': ClientFrameFacts(since='1.0', answered_by=('session.welcome',), names=None, members_since={
        'resume.before': '1.2',
        'script.turns[].steps[].chunks': '1.1',
        'script.turns[].steps[].chunk_delay_ms': '1.1',
        'script.turns[].steps[].calls[].response_schema': '1.2',
        'script.turns[].steps[].calls[].subagent': '1.3',
        'script.turns[].retries': '1.1',
        'script.turns[].retries[].steps[].chunks': '1.1',
        'script.turns[].retries[].steps[].chunk_delay_ms': '1.1',
        'script.turns[].retries[].steps[].calls[].response_schema': '1.2',
        'script.turns[].retries[].steps[].calls[].subagent': '1.3',
        'features': '1.1',
        'window': '1.2',
    }),
    'chat.user_message': ClientFrameFacts(since='1.0', answered_by=('chat.user_message_accepted',), names=None, members_since={}),
    'chat.tool_call_response': ClientFrameFacts(since='1.0', answered_by=('chat.tool_call_complete', 'chat.tool_call_dismiss'), names=NamedId('tool_call', 'tool_call_id'), members_since={}),
    'chat.rewind': ClientFrameFacts(since='1.0', answered_by=('chat.rewind_complete',), names=NamedId('invocation', 'before_invocation_id'), members_since={}),
    'chat.retry': ClientFrameFacts(since='1.1', answered_by=('chat.retry_accepted',), names=NamedId('item', 'after_item_id'), members_since={}),
    'chat.cancel': ClientFrameFacts(since='1.2', answered_by=('chat.cancel_accepted',), names=NamedId('invocation', 'invocation_id'), members_since={}),
    'chat.history_request': ClientFrameFacts(since='1.2', answered_by=('chat.history_page',), names=NamedId('item', 'before'), members_since={
        'tool_call_id': '1.3',
    }),
}
#: Each display item kind's members, in the order the crate serializes them (patch member ops follow it).
ITEM_MEMBERS: Final[dict[str, tuple[str, ...]]] = {
    'user_message': ('kind', 'id', 'invocation_id', 'client_message_id', 'text', 'ts'),
    'assistant_markdown': ('kind', 'id', 'invocation_id', 'markdown', 'streaming', 'ts'),
    'tool_call': ('kind', 'id', 'invocation_id', 'tool_name', 'component_type', 'workflow_name', 'interaction_type', 'display', 'awaiting_response', 'status', 'payload', 'response_schema', 'progress', 'summary', 'result', 'error', 'dismissal', 'ts', 'settled_ts', 'subagent'),
    'tool_output': ('kind', 'id', 'invocation_id', 'tool_call_id', 'tool_name', 'command', 'approvals', 'stdout', 'stderr', 'exit_code'),
    'reasoning': ('kind', 'id', 'invocation_id', 'text', 'streaming', 'redacted', 'encrypted', 'ts'),
}
#: The UiState members later minors added, by path, with that minor.
UI_STATE_MEMBERS_SINCE: Final[dict[str, str]] = {
    'items[].streaming': '1.1',
    'items[].response_schema': '1.2',
    'items[].subagent': '1.3',
    'usage': '1.3',
    'usage.total': '1.3',
}
#: Per supported version, oldest first: what a connection that negotiated it may see.
VERSION_FACTS: Final[dict[str, VersionFacts]] = {
    '1.0': VersionFacts(
        client_frames=('session.hello', 'chat.user_message', 'chat.tool_call_response', 'chat.rewind'),
        server_frames=('session.welcome', 'ui_state_snapshot', 'ui_state_updated', 'chat.user_message_accepted', 'chat.run_started', 'chat.assistant_message', 'chat.tool_call', 'chat.tool_progress', 'chat.tool_output', 'chat.tool_call_complete', 'chat.tool_call_dismiss', 'chat.run_complete', 'chat.rewind_complete', 'error'),
        capabilities=('rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability'),
        features=(),
        error_codes=('malformed_frame', 'binary_frame', 'unknown_type', 'invalid_frame', 'frame_too_large', 'hello_required', 'already_open', 'unsupported_version', 'resume_rejected', 'resume_cursor_ahead', 'script_not_allowed', 'invalid_script', 'duplicate_message', 'run_in_progress', 'unknown_tool_call', 'tool_call_settled', 'tool_call_not_awaiting', 'unknown_invocation', 'session_taken_over', 'internal_error'),
    ),
    '1.1': VersionFacts(
        client_frames=('session.hello', 'chat.user_message', 'chat.tool_call_response', 'chat.rewind', 'chat.retry'),
        server_frames=('session.welcome', 'ui_state_snapshot', 'ui_state_updated', 'ui_state_patch', 'chat.user_message_accepted', 'chat.run_started', 'chat.assistant_message', 'chat.assistant_message_delta', 'chat.tool_call', 'chat.tool_progress', 'chat.tool_output', 'chat.tool_call_complete', 'chat.tool_call_dismiss', 'chat.run_complete', 'chat.rewind_complete', 'chat.retry_accepted', 'error'),
        capabilities=('rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability', 'ui_state_patch', 'resume_catch_up', 'assistant_stream', 'retry'),
        features=('ui_state_patch', 'resume_catch_up', 'assistant_stream'),
        error_codes=('malformed_frame', 'binary_frame', 'unknown_type', 'invalid_frame', 'frame_too_large', 'hello_required', 'already_open', 'unsupported_version', 'resume_rejected', 'resume_cursor_ahead', 'script_not_allowed', 'invalid_script', 'duplicate_message', 'run_in_progress', 'unknown_tool_call', 'tool_call_settled', 'tool_call_not_awaiting', 'unknown_invocation', 'session_taken_over', 'internal_error', 'capability_not_offered', 'unknown_item', 'item_not_in_latest_turn', 'retry_keeps_open_call'),
    ),
    '1.2': VersionFacts(
        client_frames=('session.hello', 'chat.user_message', 'chat.tool_call_response', 'chat.rewind', 'chat.retry', 'chat.cancel', 'chat.history_request'),
        server_frames=('session.welcome', 'ui_state_snapshot', 'ui_state_updated', 'ui_state_patch', 'chat.user_message_accepted', 'chat.run_started', 'chat.assistant_message', 'chat.assistant_message_delta', 'chat.tool_call', 'chat.tool_progress', 'chat.tool_output', 'chat.tool_call_complete', 'chat.tool_call_dismiss', 'chat.run_complete', 'chat.rewind_complete', 'chat.retry_accepted', 'chat.cancel_accepted', 'chat.history_page', 'error'),
        capabilities=('rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability', 'ui_state_patch', 'resume_catch_up', 'assistant_stream', 'retry', 'cancel', 'multi_attach', 'state_window'),
        features=('ui_state_patch', 'resume_catch_up', 'assistant_stream', 'multi_attach', 'state_window'),
        error_codes=('malformed_frame', 'binary_frame', 'unknown_type', 'invalid_frame', 'frame_too_large', 'hello_required', 'already_open', 'unsupported_version', 'resume_rejected', 'resume_cursor_ahead', 'script_not_allowed', 'invalid_script', 'duplicate_message', 'run_in_progress', 'unknown_tool_call', 'tool_call_settled', 'tool_call_not_awaiting', 'unknown_invocation', 'session_taken_over', 'internal_error', 'capability_not_offered', 'unknown_item', 'item_not_in_latest_turn', 'retry_keeps_open_call', 'run_not_active', 'response_invalid', 'session_detached', 'stale_cursor'),
    ),
    '1.3': VersionFacts(
        client_frames=('session.hello', 'chat.user_message', 'chat.tool_call_response', 'chat.rewind', 'chat.retry', 'chat.cancel', 'chat.history_request'),
        server_frames=('session.welcome', 'ui_state_snapshot', 'ui_state_updated', 'ui_state_patch', 'chat.user_message_accepted', 'chat.run_started', 'chat.assistant_message', 'chat.assistant_message_delta', 'chat.tool_call', 'chat.tool_progress', 'chat.tool_output', 'chat.tool_call_complete', 'chat.tool_call_dismiss', 'chat.run_complete', 'chat.rewind_complete', 'chat.retry_accepted', 'chat.cancel_accepted', 'chat.history_page', 'chat.reasoning_delta', 'chat.reasoning', 'chat.subagent_started', 'chat.subagent_complete', 'error'),
        capabilities=('rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability', 'ui_state_patch', 'resume_catch_up', 'assistant_stream', 'retry', 'cancel', 'multi_attach', 'state_window', 'reasoning', 'usage', 'subagents'),
        features=('ui_state_patch', 'resume_catch_up', 'assistant_stream', 'multi_attach', 'state_window', 'reasoning', 'usage', 'subagents'),
        error_codes=('malformed_frame', 'binary_frame', 'unknown_type', 'invalid_frame', 'frame_too_large', 'hello_required', 'already_open', 'unsupported_version', 'resume_rejected', 'resume_cursor_ahead', 'script_not_allowed', 'invalid_script', 'duplicate_message', 'run_in_progress', 'unknown_tool_call', 'tool_call_settled', 'tool_call_not_awaiting', 'unknown_invocation', 'session_taken_over', 'internal_error', 'capability_not_offered', 'unknown_item', 'item_not_in_latest_turn', 'retry_keeps_open_call', 'run_not_active', 'response_invalid', 'session_detached', 'stale_cursor'),
    ),
}
