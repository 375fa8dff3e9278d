# Generated from schema/json/ui-state.json by tools/python/scripts/generate.py. Do not edit.

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


ResponseSchema.model_rebuild()
UiState.model_rebuild()
DisplayItemToolCall.model_rebuild()
