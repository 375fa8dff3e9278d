// `response_schema` (since 1.2): the shape of the `value` a tool call awaits, and a checker of it.
//
// Spec: spec/tool-calls.md#response_schema (TOOL-022..TOOL-026). A response schema is a JSON Schema
// (draft 2020-12) written with the keywords of RESPONSE_SCHEMA_KEYWORDS only, nested at most
// RESPONSE_SCHEMA_MAX_DEPTH deep, so every server and every client checks a value with the same
// small interpreter. This is the TypeScript copy of chatwire_schema::response_schema (Rust): the
// same refusals of a schema, and for a value the same first failure, in the order of TOOL-024.
// tests/response-schema.test.mjs replays fixtures/response-schemas/cases.jsonl, the verdicts the
// Rust checker gives, and must match every one.
//
// It interprets the schema: nothing is compiled, nothing generates code at run time, so it runs
// under a Content-Security-Policy without 'unsafe-eval' (the CSP test runs it with code generation
// from strings disabled).
//
// What JavaScript cannot see (JSON.parse has already lost it, for the value and for the schema):
// - a number's spelling: `3.0` is the number 3, so `"maxLength": 3.0`, which Rust refuses as not an
//   integer (`BadKeyword`), is taken here (`-0` survives JSON.parse, and is refused as Rust does);
//   integers beyond 2^53 are rounded;
// - member order of names that are array indices (`"0"`, `"12"`): JavaScript objects list them
//   first, in ascending order, so `properties` and `additionalProperties` may meet them in another
//   order than Rust does (and name another first failure) when a schema or a value uses them.
import { RESPONSE_SCHEMA_KEYWORDS, RESPONSE_SCHEMA_MAX_DEPTH, RESPONSE_SCHEMA_TYPES } from "./generated/facts.js";
import type { ResponseSchema } from "./generated/protocol.js";

/** A keyword of the response-schema subset. */
export type ResponseSchemaKeyword = (typeof RESPONSE_SCHEMA_KEYWORDS)[number];

/** Why a JSON value is not a response schema (the Rust `SchemaError` variants). */
export type ResponseSchemaErrorKind =
  /** The schema, or a nested one, is not a JSON object. */
  | "NotAnObject"
  /** A keyword outside the subset. */
  | "UnknownKeyword"
  /** A keyword's value has the wrong shape. */
  | "BadKeyword"
  /** Nested deeper than {@link RESPONSE_SCHEMA_MAX_DEPTH}. */
  | "TooDeep";

/** A schema the checker refuses, with the place (a JSON Pointer into the schema) and the keyword. */
export class ResponseSchemaError extends Error {
  override readonly name = "ResponseSchemaError";
  constructor(
    readonly kind: ResponseSchemaErrorKind,
    /** JSON Pointer of the offending schema within the whole schema; `""` is the whole schema. */
    readonly at: string,
    message: string,
    /** The keyword at fault (`UnknownKeyword`, `BadKeyword`). */
    readonly keyword?: string,
  ) {
    super(`${at}: ${message}`);
  }
}

/** The validation keywords a value can fail. */
export type ResponseViolationKeyword = "type" | "enum" | "minLength" | "maxLength" | "minimum" | "maximum" | "required" | "additionalProperties";

/** Why a value breaks a response schema: the first failing check in the order of TOOL-024. */
export interface ResponseViolation {
  /** JSON Pointer (RFC 6901) of the failing part of the value; `""` is the whole value. */
  pointer: string;
  /** The keyword that failed. */
  keyword: ResponseViolationKeyword;
  /** One sentence, lowercase. */
  message: string;
}

type JsonObject = { readonly [key: string]: unknown };

const KEYWORDS: ReadonlySet<string> = new Set(RESPONSE_SCHEMA_KEYWORDS);
const TYPES: ReadonlySet<string> = new Set(RESPONSE_SCHEMA_TYPES);
/** 2^64: a `minLength` must be below it to be a u64, as the Rust checker asks. */
const U64_END = 18446744073709551616;

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const has = (object: JsonObject, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);
const escape = (token: string): string => token.replace(/~/g, "~0").replace(/\//g, "~1");

function checkSchema(schema: unknown, at: string, depth: number): void {
  if (depth > RESPONSE_SCHEMA_MAX_DEPTH) {
    throw new ResponseSchemaError("TooDeep", at, `response schemas nest at most ${RESPONSE_SCHEMA_MAX_DEPTH} deep`);
  }
  if (!isObject(schema)) throw new ResponseSchemaError("NotAnObject", at, "a response schema is a json object");
  const bad = (keyword: ResponseSchemaKeyword, expected: string): ResponseSchemaError =>
    new ResponseSchemaError("BadKeyword", at, `${keyword} must be ${expected}`, keyword);
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword];
    switch (keyword) {
      case "type": {
        const names = typeof value === "string" ? [value] : Array.isArray(value) && value.length > 0 ? value : null;
        if (names === null || !names.every((n) => typeof n === "string" && TYPES.has(n))) {
          throw bad("type", "a type name or a non-empty array of them");
        }
        break;
      }
      case "properties":
        if (!isObject(value)) throw bad("properties", "an object of schemas");
        for (const name of Object.keys(value)) checkSchema(value[name], `${at}/properties/${escape(name)}`, depth + 1);
        break;
      case "required":
        if (!Array.isArray(value) || !value.every((n) => typeof n === "string")) throw bad("required", "an array of property names");
        break;
      case "enum":
        if (!Array.isArray(value) || value.length === 0) throw bad("enum", "a non-empty array");
        break;
      case "items":
        checkSchema(value, `${at}/items`, depth + 1);
        break;
      case "additionalProperties":
        if (typeof value !== "boolean") checkSchema(value, `${at}/additionalProperties`, depth + 1);
        break;
      case "minimum":
      case "maximum":
        if (typeof value !== "number") throw bad(keyword, "a number");
        break;
      case "minLength":
      case "maxLength":
        // As serde_json reads it: `-0` is a float there, so not a u64.
        if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || Object.is(value, -0) || value >= U64_END) {
          throw bad(keyword, "a non-negative integer");
        }
        break;
      case "title":
      case "description":
        if (typeof value !== "string") throw bad(keyword, "a string");
        break;
      default:
        if (!KEYWORDS.has(keyword)) {
          throw new ResponseSchemaError("UnknownKeyword", at, `keyword ${keyword} is not in the response_schema subset`, keyword);
        }
    }
  }
}

/** Whether `value` is of the JSON Schema type `name` (an integer is a number with no fraction). */
function hasType(value: unknown, name: string): boolean {
  switch (name) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "number":
      return typeof value === "number";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "string":
      return typeof value === "string";
    default:
      return false;
  }
}

/** JSON equality as `enum` sees it: numbers by value (1 equals 1.0, which JSON.parse already makes one). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => has(b, k) && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

/** Length in Unicode code points, as TOOL-024 counts it. */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const violation = (pointer: string, keyword: ResponseViolationKeyword, message: string): ResponseViolation => ({ pointer, keyword, message });

/**
 * The checks of one schema on one value, in the order of TOOL-024: `type`, `enum`,
 * `minLength`/`maxLength`, `minimum`/`maximum`, `required` (in its order), `properties` (in the
 * schema's order), `additionalProperties` (in the value's order), `items` (by index); each nested
 * schema checked completely before the next.
 */
function checkValue(schema: JsonObject, value: unknown, pointer: string): ResponseViolation | null {
  const types = schema["type"];
  if (types !== undefined) {
    const names = (Array.isArray(types) ? types : [types]).filter((n): n is string => typeof n === "string");
    if (!names.some((n) => hasType(value, n))) return violation(pointer, "type", `expected ${names.join(" or ")}`);
  }
  const options = schema["enum"];
  if (Array.isArray(options) && !options.some((o) => jsonEqual(o, value))) {
    return violation(pointer, "enum", "not one of the allowed values");
  }
  if (typeof value === "string") {
    const length = codePoints(value);
    const min = schema["minLength"];
    if (typeof min === "number" && length < min) return violation(pointer, "minLength", `shorter than ${min} characters`);
    const max = schema["maxLength"];
    if (typeof max === "number" && length > max) return violation(pointer, "maxLength", `longer than ${max} characters`);
  }
  if (typeof value === "number") {
    const min = schema["minimum"];
    if (typeof min === "number" && value < min) return violation(pointer, "minimum", `less than ${min}`);
    const max = schema["maximum"];
    if (typeof max === "number" && value > max) return violation(pointer, "maximum", `greater than ${max}`);
  }
  if (isObject(value)) {
    const required = schema["required"];
    if (Array.isArray(required)) {
      for (const name of required) {
        if (typeof name === "string" && !has(value, name)) {
          return violation(`${pointer}/${escape(name)}`, "required", `required property ${name} is missing`);
        }
      }
    }
    const properties = isObject(schema["properties"]) ? schema["properties"] : null;
    if (properties !== null) {
      for (const name of Object.keys(properties)) {
        const sub = properties[name];
        if (has(value, name) && isObject(sub)) {
          const found = checkValue(sub, value[name], `${pointer}/${escape(name)}`);
          if (found !== null) return found;
        }
      }
    }
    const extra = schema["additionalProperties"];
    if (extra !== undefined) {
      for (const name of Object.keys(value)) {
        if (properties !== null && has(properties, name)) continue;
        if (extra === false) {
          return violation(`${pointer}/${escape(name)}`, "additionalProperties", `property ${name} is not allowed`);
        }
        if (isObject(extra)) {
          const found = checkValue(extra, value[name], `${pointer}/${escape(name)}`);
          if (found !== null) return found;
        }
      }
    }
  }
  const items = schema["items"];
  if (Array.isArray(value) && isObject(items)) {
    for (let index = 0; index < value.length; index++) {
      const found = checkValue(items, value[index], `${pointer}/${index}`);
      if (found !== null) return found;
    }
  }
  return null;
}

/** A response schema the checker took (`new ResponseChecker(schema)` throws on one it refuses): check values against it. */
export class ResponseChecker {
  /** The schema, as given. */
  readonly schema: ResponseSchema;

  /** Checks that `schema` is a response schema (TOOL-022); throws a {@link ResponseSchemaError} if not. */
  constructor(schema: unknown) {
    checkSchema(schema, "", 0);
    this.schema = schema as ResponseSchema;
  }

  /**
   * Checks a value (a JSON value: what JSON.parse gives, what the client will send) against the
   * schema: null when it fits, else the first failure in the order of TOOL-024, which is the one
   * the server's `response_invalid` names.
   */
  check(value: unknown): ResponseViolation | null {
    return checkValue(this.schema as unknown as JsonObject, value, "");
  }
}

/** Checks that `schema` is a response schema (TOOL-022): a checker for it, or why not. */
export function parseResponseSchema(schema: unknown): { ok: true; checker: ResponseChecker } | { ok: false; error: ResponseSchemaError } {
  try {
    return { ok: true, checker: new ResponseChecker(schema) };
  } catch (error) {
    if (error instanceof ResponseSchemaError) return { ok: false, error };
    throw error;
  }
}

/**
 * Checks the value a call awaits before it is sent (TOOL-026): `call.response_schema` (of a
 * `chat.tool_call` or a tool call item) and the value. Null when it fits or the call has no schema;
 * else the first failure. Throws a {@link ResponseSchemaError} for a schema outside the subset.
 */
export function checkResponse(call: { readonly response_schema?: ResponseSchema }, value: unknown): ResponseViolation | null {
  return call.response_schema === undefined ? null : new ResponseChecker(call.response_schema).check(value);
}
