// Protocol 1.3 with ChatwireClient against the release reference backend, end to end: a scripted
// turn reasons in chunks (the client grows the item from its chat.reasoning_delta frames itself,
// STATE-054), reasons again redacted, answers, and reports usage over two steps; the client's state
// is then exactly what a fresh connection's snapshot holds (a reload), the `usage` event carries the
// run's sum and `state.usage` the sums (STATE-056). A 1.3 client whose hello leaves `reasoning` and
// `usage` out, and a 1.2 one, see the same turn without either (REASON-001, USAGE-004).
// Both are skipped, saying so, against a reference that does not offer the two features yet.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { until } from "./helpers.mjs";
import { useReferences } from "./support/reference.mjs";

const { servers, ready, connect } = useReferences({ main: ["--conformance"] });
/** A client of the reference, and the frames it sent. */
function client(options) {
  const { client: c, sockets } = connect(servers.main, options);
  return { c, sent: sockets.sent };
}

/** Why the tests cannot run here, or null: the reference must offer reasoning and usage. */
let missing = null;
before(async () => {
  await ready();
  const { c } = client({ reconnect: false });
  const welcome = await c.connect();
  c.close();
  const absent = ["reasoning", "usage"].filter((f) => !welcome.capabilities.includes(f));
  if (absent.length > 0) missing = `the reference offers no ${absent.join(" or ")} yet`;
});

const PAYLOAD = "RW5jcnlwdGVkLXJlYXNvbmluZw==";
const chunks = ["The user wants ", "the cheapest fare, ", "so compare carriers."];
const script = {
  turns: [
    {
      steps: [
        { op: "reason", text: chunks.join(""), chunks, chunk_delay_ms: 50, encrypted: PAYLOAD },
        { op: "usage", input_tokens: 1000, output_tokens: 200, cost: { amount: "0.01", currency: "USD" } },
        { op: "reason", text: "", redacted: true, encrypted: PAYLOAD },
        { op: "say", markdown: "TAP is the cheapest." },
        { op: "usage", input_tokens: 200, output_tokens: 40, reasoning_tokens: 64, cost: { amount: "0.0023", currency: "USD" } },
      ],
    },
  ],
};
const SUM = { input_tokens: 1200, output_tokens: 240, reasoning_tokens: 64, cost: { amount: "0.0123", currency: "USD" } };

/** Runs the script's turn on a client with `options` and resolves with its final state. */
async function turn(options) {
  const { c, sent } = client({ script, ...options });
  const reported = [];
  c.on("usage", (usage, frame) => reported.push({ usage, invocation: frame.invocation_id }));
  const deltas = [];
  c.on("frame", (frame) => {
    if (frame.type === "chat.reasoning_delta") deltas.push(frame.text);
  });
  const welcome = await c.connect();
  const accepted = await c.sendMessage("Find the cheapest flight");
  const state = await until("the run's end", () => (c.state?.run.status === "completed" ? c.state : undefined));
  return { c, sent, welcome, accepted, state, reported, deltas };
}

test("a 1.3 client grows streamed reasoning, keeps the payload, and gets the run's usage as the state's sums", async (t) => {
  if (missing !== null) return t.skip(missing);
  const { c, welcome, accepted, state, reported, deltas } = await turn({});
  assert.equal(welcome.version, "1.3");
  assert.ok(c.session.features.includes("reasoning") && c.session.features.includes("usage"), JSON.stringify(c.session.features));
  assert.deepEqual(deltas, chunks, "the reasoning streamed, one delta per chunk");
  const reasoning = state.items.filter((i) => i.kind === "reasoning");
  assert.equal(reasoning.length, 2);
  assert.deepEqual(
    reasoning.map(({ text, redacted, encrypted, streaming }) => ({ text, redacted, encrypted, streaming })),
    [
      { text: chunks.join(""), redacted: undefined, encrypted: PAYLOAD, streaming: undefined },
      { text: "", redacted: true, encrypted: PAYLOAD, streaming: undefined },
    ],
  );
  assert.deepEqual(reported, [{ usage: SUM, invocation: accepted.invocation_id }], "one usage event, the slice's sum");
  assert.deepEqual(state.usage, { total: SUM, invocations: { [accepted.invocation_id]: SUM } });
  // What the client built, delta by delta, is what a reload gets whole.
  const { session_id, resume_token } = c.session;
  const { c: fresh } = client({ resume: { session_id, resume_token, last_seq: 0 } });
  await fresh.connect();
  const snapshot = await until("the reload's snapshot", () => fresh.state ?? undefined);
  assert.deepStrictEqual(snapshot, state);
});

test("a 1.3 client that leaves reasoning and usage out, and a 1.2 client, see the turn without either", async (t) => {
  if (missing !== null) return t.skip(missing);
  for (const options of [
    { features: ["ui_state_patch", "resume_catch_up", "assistant_stream", "multi_attach"], versions: ["1.3"] },
    { versions: ["1.2", "1.1", "1.0"] },
  ]) {
    const { c, welcome, state, reported, deltas } = await turn(options);
    const label = `${welcome.version} with ${JSON.stringify(c.session.features)}`;
    assert.ok(!c.session.features.includes("reasoning") && !c.session.features.includes("usage"), label);
    assert.deepEqual(deltas, [], `${label}: no reasoning frame`);
    assert.equal(state.items.some((i) => i.kind === "reasoning"), false, `${label}: no reasoning item`);
    assert.equal(state.usage, undefined, `${label}: no usage in the state`);
    assert.deepEqual(reported, [], `${label}: no usage on the run's end`);
    assert.deepEqual(state.items.map((i) => i.kind), ["user_message", "assistant_markdown"], label);
  }
});
