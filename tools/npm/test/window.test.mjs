// Tail-first windows and paged history (1.2, `state_window`, spec/window.md) against the release
// reference in conformance mode: a client that holds the whole state builds a long session from a
// script; windowed clients attach to it (`multi_attach`) and hold views. A window opens with the
// newest items and the always-held old form, the form settles in it, paging reaches the first item
// with every item once and in order, concurrent pages run one after another, a rewind that removes
// the cursor item turns a request in flight into `stale_cursor` after a fresh window, and a resume
// names the cursor so its catch-up patches the view.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ChatwireClient, ChatwireError } from "../dist/index.js";
import { startReference, until, wsSockets } from "./helpers.mjs";

let server;
before(async () => {
  server = await startReference();
});
after(async () => {
  await server?.stop();
});

const clients = [];
/** A client on the reference whose sockets record every frame the client sends. */
function client(options = {}) {
  const sockets = wsSockets();
  const { sent, factory } = sockets;
  const c = new ChatwireClient({
    url: server.url,
    socket: factory,
    clientName: "chatwire-npm-window-tests",
    requestTimeoutMs: 10_000,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 5 },
    ...options,
  });
  clients.push(c);
  return { client: c, sockets, sent };
}
after(() => {
  for (const c of clients) c.close();
});

const say = (markdown) => ({ op: "say", markdown });
const says = (n, label) => Array.from({ length: n }, (_, i) => say(`${label} ${i + 1}`));
const form = {
  tool_name: "confirm_deploy",
  interaction_type: "ui_tool",
  display: "inline",
  component_type: "YesNo",
  payload: { question: "Deploy?" },
  output: { command: "plan", stdout: "3 changes\n" },
  outcome: { kind: "await_response", summary: "Deploy confirmed" },
};
const auto = (i) => ({ tool_name: `step_${i}`, interaction_type: "auto_tool", display: "inline", payload: { i }, outcome: { kind: "result", value: i } });

/** Whether the item at `index` is always held (`WINDOW-003`): an awaiting call and its output. */
function alwaysHeld(items, index) {
  const item = items[index];
  if (item.kind === "tool_call") return item.awaiting_response;
  const call = items[index - 1];
  return item.kind === "tool_output" && call?.kind === "tool_call" && call.awaiting_response && call.id === item.tool_call_id;
}

/** The view of the whole `state` from `cursor` (null: every item), as `held_view` has it. */
function heldView(state, cursor) {
  const start = cursor === null ? 0 : state.items.findIndex((item) => item.id === cursor);
  assert.ok(start >= 0, `cursor ${cursor} is no item of the state`);
  const pinned = state.items.slice(0, start).filter((_, i) => alwaysHeld(state.items, i));
  return { ...state, items: [...pinned, ...state.items.slice(start)] };
}

const ids = (items) => items.map((item) => item.id);

/** Opens a session holding the whole state, runs the script's first turn to `until`; returns the client. */
async function longSession(script, done = (state) => state.run.status === "completed") {
  const { client: full } = client({ script });
  await full.connect();
  await full.sendMessage("Go");
  await until("the scripted turn", () => full.state !== null && done(full.state), 30_000);
  return full;
}

/** A windowed client attached to `full`'s session (no state held: it gets a windowed snapshot). */
async function attachWindowed(full, window, extra = {}) {
  const { session_id, resume_token } = full.session;
  const w = client({ resume: { session_id, resume_token, last_seq: 0 }, window, ...extra });
  await w.client.connect();
  await until("the windowed snapshot", () => w.client.state ?? undefined);
  return w;
}

/** Waits until the windowed client's view is the view of `full`'s state from its cursor. */
async function viewsAgree(windowed, full, what) {
  await until(what, () => {
    const cursor = windowed.window?.before ?? null;
    const start = cursor === null ? 0 : full.state.items.findIndex((item) => item.id === cursor);
    if (start < 0 || windowed.state.items.length !== heldView(full.state, cursor).items.length) return false;
    try {
      assert.deepEqual(windowed.state, heldView(full.state, cursor));
      return true;
    } catch {
      return false;
    }
  });
  assert.deepEqual(windowed.state, heldView(full.state, windowed.window?.before ?? null));
}

describe("windows and paged history (1.2, state_window)", () => {
  test("a window opens with the newest items and the old form; the form settles in it; paging reaches the first item, every item once and in order", async () => {
    // 1 user message, 400 messages, the form and its output, 150 auto calls: the form is 150 items
    // older than any window below 150. Answering it plays 40 more messages.
    const script = { turns: [{ steps: [...says(400, "Message"), { op: "tool_calls", calls: [form, ...Array.from({ length: 150 }, (_, i) => auto(i))] }, ...says(40, "After")] }] };
    const full = await longSession(script, (state) => state.run.status === "awaiting_input" && state.items.length === 1 + 400 + 2 + 150);
    const total = full.state.items.length;

    const { client: w, sent } = await attachWindowed(full, 50);
    const hello = sent.find((f) => f.type === "session.hello");
    assert.equal(hello.window, 50);
    assert.deepEqual(hello.versions, ["1.3", "1.2"], "a window is asked for with an offer of 1.2 and later alone (WINDOW-001)");
    assert.ok(w.session.features.includes("state_window"));
    const pending = full.state.items.find((item) => item.kind === "tool_call" && item.status === "pending");
    const output = full.state.items.find((item) => item.kind === "tool_output" && item.tool_call_id === pending.id);
    assert.equal(w.window.size, 50);
    assert.equal(w.window.total, total);
    assert.equal(w.window.before, full.state.items[total - 50].id, "the cursor is the oldest of the newest 50");
    assert.deepEqual(ids(w.state.items), [pending.id, output.id, ...ids(full.state.items.slice(-50))], "the newest 50, after the always-held form and its output");
    assert.deepEqual(w.state, heldView(full.state, w.window.before));
    assert.equal(w.hasOlder, true);

    // The old form is answerable from the window, and its settling reaches the view (WINDOW-004).
    const settled = await w.submit(pending.id, true);
    assert.equal(settled.type, "chat.tool_call_complete");
    await until("the run completed", () => full.state.run.status === "completed" && w.state.run.status === "completed");
    assert.equal(w.state.items[0].status, "completed", "the settled form stays held, as it settled");
    await viewsAgree(w, full, "the windowed view after the settle and the 40 appended messages");
    assert.equal(w.state.items.at(-1).markdown, "After 40");
    assert.equal(w.window.total, full.state.items.length, "total counts the items appended since the window opened");

    // Paging back to the first item: 100 at a time from a cursor that moved with each page.
    const pages = [];
    let cursor = w.window.before;
    for (;;) {
      const requestsBefore = sent.filter((f) => f.type === "chat.history_request").length;
      const page = await w.loadOlder(100);
      if (page === null) {
        assert.equal(sent.filter((f) => f.type === "chat.history_request").length, requestsBefore, "nothing is sent once the first item is held");
        break;
      }
      const request = sent.findLast((f) => f.type === "chat.history_request");
      assert.equal(request.before, cursor, "each request names the current cursor");
      assert.equal(request.limit, 100);
      assert.equal(page.in_reply_to, request.id);
      assert.equal(page.total, full.state.items.length);
      assert.ok(page.items.length <= 100 && page.items.length > 0);
      pages.unshift(page);
      cursor = page.before ?? null;
      assert.equal(w.window.before, cursor);
      await viewsAgree(w, full, `the view after page ${pages.length}`);
    }
    assert.equal(pages[0].before, undefined, "the last page has no cursor");
    assert.equal(pages[0].items[0].id, full.state.items[0].id, "the last page holds the first item");
    assert.equal(w.hasOlder, false);
    // The pages, oldest first, then the window from its cursor on: the whole state (WINDOW-009).
    const windowStart = full.state.items.findIndex((item) => item.id === pages.at(-1).items.at(-1).id) + 1;
    assert.deepEqual(ids([...pages.flatMap((p) => p.items), ...full.state.items.slice(windowStart)]), ids(full.state.items));
    assert.deepEqual(w.state, full.state, "the paged-in view is the whole state");
    assert.equal(new Set(ids(w.state.items)).size, w.state.items.length, "no item is held twice");
    assert.equal(w.state.items.filter((item) => item.id === pending.id).length, 1, "the form is held once, as the page has it");
  });

  test("concurrent loadOlder() calls run one after another, each from the cursor the previous one left", async () => {
    const full = await longSession({ turns: [{ steps: says(120, "Line") }] });
    const { client: w, sent } = await attachWindowed(full, 20);
    const results = await Promise.all([w.loadOlder(30), w.loadOlder(30), w.loadOlder(30), w.loadOlder(30), w.loadOlder(30)]);
    const requests = sent.filter((f) => f.type === "chat.history_request");
    assert.equal(requests.length, 4, "121 items: a window of 20 and four pages; the fifth call sends nothing");
    assert.equal(results[4], null);
    for (let i = 1; i < 4; i++) assert.equal(requests[i].before, results[i - 1].before, "each request names the cursor the previous page left");
    assert.deepEqual(results.slice(0, 4).map((p) => p.items.length), [30, 30, 30, 11]);
    assert.deepEqual(w.state, full.state);
    await assert.rejects(w.loadOlder(0), RangeError);
    await assert.rejects(w.loadOlder(501), RangeError);
  });

  test("a rewind that removes the cursor item: a fresh window replaces the view, the request in flight gets stale_cursor, and paging goes on from the fresh cursor", async () => {
    const script = { turns: [{ steps: says(60, "First") }, { steps: says(30, "Second") }] };
    const full = await longSession(script);
    const firstTurn = full.state.run.invocation_id;
    await full.sendMessage("Again");
    await until("the second turn", () => full.state.run.status === "completed" && full.state.run.invocation_id !== firstTurn);
    const secondTurn = full.state.run.invocation_id;
    const { client: w } = await attachWindowed(full, 10);
    const cutCursor = w.window.before;
    assert.equal(full.state.items.find((item) => item.id === cutCursor).invocation_id, secondTurn);

    // The rewind reaches the server first; the page request naming the cut cursor comes after it.
    const snapshots = [];
    w.on("frame", (frame) => frame.type === "ui_state_snapshot" && snapshots.push(frame));
    const rewound = w.rewind(secondTurn);
    const stale = w.loadOlder(25);
    await rewound;
    await assert.rejects(stale, (error) => error instanceof ChatwireError && error.code === "stale_cursor");
    assert.equal(snapshots.length, 1, "the cut reached the windowed connection as a fresh window (WINDOW-006)");
    assert.ok(snapshots[0].window.before !== undefined && snapshots[0].window.before !== cutCursor);
    await until("the rewind on the full client", () => full.state.items.length === 61);
    await viewsAgree(w, full, "the fresh window");
    assert.equal(w.state.items.length, 10);
    assert.equal(w.window.total, 61);

    // Paging from the fresh cursor reaches the first item.
    while ((await w.loadOlder(25)) !== null);
    assert.deepEqual(w.state, full.state);
  });

  test("a resume names the cursor (resume.before): its catch-up patches the view, paged-in items included", async () => {
    const script = { turns: [{ steps: says(80, "Old") }, { steps: says(30, "New") }] };
    const full = await longSession(script);
    const { client: w, sockets, sent } = await attachWindowed(full, 15, { reconnect: { initialDelayMs: 1000, maxDelayMs: 1000, maxAttempts: 5 } });
    await w.loadOlder(20);
    const cursor = w.window.before;
    const seqBefore = w.session.last_seq;

    // The connection drops while the session goes on elsewhere.
    sockets.cut();
    await until("the windowed client reconnecting", () => w.status !== "open" || undefined);
    await full.sendMessage("More");
    await until("the second turn on the full client", () => full.state.run.status === "completed" && full.state.items.length === 81 + 31);
    await until("the windowed client back", () => w.status === "open" && w.state.items.length === heldView(full.state, cursor).items.length);

    const resume = sent.filter((f) => f.type === "session.hello").at(-1);
    assert.equal(resume.window, 15);
    assert.equal(resume.resume.before, cursor, "the resume names the view's cursor (WINDOW-012)");
    assert.ok(resume.resume.last_seq > 0 && resume.resume.last_seq <= seqBefore);
    assert.equal(w.window.before, cursor, "a catch-up keeps the cursor: the view was patched, not replaced");
    await viewsAgree(w, full, "the caught-up view");
    assert.equal(w.window.total, full.state.items.length);
    while ((await w.loadOlder(500)) !== null);
    assert.deepEqual(w.state, full.state);
  });
  test("a resume whose cursor a cut removed meanwhile gets a fresh window (WINDOW-012), and paging goes on from it", async () => {
    const script = { turns: [{ steps: says(40, "Kept") }, { steps: says(40, "Cut") }] };
    const full = await longSession(script);
    const firstTurn = full.state.run.invocation_id;
    await full.sendMessage("Again");
    await until("the second turn", () => full.state.run.status === "completed" && full.state.run.invocation_id !== firstTurn);
    const secondTurn = full.state.run.invocation_id;
    const { client: w, sockets, sent } = await attachWindowed(full, 10, { reconnect: { initialDelayMs: 1000, maxDelayMs: 1000, maxAttempts: 5 } });
    const cursor = w.window.before;
    sockets.cut();
    await until("the windowed client reconnecting", () => w.status !== "open" || undefined);
    await full.rewind(secondTurn);
    await until("the rewind", () => full.state.items.length === 41);
    await until("the windowed client back with a fresh window", () => w.status === "open" && w.window?.before !== cursor && w.window?.total === 41);
    assert.equal(sent.filter((f) => f.type === "session.hello").at(-1).resume.before, cursor);
    await viewsAgree(w, full, "the fresh window after the resume");
    assert.equal(w.state.items.length, 10);
    while ((await w.loadOlder(7)) !== null);
    assert.deepEqual(w.state, full.state);
  });
});
