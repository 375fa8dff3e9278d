// ChatwireClient against a scripted fake socket: every error code of the protocol gets the
// handling ERROR_HANDLING gives it, reconnection is bounded, requests have deadlines, bad frames
// from a server are reported, not applied, and 1.1's patches apply to the state held or make the
// client resume (STATE-041) from it (RESUME-017) or for a snapshot (RESUME-018).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChatwireClient, ChatwireError, ERROR_CODE_VALUES, ERROR_HANDLING, FOLDED_FEATURES, OFFERED_VERSIONS, SUBPROTOCOL, VERSION_FACTS } from "../dist/index.js";
import { until } from "./helpers.mjs";

const TS = "2026-01-15T10:00:00Z";

/** A socket the test drives: it records what the client sent and delivers what the test says. */
class FakeSocket {
  protocol = "";
  sent = [];
  closed = null;
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;
  constructor(protocols) {
    this.offered = protocols;
  }
  send(text) {
    this.sent.push(JSON.parse(text));
  }
  close(code, reason) {
    this.closed = { code, reason };
  }
  open(protocol = SUBPROTOCOL) {
    this.protocol = protocol;
    this.onopen?.({});
  }
  deliver(frame) {
    this.onmessage?.({ data: typeof frame === "string" ? frame : JSON.stringify(frame) });
  }
  drop(code = 1006) {
    this.onclose?.({ code, reason: "" });
  }
  last(type) {
    return this.sent.findLast((f) => f.type === type);
  }
}

function harness(options = {}) {
  const sockets = [];
  const client = new ChatwireClient({
    url: "ws://127.0.0.1:1/ws",
    socket: (_url, protocols) => {
      const s = new FakeSocket(protocols);
      sockets.push(s);
      return s;
    },
    requestTimeoutMs: 200,
    reconnect: { initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
    ...options,
  });
  return { client, sockets, socket: () => sockets.at(-1) };
}

let seq = 0;
function welcome(socket, extra = {}) {
  const hello = socket.last("session.hello");
  socket.deliver({
    type: "session.welcome", seq: ++seq, in_reply_to: hello.id, version: "1.0", session_id: "s-1", resume_token: `rt-${seq}`,
    resumed: hello.resume !== undefined, capabilities: ["rewind"], limits: { max_frame_bytes: 1024 }, ...extra,
  });
  socket.deliver({ type: "ui_state_snapshot", seq: ++seq, v: "ui_state_v1", state: { items: [], run: { status: "idle" } } });
}

async function opened(options) {
  const h = harness(options);
  const connected = h.client.connect();
  h.socket().open();
  welcome(h.socket());
  await connected;
  return h;
}

const errorFrame = (code, inReplyTo, extra = {}) => ({
  type: "error", seq: ++seq, code, message: `${code.replace(/_/g, " ")}`, fatal: code === "unsupported_version" || code === "session_taken_over",
  ...(inReplyTo === undefined ? {} : { in_reply_to: inReplyTo }), ...extra,
});

describe("every error code", () => {
  for (const code of ERROR_CODE_VALUES) {
    const handling = ERROR_HANDLING[code];
    test(`${code}: ${handling}`, async () => {
      const { client, socket, sockets } = await opened();
      const errors = [];
      client.on("error", (e) => errors.push(e.code));
      if (handling === "reject") {
        const sending = client.sendMessage("hello");
        socket().deliver(errorFrame(code, socket().last("chat.user_message").id));
        await assert.rejects(sending, (e) => e.code === code && e.frame.code === code);
        assert.equal(client.status, "open");
        socket().deliver(errorFrame(code, undefined));
        assert.deepEqual(errors, [code], "an error answering no request goes to the error event");
      } else if (handling === "final") {
        const sending = client.sendMessage("hello");
        socket().deliver(errorFrame(code, undefined));
        await assert.rejects(sending, { code });
        assert.equal(client.status, "closed");
        assert.equal(client.closeError.code, code);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(sockets.length, 1, "no reconnection after a final error");
      } else {
        // The refusals of a resume: cut the connection so the client resumes, then refuse it.
        socket().drop();
        await until("a reconnection", () => sockets.length === 2);
        socket().open();
        const resume = socket().last("session.hello").resume;
        assert.equal(resume.session_id, "s-1");
        assert.equal(resume.last_seq, seq, "the resume names the highest seq seen");
        socket().deliver(errorFrame(code, socket().last("session.hello").id));
        const retry = socket().sent.filter((f) => f.type === "session.hello").at(-1);
        if (handling === "new_session") assert.equal(retry.resume, undefined);
        else assert.equal(retry.resume.last_seq, 0);
        assert.deepEqual(errors, [code]);
      }
      client.close();
    });
  }
});

describe("connection", () => {
  test("offers the subprotocol and closes when the server does not select it", async () => {
    const { client, socket } = harness();
    const connected = client.connect();
    assert.deepEqual(socket().offered, [SUBPROTOCOL]);
    socket().open("");
    await assert.rejects(connected, { code: "subprotocol_refused" });
    assert.equal(client.status, "closed");
  });

  test("reconnection gives up after maxAttempts with growing, bounded delays", async () => {
    const { client, sockets, socket } = harness();
    const connected = client.connect();
    const started = Date.now();
    socket().drop();
    for (let attempt = 2; attempt <= 4; attempt++) {
      await until(`attempt ${attempt}`, () => sockets.length === attempt, 2_000);
      socket().drop();
    }
    await assert.rejects(connected, { code: "unreachable" });
    assert.equal(client.status, "closed");
    assert.equal(sockets.length, 4, "one connection and three retries");
    assert.ok(Date.now() - started < 2_000);
  });

  test("every retry is reported with its reason; a browser's silent error event still says what failed", async () => {
    const { client, sockets, socket } = harness();
    const retries = [];
    client.on("reconnect", (r) => retries.push(r));
    const connected = client.connect();
    socket().onerror?.({ type: "error" }); // a browser's error event carries no detail
    socket().drop();
    await until("a second attempt", () => sockets.length === 2, 2_000);
    socket().open();
    socket().onerror?.({ type: "error", message: "read ECONNRESET", error: { code: "ECONNRESET" } });
    socket().drop();
    await until("a third attempt", () => sockets.length === 3, 2_000);
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.maxAttempts, r.reason]),
      [
        [1, 3, "cannot connect to ws://127.0.0.1:1/ws (close 1006)"],
        [2, 3, "connection closed (1006): read ECONNRESET"],
      ],
    );
    client.close();
    await assert.rejects(connected, { code: "closed" });
  });

  test("no welcome within the handshake deadline counts as a dropped connection", async () => {
    const { client, sockets, socket } = harness({ handshakeTimeoutMs: 30 });
    const connected = client.connect();
    socket().open();
    await until("a second attempt", () => sockets.length === 2, 2_000);
    assert.equal(sockets[0].closed.code, 4000);
    socket().open();
    welcome(socket());
    await connected;
    assert.equal(client.status, "open");
  });

  test("a request without an answer fails with timeout; a later answer is ignored", async () => {
    const { client, socket } = await opened();
    const sending = client.sendMessage("anyone?");
    await assert.rejects(sending, { code: "timeout" });
    socket().deliver({ type: "chat.user_message_accepted", seq: ++seq, in_reply_to: socket().last("chat.user_message").id, invocation_id: "inv-1", item_id: "i-1", text: "anyone?", ts: TS });
    assert.equal(client.status, "open");
    client.close();
  });

  test("requests pending when the connection drops fail with disconnected", async () => {
    const { client, socket } = await opened();
    const sending = client.sendMessage("hello");
    socket().drop();
    await assert.rejects(sending, { code: "disconnected" });
    client.close();
  });

  test("a frame above the server's max_frame_bytes is refused before sending", async () => {
    const { client, socket } = await opened();
    await assert.rejects(client.sendMessage("x".repeat(2000)), { code: "frame_too_large" });
    assert.equal(socket().last("chat.user_message"), undefined);
    client.close();
  });

  test("the number of pending requests is bounded", async () => {
    const { client } = await opened({ maxPendingRequests: 2 });
    const a = client.sendMessage("a");
    const b = client.sendMessage("b");
    await assert.rejects(client.sendMessage("c"), { code: "too_many_requests" });
    client.close();
    await assert.rejects(a, { code: "closed" });
    await assert.rejects(b, { code: "closed" });
  });

  test("an invalid or binary frame is reported and not applied", async () => {
    const { client, socket } = await opened();
    const errors = [];
    client.on("error", (e) => errors.push(e));
    const before = client.state;
    socket().deliver({ type: "ui_state_updated", seq: ++seq, v: "ui_state_v1", state: { items: [], run: { status: "sleeping" } } });
    socket().onmessage({ data: new Uint8Array([1, 2]) });
    assert.equal(client.state, before);
    assert.deepEqual(errors.map((e) => e.code), ["protocol_violation", "protocol_violation"]);
    assert.equal(errors[0].details[0].path, "/state/run/status");
    client.close();
  });

  test("subscribe gives the current state at once and every later one", async () => {
    const { client, socket } = await opened();
    const seen = [];
    const off = client.subscribe((state) => seen.push(state.run.status));
    socket().deliver({ type: "ui_state_updated", seq: ++seq, v: "ui_state_v1", state: { items: [], run: { status: "running", invocation_id: "inv-1" } } });
    off();
    socket().deliver({ type: "ui_state_updated", seq: ++seq, v: "ui_state_v1", state: { items: [], run: { status: "completed", invocation_id: "inv-1" } } });
    assert.deepEqual(seen, ["idle", "running"]);
    assert.equal(client.state.run.status, "completed");
    client.close();
  });
});

describe("protocol 1.1: versions, features, patches", () => {
  const user = (n) => ({ kind: "user_message", id: `u-${n}`, invocation_id: `inv-${n}`, client_message_id: `m-${n}`, text: `hi ${n}`, ts: TS });
  const running = { status: "running", invocation_id: "inv-1" };

  /** A 1.1 welcome with every feature, then a snapshot of one user message and a running run. */
  function welcome11(socket, extra = {}) {
    const hello = socket.last("session.hello");
    socket.deliver({
      type: "session.welcome", seq: ++seq, in_reply_to: hello.id, version: "1.1", session_id: "s-1", resume_token: `rt-${seq}`,
      resumed: hello.resume !== undefined, capabilities: ["rewind", "ui_state_patch", "resume_catch_up"], limits: { max_frame_bytes: 1 << 20 },
      features: ["ui_state_patch", "resume_catch_up"], resume_retention: 500, ...extra,
    });
  }
  const snapshot = (state) => ({ type: "ui_state_snapshot", seq: ++seq, v: "ui_state_v1", state });
  const patch = (base_seq, ops) => ({ type: "ui_state_patch", seq: ++seq, base_seq, v: "ui_state_v1", patch: ops });
  const say = (n) => ({ op: "add", path: "/items/-", value: { kind: "assistant_markdown", id: `a-${n}`, invocation_id: "inv-1", markdown: `answer ${n}`, ts: TS } });

  /** An open 1.1 client holding a snapshot; returns it with the snapshot's seq. */
  async function opened11(options) {
    const h = harness(options);
    const connected = h.client.connect();
    h.socket().open();
    welcome11(h.socket());
    h.socket().deliver(snapshot({ items: [user(1)], run: running }));
    await connected;
    return { ...h, base: seq };
  }

  test("offers 1.3, 1.2, 1.1 with the folded features by default, 1.0 in the whole offer after; features only with 1.1 or later alone (SESSION-014)", async () => {
    assert.deepEqual(OFFERED_VERSIONS, ["1.3", "1.2", "1.1", "1.0"]);
    const { client, socket } = await opened11();
    const hello = socket().sent[0];
    assert.deepEqual(hello.versions, ["1.3", "1.2", "1.1"]);
    assert.deepEqual(hello.features, [...FOLDED_FEATURES]);
    assert.deepEqual(client.session.features, ["ui_state_patch", "resume_catch_up"]);
    assert.equal(client.session.resume_retention, 500);
    client.close();

    assert.throws(() => harness({ features: ["ui_state_patch"] }), TypeError);
    assert.throws(() => harness({ versions: ["1.1", "1.0"], features: [] }), TypeError);
    const pinned = harness({ versions: ["1.1"], features: ["ui_state_patch"] });
    pinned.client.connect().catch(() => {});
    pinned.socket().open();
    assert.deepEqual(pinned.socket().last("session.hello").features, ["ui_state_patch"]);
    pinned.client.close();

    const old = harness({ versions: ["1.0"] });
    old.client.connect().catch(() => {});
    old.socket().open();
    assert.deepEqual(old.socket().last("session.hello").versions, ["1.0"]);
    welcome(old.socket());
    assert.deepEqual(old.client.session.features, [], "a 1.0 welcome has no features");
    old.client.close();
  });

  test("a 1.0 server that refuses the hello with features (invalid_frame) or its versions gets the whole offer without features", async () => {
    for (const code of ["invalid_frame", "unsupported_version"]) {
      const { client, sockets, socket } = harness();
      const connected = client.connect();
      socket().open();
      const hello = socket().last("session.hello");
      socket().deliver({ type: "error", code, message: "no", in_reply_to: hello.id, fatal: false, ...(code === "unsupported_version" ? { supported_versions: ["1.0"] } : {}) });
      assert.equal(sockets.length, 2, `${code}: a new connection`);
      socket().open();
      const again = socket().last("session.hello");
      assert.deepEqual(again.versions, ["1.3", "1.2", "1.1", "1.0"], code);
      assert.equal("features" in again, false, `${code}: SESSION-014`);
      welcome(socket());
      await connected;
      assert.equal(client.session.version, "1.0");
      client.close();
    }
  });

  test("a 1.3 server that implements every feature puts in force exactly those the client folds, subagents among them", async () => {
    // A server as session.md has it: `features` absent, every feature it implements is in force;
    // listed, those of them it implements (SESSION-012).
    const implemented = VERSION_FACTS["1.3"].features;
    assert.ok(implemented.includes("subagents"));
    const { client, socket } = harness();
    const connected = client.connect();
    socket().open();
    const hello = socket().last("session.hello");
    const inForce = hello.features === undefined ? implemented : implemented.filter((f) => hello.features.includes(f));
    welcome(socket(), { version: "1.3", capabilities: ["rewind", ...implemented], limits: { max_frame_bytes: 1 << 20, max_attached_connections: 8 }, features: inForce });
    await connected;
    assert.ok(client.session.features.includes("subagents"), JSON.stringify(client.session.features));
    assert.deepEqual(client.session.features, [...FOLDED_FEATURES]);
    client.close();
  });

  test("a patch on the state held applies; the old state object is left as it was", async () => {
    const { client, socket, base } = await opened11();
    const states = [];
    client.on("state", (s) => states.push(s));
    const before = client.state;
    socket().deliver(patch(base, [say(1)]));
    const first = seq;
    socket().deliver(patch(first, [{ op: "test", path: "/items/1/id", value: "a-1" }, { op: "replace", path: "/items/1/markdown", value: "edited" }, { op: "replace", path: "/run", value: { status: "completed", invocation_id: "inv-1" } }]));
    assert.equal(states.length, 2);
    assert.deepEqual(client.state.items.map((i) => i.id), ["u-1", "a-1"]);
    assert.equal(client.state.items[1].markdown, "edited");
    assert.equal(client.state.run.status, "completed");
    assert.equal(before.items.length, 1, "the previous state is not changed in place");
    assert.equal(states[0].items[1].markdown, "answer 1");
    assert.equal(client.state.items[0], before.items[0], "untouched items are shared");
    client.close();
  });

  test("a base_seq mismatch discards the patch and what follows, and resumes from the state held (STATE-041, RESUME-017)", async () => {
    const { client, socket, sockets, base } = await opened11();
    const errors = [];
    client.on("error", (e) => errors.push(e.code));
    const old = socket();
    old.deliver(patch(base, [say(1)]));
    const held = seq;
    old.deliver(patch(held + 50, [say(2)]));
    old.deliver(patch(seq, [say(3)]));
    assert.equal(sockets.length, 2, "a new connection at once");
    assert.equal(old.closed.code, 1000);
    assert.deepEqual(client.state.items.map((i) => i.id), ["u-1", "a-1"], "nothing after the mismatch applied");
    assert.deepEqual(errors, ["resync"]);
    socket().open();
    const hello = socket().last("session.hello");
    assert.equal(hello.resume.last_seq, held, "the resume names the seq of the state held, not the highest seen");
    welcome11(socket());
    socket().deliver(patch(held, [say(2), say(3)]));
    assert.deepEqual(client.state.items.map((i) => i.id), ["u-1", "a-1", "a-2", "a-3"], "the catch-up applies");
    client.close();
  });

  test("a failing test op discards the patch and resumes; a second failure in a row asks for a snapshot", async () => {
    const { client, socket, sockets, base } = await opened11();
    const before = client.state;
    socket().deliver(patch(base, [say(1), { op: "test", path: "/items/0/id", value: "u-999" }]));
    assert.equal(client.state, before, "a failing patch changes nothing");
    assert.equal(sockets.length, 2);
    socket().open();
    assert.equal(socket().last("session.hello").resume.last_seq, base);
    welcome11(socket());
    socket().deliver(patch(base, [{ op: "remove", path: "/items/7" }]));
    assert.equal(sockets.length, 3);
    socket().open();
    assert.equal(socket().last("session.hello").resume.last_seq, 0, "a snapshot (RESUME-018)");
    welcome11(socket());
    socket().deliver(snapshot({ items: [user(1), user(2)], run: { status: "idle" } }));
    assert.equal(client.state.items.length, 2);
    assert.equal(client.status, "open");
    client.close();
  });

  test("patches that never apply make the client stop after a bounded number of resumes", async () => {
    const { client, socket, sockets } = await opened11();
    for (let round = 0; round < 4; round++) {
      socket().deliver(patch(0, [say(round)]));
      if (client.status === "closed") break;
      socket().open();
      welcome11(socket());
    }
    assert.equal(client.status, "closed");
    assert.equal(client.closeError.code, "protocol_violation");
    assert.equal(sockets.length, 4, "one connection and three resumes");
  });

  const delta = (item_id, text, invocation_id = "inv-1") => ({ type: "chat.assistant_message_delta", seq: ++seq, invocation_id, item_id, delta: text, ts: TS });

  test("deltas grow a streaming item with no state frame; the next patch's base_seq names the last delta (STATE-042, STREAM-002)", async () => {
    const { client, socket, base } = await opened11();
    const states = [];
    client.on("state", (s) => states.push(s));
    const before = client.state;
    socket().deliver(delta("a-1", "Rotating "));
    socket().deliver(delta("a-1", "the key "));
    socket().deliver(delta("a-1", "now."));
    const last = seq;
    assert.ok(last > base);
    assert.deepEqual(states.map((s) => s.items.at(-1).markdown), ["Rotating ", "Rotating the key ", "Rotating the key now."]);
    assert.equal(client.state.items[1].streaming, true);
    assert.equal(client.state.items[0], before.items[0], "untouched items are shared");
    assert.equal(before.items.length, 1, "the previous state is not changed in place");
    socket().deliver({ type: "chat.assistant_message", seq: ++seq, invocation_id: "inv-1", item_id: "a-1", markdown: "Rotating the key now.", ts: "2026-01-15T10:00:09Z" });
    socket().deliver(patch(last, [{ op: "test", path: "/items/1/id", value: "a-1" }, { op: "remove", path: "/items/1/streaming" }, { op: "replace", path: "/items/1/ts", value: "2026-01-15T10:00:09Z" }]));
    assert.equal(client.status, "open");
    assert.deepEqual(client.state.items[1], { kind: "assistant_markdown", id: "a-1", invocation_id: "inv-1", markdown: "Rotating the key now.", ts: "2026-01-15T10:00:09Z" });
    client.close();
  });

  test("a resume names a delta's seq: the state a delta gave is a catch-up base (RESUME-017)", async () => {
    const { client, socket, sockets } = await opened11();
    socket().deliver(delta("a-1", "half"));
    const held = seq;
    socket().drop();
    await until("a reconnection", () => sockets.length === 2);
    socket().open();
    assert.equal(socket().last("session.hello").resume.last_seq, held);
    welcome11(socket());
    socket().deliver(patch(held, [{ op: "test", path: "/items/1/id", value: "a-1" }, { op: "replace", path: "/items/1/markdown", value: "half of it" }]));
    socket().deliver(delta("a-1", ", all."));
    assert.equal(client.state.items[1].markdown, "half of it, all.");
    client.close();
  });

  for (const [rule, frames] of [
    ["STATE-022", () => [delta("a-1", "x", "inv-9")]],
    ["STATE-045", () => [delta("u-1", "x")]],
    ["STATE-046", () => [delta("a-1", "x"), delta("a-2", "y")]],
  ]) {
    test(`a delta the reducer refuses (${rule}) changes nothing and makes the client resume from the state held (STREAM-007)`, async () => {
      const { client, socket, sockets } = await opened11();
      const errors = [];
      client.on("error", (e) => errors.push(e));
      const sent = frames();
      for (const frame of sent.slice(0, -1)) socket().deliver(frame);
      const held = client.state;
      const heldSeq = seq - 1;
      socket().deliver(sent.at(-1));
      assert.equal(client.state, held, "the refused delta changed nothing");
      assert.equal(sockets.length, 2, "a new connection at once");
      assert.equal(errors.length, 1);
      assert.equal(errors[0].code, "resync");
      assert.match(errors[0].message, new RegExp(rule));
      socket().open();
      assert.equal(socket().last("session.hello").resume.last_seq, heldSeq);
      client.close();
    });
  }

  test("retry(afterItemId) sends chat.retry and resolves with chat.retry_accepted; a refusal rejects with its code", async () => {
    const { client, socket } = await opened11();
    const accepted = client.retry("tc-1");
    const request = socket().last("chat.retry");
    assert.deepEqual(Object.keys(request).sort(), ["after_item_id", "id", "type"]);
    assert.equal(request.after_item_id, "tc-1");
    const frame = { type: "chat.retry_accepted", seq: ++seq, in_reply_to: request.id, invocation_id: "inv-1", after_item_id: "tc-1", removed_item_ids: ["a-1"], ts: TS };
    socket().deliver(frame);
    assert.deepEqual(await accepted, frame);
    const refused = client.retry("nope");
    socket().deliver(errorFrame("unknown_item", socket().last("chat.retry").id));
    await assert.rejects(refused, { code: "unknown_item" });
    assert.equal(client.status, "open");
    client.close();
  });

  test("cancel(invocationId) sends chat.cancel and resolves with chat.cancel_accepted, which changes no state; a refusal rejects with its code", async () => {
    const { client, socket, base } = await opened11();
    const states = [];
    client.on("state", (s) => states.push(s));
    const held = client.state;
    const stopping = client.cancel("inv-1");
    const request = socket().last("chat.cancel");
    assert.deepEqual(Object.keys(request).sort(), ["id", "invocation_id", "type"]);
    assert.equal(request.invocation_id, "inv-1");
    const frame = { type: "chat.cancel_accepted", seq: ++seq, in_reply_to: request.id, invocation_id: "inv-1", ts: TS };
    socket().deliver(frame);
    assert.deepEqual(await stopping, frame);
    assert.deepEqual(states, [], "no state event for a cancel_accepted");
    assert.equal(client.state, held, "the state held is the very same object");
    assert.equal(client.session.last_seq, frame.seq, "its seq is seen (the next resume's last_seq)");
    // The closing events follow, patches on the state held (whose seq is still the snapshot's).
    socket().deliver(patch(base, [{ op: "replace", path: "/run", value: { status: "cancelled", invocation_id: "inv-1" } }]));
    assert.equal(client.state.run.status, "cancelled");
    assert.equal(states.length, 1);

    for (const code of ["run_not_active", "unknown_invocation", "capability_not_offered", "unknown_type"]) {
      const refused = client.cancel("inv-1");
      socket().deliver(errorFrame(code, socket().last("chat.cancel").id));
      await assert.rejects(refused, (e) => e instanceof ChatwireError && e.code === code && e.frame.code === code);
    }
    assert.equal(client.status, "open");
    // Unanswered, it times out like every request.
    await assert.rejects(client.cancel("inv-1"), { code: "timeout" });
    client.close();
  });

  test("a reload holding no state asks for a snapshot (last_seq 0); a catch-up it cannot use anyway makes it resume for one, without an error", async () => {
    const h = harness({ resume: { session_id: "s-1", resume_token: "rt-old", last_seq: 40 } });
    const errors = [];
    h.client.on("error", (e) => errors.push(e.code));
    const connected = h.client.connect();
    h.socket().open();
    assert.equal(h.socket().last("session.hello").resume.last_seq, 0, "no state to catch up from: a snapshot");
    welcome11(h.socket());
    await connected;
    h.socket().deliver(patch(40, [say(1)]));
    assert.equal(h.sockets.length, 2);
    h.socket().open();
    assert.equal(h.socket().last("session.hello").resume.last_seq, 0);
    welcome11(h.socket());
    h.socket().deliver(snapshot({ items: [user(1)], run: running }));
    assert.deepEqual(h.client.state.items.map((i) => i.id), ["u-1"]);
    assert.deepEqual(errors, []);
    h.client.close();
  });
});

describe("protocol 1.2: attach and take over (multi_attach)", () => {
  /** A 1.2 welcome with multi_attach in force (or `features`), then a snapshot. */
  function welcome12(socket, features = ["ui_state_patch", "resume_catch_up", "assistant_stream", "multi_attach"]) {
    const hello = socket.last("session.hello");
    socket.deliver({
      type: "session.welcome", seq: ++seq, in_reply_to: hello.id, version: "1.2", session_id: "s-1", resume_token: "rt-1",
      resumed: hello.resume !== undefined, capabilities: ["rewind", "cancel", "ui_state_patch", "resume_catch_up", "assistant_stream", "multi_attach"],
      limits: { max_frame_bytes: 1 << 20, ...(features.includes("multi_attach") ? { max_attached_connections: 8 } : {}) }, features,
    });
    socket.deliver({ type: "ui_state_snapshot", seq: ++seq, v: "ui_state_v1", state: { items: [], run: { status: "idle" } } });
  }
  async function opened12(options) {
    const h = harness(options);
    const connected = h.client.connect();
    h.socket().open();
    welcome12(h.socket());
    await connected;
    return h;
  }

  test("a close with 4003 or 4001 and no error frame is as final as the error: no reconnection", async () => {
    for (const [code, displaced] of [[4003, "session_detached"], [4001, "session_taken_over"]]) {
      const { client, sockets, socket } = await opened12();
      assert.equal(client.attached, true);
      socket().drop(code);
      assert.equal(client.status, "closed");
      assert.equal(client.displaced, displaced);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(sockets.length, 1, `no reconnection after close ${code}`);
    }
  });

  test("a state frame that follows no event of this connection, after a gap in seq, is the state (ATTACH-004, SEQ-003)", async () => {
    const { client, socket } = await opened12();
    const base = seq;
    seq += 3; // frames sent to another tab only
    const user = { kind: "user_message", id: "u-1", invocation_id: "inv-1", client_message_id: "m-other", text: "from the other tab", ts: TS };
    socket().deliver({ type: "ui_state_patch", seq: ++seq, base_seq: base, v: "ui_state_v1", patch: [{ op: "add", path: "/items/-", value: user }] });
    assert.deepEqual(client.state.items, [user]);
    assert.equal(client.session.last_seq, seq);
    assert.equal(client.status, "open");
  });

  test("takeOver() offers the 1.2 versions alone with the features in force minus multi_attach, then attaches on later reconnects", async () => {
    const { client, sockets, socket } = await opened12();
    const pending = client.sendMessage("in flight");
    const taking = client.takeOver();
    await assert.rejects(pending, { code: "disconnected" });
    assert.equal(sockets.length, 2);
    assert.ok(sockets[0].closed !== null, "the old connection is closed");
    socket().open();
    const hello = socket().last("session.hello");
    assert.deepEqual(hello.versions, ["1.3", "1.2"]);
    assert.deepEqual(hello.features, ["ui_state_patch", "resume_catch_up", "assistant_stream"]);
    assert.equal(hello.resume.session_id, "s-1");
    welcome12(socket(), hello.features);
    assert.equal((await taking).version, "1.2");
    assert.equal(client.attached, false);
    socket().drop();
    await until("a reconnection", () => sockets.length === 3);
    socket().open();
    assert.deepEqual(socket().last("session.hello").versions, ["1.3", "1.2", "1.1"]);
    assert.deepEqual(socket().last("session.hello").features, [...FOLDED_FEATURES], "the ordinary offer again");
    client.close();
  });

  test("takeOver() from a detached client opens it again; with `features` in the options they are used, minus multi_attach", async () => {
    const { client, sockets, socket } = await opened12({ versions: ["1.2"], features: ["ui_state_patch", "multi_attach"] });
    socket().deliver({ type: "error", seq: ++seq, code: "session_detached", message: "more connections attached than this session keeps", fatal: true });
    assert.equal(client.displaced, "session_detached");
    const statuses = [];
    client.on("status", (s) => statuses.push(s));
    const taking = client.takeOver();
    socket().open();
    assert.deepEqual(socket().last("session.hello").features, ["ui_state_patch"]);
    welcome12(socket(), ["ui_state_patch"]);
    await taking;
    assert.deepEqual(statuses, ["reconnecting", "open"]);
    assert.equal(client.closeError, null);
    assert.equal(sockets.length, 2);
    client.close();
  });

  test("a takeover refused with unsupported_version (the server went back to 1.1) retries with the ordinary offer", async () => {
    const { client, sockets, socket } = await opened12();
    const taking = client.takeOver();
    socket().open();
    const hello = socket().last("session.hello");
    socket().deliver({ type: "error", code: "unsupported_version", message: "no", in_reply_to: hello.id, fatal: true, supported_versions: ["1.1", "1.0"] });
    assert.equal(sockets.length, 3, "a new connection");
    socket().open();
    assert.deepEqual(socket().last("session.hello").versions, ["1.3", "1.2", "1.1"], "the ordinary offer");
    welcome11(socket());
    await taking;
    assert.equal(client.status, "open");
    client.close();

    function welcome11(s) {
      const h = s.last("session.hello");
      s.deliver({ type: "session.welcome", seq: ++seq, in_reply_to: h.id, version: "1.1", session_id: "s-1", resume_token: "rt-1", resumed: true, capabilities: [], limits: { max_frame_bytes: 1024 }, features: [] });
    }
  });

  test("takeOver() without a session rejects with no_session; on a client closed for another reason with that reason", async () => {
    const fresh = harness();
    await assert.rejects(fresh.client.takeOver(), (e) => e instanceof ChatwireError && e.code === "no_session");
    const { client } = await opened12();
    client.close();
    await assert.rejects(client.takeOver(), { code: "closed" });
  });
});
