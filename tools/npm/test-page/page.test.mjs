// The reference chat page in a real headless Chromium (Debian's `chromium`, driven by
// playwright-core; no browser is ever downloaded). The page is served by the release reference
// backend (`serve --ui --demo`), whose demo agent plays tools/reference/ui/demo-script.json.
//
// The scenario is the field report's: complete a form, reload, and the call must come back as a
// completed chip, never as the form again; the page resumes the session its address names. And a
// streamed reply (1.1, assistant_stream) is seen growing, then whole.
// Screenshots go to $CHATWIRE_SCREENSHOTS (CI: ci-reports/chat-page), else a temporary directory.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { startReference } from "../test/helpers.mjs";

const CHROMIUM = process.env.CHATWIRE_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = process.env.CHATWIRE_SCREENSHOTS ?? path.join(tmpdir(), "chatwire-chat-page");
const STEP_MS = 15_000;

async function withPage(t) {
  const server = await startReference(["--ui", "--demo"]);
  t.after(() => server.stop());
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"], timeout: 30_000 });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(STEP_MS);
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  return { server, page, problems, pageUrl: server.url.replace(/^ws:/, "http:").replace(/\/ws$/, "/") };
}

test("a completed form comes back as a completed chip after a reload, never as the form", async (t) => {
  await mkdir(SHOTS, { recursive: true });
  const { page, problems, pageUrl } = await withPage(t);
  await page.goto(pageUrl);
  await page.waitForSelector('body[data-connection="open"]');
  const session = await page.getAttribute("body", "data-session");

  await page.fill("#message", "Deploy the staging branch");
  await page.press("#message", "Enter");
  const form = page.locator('form.answer:has(input[name="branch"])');
  await form.waitFor();
  const callId = await form.getAttribute("data-form-for");
  assert.ok(callId, "the form names its tool call");
  // Tool output and the artifact panel arrive while the form waits.
  await page.locator(".tool-output .stdout").first().waitFor();
  await page.locator("#artifact-list .tool-call").first().waitFor();

  await form.locator('input[name="branch"]').fill("release-1.0");
  await form.locator('input[name="replicas"]').fill("3");
  await form.locator('input[name="notify"]').check();
  await form.locator('button[type="submit"]').click();
  const chip = page.locator(`[data-chip-for="${callId}"]`);
  await chip.waitFor();
  assert.equal(await chip.getAttribute("data-status"), "completed");
  assert.match(await chip.textContent(), /deployment scheduled/);
  // The next step asks in place of the composer.
  await page.locator("#input-request form.answer").waitFor();
  assert.equal(await page.isHidden("#composer"), true, "the input request replaces the composer");

  await page.reload();
  await page.waitForSelector('body[data-connection="open"]');
  assert.equal(await page.getAttribute("body", "data-session"), session, "the reload resumed the same session");
  await page.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
  assert.equal(await page.locator(`form[data-form-for="${callId}"]`).count(), 0, "the completed form came back interactive");
  await page.locator("#input-request form.answer").waitFor();
  assert.equal(await page.isHidden("#composer"), true, "the pending input request still replaces the composer");
  await page.screenshot({ path: path.join(SHOTS, "after-reload.png"), fullPage: true });

  // The rest of the turn: the input request, then a full view, then the turn completes.
  await page.fill("#input-request textarea", "routine Tuesday release");
  await page.click('#input-request button[type="submit"]');
  await page.locator("#view:not([hidden]) form.answer").waitFor();
  assert.equal(await page.isHidden("#transcript"), true, "a view replaces the transcript while pending");
  await page.click('#view button:text-is("Approve")');
  await page.waitForSelector('body[data-run-status="completed"]');
  assert.equal(await page.isVisible("#composer"), true);
  assert.equal(await page.locator("form.answer").count(), 0, "no form is left once every call settled");
  await page.screenshot({ path: path.join(SHOTS, "turn-completed.png"), fullPage: true });
  console.log(`screenshots: ${SHOTS}/after-reload.png, ${SHOTS}/turn-completed.png`);
  assert.deepEqual(problems, []);
});

test("a streamed reply grows on the page: partial text first, marked as streaming, then the whole message", async (t) => {
  // The demo's first turn starts with a streamed say (SCRIPT-019): one paragraph whose inline marks
  // never straddle a chunk, so after k chunks the page shows the first k chunks as rendered text.
  const demo = JSON.parse(readFileSync(new URL("../../reference/ui/demo-script.json", import.meta.url), "utf8"));
  const streamed = demo.turns[0].steps.find((step) => step.op === "say" && Array.isArray(step.chunks));
  assert.ok(streamed, "the demo's first turn has a say with chunks");
  assert.ok(streamed.chunks.length >= 4 && (streamed.chunk_delay_ms ?? 0) >= 100, "enough chunks, slow enough to be seen growing");
  assert.doesNotMatch(streamed.markdown, /\n/, "one paragraph");
  const rendered = (markdown) => markdown.replace(/\*\*([^*]+)\*\*/g, "$1").replace(/`([^`]+)`/g, "$1");
  const prefixes = streamed.chunks.map((_, k) => rendered(streamed.chunks.slice(0, k + 1).join("")));
  const whole = rendered(streamed.markdown);
  assert.equal(prefixes.at(-1), whole);

  await mkdir(SHOTS, { recursive: true });
  const { page, problems, pageUrl } = await withPage(t);
  await page.goto(pageUrl);
  await page.waitForSelector('body[data-connection="open"]');
  // Every text a streaming assistant message shows, in order, recorded in the page as it changes.
  await page.evaluate(() => {
    const seen = [];
    window.__streamed = seen;
    new MutationObserver(() => {
      for (const node of document.querySelectorAll(".msg.assistant[data-streaming]")) {
        const text = node.textContent ?? "";
        if (seen.at(-1) !== text) seen.push(text);
      }
    }).observe(document.getElementById("transcript"), { childList: true, subtree: true, characterData: true });
  });
  await page.fill("#message", "Stream me something");
  await page.press("#message", "Enter");
  const growing = page.locator(".msg.assistant[data-streaming]").first();
  await growing.waitFor();
  const itemId = await growing.getAttribute("data-item-id");
  assert.ok(itemId, "the streaming message names its item");
  const partial = (await growing.textContent()) ?? "";
  assert.ok(prefixes.includes(partial), `${JSON.stringify(partial)} is the text of the first chunks`);
  await page.screenshot({ path: path.join(SHOTS, "streaming.png"), fullPage: true });

  const done = page.locator(`.msg.assistant[data-item-id="${itemId}"]:not([data-streaming])`);
  await done.waitFor({ timeout: STEP_MS + streamed.chunks.length * streamed.chunk_delay_ms });
  assert.equal(await done.textContent(), whole, "then the whole message, no longer streaming");
  // Recorded at each change: partial texts first, each the text of one more chunk or more (the
  // last delta completes the text while the item still streams; the end frame marks it finished).
  const texts = await page.evaluate(() => window.__streamed);
  const steps = texts.map((text) => prefixes.indexOf(text));
  assert.ok(steps.every((k, i) => k >= 0 && (i === 0 || k > steps[i - 1])), `the message only grew, chunk by chunk: ${JSON.stringify(texts)}`);
  assert.ok(steps[0] < prefixes.length - 1 && steps.filter((k) => k < prefixes.length - 1).length >= 2, `partial texts first: ${JSON.stringify(texts)}`);
  assert.equal(await page.locator(".msg.assistant[data-streaming]").count(), 0);
  assert.deepEqual(problems, []);
});

test("the page is plain HTTP on the WebSocket's port, under a CSP without unsafe-eval", async (t) => {
  const { pageUrl } = await withPage(t);
  const index = await fetch(pageUrl, { signal: AbortSignal.timeout(STEP_MS) });
  assert.equal(index.status, 200);
  const csp = index.headers.get("content-security-policy") ?? "";
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-eval|unsafe-inline/);
  assert.match(await index.text(), /<script type="module" src="\/app.js">/);
  const script = await fetch(new URL("/app.js", pageUrl), { signal: AbortSignal.timeout(STEP_MS) });
  assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
  const missing = await fetch(new URL("/nothing-here", pageUrl), { signal: AbortSignal.timeout(STEP_MS) });
  assert.equal(missing.status, 404);
  await missing.text();
});
