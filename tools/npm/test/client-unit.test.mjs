// ChatwireClient against a scripted fake socket: every error code of the protocol gets the
// handling ERROR_HANDLING gives it, reconnection is bounded, requests have deadlines, and bad
// frames from a server are reported, not applied.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChatwireClient, ERROR_CODE_VALUES, ERROR_HANDLING, SUBPROTOCOL } from "../dist/index.js";
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
