// Several ChatwireClients on one session (protocol 1.2, `multi_attach`, spec/attach.md) against the
// release reference backend: a resume attaches by default and every tab stays live; each folds the
// same state, also of what another tab caused (a message sent elsewhere arrives as state alone,
// with gaps in `seq`); an answer in one tab settles the call in the other, whose own answer is then
// refused; a cancel from one stops the run the other started; past the bound of attached
// connections the earliest is detached for good (no resume of its own), and `takeOver()` closes
// every other tab instead of attaching.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ChatwireClient, ChatwireError, FOLDED_FEATURES } from "../dist/index.js";
import { startReference, toolCalls, until, wsSockets } from "./helpers.mjs";

let server;
let v11;
before(async () => {
  [server, v11] = await Promise.all([startReference(["--conformance"]), startReference(["--conformance", "--versions", "1.1"])]);
});
after(async () => {
  await Promise.all([server?.stop(), v11?.stop()]);
});

const clients = [];
/** A client whose sockets record the frames it sent (`sent`) and received (`frames`). */
function tab(options = {}, on = server) {
  const sockets = wsSockets();
  const { sent, factory } = sockets;
  const c = new ChatwireClient({
    url: on.url,
    socket: factory,
    clientName: "chatwire-npm-tests",
    requestTimeoutMs: 10_000,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 5 },
    ...options,
  });
  const frames = [];
  c.on("frame", (frame) => frames.push(frame));
  // An error frame that answers another tab's request would land here (ATTACH-005 says it must not).
  const errors = [];
  c.on("error", (error) => errors.push(error.code));
  clients.push(c);
  return { client: c, sockets, sent, frames, errors };
}
after(() => {
  for (const c of clients) c.close();
});

/** A second tab on `first`'s session: an ordinary resume, as a page opened on the session does. */
async function second(first, options = {}, on = server) {
  const { session_id, resume_token, last_seq } = first.session;
  const t = tab({ resume: { session_id, resume_token, last_seq }, ...options }, on);
  const welcome = await t.client.connect();
  return { ...t, welcome };
}

/** Waits until every client holds the same state and `done(state)` holds; returns that state. */
async function agreed(what, cs, done) {
  return until(what, () => {
    const [first, ...rest] = cs.map((c) => c.state);
    return first !== null && done(first) && rest.every((s) => JSON.stringify(s) === JSON.stringify(first)) ? first : undefined;
  });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (markdown) => ({ op: "say", markdown });
const chunks = ["Streaming ", "a reply ", "slowly, ", "chunk ", "by chunk, ", "to the ", "very end."];
const slowSay = { op: "say", markdown: chunks.join(""), chunks, chunk_delay_ms: 120 };
const form = {
  tool_name: "ask_profile",
  interaction_type: "ui_tool",
  display: "inline",
  component_type: "Form",
  payload: { prompt: "Who are you?" },
  response_schema: { type: "object", properties: { name: { type: "string", minLength: 1 } }, required: ["name"] },
  outcome: { kind: "await_response", summary: "profile saved" },
};

describe("attach (1.2, multi_attach)", () => {
  test("a second tab attaches by default: both stay live and see one turn, the other's message as state alone", async () => {
    const a = tab({ script: { turns: [{ steps: [say("Hello from the agent.")] }] } });
    const opened = await a.client.connect();
    assert.equal(opened.version, "1.3");
    assert.ok(opened.features.includes("multi_attach"), "a 1.2 offer without features gets multi_attach");
    assert.ok(opened.limits.max_attached_connections >= 8, `limits.max_attached_connections: ${opened.limits.max_attached_connections}`);
    assert.equal(a.client.attached, true);

    const b = await second(a.client);
    assert.equal(b.welcome.resumed, true);
    assert.deepEqual(b.sent[0].versions, ["1.3", "1.2", "1.1"], "the ordinary offer");
    assert.deepEqual(b.sent[0].features, [...FOLDED_FEATURES], "the features the client folds, multi_attach among them");
    assert.equal(b.client.attached, true);
    await pause(100);
    assert.equal(a.client.status, "open", "the first tab is not taken over (ATTACH-001)");
    assert.equal(a.client.displaced, null);

    const accepted = await b.client.sendMessage("Hi, from tab B", "m-b1");
    const done = await agreed("one completed turn in both tabs", [a.client, b.client], (s) => s.run.status === "completed");
    assert.deepEqual(done.items.map((i) => i.kind), ["user_message", "assistant_markdown"], "one turn, nothing twice");
    assert.equal(done.items[0].client_message_id, "m-b1");
    assert.equal(done.run.invocation_id, accepted.invocation_id);

    // Answers go to the requester only (ATTACH-005); events and state frames to both (ATTACH-004).
    assert.equal(a.frames.filter((f) => f.type === "chat.user_message_accepted").length, 0, "tab A sees B's message as state only");
    assert.equal(b.frames.filter((f) => f.type === "chat.user_message_accepted").length, 1);
    for (const type of ["chat.run_started", "chat.assistant_message", "chat.run_complete"]) {
      const [inA, inB] = [a, b].map((t) => t.frames.filter((f) => f.type === type).map((f) => f.seq));
      assert.equal(inA.length, 1, `${type} once in tab A`);
      assert.deepEqual(inA, inB, `${type} with the same seq in both tabs (ATTACH-006)`);
    }
    const acceptedSeq = b.frames.find((f) => f.type === "chat.user_message_accepted").seq;
    assert.equal(a.frames.some((f) => f.seq === acceptedSeq), false, "tab A's seq has a gap where B's answer was (SEQ-003)");
    assert.equal(a.client.session.last_seq, b.client.session.last_seq, "both hold the session's latest seq");
    assert.deepEqual([a.client.status, b.client.status], ["open", "open"]);
    assert.deepEqual([a.errors, b.errors], [[], []]);
  });

  test("an answer in one tab settles the call in the other; the other's own answer gets tool_call_settled", async () => {
    const a = tab({ script: { turns: [{ steps: [{ op: "tool_calls", calls: [form] }, say("Thanks.")] }] } });
    await a.client.connect();
    const b = await second(a.client);
    await a.client.sendMessage("Sign me up");
    const pending = await agreed("the pending form in both tabs", [a.client, b.client], (s) => s.run.status === "awaiting_input");
    const call = toolCalls(pending).find((c) => c.status === "pending");
    assert.ok(call, "a pending call");

    const settled = await a.client.submit(call.id, { name: "Ada" });
    assert.equal(settled.type, "chat.tool_call_complete");
    const done = await agreed("the call completed and the turn over in both tabs", [a.client, b.client], (s) => s.run.status === "completed");
    assert.equal(toolCalls(done).find((c) => c.id === call.id).status, "completed");
    // The completion answers A's response (in_reply_to): B sees the call settle through its state alone.
    assert.equal(b.frames.some((f) => f.type === "chat.tool_call_complete" && f.tool_call_id === call.id), false, "the answer went to tab A only (ATTACH-005)");
    assert.equal(a.frames.filter((f) => f.type === "chat.tool_call_complete" && f.tool_call_id === call.id).length, 1);
    assert.equal(done.items.filter((i) => i.kind === "assistant_markdown").length, 1, "the turn went on once");
    await assert.rejects(b.client.submit(call.id, { name: "Grace" }), (e) => e instanceof ChatwireError && e.code === "tool_call_settled");
    assert.equal(b.client.status, "open", "a refused answer leaves the tab live");
    assert.deepStrictEqual(a.client.state, b.client.state, "the refusal changed nothing");
    assert.deepEqual([a.errors, b.errors], [[], []], "the refusal rejected B's request and reached no other tab");
  });

  test("a cancel from the other tab stops the run one tab started; only the canceller gets the answer", async () => {
    const a = tab({ script: { turns: [{ steps: [slowSay, say("Never said.")] }] } });
    await a.client.connect();
    const b = await second(a.client);
    const accepted = await a.client.sendMessage("Tell me everything");
    await until("tab B sees the stream", () => b.frames.filter((f) => f.type === "chat.assistant_message_delta").length >= 2);
    assert.equal(b.client.state.run.invocation_id, accepted.invocation_id, "tab B knows the run from its state");
    const answer = await b.client.cancel(b.client.state.run.invocation_id);
    assert.equal(answer.type, "chat.cancel_accepted");
    const done = await agreed("the run cancelled in both tabs", [a.client, b.client], (s) => s.run.status === "cancelled");
    const reply = done.items.at(-1);
    assert.equal(reply.kind, "assistant_markdown");
    assert.ok(reply.markdown.length > 0 && reply.markdown.length < slowSay.markdown.length, `stopped mid-stream: ${JSON.stringify(reply.markdown)}`);
    assert.equal("streaming" in reply, false);
    assert.equal(a.frames.some((f) => f.type === "chat.cancel_accepted"), false, "the answer went to tab B only");
    await pause(2 * slowSay.chunk_delay_ms);
    assert.ok(!a.client.state.items.some((i) => i.markdown === "Never said."));
    // A second cancel, now from tab A, finds nothing to stop.
    await assert.rejects(a.client.cancel(accepted.invocation_id), { code: "run_not_active" });
  });

  test("two tabs sending while idle start one run; the later gets run_in_progress", async () => {
    const a = tab({ script: { turns: [{ steps: [slowSay] }, { steps: [say("Second turn.")] }] } });
    await a.client.connect();
    const b = await second(a.client);
    const results = await Promise.allSettled([a.client.sendMessage("from A"), b.client.sendMessage("from B")]);
    const codes = results.map((r) => (r.status === "fulfilled" ? "accepted" : r.reason.code)).sort();
    assert.deepEqual(codes, ["accepted", "run_in_progress"]);
    const done = await agreed("the one run over in both tabs", [a.client, b.client], (s) => s.run.status === "completed");
    assert.equal(done.items.filter((i) => i.kind === "user_message").length, 1, "one message, one turn");
    assert.deepEqual([a.errors, b.errors], [[], []], "run_in_progress went to the tab that sent the later message only");
  });

  test("a tab attached mid-stream gets the text so far, then every delta: both end with the same state", async () => {
    const a = tab({ script: { turns: [{ steps: [slowSay] }] } });
    await a.client.connect();
    await a.client.sendMessage("Stream it");
    await until("two deltas in tab A", () => a.frames.filter((f) => f.type === "chat.assistant_message_delta").length >= 2);
    const b = await second(a.client);
    const done = await agreed("the stream ended in both tabs", [a.client, b.client], (s) => s.run.status === "completed");
    assert.equal(done.items.at(-1).markdown, slowSay.markdown, "the whole reply, once");
    assert.equal(b.client.status, "open");
  });

  test(`past the bound the earliest tab is detached for good (session_detached, 4003) and never resumes on its own`, async () => {
    const a = tab({ script: { turns: [{ steps: [say("Hi.")] }] } });
    const opened = await a.client.connect();
    const bound = opened.limits.max_attached_connections;
    assert.ok(Number.isInteger(bound) && bound >= 8, `a bound of at least 8: ${bound}`);
    const errors = [];
    a.client.on("error", (e) => errors.push(e.code));
    const statuses = [];
    a.client.on("status", (s) => statuses.push(s));
    const others = [];
    for (let i = 1; i < bound; i++) others.push(await second(a.client));
    await pause(100);
    assert.equal(a.client.status, "open", `${bound} attached connections are kept`);

    const last = await second(a.client);
    await until("tab A detached", () => a.client.status === "closed");
    assert.equal(a.client.displaced, "session_detached");
    assert.equal(a.client.closeError.code, "session_detached");
    assert.equal(a.client.closeError.frame?.fatal, true);
    assert.deepEqual(errors, ["session_detached"]);
    assert.equal(a.sockets.sockets.at(-1).readyState >= 2, true, "its socket is closed");
    await pause(400);
    assert.equal(a.sockets.sockets.length, 1, "a detached client does not resume on its own (it would detach another)");
    assert.deepEqual(statuses, ["closed"]);
    await assert.rejects(a.client.sendMessage("still there?"), { code: "session_detached" });
    for (const t of [...others, last]) assert.equal(t.client.status, "open");

    // The user asks for it back: takeOver() opens it again and closes every other tab.
    const welcome = await a.client.takeOver();
    assert.equal(welcome.resumed, true);
    assert.equal(a.client.status, "open");
    assert.equal(a.client.displaced, null);
    assert.equal(a.client.closeError, null);
    await until("every other tab taken over", () => [...others, last].every((t) => t.client.displaced === "session_taken_over"));
  });

  test("takeOver() resumes with 1.2 alone and features without multi_attach; the others close for good; a later reconnect attaches", async () => {
    const a = tab({ script: { turns: [{ steps: [say("One.")] }, { steps: [say("Two.")] }] } });
    await a.client.connect();
    const b = await second(a.client);
    const c = await second(a.client);
    await b.client.sendMessage("turn one");
    await agreed("the first turn in every tab", [a.client, b.client, c.client], (s) => s.run.status === "completed");

    const welcome = await b.client.takeOver();
    assert.equal(welcome.resumed, true);
    const hello = b.sent.filter((f) => f.type === "session.hello").at(-1);
    assert.deepEqual(hello.versions, ["1.3", "1.2"]);
    assert.ok(Array.isArray(hello.features) && !hello.features.includes("multi_attach") && hello.features.includes("ui_state_patch"), JSON.stringify(hello.features));
    assert.equal(b.client.attached, false, "multi_attach is not in force on the takeover connection");
    await until("tabs A and C taken over", () => a.client.displaced === "session_taken_over" && c.client.displaced === "session_taken_over");
    assert.equal(a.client.closeError.code, "session_taken_over");
    await pause(300);
    assert.equal(a.sockets.sockets.length, 1, "a taken-over tab does not reconnect");
    assert.equal(b.client.status, "open");

    // The new connection serves the session as before.
    await b.client.sendMessage("turn two");
    const done = await until("the second turn", () => b.client.state.run.status === "completed" && b.client.state.items.length === 4 && b.client.state);
    assert.equal(done.items.at(-1).markdown, "Two.");

    // A later reconnect of the tab that took over is an ordinary resume: it attaches, and a tab
    // that attaches beside it leaves it live.
    const before = b.sockets.sockets.length;
    b.sockets.cut();
    await until("tab B back", () => b.sockets.sockets.length === before + 1 && b.client.status === "open");
    const hello2 = b.sent.filter((f) => f.type === "session.hello").at(-1);
    assert.deepEqual(hello2.versions, ["1.3", "1.2", "1.1"]);
    assert.equal(b.client.attached, true);
    const d = await second(b.client);
    await pause(100);
    assert.equal(b.client.status, "open");
    assert.deepStrictEqual(d.client.state, b.client.state);
  });

  test("takeOver() on a client that never connected takes over on its first connection; takeover option does the same", async () => {
    const a = tab({ script: { turns: [] } });
    await a.client.connect();
    const { session_id, resume_token, last_seq } = a.client.session;
    const b = tab({ resume: { session_id, resume_token, last_seq } });
    await b.client.takeOver();
    await until("tab A taken over", () => a.client.displaced === "session_taken_over");
    const c = tab({ resume: { session_id, resume_token, last_seq }, takeOver: true });
    await c.client.connect();
    await until("tab B taken over", () => b.client.displaced === "session_taken_over");
    assert.deepEqual(c.sent[0].versions, ["1.3", "1.2"]);
    await assert.rejects(tab({}).client.takeOver(), (e) => e instanceof ChatwireError && e.code === "no_session");
    const closed = tab({});
    await closed.client.connect();
    closed.client.close();
    await assert.rejects(closed.client.takeOver(), { code: "closed" });
  });

  test("a 1.1 tab's resume takes over a 1.2 tab (ATTACH-002), and a client pinned to 1.1 takes over with an ordinary resume", async () => {
    const a = tab({ script: { turns: [] } });
    await a.client.connect();
    const old = await second(a.client, { versions: ["1.1"] });
    assert.equal(old.welcome.version, "1.1");
    await until("the 1.2 tab taken over", () => a.client.displaced === "session_taken_over");
    // On a 1.1 server every resume takes over: takeOver() sends the ordinary offer.
    const x = tab({}, v11);
    await x.client.connect();
    const y = await second(x.client, {}, v11);
    await until("the first 1.1 tab taken over", () => x.client.displaced === "session_taken_over");
    await x.client.takeOver();
    assert.deepEqual(x.sent.filter((f) => f.type === "session.hello").at(-1).versions, ["1.3", "1.2", "1.1"]);
    await until("the second 1.1 tab taken over", () => y.client.displaced === "session_taken_over");
  });
});
