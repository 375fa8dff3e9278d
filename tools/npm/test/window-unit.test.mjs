// The windowed client against a scripted fake socket (1.2, `state_window`, spec/window.md): what
// its hellos carry, what its constructor refuses, how a page joins the view (`mergePage`), the
// fallback for a server without 1.2, and a page that does not fit the view (a resume for a snapshot).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChatwireClient, ChatwireError, FOLDED_FEATURES, mergePage, SUBPROTOCOL } from "../dist/index.js";

const TS = "2026-01-15T10:00:00Z";

class FakeSocket {
  protocol = "";
  sent = [];
  closed = null;
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;
  send(text) {
    this.sent.push(JSON.parse(text));
  }
  close(code, reason) {
    this.closed = { code, reason };
  }
  open() {
    this.protocol = SUBPROTOCOL;
    this.onopen?.({});
  }
  deliver(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  last(type) {
    return this.sent.findLast((f) => f.type === type);
  }
}

function harness(options = {}) {
  const sockets = [];
  const client = new ChatwireClient({
    url: "ws://127.0.0.1:1/ws",
    socket: () => {
      const s = new FakeSocket();
      sockets.push(s);
      return s;
    },
    requestTimeoutMs: 200,
    reconnect: { initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
    ...options,
  });
  return { client, sockets, socket: () => sockets.at(-1) };
}

const msg = (id, text = id) => ({ kind: "assistant_markdown", id, invocation_id: "inv-1", markdown: text, ts: TS });
const call = (id, awaiting = true) => ({
  kind: "tool_call", id, invocation_id: "inv-1", tool_name: "ask", interaction_type: "ui_tool", component_type: "YesNo", display: "inline",
  awaiting_response: awaiting, status: "pending", payload: {}, ts: TS,
});
const state = (items, status = "completed") => ({ items, run: { status, invocation_id: "inv-1" } });

let seq = 0;
function welcome(socket, { version = "1.2", features = ["ui_state_patch", "resume_catch_up", "assistant_stream", "multi_attach", "state_window"] } = {}) {
  const hello = socket.last("session.hello");
  socket.deliver({
    type: "session.welcome", seq: ++seq, in_reply_to: hello.id, version, session_id: "s-1", resume_token: "rt-1", resumed: hello.resume !== undefined,
    capabilities: ["rewind", ...features], limits: { max_frame_bytes: 1 << 20, max_attached_connections: 8 }, features,
  });
}
function snapshot(socket, items, window) {
  const frame = { type: "ui_state_snapshot", seq: ++seq, v: "ui_state_v1", state: state(items) };
  if (window !== undefined) frame.window = window;
  socket.deliver(frame);
  return frame.seq;
}

/** A windowed client holding [c1 (an old awaiting call), m4, m5] of m1 c1 m2 m3 m4 m5, cursor m4. */
async function windowed(options = {}) {
  const h = harness({ window: 2, ...options });
  const connected = h.client.connect();
  h.socket().open();
  welcome(h.socket());
  await connected;
  snapshot(h.socket(), [call("c1"), msg("m4"), msg("m5")], { before: "m4", total: 6 });
  return h;
}

describe("windows (1.2, state_window): the client", () => {
  test("a windowed hello asks for its window with the 1.2 offer alone; the constructor refuses what cannot carry it", async () => {
    const { client, socket } = harness({ window: 200 });
    client.connect().catch(() => undefined);
    socket().open();
    const hello = socket().last("session.hello");
    assert.equal(hello.window, 200);
    assert.deepEqual(hello.versions, ["1.3", "1.2"]);
    assert.deepEqual(hello.features, [...FOLDED_FEATURES], "what the client folds, state_window among it");
    client.close();
    for (const bad of [0, 1001, 2.5, Number.NaN]) assert.throws(() => harness({ window: bad }), RangeError);
    assert.throws(() => harness({ window: 10, versions: ["1.2", "1.1"] }), TypeError, "WINDOW-001: no window with an offer below 1.2");
    assert.throws(() => harness({ window: 10, features: ["ui_state_patch"] }), TypeError, "a window without state_window would be ignored");
    harness({ window: 10, versions: ["1.2"], features: ["state_window"] });
    const plain = harness();
    plain.client.connect().catch(() => undefined);
    plain.socket().open();
    assert.equal("window" in plain.socket().last("session.hello"), false, "no window unless asked for");
    assert.equal(plain.client.window, null);
    plain.client.close();
  });

  test("a server that speaks no 1.2 gets the whole offer without a window, and the client holds the whole state", async () => {
    const { client, sockets, socket } = harness({ window: 50 });
    const connected = client.connect();
    socket().open();
    const hello = socket().last("session.hello");
    socket().deliver({ type: "error", code: "unsupported_version", message: "no", in_reply_to: hello.id, fatal: false, supported_versions: ["1.1", "1.0"] });
    assert.equal(sockets.length, 2, "a new connection");
    socket().open();
    const again = socket().last("session.hello");
    assert.deepEqual(again.versions, ["1.3", "1.2", "1.1", "1.0"]);
    assert.equal("window" in again, false);
    welcome(socket(), { version: "1.1", features: ["ui_state_patch", "resume_catch_up"] });
    snapshot(socket(), [msg("m1")]);
    await connected;
    assert.equal(client.window, null);
    assert.equal(await client.loadOlder(), null, "the whole state is held: nothing to load");
    client.close();
  });

  test("a 1.0 or 1.1 server that refuses the windowed hello as invalid_frame (no `window` in its schema) gets the whole offer without a window", async () => {
    const { client, sockets, socket } = harness({ window: 50 });
    const connected = client.connect();
    socket().open();
    const hello = socket().last("session.hello");
    socket().deliver({ type: "error", code: "invalid_frame", message: "window was unexpected", in_reply_to: hello.id, fatal: false });
    assert.equal(sockets.length, 2, "a new connection");
    socket().open();
    const again = socket().last("session.hello");
    assert.deepEqual(again.versions, ["1.3", "1.2", "1.1", "1.0"]);
    assert.equal("window" in again, false);
    welcome(socket(), { version: "1.0", features: [] });
    snapshot(socket(), [msg("m1")]);
    await connected;
    assert.equal(client.window, null);
    // An explicit offer is the caller's: its refusal stays final.
    const pinned = harness({ window: 50, versions: ["1.2"] });
    const refused = pinned.client.connect();
    pinned.socket().open();
    pinned.socket().deliver({ type: "error", code: "invalid_frame", message: "no", in_reply_to: pinned.socket().last("session.hello").id, fatal: false });
    await assert.rejects(refused, { code: "invalid_frame" });
    assert.equal(pinned.sockets.length, 1);
    client.close();
  });

  test("the snapshot's window gives the view its cursor; a page joins the view, replacing the always-held copy; the last page ends paging", async () => {
    const { client, socket } = await windowed();
    assert.deepEqual(client.window, { size: 2, before: "m4", total: 6 });
    assert.equal(client.hasOlder, true);
    const stateSeq = seq;
    const states = [];
    client.on("state", (s) => states.push(s));

    const first = client.loadOlder(3);
    await new Promise((resolve) => setImmediate(resolve));
    const request = socket().last("chat.history_request");
    assert.deepEqual({ ...request, id: undefined }, { type: "chat.history_request", id: undefined, before: "m4", limit: 3 });
    const settled = { ...call("c1"), status: "completed", result: true };
    socket().deliver({ type: "chat.history_page", seq: ++seq, in_reply_to: request.id, items: [settled, msg("m2"), msg("m3")], before: "c1", total: 6 });
    const page = await first;
    assert.equal(page.type, "chat.history_page");
    assert.deepEqual(client.state.items.map((i) => i.id), ["c1", "m2", "m3", "m4", "m5"], "the held copy of c1 gave way to the page's");
    assert.equal(client.state.items[0].status, "completed");
    assert.deepEqual(client.window, { size: 2, before: "c1", total: 6 });
    assert.equal(states.length, 1);

    // A page changes no state: a patch still names the state frame's seq as its base.
    socket().deliver({ type: "ui_state_patch", seq: ++seq, base_seq: stateSeq, v: "ui_state_v1", patch: [{ op: "add", path: "/items/-", value: msg("m6") }] });
    assert.deepEqual(client.state.items.map((i) => i.id), ["c1", "m2", "m3", "m4", "m5", "m6"]);
    assert.equal(client.window.total, 7);

    const last = client.loadOlder(3);
    await new Promise((resolve) => setImmediate(resolve));
    const second = socket().last("chat.history_request");
    assert.equal(second.before, "c1");
    socket().deliver({ type: "chat.history_page", seq: ++seq, in_reply_to: second.id, items: [msg("m1")], total: 7 });
    await last;
    assert.deepEqual(client.state.items.map((i) => i.id), ["m1", "c1", "m2", "m3", "m4", "m5", "m6"]);
    assert.equal(client.hasOlder, false);
    const sent = socket().sent.length;
    assert.equal(await client.loadOlder(), null);
    assert.equal(socket().sent.length, sent, "nothing sent once the first item is held");
    client.close();
  });

  test("a resume names the cursor; a fresh window's snapshot replaces view and cursor; stale_cursor rejects typed", async () => {
    const { client, sockets, socket } = await windowed();
    socket().onclose?.({ code: 1006, reason: "" });
    await new Promise((resolve) => setTimeout(resolve, 40));
    socket().open();
    const hello = socket().last("session.hello");
    assert.equal(hello.window, 2);
    assert.equal(hello.resume.before, "m4");
    assert.ok(hello.resume.last_seq > 0);
    welcome(socket());
    // The cut removed m4: a fresh window (WINDOW-006).
    snapshot(socket(), [call("c1"), msg("m2"), msg("m3")], { before: "m2", total: 4 });
    assert.deepEqual(client.window, { size: 2, before: "m2", total: 4 });
    const older = client.loadOlder(5);
    await new Promise((resolve) => setImmediate(resolve));
    const request = socket().last("chat.history_request");
    assert.equal(request.before, "m2");
    socket().deliver({ type: "error", seq: ++seq, code: "stale_cursor", message: "not the cursor", in_reply_to: request.id, fatal: false });
    await assert.rejects(older, (error) => error instanceof ChatwireError && error.code === "stale_cursor");
    assert.equal(client.status, "open", "stale_cursor is not fatal");
    assert.equal(sockets.length, 2);
    client.close();
  });

  test("a page that does not fit the view held makes the client resume for a snapshot", async () => {
    const { client, sockets, socket } = await windowed();
    const errors = [];
    client.on("error", (e) => errors.push(e.code));
    const older = client.loadOlder(2);
    await new Promise((resolve) => setImmediate(resolve));
    const request = socket().last("chat.history_request");
    // m5 is held already: the page would hold it twice.
    socket().deliver({ type: "chat.history_page", seq: ++seq, in_reply_to: request.id, items: [msg("m3"), msg("m5")], before: "m3", total: 6 });
    await assert.rejects(older, (error) => error.code === "disconnected");
    assert.deepEqual(errors, ["resync"]);
    assert.equal(sockets.length, 2);
    socket().open();
    assert.equal(socket().last("session.hello").resume.last_seq, 0, "a snapshot is asked for");
    client.close();
  });
});

describe("mergePage", () => {
  test("the always-held items older than the page stay first, those in the page are replaced, the rest follows", () => {
    const held = state([call("c0"), call("c2"), msg("m5"), msg("m6")]);
    const merged = mergePage(held, "m5", [msg("m1"), { ...call("c2"), status: "completed" }, msg("m3"), msg("m4")]);
    assert.deepEqual(merged.items.map((i) => i.id), ["c0", "m1", "c2", "m3", "m4", "m5", "m6"]);
    assert.equal(merged.items[2].status, "completed");
    assert.deepEqual(held.items.map((i) => i.id), ["c0", "c2", "m5", "m6"], "the input is not changed");
    assert.equal(mergePage(held, "nope", [msg("m1")]), null, "no such cursor");
    assert.equal(mergePage(held, "m5", [msg("m6")]), null, "an item held from the cursor on");
    assert.equal(mergePage(held, "m5", [msg("m1"), msg("m1")]), null, "an item twice in the page");
  });
});
