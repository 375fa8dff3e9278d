// The features a default hello asks for are FOLDED_FEATURES, and that list is exactly the features
// this client folds: for every feature of the newest version there is a probe that feeds the
// client's reducer (the delta rules, the state tracker, the page merge) what the feature brings, and
// a feature is listed if and only if its probe passes. Listing a feature the reducer does not fold
// (as `subagents` was before nested deltas were), or leaving out one it folds, fails here.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  applyDelta,
  applyReasoningDelta,
  ERROR_HANDLING,
  FOLDED_FEATURES,
  mergePage,
  PROTOCOL_VERSION,
  VERSION_FACTS,
} from "../dist/index.js";
import { StateTracker } from "../dist/state.js";

const TS = "2026-11-23T10:00:00.000Z";
const user = { kind: "user_message", id: "u-1", invocation_id: "inv-1", client_message_id: "m-1", text: "Hi", ts: TS };
const running = { status: "running", invocation_id: "inv-1" };
const said = (id) => ({ kind: "assistant_markdown", id, invocation_id: "inv-1", markdown: `said ${id}`, ts: TS });

/** A tracker holding `state` at seq 10, then given a patch of `ops` on it. */
function patched(state, ops) {
  const tracker = new StateTracker();
  tracker.snapshot({ type: "ui_state_snapshot", seq: 10, v: "ui_state_v1", state });
  return tracker.patch({ type: "ui_state_patch", seq: 11, base_seq: 10, v: "ui_state_v1", patch: ops });
}

/** A tool call of inv-1 that hosts a running sub-agent with an empty transcript. */
const host = {
  kind: "tool_call", id: "tc-1", invocation_id: "inv-1", tool_name: "research", interaction_type: "auto_tool", display: "inline",
  awaiting_response: false, status: "running", payload: {}, ts: TS,
  subagent: { thread_id: "th-1", input: "Find it", status: "running", items: [] },
};

/** Per feature: whether the client folds what it brings. */
const PROBES = {
  // A patch applies to the state held (STATE-037).
  ui_state_patch: () => {
    const r = patched({ items: [user], run: running }, [{ op: "add", path: "/items/-", value: said("a-1") }]);
    return r.ok && r.state.items.length === 2;
  },
  // A catch-up is a patch on the state of the resume's last_seq; the client resumes with that seq.
  resume_catch_up: () => {
    const r = patched({ items: [user, said("a-1")], run: running }, [{ op: "replace", path: "/run", value: { ...running, status: "completed" } }]);
    return r.ok && r.state.run.status === "completed";
  },
  // A text delta opens a stream (STATE-042).
  assistant_stream: () => {
    const r = applyDelta({ items: [user], run: running }, { type: "chat.assistant_message_delta", seq: 11, invocation_id: "inv-1", item_id: "a-1", delta: "Hel", ts: TS });
    return r.ok && r.state.items.at(-1).streaming === true && r.state.items.at(-1).markdown === "Hel";
  },
  // Other tabs change nothing the client folds; a detached one is told so and stops for good.
  multi_attach: () => ERROR_HANDLING.session_detached === "final",
  // A history page joins the window in front of its items (WINDOW-008).
  state_window: () => {
    const merged = mergePage({ items: [said("a-3")], run: running }, "a-3", [said("a-2")]);
    return merged?.items.map((i) => i.id).join() === "a-2,a-3";
  },
  // A reasoning delta opens a reasoning stream (STATE-054).
  reasoning: () => {
    const r = applyReasoningDelta({ items: [user], run: running }, { type: "chat.reasoning_delta", seq: 11, invocation_id: "inv-1", item_id: "r-1", text: "Think", ts: TS });
    return r.ok && r.state.items.at(-1).kind === "reasoning" && r.state.items.at(-1).text === "Think";
  },
  // The state's sums arrive by patches like any member (STATE-056).
  usage: () => {
    const r = patched({ items: [user], run: running }, [{ op: "add", path: "/usage", value: { total: { input_tokens: 3, output_tokens: 1 }, invocations: {} } }]);
    return r.ok && r.state.usage.total.input_tokens === 3;
  },
  // A nested delta grows the transcript of the call it names, not the top level (STATE-065).
  subagents: () => {
    const delta = { type: "chat.assistant_message_delta", seq: 11, parent_call_id: "tc-1", invocation_id: "inv-1", item_id: "sa-1", delta: "Look", ts: TS };
    const r = applyDelta({ items: [user, host], run: running }, delta);
    if (!r.ok || r.state.items.length !== 2) return false;
    const nested = r.state.items[1].subagent?.items ?? [];
    return nested.length === 1 && nested[0].markdown === "Look";
  },
};

test("every feature of the newest version has a probe", () => {
  const features = VERSION_FACTS[PROTOCOL_VERSION].features;
  assert.deepEqual(Object.keys(PROBES).sort(), [...features].sort());
});

test("the default offer lists exactly the features whose probes pass", () => {
  for (const feature of VERSION_FACTS[PROTOCOL_VERSION].features) {
    const folded = PROBES[feature]();
    assert.equal(FOLDED_FEATURES.includes(feature), folded, `${feature}: ${folded ? "folded but not offered" : "offered but the reducer does not fold it"}`);
  }
  assert.ok(FOLDED_FEATURES.includes("subagents"), "nested deltas are folded (test/subagent-traces.test.mjs)");
});
