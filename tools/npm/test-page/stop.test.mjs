// Protocol 1.2 on the reference chat page, in Debian's headless Chromium (playwright-core, no
// browser download), served by the release reference (`serve --ui --demo`):
// - the Stop button (ui/stop.ts) stops the demo's streamed reply mid-stream: the run ends
//   `cancelled`, the partial text stays as a finished message, and after a reload the page shows
//   the same partial text and the cancelled run (CANCEL-004, CANCEL-008);
// - the demo's deploy form is rendered from its response_schema (ui/form.ts): titles, required
//   marks, an enum as a select; a value that breaks the schema is stopped on the page with the
//   checker's message, and a fitting one completes the call.
// Screenshots go to $CHATWIRE_SCREENSHOTS, else a temporary directory.
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

const demo = JSON.parse(readFileSync(new URL("../../reference/ui/demo-script.json", import.meta.url), "utf8"));
const streamed = demo.turns[0].steps.find((step) => step.op === "say" && Array.isArray(step.chunks));
const rendered = (markdown) => markdown.replace(/\*\*([^*]+)\*\*/g, "$1").replace(/`([^`]+)`/g, "$1");
/** The page's text after k + 1 chunks, for every k. */
const prefixes = streamed.chunks.map((_, k) => rendered(streamed.chunks.slice(0, k + 1).join("")));

async function withPage(t, route) {
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
  await mkdir(SHOTS, { recursive: true });
  if (route !== undefined) await page.routeWebSocket(/\/ws$/, route);
  await page.goto(server.url.replace(/^ws:/, "http:").replace(/\/ws$/, "/"));
  await page.waitForSelector('body[data-connection="open"]');
  return { page, problems };
}

test("Stop ends the streamed reply mid-stream; the partial text stays, also after a reload, and the run shows cancelled", async (t) => {
  // Slow enough to be stopped between two chunks with time to spare.
  assert.ok(streamed.chunks.length >= 6 && streamed.chunk_delay_ms >= 300, "the demo streams slowly enough to be stopped mid-stream");
  const { page, problems } = await withPage(t);
  const session = await page.getAttribute("body", "data-session");
  assert.equal(await page.isHidden("#stop"), true, "no Stop button while nothing runs");

  await page.fill("#message", "Tell me about the deployment");
  await page.press("#message", "Enter");
  const growing = page.locator(".msg.assistant[data-streaming]").first();
  await growing.waitFor();
  const itemId = await growing.getAttribute("data-item-id");
  // Two chunks in, at least: the partial text is a real part of the message.
  await page.waitForFunction((second) => (document.querySelector(".msg.assistant[data-streaming]")?.textContent ?? "").length >= second.length, prefixes[1]);
  assert.equal(await page.isVisible("#stop"), true, "Stop shows while the run is in progress");
  assert.equal(await page.getAttribute("body", "data-run-status"), "running");
  await page.screenshot({ path: path.join(SHOTS, "stop-streaming.png"), fullPage: true });
  const before = (await growing.textContent()) ?? "";
  await page.click("#stop");

  await page.waitForSelector('body[data-run-status="cancelled"]');
  const message = page.locator(`.msg.assistant[data-item-id="${itemId}"]`);
  await page.locator(`.msg.assistant[data-item-id="${itemId}"]:not([data-streaming])`).waitFor();
  const partial = (await message.textContent()) ?? "";
  const k = prefixes.indexOf(partial);
  assert.ok(k >= 1 && k < prefixes.length - 1, `the text streamed so far, not the whole reply: ${JSON.stringify(partial)}`);
  assert.ok(partial.startsWith(before), `it kept what was shown when Stop was pressed: ${JSON.stringify(before)}`);
  assert.equal(await page.isHidden("#stop"), true, "no Stop button once the run is over");
  assert.equal(await page.textContent("#run"), "stopped", "a stopped run reads stopped, not as a failure");
  // Nothing of the run comes after the cancel: no more text, none of its tool calls.
  await page.waitForTimeout(3 * streamed.chunk_delay_ms);
  assert.equal(await message.textContent(), partial);
  assert.equal(await page.locator(".tool-call").count(), 0, "the run's tool calls never started");
  assert.equal(await page.isHidden("#error"), true, `no error shown: ${await page.textContent("#error")}`);
  await page.screenshot({ path: path.join(SHOTS, "stop-cancelled.png"), fullPage: true });

  await page.reload();
  await page.waitForSelector('body[data-connection="open"]');
  assert.equal(await page.getAttribute("body", "data-session"), session, "the reload resumed the same session");
  await page.waitForSelector('body[data-run-status="cancelled"]');
  const after = page.locator(`.msg.assistant[data-item-id="${itemId}"]`);
  await after.waitFor();
  assert.equal(await after.textContent(), partial, "the partial text is still there after the reload");
  assert.equal(await after.getAttribute("data-streaming"), null);
  assert.equal(await page.isHidden("#stop"), true);
  await page.screenshot({ path: path.join(SHOTS, "stop-after-reload.png"), fullPage: true });

  // The composer works again: the next message starts the next turn of the demo.
  await page.fill("#message", "Show me what goes wrong");
  await page.press("#message", "Enter");
  await page.waitForSelector('body[data-run-status="running"], body[data-run-status="awaiting_input"], body[data-run-status="failed"]');
  console.log(`screenshots: ${SHOTS}/stop-streaming.png, stop-cancelled.png, stop-after-reload.png`);
  assert.deepEqual(problems, []);
});

test("the deploy form renders from its response_schema and checks the value before sending it", async (t) => {
  const call = demo.turns[0].steps.flatMap((s) => s.calls ?? []).find((c) => c.response_schema !== undefined);
  assert.ok(call, "a demo call carries a response_schema");
  const schema = call.response_schema;
  const { page, problems } = await withPage(t);
  await page.fill("#message", "Deploy the staging branch");
  await page.press("#message", "Enter");
  const form = page.locator('form.answer[data-schema]');
  await form.waitFor({ timeout: STEP_MS + streamed.chunks.length * streamed.chunk_delay_ms });
  const callId = await form.getAttribute("data-form-for");

  // One control per property, in the schema's order, labelled with its title, required ones marked.
  const fields = await form.locator("label[data-field]").evaluateAll((labels) =>
    labels.map((l) => {
      const control = l.querySelector("input, select, textarea");
      return { name: l.dataset.field, caption: l.querySelector(".caption")?.textContent, control: [control?.tagName.toLowerCase(), control?.getAttribute("type")].filter(Boolean).join(" ") };
    }),
  );
  const required = new Set(schema.required);
  assert.deepEqual(
    fields.map((f) => [f.name, f.caption]),
    Object.entries(schema.properties).map(([name, p]) => [name, `${p.title ?? name}${required.has(name) ? " *" : ""}`]),
  );
  assert.deepEqual(
    Object.fromEntries(fields.map((f) => [f.name, f.control])),
    { branch: "input text", replicas: "input number", region: "select", notify: "input checkbox" },
  );
  const options = await form.locator('select[name="region"] option').allTextContents();
  assert.deepEqual(options, ["—", ...schema.properties.region.enum], "an enum is a select; not required, so it may stay empty");

  // A value the schema refuses never leaves the page: the checker's message, on the field.
  await form.locator('input[name="branch"]').fill("release-1.2");
  await form.locator('input[name="replicas"]').fill(String(schema.properties.replicas.maximum + 1));
  await form.locator('button[type="submit"]').click();
  // Said beside the field, in words (issue #35).
  const replicas = form.locator('label[data-field="replicas"] .field-error');
  await replicas.waitFor();
  assert.equal(await replicas.textContent(), `Must be at most ${schema.properties.replicas.maximum}`);
  assert.equal(await form.locator('input[name="replicas"]').getAttribute("aria-invalid"), "");
  await form.locator('input[name="branch"]').fill("");
  await form.locator('button[type="submit"]').click();
  const branch = form.locator('label[data-field="branch"] .field-error');
  await branch.waitFor();
  assert.equal(await branch.textContent(), "Required", "an empty text box with minLength 1");
  assert.equal(await replicas.isHidden(), true, "one problem at a time, beside its field");
  await page.screenshot({ path: path.join(SHOTS, "schema-form-refused.png"), fullPage: true });
  assert.equal(await page.locator(`[data-chip-for="${callId}"]`).count(), 0, "nothing was sent");

  // A fitting value completes the call.
  await form.locator('input[name="branch"]').fill("release-1.2");
  await form.locator('input[name="replicas"]').fill("3");
  await form.locator('select[name="region"]').selectOption("us-east");
  await form.locator('button[type="submit"]').click();
  await page.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
  await page.screenshot({ path: path.join(SHOTS, "schema-form-completed.png"), fullPage: true });
  assert.equal(await page.isHidden("#error"), true, `no error shown: ${await page.textContent("#error")}`);
  assert.deepEqual(problems, []);
});

test("a refusal from the server (response_invalid) is shown in the form, which stays answerable", async (t) => {
  // The page checks with the same rules the server does, so only a value changed on the way can
  // be refused: the test's WebSocket route raises the first submitted `replicas` past the maximum.
  let tampered = null;
  const route = (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const frame = JSON.parse(String(message));
      if (tampered === null && frame.type === "chat.tool_call_response" && frame.outcome?.action === "submit" && typeof frame.outcome.value?.replicas === "number") {
        frame.outcome.value.replicas = 99;
        tampered = frame.id;
        server.send(JSON.stringify(frame));
        return;
      }
      server.send(message);
    });
    server.onMessage((message) => ws.send(message));
  };
  const { page, problems } = await withPage(t, route);
  await page.fill("#message", "Deploy the staging branch");
  await page.press("#message", "Enter");
  const form = page.locator("form.answer[data-schema]");
  await form.waitFor({ timeout: STEP_MS + streamed.chunks.length * streamed.chunk_delay_ms });
  const callId = await form.getAttribute("data-form-for");
  await form.locator('input[name="branch"]').fill("main");
  await form.locator('input[name="replicas"]').fill("2");
  await form.locator('button[type="submit"]').click();
  const problem = form.locator(".form-error");
  await page.waitForFunction(() => document.querySelector("form.answer[data-schema] .form-error")?.textContent?.includes("server"));
  assert.ok(tampered !== null, "the route changed a response");
  const text = (await problem.textContent()) ?? "";
  assert.match(text, /^The server did not take this answer: .*\/replicas/, "the server's message names the pointer");
  await page.screenshot({ path: path.join(SHOTS, "schema-form-server-refused.png"), fullPage: true });
  assert.equal(await form.locator('button[type="submit"]').isEnabled(), true, "the form is answerable again");
  assert.equal(await form.getAttribute("data-form-for"), callId);
  await form.locator('button[type="submit"]').click();
  await page.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
  assert.deepEqual(problems, []);
});
