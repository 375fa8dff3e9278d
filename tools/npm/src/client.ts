// ChatwireClient: one Chatwire session kept alive over WebSocket connections. It opens each
// connection with the subprotocol, sends `session.hello` (offering 1.3 down to 1.0; resuming with the
// latest token and the `seq` of the state it holds), reconnects with bounded exponential backoff,
// stops for good on fatal errors and takeover, correlates answers to requests by `in_reply_to` with
// a deadline, and hands the application the current UiState, which 1.1's `ui_state_patch` frames
// change in place of whole states (a patch that does not fit the state held: resume, `STATE-041`)
// and whose streamed assistant text 1.1's deltas grow (`STATE-042`, the one reducer rule a client
// runs; a refused delta is handled like a failing patch, `STREAM-007`), and whose reasoning items
// 1.3's `chat.reasoning_delta` grows alike (`STATE-054`, feature `reasoning`). With 1.2's `cancel` it stops
// the current run (`chat.cancel`, answered by `chat.cancel_accepted`, which changes no state).
// Where 1.2's `multi_attach` is in force its resume attaches beside the session's other tabs
// (`ATTACH-001`): they all stay live, each folding the same state frames; `takeOver()` resumes
// without `multi_attach` instead, closing the others (`ATTACH-002`). A client that another tab
// took the session from (`session_taken_over`) or that the server detached past its bound
// (`session_detached`, `ATTACH-003`) stops: reconnecting on its own would displace another view.
// With the `window` option and 1.2's `state_window` it holds a view: the newest items and the
// always-held older ones (spec/window.md), pages back with `loadOlder()` (`chat.history_request`,
// merged from its `chat.history_page`), takes a fresh window's snapshot after a cut like any
// snapshot, and resumes naming its cursor (`resume.before`) so a catch-up patches that view.
//
// With 1.3's `usage` each run slice's `chat.run_complete` says what it used (the `usage` event) and
// the state sums it (`state.usage`).
//
// The socket is injected: browsers use the global WebSocket; Node 20 has none, so pass
// `(url, protocols) => new WebSocket(url, protocols)` from the `ws` package.
import {
  type AgentScript,
  type Capability,
  type ChatCancelAccepted,
  type ChatHistoryPage,
  type ChatRetryAccepted,
  type ChatRewindComplete,
  type ChatRunComplete,
  type ChatToolCallComplete,
  type ChatToolCallDismiss,
  type ChatUserMessageAccepted,
  type ClientFrame,
  type ErrorCode,
  type ErrorFrame,
  type Limits,
  type ResponseOutcome,
  type ServerFrame,
  type SessionHello,
  type SessionWelcome,
  type UiState,
  type Usage,
} from "./generated/protocol.js";
import {
  ANSWERED_BY,
  CAPABILITY_FACTS,
  CLIENT_FRAME_FACTS,
  FATAL_CLOSE_CODES,
  MAX_HISTORY_PAGE_ITEMS,
  MAX_WINDOW_ITEMS,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
  SUPPORTED_VERSIONS,
} from "./generated/facts.js";
import { FOLDED_FEATURES } from "./folded.js";
import { StateTracker, type PatchRefusal } from "./state.js";
import { parseServerFrame, type FrameError } from "./validate.js";

// Timers and crypto exist in every runtime the client targets (browsers, Node 20+, Deno, Bun);
// declaring them here keeps the package free of DOM and Node lib types for its consumers.
type Timer = unknown;
declare function setTimeout(callback: () => void, ms: number): Timer;
declare function clearTimeout(timer: Timer): void;
declare function queueMicrotask(callback: () => void): void;

/**
 * An event handler property. Written as a method type so that sockets whose handlers take a richer
 * event (the DOM's `MessageEvent`, `ws`'s `WebSocket.MessageEvent`) still fit.
 */
export type SocketHandler<E> = { handle(event: E): void }["handle"] | null;

/** The part of the WebSocket API the client uses; browsers' WebSocket and `ws` both fit. */
export interface ChatwireSocket {
  /** The subprotocol the server selected, once open. */
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: SocketHandler<unknown>;
  onmessage: SocketHandler<{ data: unknown }>;
  onclose: SocketHandler<{ code: number; reason: string }>;
  onerror: SocketHandler<unknown>;
}

/** Opens a socket to `url` offering `protocols`. */
export type SocketFactory = (url: string, protocols: string[]) => ChatwireSocket;

/** What a client needs to resume a session; keep it (e.g. in sessionStorage) to survive a reload. */
export interface SessionResume {
  session_id: string;
  resume_token: string;
  last_seq: number;
}

/** The session as the latest welcome described it; `last_seq` is the highest `seq` seen. */
export interface SessionInfo extends SessionResume {
  version: string;
  capabilities: Capability[];
  /** The features in force on this connection (1.1 `welcome.features`); none on a 1.0 connection. */
  features: Capability[];
  /** With `resume_catch_up` in force: the most events a catch-up patch covers (1.1). */
  resume_retention?: number;
  limits: Limits;
  resumed: boolean;
}

/**
 * The newest version this client speaks: the protocol's own (1.3: it applies
 * `chat.reasoning_delta` as it applies text deltas, and everything else of 1.3 reaches it as state).
 */
const NEWEST_SPOKEN = PROTOCOL_VERSION;

/**
 * The versions a client offers by default, newest first: a 1.3 server answers 1.3 (`reasoning`,
 * `usage`), a 1.2 server 1.2 (`cancel`, `response_schema`), a 1.1 server 1.1 (patches and catch-up
 * resumes), a 1.0 server 1.0 (`SESSION-012`). The first hello offers those from 1.1 on with the
 * features the client folds ({@link FOLDED_FEATURES}); 1.0 comes in the whole offer a server that
 * speaks none of them gets next.
 */
export const OFFERED_VERSIONS: readonly string[] = SUPPORTED_VERSIONS.slice(SUPPORTED_VERSIONS.indexOf(NEWEST_SPOKEN));

/**
 * The features a takeover asks for when the client has no list of its own and no welcome to copy
 * one from: every feature it folds but `multi_attach` (a takeover closes the other tabs) and
 * `state_window` (a windowed client names its own features), and a server ignores names it does
 * not implement.
 */
const TAKEOVER_FEATURES: readonly Capability[] = FOLDED_FEATURES.filter((f) => f !== "multi_attach" && f !== "state_window");

/**
 * Why a client stopped because its session lives on elsewhere: another connection took it over
 * (`session_taken_over`, close 4001, `SESSION-010`), or the server detached this connection, the
 * earliest attached, to keep its bound on attached connections (`session_detached`, close 4003,
 * `ATTACH-003`). Either way `takeOver()` brings the session back here.
 */
export type DisplacedCode = "session_taken_over" | "session_detached";

/** The close codes of a displaced connection, for a close that arrives without its error frame. */
const DISPLACED_CLOSE: { readonly [code: number]: DisplacedCode } = {
  [FATAL_CLOSE_CODES.session_taken_over]: "session_taken_over",
  [FATAL_CLOSE_CODES.session_detached]: "session_detached",
};

/** Consecutive resumes for a patch that did not apply, after which the client gives up. */
const MAX_RESYNCS = 3;

/** `version` ("MAJOR.MINOR") as numbers; null when it is not one. */
function parseVersion(version: string): [number, number] | null {
  const [major, minor] = version.split(".").map(Number);
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) return null;
  return [major, minor];
}

/** Whether `version` is older than `since` (both "MAJOR.MINOR"); a malformed version is older. */
function olderThan(version: string, since: string): boolean {
  const v = parseVersion(version);
  const s = parseVersion(since);
  if (v === null || s === null) return true;
  return v[0] < s[0] || (v[0] === s[0] && v[1] < s[1]);
}

/** The minor that defines `multi_attach` (spec/attach.md), where a takeover needs its own offer. */
const MULTI_ATTACH_SINCE: string = CAPABILITY_FACTS.find((c) => c.name === "multi_attach")?.since ?? PROTOCOL_VERSION;

/** The minor that added `member` to `session.hello`, as the protocol facts state it. */
function helloMemberSince(member: "features" | "window"): string {
  return CLIENT_FRAME_FACTS["session.hello"].members_since[member];
}

/** Whether `version` is below 1.1, where `session.hello` has no `features` (`SESSION-014`). */
function before11(version: string): boolean {
  return olderThan(version, helloMemberSince("features"));
}

/** Whether `version` is below 1.2, where `session.hello` has no `window` (`WINDOW-001`). */
function before12(version: string): boolean {
  return olderThan(version, helloMemberSince("window"));
}

/** The items a {@link ChatwireClient.loadOlder} page asks for when no limit is given. */
export const DEFAULT_PAGE_ITEMS = 100;

/** Bounded reconnection: the delay doubles from `initialDelayMs` up to `maxDelayMs`, with jitter. */
export interface ReconnectOptions {
  /** Delay before the first retry. Default 250 ms. */
  initialDelayMs?: number;
  /** Largest delay between retries. Default 10 s. */
  maxDelayMs?: number;
  /** Consecutive failed attempts after which the client gives up. Default 10. */
  maxAttempts?: number;
}

export interface ClientOptions {
  /** The server's ws:// or wss:// URL. */
  url: string;
  /** Opens sockets; defaults to the global WebSocket. */
  socket?: SocketFactory;
  /** Protocol versions offered in `session.hello`, newest first; default {@link OFFERED_VERSIONS}. `["1.0"]` pins 1.0. */
  versions?: string[];
  /**
   * The 1.1 features to ask for (`hello.features`). Only with an offer of 1.1 or later alone: a 1.0
   * server refuses the member (`SESSION-014`), so the constructor throws when a version below 1.1
   * is offered with it. Absent, the hello asks for {@link FOLDED_FEATURES}, every feature the
   * client folds (a server puts in force those it implements): the offer is then narrowed to 1.1
   * and later, and a server that speaks none of those versions gets the whole offer without
   * features on a new connection (it has no feature to put in force).
   */
  features?: Capability[];
  /** Free-form client name for the server's logs. */
  clientName?: string;
  /**
   * A session to resume on the first connection (e.g. read from sessionStorage). Where the server
   * negotiates 1.2 with `multi_attach` in force (the default offer), the resume attaches beside the
   * session's other open connections, which all stay live (`ATTACH-001`); set `takeOver` to close
   * them instead.
   */
  resume?: SessionResume | null;
  /**
   * Take the session of `resume` over on the first connection rather than attach beside its other
   * views: as {@link ChatwireClient.takeOver}, for the first welcome only; later reconnects attach
   * as usual. Default false.
   */
  takeOver?: boolean;
  /** A scripted agent (conformance mode only): sent with the hello that opens a new session. */
  script?: AgentScript;
  /**
   * Open and resume with a window of the newest `window` items (1 to 1000; 1.2, feature
   * `state_window`, spec/window.md): the state the client holds is then a *view*, those items plus
   * every older call that awaits (or awaited) a response and its output, and
   * {@link ChatwireClient.loadOlder} pages back from it. Default: no window, the whole state.
   *
   * `session.hello` carries `window` only with an offer of 1.2 or later alone (`WINDOW-001`): with
   * `versions` absent a windowed client offers the versions of {@link OFFERED_VERSIONS} from 1.2 on,
   * and if the server speaks none of them it falls back to the whole offer without a window; an
   * explicit `versions` with one below 1.2, or `features` without `state_window`, throws.
   * Where the server does not put `state_window` in force the client simply holds the whole state.
   */
  window?: number;
  /** Deadline for an answer to a request. Default 15 s. */
  requestTimeoutMs?: number;
  /** Deadline for the welcome after the socket opens. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** Reconnection policy, or `false` to never reconnect. */
  reconnect?: ReconnectOptions | false;
  /** Most requests awaiting an answer at once. Default 64. */
  maxPendingRequests?: number;
  /** Generates frame ids; default `c-` and a random UUID. */
  newId?: () => string;
}

/**
 * Where the client is. `closed` is final: after it the client never connects again on its own.
 * The one way back is {@link ChatwireClient.takeOver} on a client whose session lives on elsewhere
 * ({@link ChatwireClient.displaced}: taken over by another connection, or detached).
 */
export type ClientStatus = "idle" | "connecting" | "open" | "reconnecting" | "closed";

/** Why a request failed or the client closed. `code` is the server's error code or a local one. */
export type ClientErrorCode =
  | ErrorCode
  /** No answer within the deadline. */
  | "timeout"
  /** The connection dropped before the answer came; resending with the same id is safe. */
  | "disconnected"
  /** The client is closed (by `close()`, a fatal error or giving up). */
  | "closed"
  /** Too many requests await an answer. */
  | "too_many_requests"
  /** The server did not agree to the subprotocol. */
  | "subprotocol_refused"
  /** Reconnection gave up after `maxAttempts`. */
  | "unreachable"
  /** The server sent a frame that breaks the schemas, or patches that never apply. */
  | "protocol_violation"
  /** `takeOver()` was called on a client that has no session to take over (none was opened or given). */
  | "no_session"
  /** A `ui_state_patch` or a stream's delta did not apply to the state held; the client resumes to get the state again (`STATE-041`, `STREAM-007`). */
  | "resync";

/**
 * Where a windowed client's view stands ({@link ChatwireClient.window}): the window it asked for,
 * its cursor, and the size of the whole state.
 */
export interface WindowInfo {
  /** The window the hello asked for (`window`). */
  size: number;
  /**
   * The cursor: the id of the oldest item of the contiguous part of the view (the `before` of the
   * latest windowed snapshot or page). Null once the view reaches the session's first item:
   * nothing older to load.
   */
  before: string | null;
  /**
   * How many items the whole state holds: the `total` of the latest windowed snapshot or page,
   * moved by every item the state frames since added to the view or removed from it.
   */
  total: number;
}

/** An error the client reports, from the server (`frame` set) or its own. */
export class ChatwireError extends Error {
  override readonly name = "ChatwireError";
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly frame?: ErrorFrame,
    readonly details?: FrameError[],
  ) {
    super(message);
  }
}

/** A retry the client scheduled after a connection failed or dropped (the `reconnect` event). */
export interface ReconnectAttempt {
  /** Which retry this is: 1 for the first, up to `maxAttempts`. */
  attempt: number;
  /** The retries allowed in a row (`reconnect.maxAttempts`); after that the client gives up. */
  maxAttempts: number;
  /** When the retry starts, in ms from now. */
  delayMs: number;
  /** Why the connection failed or dropped, e.g. `cannot connect to ws://…: connect ECONNREFUSED 127.0.0.1:8080`. */
  reason: string;
}

export interface ClientEvents {
  /** Every valid server frame, after the client has applied it. */
  frame: (frame: ServerFrame) => void;
  /** The UiState changed (snapshot, update, patch, or a stream's delta). */
  state: (state: UiState) => void;
  /** The status changed. */
  status: (status: ClientStatus) => void;
  /** A connection failed or dropped and a retry is scheduled: log it to see why a client keeps reconnecting. */
  reconnect: (attempt: ReconnectAttempt) => void;
  /** A welcome arrived, or the resume token or `last_seq` moved: persist it to survive a reload. */
  session: (session: SessionInfo) => void;
  /** A problem not tied to a request: an uncorrelated server error, a resume the server refused, an invalid frame. */
  error: (error: ChatwireError) => void;
  /**
   * A run slice ended and said what it used (1.3, feature `usage`: `chat.run_complete.usage`).
   * The sums, per invocation and for the session, are the state's `usage` once the state frame
   * that follows arrives: show those, which a reload and every tab show alike.
   */
  usage: (usage: Usage, frame: ChatRunComplete) => void;
}

/**
 * What the client does with each server error code; one place, exhaustive over `ErrorCode`.
 * - `reject`: the request it answers (by `in_reply_to`) fails with the code; the session goes on.
 *   Without a matching request the error is reported through the `error` event.
 * - `final`: the client stops for good (`closed`), reporting the error. Reconnecting would not
 *   help: the server speaks none of our versions, refuses our script, or the session lives on
 *   elsewhere: another connection took it over, or the server detached this one past its bound on
 *   attached connections (reconnecting would displace another view and start a tug of war between
 *   tabs; `takeOver()` does it when the user asks).
 * - `new_session`: the resume was refused (the session is gone): report it, open a new session.
 * - `resume_from_zero`: the server holds less than this client saw (it lost data): resume once
 *   more with `last_seq: 0`; the snapshot that follows is authoritative.
 */
export const ERROR_HANDLING: { readonly [C in ErrorCode]: "reject" | "final" | "new_session" | "resume_from_zero" } = {
  malformed_frame: "reject",
  binary_frame: "reject",
  unknown_type: "reject",
  invalid_frame: "reject",
  frame_too_large: "reject",
  hello_required: "reject",
  already_open: "reject",
  unsupported_version: "final",
  resume_rejected: "new_session",
  resume_cursor_ahead: "resume_from_zero",
  script_not_allowed: "final",
  invalid_script: "final",
  duplicate_message: "reject",
  run_in_progress: "reject",
  unknown_tool_call: "reject",
  tool_call_settled: "reject",
  tool_call_not_awaiting: "reject",
  unknown_invocation: "reject",
  session_taken_over: "final",
  session_detached: "final",
  internal_error: "reject",
  capability_not_offered: "reject",
  unknown_item: "reject",
  item_not_in_latest_turn: "reject",
  retry_keeps_open_call: "reject",
  run_not_active: "reject",
  response_invalid: "reject",
  stale_cursor: "reject",
};

interface Pending {
  expects: ReadonlySet<ServerFrame["type"]>;
  resolve: (frame: ServerFrame) => void;
  reject: (error: ChatwireError) => void;
  timer: Timer;
}

type Listeners = { [K in keyof ClientEvents]: Set<ClientEvents[K]> };

function defaultSocket(): SocketFactory {
  const Global = (globalThis as unknown as { WebSocket?: new (url: string, protocols: string[]) => ChatwireSocket }).WebSocket;
  if (Global === undefined) {
    throw new TypeError("no global WebSocket (Node 20): pass `socket: (url, p) => new WebSocket(url, p)` from the ws package");
  }
  return (url, protocols) => new Global(url, protocols);
}

/**
 * What a socket's error event says, if anything: Node's `ws` gives an ErrorEvent whose `message`
 * (and `error.code`) name the cause (`connect ECONNREFUSED 127.0.0.1:8080`); browsers say nothing.
 */
function describeSocketError(event: unknown): string | null {
  if (typeof event !== "object" || event === null) return null;
  const { message, error } = event as { message?: unknown; error?: { code?: unknown; message?: unknown } | null };
  const text = typeof message === "string" && message !== "" ? message : typeof error?.message === "string" && error.message !== "" ? error.message : null;
  const code = typeof error?.code === "string" ? error.code : null;
  if (text === null) return code;
  return code === null || text.includes(code) ? text : `${code}: ${text}`;
}

function defaultId(): string {
  return `c-${(globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID()}`;
}

/** UTF-8 length of a string, without TextEncoder allocations for the common ASCII case. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export class ChatwireClient {
  readonly #options: Required<Omit<ClientOptions, "resume" | "script" | "clientName" | "reconnect" | "features" | "takeOver" | "window">> & {
    reconnect: Required<ReconnectOptions> | false;
  };
  readonly #script: AgentScript | undefined;
  readonly #features: Capability[] | undefined;
  /** No `features` were given: the hello asks for {@link FOLDED_FEATURES} (false once the offer fell back below 1.1). */
  #foldedOffer = false;
  readonly #clientName: string | undefined;
  readonly #listeners: Listeners = {
    frame: new Set(),
    state: new Set(),
    status: new Set(),
    reconnect: new Set(),
    session: new Set(),
    error: new Set(),
    usage: new Set(),
  };
  readonly #pending = new Map<string, Pending>();
  readonly #tracker = new StateTracker();
  #status: ClientStatus = "idle";
  #socket: ChatwireSocket | null = null;
  #session: SessionInfo | null = null;
  #resume: SessionResume | null;
  #helloId: string | null = null;
  #attempts = 0;
  /** What the current socket's error event said (Node's `ws` names the cause, e.g. ECONNREFUSED). */
  #socketError: string | null = null;
  #retryTimer: Timer | null = null;
  #handshakeTimer: Timer | null = null;
  #closeError: ChatwireError | null = null;
  /** Resumes in a row for patches that did not apply; reset by every state that applies. */
  #resyncs = 0;
  /** The next resume asks for a snapshot (`last_seq` 0): the state held is not to be built on. */
  #wantSnapshot = false;
  /** `connect()` and `takeOver()` promises waiting for the next welcome. */
  #welcomeWaiters: { resolve: (w: SessionWelcome) => void; reject: (e: ChatwireError) => void }[] = [];
  /** The next hello takes the session over (`takeOver()`), until a welcome answers one. */
  #takingOver = false;
  /** The hello in flight takes over with a 1.2-only offer (its `unsupported_version` is not final). */
  #helloTakesOver = false;
  /** The window every hello asks for; undefined: none (or dropped for a server without 1.2). */
  #window: number | undefined;
  /**
   * The whole offer, for a server that speaks none of the versions the defaulted offer was narrowed
   * to (from 1.2 on for a window, from 1.1 on for the folded features); null: no fallback.
   */
  #offerFallback: string[] | null = null;
  /** The hello in flight makes the narrowed offer (its `unsupported_version` or `invalid_frame` is not final). */
  #helloNarrowed = false;
  /**
   * The view's cursor, and how many items older than it the view does not hold (the latest windowed
   * snapshot's or page's `total` less the items held then); null: the whole state is held.
   */
  #view: { before: string | null; hidden: number } | null = null;
  /** The `chat.history_request` awaiting its page: the page merges at the cursor it named. */
  #pageRequest: { id: string; before: string } | null = null;
  /** `loadOlder()` calls, one after another. */
  #older: Promise<unknown> = Promise.resolve();

  constructor(options: ClientOptions) {
    const reconnect = options.reconnect === false ? false : { initialDelayMs: 250, maxDelayMs: 10_000, maxAttempts: 10, ...options.reconnect };
    this.#options = {
      url: options.url,
      socket: options.socket ?? defaultSocket(),
      versions: options.versions ?? [...OFFERED_VERSIONS],
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
      maxPendingRequests: options.maxPendingRequests ?? 64,
      newId: options.newId ?? defaultId,
      reconnect,
    };
    if (options.window !== undefined) {
      const size = options.window;
      if (!Number.isInteger(size) || size < 1 || size > MAX_WINDOW_ITEMS) {
        throw new RangeError(`window must be an integer from 1 to ${MAX_WINDOW_ITEMS} (WINDOW-001), not ${size}`);
      }
      if (options.versions === undefined) {
        this.#offerFallback = this.#options.versions;
        this.#options.versions = this.#options.versions.filter((v) => !before12(v));
      } else if (options.versions.some(before12)) {
        throw new TypeError("window needs an offer of 1.2 or later only: hello.window is a 1.2 member (WINDOW-001)");
      }
      if (options.features !== undefined && !options.features.includes("state_window")) {
        throw new TypeError("window needs the state_window feature: list it in features, or leave features out");
      }
      this.#window = size;
    }
    if (options.features !== undefined && this.#options.versions.some(before11)) {
      throw new TypeError("features need an offer of 1.1 or later only: a 1.0 server refuses hello.features (SESSION-014)");
    }
    this.#features = options.features === undefined ? undefined : [...options.features];
    if (options.features === undefined && this.#options.versions.some((v) => !before11(v))) {
      // Only what the client folds may be put in force (FOLDED_FEATURES).
      if (this.#options.versions.some(before11)) {
        this.#offerFallback ??= this.#options.versions;
        this.#options.versions = this.#options.versions.filter((v) => !before11(v));
      }
      this.#foldedOffer = true;
    }
    this.#script = options.script;
    this.#clientName = options.clientName;
    this.#resume = options.resume ?? null;
    this.#takingOver = options.takeOver === true && this.#resume !== null;
  }

  /** Where the client is. */
  get status(): ClientStatus {
    return this.#status;
  }

  /** The current UiState, once the first snapshot arrived. */
  get state(): UiState | null {
    return this.#tracker.state;
  }

  /** The session of the latest welcome. */
  get session(): SessionInfo | null {
    return this.#session;
  }

  /** Why the client closed, when it closed because of an error. */
  get closeError(): ChatwireError | null {
    return this.#closeError;
  }

  /**
   * Whether the client stopped because its session lives on elsewhere, and how: another connection
   * took it over (`session_taken_over`), or the server detached this one, the earliest attached, to
   * keep its bound (`session_detached`). Null otherwise. Show the user where the session went and
   * offer {@link takeOver} ("use here"): the client never reconnects on its own from this.
   */
  get displaced(): DisplacedCode | null {
    const code = this.#status === "closed" ? this.#closeError?.code : undefined;
    return code === "session_taken_over" || code === "session_detached" ? code : null;
  }

  /**
   * Whether this connection is attached beside the session's other connections: `multi_attach` is
   * in force (1.2, `ATTACH-001`), so another tab's resume attaches too rather than taking over, and
   * the state can change by another tab's requests (a user message sent elsewhere shows up in the
   * state alone, without a `chat.user_message_accepted` here).
   */
  get attached(): boolean {
    return this.#session?.features.includes("multi_attach") ?? false;
  }

  /**
   * Where the view a windowed client holds stands (spec/window.md): null when the client holds the
   * whole state (no `window` asked for, `state_window` not in force, or no state yet).
   */
  get window(): WindowInfo | null {
    if (this.#view === null || this.#window === undefined) return null;
    return { size: this.#window, before: this.#view.before, total: this.#view.hidden + (this.#tracker.state?.items.length ?? 0) };
  }

  /** Whether there are items older than the view to load ({@link loadOlder}). */
  get hasOlder(): boolean {
    return this.#view !== null && this.#view.before !== null;
  }

  /** Listens to an event; returns the function that stops listening. */
  on<K extends keyof ClientEvents>(event: K, listener: ClientEvents[K]): () => void {
    this.#listeners[event].add(listener);
    return () => this.#listeners[event].delete(listener);
  }

  /** Calls `listener` with the current UiState now (if any) and on every change. */
  subscribe(listener: (state: UiState) => void): () => void {
    const off = this.on("state", listener);
    if (this.#tracker.state !== null) listener(this.#tracker.state);
    return off;
  }

  /** Opens the first connection; resolves with the first welcome. */
  connect(): Promise<SessionWelcome> {
    if (this.#status !== "idle") return Promise.reject(new ChatwireError("closed", "connect() may be called once"));
    const welcome = this.#nextWelcome();
    this.#open();
    return welcome;
  }

  /**
   * Takes the session over ("use here"): resumes it on a new connection where `multi_attach` is not
   * in force, so the server closes every other connection on it with `session_taken_over`
   * (`ATTACH-002`; the spec's way to ask, spec/attach.md). With a session that negotiated 1.2 the
   * hello offers only 1.2 and lists the features in force minus `multi_attach` (or `features` from
   * the options, minus it); with an older server an ordinary resume already takes over. Resolves
   * with the welcome; later reconnects attach as usual.
   *
   * Works on an open client (the current connection is replaced: requests awaiting an answer fail
   * with `disconnected`, and resending them with the same id is safe), one that is reconnecting, and
   * one that stopped because it was {@link displaced}, which it opens again. Rejects with the close
   * error on a client closed for any other reason, and with `no_session` when there is no session.
   */
  takeOver(): Promise<SessionWelcome> {
    if (this.#status === "closed" && this.displaced === null) {
      return Promise.reject(this.#closeError ?? new ChatwireError("closed", "the client is closed"));
    }
    if (this.#resume === null) return Promise.reject(new ChatwireError("no_session", "there is no session to take over"));
    this.#takingOver = true;
    if (this.#status === "idle") return this.connect();
    const welcome = this.#nextWelcome();
    if (this.#socket !== null) this.#discard(this.#socket, 1000, "taking the session over");
    this.#clearTimers();
    this.#failPending(new ChatwireError("disconnected", "the connection was replaced to take the session over; the answer is unknown, resending with the same id is safe"));
    this.#closeError = null;
    this.#helloId = null;
    this.#attempts = 0;
    this.#open();
    return welcome;
  }

  /** Sends a user message; resolves with its acceptance. */
  sendMessage(text: string, id: string = this.#options.newId()): Promise<ChatUserMessageAccepted> {
    return this.#request({ type: "chat.user_message", id, text }) as Promise<ChatUserMessageAccepted>;
  }

  /** Answers a pending tool call; resolves with the frame that settled it. */
  respond(toolCallId: string, outcome: ResponseOutcome, id: string = this.#options.newId()): Promise<ChatToolCallComplete | ChatToolCallDismiss> {
    return this.#request({ type: "chat.tool_call_response", id, tool_call_id: toolCallId, outcome }) as Promise<
      ChatToolCallComplete | ChatToolCallDismiss
    >;
  }

  /** Submits a value (any JSON) for a pending tool call. */
  submit(toolCallId: string, value: unknown): Promise<ChatToolCallComplete | ChatToolCallDismiss> {
    return this.respond(toolCallId, { action: "submit", value });
  }

  /** Dismisses a pending tool call. */
  dismiss(toolCallId: string, reason?: string): Promise<ChatToolCallComplete | ChatToolCallDismiss> {
    return this.respond(toolCallId, reason === undefined ? { action: "dismiss" } : { action: "dismiss", reason });
  }

  /** Removes the turn `beforeInvocationId` and every later one (needs the `rewind` capability). */
  rewind(beforeInvocationId: string, id: string = this.#options.newId()): Promise<ChatRewindComplete> {
    return this.#request({ type: "chat.rewind", id, before_invocation_id: beforeInvocationId }) as Promise<ChatRewindComplete>;
  }

  /**
   * Cuts the latest turn right after `afterItemId` (after its output, for a tool call that has one)
   * and runs it again from there, keeping what came before: a completed call is not executed again
   * (needs the `retry` capability, 1.1). Resolves with the `chat.retry_accepted`, whose
   * `removed_item_ids` say what the cut removed.
   */
  retry(afterItemId: string, id: string = this.#options.newId()): Promise<ChatRetryAccepted> {
    return this.#request({ type: "chat.retry", id, after_item_id: afterItemId }) as Promise<ChatRetryAccepted>;
  }

  /**
   * Stops the run of `invocationId` (the state's `run.invocation_id`) while it is `running` or
   * `awaiting_input` (1.2, needs the `cancel` capability: show a Stop button only when
   * `session.capabilities` lists it). Resolves with the `chat.cancel_accepted`; the frames that
   * close the run follow it (the stream ends with the text so far, open calls are dismissed, the
   * run completes `cancelled`), and the state the client holds shows them. Rejects with a
   * {@link ChatwireError} carrying the server's code: `run_not_active` (the run is over, or
   * another one is current), `unknown_invocation`, `capability_not_offered`, or `unknown_type`
   * from a server that negotiated 1.0 or 1.1 (`chat.cancel` is a 1.2 frame).
   */
  cancel(invocationId: string, id: string = this.#options.newId()): Promise<ChatCancelAccepted> {
    return this.#request({ type: "chat.cancel", id, invocation_id: invocationId }) as Promise<ChatCancelAccepted>;
  }

  /**
   * Loads up to `limit` (1 to 500, default {@link DEFAULT_PAGE_ITEMS}) items just older than the
   * view a windowed client holds (1.2, `state_window`, `WINDOW-008`): sends `chat.history_request`
   * naming the current cursor and merges the `chat.history_page` that answers into the state held
   * (the always-held items the page carries replace the copies held, so no item is held twice),
   * then resolves with that page; `window.before` moves to the page's `before`. Later patches reach
   * the paged-in items like any others (an old call that settles shows it).
   *
   * Resolves with null, sending nothing, when the client holds the session's first item (its
   * window reached it, or it holds the whole state). Calls run one after another, each from the
   * cursor the previous one left. Rejects with a {@link ChatwireError}: `stale_cursor` when a cut
   * (rewind, retry) removed the cursor item before the request was read (the fresh window's snapshot
   * has already replaced the state held: call again to page from it), `capability_not_offered`
   * where `state_window` is not in force, `disconnected`, `timeout` or `closed` as any request;
   * with a RangeError for a `limit` out of range.
   */
  loadOlder(limit: number = DEFAULT_PAGE_ITEMS): Promise<ChatHistoryPage | null> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE_ITEMS) {
      return Promise.reject(new RangeError(`limit must be an integer from 1 to ${MAX_HISTORY_PAGE_ITEMS} (WINDOW-007), not ${limit}`));
    }
    const page = this.#older.then(() => this.#loadOlder(limit));
    this.#older = page.catch(() => undefined);
    return page;
  }

  async #loadOlder(limit: number): Promise<ChatHistoryPage | null> {
    if (this.#status === "closed") throw this.#closeError ?? new ChatwireError("closed", "the client is closed");
    if (this.#status !== "open" || this.#tracker.state === null) {
      throw new ChatwireError("disconnected", "not connected, or no state held yet; retry once the status is open");
    }
    const before = this.#view?.before ?? null;
    if (before === null) return null;
    const id = this.#options.newId();
    this.#pageRequest = { id, before };
    try {
      return (await this.#request({ type: "chat.history_request", id, before, limit })) as ChatHistoryPage;
    } finally {
      if (this.#pageRequest?.id === id) this.#pageRequest = null;
    }
  }

  /** Closes the connection for good; pending requests fail with `closed`. */
  close(): void {
    this.#finish(null);
  }

  // --- connection lifecycle -------------------------------------------------------------------

  #setStatus(status: ClientStatus): void {
    if (this.#status === status) return;
    this.#status = status;
    this.#emit("status", status);
  }

  #emit<K extends keyof ClientEvents>(event: K, ...args: Parameters<ClientEvents[K]>): void {
    for (const listener of [...this.#listeners[event]]) {
      try {
        (listener as (...a: Parameters<ClientEvents[K]>) => void)(...args);
      } catch (error) {
        // A failing listener must not break the session; surface it asynchronously.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  #nextWelcome(): Promise<SessionWelcome> {
    return new Promise<SessionWelcome>((resolve, reject) => {
      this.#welcomeWaiters.push({ resolve, reject });
    });
  }

  #open(): void {
    this.#setStatus(this.#attempts === 0 && this.#session === null ? "connecting" : "reconnecting");
    let socket: ChatwireSocket;
    try {
      socket = this.#options.socket(this.#options.url, [SUBPROTOCOL]);
    } catch (error) {
      this.#dropped(`cannot open a socket: ${(error as Error).message}`);
      return;
    }
    this.#socket = socket;
    this.#socketError = null;
    let opened = false;
    socket.onopen = () => {
      if (socket !== this.#socket) return;
      opened = true;
      if (socket.protocol !== SUBPROTOCOL) {
        this.#finish(new ChatwireError("subprotocol_refused", `the server did not select the ${SUBPROTOCOL} subprotocol`));
        return;
      }
      this.#sendHello();
    };
    socket.onmessage = (event) => {
      if (socket === this.#socket) this.#receive(event.data);
    };
    socket.onclose = (event) => {
      if (socket !== this.#socket) return;
      const displaced = opened ? DISPLACED_CLOSE[event.code] : undefined;
      if (displaced !== undefined) {
        // The error frame that says so normally comes first and has already stopped the client;
        // a close code alone says the same, and reconnecting would displace another view.
        this.#finish(new ChatwireError(displaced, `the server closed the connection with ${event.code}${event.reason ? ` (${event.reason})` : ""}: the session is open elsewhere`));
        return;
      }
      const closed = `${event.code}${event.reason ? ` ${event.reason}` : ""}`;
      const cause = this.#socketError === null ? "" : `: ${this.#socketError}`;
      this.#dropped(opened ? `connection closed (${closed})${cause}` : `cannot connect to ${this.#options.url}${cause} (close ${closed})`);
    };
    socket.onerror = (event) => {
      // A close event always follows; it decides what happens next and names this cause.
      if (socket === this.#socket) this.#socketError = describeSocketError(event);
    };
    this.#handshakeTimer = setTimeout(() => {
      if (socket !== this.#socket) return;
      this.#discard(socket, 4000, "no welcome in time");
      this.#dropped("no welcome within the handshake deadline");
    }, this.#options.handshakeTimeoutMs);
  }

  #sendHello(): void {
    const hello: SessionHello = { type: "session.hello", id: this.#options.newId(), versions: this.#options.versions };
    if (this.#clientName !== undefined) hello.client = this.#clientName;
    if (this.#features !== undefined) hello.features = [...this.#features];
    else if (this.#foldedOffer) hello.features = [...FOLDED_FEATURES];
    this.#helloTakesOver = false;
    this.#helloNarrowed = this.#offerFallback !== null;
    if (this.#window !== undefined) hello.window = this.#window;
    if (this.#resume !== null) {
      hello.resume = { ...this.#resume, last_seq: this.#resumeSeq(this.#resume) };
      // The view held at that seq, for a catch-up that patches it (`WINDOW-012`).
      const before = this.#view?.before ?? null;
      if (hello.resume.last_seq > 0 && before !== null) hello.resume.before = before;
      const takeover = this.#takingOver ? this.#takeoverOffer() : null;
      if (takeover !== null) {
        hello.versions = takeover.versions;
        hello.features = takeover.features;
        this.#helloTakesOver = true;
      }
    } else if (this.#script !== undefined) hello.script = this.#script;
    this.#helloId = hello.id;
    this.#socket?.send(JSON.stringify(hello));
  }

  /**
   * The offer of a hello that takes the session over where `multi_attach` exists (spec/attach.md):
   * the offered versions from 1.2 on, and features without `multi_attach`. Null where an ordinary
   * resume takes over anyway: the client does not offer 1.2, or the session negotiated less.
   */
  #takeoverOffer(): { versions: string[]; features: Capability[] } | null {
    const versions = this.#options.versions.filter((v) => !olderThan(v, MULTI_ATTACH_SINCE));
    if (versions.length === 0) return null;
    const session = this.#session;
    if (session !== null && olderThan(session.version, MULTI_ATTACH_SINCE)) return null;
    const wanted = this.#features ?? (session !== null ? session.features : TAKEOVER_FEATURES);
    return { versions, features: wanted.filter((f) => f !== "multi_attach") };
  }

  /** Stops listening to a socket and closes it. */
  #discard(socket: ChatwireSocket, code: number, reason: string): void {
    socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
    try {
      socket.close(code, reason);
    } catch {
      // Closing a socket that never opened may throw; it is gone either way.
    }
    if (this.#socket === socket) this.#socket = null;
  }

  #clearTimers(): void {
    clearTimeout(this.#handshakeTimer);
    clearTimeout(this.#retryTimer);
    this.#handshakeTimer = this.#retryTimer = null;
  }

  /** The connection is gone without a final error: fail pending requests, then retry. */
  #dropped(why: string): void {
    if (this.#status === "closed") return;
    if (this.#socket !== null) this.#discard(this.#socket, 1000, "reconnecting");
    this.#clearTimers();
    this.#failPending(new ChatwireError("disconnected", `${why}; the answer is unknown, resending with the same id is safe`));
    const policy = this.#options.reconnect;
    if (policy === false || this.#attempts >= policy.maxAttempts) {
      this.#finish(new ChatwireError("unreachable", policy === false ? why : `${why}; gave up after ${this.#attempts} attempts`));
      return;
    }
    // Full jitter: a random delay up to the exponential bound spreads reconnecting clients.
    const bound = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** this.#attempts);
    this.#attempts += 1;
    this.#setStatus("reconnecting");
    const delayMs = Math.round(bound / 2 + (Math.random() * bound) / 2);
    this.#retryTimer = setTimeout(() => this.#open(), delayMs);
    this.#emit("reconnect", { attempt: this.#attempts, maxAttempts: policy.maxAttempts, delayMs, reason: why });
  }

  /** The client stops for good; `error` says why (null: closed by the application). */
  #finish(error: ChatwireError | null): void {
    if (this.#status === "closed") return;
    this.#closeError = error;
    this.#clearTimers();
    if (this.#socket !== null) this.#discard(this.#socket, 1000, "client closed");
    const reason = error ?? new ChatwireError("closed", "the client was closed");
    this.#failPending(reason);
    for (const waiter of this.#welcomeWaiters.splice(0)) waiter.reject(reason);
    this.#setStatus("closed");
    if (error !== null) this.#emit("error", error);
  }

  #failPending(error: ChatwireError): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      pending.reject(error);
    }
  }

  // --- frames ---------------------------------------------------------------------------------

  /** Sends `frame` and resolves with the frame that answers it (a type of {@link ANSWERED_BY}). */
  #request(frame: ClientFrame): Promise<ServerFrame> {
    const expects: readonly ServerFrame["type"][] = ANSWERED_BY[frame.type];
    if (this.#status === "closed") return Promise.reject(this.#closeError ?? new ChatwireError("closed", "the client is closed"));
    if (this.#status !== "open" || this.#socket === null) {
      return Promise.reject(new ChatwireError("disconnected", "not connected; retry once the status is open"));
    }
    if (this.#pending.has(frame.id)) return Promise.reject(new ChatwireError("duplicate_message", `a request with id ${frame.id} is already waiting`));
    if (this.#pending.size >= this.#options.maxPendingRequests) {
      return Promise.reject(new ChatwireError("too_many_requests", `${this.#pending.size} requests already await an answer`));
    }
    const text = JSON.stringify(frame);
    const limit = this.#session?.limits.max_frame_bytes;
    if (limit !== undefined && utf8Length(text) > limit) {
      return Promise.reject(new ChatwireError("frame_too_large", `the frame is larger than the server's limit of ${limit} bytes`));
    }
    return new Promise<ServerFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(frame.id);
        reject(new ChatwireError("timeout", `no answer to ${frame.type} ${frame.id} within ${this.#options.requestTimeoutMs} ms`));
      }, this.#options.requestTimeoutMs);
      this.#pending.set(frame.id, { expects: new Set(expects), resolve, reject, timer });
      this.#socket?.send(text);
    });
  }

  #receive(data: unknown): void {
    if (typeof data !== "string") {
      this.#emit("error", new ChatwireError("protocol_violation", "the server sent a binary message"));
      return;
    }
    const parsed = parseServerFrame(data);
    if (!parsed.ok) {
      const first = parsed.errors[0]?.message ?? "invalid frame";
      this.#emit("error", new ChatwireError("protocol_violation", `the server sent an invalid frame: ${first}`, undefined, parsed.errors));
      return;
    }
    const frame = parsed.frame;
    if (frame.type === "ui_state_patch" || frame.type === "chat.assistant_message_delta" || frame.type === "chat.reasoning_delta") {
      const result = frame.type === "ui_state_patch" ? this.#tracker.patch(frame) : this.#tracker.delta(frame);
      if (!result.ok) {
        // The frame and every later frame of this connection are discarded (STATE-041, STREAM-007).
        this.#resync(result);
        return;
      }
      this.#resyncs = 0;
    }
    if (frame.seq !== undefined) this.#advance(frame.seq);
    switch (frame.type) {
      case "session.welcome":
        this.#welcome(frame);
        break;
      case "ui_state_snapshot":
        this.#resyncs = 0;
        // A windowed snapshot (at open, on a resume, or a fresh window after a cut, `WINDOW-006`)
        // replaces the view and its cursor; any other holds the whole state.
        this.#view = frame.window === undefined ? null : { before: frame.window.before ?? null, hidden: frame.window.total - frame.state.items.length };
        this.#emit("state", this.#tracker.snapshot(frame));
        break;
      case "chat.history_page":
        if (!this.#page(frame)) return;
        break;
      case "ui_state_updated":
        this.#resyncs = 0;
        this.#emit("state", this.#tracker.update(frame));
        break;
      case "ui_state_patch":
      case "chat.assistant_message_delta":
      case "chat.reasoning_delta":
        // Applied above; a patch or delta that did not apply never gets here.
        if (this.#tracker.state !== null) this.#emit("state", this.#tracker.state);
        break;
      case "error":
        this.#serverError(frame);
        break;
      case "chat.cancel_accepted":
        // An answer, like an error: it changes no state (`CANCEL-002`) and only settles the
        // request below. The frames that close the run follow, each with its state frame.
        break;
      case "chat.run_complete":
        if (frame.usage !== undefined) this.#emit("usage", frame.usage, frame);
        break;
      default:
        break;
    }
    if (frame.type !== "error" && "in_reply_to" in frame && frame.in_reply_to !== undefined) this.#answer(frame.in_reply_to, frame);
    this.#emit("frame", frame);
  }

  /**
   * Merges the page that answers the `chat.history_request` awaiting one (`WINDOW-008`): its items
   * go just before the cursor item, the always-held items it carries replace the copies held, and
   * its `before` is the new cursor. It changes no state, so the state's `seq` stays. A page that
   * answers nothing awaited (a request of a dropped connection) is ignored; one that does not fit
   * the view held makes the client resume for a snapshot, as a patch that does not apply does.
   */
  #page(frame: ChatHistoryPage): boolean {
    const request = this.#pageRequest;
    if (request === null || request.id !== frame.in_reply_to) return true;
    this.#pageRequest = null;
    const state = request.before === (this.#view?.before ?? null) ? this.#tracker.page(request.before, frame.items) : null;
    if (state === null) {
      this.#resync({ reason: "page_mismatch", before: request.before });
      return false;
    }
    this.#view = { before: frame.before ?? null, hidden: frame.total - state.items.length };
    this.#resyncs = 0;
    this.#emit("state", state);
    return true;
  }

  /** Keeps the highest `seq` seen: it is the `last_seq` of the next resume. */
  #advance(seq: number): void {
    if (this.#session !== null && seq > this.#session.last_seq) {
      this.#session.last_seq = seq;
      this.#resume = { session_id: this.#session.session_id, resume_token: this.#session.resume_token, last_seq: seq };
      this.#emit("session", { ...this.#session });
    }
  }

  #welcome(frame: SessionWelcome): void {
    clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
    this.#helloId = null;
    this.#attempts = 0;
    this.#takingOver = this.#helloTakesOver = false;
    if (this.#session !== null && this.#session.session_id !== frame.session_id) {
      this.#tracker.reset();
      this.#view = null;
    }
    this.#wantSnapshot = false;
    this.#session = {
      session_id: frame.session_id,
      resume_token: frame.resume_token,
      last_seq: frame.seq,
      version: frame.version,
      capabilities: [...frame.capabilities],
      features: [...(frame.features ?? [])],
      limits: { ...frame.limits },
      resumed: frame.resumed,
    };
    if (frame.resume_retention !== undefined) this.#session.resume_retention = frame.resume_retention;
    this.#resume = { session_id: frame.session_id, resume_token: frame.resume_token, last_seq: frame.seq };
    this.#setStatus("open");
    this.#emit("session", { ...this.#session });
    for (const waiter of this.#welcomeWaiters.splice(0)) waiter.resolve(frame);
  }

  #answer(id: string, frame: ServerFrame): void {
    const pending = this.#pending.get(id);
    if (pending === undefined || !pending.expects.has(frame.type)) return;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    pending.resolve(frame);
  }

  #serverError(frame: ErrorFrame): void {
    const error = new ChatwireError(frame.code, frame.message, frame);
    const toHello = frame.in_reply_to !== undefined && frame.in_reply_to === this.#helloId;
    if (toHello) this.#helloId = null;
    if (toHello && this.#helloTakesOver && frame.code === "unsupported_version") {
      // The server no longer speaks 1.2 (it was downgraded since the welcome): there an ordinary
      // resume takes over, so offer every version again on a new connection.
      this.#helloTakesOver = false;
      this.#takingOver = false;
      if (this.#socket !== null) this.#discard(this.#socket, 1000, "offering older versions");
      this.#clearTimers();
      this.#open();
      return;
    }
    if (toHello && this.#helloNarrowed && (frame.code === "unsupported_version" || frame.code === "invalid_frame") && this.#offerFallback !== null) {
      // The server speaks none of the narrowed offer's versions: offer every version without a
      // window (the whole state is held) and, where the offer reaches below 1.1, without features
      // (`SESSION-014`). A 1.0 or 1.1 server may say so as `invalid_frame` instead: it checks the
      // hello against its own schema, which has no `window` (nor, for 1.0, `features`), before the
      // versions (frame checks come first, spec/errors.md).
      const fallback = this.#offerFallback;
      this.#options.versions = this.#features === undefined ? fallback : fallback.filter((v) => !before11(v));
      if (fallback.some(before11)) this.#foldedOffer = false;
      this.#offerFallback = null;
      this.#window = undefined;
      this.#helloNarrowed = false;
      if (this.#socket !== null) this.#discard(this.#socket, 1000, "offering older versions");
      this.#clearTimers();
      this.#open();
      return;
    }
    const handling = ERROR_HANDLING[frame.code];
    if (handling === "final" || frame.fatal) {
      this.#finish(error);
      return;
    }
    if (toHello) {
      // A refused hello leaves the connection open without a session: say hello again or stop.
      if (handling === "new_session") {
        this.#emit("error", error);
        this.#forgetSession();
        this.#sendHello();
      } else if (handling === "resume_from_zero" && this.#resume !== null && !this.#wantSnapshot) {
        this.#emit("error", error);
        this.#wantSnapshot = true;
        this.#sendHello();
      } else {
        this.#finish(error);
      }
      return;
    }
    const pending = frame.in_reply_to === undefined ? undefined : this.#pending.get(frame.in_reply_to);
    if (pending !== undefined && frame.in_reply_to !== undefined) {
      clearTimeout(pending.timer);
      this.#pending.delete(frame.in_reply_to);
      pending.reject(error);
      return;
    }
    this.#emit("error", error);
  }

  /**
   * The `last_seq` of a resume: the `seq` of the state held, so that a 1.1 server can send a
   * catch-up patch from it (`RESUME-017`); 0, which asks for a snapshot (`RESUME-018`), when the
   * client holds no state (a reload, or a second tab opening the session: a catch-up from the
   * stored `last_seq` would have nothing to apply to, and cost a second handshake, during which a
   * request sent after `connect()` resolved would fail) or when a snapshot is wanted.
   */
  #resumeSeq(_resume: SessionResume): number {
    if (this.#wantSnapshot || this.#tracker.state === null) return 0;
    return this.#tracker.seq;
  }

  /**
   * A patch or a delta did not apply (`STATE-041`, `STREAM-007`): drop this connection and everything it would still
   * deliver, and resume naming the state held. A second refusal in a row, or one with no state
   * held (a catch-up after a reload), asks for a snapshot; more than {@link MAX_RESYNCS} in a row
   * mean the server's patches never apply, and the client stops.
   */
  #resync(refusal: PatchRefusal | { reason: "page_mismatch"; before: string }): void {
    const why =
      refusal.reason === "base_mismatch"
        ? `a ui_state_patch for base_seq ${refusal.base_seq} arrived while the state held is ${refusal.held === null ? "none" : `of seq ${refusal.held}`}`
        : refusal.reason === "patch_failed"
          ? `a ui_state_patch did not apply: ${refusal.error.message}`
          : refusal.reason === "page_mismatch"
            ? `a chat.history_page before ${refusal.before} does not fit the view held`
            : `a stream's delta was refused (${refusal.refusal}): ${refusal.message}`;
    this.#resyncs += 1;
    if (this.#resyncs > MAX_RESYNCS) {
      this.#finish(new ChatwireError("protocol_violation", `${why}; gave up after ${MAX_RESYNCS} resumes`));
      return;
    }
    const heldNone = this.#tracker.state === null;
    if (heldNone || this.#resyncs > 1 || refusal.reason === "page_mismatch") this.#wantSnapshot = true;
    // Without a state, a catch-up is simply unusable (a reload): nothing went wrong.
    if (!heldNone) this.#emit("error", new ChatwireError("resync", `${why}; resuming`));
    if (this.#socket !== null) this.#discard(this.#socket, 1000, "resync");
    this.#clearTimers();
    this.#failPending(new ChatwireError("disconnected", `${why}; the answer is unknown, resending with the same id is safe`));
    this.#open();
  }

  #forgetSession(): void {
    this.#session = null;
    this.#resume = null;
    this.#view = null;
    this.#tracker.reset();
  }
}
