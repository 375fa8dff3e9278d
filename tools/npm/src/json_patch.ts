// RFC 6902 JSON Patch, applied all-or-nothing without touching the document it is given: every
// container on a changed path is copied once per patch (copy on write) and everything else is
// shared with the old document, so a patch costs what it changes, not the size of the state, and a
// renderer can tell unchanged items by identity. Checked against the Rust side's patches and the
// json-patch crate's verdicts on the shared corpus (fixtures/state-patches).
import type { PatchOp } from "./generated/protocol.js";

/** Why a patch was refused. `test_failed`: a `test` op's value differs (RFC 6902 §4.6). */
export type JsonPatchErrorKind = "test_failed" | "invalid_pointer" | "no_target" | "invalid_operation";

/** A refused patch: the op at `index` failed; the document is unchanged. */
export class JsonPatchError extends Error {
  override readonly name = "JsonPatchError";
  constructor(
    readonly kind: JsonPatchErrorKind,
    readonly index: number,
    readonly path: string,
    message: string,
  ) {
    super(`op ${index} (${path}): ${message}`);
  }
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === "object" && value !== null;
const isObject = (value: unknown): value is Record<string, unknown> => isContainer(value) && !Array.isArray(value);

/** RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 for "/" and ~0 for "~". */
function parsePointer(pointer: string): string[] | null {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return null;
  const tokens = pointer.slice(1).split("/");
  for (const token of tokens) if (/~[^01]|~$/.test(token)) return null;
  return tokens.map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** An array index token: "0" or digits without a leading zero (RFC 6901 §4). */
function arrayIndex(token: string): number | null {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : null;
}

/** Sets a member as data, so that a member named `__proto__` is a member like any other. */
function setMember(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

const own = (object: Record<string, unknown>, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/** JSON equality (RFC 6902 §4.6): same type, numbers by value, arrays in order, objects by members. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a);
  const ob = b as Record<string, unknown>;
  return ka.length === Object.keys(ob).length && ka.every((k) => own(ob, k) && jsonEqual((a as Record<string, unknown>)[k], ob[k]));
}

function deepCopy(value: unknown): unknown {
  if (!isContainer(value)) return value;
  if (Array.isArray(value)) return value.map(deepCopy);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepCopy(v)]));
}

/**
 * Applies `patch` to `document` and returns the result; `document` itself is never changed. On
 * the first op that fails, throws a {@link JsonPatchError} and nothing is applied.
 */
export function applyJsonPatch<T>(document: T, patch: readonly PatchOp[]): T {
  // Containers copied during this patch: they belong to the result and may change in place.
  const fresh = new WeakSet<object>();
  const writable = (value: Container): Container => {
    if (fresh.has(value)) return value;
    const copy: Container = Array.isArray(value) ? value.slice() : { ...value };
    fresh.add(copy);
    return copy;
  };
  let root: unknown = document;

  patch.forEach((op, index) => {
    const fail = (kind: JsonPatchErrorKind, message: string, path = op.path): never => {
      throw new JsonPatchError(kind, index, path, message);
    };
    const pointer = (path: string): string[] => parsePointer(path) ?? fail("invalid_pointer", "not a JSON Pointer", path);

    /** The value at `tokens`, read without copying. */
    const read = (tokens: string[], path: string): unknown => {
      let node: unknown = root;
      for (const token of tokens) {
        if (Array.isArray(node)) {
          const i = arrayIndex(token);
          if (i === null || i >= node.length) fail("no_target", `no element ${token}`, path);
          node = node[i as number];
        } else if (isObject(node) && own(node, token)) {
          node = node[token];
        } else {
          fail("no_target", `no member ${token}`, path);
        }
      }
      return node;
    };

    /** The parent container of `tokens`, made writable along the way (root included). */
    const parentFor = (tokens: string[], path: string): Container => {
      if (!isContainer(root)) fail("no_target", "the document is not a container", path);
      root = writable(root as Container);
      let node = root as Container;
      for (const token of tokens.slice(0, -1)) {
        let child: unknown;
        if (Array.isArray(node)) {
          const i = arrayIndex(token);
          if (i === null || i >= node.length) fail("no_target", `no element ${token}`, path);
          child = node[i as number];
          if (!isContainer(child)) fail("no_target", `element ${token} is not a container`, path);
          node[i as number] = child = writable(child as Container);
        } else {
          if (!own(node, token)) fail("no_target", `no member ${token}`, path);
          child = node[token];
          if (!isContainer(child)) fail("no_target", `member ${token} is not a container`, path);
          node[token] = child = writable(child as Container);
        }
        node = child as Container;
      }
      return node;
    };

    const add = (path: string, value: unknown): void => {
      const tokens = pointer(path);
      if (tokens.length === 0) {
        root = value;
        return;
      }
      const parent = parentFor(tokens, path);
      const last = tokens[tokens.length - 1] as string;
      if (Array.isArray(parent)) {
        const i = last === "-" ? parent.length : arrayIndex(last);
        if (i === null || i > parent.length) fail("no_target", `cannot insert at ${last}`, path);
        parent.splice(i as number, 0, value);
      } else {
        setMember(parent, last, value);
      }
    };

    const remove = (path: string): unknown => {
      const tokens = pointer(path);
      if (tokens.length === 0) fail("invalid_operation", "cannot remove the whole document", path);
      const parent = parentFor(tokens, path);
      const last = tokens[tokens.length - 1] as string;
      if (Array.isArray(parent)) {
        const i = arrayIndex(last);
        if (i === null || i >= parent.length) fail("no_target", `no element ${last}`, path);
        return parent.splice(i as number, 1)[0];
      }
      if (!own(parent, last)) fail("no_target", `no member ${last}`, path);
      const removed = parent[last];
      delete parent[last];
      return removed;
    };

    const from = (): string => ("from" in op && typeof op.from === "string" ? op.from : fail("invalid_operation", "no from"));
    const value = (): unknown => ("value" in op && op.value !== undefined ? op.value : fail("invalid_operation", "no value"));

    switch (op.op) {
      case "add":
        add(op.path, value());
        break;
      case "remove":
        remove(op.path);
        break;
      case "replace": {
        const v = value();
        const tokens = pointer(op.path);
        read(tokens, op.path);
        if (tokens.length === 0) {
          root = v;
          break;
        }
        const parent = parentFor(tokens, op.path);
        const last = tokens[tokens.length - 1] as string;
        if (Array.isArray(parent)) parent[arrayIndex(last) as number] = v;
        else setMember(parent, last, v);
        break;
      }
      case "move": {
        const source = from();
        if (source === op.path) {
          read(pointer(source), source);
          break;
        }
        if (op.path.startsWith(`${source}/`)) fail("invalid_operation", "cannot move a value into itself");
        add(op.path, remove(source));
        break;
      }
      case "copy": {
        const source = from();
        add(op.path, deepCopy(read(pointer(source), source)));
        break;
      }
      case "test":
        if (!jsonEqual(read(pointer(op.path), op.path), value())) fail("test_failed", "the value differs");
        break;
      default:
        fail("invalid_operation", `unknown op ${(op as { op: unknown }).op}`);
    }
  });
  return root as T;
}
