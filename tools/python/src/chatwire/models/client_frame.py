# Generated from schema/json/client-frame.json by tools/python/scripts/generate.py. Do not edit.

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


class Resume(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    session_id: Annotated[
        StrictStr,
        Field(
            description='The `session_id` from the `session.welcome` that opened the session.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    resume_token: Annotated[
        StrictStr,
        Field(
            description='The secret `resume_token` from that welcome; without the right one the server refuses.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    last_seq: Annotated[
        int,
        Field(
            description='The highest `seq` the client has seen on this session (0 if none).',
            ge=0,
            le=9007199254740991,
        ),
    ]
    before: Annotated[
        Id | None,
        Field(
            description='The cursor of the window the client holds (since 1.2, `state_window`): the `before` of its\nlatest windowed snapshot or page. Absent when it holds the whole state. A catch-up patches\nthat view (`WINDOW-012`).'
        ),
    ] = None


class ScriptStepSay(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['say']
    markdown: Annotated[StrictStr, Field(description='The message body, CommonMark.')]
    chunks: Annotated[
        list[StrictStr] | None,
        Field(
            description='The chunks to stream, one `chat.assistant_message_delta` each, in order (since 1.1):\neach non-empty, at most [`MAX_SAY_CHUNKS`], their concatenation exactly `markdown`; an\nempty list (beside an empty `markdown`) plays as a `say` without chunks (`SCRIPT-024`).'
        ),
    ] = None
    chunk_delay_ms: Annotated[
        int | None,
        Field(
            description='How long to wait before each chunk after the first, in milliseconds (at most 60000)\n(since 1.1); default 0.',
            ge=0,
            le=9007199254740991,
        ),
    ] = None


class SettleOrderItem(RootModel[int]):
    root: Annotated[int, Field(ge=0, le=4294967295)]


class ScriptStepWait(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['wait']
    ms: Annotated[
        int,
        Field(
            description='How long, in milliseconds (at most 60000).',
            ge=0,
            le=9007199254740991,
        ),
    ]


class ScriptStepReason(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['reason']
    text: Annotated[
        StrictStr,
        Field(description='The whole reasoning; sent as `""` when `redacted`.'),
    ]
    chunks: Annotated[
        list[StrictStr] | None,
        Field(
            description="The chunks to stream, with the rules of a `say`'s (`TooManyChunks`, `EmptyChunk`,\n`ChunksDiffer`); never beside `redacted` (`ChunksOfRedacted`)."
        ),
    ] = None
    chunk_delay_ms: Annotated[
        int | None,
        Field(
            description='How long to wait before each chunk after the first, in milliseconds (at most 60000); default 0.',
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    encrypted: Annotated[
        StrictStr | None,
        Field(
            description='The opaque payload the item carries, sent byte for byte (`REASON-004`).',
            max_length=65536,
            pattern='^[A-Za-z0-9+/_=-]*$',
        ),
    ] = None
    redacted: Annotated[
        StrictBool | None,
        Field(
            description='The run withholds the text: the frame carries `text: ""` and `redacted: true` (`REASON-003`).'
        ),
    ] = None


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


class Fraction(RootModel[StrictFloat]):
    root: Annotated[
        StrictFloat,
        Field(description='A number from 0 to 1 inclusive.', ge=0.0, le=1.0),
    ]


class ApprovalDecision(str, Enum):
    approve = 'approve'
    deny_continue = 'deny_continue'
    deny_abort = 'deny_abort'


class ScriptOutcomeResult(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['result']
    value: Annotated[Any, Field(description='The result value.')]
    summary: Annotated[StrictStr | None, Field(description='The summary line.')] = None


class ScriptOutcomeError(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['error']
    message: Annotated[StrictStr, Field(description='The error text.')]


class ScriptOutcomeAwaitResponse(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['await_response']
    expire_after_ms: Annotated[
        int | None,
        Field(
            description='Expire the call if unanswered after this many milliseconds (at most 600000).',
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    summary: Annotated[
        StrictStr | None, Field(description='The summary line once completed.')
    ] = None


class ScriptOutcomeDismiss(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    kind: Literal['dismiss']
    reason: Annotated[StrictStr | None, Field(description='The dismissal reason.')] = (
        None
    )


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


class ScriptSubagentStatus(str, Enum):
    completed = 'completed'
    failed = 'failed'


class ScriptEnd(str, Enum):
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


class Capability(RootModel[StrictStr]):
    root: Annotated[
        StrictStr,
        Field(
            description='An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability, and since 1.1 ui_state_patch, resume_catch_up, assistant_stream and retry, since 1.2 cancel, multi_attach and state_window, and since 1.3 reasoning, usage and subagents; receivers must tolerate others.',
            examples=['rewind', 'tool_output', 'tool_expiry', 'conformance_script', 'restart_durability', 'ui_state_patch', 'resume_catch_up', 'assistant_stream', 'retry', 'cancel', 'multi_attach', 'state_window', 'reasoning', 'usage', 'subagents'],
            min_length=1,
        ),
    ]


class ResponseOutcomeSubmit(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    action: Literal['submit']
    value: Annotated[
        Any, Field(description='What the user entered or chose; any JSON value.')
    ]


class ResponseOutcomeDismiss(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    action: Literal['dismiss']
    reason: Annotated[
        StrictStr | None, Field(description='Why, for display and logs.')
    ] = None


class ClientFrameChatUserMessage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.user_message']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id; sending the same id again never starts a second turn.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    text: Annotated[StrictStr, Field(description='The message text as typed.')]


class ClientFrameChatToolCallResponse(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.tool_call_response']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; the settlement and any error carry it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_call_id: Annotated[
        StrictStr,
        Field(
            description='The call being answered.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    outcome: Annotated[
        ResponseOutcomeSubmit | ResponseOutcomeDismiss, Field(description='The answer.')
    ]


class ClientFrameChatRewind(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.rewind']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; the result and any error carry it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    before_invocation_id: Annotated[
        StrictStr,
        Field(
            description='The first invocation to remove; it and every later one disappear from the effective state.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]


class ClientFrameChatRetry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.retry']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; the `chat.retry_accepted` and any error carry it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    after_item_id: Annotated[
        StrictStr,
        Field(
            description='The last item to keep: an item of the latest turn (its user message or a later item).',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]


class ClientFrameChatCancel(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.cancel']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; the `chat.cancel_accepted` and any error carry it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    invocation_id: Annotated[
        StrictStr,
        Field(
            description="The turn whose run to stop: the session's current run, `running` or `awaiting_input`.",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]


class ClientFrameChatHistoryRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['chat.history_request']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; the answer carries it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    before: Annotated[
        StrictStr,
        Field(
            description="The connection's current cursor: the `before` of its latest windowed snapshot or page\n(`WINDOW-010`).",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    tool_call_id: Annotated[
        Id | None,
        Field(
            description='The host whose sub-agent transcript to page (since 1.3, feature `subagents`,\n`WINDOW-016`); absent to page the top level.'
        ),
    ] = None
    limit: Annotated[
        int,
        Field(
            description='How many items at most, 1 to [`MAX_HISTORY_PAGE_ITEMS`] (`WINDOW-007`).',
            ge=1,
            le=500,
        ),
    ]


class ScriptStepEnd(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['end']
    status: Annotated[ScriptEnd, Field(description='How the turn ends.')]
    error: Annotated[
        StrictStr | None, Field(description='The error text for `failed`.')
    ] = None


class ScriptStepUsage(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['usage']
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


class ScriptProgress(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    message: Annotated[StrictStr | None, Field(description='The status line.')] = None
    fraction: Annotated[Fraction | None, Field(description='How much is done.')] = None


class ScriptOutput(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    command: Annotated[StrictStr | None, Field(description='The command line.')] = None
    approvals: Annotated[
        list[ApprovalDecision] | None,
        Field(description='Approval decisions, one frame each.'),
    ] = None
    stdout: Annotated[StrictStr | None, Field(description='Standard output.')] = None
    stderr: Annotated[StrictStr | None, Field(description='Standard error.')] = None
    exit_code: Annotated[
        int | None, Field(description='Exit code.', ge=-2147483648, le=2147483647)
    ] = None


class ScriptSubagentEnd(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    status: Annotated[ScriptSubagentStatus, Field(description="The run's status.")]
    response: Annotated[
        StrictStr | None, Field(description="The sub-agent's final answer.")
    ] = None
    returned: Annotated[
        StrictBool | None,
        Field(
            description='The run ended by calling its `return` tool; only with `completed` (`ReturnedNotCompleted`).'
        ),
    ] = None


class ClientFrameSessionHello(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['session.hello']
    id: Annotated[
        StrictStr,
        Field(
            description='Client-chosen id of this frame; answers (`session.welcome`, `error`) carry it as `in_reply_to`.',
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    versions: Annotated[
        list[ProtocolVersion],
        Field(
            description='The protocol versions the client speaks, in any order; the server picks one (`SESSION-003`).',
            min_length=1,
        ),
    ]
    resume: Annotated[
        Resume | None,
        Field(
            description='Present to resume an existing session instead of opening a new one.'
        ),
    ] = None
    script: Annotated[
        AgentScript | None,
        Field(
            description="A scripted agent to run in place of the backend's model; honoured only by a backend in\nconformance mode, and only when opening a new session (`SCRIPT-001`)."
        ),
    ] = None
    client: Annotated[
        StrictStr | None,
        Field(description='Free-form name and version of the client, for logs.'),
    ] = None
    features: Annotated[
        list[Capability] | None,
        Field(
            description='The features the client asks for (since 1.1); absent, every feature the server implements\nand the negotiated version defines is in force. Sent only by a client that offers no version\nbelow 1.1, because a 1.0 server refuses a hello with a member 1.0 does not define\n(`SESSION-012`, `SESSION-014`).'
        ),
    ] = None
    window: Annotated[
        int | None,
        Field(
            description='Asks for a window of the newest `window` items (since 1.2, `state_window`): a snapshot\nthis connection gets holds those and the always-held older items, and it pages back with\n`chat.history_request` (`WINDOW-001`, `WINDOW-002`). Ignored where `state_window` is not\nin force.',
            ge=1,
            le=1000,
        ),
    ] = None


class AgentScript(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    turns: Annotated[
        list[ScriptTurn],
        Field(description='One entry per accepted user message, in order.'),
    ]


class ScriptTurn(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    steps: Annotated[
        list[ScriptStepSay | ScriptStepToolCalls | ScriptStepWait | ScriptStepEnd | ScriptStepReason | ScriptStepUsage],
        Field(
            description='Steps in order. A turn without an `end` step ends `completed`.'
        ),
    ]
    retries: Annotated[
        list[ScriptRetry] | None,
        Field(
            description='What the agent plays when the turn is retried (since 1.1, `SCRIPT-020`): the k-th accepted\n`chat.retry` of the turn, counted from 0 over the session\'s log (`SCRIPT-023`), plays\n`retries[k]` in a new run slice; without a `retries[k]` that slice ends at once with\n`chat.run_complete` `status: "failed"` and `reason: "script_exhausted"`.'
        ),
    ] = None


class ScriptStepToolCalls(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    op: Literal['tool_calls']
    calls: Annotated[
        list[ScriptToolCall], Field(description='The calls, in call order.')
    ]
    settle_order: Annotated[
        list[SettleOrderItem] | None,
        Field(
            description='Indices of the calls that settle by themselves (every outcome but `await_response`),\nin the order they settle; default: call order.'
        ),
    ] = None


class ScriptToolCall(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    tool_name: Annotated[StrictStr, Field(description='The `tool_name` to send.')]
    interaction_type: Annotated[
        InteractionType, Field(description='The `interaction_type` to send.')
    ]
    display: Annotated[DisplayMode, Field(description='The `display` to send.')]
    component_type: Annotated[
        StrictStr | None, Field(description='The `component_type` to send.')
    ] = None
    workflow_name: Annotated[
        StrictStr | None, Field(description='The `workflow_name` to send.')
    ] = None
    payload: Annotated[dict[str, Any], Field(description='The `payload` to send.')] = {}
    run_ms: Annotated[
        int,
        Field(
            description='How long the tool runs before its first progress report or settlement, in milliseconds (at most 60000).',
            ge=0,
            le=9007199254740991,
        ),
    ] = 0
    progress: Annotated[
        list[ScriptProgress] | None,
        Field(description='Progress reports to stream while it runs, in order.'),
    ] = None
    output: Annotated[
        ScriptOutput | None,
        Field(description='Tool-group output to send before it settles.'),
    ] = None
    outcome: Annotated[
        ScriptOutcomeResult | ScriptOutcomeError | ScriptOutcomeAwaitResponse | ScriptOutcomeDismiss,
        Field(description='How the call settles.'),
    ]
    response_schema: Annotated[
        ResponseSchema | None,
        Field(
            description='The `response_schema` to send (since 1.2, `SCRIPT-022`): only on a call whose outcome is\n`await_response`; a server sends it only to connections that negotiated 1.2 (`COMPAT-005`).'
        ),
    ] = None
    subagent: Annotated[
        ScriptSubagent | None,
        Field(
            description='The sub-agent run the call hosts (since 1.3, `SCRIPT-029`): only on a call that runs by\nitself and has no `output` (`NotSubagentHost`).'
        ),
    ] = None


class ScriptSubagent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    thread: Annotated[
        StrictStr,
        Field(
            description="The sub-agent's `thread_id`.",
            pattern='^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
        ),
    ]
    continue_: Annotated[
        StrictBool | None,
        Field(
            alias='continue',
            description='Continue `thread` from its latest call (`SUBAGENT-004`) instead of starting it.',
        ),
    ] = None
    name: Annotated[
        StrictStr | None, Field(description='The `name` of `chat.subagent_started`.')
    ] = None
    input: Annotated[
        StrictStr, Field(description='The `input` of `chat.subagent_started`.')
    ]
    steps: Annotated[
        list[ScriptStepSay | ScriptStepToolCalls | ScriptStepWait | ScriptStepEnd | ScriptStepReason | ScriptStepUsage],
        Field(
            description="The sub-agent's steps, each played as at top level with the host as `parent_call_id`:\n`say`, `reason`, `tool_calls`, `wait`, `usage`; never `end` (`EndInSubagent`).",
            validate_default=True,
        ),
    ] = []
    end: Annotated[
        ScriptSubagentEnd,
        Field(description='How the run ends: its `chat.subagent_complete`.'),
    ]


class ScriptRetry(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    steps: Annotated[
        list[ScriptStepSay | ScriptStepToolCalls | ScriptStepWait | ScriptStepEnd | ScriptStepReason | ScriptStepUsage],
        Field(
            description="Steps in order, with the rules of a turn's steps. Without an `end` step the slice ends `completed`."
        ),
    ]


class ClientFrame(
    RootModel[
        ClientFrameSessionHello
        | ClientFrameChatUserMessage
        | ClientFrameChatToolCallResponse
        | ClientFrameChatRewind
        | ClientFrameChatRetry
        | ClientFrameChatCancel
        | ClientFrameChatHistoryRequest
    ]
):
    root: Annotated[
        ClientFrameSessionHello | ClientFrameChatUserMessage | ClientFrameChatToolCallResponse | ClientFrameChatRewind | ClientFrameChatRetry | ClientFrameChatCancel | ClientFrameChatHistoryRequest,
        Field(description='Any frame a client sends to a server.', title='ClientFrame'),
    ]


ResponseSchema.model_rebuild()
ClientFrameSessionHello.model_rebuild()
AgentScript.model_rebuild()
ScriptTurn.model_rebuild()
ScriptStepToolCalls.model_rebuild()
ScriptToolCall.model_rebuild()
