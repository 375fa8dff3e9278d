// The chat page as a designer would sign it off (issue #35), at 1280 and 390 px: a typed form starts
// from the tool's defaults; a refused value is said beside its field, in words; giving up after
// reconnecting is one plain banner with the attempt count before it and a Retry after it, the run
// no longer "running", the composer off; one header row on a phone, with its labels, no button for
// zero artifacts and no keyboard hint, no empty artifacts column on a laptop; form labels alike; a
// stopped answer marked "Stopped", unlike a failure; cards name tools as people do; a loading row
// while older pages arrive; every message says who wrote it and when.
import assert from "node:assert/strict";
import { test } from "node:test";
import WebSocket from "ws";
import { ChatwireClient } from "../dist/index.js";
import { until } from "../test/helpers.mjs";
import { WIDTHS, load, openPage, pageUntil, send, startWelcomeTurn } from "./chat-page.mjs";

/** The visible banners' texts. */
const banners = (page) =>
  page.evaluate(() => [...document.querySelectorAll(".banner")].filter((b) => !b.hidden && b.offsetParent !== null).map((b) => b.innerText.trim()));

/** A page on the demo with its first turn's deploy form. */
async function welcomeForm(t, width) {
  const opened = await openPage(t, width);
  await load(opened.page, opened.pageUrl);
  return { ...opened, form: await startWelcomeTurn(opened.page) };
}

for (const width of WIDTHS) {
  const narrow = width < 600;

  test(`${width} px: the typed form starts from the tool's defaults, so a first Submit goes through`, async (t) => {
    const { page, problems, form } = await welcomeForm(t, width);
    assert.equal(await form.locator('input[name="branch"]').inputValue(), "main", "Branch starts as the payload's default");
    assert.equal(await form.locator('input[name="replicas"]').inputValue(), "2", "Replicas starts as the payload's default");
    const callId = await form.getAttribute("data-form-for");
    await form.locator('button[type="submit"]').click();
    await page.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
    assert.deepEqual(problems, []);
  });

  test(`${width} px: a refused value is said beside its field, in words`, async (t) => {
    const { problems, form, shot } = await welcomeForm(t, width);
    await form.locator('input[name="branch"]').fill("main");
    await form.locator('input[name="replicas"]').fill("11");
    await form.locator('button[type="submit"]').click();
    const error = form.locator('label[data-field="replicas"] .field-error');
    await error.waitFor({ state: "visible" });
    assert.match(await error.innerText(), /^Must be at most 10$/);
    assert.doesNotMatch(await form.innerText(), /greater than|less than|Replicas:/, "the checker's wording leaked");
    await shot("design-form-error");
    assert.deepEqual(problems, []);
  });

  test(`${width} px: every form label sits above its control`, async (t) => {
    const { problems, form } = await welcomeForm(t, width);
    const placement = await form.evaluate((node) =>
      [...node.querySelectorAll("label")].map((label) => {
        const caption = label.querySelector(".caption")?.getBoundingClientRect();
        const control = label.querySelector("input:not([type=checkbox]), select, textarea")?.getBoundingClientRect();
        if (control === undefined) return "checkbox";
        return caption !== undefined && caption.bottom <= control.top + 1 ? "above" : "beside";
      }),
    );
    assert.ok(placement.length >= 3 && placement.every((p) => p === "above" || p === "checkbox"), `labels: ${placement}`);
    assert.deepEqual(problems, []);
  });

  test(`${width} px: giving up after reconnecting is one plain banner with a Retry, the run no longer running, the composer off`, async (t) => {
    const { relay, page, problems, pageUrl, shot } = await openPage(t, width, { relay: true });
    await load(page, `${pageUrl}?retries=3`);
    const session = await page.getAttribute("body", "data-session");
    await send(page, "Deploy the staging branch");
    await page.waitForSelector('body[data-run-status="running"]');
    relay.down();
    await pageUntil(page, "the attempt count while reconnecting", () => {
      const text = document.getElementById("offline")?.innerText ?? "";
      return { ok: /attempt \d+ of 3/.test(text), text };
    });
    await page.waitForSelector('body[data-connection="closed"]');
    const shown = await banners(page);
    assert.equal(shown.length, 1, `one banner, not ${JSON.stringify(shown)}`);
    assert.doesNotMatch(shown[0], /unreachable|1006|ws:\/\/|gave up after/, "the raw cause is shown");
    assert.match(shown[0], /can't reach the server/i);
    assert.ok(await page.isVisible("#retry"), "a Retry button");
    assert.notEqual((await page.textContent("#run")).trim(), "running", "the run badge is stuck at running");
    assert.ok(await page.isDisabled("#message"), "the composer still takes text while nothing can be sent");
    await shot("design-gave-up");
    relay.up();
    await page.click("#retry");
    await page.waitForSelector('body[data-connection="open"]');
    assert.equal(await page.getAttribute("body", "data-session"), session, "Retry resumed the same conversation");
    assert.deepEqual(problems, []);
  });

  test(`${width} px: ${narrow ? "one header row with its status labels, also while a run goes" : "no empty artifacts column"}`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    const labels = await page.evaluate(() => [...document.querySelectorAll("header .label")].map((l) => l.offsetParent !== null && l.getBoundingClientRect().width > 0));
    assert.deepEqual(labels, [true, true], "the status labels are visible");
    if (!narrow) {
      assert.equal(await page.isVisible('aside[aria-label="Artifacts"]'), false, "an empty artifacts panel");
      const transcript = await page.locator("#transcript").boundingBox();
      assert.ok(transcript.width >= width * 0.95, `the transcript is ${transcript.width} of ${width} px`);
    }
    assert.ok((await page.locator("header").boundingBox()).height <= 56, "the header is more than one row");
    await send(page, "Deploy the staging branch");
    await page.locator("#artifact-list .tool-call").first().waitFor({ state: "attached" });
    await page.waitForSelector("#stop:not([hidden])");
    assert.ok((await page.locator("header").boundingBox()).height <= 56, "the header grew a row while running");
    if (!narrow) await page.locator('aside[aria-label="Artifacts"]').waitFor({ state: "visible" });
    await shot("design-header");
    assert.deepEqual(problems, []);
  });

  test(`${width} px: no Artifacts button for zero artifacts`, async (t) => {
    const { page, problems, pageUrl } = await openPage(t, width);
    await load(page, pageUrl);
    assert.equal(await page.isVisible("#artifacts-toggle"), false, "a button for zero artifacts");
    await send(page, "Deploy the staging branch");
    await page.locator("#artifact-list .tool-call").first().waitFor({ state: "attached" });
    if (narrow) assert.match(await page.innerText("#artifacts-toggle"), /Artifacts\s*1/);
    assert.deepEqual(problems, []);
  });

  test(`${width} px: the composer ${narrow ? "gives no keyboard hint on a phone" : "says how to send on a keyboard"}`, async (t) => {
    const { page, problems, pageUrl } = await openPage(t, width);
    await load(page, pageUrl);
    const placeholder = await page.getAttribute("#message", "placeholder");
    if (narrow) assert.doesNotMatch(placeholder, /Shift/, "a keyboard hint on a phone");
    else assert.match(placeholder, /Shift\+Enter/);
    assert.deepEqual(problems, []);
  });

  test(`${width} px: a stopped answer is marked Stopped and its run is not painted as a failure`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    // The demo's first reply streams: stop it mid-stream.
    await send(page, "Deploy the staging branch");
    await page.locator(".msg.assistant[data-streaming]").waitFor();
    await page.click("#stop");
    await page.waitForSelector('body[data-run-status="cancelled"]');
    const mark = page.locator(".stopped-mark");
    await mark.waitFor({ state: "visible" });
    assert.equal((await mark.innerText()).trim(), "Stopped");
    assert.equal((await page.textContent("#run")).trim(), "stopped");
    const colour = await page.evaluate(() => getComputedStyle(document.getElementById("run")).backgroundColor);
    assert.notEqual(colour, "rgb(197, 48, 48)", "stopped is painted as a failure");
    await shot("design-stopped");
    assert.deepEqual(problems, []);
  });

  test(`${width} px: cards name tools as people do, never by raw ids`, async (t) => {
    const { page, problems, shot } = await welcomeForm(t, width);
    await page.locator(".chip").first().waitFor();
    const names = await page.locator(".tool-call .header .name, .chip").allInnerTexts();
    assert.ok(names.length >= 3, `cards: ${names}`);
    for (const name of names) assert.doesNotMatch(name, /_|[a-z][A-Z]/, `a raw id in "${name}"`);
    await shot("design-cards");
    assert.deepEqual(problems, []);
  });

  test(`${width} px: every message says who wrote it and when`, async (t) => {
    const { page, problems } = await welcomeForm(t, width);
    const bylines = await page.evaluate(() =>
      [...document.querySelectorAll("#transcript .msg")].map((m) => getComputedStyle(m, "::before").content.replace(/"/g, "")),
    );
    assert.ok(bylines.length >= 2, `messages: ${bylines}`);
    for (const line of bylines) assert.match(line, /^(You|Assistant)\s+\d{1,2}:\d{2}/, `byline "${line}"`);
    assert.deepEqual(problems, []);
  });

  test(`${width} px: a loading row shows while older pages arrive`, async (t) => {
    const { reference, page, problems, pageUrl } = await openPage(t, width, { args: ["--ui", "--conformance"] });
    const say = (markdown) => ({ op: "say", markdown });
    const script = { turns: [{ steps: Array.from({ length: 400 }, (_, i) => say(`Message ${i + 1}`)) }] };
    const client = new ChatwireClient({ url: reference.url, socket: (u, p) => new WebSocket(u, p), script, requestTimeoutMs: 30_000 });
    await client.connect();
    await client.sendMessage("Tell me everything");
    await until("the 401 items", () => client.state?.run.status === "completed" && client.state.items.length === 401, 30_000);
    const { session_id, resume_token, last_seq } = client.session;
    client.close();
    await page.addInitScript((stored) => {
      localStorage.setItem(`chatwire.session:${stored.session_id}`, JSON.stringify({ ...stored, used: Date.now() }));
      // Records every state the older line passes through, however briefly.
      new MutationObserver(() => {
        const line = document.getElementById("older");
        if (line !== null) (window.olderStates ??= new Set()).add(`${line.dataset.state}|${line.getAttribute("aria-busy")}|${line.textContent}`);
      }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    }, { session_id, resume_token, last_seq });
    await page.goto(`${pageUrl}#session=${encodeURIComponent(session_id)}`);
    await page.waitForSelector('body[data-connection="open"]');
    await page.waitForSelector("#older");
    for (let i = 0; i < 40 && (await page.evaluate(() => document.body.dataset.older)) === "true"; i++) {
      await page.evaluate(() => (document.getElementById("transcript").scrollTop = 0));
      await page.waitForTimeout(100);
    }
    const states = await page.evaluate(() => [...(window.olderStates ?? [])]);
    assert.ok(states.some((s) => s.startsWith("loading|true|Loading")), `no loading row while a page arrived: ${JSON.stringify(states)}`);
    assert.ok(states.some((s) => s.startsWith("idle|false|")), `the line between pages: ${JSON.stringify(states)}`);
    assert.deepEqual(problems, []);
  });
}
