// applyDelta and applyReasoningDelta on sub-agent transcripts (since 1.3, feature `subagents`,
// STATE-065), against the Rust reducer on the shared corpus fixtures/subagent-traces/traces.jsonl,
// which schema/tests/support/corpus_subagents.rs writes and drift-checks. The client folds the
// deltas itself and takes every other change as a patch, so each delta step of each trace is
// replayed on the state before it (the trace's initial state is a snapshot's): the same new state,
// or a refusal by the same requirement that changes nothing; and every other applied step's patch
// (nested paths, /items/3/subagent/items/5/...) applied to the state before it gives Rust's state.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { applyDelta, applyJsonPatch, applyReasoningDelta } from "../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const traces = readFileSync(path.join(root, "fixtures/subagent-traces/traces.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

/** Every step with the state before it. */
const steps = traces.flatMap((trace) =>
  trace.steps.map((step, n) => ({ name: `${trace.name} seq ${step.event.seq}`, before: n === 0 ? trace.initial : trace.steps[n - 1].state, step })),
);
const isDelta = (event) => event.type === "chat.assistant_message_delta" || event.type === "chat.reasoning_delta";
const deltas = steps.filter((s) => isDelta(s.step.event));
/** The applied steps whose change reaches the client as a patch. */
const patched = steps.filter((s) => !isDelta(s.step.event) && s.step.refused === null);

const apply = (state, delta) => (delta.type === "chat.reasoning_delta" ? applyReasoningDelta(state, delta) : applyDelta(state, delta));

/** Deep-freezes a document, so that a rule that changed its input would throw. */
function frozen(value) {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/** The items of the transcript the call `hostId` hosts, anywhere in `state`. */
function nestedItems(state, hostId) {
  for (const item of state.items) {
    if (item.kind !== "tool_call" || item.subagent === undefined) continue;
    if (item.id === hostId) return item.subagent.items;
    const below = nestedItems({ items: item.subagent.items }, hostId);
    if (below !== null) return below;
  }
  return null;
}

describe("the shared sub-agent corpus", () => {
  test("is there, with nested deltas that apply at depth 1 and 2 and the refusals a nested delta meets", () => {
    assert.ok(traces.length >= 5, `${traces.length} traces`);
    const nested = deltas.filter((d) => d.step.event.parent_call_id !== undefined);
    assert.ok(nested.length >= 15, `${nested.length} nested deltas`);
    const applied = nested.filter((d) => d.step.refused === null);
    assert.ok(applied.some((d) => d.step.event.type === "chat.reasoning_delta"), "a nested reasoning delta applies");
    assert.ok(applied.some((d) => d.step.event.parent_call_id === "tc-h2"), "a depth-2 delta applies");
    const refused = new Set(deltas.filter((d) => d.step.refused !== null).map((d) => d.step.refused.requirement));
    for (const req of ["STATE-022", "STATE-025", "STATE-045", "STATE-046", "STATE-060", "STATE-071"]) {
      assert.ok(refused.has(req), `no delta refused by ${req}: ${[...refused]}`);
    }
  });

  test("every delta: the same state as Rust, or a refusal by the same requirement that changes nothing", () => {
    for (const { name, before, step } of deltas) {
      const state = frozen(structuredClone(before));
      const result = apply(state, frozen(structuredClone(step.event)));
      if (step.refused !== null) {
        assert.equal(result.ok, false, `${name}: Rust refuses with ${step.refused.requirement}`);
        assert.equal(result.refusal, step.refused.requirement, name);
        continue;
      }
      assert.equal(result.ok, true, `${name}: Rust accepts, TS says ${result.refusal}: ${result.message}`);
      assert.deepStrictEqual(result.state, step.state, name);
      // Copy on write: at most the one top-level item on the path changes; the rest are the same objects.
      const touched = result.state.items.filter((item, i) => item !== state.items[i]);
      assert.ok(touched.length <= 1, `${name}: ${touched.length} top-level items changed`);
      const parent = step.event.parent_call_id;
      if (parent !== undefined) {
        const [was, now] = [nestedItems(state, parent), nestedItems(result.state, parent)];
        const shared = now.filter((item, i) => item === was[i]).length;
        assert.ok(shared >= now.length - 1, `${name}: only the streaming item of the transcript is new`);
      }
    }
  });

  test("every other applied step: Rust's patch on the state before it gives Rust's state", () => {
    assert.ok(patched.some((s) => s.step.patch.some((op) => /^\/items\/\d+\/subagent\/items\/\d+\/subagent\//.test(op.path))), "a depth-2 patch");
    for (const { name, before, step } of patched) {
      const state = frozen(structuredClone(before));
      assert.deepStrictEqual(applyJsonPatch(state, step.patch), step.state, name);
    }
  });
});
