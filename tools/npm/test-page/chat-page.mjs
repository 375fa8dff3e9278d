// Shared steps of the chat page tests: a reference backend serving the page (`serve --ui --demo`),
// Debian's chromium at a given width, screenshots named by width, and the demo's first turn
// driven to its end. Every wait has a deadline (STEP_MS unless said otherwise).
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { startReference } from "../test/helpers.mjs";

export const CHROMIUM = process.env.CHATWIRE_CHROMIUM ?? "/usr/bin/chromium";
export const SHOTS = process.env.CHATWIRE_SCREENSHOTS ?? path.join(tmpdir(), "chatwire-chat-page");
export const STEP_MS = 15_000;
/** The widths every behaviour is checked at: a laptop and a phone. */
export const WIDTHS = [1280, 390];
/** The page's static files, for CHATWIRE_UI_DIR below. */
const ASSETS = new Map([
  ["/", "index.html"],
  ["/style.css", "style.css"],
  ["/app.js", "app.js"],
]);

/**
 * A loopback TCP relay to `target` (host:port) that can play a network failure: `down()` drops
 * every connection and refuses new ones until `up()`. The reference keeps running meanwhile.
 */
export async function startRelay(target) {
  const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.slice(target.lastIndexOf(":") + 1))];
  const open = new Set();
  let isDown = false;
  const server = net.createServer((client) => {
    if (isDown) return client.destroy();
    const upstream = net.connect(port, host);
    const pair = [client, upstream];
    open.add(pair);
    const close = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    down() {
      isDown = true;
      for (const pair of open) for (const socket of pair) socket.destroy();
      open.clear();
    },
    up() {
      isDown = false;
    },
    stop() {
      this.down();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A browser page on the reference chat page, `width` px wide. The server is stopped and the browser
 * closed when the test ends. `args` are the reference's (default `--ui --demo`), `server` options go
 * to startReference (`addr`, `db`); with `relay`
 * the browser reaches the server through startRelay's relay, returned as `relay`.
 *
 * CHATWIRE_UI_DIR (a development aid, never set in CI) serves the page's files from that directory
 * instead of the copies embedded in the reference binary, with the binary's own headers (CSP), so
 * the page can be iterated on without rebuilding the reference.
 */
export async function openPage(t, width, { relay: withRelay = false, args: serverArgs = ["--ui", "--demo"], ...server } = {}) {
  await mkdir(SHOTS, { recursive: true });
  const reference = await startReference(serverArgs, server);
  t.after(() => reference.stop());
  const relay = withRelay ? await startRelay(new URL(reference.url).host) : null;
  if (relay !== null) t.after(() => relay.stop());
  const uiDir = process.env.CHATWIRE_UI_DIR;
  // A document fulfilled by the test rather than the network counts as public to Chromium, which
  // then blocks its WebSocket to loopback (Local Network Access): lift that check for this aid only.
  const args = uiDir ? ["--no-sandbox", "--disable-features=LocalNetworkAccessChecks"] : ["--no-sandbox"];
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args, timeout: 30_000 });
  t.after(() => browser.close());
  // One context: its pages share localStorage, as a browser's tabs do (a second tab on a session).
  const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 800 } });
  const tab = async (name) => {
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_MS);
    if (uiDir) {
      await page.route("**/*", async (route) => {
        const file = ASSETS.get(new URL(route.request().url()).pathname);
        if (file === undefined) return route.continue();
        const response = await route.fetch();
        const { "content-length": _, ...headers } = response.headers();
        await route.fulfill({ status: response.status(), headers, body: await readFile(path.join(uiDir, file), "utf8") });
      });
    }
    const problems = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      // A refused WebSocket while the server is down is the browser's own log line, not the page's.
      if (message.type() === "error" && !/WebSocket connection to .* failed/.test(message.text())) problems.push(`console error: ${message.text()}`);
    });
    const prefix = name === undefined ? "" : `${name}-`;
    return {
      page,
      problems,
      /** Saves a screenshot as `<name>-<width>.png` (`<tab>-<name>-<width>.png` for a named tab) in SHOTS. */
      shot: (shotName) => page.screenshot({ path: path.join(SHOTS, `${prefix}${shotName}-${width}.png`), fullPage: true }),
    };
  };
  const { page, problems, shot } = await tab();
  const pageUrl = `http://${relay?.address ?? new URL(reference.url).host}/`;
  return {
    reference,
    relay,
    page,
    problems,
    pageUrl,
    shot,
    /** Another tab of the same browser (its storage shared): `name` prefixes its screenshots. */
    tab,
  };
}

/** Opens the page and waits until it holds a session. */
export async function load(page, pageUrl) {
  await page.goto(pageUrl);
  await page.waitForSelector('body[data-connection="open"]');
}

/** Sends a message from the composer. */
export async function send(page, text) {
  await page.fill("#message", text);
  await page.press("#message", "Enter");
}

/** The demo's first turn up to its deploy form; returns the form's locator. */
export async function startWelcomeTurn(page) {
  await send(page, "Deploy the staging branch");
  const form = page.locator('form.answer:has(input[name="branch"])');
  await form.waitFor();
  return form;
}

/** Answers the view of the demo's first turn (a pending `display: "view"` call). */
export async function approveView(page) {
  await page.click('#view button:text-is("Approve")');
}

/**
 * The demo's first turn from the deploy form to its end: the form, the input request that replaces
 * the composer, then the full view, approved.
 */
/** Fills the demo's deploy form with a value its response_schema (1.2) accepts. */
export async function fillDeployForm(form) {
  await form.locator('input[name="branch"]').fill("release-1.0");
  await form.locator('input[name="replicas"]').fill("3");
}

export async function finishWelcomeTurn(page, form) {
  await fillDeployForm(form);
  await form.locator('button[type="submit"]').click();
  await page.locator("#input-request form.answer").waitFor();
  await page.fill("#input-request textarea", "routine Tuesday release");
  await page.click('#input-request button[type="submit"]');
  await page.locator("#view form.answer").waitFor();
  await approveView(page);
  await page.waitForSelector('body[data-run-status="completed"]');
}

/** Polls `probe` in the page until it returns a truthy value; fails with `what` and the last value. */
export async function pageUntil(page, what, probe, arg, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await page.evaluate(probe, arg);
    if (last?.ok) return last;
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The `ts` of every frame a scripted server sends. */
export const SCRIPTED_TS = "2026-11-23T10:00:00Z";

/**
 * A scripted 1.3 server behind the page's WebSocket (playwright's routeWebSocket), with `features` in
 * force: it welcomes the hello with an empty session,
 * and `play(frames)` sends frames, numbering their `seq` and sending the state after each event as
 * a `ui_state_updated` (no `ui_state_patch` in force), except after a delta, whose state the client
 * builds itself (STREAM-007). `state` is the state the frames lead to, kept by the test.
 */
export function scriptedServer(sessionId, features) {
  let socket = null;
  let seq = 0;
  const state = { items: [], run: { status: "idle" } };
  const messages = [];
  const waiting = [];
  const send = (frame) => socket.send(JSON.stringify({ ...frame, seq: ++seq }));
  return {
    state,
    route(ws) {
      socket = ws;
      ws.onMessage((text) => {
        const frame = JSON.parse(text);
        if (frame.type === "session.hello") {
          send({
            type: "session.welcome", in_reply_to: frame.id, version: "1.3", session_id: sessionId, resume_token: `rt-${sessionId}`,
            resumed: false, capabilities: ["rewind", "tool_output", ...features], features, limits: { max_frame_bytes: 1048576 },
          });
          send({ type: "ui_state_snapshot", v: "ui_state_v1", state });
          return;
        }
        messages.push(frame);
        for (const w of waiting.splice(0)) w();
      });
    },
    /** The next client frame of `type` (a user message, …), once it arrived. */
    async next(type) {
      for (;;) {
        const found = messages.findIndex((m) => m.type === type);
        if (found >= 0) return messages.splice(found, 1)[0];
        await new Promise((resolve) => waiting.push(resolve));
      }
    },
    /** Sends each frame, and after each event but a delta the state it leads to (`change` makes it). */
    play(...steps) {
      for (const [frame, change] of steps) {
        send({ ...frame, ts: SCRIPTED_TS });
        if (change !== undefined) {
          change(state);
          send({ type: "ui_state_updated", v: "ui_state_v1", state });
        }
      }
    },
  };
}

/** One turn's opening frames on a scripted server: the accepted `request` (a chat.user_message) and its run, invocation `inv-<n>`. */
export function opening(server, request, n) {
  const inv = `inv-${n}`;
  server.play(
    [{ type: "chat.user_message_accepted", in_reply_to: request.id, invocation_id: inv, item_id: `u-${n}`, text: request.text },
      (s) => s.items.push({ kind: "user_message", id: `u-${n}`, invocation_id: inv, client_message_id: request.id, text: request.text, ts: SCRIPTED_TS })],
    [{ type: "chat.run_started", invocation_id: inv }, (s) => (s.run = { status: "running", invocation_id: inv })],
  );
}
