// Protocol 1.2 with ChatwireClient against the release reference backend: cancel() stops a run
// mid-stream (the text streamed so far stays, CANCEL-004), while its tool runs and while it awaits
// input (the open call is dismissed by the client, CANCEL-003, and its result goes nowhere,
// CANCEL-005), and is refused as CANCEL-006 says; a call's response_schema
// reaches a 1.2 connection and the server refuses a value that breaks it with response_invalid
// naming the pointer the package's own checker names (TOOL-023, TOOL-024). And the same client
// against servers that speak only 1.1 or 1.0: it negotiates them, runs a turn, and its cancel gets
// the answer those versions give a frame they do not define (unknown_type).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChatwireError, checkResponse } from "../dist/index.js";
import { toolCalls, until } from "./helpers.mjs";
import { useReferences } from "./support/reference.mjs";

/** One reference per configuration, started once. */
const { servers, connect } = useReferences({
  all: ["--conformance"],
  v11: ["--conformance", "--versions", "1.1"],
  v10: ["--conformance", "--versions", "1.0"],
  withoutCancel: ["--conformance", "--without", "cancel"],
});
const client = (server, options) => connect(server, options).client;

/** A state as a fresh connection to the same session gets it (a reload). */
async function reloaded(server, c) {
  const { session_id, resume_token } = c.session;
  const fresh = client(server, { resume: { session_id, resume_token, last_seq: 0 } });
  await fresh.connect();
  return until("the snapshot", () => fresh.state ?? undefined);
}

const chunks = ["The first ", "half of ", "the answer, ", "then the ", "second half ", "that nobody ", "will read."];
const slowSay = { op: "say", markdown: chunks.join(""), chunks, chunk_delay_ms: 150 };
const form = {
  tool_name: "ask_profile",
  interaction_type: "ui_tool",
  display: "inline",
  component_type: "Form",
  payload: { prompt: "Who are you?" },
  response_schema: {
    type: "object",
    properties: { name: { type: "string", minLength: 1, title: "Name" }, age: { type: "integer", minimum: 0, maximum: 150 } },
    required: ["name"],
    additionalProperties: false,
  },
  outcome: { kind: "await_response", summary: "profile saved" },
};

describe("cancel (1.2)", () => {
  test("a run stopped mid-stream keeps exactly the text streamed so far, ends cancelled, and a reload shows the same", async () => {
    const c = client(servers.all, { script: { turns: [{ steps: [slowSay, { op: "say", markdown: "Never said." }] }] } });
    const welcome = await c.connect();
    assert.equal(welcome.version, "1.3");
    assert.ok(c.session.capabilities.includes("cancel"), "the reference offers cancel");
    const frames = [];
    c.on("frame", (f) => frames.push(f));
    const accepted = await c.sendMessage("Tell me everything");
    await until("two deltas", () => frames.filter((f) => f.type === "chat.assistant_message_delta").length >= 2);
    const answer = await c.cancel(accepted.invocation_id, "stop-1");
    assert.equal(answer.type, "chat.cancel_accepted");
    assert.equal(answer.in_reply_to, "stop-1");
    assert.equal(answer.invocation_id, accepted.invocation_id);
    const done = await until("the run cancelled", () => c.state.run.status === "cancelled" && c.state);
    assert.equal(done.run.invocation_id, accepted.invocation_id);

    const deltas = frames.filter((f) => f.type === "chat.assistant_message_delta");
    const streamed = deltas.map((f) => f.delta).join("");
    assert.ok(deltas.length >= 2 && deltas.length < chunks.length, `stopped mid-stream, after ${deltas.length} of ${chunks.length} chunks`);
    const end = frames.find((f) => f.type === "chat.assistant_message");
    assert.equal(end.markdown, streamed, "the stream ends with exactly the text streamed so far (CANCEL-004)");
    const complete = frames.find((f) => f.type === "chat.run_complete");
    assert.deepEqual([complete.status, complete.reason], ["cancelled", "cancelled"]);
    const order = ["chat.cancel_accepted", "chat.assistant_message", "chat.run_complete"].map((t) => frames.findIndex((f) => f.type === t));
    assert.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])), `answer, stream end, run end: ${order}`);
    const reply = done.items.at(-1);
    assert.equal(reply.kind, "assistant_markdown");
    assert.equal(reply.markdown, streamed);
    assert.equal("streaming" in reply, false, "an ordinary finished message");

    // Nothing of the run comes after (CANCEL-005), and a second cancel has no effect (CANCEL-006).
    await new Promise((resolve) => setTimeout(resolve, 2 * slowSay.chunk_delay_ms));
    assert.equal(frames.filter((f) => f.type === "chat.assistant_message_delta").length, deltas.length);
    assert.ok(!c.state.items.some((item) => item.markdown === "Never said."));
    await assert.rejects(c.cancel(accepted.invocation_id), (e) => e instanceof ChatwireError && e.code === "run_not_active");
    await assert.rejects(c.cancel("inv-never-was"), { code: "unknown_invocation" });
    assert.equal(c.status, "open");
    assert.deepStrictEqual(await reloaded(servers.all, c), c.state, "a reload shows the state the client built");
  });

  // The cancel opens a slice first (chat.run_started, CANCEL-003: only a slice in progress can end).
  test("a run awaiting input: its pending call is dismissed by the client, reason cancelled", async () => {
    const c = client(servers.all, { script: { turns: [{ steps: [{ op: "tool_calls", calls: [form] }, { op: "say", markdown: "Thanks." }] }] } });
    await c.connect();
    const accepted = await c.sendMessage("Sign me up");
    const pending = await until("the pending form", () => c.state?.run.status === "awaiting_input" && toolCalls(c.state).find((call) => call.status === "pending"));
    await c.cancel(accepted.invocation_id);
    await until("the run cancelled", () => c.state.run.status === "cancelled");
    const call = toolCalls(c.state).find((x) => x.id === pending.id);
    assert.equal(call.status, "dismissed");
    assert.deepEqual(call.dismissal, { initiated_by: "client", reason: "cancelled" });
    await assert.rejects(c.submit(pending.id, { name: "ann" }), { code: "tool_call_settled" });
    assert.deepStrictEqual(await reloaded(servers.all, c), c.state);
  });

  test("a run whose tool is running: the call is dismissed by the client and never completes", async () => {
    const slowTool = { tool_name: "crawl", interaction_type: "auto_tool", display: "inline", payload: {}, run_ms: 1500, outcome: { kind: "result", value: { pages: 3 } } };
    const c = client(servers.all, { script: { turns: [{ steps: [{ op: "tool_calls", calls: [slowTool] }, { op: "say", markdown: "Crawled." }] }] } });
    await c.connect();
    const frames = [];
    c.on("frame", (f) => frames.push(f));
    const accepted = await c.sendMessage("Crawl");
    const running = await until("the running tool", () => toolCalls(c.state).find((call) => call.status === "running"));
    await c.cancel(accepted.invocation_id);
    await until("the run cancelled", () => c.state.run.status === "cancelled");
    assert.equal(toolCalls(c.state)[0].status, "dismissed");
    assert.deepEqual(toolCalls(c.state)[0].dismissal, { initiated_by: "client", reason: "cancelled" });
    // Past the tool's own end: its result goes nowhere (CANCEL-005).
    await new Promise((resolve) => setTimeout(resolve, slowTool.run_ms + 300));
    assert.ok(!frames.some((f) => f.type === "chat.tool_call_complete" && f.tool_call_id === running.id), "no settlement after the cancel");
    assert.equal(toolCalls(c.state)[0].status, "dismissed");
    assert.ok(!c.state.items.some((item) => item.markdown === "Crawled."));
  });

  test("a server that does not offer cancel refuses it with capability_not_offered and goes on", async () => {
    const c = client(servers.withoutCancel, { script: { turns: [{ steps: [slowSay] }] } });
    await c.connect();
    assert.equal(c.session.capabilities.includes("cancel"), false);
    const accepted = await c.sendMessage("Go");
    await assert.rejects(c.cancel(accepted.invocation_id), { code: "capability_not_offered" });
    await until("the run completed anyway", () => c.state?.run.status === "completed", 15_000);
    assert.equal(c.state.items.at(-1).markdown, chunks.join(""));
  });
});

describe("response_schema (1.2)", () => {
  test("the call and its item carry the schema; a value that breaks it is refused naming the pointer the package's checker names, and the call stays answerable", async () => {
    const c = client(servers.all, { script: { turns: [{ steps: [{ op: "tool_calls", calls: [form] }] }] } });
    await c.connect();
    await c.sendMessage("Sign me up");
    const pending = await until("the pending form", () => toolCalls(c.state).find((call) => call.status === "pending"));
    assert.deepEqual(pending.response_schema, form.response_schema, "the item keeps the schema (STATE-013)");
    for (const [value, pointer] of [
      [{}, "/name"],
      [{ name: "" }, "/name"],
      [{ name: "ann", age: 151 }, "/age"],
      [{ name: "ann", age: 1.5 }, "/age"],
      [{ name: "ann", extra: true }, "/extra"],
      ["ann", ""],
    ]) {
      const mine = checkResponse(pending, value);
      assert.equal(mine?.pointer, pointer, `the package's checker on ${JSON.stringify(value)}`);
      await assert.rejects(c.submit(pending.id, value), (e) => {
        assert.equal(e.code, "response_invalid", JSON.stringify(value));
        assert.ok(e.message.includes(pointer === "" ? "value" : pointer), `${e.message} names ${pointer || "the whole value"}`);
        return true;
      });
    }
    assert.equal(toolCalls(c.state).find((x) => x.id === pending.id).status, "pending", "nothing was committed");
    const settled = await c.submit(pending.id, { name: "ann", age: 30 });
    assert.equal(settled.type, "chat.tool_call_complete");
    assert.deepEqual(settled.result, { name: "ann", age: 30 });
  });
});

describe("the 1.2 client against older servers and on older connections", () => {
  // A script of 1.1 or 1.0 has no response_schema (SCRIPT-022 is 1.2).
  const { response_schema: _schema, ...untyped } = form;
  for (const [version, key] of [["1.1", "v11"], ["1.0", "v10"]]) {
    test(`a ${version} server: the client negotiates ${version}, runs a turn, and its cancel gets unknown_type`, async () => {
      // A wait, not a stream: 1.0 has no streams.
      const steps = [{ op: "wait", ms: 600 }, { op: "say", markdown: "Thought it over." }, { op: "tool_calls", calls: [untyped] }, { op: "say", markdown: "Saved." }];
      const c = client(servers[key], { script: { turns: [{ steps }] } });
      const welcome = await c.connect();
      assert.equal(welcome.version, version);
      assert.equal(c.session.capabilities.includes("cancel"), false, "no 1.2 value on an older connection");
      const accepted = await c.sendMessage("Sign me up");
      await until("the run started", () => c.state?.run.status === "running");
      await assert.rejects(c.cancel(accepted.invocation_id), (e) => e instanceof ChatwireError && e.code === "unknown_type");
      const pending = await until("the pending form", () => toolCalls(c.state).find((call) => call.status === "pending"), 15_000);
      assert.equal(c.state.items.find((item) => item.kind === "assistant_markdown").markdown, "Thought it over.", "the run went on");
      await c.submit(pending.id, { name: "ann" });
      await until("the turn completed", () => c.state.run.status === "completed");
      assert.equal(c.state.items.at(-1).markdown, "Saved.");
    });

    test(`a session with a typed call, resumed on a ${version} connection: no response_schema, and a breaking value gets invalid_frame naming the pointer (TOOL-025)`, async () => {
      const typed = client(servers.all, { script: { turns: [{ steps: [{ op: "tool_calls", calls: [form] }, { op: "say", markdown: "Saved." }] }] } });
      await typed.connect();
      await typed.sendMessage("Sign me up");
      await until("the pending form", () => toolCalls(typed.state).find((call) => call.status === "pending"));
      const { session_id, resume_token, last_seq } = typed.session;
      typed.close();
      const older = client(servers.all, { versions: [version], resume: { session_id, resume_token, last_seq } });
      const welcome = await older.connect();
      assert.equal(welcome.version, version);
      const pending = await until("the pending form", () => toolCalls(older.state).find((call) => call.status === "pending"));
      assert.equal("response_schema" in pending, false, `a ${version} connection never sees response_schema`);
      await assert.rejects(older.submit(pending.id, { name: "" }), (e) => e.code === "invalid_frame" && e.message.includes("/name"));
      await older.submit(pending.id, { name: "ann" });
      await until("the turn completed", () => older.state.run.status === "completed");
    });
  }
});
