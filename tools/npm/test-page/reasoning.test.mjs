// Protocol 1.3 on the reference chat page, in Debian's headless Chromium at 1280 and 390 px: the
// agent's reasoning (feature `reasoning`) and what each run used (feature `usage`). The page's
// WebSocket is answered by a scripted 1.3 server in this test (playwright's routeWebSocket), which
// plays recorded frames one step at a time, so the page is seen mid-stream; the page itself is the
// reference's (`serve --ui`). What is required:
// - a reasoning item is a disclosure, collapsed by default (REASON-006), which the keyboard opens
//   (Enter on its summary) and which stays open, with the focus on it, while it streams;
// - it is a quieter tier than the answer (smaller, no bubble), says "redacted" in words when it is,
//   and never shows its `encrypted` payload (REASON-005);
// - each run's usage follows its last item, and the session's total is in the footer, summed.
// Then the page against the reference offering only 1.0, 1.1 or 1.2: the demo's turn completes, and
// nothing of reasoning or usage shows. Screenshots go to $CHATWIRE_SCREENSHOTS (chat-page.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { WIDTHS, finishWelcomeTurn, load, opening, openPage, pageUntil, SCRIPTED_TS, scriptedServer, send, startWelcomeTurn } from "./chat-page.mjs";

const TS = SCRIPTED_TS;
/** A payload the page must never show: it is the model's, not the reader's. */
const SECRET = "U0VDUkVULXBheWxvYWQtbmV2ZXItc2hvd24=";
const FEATURES = ["assistant_stream", "reasoning", "usage"];

/** The end of a turn: its answer, then its run's end with `usage`, and the sums it leads to. */
function closing(server, n, answer, usage, sums) {
  const inv = `inv-${n}`;
  server.play(
    [{ type: "chat.assistant_message", invocation_id: inv, item_id: `a-${n}`, markdown: answer },
      (s) => s.items.push({ kind: "assistant_markdown", id: `a-${n}`, invocation_id: inv, markdown: answer, ts: TS })],
    [{ type: "chat.run_complete", invocation_id: inv, status: "completed", usage }, (s) => {
      s.run = { status: "completed", invocation_id: inv };
      s.usage = sums;
    }],
  );
}

const reasoningBox = (page) =>
  page.evaluate(() => {
    const node = document.querySelector("details.reasoning");
    if (node === null) return null;
    const summary = node.querySelector("summary");
    const style = getComputedStyle(node);
    const answer = document.querySelector(".msg.assistant");
    return {
      open: node.open,
      streaming: node.dataset.streaming === "true",
      busy: node.getAttribute("aria-busy"),
      summary: summary.textContent,
      text: node.querySelector(".reasoning-text").textContent,
      focused: document.activeElement === summary,
      fontSize: parseFloat(style.fontSize),
      background: style.backgroundColor,
      answerFontSize: answer === null ? null : parseFloat(getComputedStyle(answer).fontSize),
    };
  });

for (const width of WIDTHS) {
  test(`${width} px: reasoning is collapsed, opens from the keyboard and streams open; usage per run and the session's total`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    const server = scriptedServer("s-reasoning", FEATURES);
    await page.routeWebSocket(/\/ws$/, (ws) => server.route(ws));
    await load(page, pageUrl);

    // Turn 1: streamed reasoning, then the answer and the run's usage.
    await send(page, "Find the cheapest flight to Lisbon");
    const first = await server.next("chat.user_message");
    opening(server, first, 1);
    server.play(
      [{ type: "chat.reasoning_delta", invocation_id: "inv-1", item_id: "r-1", text: "The user wants the cheapest fare, " }],
      [{ type: "chat.reasoning_delta", invocation_id: "inv-1", item_id: "r-1", text: "so compare the three carriers " }],
    );
    await page.locator("details.reasoning[data-streaming]").waitFor();
    let box = await reasoningBox(page);
    assert.equal(box.open, false, "a reasoning item is collapsed by default (REASON-006)");
    assert.equal(box.summary, "Thinking…");
    assert.equal(box.busy, "true", "a streaming disclosure says it is busy");
    assert.equal(await page.locator("details.reasoning .reasoning-text").isVisible(), false, "collapsed: its text is not shown");
    assert.ok(box.fontSize < box.answerFontSize || box.answerFontSize === null, `reasoning is a quieter tier: ${box.fontSize}px`);
    assert.equal(box.background, "rgba(0, 0, 0, 0)", "no bubble behind reasoning");
    await shot("reasoning-streaming-collapsed");

    // The keyboard opens it: focus its summary, press Enter.
    await page.focus("details.reasoning summary");
    await page.keyboard.press("Enter");
    await page.locator("details.reasoning .reasoning-text").waitFor({ state: "visible" });
    server.play([{ type: "chat.reasoning_delta", invocation_id: "inv-1", item_id: "r-1", text: "and their bag fees." }]);
    await pageUntil(page, "the open disclosure to grow", () => ({
      ok: document.querySelector("details.reasoning .reasoning-text")?.textContent.endsWith("bag fees.") === true,
    }));
    box = await reasoningBox(page);
    assert.equal(box.open, true, "an opened disclosure stays open while it streams");
    assert.equal(box.focused, true, "and keeps the focus");
    assert.equal(box.text, "The user wants the cheapest fare, so compare the three carriers and their bag fees.");
    await shot("reasoning-streaming-open");

    const thought = "The user wants the cheapest fare, so compare the three carriers and their bag fees.";
    server.play([{ type: "chat.reasoning", invocation_id: "inv-1", item_id: "r-1", text: thought, encrypted: SECRET }, (s) =>
      s.items.push({ kind: "reasoning", id: "r-1", invocation_id: "inv-1", text: thought, encrypted: SECRET, ts: TS })]);
    const usage1 = { input_tokens: 1200, output_tokens: 340, reasoning_tokens: 128, cost: { amount: "0.0123", currency: "USD" } };
    closing(server, 1, "The cheapest is **TAP** at 89 EUR.", usage1, { total: usage1, invocations: { "inv-1": usage1 } });
    await page.locator('.run-usage[data-usage-for="inv-1"]').waitFor();
    box = await reasoningBox(page);
    assert.equal(box.streaming, false);
    assert.equal(box.summary, "Reasoning");
    assert.equal(box.open, true, "the reader's choice survives the stream's end");
    assert.equal(await page.locator('.run-usage[data-usage-for="inv-1"]').textContent(), "1,200 tokens in · 340 out · 128 reasoning · 0.0123 USD");
    assert.equal(
      await page.evaluate(() => document.querySelector('.run-usage[data-usage-for="inv-1"]').previousElementSibling?.dataset.itemId),
      "a-1",
      "a run's usage follows its last item",
    );
    assert.equal(await page.textContent("#usage-total"), "This conversation: 1,200 tokens in · 340 out · 128 reasoning · 0.0123 USD");

    // Turn 2: a redacted reasoning item, sent whole; the total sums both runs.
    await send(page, "And the return flight?");
    const second = await server.next("chat.user_message");
    opening(server, second, 2);
    server.play([{ type: "chat.reasoning", invocation_id: "inv-2", item_id: "r-2", text: "", redacted: true, encrypted: SECRET }, (s) =>
      s.items.push({ kind: "reasoning", id: "r-2", invocation_id: "inv-2", text: "", redacted: true, encrypted: SECRET, ts: TS })]);
    const usage2 = { input_tokens: 800, output_tokens: 200, cost: { amount: "0.01", currency: "USD" } };
    const total = { input_tokens: 2000, output_tokens: 540, reasoning_tokens: 128, cost: { amount: "0.0223", currency: "USD" } };
    closing(server, 2, "Also **TAP**, on Sunday.", usage2, { total, invocations: { "inv-1": usage1, "inv-2": usage2 } });
    await page.locator('.run-usage[data-usage-for="inv-2"]').waitFor();
    const redacted = page.locator('details.reasoning[data-item-id="r-2"]');
    assert.equal(await redacted.locator("summary").textContent(), "Reasoning (redacted)", "redacted is said in words");
    assert.equal(await redacted.evaluate((node) => node.open), false);
    await redacted.locator("summary").click();
    assert.match(await redacted.locator(".reasoning-text").textContent(), /redacted/);
    assert.equal(await page.textContent("#usage-total"), "This conversation: 2,000 tokens in · 540 out · 128 reasoning · 0.0223 USD");

    // REASON-005: the payload is nowhere on the page, not even in an attribute.
    assert.equal(await page.evaluate((secret) => document.documentElement.outerHTML.includes(secret), SECRET), false, "encrypted is never shown");
    const footer = await page.evaluate(() => {
      const r = document.querySelector("#usage-total").getBoundingClientRect();
      return { inViewport: r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth, sideways: document.documentElement.scrollWidth > innerWidth };
    });
    assert.ok(footer.inViewport, "the session's total is in sight, under the composer");
    assert.equal(footer.sideways, false, "the page scrolls sideways");
    await shot("reasoning-usage");
    assert.deepEqual(problems, []);
  });
}

for (const version of ["1.0", "1.1", "1.2"]) {
  test(`against a reference offering only ${version}: the demo's turn completes and nothing of reasoning or usage shows`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, 1280, { args: ["--ui", "--demo", "--versions", version] });
    await load(page, pageUrl);
    const form = await startWelcomeTurn(page);
    await finishWelcomeTurn(page, form);
    assert.equal(await page.locator("details.reasoning").count(), 0);
    assert.equal(await page.locator(".run-usage").count(), 0);
    assert.equal(await page.isHidden("#usage-total"), true);
    await shot(`older-server-${version}`);
    assert.deepEqual(problems, []);
  });
}
