// Frame validation: read `type`, pick that frame's precompiled validator (ajv standalone code
// generated from schema/json at build time), and hand back the typed frame or errors that name the
// offending field. The envelope rules come first, as in chatwire_schema::FrameValidator: a frame
// must be a JSON object with a string `type` naming a frame of the expected direction.
import { byType } from "./compiled/validators.js";
import {
  CLIENT_FRAME_TYPES,
  NAMED_PLANS,
  NULL_PLANS,
  SERVER_FRAME_TYPES,
  type ClientFrame,
  type NullPlan,
  type ServerFrame,
} from "./generated/protocol.js";

/** Why a frame was refused. */
export type FrameErrorKind =
  /** The text is not JSON. */
  | "malformed_json"
  /** The value is not a JSON object. */
  | "not_object"
  /** There is no string `type`. */
  | "missing_type"
  /** `type` names no frame of this direction. */
  | "unknown_type"
  /** The frame breaks its schema. */
  | "invalid";

/** One reason a frame is invalid. */
export interface FrameError {
  /** What kind of failure this is. */
  kind: FrameErrorKind;
  /** JSON Pointer of the offending member (`/state/items/2/status`), `""` for the frame itself. */
  path: string;
  /** A human-readable explanation naming the field. */
  message: string;
  /** The schema keyword that failed (`required`, `pattern`, `format`, …), for `invalid`. */
  keyword?: string;
}

/** The result of validating a frame: the typed frame, or why it was refused. */
export type FrameResult<F> = { ok: true; frame: F } | { ok: false; errors: FrameError[] };

const SERVER_TYPES: ReadonlySet<string> = new Set(SERVER_FRAME_TYPES);
const CLIENT_TYPES: ReadonlySet<string> = new Set(CLIENT_FRAME_TYPES);

function isObject(value: unknown): value is { readonly [key: string]: unknown } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function refused<F>(kind: FrameErrorKind, path: string, message: string): FrameResult<F> {
  return { ok: false, errors: [{ kind, path, message }] };
}

const escapePointer = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Optional members that arrive as `null` mean "absent" (serde reads them so); the typed frame
 * has no null there. Copies only the objects it changes: the caller's value is never modified.
 */
function dropNulls(value: unknown, plan: NullPlan | null | undefined): unknown {
  if (plan === null || plan === undefined) return value;
  if ("r" in plan) return dropNulls(value, NAMED_PLANS[plan.r]);
  if ("a" in plan) {
    if (!Array.isArray(value)) return value;
    let copy: unknown[] | null = null;
    value.forEach((item: unknown, index: number) => {
      const next = dropNulls(item, plan.a);
      if (next !== item) (copy ??= [...value])[index] = next;
    });
    return copy ?? value;
  }
  if ("u" in plan) return plan.u.reduce<unknown>((v, p) => dropNulls(v, p), value);
  if (!isObject(value)) return value;
  if ("t" in plan) {
    const tag = value[plan.t];
    return typeof tag === "string" && Object.hasOwn(plan.v, tag) ? dropNulls(value, plan.v[tag]) : value;
  }
  let copy: { [key: string]: unknown } | null = null;
  for (const name of plan.n ?? []) {
    if (value[name] === null) {
      copy ??= { ...value };
      delete copy[name];
    }
  }
  for (const [name, inner] of Object.entries(plan.o ?? {})) {
    const current = value[name];
    if (current === undefined || current === null) continue;
    const next = dropNulls(current, inner);
    if (next !== current) (copy ??= { ...value })[name] = next;
  }
  return copy ?? value;
}

function describe(error: { instancePath: string; keyword: string; params: { readonly [key: string]: unknown }; message?: string }): FrameError {
  let path = error.instancePath;
  let message = error.message ?? `fails ${error.keyword}`;
  const { missingProperty, additionalProperty, format } = error.params;
  if (error.keyword === "required" && typeof missingProperty === "string") {
    path = `${path}/${escapePointer(missingProperty)}`;
    message = "is required";
  } else if (error.keyword === "additionalProperties" && typeof additionalProperty === "string") {
    path = `${path}/${escapePointer(additionalProperty)}`;
    message = "is not a member of this frame";
  } else if (error.keyword === "format" && typeof format === "string") {
    message = format === "date-time" ? "must be an RFC 3339 date-time" : `must be a valid ${format}`;
  }
  return { kind: "invalid", path, message: `${path || "frame"} ${message}`, keyword: error.keyword };
}

function validate<F>(value: unknown, types: ReadonlySet<string>, direction: string): FrameResult<F> {
  if (!isObject(value)) return refused("not_object", "", "frame must be a JSON object");
  const type = value["type"];
  if (typeof type !== "string") return refused("missing_type", "/type", "/type must be a string naming the frame");
  const check = types.has(type) ? byType[type] : undefined;
  if (check === undefined) {
    return refused("unknown_type", "/type", `/type ${JSON.stringify(type)} is not a ${direction} frame`);
  }
  if (check(value)) return { ok: true, frame: dropNulls(value, NULL_PLANS[type]) as F };
  // The deepest path is the most specific: a failed union branch also reports its parent.
  const errors = (check.errors ?? []).map(describe);
  errors.sort((a, b) => b.path.split("/").length - a.path.split("/").length);
  const unique = errors.filter((e, i) => errors.findIndex((o) => o.path === e.path && o.message === e.message) === i);
  return { ok: false, errors: unique.length > 0 ? unique : [{ kind: "invalid", path: "", message: "frame is invalid" }] };
}

/** Validates a frame received from a server (already parsed from JSON). */
export function validateServerFrame(value: unknown): FrameResult<ServerFrame> {
  return validate<ServerFrame>(value, SERVER_TYPES, "server");
}

/** Validates a frame a client sends (already parsed from JSON). */
export function validateClientFrame(value: unknown): FrameResult<ClientFrame> {
  return validate<ClientFrame>(value, CLIENT_TYPES, "client");
}

function parse<F>(text: string, validator: (value: unknown) => FrameResult<F>): FrameResult<F> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return refused("malformed_json", "", `frame is not JSON: ${(error as Error).message}`);
  }
  return validator(value);
}

/** Parses the text of a WebSocket message from a server and validates it. */
export function parseServerFrame(text: string): FrameResult<ServerFrame> {
  return parse(text, validateServerFrame);
}

/** Parses the text of a WebSocket message from a client and validates it. */
export function parseClientFrame(text: string): FrameResult<ClientFrame> {
  return parse(text, validateClientFrame);
}
