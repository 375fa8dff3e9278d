// @chatwire/protocol: types for every Chatwire frame and the UiState, precompiled validators, and
// a client that keeps a session alive across reconnects, and the checker of a call's response_schema.
export * from "./generated/protocol.js";
export * from "./generated/facts.js";
export {
  validateServerFrame,
  validateClientFrame,
  parseServerFrame,
  parseClientFrame,
  type FrameError,
  type FrameErrorKind,
  type FrameResult,
} from "./validate.js";
export { isDateTime } from "./formats.js";
export { applyJsonPatch, jsonEqual, JsonPatchError, type JsonPatchErrorKind } from "./json_patch.js";
export { applyDelta, applyReasoningDelta, type DeltaRefusal, type DeltaResult } from "./stream.js";
export {
  checkResponse,
  parseResponseSchema,
  ResponseChecker,
  ResponseSchemaError,
  type ResponseSchemaErrorKind,
  type ResponseSchemaKeyword,
  type ResponseViolation,
  type ResponseViolationKeyword,
} from "./response_schema.js";
export { mergePage } from "./window.js";
export { FOLDED_FEATURES } from "./folded.js";
export {
  ChatwireClient,
  ChatwireError,
  DEFAULT_PAGE_ITEMS,
  ERROR_HANDLING,
  OFFERED_VERSIONS,
  type ChatwireSocket,
  type ClientErrorCode,
  type ClientEvents,
  type ClientOptions,
  type ClientStatus,
  type DisplacedCode,
  type ReconnectAttempt,
  type ReconnectOptions,
  type SessionInfo,
  type SessionResume,
  type SocketFactory,
  type SocketHandler,
  type WindowInfo,
} from "./client.js";
