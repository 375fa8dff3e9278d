// applyDelta (STATE-042) and applyReasoningDelta (STATE-054, since 1.3), the reducer rules the client
// runs (STREAM-007), against the Rust reducer on the shared corpus fixtures/stream-deltas/cases.jsonl,
// which schema/tests/stream_deltas_corpus.rs writes and drift-checks: the same new state, or a refusal
// by the same requirement, for every case; whole streams folded delta by delta end in the same
// state; no input is ever changed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { applyDelta, applyReasoningDelta } from "../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const corpus = readFileSync(path.join(root, "fixtures/stream-deltas/cases.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));
const steps = corpus.filter((c) => c.kind === "step");
const folds = corpus.filter((c) => c.kind === "fold");

/** The rule of the delta's type: text (STATE-042) or reasoning (STATE-054). */
const apply = (state, delta) => (delta.type === "chat.reasoning_delta" ? applyReasoningDelta(state, delta) : applyDelta(state, delta));
/** What a delta appends: a text delta's `delta`, a reasoning delta's `text`. */
const chunk = (delta) => (delta.type === "chat.reasoning_delta" ? delta.text : delta.delta);

/** Deep-freezes a document, so that a rule that changed its input would throw. */
function frozen(value) {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

describe("the shared stream-delta corpus", () => {
  test("is there, opens and grows streams, and meets every refusal a delta can", () => {
    assert.ok(steps.length >= 100, `${steps.length} cases`);
    assert.ok(folds.length >= 3, `${folds.length} folds`);
    const refused = new Set(steps.filter((c) => "refused" in c.result).map((c) => c.result.refused));
    assert.deepEqual([...refused].sort(), ["STATE-022", "STATE-045", "STATE-046", "STATE-058", "STATE-060"]);
    assert.ok(steps.some((c) => c.delta.type === "chat.reasoning_delta" && "state" in c.result), "a reasoning delta applies");
    assert.ok(folds.some((c) => c.deltas.every((d) => d.type === "chat.reasoning_delta")), "a reasoning stream is folded");
    assert.ok(steps.some((c) => "state" in c.result && c.result.state.items.length > c.state.items.length), "a delta opens a stream");
    assert.ok(steps.some((c) => "state" in c.result && c.result.state.items.length === c.state.items.length), "a delta grows a stream");
  });

  test("every case: the same state as Rust, or a refusal by the same requirement that changes nothing", () => {
    for (const c of steps) {
      const state = frozen(structuredClone(c.state));
      const result = apply(state, frozen(structuredClone(c.delta)));
      if ("refused" in c.result) {
        assert.equal(result.ok, false, `${c.name}: Rust refuses with ${c.result.refused}`);
        assert.equal(result.refusal, c.result.refused, c.name);
      } else {
        assert.equal(result.ok, true, `${c.name}: Rust accepts, TS says ${result.refusal}: ${result.message}`);
        assert.deepStrictEqual(result.state, c.result.state, c.name);
        // Copy on write: every item the delta did not touch is the very same object.
        const touched = result.state.items.filter((item, i) => item !== state.items[i]);
        assert.ok(touched.length <= 1, `${c.name}: ${touched.length} items changed`);
      }
    }
  });

  test("whole streams folded delta by delta end where Rust's fold ends", () => {
    for (const c of folds) {
      let state = frozen(structuredClone(c.state));
      for (const d of c.deltas) {
        const result = apply(state, d);
        assert.equal(result.ok, true, `${c.name}: ${result.message}`);
        state = frozen(result.state);
      }
      assert.deepStrictEqual(state, c.final, c.name);
      const last = state.items.at(-1);
      assert.equal(last.kind === "reasoning" ? last.text : last.markdown, c.deltas.map(chunk).join(""), c.name);
    }
  });
});
