// Two tabs on one conversation (protocol 1.2, `multi_attach`, spec/attach.md), in Debian's headless
// Chromium: the address names the session (`/#session=<id>`), so a second tab opened on it shows the
// same conversation, and both stay live. A run started in tab A is stopped from tab B; a message
// sent in B appears in A; a form answered in A settles in B; B reloaded rejoins with the current
// state; nothing shows twice. A tab whose session went elsewhere (detached past the server's bound,
// or taken over) says so with a "Use here" that takes it back; checked at a laptop's and a phone's
// width. Screenshots go to $CHATWIRE_SCREENSHOTS, else a temporary directory.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import WebSocket from "ws";
import { ChatwireClient } from "../dist/index.js";
import { STEP_MS, WIDTHS, load, openPage, send } from "./chat-page.mjs";

const demo = JSON.parse(readFileSync(new URL("../../reference/ui/demo-script.json", import.meta.url), "utf8"));
const streamed = demo.turns[0].steps.find((step) => step.op === "say" && Array.isArray(step.chunks));
const poll = demo.turns[1].steps.flatMap((s) => s.calls ?? []).find((c) => c.tool_name === "quick_poll");

/** What a tab shows of the conversation: every transcript entry's text, and the run's status. */
function shown(page) {
  return page.evaluate(() => ({
    transcript: [...document.querySelectorAll("#transcript > *")].map((node) => node.textContent.replace(/\s+/g, " ").trim()),
    run: document.body.dataset.runStatus,
    session: document.body.dataset.session,
  }));
}

/** Waits until both tabs show the same conversation and `done` holds for it; returns it. */
async function bothShow(what, a, b, done, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const [x, y] = await Promise.all([shown(a), shown(b)]);
    if (JSON.stringify(x) === JSON.stringify(y) && done(x)) return x;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: tab A ${JSON.stringify(x)}, tab B ${JSON.stringify(y)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A node client attached to the session the page holds (the resume it keeps in localStorage). */
async function attachFromNode(page, url, clients) {
  const resume = await page.evaluate(() => {
    const id = document.body.dataset.session;
    const stored = JSON.parse(localStorage.getItem(`chatwire.session:${id}`));
    return { session_id: stored.session_id, resume_token: stored.resume_token, last_seq: stored.last_seq };
  });
  const client = new ChatwireClient({ url, socket: (u, p) => new WebSocket(u, p), resume, reconnect: false, clientName: "chatwire-page-tests" });
  clients.push(client);
  await client.connect();
  return client;
}

/** The box of `selector`: whether all of it lies in the viewport, and whether its text is cut off. */
async function box(page, selector) {
  return page.evaluate((selector) => {
    const node = document.querySelector(selector);
    const { left, right, top, bottom } = node.getBoundingClientRect();
    return { inViewport: left >= 0 && top >= 0 && right <= innerWidth && bottom <= innerHeight, clipped: node.scrollWidth > node.clientWidth };
  }, selector);
}

for (const width of WIDTHS) test(`${width} px: two tabs on one conversation: a Stop from B ends A's run, B's message and A's answer reach the other, a reload of B rejoins`, async (t) => {
  const { page: a, problems, pageUrl, shot, tab } = await openPage(t, width);
  await load(a, pageUrl);
  const session = await a.getAttribute("body", "data-session");
  assert.equal(new URL(a.url()).hash, `#session=${session}`, "the address names the conversation");
  assert.equal(await a.getAttribute("body", "data-attached"), "true", "multi_attach is in force");

  // A second tab on the same address: the same conversation, and the first stays live.
  const second = await tab("b");
  const b = second.page;
  await load(b, a.url());
  assert.equal(await b.getAttribute("body", "data-session"), session, "tab B opened the same session");
  assert.equal(await b.getAttribute("body", "data-attached"), "true");
  await a.waitForTimeout(200);
  assert.equal(await a.getAttribute("body", "data-connection"), "open", "tab A was not taken over");
  assert.equal(await a.isHidden("#elsewhere"), true);

  // A run started in A, stopped from B mid-stream: both end cancelled with the same partial text.
  await send(a, "Deploy the staging branch");
  await b.locator(".msg.user").first().waitFor();
  await b.locator(".msg.assistant[data-streaming]").waitFor();
  await b.waitForFunction(() => (document.querySelector(".msg.assistant[data-streaming]")?.textContent ?? "").length >= 20);
  assert.equal(await b.isVisible("#stop"), true, "tab B shows Stop for the run A started");
  await Promise.all([shot("attach-streaming"), second.shot("attach-streaming")]);
  await b.click("#stop");
  const cancelled = await bothShow("the run cancelled in both tabs", a, b, (s) => s.run === "cancelled");
  // The stopped answer is marked (issue #35): the mark follows the partial text.
  assert.equal(cancelled.transcript.at(-1), "Stopped", "the stopped answer is marked Stopped");
  const partial = cancelled.transcript.at(-2);
  assert.ok(partial.length > 0 && partial.length < streamed.markdown.length, `the text streamed so far: ${partial}`);
  assert.equal(await a.isHidden("#stop"), true);
  assert.equal(await a.isHidden("#error"), true, `no error in tab A: ${await a.textContent("#error")}`);
  assert.equal(await b.isHidden("#error"), true, `no error in tab B: ${await b.textContent("#error")}`);
  await Promise.all([shot("attach-cancelled"), second.shot("attach-cancelled")]);

  // A message sent in B appears in A (as state: tab A never sent it); its poll is pending in both.
  await send(b, "Show me what goes wrong");
  const pollForm = (page) => page.locator(`form.answer:has(button:text-is("${poll.payload.options[0]}"))`);
  await pollForm(a).waitFor();
  await pollForm(b).waitFor();
  const callId = await pollForm(a).getAttribute("data-form-for");
  await bothShow("the message and the pending poll in both tabs", a, b, (s) => s.transcript.some((line) => line === "Show me what goes wrong"));

  // B reloads while the poll waits: it rejoins with the current state, and A stays live.
  await b.reload();
  await b.waitForSelector('body[data-connection="open"]');
  assert.equal(await b.getAttribute("body", "data-session"), session, "the reload rejoined the same session");
  await pollForm(b).waitFor();
  assert.equal(await pollForm(b).getAttribute("data-form-for"), callId);
  assert.equal(await a.getAttribute("body", "data-connection"), "open", "tab A stays live through B's reload");
  await bothShow("the same conversation after B's reload", a, b, (s) => s.run === "awaiting_input");

  // The poll answered in A settles in B: the form becomes the completed chip, the run ends failed.
  await pollForm(a).locator(`button:text-is("${poll.payload.options[0]}")`).click();
  await b.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
  assert.equal(await b.locator(`form.answer[data-form-for="${callId}"]`).count(), 0, "no form left in tab B");
  const done = await bothShow("the turn failed in both tabs", a, b, (s) => s.run === "failed");
  // Each tab saw chat.run_complete, which carries the error, so both say why.
  for (const page of [a, b]) assert.match(await page.textContent("#run-error"), /the status check failed/);

  // Nothing shown twice: two user messages, each once, in the order they were sent.
  const users = await Promise.all([a, b].map((page) => page.locator(".msg.user").allTextContents()));
  assert.deepEqual(users, [["Deploy the staging branch", "Show me what goes wrong"], ["Deploy the staging branch", "Show me what goes wrong"]]);
  for (const page of [a, b]) {
    const ids = await page.locator("#transcript [data-tool-call-id], #transcript [data-ref-for], #transcript [data-item-id]").evaluateAll((nodes) =>
      nodes.map((n) => n.dataset.toolCallId ?? n.dataset.refFor ?? n.dataset.itemId),
    );
    assert.equal(new Set(ids).size, ids.length, `an item shown twice: ${ids}`);
  }
  assert.equal(done.transcript.filter((line) => line === partial).length, 1);
  for (const page of [a, b]) assert.equal(await page.isHidden("#error"), true, `no error: ${await page.textContent("#error")}`);
  await Promise.all([shot("attach-settled"), second.shot("attach-settled-after-reload")]);
  assert.equal(await a.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, "the page scrolls sideways");
  assert.deepEqual([...problems, ...second.problems], []);
});

for (const width of WIDTHS) {
  test(`${width} px: a tab whose conversation went elsewhere says so, and "Use here" takes it back`, async (t) => {
    const { page: a, problems, pageUrl, shot, tab, reference } = await openPage(t, width);
    const clients = [];
    t.after(() => {
      for (const c of clients) c.close();
    });
    await load(a, pageUrl);
    const second = await tab("b");
    const b = second.page;
    await load(b, a.url());
    // Past the bound (the welcome's limits.max_attached_connections), the earliest tab, A, is
    // detached (ATTACH-003): tabs A and B, and node clients up to the bound, then one more.
    const first = await attachFromNode(b, reference.url, clients);
    const bound = first.session.limits.max_attached_connections;
    assert.ok(bound >= 8, `the bound: ${bound}`);
    for (let i = 3; i < bound; i++) await attachFromNode(b, reference.url, clients);
    await a.waitForTimeout(200);
    assert.equal(await a.getAttribute("body", "data-connection"), "open", `${bound} attached connections are kept`);
    await attachFromNode(b, reference.url, clients);
    await a.waitForSelector('body[data-connection="elsewhere"][data-displaced="session_detached"]');
    const banner = a.locator("#elsewhere");
    await banner.waitFor();
    assert.match(await banner.textContent(), new RegExp(`too many tabs or windows \\(${bound} stay live at once\\)`));
    assert.equal(await a.isHidden("#offline"), true, "not a lost connection");
    assert.equal(await a.isHidden("#error"), true, `no error banner: ${await a.textContent("#error")}`);
    assert.equal(await a.evaluate(() => document.querySelector("#composer-controls").disabled), true, "nothing can be sent from a detached tab");
    assert.equal(await b.getAttribute("body", "data-connection"), "open", "tab B stays live");
    for (const selector of ["#elsewhere", "#use-here", "#new-session"]) {
      const where = await box(a, selector);
      assert.ok(where.inViewport && !where.clipped, `${selector} is cut off: ${JSON.stringify(where)}`);
    }
    assert.equal(await a.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, "the page scrolls sideways");
    await shot("elsewhere-detached");
    // It stays detached: no resume of its own (it would detach another tab).
    await a.waitForTimeout(500);
    assert.equal(await a.getAttribute("body", "data-connection"), "elsewhere");

    // "Use here" in A takes the session over: every other connection, tab B too, is closed.
    await a.click("#use-here");
    await a.waitForSelector('body[data-connection="open"]');
    assert.equal(await a.isHidden("#elsewhere"), true);
    await b.waitForSelector('body[data-connection="elsewhere"][data-displaced="session_taken_over"]');
    assert.match(await b.textContent("#elsewhere"), /Another tab or window took this conversation over/);
    assert.ok(clients.every((c) => c.displaced === "session_taken_over"), "the node clients were taken over too");
    await second.shot("elsewhere-taken-over");
    // A works: a message from A is answered.
    await send(a, "Deploy the staging branch");
    await a.locator(".msg.assistant").first().waitFor();

    // And B takes it back the same way.
    await b.click("#use-here");
    await b.waitForSelector('body[data-connection="open"]');
    await a.waitForSelector('body[data-connection="elsewhere"][data-displaced="session_taken_over"]');
    await b.locator(".msg.user").first().waitFor();
    assert.deepEqual(await b.locator(".msg.user").allTextContents(), ["Deploy the staging branch"], "tab B shows what A did meanwhile");
    assert.deepEqual([...problems, ...second.problems], []);
  });
}

test("a link to a conversation this browser does not hold starts a new one and says so; one it holds opens it", async (t) => {
  const { page, problems, pageUrl } = await openPage(t, 1280);
  await page.goto(`${pageUrl}#session=s-not-in-this-browser`);
  await page.waitForSelector('body[data-connection="open"]');
  assert.match(await page.textContent("#notice"), /does not hold/);
  const session = await page.getAttribute("body", "data-session");
  assert.notEqual(session, "s-not-in-this-browser");
  assert.equal(new URL(page.url()).hash, `#session=${session}`, "the address names the new conversation");
  // New session leaves it: the address names the next one.
  await Promise.all([page.waitForEvent("load"), page.click("#new-session")]);
  await page.waitForFunction((old) => document.body.dataset.connection === "open" && document.body.dataset.session !== old, session);
  assert.notEqual(new URL(page.url()).hash, `#session=${session}`);
  // An address naming the earlier conversation, pasted into this tab, opens it.
  await Promise.all([page.waitForEvent("load"), page.evaluate((id) => (location.hash = `#session=${id}`), session)]);
  await page.waitForFunction((id) => document.body.dataset.connection === "open" && document.body.dataset.session === id, session);
  assert.equal(await page.isHidden("#notice"), true, "this browser holds it: no notice");
  assert.deepEqual(problems, []);
});
