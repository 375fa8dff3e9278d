// Long threads on the chat page (1.2, `state_window`): a 2,000-item session (built by a node client
// from a conformance script, then opened by its address in the browser) opens with a window of its
// newest items, at the bottom; scrolling up loads older pages, each put above what the user reads
// at the line where the window starts without moving what the user reads, until the first item;
// every item is in the transcript once and in order, the old answered form included (held above
// the window from the start, then replaced by its page's copy).
import assert from "node:assert/strict";
import { test } from "node:test";
import WebSocket from "ws";
import { ChatwireClient } from "../dist/index.js";
import { until } from "../test/helpers.mjs";
import { WIDTHS, openPage, pageUntil } from "./chat-page.mjs";

const say = (markdown) => ({ op: "say", markdown });
const form = {
  tool_name: "confirm_deploy",
  interaction_type: "ui_tool",
  display: "inline",
  component_type: "YesNo",
  payload: { question: "Deploy?" },
  outcome: { kind: "await_response", summary: "Deploy confirmed" },
};
// 1 user message, 1,000 messages, the form, 998 messages: 2,000 items.
const script = {
  turns: [{ steps: [...Array.from({ length: 1000 }, (_, i) => say(`Early message ${i + 1}`)), { op: "tool_calls", calls: [form] }, ...Array.from({ length: 998 }, (_, i) => say(`Late message ${i + 1}`))] }],
};

/** Builds the session with a node client holding the whole state; returns its resume and items. */
async function longSession(url) {
  const client = new ChatwireClient({ url, socket: (u, p) => new WebSocket(u, p), script, requestTimeoutMs: 30_000 });
  await client.connect();
  await client.sendMessage("Tell me everything");
  const call = await until("the form", () => client.state?.items.find((item) => item.kind === "tool_call" && item.status === "pending"), 30_000);
  await client.submit(call.id, true);
  await until("the 2,000 items", () => client.state.run.status === "completed" && client.state.items.length === 2000, 30_000);
  const { session_id, resume_token, last_seq } = client.session;
  const items = client.state.items.map((item) => item.id);
  client.close();
  return { resume: { session_id, resume_token, last_seq }, items, formId: call.id };
}

/** The transcript's item ids in DOM order, where it is scrolled, and the older line. */
function transcript() {
  const node = document.getElementById("transcript");
  return {
    ids: [...node.querySelectorAll(":scope > [data-item-id]")].map((n) => n.dataset.itemId),
    gap: node.scrollHeight - node.scrollTop - node.clientHeight,
    scrollTop: node.scrollTop,
    older: document.getElementById("older") !== null,
    newMessages: !document.getElementById("new-messages").hidden,
  };
}

/**
 * Scrolls near the top and says which item is the last in view, and where: a page goes in above it,
 * at the older line (the always-held form above that line may leave the view).
 */
function scrollNearTop() {
  const node = document.getElementById("transcript");
  node.scrollTop = 40;
  const bottom = node.getBoundingClientRect().bottom;
  const last = [...node.querySelectorAll(":scope > [data-item-id]")].findLast((n) => n.getBoundingClientRect().top < bottom);
  return { id: last.dataset.itemId, top: last.getBoundingClientRect().top, count: node.querySelectorAll(":scope > [data-item-id]").length };
}

for (const width of WIDTHS) {
  test(`${width} px: a 2,000-item session opens with its newest items; scrolling up pages to the first item, each item once`, async (t) => {
    const { reference, page, problems, pageUrl, shot } = await openPage(t, width, { args: ["--ui", "--conformance"] });
    const session = await longSession(reference.url);
    await page.addInitScript((stored) => {
      localStorage.setItem(`chatwire.session:${stored.session_id}`, JSON.stringify({ ...stored, used: Date.now() }));
    }, session.resume);
    await page.goto(`${pageUrl}#session=${encodeURIComponent(session.resume.session_id)}`);
    await page.waitForSelector('body[data-connection="open"]');

    // The window: the newest 100 and the old form above them, shown at the bottom.
    const opened = await pageUntil(page, "the window at the bottom of the transcript", () => {
      const node = document.getElementById("transcript");
      const ids = [...node.querySelectorAll(":scope > [data-item-id]")].map((n) => n.dataset.itemId);
      const gap = node.scrollHeight - node.scrollTop - node.clientHeight;
      return { ok: ids.length > 0 && gap <= 2 && document.getElementById("older") !== null, ids, gap };
    });
    assert.deepEqual(opened.ids, [session.formId, ...session.items.slice(-100)], "the newest 100 items after the always-held form");
    assert.equal(await page.evaluate(() => document.body.dataset.older), "true");
    await shot("window-opened");

    // Scrolling up loads page after page above what the user reads, which stays where it was.
    let pages = 0;
    let formPages = 0;
    for (;;) {
      const before = await page.evaluate(transcript);
      if (!before.older) break;
      const anchor = await page.evaluate(scrollNearTop);
      const after = await pageUntil(page, `page ${pages + 1} above the transcript`, ({ id, count }) => {
        const node = document.getElementById("transcript");
        const items = node.querySelectorAll(":scope > [data-item-id]");
        const held = node.querySelector(`:scope > [data-item-id="${CSS.escape(id)}"]`);
        return { ok: items.length > count || document.getElementById("older") === null, count: items.length, top: held?.getBoundingClientRect().top, scrollTop: node.scrollTop };
      }, anchor);
      if (after.count === anchor.count) break;
      pages += 1;
      // A page of 100 at a time; the one holding the form adds 99: its copy replaces the one held.
      const added = after.count - anchor.count;
      assert.ok(added === 100 || added === 99, `page ${pages} added ${added} items`);
      if (added === 99) formPages += 1;
      assert.ok(Math.abs(after.top - anchor.top) <= 1, `page ${pages} moved the item the user was reading from ${anchor.top} to ${after.top} px`);
      assert.ok(after.scrollTop > 1000, `the transcript scrolled down by what was put above: ${JSON.stringify({ anchor, after, pages })}`);
      assert.ok(pages <= 25, "paging ends");
    }
    await shot("window-paged-to-start");
    const end = await page.evaluate(transcript);
    assert.ok(pages >= 19, `1,900 older items in pages of 100: ${pages} pages`);
    assert.equal(formPages, 1, "one page held the form");
    assert.equal(end.older, false, "no older line once the first item is held");
    assert.equal(await page.evaluate(() => document.body.dataset.older), "false");
    assert.equal(end.ids.length, 2000);
    assert.equal(new Set(end.ids).size, 2000, "no item twice in the transcript");
    assert.deepEqual(end.ids, session.items, "every item, in order");
    assert.equal(end.newMessages, false, "older items are no new messages");
    assert.deepEqual(problems, []);
  });
}
