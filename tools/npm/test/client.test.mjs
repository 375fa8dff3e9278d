// ChatwireClient against the bundled reference backend (conformance mode, scripted agent): a
// human-in-the-loop turn, a multi-tool turn, a disconnect mid-turn and resume, a retry whose
// reply streams (1.1), rewind, takeover, and the server errors a client can provoke.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toolCalls, until, wsSockets } from "./helpers.mjs";
import { useReferences } from "./support/reference.mjs";

const { servers, connect } = useReferences({ main: ["--conformance"] });
/** A client of the reference, as `{ client, sockets }`. */
const client = (options) => connect(servers.main, options);

const say = (markdown) => ({ op: "say", markdown });
const askYesNo = {
  tool_name: "confirm_deploy",
  interaction_type: "ui_tool",
  display: "inline",
  component_type: "YesNo",
  payload: { question: "Deploy to staging?" },
  outcome: { kind: "await_response", summary: "Deploy confirmed" },
};

describe("human in the loop", () => {
  test("a Yes/No form is answered with `true`; the completed call survives a resume", async () => {
    const { client: c, sockets } = client({ script: { turns: [{ steps: [{ op: "tool_calls", calls: [askYesNo] }, say("Deploying.")] }] } });
    const welcome = await c.connect();
    assert.equal(welcome.resumed, false);
    const accepted = await c.sendMessage("Deploy the staging branch");
    assert.equal(accepted.text, "Deploy the staging branch");
    const pending = await until("a pending form", () => toolCalls(c.state).find((call) => call.status === "pending"));
    assert.equal(pending.component_type, "YesNo");
    await until("the run awaiting input", () => c.state.run.status === "awaiting_input");

    const settled = await c.submit(pending.id, true);
    assert.equal(settled.type, "chat.tool_call_complete");
    assert.equal(settled.result, true);
    await until("the run completed", () => c.state.run.status === "completed");
    const call = toolCalls(c.state)[0];
    assert.deepEqual([call.status, call.result, call.summary], ["completed", true, "Deploy confirmed"]);

    // A reload resumes with the stored ids: the call stays completed, nothing is interactive.
    const stored = { ...c.session };
    c.close();
    const { client: reloaded } = client({ resume: { session_id: stored.session_id, resume_token: stored.resume_token, last_seq: stored.last_seq } });
    const again = await reloaded.connect();
    assert.equal(again.resumed, true);
    assert.equal(again.session_id, stored.session_id);
    // A 1.1 server may first answer with a catch-up the reloaded client (holding no state) cannot use:
    // it resumes once more and gets the snapshot.
    await until("the snapshot", () => reloaded.state ?? undefined);
    assert.deepEqual(toolCalls(reloaded.state).map((x) => x.status), ["completed"]);
    assert.equal(reloaded.state.items.at(-1).markdown, "Deploying.");
    sockets.cut();
  });
});

describe("multi-tool turn", () => {
  test("auto tools settle by themselves, the UI tool waits for its answer, then the turn goes on", async () => {
    const calls = [
      { tool_name: "build", interaction_type: "auto_tool", display: "inline", payload: { target: "app" }, run_ms: 0, outcome: { kind: "result", value: { artifact: "app.tar" } } },
      { tool_name: "request_api_key", interaction_type: "ui_tool", display: "artifact", component_type: "ApiKeyInput", payload: { provider: "openai" }, outcome: { kind: "await_response", summary: "API key saved" } },
      { tool_name: "upload", interaction_type: "auto_tool", display: "inline", payload: {}, run_ms: 10, outcome: { kind: "error", message: "bucket not found" } },
    ];
    const { client: c } = client({ script: { turns: [{ steps: [{ op: "tool_calls", calls }, say("Deployed.")] }] } });
    await c.connect();
    await c.sendMessage("Deploy");
    await until("the batch awaiting input", () => c.state?.run.status === "awaiting_input" && c.state);
    const byName = Object.fromEntries(toolCalls(c.state).map((call) => [call.tool_name, call]));
    assert.deepEqual(
      [byName.build.status, byName.request_api_key.status, byName.upload.status],
      ["completed", "pending", "failed"],
    );
    assert.equal(byName.request_api_key.display, "artifact");
    const settled = await c.submit(byName.request_api_key.id, { api_key: "sk-test" });
    assert.equal(settled.summary, "API key saved");
    await until("the turn completed", () => c.state.run.status === "completed");
    assert.equal(c.state.items.at(-1).markdown, "Deployed.");
  });
});

describe("disconnect and resume", () => {
  test("a connection cut mid-turn is resumed with the latest token and last_seq; the turn's effects arrive in the snapshot", async () => {
    const script = { turns: [{ steps: [{ op: "wait", ms: 400 }, say("Done waiting."), { op: "end", status: "completed" }] }] };
    const { client: c, sockets } = client({ script });
    const welcome = await c.connect();
    const statuses = [];
    c.on("status", (s) => statuses.push(s));
    const sessions = [];
    c.on("session", (s) => sessions.push(s));
    await c.sendMessage("Take your time");
    await until("the run started", () => c.state?.run.status === "running");
    const seenBeforeCut = c.session.last_seq;
    sockets.cut();
    await until("a second connection", () => sockets.sockets.length === 2 && c.status === "open");
    assert.deepEqual(statuses.slice(0, 2), ["reconnecting", "open"]);
    assert.equal(c.session.session_id, welcome.session_id);
    assert.equal(c.session.resumed, true);
    assert.ok(c.session.last_seq > seenBeforeCut, "the resumed welcome's seq is above every seq seen before");
    assert.ok(sessions.every((s, i) => i === 0 || s.last_seq >= sessions[i - 1].last_seq), "last_seq never goes back");
    await until("the turn completed", () => c.state.run.status === "completed");
    assert.equal(c.state.items.at(-1).markdown, "Done waiting.");
  });

  test("a pending form answered after a reconnect settles exactly once", async () => {
    const { client: c, sockets } = client({ script: { turns: [{ steps: [{ op: "tool_calls", calls: [askYesNo] }] }] } });
    await c.connect();
    await c.sendMessage("Deploy?");
    const pending = await until("a pending form", () => toolCalls(c.state).find((call) => call.status === "pending"));
    sockets.cut();
    await until("the resumed connection", () => sockets.sockets.length === 2 && c.status === "open");
    const settled = await c.submit(pending.id, false);
    assert.equal(settled.result, false);
    await assert.rejects(c.submit(pending.id, true), { code: "tool_call_settled" });
  });
});

describe("state frames of both versions", () => {
  test("the state the client builds from patches and a catch-up equals the snapshot a new connection gets", async () => {
    const steps = [say("One."), { op: "wait", ms: 300 }, say("Two."), { op: "tool_calls", calls: [{ ...askYesNo, interaction_type: "auto_tool", component_type: undefined, run_ms: 10, outcome: { kind: "result", value: 2 } }] }, say("Three.")];
    const { client: c, sockets } = client({ script: { turns: [{ steps }] } });
    const frames = [];
    c.on("frame", (f) => frames.push(f));
    const welcome = await c.connect();
    await c.sendMessage("Count");
    await until("the first answer", () => c.state?.items.some((item) => item.markdown === "One."));
    const heldBeforeCut = frames.filter((f) => f.type.startsWith("ui_state_")).at(-1).seq;
    sockets.cut();
    await until("the turn completed", () => c.state?.run.status === "completed" && c.state);
    const resumed = frames.findLastIndex((f) => f.type === "session.welcome");
    const answer = frames[resumed + 1];
    if (welcome.version !== "1.0" && c.session.features.includes("resume_catch_up")) {
      assert.ok(frames.some((f, i) => i < resumed && f.type === "ui_state_patch"), "a 1.1 connection carries patches");
      assert.equal(answer.type, "ui_state_patch", "a catch-up after the resumed welcome (RESUME-017)");
      assert.equal(answer.base_seq, heldBeforeCut, "from the state the client held");
    } else {
      assert.equal(answer.type, "ui_state_snapshot");
      assert.ok(!frames.some((f) => f.type === "ui_state_patch"), "no patch on a 1.0 connection");
    }
    const built = c.state;
    const session = { ...c.session };
    c.close();
    const { client: fresh } = client({ resume: { session_id: session.session_id, resume_token: session.resume_token, last_seq: 0 } });
    await fresh.connect();
    const snapshot = await until("the snapshot", () => fresh.state ?? undefined);
    assert.deepStrictEqual(built, snapshot);
  });
});

describe("streamed text and retry (1.1)", () => {
  test("a retry keeps the completed call, runs again, and its streamed reply grows to the whole text; the state equals a fresh snapshot", async () => {
    const crawl = { ...askYesNo, tool_name: "crawl", interaction_type: "auto_tool", component_type: undefined, run_ms: 10, outcome: { kind: "result", value: { pages: 1200 } } };
    const chunks = ["Crawled ", "1200 pages; ", "the index ", "is ready."];
    const script = {
      turns: [{ steps: [{ op: "tool_calls", calls: [crawl] }, { op: "end", status: "failed", error: "the model timed out" }], retries: [{ steps: [{ op: "say", markdown: chunks.join(""), chunks, chunk_delay_ms: 50 }] }] }],
    };
    const { client: c } = client({ script });
    const welcome = await c.connect();
    assert.equal(welcome.version, "1.3", "the reference speaks the newest version the client offers");
    assert.ok(c.session.capabilities.includes("retry"), "the reference offers retry");
    assert.ok(c.session.features.includes("assistant_stream"), "streams are in force by default (with ui_state_patch)");
    const seen = [];
    c.on("state", (state) => {
      const last = state.items.at(-1);
      if (last?.kind === "assistant_markdown" && last.streaming === true) seen.push(last.markdown);
    });
    await c.sendMessage("Index the site");
    await until("the failed run", () => c.state?.run.status === "failed" && c.state);
    const call = c.state.items.find((item) => item.kind === "tool_call");
    assert.equal(call.status, "completed");
    const accepted = await c.retry(call.id);
    assert.deepEqual(accepted.removed_item_ids, [], "nothing after the call");
    await until("the retried run completed", () => c.state.run.status === "completed" && c.state);
    assert.deepEqual(seen, ["Crawled ", "Crawled 1200 pages; ", "Crawled 1200 pages; the index ", "Crawled 1200 pages; the index is ready."], "one state per delta, growing");
    const reply = c.state.items.at(-1);
    assert.equal(reply.markdown, chunks.join(""));
    assert.equal("streaming" in reply, false, "the end frame closed the stream");
    assert.deepStrictEqual(c.state.items.find((item) => item.id === call.id), call, "the kept call is untouched");
    assert.equal(c.state.items.filter((item) => item.kind === "tool_call").length, 1, "the call was not executed again");

    const built = c.state;
    const session = { ...c.session };
    c.close();
    const { client: fresh } = client({ resume: { session_id: session.session_id, resume_token: session.resume_token, last_seq: 0 } });
    await fresh.connect();
    assert.deepStrictEqual(await until("the snapshot", () => fresh.state ?? undefined), built);
  });
});

describe("rewind", () => {
  test("rewinding the second turn removes it from the state", async () => {
    const script = { turns: [{ steps: [say("First answer.")] }, { steps: [say("Second answer.")] }] };
    const { client: c } = client({ script });
    await c.connect();
    const first = await c.sendMessage("first");
    await until("turn 1 completed", () => c.state?.run.status === "completed" && c.state.items.length === 2);
    const second = await c.sendMessage("second");
    await until("turn 2 completed", () => c.state.run.status === "completed" && c.state.items.length === 4);
    const done = await c.rewind(second.invocation_id);
    assert.deepEqual(done.removed_invocation_ids, [second.invocation_id]);
    await until("the rewound state", () => c.state.items.length === 2);
    assert.ok(c.state.items.every((item) => item.invocation_id === first.invocation_id));
    await assert.rejects(c.rewind(second.invocation_id), { code: "unknown_invocation" });
  });
});

describe("server errors", () => {
  test("request errors reject the request with their code and leave the session open", async () => {
    const script = { turns: [{ steps: [{ op: "wait", ms: 300 }, say("ok")] }, { steps: [{ op: "tool_calls", calls: [{ ...askYesNo, interaction_type: "auto_tool", component_type: undefined, run_ms: 2000, outcome: { kind: "result", value: 1 } }] }] }] };
    const { client: c } = client({ script });
    await c.connect();
    await c.sendMessage("one", "m-1");
    await assert.rejects(c.sendMessage("two", "m-2"), { code: "run_in_progress" });
    await until("turn 1 completed", () => c.state?.run.status === "completed");
    await assert.rejects(c.sendMessage("again", "m-1"), { code: "duplicate_message" });
    await assert.rejects(c.submit("no-such-call", true), { code: "unknown_tool_call" });
    await c.sendMessage("run a tool", "m-3");
    const running = await until("a running auto tool", () => toolCalls(c.state).find((call) => call.status === "running"));
    await assert.rejects(c.submit(running.id, true), { code: "tool_call_not_awaiting" });
    assert.equal(c.status, "open");
  });

  test("unsupported_version is final: connect() rejects and the client closes", async () => {
    const { client: c } = client({ versions: ["9.0"] });
    await assert.rejects(c.connect(), { code: "unsupported_version" });
    assert.equal(c.status, "closed");
    assert.ok(c.closeError.frame.supported_versions.includes("1.0"), "a server of this major lists 1.0");
  });

  test("resume_rejected: the client reports it and opens a new session", async () => {
    const { client: c } = client({ resume: { session_id: "s-gone", resume_token: "rt-gone", last_seq: 3 } });
    const errors = [];
    c.on("error", (e) => errors.push(e.code));
    const welcome = await c.connect();
    assert.equal(welcome.resumed, false);
    assert.deepEqual(errors, ["resume_rejected"]);
  });

  test("resume_cursor_ahead: the client resumes once more from last_seq 0", async () => {
    // A server that lost data holds less than the client saw. The client holding a state names its
    // seq when it resumes; the socket raises it past anything this server sent, as such a loss does.
    const hellos = [];
    const sockets = wsSockets();
    const { client: c } = client({
      socket: (url, protocols) => {
        const socket = sockets.factory(url, protocols);
        const send = socket.send.bind(socket);
        socket.send = (text) => {
          const frame = JSON.parse(text);
          if (frame.type === "session.hello" && frame.resume !== undefined && hellos.length === 0) frame.resume.last_seq = 1_000_000;
          if (frame.type === "session.hello") hellos.push(frame);
          send(JSON.stringify(frame));
        };
        return socket;
      },
    });
    const errors = [];
    c.on("error", (e) => errors.push(e.code));
    await c.connect();
    await until("the snapshot", () => c.state ?? undefined);
    hellos.length = 0;
    sockets.cut();
    await until("resumed", () => hellos.length === 2 && c.status === "open" && c.session.resumed);
    assert.equal(hellos[1].resume.last_seq, 0);
    assert.deepEqual(errors, ["resume_cursor_ahead"]);
  });

  test("session_taken_over: the older client closes for good and does not reconnect", async () => {
    const { client: older, sockets } = client();
    const opened = await older.connect();
    // Since 1.2 a resume attaches beside the other tabs (attach.test.mjs); one that takes over asks.
    const { client: newer } = client({ resume: { session_id: opened.session_id, resume_token: opened.resume_token, last_seq: opened.seq }, takeOver: true });
    await newer.connect();
    await until("the older client closed", () => older.status === "closed");
    assert.equal(older.closeError.code, "session_taken_over");
    assert.equal(older.displaced, "session_taken_over");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(sockets.sockets.length, 1, "a taken-over client must not reconnect");
    assert.equal(newer.status, "open");
  });
});
