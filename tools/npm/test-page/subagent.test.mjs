// Protocol 1.3 on the reference chat page, in Debian's headless Chromium at 1280 and 390 px: a
// sub-agent's run inside the tool call that hosts it (feature `subagents`). The page's WebSocket is
// answered by a scripted 1.3 server (chat-page.mjs), which plays frames one step at a time, so the
// page is seen mid-stream; the nested deltas are folded by the client itself (STATE-065), every
// other change arrives as the state. What is required:
// - the run shows inside its host's card, with three tiers derived from its transcript: backstage
//   (its reasoning and the tools it called) collapsed under one disclosure, its intermediate text,
//   and its final content (the run's `response`, marked "Returned" when it ended with `return`);
// - the block still streaming shows live below the finalized blocks, and grows delta by delta;
// - the reader's open backstage stays open as the run goes on; the run's usage follows the host;
// - a nested form (a call of the sub-agent awaiting the user) is answered inside the host's card,
//   its answer naming the nested call, and once settled it joins the backstage.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WIDTHS, load, opening, openPage, pageUntil, SCRIPTED_TS as TS, scriptedServer, send } from "./chat-page.mjs";

const FEATURES = ["assistant_stream", "reasoning", "usage", "subagents"];
const INV = "inv-1";

/** The host's transcript in the scripted server's state (its call is the second item). */
const nested = (s) => s.items[1].subagent.items;

/** Frames with their state changes: the host call, and the sub-agent's start. */
const HOST = [
  [{ type: "chat.tool_call", invocation_id: INV, tool_call_id: "tc-1", tool_name: "research_fares", interaction_type: "auto_tool", awaiting_response: false, display: "inline", payload: {}, call_index: 0 },
    (s) => s.items.push({ kind: "tool_call", id: "tc-1", invocation_id: INV, tool_name: "research_fares", interaction_type: "auto_tool", display: "inline", awaiting_response: false, status: "running", payload: {}, ts: TS })],
  [{ type: "chat.subagent_started", tool_call_id: "tc-1", thread_id: "th-1", name: "fare_researcher", input: "Find the cheapest flight to Lisbon" },
    (s) => (s.items[1].subagent = { thread_id: "th-1", name: "fare_researcher", input: "Find the cheapest flight to Lisbon", status: "running", items: [] })],
];

/** A nested frame: `parent_call_id` names the host. */
const inHost = (frame) => ({ ...frame, invocation_id: INV, parent_call_id: "tc-1" });

/** The sub-agent thinks, calls a tool that prints and settles, says one finalized text. */
const FINALIZED = [
  [inHost({ type: "chat.reasoning", item_id: "sr-1", text: "Compare the three carriers, then their bag fees." }),
    (s) => nested(s).push({ kind: "reasoning", id: "sr-1", invocation_id: INV, text: "Compare the three carriers, then their bag fees.", ts: TS })],
  [inHost({ type: "chat.tool_call", tool_call_id: "tc-2", tool_name: "search_fares", interaction_type: "auto_tool", awaiting_response: false, display: "inline", payload: {}, call_index: 0 }),
    (s) => nested(s).push({ kind: "tool_call", id: "tc-2", invocation_id: INV, tool_name: "search_fares", interaction_type: "auto_tool", display: "inline", awaiting_response: false, status: "running", payload: {}, ts: TS })],
  [{ type: "chat.tool_output", tool_call_id: "tc-2", stdout: "TAP 89 EUR\nRyanair 95 EUR\neasyJet 102 EUR\n" },
    (s) => nested(s).push({ kind: "tool_output", id: "tc-2.output", invocation_id: INV, tool_call_id: "tc-2", tool_name: "search_fares", approvals: [], stdout: "TAP 89 EUR\nRyanair 95 EUR\neasyJet 102 EUR\n", stderr: "" })],
  [{ type: "chat.tool_call_complete", tool_call_id: "tc-2", status: "completed", summary: "3 fares" },
    (s) => Object.assign(nested(s)[1], { status: "completed", summary: "3 fares", settled_ts: TS })],
  [inHost({ type: "chat.assistant_message", item_id: "sa-1", markdown: "Found **three** fares." }),
    (s) => nested(s).push({ kind: "assistant_markdown", id: "sa-1", invocation_id: INV, markdown: "Found **three** fares.", ts: TS })],
];

const STREAMED = "TAP is cheapest, bags included.";
const USAGE = { input_tokens: 2400, output_tokens: 410, cost: { amount: "0.021", currency: "USD" } };

/** The stream's end, the run's return, the host's settlement, the answer and the run's end with usage. */
const ENDING = [
  [inHost({ type: "chat.assistant_message", item_id: "sa-2", markdown: STREAMED }),
    (s) => nested(s).push({ kind: "assistant_markdown", id: "sa-2", invocation_id: INV, markdown: STREAMED, ts: TS })],
  [{ type: "chat.subagent_complete", tool_call_id: "tc-1", status: "completed", response: "TAP at 09:40, 89 EUR.", returned: true },
    (s) => Object.assign(s.items[1].subagent, { status: "completed", response: "TAP at 09:40, 89 EUR.", returned: true })],
  [{ type: "chat.tool_call_complete", tool_call_id: "tc-1", status: "completed", summary: "researched" },
    (s) => Object.assign(s.items[1], { status: "completed", summary: "researched", settled_ts: TS })],
  [{ type: "chat.assistant_message", invocation_id: INV, item_id: "a-1", markdown: "The cheapest is **TAP** at 89 EUR." },
    (s) => s.items.push({ kind: "assistant_markdown", id: "a-1", invocation_id: INV, markdown: "The cheapest is **TAP** at 89 EUR.", ts: TS })],
  [{ type: "chat.run_complete", invocation_id: INV, status: "completed", usage: USAGE }, (s) => {
    s.run = { status: "completed", invocation_id: INV };
    s.usage = { total: USAGE, invocations: { [INV]: USAGE } };
  }],
];

/** Where the panel's parts are, in document order, and what they say. */
const panel = (page) =>
  page.evaluate(() => {
    const node = document.querySelector('.tool-call[data-tool-call-id="tc-1"] > .subagent');
    if (node === null) return null;
    const parts = [...node.children].map((child) => child.className.split(" ")[0]);
    const live = node.querySelector(".subagent-live [data-streaming]");
    const backstage = node.querySelector("details.backstage");
    const text = node.querySelector(".subagent-text:not(.streaming)");
    return {
      parts,
      status: node.dataset.status,
      head: node.querySelector(".subagent-head").textContent,
      backstage: backstage === null ? null : { open: backstage.open, summary: backstage.querySelector("summary").textContent },
      text: text?.textContent ?? null,
      textSize: text === null ? null : parseFloat(getComputedStyle(text).fontSize),
      live: live?.textContent ?? null,
      final: node.querySelector(".subagent-final")?.textContent ?? null,
      sideways: document.documentElement.scrollWidth > innerWidth,
    };
  });

for (const width of WIDTHS) {
  test(`${width} px: a sub-agent runs inside its tool call, in three tiers, its stream live below them`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    const server = scriptedServer("s-subagent", FEATURES);
    await page.routeWebSocket(/\/ws$/, (ws) => server.route(ws));
    await load(page, pageUrl);

    await send(page, "Find the cheapest flight to Lisbon");
    opening(server, await server.next("chat.user_message"), 1);
    server.play(...HOST, ...FINALIZED);
    server.play(
      [inHost({ type: "chat.assistant_message_delta", item_id: "sa-2", delta: "TAP is cheapest, " })],
      [inHost({ type: "chat.assistant_message_delta", item_id: "sa-2", delta: "bags included." })],
    );
    await pageUntil(page, "the nested stream to grow", () => ({
      ok: document.querySelector(".subagent .subagent-live [data-streaming]")?.textContent === "TAP is cheapest, bags included.",
    }));
    let seen = await panel(page);
    assert.deepEqual(seen.parts, ["subagent-head", "backstage", "subagent-text", "subagent-live"], "backstage, then text, then the live block");
    assert.match(seen.head, /Sub-agent · Fare researcher/);
    assert.equal(seen.status, "running");
    assert.deepEqual(seen.backstage, { open: false, summary: "Backstage · 3 steps" }, "reasoning, the nested call and its output, collapsed");
    assert.equal(await page.locator(".subagent .backstage .step.thought").isVisible(), false, "collapsed: its steps are not shown");
    assert.equal(seen.text, "Found three fares.");
    const answerSize = await page.evaluate(() => parseFloat(getComputedStyle(document.querySelector(".msg.user")).fontSize));
    assert.ok(seen.textSize < answerSize, `intermediate text is a quieter tier: ${seen.textSize}px`);
    assert.equal(seen.final, null, "no final content while the run goes on");
    assert.equal(seen.sideways, false, "the page scrolls sideways");
    await shot("subagent-streaming");

    // The reader opens the backstage; it stays open as the run ends.
    await page.click(".subagent details.backstage summary");
    await page.locator(".subagent .backstage .step.thought").waitFor({ state: "visible" });
    assert.equal(await page.locator(".subagent .backstage .tool-output").textContent(), "TAP 89 EUR\nRyanair 95 EUR\neasyJet 102 EUR\n");
    server.play(...ENDING);
    await page.locator(`.run-usage[data-usage-for="${INV}"]`).waitFor();
    seen = await panel(page);
    assert.deepEqual(seen.parts, ["subagent-head", "backstage", "subagent-text", "subagent-text", "subagent-final"], "the stream finalized, the final content last");
    assert.equal(seen.status, "completed");
    assert.equal(seen.backstage.open, true, "the reader's open backstage stays open");
    assert.equal(seen.live, null);
    assert.equal(seen.final, "ReturnedTAP at 09:40, 89 EUR.", "the return is marked");
    assert.equal(
      await page.evaluate((inv) => document.querySelector(`.run-usage[data-usage-for="${inv}"]`).previousElementSibling?.dataset.itemId, INV),
      "a-1",
      "the run's usage follows its last item",
    );
    assert.equal(await page.locator('[data-chip-for="tc-1"]').count(), 1, "the host settles as any call");
    assert.equal(seen.sideways, false, "the page scrolls sideways");
    await shot("subagent-returned");
    assert.deepEqual(problems, []);
  });
}

/** The sub-agent asks the user which day, with a nested form, and the run waits for the answer. */
const ASKING = [
  [inHost({ type: "chat.tool_call", tool_call_id: "tc-f", tool_name: "pick_day", component_type: "DayPicker", interaction_type: "ui_tool", awaiting_response: true, display: "inline", payload: { title: "Which day?", options: ["Friday", "Sunday"] }, call_index: 0 }),
    (s) => nested(s).push({ kind: "tool_call", id: "tc-f", invocation_id: INV, tool_name: "pick_day", component_type: "DayPicker", interaction_type: "ui_tool", display: "inline", awaiting_response: true, status: "pending", payload: { title: "Which day?", options: ["Friday", "Sunday"] }, ts: TS })],
  [{ type: "chat.run_complete", invocation_id: INV, status: "awaiting_input" }, (s) => (s.run = { status: "awaiting_input", invocation_id: INV })],
];

for (const width of WIDTHS) {
  test(`${width} px: a sub-agent's form is answered inside its host's card, then joins the backstage`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    const server = scriptedServer("s-subagent-form", FEATURES);
    await page.routeWebSocket(/\/ws$/, (ws) => server.route(ws));
    await load(page, pageUrl);

    await send(page, "Book the cheapest flight");
    opening(server, await server.next("chat.user_message"), 1);
    server.play(...HOST, ...ASKING);
    const form = page.locator('.tool-call[data-tool-call-id="tc-1"] > .subagent .subagent-live form.answer[data-form-for="tc-f"]');
    await form.waitFor();
    assert.equal(await page.locator(".subagent details.backstage").count(), 0, "nothing settled yet: no backstage");
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth > innerWidth);
    assert.equal(sideways, false, "the page scrolls sideways");
    await shot("subagent-form");

    await form.getByRole("button", { name: "Sunday" }).click();
    const response = await server.next("chat.tool_call_response");
    assert.equal(response.tool_call_id, "tc-f", "the answer names the nested call");
    assert.deepEqual(response.outcome, { action: "submit", value: "Sunday" });
    server.play(
      [{ type: "chat.tool_call_complete", tool_call_id: "tc-f", status: "completed", result: "Sunday", summary: "Sunday", in_reply_to: response.id },
        (s) => Object.assign(nested(s)[0], { status: "completed", result: "Sunday", summary: "Sunday", settled_ts: TS })],
      [{ type: "chat.run_started", invocation_id: INV }, (s) => (s.run = { status: "running", invocation_id: INV })],
    );
    await page.locator(".subagent details.backstage").waitFor();
    assert.equal(await form.count(), 0, "the form is gone once answered");
    assert.equal(await page.locator(".subagent details.backstage summary").textContent(), "Backstage · 1 step");
    assert.equal(await page.locator('.subagent .backstage [data-chip-for="tc-f"]').textContent(), "Pick day: Sunday");
    assert.deepEqual(problems, []);
  });
}
