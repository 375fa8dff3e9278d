// The response-schema checker (TOOL-022..TOOL-024) against the Rust one on the shared corpus
// fixtures/response-schemas/cases.jsonl, which schema/tests/response_schema_corpus.rs writes and
// drift-checks: the same refusal kind for every schema outside the subset, and for every value the
// same verdict (accepted, or the same first failing pointer and keyword). Then what the corpus
// does not spell out: pointers escaped, the place of a refused schema, inputs left unchanged, and
// the precompiled validators taking the new 1.2 frames and members.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  checkResponse,
  parseResponseSchema,
  ResponseChecker,
  ResponseSchemaError,
  RESPONSE_SCHEMA_MAX_DEPTH,
  validateClientFrame,
  validateServerFrame,
} from "../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CORPUS = path.join(root, "fixtures/response-schemas/cases.jsonl");
const corpus = readFileSync(CORPUS, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

/** Deep-freezes a document, so that a checker that changed its input would throw. */
function frozen(value) {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/** The verdict of this package's checker in the corpus's terms. */
function verdictsOf(c) {
  const parsed = parseResponseSchema(frozen(structuredClone(c.schema)));
  if (!parsed.ok) return { schema_error: parsed.error.kind, values: [] };
  return {
    schema_error: null,
    values: c.values.map(({ value }) => {
      const v = parsed.checker.check(frozen(structuredClone(value)));
      return { value, verdict: v === null ? null : { pointer: v.pointer, keyword: v.keyword } };
    }),
  };
}

describe("the shared response-schema corpus", () => {
  test("is there and reaches every outcome", () => {
    assert.ok(corpus.length >= 40, `${corpus.length} schemas`);
    const outcomes = new Set();
    for (const c of corpus) {
      if (c.schema_error !== null) outcomes.add(c.schema_error);
      for (const v of c.values) outcomes.add(v.verdict === null ? "accepted" : v.verdict.keyword);
    }
    for (const o of ["accepted", "type", "enum", "minLength", "maxLength", "minimum", "maximum", "required", "additionalProperties", "NotAnObject", "UnknownKeyword", "BadKeyword", "TooDeep"]) {
      assert.ok(outcomes.has(o), `the corpus has no case of ${o}`);
    }
  });

  test("every schema and every value: the verdict the Rust checker gives", () => {
    let schemas = 0;
    let refused = 0;
    let values = 0;
    const mismatches = [];
    for (const c of corpus) {
      const mine = verdictsOf(c);
      schemas++;
      if (mine.schema_error !== c.schema_error) {
        mismatches.push(`${JSON.stringify(c.schema)}: schema_error ${mine.schema_error}, Rust ${c.schema_error}`);
        continue;
      }
      if (c.schema_error !== null) {
        refused++;
        continue;
      }
      assert.equal(mine.values.length, c.values.length);
      c.values.forEach((expected, i) => {
        values++;
        if (!isDeepStrictEqual(mine.values[i].verdict, expected.verdict)) {
          mismatches.push(`${JSON.stringify(c.schema)} on ${JSON.stringify(expected.value)}: ${JSON.stringify(mine.values[i].verdict)}, Rust ${JSON.stringify(expected.verdict)}`);
        }
      });
    }
    assert.deepEqual(mismatches, []);
    // Counted, so that an emptied corpus or a loop that skips cannot pass.
    assert.ok(schemas >= 40 && refused >= 12, `${schemas} schemas, ${refused} refused`);
    assert.ok(values >= 800, `only ${values} values checked`);
    console.log(`response-schema corpus: ${schemas} schemas (${refused} refused), ${values} values, all as Rust`);
  });
});

function isDeepStrictEqual(a, b) {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

describe("the checker", () => {
  const profile = {
    type: "object",
    properties: { name: { type: "string", minLength: 1, title: "Name" }, age: { type: "integer", minimum: 0, maximum: 150 } },
    required: ["name"],
    additionalProperties: false,
  };

  test("names the pointer and keyword of the first failure, with a message", () => {
    const checker = new ResponseChecker(profile);
    assert.equal(checker.check({ name: "ann", age: 3 }), null);
    assert.deepEqual(checker.check({ age: 3 }), { pointer: "/name", keyword: "required", message: "required property name is missing" });
    assert.deepEqual(checker.check({ name: "ann", age: 151 }), { pointer: "/age", keyword: "maximum", message: "greater than 150" });
    assert.equal(checker.check({ name: "ann", "a/b~c": 1 }).pointer, "/a~1b~0c");
    assert.equal(checker.check({ name: "ann", constructor: 1 }).keyword, "additionalProperties", "own members only, never the prototype's");
    assert.equal(new ResponseChecker({ required: ["toString"] }).check({}).pointer, "/toString");
    assert.equal(checkResponse({ response_schema: profile }, { name: "" }).keyword, "minLength");
    assert.equal(checkResponse({}, 42), null, "a call without a schema takes anything");
  });

  test("a refused schema says where and which keyword", () => {
    const r = parseResponseSchema({ properties: { a: { properties: { "x/y": { pattern: "^a" } } } } });
    assert.equal(r.ok, false);
    assert.ok(r.error instanceof ResponseSchemaError);
    assert.deepEqual([r.error.kind, r.error.at, r.error.keyword], ["UnknownKeyword", "/properties/a/properties/x~1y", "pattern"]);
    assert.equal(r.error.message, "/properties/a/properties/x~1y: keyword pattern is not in the response_schema subset");
    assert.throws(() => new ResponseChecker({ minLength: -1 }), { kind: "BadKeyword", keyword: "minLength" });
    // serde_json reads `-0` as a float, which is no u64: refused there, so here.
    assert.throws(() => new ResponseChecker(JSON.parse('{"maxLength": -0}')), { kind: "BadKeyword", keyword: "maxLength" });
    assert.equal(new ResponseChecker({ maxLength: 0 }).check(""), null);
    let deep = { type: "string" };
    for (let i = 0; i < RESPONSE_SCHEMA_MAX_DEPTH; i++) deep = { items: deep };
    assert.equal(parseResponseSchema(deep).ok, true, `${RESPONSE_SCHEMA_MAX_DEPTH} deep is allowed`);
    assert.equal(parseResponseSchema({ items: deep }).error.kind, "TooDeep");
    assert.throws(() => checkResponse({ response_schema: { type: "text" } }, "x"), ResponseSchemaError);
  });
});

describe("1.2 frames through the precompiled validators", () => {
  const TS = "2026-11-26T10:00:00Z";
  test("chat.cancel, chat.cancel_accepted, and a tool call's response_schema", () => {
    assert.equal(validateClientFrame({ type: "chat.cancel", id: "stop-1", invocation_id: "inv-4" }).ok, true);
    assert.equal(validateClientFrame({ type: "chat.cancel", id: "stop-1" }).ok, false);
    assert.equal(validateServerFrame({ type: "chat.cancel_accepted", seq: 61, in_reply_to: "stop-1", invocation_id: "inv-4", ts: TS }).ok, true);
    const call = {
      type: "chat.tool_call", seq: 12, invocation_id: "inv-4", tool_call_id: "ui_125", tool_name: "ask_profile", component_type: "Form",
      interaction_type: "ui_tool", awaiting_response: true, display: "inline", payload: {}, call_index: 0, ts: TS,
    };
    const nested = { ...profileDeep(), title: "Profile" };
    const ok = validateServerFrame({ ...call, response_schema: nested });
    assert.equal(ok.ok, true, JSON.stringify(ok.errors));
    const bad = validateServerFrame({ ...call, response_schema: { properties: { a: { items: { pattern: "x" } } } } });
    assert.equal(bad.ok, false, "a keyword outside the subset, three levels down");
    assert.equal(bad.errors[0].path, "/response_schema/properties/a/items/pattern");
  });
});

function profileDeep() {
  return { type: "object", properties: { tags: { type: "array", items: { type: "object", properties: { name: { enum: ["a", "b"] } }, additionalProperties: { type: "string" } } } } };
}

test("the checker runs with code generation from strings disabled (CSP without unsafe-eval)", () => {
  const script = `
    const { parseResponseSchema } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
    const { readFileSync } = await import("node:fs");
    let checked = 0;
    for (const line of readFileSync(${JSON.stringify(CORPUS)}, "utf8").split("\\n")) {
      if (line.trim() === "") continue;
      const c = JSON.parse(line);
      const parsed = parseResponseSchema(c.schema);
      if ((parsed.ok ? null : parsed.error.kind) !== c.schema_error) throw new Error(line);
      for (const v of c.values) {
        const got = parsed.checker.check(v.value);
        if (JSON.stringify(got && { pointer: got.pointer, keyword: got.keyword }) !== JSON.stringify(v.verdict)) throw new Error(line);
        checked++;
      }
    }
    let blocked = false;
    try { new Function("return 1"); } catch { blocked = true; }
    console.log(JSON.stringify({ checked, blocked }));
  `;
  const out = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    encoding: "utf8",
    timeout: 60_000,
  });
  const { checked, blocked } = JSON.parse(out);
  assert.ok(blocked, "the flag did not block new Function, so this test proves nothing");
  assert.ok(checked >= 800, `only ${checked} values checked`);
});
