// applyJsonPatch (RFC 6902) against the Rust side on the shared corpus: the patches
// `UiState::apply_with_patch` builds for every committed event of the reducer traces, the catch-up
// patch of `state_patch::catch_up`, and the op the json-patch crate stops a catch-up at on a wrong
// base (fixtures/state-patches/patches.jsonl, drift-checked by schema/tests/shared_corpora.rs).
// Then the ops the corpus never uses (move, copy, root paths, escapes) on RFC 6902's own examples.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { applyJsonPatch, JsonPatchError, jsonEqual } from "../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const corpus = readFileSync(path.join(root, "fixtures/state-patches/patches.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

/** Deep-freezes a document, so that a patch that changed its input would throw. */
function frozen(value) {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

describe("the shared state-patch corpus", () => {
  test("is there and exercises catch-ups and wrong bases", () => {
    assert.ok(corpus.length >= 100, `${corpus.length} traces`);
    assert.ok(corpus.filter((t) => t.wrong_base !== null).length > corpus.length / 2);
    assert.ok(corpus.some((t) => t.patches.some((p) => p.some((op) => op.op === "remove"))), "rewinds remove items");
    assert.ok(corpus.some((t) => t.patches.some((p) => p.some((op) => op.op === "add" && /^\/items\/\d+$/.test(op.path)))), "outputs are inserted");
  });

  test("every event's patch, folded from the initial state, gives the final state; no input is changed", () => {
    let applied = 0;
    for (const trace of corpus) {
      let state = frozen(structuredClone(trace.initial));
      for (const patch of trace.patches) {
        state = frozen(applyJsonPatch(state, patch));
        applied += 1;
      }
      assert.deepStrictEqual(state, trace.final, trace.name);
    }
    // Streams and retries make the trace generator draw more refused events (1630 applied in 2026-11).
    assert.ok(applied > 1500, `${applied} patches`);
  });

  test("the catch-up patch turns the state after the first half into the final state", () => {
    for (const trace of corpus) {
      let base = structuredClone(trace.initial);
      for (const patch of trace.patches.slice(0, trace.catch_up.from)) base = applyJsonPatch(base, patch);
      assert.deepStrictEqual(applyJsonPatch(frozen(base), trace.catch_up.patch), trace.final, trace.name);
    }
  });

  test("on a wrong base the catch-up stops at the op json-patch stops it at, and nothing changes", () => {
    let tried = 0;
    for (const trace of corpus.filter((t) => t.wrong_base !== null)) {
      let base = structuredClone(trace.initial);
      for (const patch of trace.patches.slice(0, trace.catch_up.from)) base = applyJsonPatch(base, patch);
      const shifted = frozen({ ...base, items: base.items.slice(1) });
      const before = structuredClone(shifted);
      assert.throws(
        () => applyJsonPatch(shifted, trace.catch_up.patch),
        (error) => {
          assert.ok(error instanceof JsonPatchError, trace.name);
          assert.equal(error.index, trace.wrong_base.fails_at, `${trace.name}: ${error.message}`);
          assert.equal(error.kind, trace.wrong_base.kind, `${trace.name}: ${error.message}`);
          return true;
        },
      );
      assert.deepStrictEqual(shifted, before);
      tried += 1;
    }
    assert.ok(tried > 50);
  });
});

describe("RFC 6902 beyond the corpus", () => {
  // RFC 6902 appendix A, one case per example.
  const cases = [
    ["A.1 add an object member", { foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }], { baz: "qux", foo: "bar" }],
    ["A.2 add an array element", { foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }], { foo: ["bar", "qux", "baz"] }],
    ["A.3 remove an object member", { baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }], { foo: "bar" }],
    ["A.4 remove an array element", { foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }], { foo: ["bar", "baz"] }],
    ["A.5 replace a value", { baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }], { baz: "boo", foo: "bar" }],
    ["A.6 move a value", { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } }, [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }], { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } }],
    ["A.7 move an array element", { foo: ["all", "grass", "cows", "eat"] }, [{ op: "move", from: "/foo/1", path: "/foo/3" }], { foo: ["all", "cows", "eat", "grass"] }],
    ["A.8 test a value: success", { baz: "qux", foo: ["a", 2, "c"] }, [{ op: "test", path: "/baz", value: "qux" }, { op: "test", path: "/foo/1", value: 2 }], { baz: "qux", foo: ["a", 2, "c"] }],
    ["A.10 add a nested member object", { foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }], { foo: "bar", child: { grandchild: {} } }],
    ["A.14 ~ escape ordering", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: 10 }], { "/": 9, "~1": 10 }],
    ["A.16 add an array value", { foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }], { foo: ["bar", ["abc", "def"]] }],
    ["copy deep-copies", { a: { b: [1] } }, [{ op: "copy", from: "/a", path: "/c" }, { op: "add", path: "/c/b/-", value: 2 }], { a: { b: [1] }, c: { b: [1, 2] } }],
    ["the whole document", { a: 1 }, [{ op: "replace", path: "", value: [1] }, { op: "add", path: "/-", value: 2 }], [1, 2]],
    ["test compares objects regardless of member order", { a: { x: 1, y: [1, { z: null }] } }, [{ op: "test", path: "/a", value: { y: [1, { z: null }], x: 1 } }], { a: { x: 1, y: [1, { z: null }] } }],
    ["a member named __proto__ is a member", {}, [{ op: "add", path: "/__proto__", value: { polluted: true } }], JSON.parse('{"__proto__": {"polluted": true}}')],
  ];
  for (const [name, doc, patch, expected] of cases) {
    test(name, () => {
      const input = frozen(structuredClone(doc));
      const result = applyJsonPatch(input, patch);
      assert.ok(jsonEqual(result, expected), `${JSON.stringify(result)} != ${JSON.stringify(expected)}`);
      assert.equal({}.polluted, undefined);
    });
  }

  const refusals = [
    ["A.9 test a value: error", { baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }], "test_failed", 0],
    ["A.12 add to a nonexistent target", { foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }], "no_target", 0],
    ["A.15 comparing strings and numbers", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: "10" }], "test_failed", 0],
    ["remove a missing member", { a: 1 }, [{ op: "add", path: "/b", value: 2 }, { op: "remove", path: "/c" }], "no_target", 1],
    ["replace a missing element", { a: [1] }, [{ op: "replace", path: "/a/1", value: 2 }], "no_target", 0],
    ["insert past the end", { a: [1] }, [{ op: "add", path: "/a/2", value: 2 }], "no_target", 0],
    ["an index with a leading zero", { a: [1, 2] }, [{ op: "remove", path: "/a/01" }], "no_target", 0],
    ["a pointer without a leading slash", { a: 1 }, [{ op: "remove", path: "a" }], "invalid_pointer", 0],
    ["a bad escape", { a: 1 }, [{ op: "remove", path: "/~2" }], "invalid_pointer", 0],
    ["move into its own child", { a: { b: {} } }, [{ op: "move", from: "/a", path: "/a/b/c" }], "invalid_operation", 0],
    ["an unknown op", { a: 1 }, [{ op: "frob", path: "/a" }], "invalid_operation", 0],
  ];
  for (const [name, doc, patch, kind, index] of refusals) {
    test(`refused: ${name}`, () => {
      const input = frozen(structuredClone(doc));
      assert.throws(() => applyJsonPatch(input, patch), (e) => e instanceof JsonPatchError && e.kind === kind && e.index === index);
      assert.deepStrictEqual(input, doc, "nothing changed");
    });
  }
});
