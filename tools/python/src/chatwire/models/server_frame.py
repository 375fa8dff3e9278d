# Generated from schema/json/server-frame.json by tools/python/scripts/generate.py. Do not edit.

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    StrictBool,
    StrictFloat,
    StrictStr,
    StringConstraints,
)


class Id(RootModel[StrictStr]):
    root: Annotated[
        StrictStr,
        Field(
            description='An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]


class ProtocolVersion(RootModel[StrictStr]):
    root: Annotated[
        StrictStr,
        Field(
            description='A protocol version MAJOR.MINOR, e.g. "1.0".',
            pattern='^(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})$',
        ),
    ]


class Capability(RootModel[StrictStr]):
    root: Annotated[
        StrictStr,
        Field(
            description='An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability, and since 1.1 ui_state_patch, resume_catch_up, assistant_stream and retry, since 1.2 cancel, multi_attach and state_window, and since 1.3 reasoning, usage and subagents; receivers must tolerate others.',
            examples=['rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability', 'ui_state_patch', 'resume_catch_up', 'assistant_stream', 'retry', 'cancel', 'multi_attach', 'state_window', 'reasoning', 'usage', 'subagents'],
            min_length=1,
        ),
    ]


class Limits(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    max_frame_bytes: Annotated[
        int,
        Field(
            description='Largest text frame the server accepts, in bytes; a larger one gets `frame_too_large`.',
            ge=0,
            le=9007199254740991,
        ),
    ]
    max_attached_connections: Annotated[
        int | None,
        Field(
            description='With `multi_attach` in force: the most connections the session keeps attached at once, at\nleast [`crate::MIN_ATTACHED_CONNECTIONS`]; one more attaching detaches the earliest\n(since 1.2, `ATTACH-003`).',
            ge=8,
            le=4294967295,
        ),
    ] = None


class DisplayItemUserMessage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['user_message']
    id: Annotated[
        StrictStr,
        Field(
            description='The item id.', pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn the message opened.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    client_message_id: Annotated[
        StrictStr,
        Field(
            description="The client's id of the `chat.user_message`.",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[StrictStr, Field(description='The text.')]
    ts: Annotated[StrictStr, Field(description='When it was accepted (RFC 3339).')]


class DisplayItemAssistantMarkdown(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['assistant_markdown']
    id: Annotated[
        StrictStr,
        Field(
            description='The item id.', pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that produced it.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    markdown: Annotated[
        StrictStr,
        Field(
            description='The body, CommonMark; while the item streams, the text of its deltas so far.'
        ),
    ]
    streaming: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` only while the message is still streamed (since 1.1, `STATE-042`): the\nopen stream, always the last item. Absent once the `chat.assistant_message` that ends it\narrived (`STATE-043`), and on every item of a connection without `assistant_stream`.'
        ),
    ] = None
    ts: Annotated[
        StrictStr,
        Field(
            description="When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's."
        ),
    ]


class DisplayItemReasoning(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['reasoning']
    id: Annotated[
        StrictStr,
        Field(
            description='The item id.', pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that produced it.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[
        StrictStr,
        Field(
            description='The reasoning; while the item streams, the text of its deltas so far; `""` when redacted.'
        ),
    ]
    streaming: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` only while the reasoning is still streamed: the open stream, always the\nlast item (`STATE-054`).'
        ),
    ] = None
    redacted: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` when the run withheld the text (`REASON-003`).'
        ),
    ] = None
    encrypted: Annotated[
        StrictStr | None,
        Field(
            description="The opaque payload for the agent's model, byte for byte as the agent produced it\n(`REASON-004`); a client never interprets it.",
            max_length=65536,
            pattern='^[A-Za-z0-9+/_=-]*$',
        ),
    ] = None
    ts: Annotated[
        StrictStr,
        Field(
            description="When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's."
        ),
    ]


class InteractionType(str, Enum):
    ui_tool = 'ui_tool'
    ui_surface = 'ui_surface'
    auto_tool = 'auto_tool'
    input_request = 'input_request'


class DisplayMode(str, Enum):
    inline = 'inline'
    artifact = 'artifact'
    composer = 'composer'
    view = 'view'


class ToolCallStatus(str, Enum):
    pending = 'pending'
    running = 'running'
    completed = 'completed'
    failed = 'failed'
    dismissed = 'dismissed'
    expired = 'expired'


class Type(Enum):
    null = 'null'
    boolean = 'boolean'
    object = 'object'
    array = 'array'
    number = 'number'
    integer = 'integer'
    string = 'string'


class Type1Enum(Enum):
    null = 'null'
    boolean = 'boolean'
    object = 'object'
    array = 'array'
    number = 'number'
    integer = 'integer'
    string = 'string'


class Type1(RootModel[list[Type1Enum]]):
    root: Annotated[list[Type1Enum], Field(min_length=1)]


class ResponseSchema(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Type | Type1 | None = None
    properties: dict[str, ResponseSchema] | None = None
    required: list[StrictStr] | None = None
    enum: Annotated[list[Any] | None, Field(min_length=1)] = None
    items: ResponseSchema | None = None
    minimum: StrictFloat | None = None
    maximum: StrictFloat | None = None
    min_length: Annotated[int | None, Field(alias='minLength', ge=0)] = None
    max_length: Annotated[int | None, Field(alias='maxLength', ge=0)] = None
    additional_properties: Annotated[
        StrictBool | ResponseSchema | None, Field(alias='additionalProperties')
    ] = None
    title: StrictStr | None = None
    description: StrictStr | None = None


class Fraction(RootModel[StrictFloat]):
    root: Annotated[
        StrictFloat,
        Field(description='A number from 0 to 1 inclusive.', ge=0.0, le=1.0),
    ]


class Initiator(str, Enum):
    server = 'server'
    client = 'client'


class SubagentStatus(str, Enum):
    running = 'running'
    completed = 'completed'
    failed = 'failed'
    cancelled = 'cancelled'


class ApprovalDecision(str, Enum):
    approve = 'approve'
    deny_continue = 'deny_continue'
    deny_abort = 'deny_abort'


class RunStatus(str, Enum):
    idle = 'idle'
    running = 'running'
    awaiting_input = 'awaiting_input'
    completed = 'completed'
    failed = 'failed'
    cancelled = 'cancelled'


class Cost(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    amount: Annotated[
        StrictStr,
        Field(
            description='A non-negative decimal string without sign or exponent, e.g. `"0.0123"`.',
            pattern='^(0|[1-9][0-9]{0,30})(\\.[0-9]{1,18})?$',
        ),
    ]
    currency: Annotated[
        StrictStr,
        Field(
            description='The ISO 4217 code of the currency, e.g. `"USD"`; one per session (`USAGE-002`).',
            pattern='^[A-Z]{3}$',
        ),
    ]


class Window(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    before: Annotated[
        Id | None,
        Field(
            description="The cursor of the page before the window: the id of the window's first (oldest) item.\nAbsent when the window holds the session's first item, so there is nothing to page."
        ),
    ] = None
    total: Annotated[
        int,
        Field(
            description='How many items the whole state holds.',
            ge=0,
            le=9007199254740991,
        ),
    ]


class PatchOpAdd(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['add']
    path: Annotated[StrictStr, Field(description='Where.')]
    value: Annotated[Any, Field(description='What.')]


class PatchOpRemove(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['remove']
    path: Annotated[StrictStr, Field(description='Where.')]


class PatchOpReplace(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['replace']
    path: Annotated[StrictStr, Field(description='Where.')]
    value: Annotated[Any, Field(description='The new value.')]


class PatchOpMove(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['move']
    from_: Annotated[StrictStr, Field(alias='from', description='Where from.')]
    path: Annotated[StrictStr, Field(description='Where to.')]


class PatchOpCopy(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['copy']
    from_: Annotated[StrictStr, Field(alias='from', description='Where from.')]
    path: Annotated[StrictStr, Field(description='Where to.')]


class PatchOpTest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['test']
    path: Annotated[StrictStr, Field(description='Where.')]
    value: Annotated[Any, Field(description='The value expected there.')]


class CompletionStatus(str, Enum):
    completed = 'completed'
    failed = 'failed'
    expired = 'expired'


class RunCompleteStatus(str, Enum):
    awaiting_input = 'awaiting_input'
    completed = 'completed'
    failed = 'failed'
    cancelled = 'cancelled'


class SubagentEnd(str, Enum):
    completed = 'completed'
    failed = 'failed'
    cancelled = 'cancelled'


class ErrorCode(str, Enum):
    malformed_frame = 'malformed_frame'
    binary_frame = 'binary_frame'
    unknown_type = 'unknown_type'
    invalid_frame = 'invalid_frame'
    frame_too_large = 'frame_too_large'
    hello_required = 'hello_required'
    already_open = 'already_open'
    unsupported_version = 'unsupported_version'
    resume_rejected = 'resume_rejected'
    resume_cursor_ahead = 'resume_cursor_ahead'
    script_not_allowed = 'script_not_allowed'
    invalid_script = 'invalid_script'
    duplicate_message = 'duplicate_message'
    run_in_progress = 'run_in_progress'
    unknown_tool_call = 'unknown_tool_call'
    tool_call_settled = 'tool_call_settled'
    tool_call_not_awaiting = 'tool_call_not_awaiting'
    unknown_invocation = 'unknown_invocation'
    session_taken_over = 'session_taken_over'
    internal_error = 'internal_error'
    capability_not_offered = 'capability_not_offered'
    unknown_item = 'unknown_item'
    item_not_in_latest_turn = 'item_not_in_latest_turn'
    retry_keeps_open_call = 'retry_keeps_open_call'
    run_not_active = 'run_not_active'
    response_invalid = 'response_invalid'
    session_detached = 'session_detached'
    stale_cursor = 'stale_cursor'


class ServerFrameSessionWelcome(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['session.welcome']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence; grows strictly (`SEQ-001`).",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `session.hello` this answers.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    version: Annotated[
        StrictStr,
        Field(
            description='The protocol version chosen for this connection, one of those the client offered.',
            pattern='^(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})$',
        ),
    ]
    session_id: Annotated[
        StrictStr,
        Field(
            description="The session's id; stable across reconnects and server restarts.",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    resume_token: Annotated[
        StrictStr,
        Field(
            description='Secret needed to resume this session; the server may rotate it on every welcome.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    resumed: Annotated[
        StrictBool,
        Field(
            description='True when this welcome resumed an existing session, false when it opened a new one.'
        ),
    ]
    capabilities: Annotated[
        list[Capability],
        Field(
            description='Optional features this server implements; scenarios needing others are not applicable.'
        ),
    ]
    limits: Annotated[Limits, Field(description='Limits the client must respect.')]
    server: Annotated[
        StrictStr | None,
        Field(description='Free-form name and version of the server, for logs.'),
    ] = None
    features: Annotated[
        list[Capability] | None,
        Field(
            description='The features in force on this connection (since 1.1; present, possibly empty, on every\nconnection that negotiated 1.1 or later, `SESSION-013`).'
        ),
    ] = None
    resume_retention: Annotated[
        int | None,
        Field(
            description='With `resume_catch_up` in force: the most events a catch-up patch covers; a resume that\nmissed more gets a snapshot (since 1.1, `RESUME-018`).',
            ge=0,
            le=4294967295,
        ),
    ] = None


class ServerFrameUiStatePatch(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['ui_state_patch']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    base_seq: Annotated[
        int,
        Field(
            description="The `seq` of the state the patch applies to: the connection's previous snapshot, update or\npatch, or for a catch-up the resume's `last_seq` (`STATE-037`, `RESUME-017`).",
            ge=0,
            le=9007199254740991,
        ),
    ]
    v: Annotated[
        Literal['ui_state_v1'], Field(description='The UiState format of both states.')
    ]
    patch: Annotated[
        list[PatchOpAdd | PatchOpRemove | PatchOpReplace | PatchOpMove | PatchOpCopy | PatchOpTest],
        Field(
            description='The operations, applied in order; a client applies all or none (RFC 6902).'
        ),
    ]


class ServerFrameChatUserMessageAccepted(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.user_message_accepted']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `chat.user_message` that was accepted.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn this message opens; every item the turn produces carries it.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    item_id: Annotated[
        StrictStr,
        Field(
            description='Id of the new `user_message` display item.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[StrictStr, Field(description='The message text.')]
    ts: Annotated[
        StrictStr, Field(description='When the server accepted it (RFC 3339).')
    ]


class ServerFrameChatRunStarted(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.run_started']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn this slice belongs to.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    ts: Annotated[StrictStr, Field(description='When the slice started (RFC 3339).')]


class ServerFrameChatAssistantMessage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.assistant_message']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that produced this message.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    parent_call_id: Annotated[
        Id | None,
        Field(
            description='The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,\n`STATE-065`); absent for an item of the top level.'
        ),
    ] = None
    item_id: Annotated[
        StrictStr,
        Field(
            description='Id of the new `assistant_markdown` display item.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    markdown: Annotated[StrictStr, Field(description='The message body, CommonMark.')]
    ts: Annotated[StrictStr, Field(description='When it was produced (RFC 3339).')]


class ServerFrameChatAssistantMessageDelta(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.assistant_message_delta']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence; a later `ui_state_patch` may name\nit as its `base_seq` (`STREAM-002`).",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn whose run writes the message; its run slice is in progress (`STATE-022`).',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    parent_call_id: Annotated[
        Id | None,
        Field(
            description='The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,\n`STATE-065`); absent for an item of the top level.'
        ),
    ] = None
    item_id: Annotated[
        StrictStr,
        Field(
            description='Id of the streaming `assistant_markdown` item, the same in every delta and in the\n`chat.assistant_message` that ends the stream.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    delta: Annotated[
        StrictStr,
        Field(
            description="The text to append, never empty: the concatenation of an item's deltas, in order, is the\ntext its ending `chat.assistant_message` carries (`STATE-043`).",
            min_length=1,
        ),
    ]
    ts: Annotated[
        StrictStr,
        Field(
            description="When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's."
        ),
    ]


class ServerFrameChatToolCall(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_call']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that made this call.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    parent_call_id: Annotated[
        Id | None,
        Field(
            description='The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,\n`STATE-065`); absent for an item of the top level.'
        ),
    ] = None
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The interaction id, end to end: the item id, the id a response names, the id a completion names.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    corr: Annotated[
        Id | None,
        Field(
            description='Compatibility alias of `tool_call_id` for older consumers; when present it equals `tool_call_id` (`TOOL-004`).'
        ),
    ] = None
    tool_name: Annotated[
        StrictStr, Field(description='Name of the tool as the agent called it.')
    ]
    component_type: Annotated[
        StrictStr | None,
        Field(
            description='The UI component that renders this call; required for `ui_tool` and `ui_surface` (`TOOL-005`).'
        ),
    ] = None
    workflow_name: Annotated[
        StrictStr | None, Field(description='The workflow that owns the component.')
    ] = None
    interaction_type: Annotated[
        InteractionType, Field(description='What kind of interaction this is.')
    ]
    awaiting_response: Annotated[
        StrictBool,
        Field(
            description='True when the call waits for a `chat.tool_call_response` from the client.'
        ),
    ]
    display: Annotated[DisplayMode, Field(description='Where the client shows it.')]
    payload: Annotated[
        dict[str, Any],
        Field(
            description='Arguments for the component or tool, as the agent produced them.'
        ),
    ]
    response_schema: Annotated[
        ResponseSchema | None,
        Field(
            description='The shape of the `value` a `chat.tool_call_response` must carry (since 1.2, `TOOL-022`):\na JSON Schema in the subset of `TOOL-022`, only on calls that await a response. The server\nchecks every response against it (`TOOL-023`).'
        ),
    ] = None
    call_index: Annotated[
        int,
        Field(
            description='Position of this call within its batch of calls made at once, starting at 0 (`MULTI-001`).',
            ge=0,
            le=4294967295,
        ),
    ]
    ts: Annotated[StrictStr, Field(description='When the call was made (RFC 3339).')]


class ServerFrameChatToolProgress(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_progress']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The running tool call.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    message: Annotated[
        StrictStr | None, Field(description='A short human-readable status line.')
    ] = None
    fraction: Annotated[
        Fraction | None, Field(description='How much is done, from 0 to 1.')
    ] = None
    ts: Annotated[
        StrictStr, Field(description='When the progress was observed (RFC 3339).')
    ]


class ServerFrameChatToolOutput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_output']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The tool call this output belongs to; it must not be settled yet.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    command: Annotated[
        StrictStr | None, Field(description='The command line the tool runs, set once.')
    ] = None
    approval: Annotated[
        ApprovalDecision | None,
        Field(description="An approval decision to append to the group's approvals."),
    ] = None
    stdout: Annotated[
        StrictStr | None, Field(description="Text to append to the group's stdout.")
    ] = None
    stderr: Annotated[
        StrictStr | None, Field(description="Text to append to the group's stderr.")
    ] = None
    exit_code: Annotated[
        int | None,
        Field(
            description='The process exit code, set once the tool has exited.',
            ge=-2147483648,
            le=2147483647,
        ),
    ] = None
    ts: Annotated[
        StrictStr, Field(description='When the output was produced (RFC 3339).')
    ]


class ServerFrameChatToolCallComplete(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_call_complete']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The call that settles.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    status: Annotated[CompletionStatus, Field(description='How it settled.')]
    result: Annotated[
        Any | None,
        Field(
            description="The tool's result (for `completed`), e.g. the value the user submitted."
        ),
    ] = None
    error: Annotated[
        StrictStr | None,
        Field(description='What went wrong (for `failed` and `expired`).'),
    ] = None
    summary: Annotated[
        StrictStr | None,
        Field(
            description='One line the client shows in place of a settled component, e.g. "API key saved".'
        ),
    ] = None
    in_reply_to: Annotated[
        Id | None,
        Field(
            description='The `id` of the `chat.tool_call_response` that caused this, if any.'
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When it settled (RFC 3339).')]


class ServerFrameChatToolCallDismiss(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_call_dismiss']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The call that is dismissed.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    initiated_by: Annotated[
        Initiator, Field(description='Who asked for the dismissal.')
    ]
    reason: Annotated[
        StrictStr | None, Field(description='Why, for display and logs.')
    ] = None
    in_reply_to: Annotated[
        Id | None,
        Field(
            description="The `id` of the client's `chat.tool_call_response` when the client asked for it."
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When it was dismissed (RFC 3339).')]


class ServerFrameChatRewindComplete(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.rewind_complete']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `chat.rewind` this answers.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    before_invocation_id: Annotated[
        StrictStr,
        Field(
            description='The invocation the state was cut before.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    removed_invocation_ids: Annotated[
        list[Id],
        Field(
            description='The invocations removed from the effective state, oldest first (the log keeps them).'
        ),
    ]
    ts: Annotated[
        StrictStr, Field(description='When the rewind took effect (RFC 3339).')
    ]


class ServerFrameChatRetryAccepted(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.retry_accepted']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `chat.retry` this answers.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn retried: the latest one, the turn of `after_item_id` (`STATE-049`).',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    after_item_id: Annotated[
        StrictStr,
        Field(
            description='The last item kept.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    removed_item_ids: Annotated[
        list[Id],
        Field(
            description='The items removed from the effective state, in display order (the log keeps them) (`STATE-051`).'
        ),
    ]
    ts: Annotated[
        StrictStr, Field(description='When the retry took effect (RFC 3339).')
    ]


class ServerFrameChatCancelAccepted(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.cancel_accepted']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `chat.cancel` this answers.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn whose run is stopped.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    ts: Annotated[
        StrictStr, Field(description='When the cancel was committed (RFC 3339).')
    ]


class ServerFrameChatReasoningDelta(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.reasoning_delta']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence (`STREAM-002`: a later patch may\nname it as its `base_seq`).",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn whose run reasons; its run slice is in progress (`STATE-022`).',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    parent_call_id: Annotated[
        Id | None,
        Field(
            description='The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,\n`STATE-065`); absent for an item of the top level.'
        ),
    ] = None
    item_id: Annotated[
        StrictStr,
        Field(
            description='Id of the streaming `reasoning` item, the same in every delta and in the `chat.reasoning`\nthat ends the stream.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[
        StrictStr,
        Field(
            description="The text to append, never empty: the concatenation of an item's deltas, in order, is the\ntext its ending `chat.reasoning` carries unless that one is `redacted` (`STATE-061`).",
            min_length=1,
        ),
    ]
    ts: Annotated[
        StrictStr,
        Field(
            description="When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's."
        ),
    ]


class ServerFrameChatReasoning(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.reasoning']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn whose run reasons; its run slice is in progress (`STATE-022`).',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    parent_call_id: Annotated[
        Id | None,
        Field(
            description='The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,\n`STATE-065`); absent for an item of the top level.'
        ),
    ] = None
    item_id: Annotated[
        StrictStr,
        Field(
            description='Id of the `reasoning` item: the open stream it ends, or a new item.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[
        StrictStr,
        Field(
            description='The whole reasoning; `""` when `redacted` (`REASON-003`, `STATE-062`).'
        ),
    ]
    redacted: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` when the run withholds the text: the item then holds none.'
        ),
    ] = None
    encrypted: Annotated[
        StrictStr | None,
        Field(
            description="An opaque payload for the agent's model, never interpreted by a client (`REASON-005`).",
            max_length=65536,
            pattern='^[A-Za-z0-9+/_=-]*$',
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When the reasoning ended (RFC 3339).')]


class ServerFrameChatSubagentStarted(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.subagent_started']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The call that hosts the run, in any transcript.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    thread_id: Annotated[
        StrictStr,
        Field(
            description="The sub-agent's thread: the same on every call that continues it (`SUBAGENT-004`).",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    name: Annotated[
        StrictStr | None,
        Field(description='What the calling agent calls the sub-agent, for display.'),
    ] = None
    input: Annotated[
        StrictStr, Field(description='What the calling agent sent the sub-agent.')
    ]
    continues: Annotated[
        Id | None,
        Field(
            description='The latest earlier call hosting `thread_id`, when this run continues that thread; absent\nfor a new thread (`STATE-070`).'
        ),
    ] = None
    answers_return: Annotated[
        StrictBool | None,
        Field(
            description="Present and `true` when `input` is the result of the `return` call the thread's latest run\nleft open (`SUBAGENT-005`)."
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When the run started (RFC 3339).')]


class ServerFrameChatSubagentComplete(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.subagent_complete']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The call that hosts the run.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    status: Annotated[SubagentEnd, Field(description='How the run ended.')]
    response: Annotated[
        StrictStr | None, Field(description="The sub-agent's final answer.")
    ] = None
    returned: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` when the run ended by calling its `return` tool; only with `completed`\n(`STATE-075`).'
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When the run ended (RFC 3339).')]


class ServerFrameError(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['error']
    seq: Annotated[
        int | None,
        Field(
            description="Position in the session's frame sequence; absent when no session is bound to the connection.",
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    code: Annotated[ErrorCode, Field(description='What went wrong.')]
    message: Annotated[
        StrictStr,
        Field(description='A human-readable explanation, one sentence, lowercase.'),
    ]
    in_reply_to: Annotated[
        Id | None,
        Field(
            description='The `id` of the client frame this answers, when that frame was readable enough to have one.'
        ),
    ] = None
    fatal: Annotated[
        StrictBool,
        Field(
            description='True when the server closes the connection right after this frame.'
        ),
    ]
    supported_versions: Annotated[
        list[ProtocolVersion] | None,
        Field(
            description='With `unsupported_version`: every version the server speaks.'
        ),
    ] = None


class DisplayItemToolOutput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['tool_output']
    id: Annotated[
        StrictStr,
        Field(
            description='The item id: the `tool_call_id` followed by `.output`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that made the call.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The tool call this output belongs to.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_name: Annotated[StrictStr, Field(description='Name of the tool.')]
    command: Annotated[
        StrictStr | None,
        Field(description='The command line, if the tool reported one.'),
    ] = None
    approvals: Annotated[
        list[ApprovalDecision],
        Field(description='Approval decisions in the order they were made.'),
    ]
    stdout: Annotated[
        StrictStr, Field(description='Everything the tool wrote to stdout so far.')
    ]
    stderr: Annotated[
        StrictStr, Field(description='Everything the tool wrote to stderr so far.')
    ]
    exit_code: Annotated[
        int | None,
        Field(
            description='The exit code, once the tool exited.',
            ge=-2147483648,
            le=2147483647,
        ),
    ] = None


class Progress(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    message: Annotated[StrictStr | None, Field(description='A short status line.')] = (
        None
    )
    fraction: Annotated[
        Fraction | None, Field(description='How much is done, 0 to 1.')
    ] = None


class Dismissal(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    initiated_by: Annotated[Initiator, Field(description='Which side asked for it.')]
    reason: Annotated[StrictStr | None, Field(description='Why.')] = None


class RunState(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    status: Annotated[RunStatus, Field(description='Where the run is.')]
    invocation_id: Annotated[
        Id | None,
        Field(description='The turn the status is about; absent when `idle`.'),
    ] = None


class Usage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    input_tokens: Annotated[
        int, Field(description='Tokens the model read.', ge=0, le=9007199254740991)
    ]
    output_tokens: Annotated[
        int, Field(description='Tokens the model wrote.', ge=0, le=9007199254740991)
    ]
    reasoning_tokens: Annotated[
        int | None,
        Field(
            description='Of the tokens written, those spent reasoning, when the model reports them.',
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    cached_input_tokens: Annotated[
        int | None,
        Field(
            description='Of the tokens read, those served from a cache, when the model reports them.',
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    cost: Annotated[
        Cost | None, Field(description='What it cost, when the server knows.')
    ] = None


class ServerFrameChatRunComplete(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.run_complete']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn whose slice ends.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    status: Annotated[
        RunCompleteStatus,
        Field(
            description='Why it ended. `awaiting_input` requires a pending call; the others require none open (`RUN-003`, `RUN-004`).'
        ),
    ]
    reason: Annotated[
        StrictStr | None,
        Field(
            description='A machine-readable reason, e.g. `awaiting_user_input` or `script_exhausted`.'
        ),
    ] = None
    error: Annotated[
        StrictStr | None, Field(description='What went wrong, for `failed`.')
    ] = None
    usage: Annotated[
        Usage | None,
        Field(
            description='What the slice used (since 1.3, feature `usage`, `USAGE-001`): added to `state.usage`\n(`STATE-056`); absent where `usage` is not in force (`USAGE-004`).'
        ),
    ] = None
    ts: Annotated[StrictStr, Field(description='When the slice ended (RFC 3339).')]


class UsageState(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    total: Annotated[
        Usage,
        Field(
            description='Every run slice of the session ever completed with usage, summed; never lowered.'
        ),
    ]
    invocations: Annotated[
        dict[Annotated[str, StringConstraints(pattern=r'^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$', strict=True)], Usage],
        Field(
            description="Per invocation the state holds, its run slices' usage summed."
        ),
    ]


class ServerFrameUiStateSnapshot(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['ui_state_snapshot']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    v: Annotated[Literal['ui_state_v1'], Field(description='The UiState format.')]
    state: Annotated[
        UiState,
        Field(
            description="The session's effective state; on a windowed connection, the view its window holds\n(`WINDOW-002`)."
        ),
    ]
    window: Annotated[
        Window | None,
        Field(
            description='Present exactly on a connection that asked for a window where `state_window` is in force\n(since 1.2, `WINDOW-002`): where the window starts and how many items the state holds.'
        ),
    ] = None


class ServerFrameUiStateUpdated(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['ui_state_updated']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    v: Annotated[Literal['ui_state_v1'], Field(description='The UiState format.')]
    state: Annotated[UiState, Field(description="The session's effective state.")]


class ServerFrameChatHistoryPage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.history_page']
    seq: Annotated[
        int,
        Field(
            description="Position of this frame in the session's frame sequence.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    in_reply_to: Annotated[
        StrictStr,
        Field(
            description='The `id` of the `chat.history_request` this answers.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_call_id: Annotated[
        Id | None,
        Field(
            description="The request's `tool_call_id`: the page holds items of that host's transcript (since 1.3,\nfeature `subagents`, `WINDOW-016`)."
        ),
    ] = None
    items: Annotated[
        list[DisplayItemUserMessage | DisplayItemAssistantMarkdown | DisplayItemToolCall | DisplayItemToolOutput | DisplayItemReasoning],
        Field(
            description="The items immediately before the request's cursor, oldest first, as the state holds them\nnow (always-held ones included, `WINDOW-008`)."
        ),
    ]
    before: Annotated[
        Id | None,
        Field(
            description="The cursor for the next older page: the id of the first item of this page. Absent once the\npage reaches the session's first item."
        ),
    ] = None
    total: Annotated[
        int,
        Field(
            description='How many items the whole state holds.',
            ge=0,
            le=9007199254740991,
        ),
    ]


class UiState(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    items: Annotated[
        list[DisplayItemUserMessage | DisplayItemAssistantMarkdown | DisplayItemToolCall | DisplayItemToolOutput | DisplayItemReasoning],
        Field(description='Display items in the order the client shows them.'),
    ]
    run: Annotated[RunState, Field(description='The current run.')]
    usage: Annotated[
        UsageState | None,
        Field(
            description="What the session's runs used (since 1.3, feature `usage`): absent until the first run\nslice that reported usage (`STATE-056`)."
        ),
    ] = None


class DisplayItemToolCall(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['tool_call']
    id: Annotated[
        StrictStr,
        Field(
            description='The item id, equal to the `tool_call_id`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description='The turn that made the call.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_name: Annotated[StrictStr, Field(description='Name of the tool.')]
    component_type: Annotated[
        StrictStr | None, Field(description='The UI component that renders the call.')
    ] = None
    workflow_name: Annotated[
        StrictStr | None, Field(description='The workflow that owns the component.')
    ] = None
    interaction_type: Annotated[
        InteractionType, Field(description='What kind of interaction this is.')
    ]
    display: Annotated[DisplayMode, Field(description='Where the client shows it.')]
    awaiting_response: Annotated[
        StrictBool,
        Field(description='Whether the call waits (or waited) for a client response.'),
    ]
    status: Annotated[
        ToolCallStatus, Field(description='Where the call is in its lifecycle.')
    ]
    payload: Annotated[
        dict[str, Any], Field(description='Arguments for the component or tool.')
    ]
    response_schema: Annotated[
        ResponseSchema | None,
        Field(
            description='The shape of the value the call awaits, from its `chat.tool_call` (since 1.2, `TOOL-022`).'
        ),
    ] = None
    progress: Annotated[
        Progress | None,
        Field(description='The latest progress, while or after running.'),
    ] = None
    summary: Annotated[
        StrictStr | None,
        Field(description='One line to show in place of a settled component.'),
    ] = None
    result: Annotated[
        Any | None, Field(description='The result, once `completed`.')
    ] = None
    error: Annotated[
        StrictStr | None,
        Field(description='What went wrong, once `failed` or `expired`.'),
    ] = None
    dismissal: Annotated[
        Dismissal | None,
        Field(description='Who dismissed it and why, once `dismissed`.'),
    ] = None
    ts: Annotated[StrictStr, Field(description='When the call was made (RFC 3339).')]
    settled_ts: Annotated[
        StrictStr | None,
        Field(description='When the call settled (RFC 3339), once settled.'),
    ] = None
    subagent: Annotated[
        SubagentState | None,
        Field(
            description='The sub-agent run the call hosts, with its transcript (since 1.3, feature `subagents`,\n`STATE-064`); boxed, as most calls host none.'
        ),
    ] = None


class SubagentState(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    thread_id: Annotated[
        StrictStr,
        Field(
            description="The sub-agent's thread, the same on every call that continues it.",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    name: Annotated[
        StrictStr | None,
        Field(description='What the calling agent calls the sub-agent, for display.'),
    ] = None
    input: Annotated[
        StrictStr, Field(description='What the calling agent sent the sub-agent.')
    ]
    continues: Annotated[
        Id | None,
        Field(description='The earlier call whose thread this run continues.'),
    ] = None
    answers_return: Annotated[
        StrictBool | None,
        Field(
            description="Present and `true` when `input` answered the thread's pending `return` call."
        ),
    ] = None
    status: Annotated[SubagentStatus, Field(description='Where the run is.')]
    items: Annotated[
        list[DisplayItemUserMessage | DisplayItemAssistantMarkdown | DisplayItemToolCall | DisplayItemToolOutput | DisplayItemReasoning],
        Field(
            description="The transcript: the sub-agent's items in display order, at most one open stream, its last."
        ),
    ]
    response: Annotated[
        StrictStr | None,
        Field(description="The sub-agent's final answer, once it ended."),
    ] = None
    returned: Annotated[
        StrictBool | None,
        Field(
            description='Present and `true` when the run ended by calling its `return` tool.'
        ),
    ] = None
    before: Annotated[
        Id | None,
        Field(
            description="On a windowed connection, the transcript's cursor: the id of its oldest item of the window\n(`WINDOW-015`); absent when the view holds the whole transcript."
        ),
    ] = None
    total: Annotated[
        int | None,
        Field(
            description='On a windowed connection whose view leaves items of the transcript out, how many items the\ntranscript holds as the connection is shown it (`WINDOW-015`).',
            ge=0,
            le=9007199254740991,
        ),
    ] = None


class ServerFrame(
    RootModel[
        ServerFrameSessionWelcome
        | ServerFrameUiStateSnapshot
        | ServerFrameUiStateUpdated
        | ServerFrameUiStatePatch
        | ServerFrameChatUserMessageAccepted
        | ServerFrameChatRunStarted
        | ServerFrameChatAssistantMessage
        | ServerFrameChatAssistantMessageDelta
        | ServerFrameChatToolCall
        | ServerFrameChatToolProgress
        | ServerFrameChatToolOutput
        | ServerFrameChatToolCallComplete
        | ServerFrameChatToolCallDismiss
        | ServerFrameChatRunComplete
        | ServerFrameChatRewindComplete
        | ServerFrameChatRetryAccepted
        | ServerFrameChatCancelAccepted
        | ServerFrameChatHistoryPage
        | ServerFrameChatReasoningDelta
        | ServerFrameChatReasoning
        | ServerFrameChatSubagentStarted
        | ServerFrameChatSubagentComplete
        | ServerFrameError
    ]
):
    root: Annotated[
        ServerFrameSessionWelcome | ServerFrameUiStateSnapshot | ServerFrameUiStateUpdated | ServerFrameUiStatePatch | ServerFrameChatUserMessageAccepted | ServerFrameChatRunStarted | ServerFrameChatAssistantMessage | ServerFrameChatAssistantMessageDelta | ServerFrameChatToolCall | ServerFrameChatToolProgress | ServerFrameChatToolOutput | ServerFrameChatToolCallComplete | ServerFrameChatToolCallDismiss | ServerFrameChatRunComplete | ServerFrameChatRewindComplete | ServerFrameChatRetryAccepted | ServerFrameChatCancelAccepted | ServerFrameChatHistoryPage | ServerFrameChatReasoningDelta | ServerFrameChatReasoning | ServerFrameChatSubagentStarted | ServerFrameChatSubagentComplete | ServerFrameError,
        Field(description='Any frame a server sends to a client.', title='ServerFrame'),
    ]


ResponseSchema.model_rebuild()
ServerFrameUiStateSnapshot.model_rebuild()
ServerFrameUiStateUpdated.model_rebuild()
ServerFrameChatHistoryPage.model_rebuild()
UiState.model_rebuild()
DisplayItemToolCall.model_rebuild()
