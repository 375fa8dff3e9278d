// The module src/generated/facts.ts, from fixtures/protocol-facts.json: the protocol's facts as the
// Rust crate states them (chatwire_schema::protocol_facts, written by
// `cargo run -p chatwire-schema-tool -- export`). generate.mjs writes it and its --check compares it
// (CI's drift check); nothing in it is typed by hand.
//
// Every table is typed against the frame and code unions of src/generated/protocol.ts with
// `satisfies`, so a fact that names a frame type or an error code the schemas do not define fails
// tsc.

const HEADER = [
  "// Generated from fixtures/protocol-facts.json by tools/npm/scripts/generate.mjs. Do not edit: change",
  "// chatwire_schema (Rust), run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.",
  "",
];

const json = (value) => JSON.stringify(value, null, 2);

function need(facts, key) {
  if (facts[key] === undefined) throw new Error(`fixtures/protocol-facts.json has no "${key}"`);
  return facts[key];
}

/** `/** text *\/` followed by `export const NAME = value;`. */
function constant(docText, name, value, type = "") {
  return `/** ${docText} */\nexport const ${name} = ${value}${type};`;
}

/** The text of src/generated/facts.ts for the parsed facts document. */
export function factsModule(facts) {
  const errorCodes = need(facts, "error_codes");
  const fatal = Object.fromEntries(errorCodes.filter((e) => e.fatal).map((e) => [e.code, e.close_code]));
  const frames = need(facts, "frames");
  const answeredBy = Object.fromEntries(Object.entries(frames.client).map(([wire, f]) => [wire, f.answered_by]));
  const serverFacts = Object.fromEntries(
    Object.entries(frames.server).map(([wire, f]) => [
      wire,
      { since: f.since, carries_state: f.carries_state, event: f.event, answer: f.answer, introduces: f.introduces, members_since: f.members_since },
    ]),
  );
  const clientFacts = Object.fromEntries(
    Object.entries(frames.client).map(([wire, f]) => [wire, { since: f.since, answered_by: f.answered_by, names: f.names, members_since: f.members_since }]),
  );
  const versions = need(facts, "versions");
  const out = [
    ...HEADER,
    'import type { Capability, ClientFrameType, ErrorCode, ServerFrameType } from "./protocol.js";',
    "",
    constant("The protocol version these types describe (`MAJOR.MINOR`).", "PROTOCOL_VERSION", json(need(facts, "protocol_version"))),
    constant("The WebSocket subprotocol of this major version (`TRANSPORT-003`).", "SUBPROTOCOL", json(need(facts, "subprotocol"))),
    constant("Every protocol version this package speaks, newest first (`SESSION-003`).", "SUPPORTED_VERSIONS", json(need(facts, "supported_versions")), " as const"),
    constant("The released minors of this major, oldest first; their schemas never change (`COMPAT-012`).", "RELEASED_VERSIONS", json(need(facts, "released_versions")), " as const"),
    constant("The `v` of every UiState frame.", "UI_STATE_VERSION", json(need(facts, "ui_state_version"))),
    "",
    constant("The `limits.max_frame_bytes` a server should announce (`TRANSPORT-013`).", "DEFAULT_MAX_FRAME_BYTES", json(need(facts, "default_max_frame_bytes"))),
    constant("The smallest `limits.max_frame_bytes` a server may announce (`TRANSPORT-005`).", "MIN_MAX_FRAME_BYTES", json(need(facts, "min_max_frame_bytes"))),
    constant("Above this many times `max_frame_bytes` a server may close with 1009 unread (`TRANSPORT-007`).", "HARD_CAP_FACTOR", json(need(facts, "hard_cap_factor"))),
    constant("After this many `resume_rejected` on one connection a server closes it with 1008 (`RESUME-013`).", "REFUSED_RESUMES_PER_CONNECTION", json(need(facts, "refused_resumes_per_connection"))),
    constant("The most bytes a server queues for a connection that does not take its frames (`TRANSPORT-016`).", "SEND_QUEUE_MAX_BYTES", json(need(facts, "send_queue_max_bytes"))),
    constant("The fewest connections a `multi_attach` server keeps attached to one session (`ATTACH-003`).", "MIN_ATTACHED_CONNECTIONS", json(need(facts, "min_attached_connections"))),
    constant("The largest `window` a `session.hello` may ask for (`WINDOW-001`).", "MAX_WINDOW_ITEMS", json(need(facts, "max_window_items"))),
    constant("The largest `limit` of a `chat.history_request` (`WINDOW-007`).", "MAX_HISTORY_PAGE_ITEMS", json(need(facts, "max_history_page_items"))),
    constant("The largest integer on the wire (`INT-001`).", "MAX_SAFE_INTEGER", json(need(facts, "max_safe_integer"))),
    constant("What turns a `tool_call_id` into the id of its `tool_output` item (`STATE-015`).", "OUTPUT_ID_SUFFIX", json(need(facts, "output_id_suffix"))),
    constant("The identifier rule (`ID-001`), as a regular expression.", "ID_PATTERN", json(need(facts, "id_pattern"))),
    "",
    constant("The keywords a response schema may use (`TOOL-022`), in the spec's order.", "RESPONSE_SCHEMA_KEYWORDS", json(need(facts, "response_schema").keywords), " as const"),
    constant("The JSON Schema type names a response schema's `type` may list.", "RESPONSE_SCHEMA_TYPES", json(need(facts, "response_schema").types), " as const"),
    constant("How deep response schemas nest (`properties`, `items`, `additionalProperties`), at most.", "RESPONSE_SCHEMA_MAX_DEPTH", json(need(facts, "response_schema").max_depth)),
    "",
    constant("Close codes by name (`spec/transport.md#close-codes`).", "CLOSE_CODES", json(need(facts, "close_codes")), " as const"),
    constant(
      "The close code that follows each fatal error code (`TRANSPORT-008`); the other codes are not fatal.",
      "FATAL_CLOSE_CODES",
      json(fatal),
      " as const satisfies { readonly [C in ErrorCode]?: number }",
    ),
    constant(
      "Every error code with whether it is fatal, its close code and the minor that added it (`spec/errors.md#codes`).",
      "ERROR_CODE_FACTS",
      json(errorCodes),
      " as const satisfies readonly { readonly code: ErrorCode; readonly fatal: boolean; readonly close_code: number | null; readonly since: string }[]",
    ),
    constant(
      "The order of a client frame's checks: the first failing one names the error (`spec/errors.md#codes`).",
      "ERROR_ORDER",
      json(need(facts, "error_order")),
      " as const satisfies { readonly frame_checks: readonly ErrorCode[]; readonly own_checks: { readonly [T in ClientFrameType]?: readonly ErrorCode[] } }",
    ),
    "",
    constant(
      "The server frames that are events for the reducer, in schema order (`spec/ui-state.md#events`).",
      "EVENT_TYPES",
      json(need(facts, "events")),
      " as const satisfies readonly ServerFrameType[]",
    ),
    constant(
      "The server frame types that answer each client frame when it is accepted; an `error` answers any it refuses (`ERROR-004`).",
      "ANSWERED_BY",
      json(answeredBy),
      " as const satisfies { readonly [T in ClientFrameType]: readonly ServerFrameType[] }",
    ),
    constant(
      "Per server frame type: the minor that added it, whether it carries a state, whether it is an event, whether it answers a client frame (`always`, `sometimes`, `never`), the ids it introduces (`ID-002`) and the members later minors added.",
      "SERVER_FRAME_FACTS",
      json(serverFacts),
      " as const satisfies { readonly [T in ServerFrameType]: ServerFrameFacts }",
    ),
    constant(
      "Per client frame type: the minor that added it, what answers it, the call, item or invocation member it names, and the members later minors added.",
      "CLIENT_FRAME_FACTS",
      json(clientFacts),
      " as const satisfies { readonly [T in ClientFrameType]: ClientFrameFacts }",
    ),
    constant(
      "The reducer's refusals: the Rust variant's name (`ReduceError::kind`) and the rule it reports (spec/ui-state.md#refusals).",
      "REDUCE_REFUSALS",
      json(need(facts, "reduce_refusals")),
      " as const",
    ),
    constant("The members of the UiState later minors added, by path, with that minor.", "UI_STATE_MEMBERS_SINCE", json(need(facts, "ui_state_members_since")), " as const"),
    "",
    constant(
      "Every capability with the minor that defines it and whether it is a feature (in force only where negotiated, `SESSION-012`).",
      "CAPABILITY_FACTS",
      json(need(facts, "capabilities")),
      " as const satisfies readonly { readonly name: Capability; readonly since: string; readonly feature: boolean }[]",
    ),
    constant(
      "Per supported version, oldest first: the frame types, capabilities, features and error codes a connection that negotiated it may see (`COMPAT-005`).",
      "VERSION_FACTS",
      json(versions),
      " as const satisfies { readonly [version: string]: VersionFacts }",
    ),
    "",
    "/** A kind of id a session keeps unique (`ID-002`). */",
    'export type IdKind = "invocation" | "item" | "tool_call";',
    "",
    "/** What {@link SERVER_FRAME_FACTS} states of one server frame type. */",
    "export interface ServerFrameFacts {",
    "  readonly since: string;",
    "  readonly carries_state: boolean;",
    "  readonly event: boolean;",
    '  readonly answer: "always" | "sometimes" | "never";',
    "  /** `unless_open_stream`: not new when it ends the open stream; `unless_held`: new only when the state holds no such item. */",
    '  readonly introduces: readonly { readonly kind: IdKind; readonly member: string; readonly rule: "always" | "unless_open_stream" | "unless_held" }[];',
    "  readonly members_since: { readonly [path: string]: string };",
    "}",
    "",
    "/** What {@link CLIENT_FRAME_FACTS} states of one client frame type. */",
    "export interface ClientFrameFacts {",
    "  readonly since: string;",
    "  readonly answered_by: readonly ServerFrameType[];",
    "  readonly names: { readonly kind: IdKind; readonly member: string } | null;",
    "  readonly members_since: { readonly [path: string]: string };",
    "}",
    "",
    "/** What {@link VERSION_FACTS} states of one version. */",
    "export interface VersionFacts {",
    "  readonly client_frames: readonly ClientFrameType[];",
    "  readonly server_frames: readonly ServerFrameType[];",
    "  readonly capabilities: readonly Capability[];",
    "  readonly features: readonly Capability[];",
    "  readonly error_codes: readonly ErrorCode[];",
    "}",
    "",
  ];
  return out.join("\n");
}
