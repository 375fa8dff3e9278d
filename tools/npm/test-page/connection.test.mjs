// The page when the connection drops. While it is down the page says so, distinctly from
// "open", and nothing can be answered (the field report: "reconnecting" looked like "open" and the
// forms stayed clickable). A server that lost the session (a fresh store) refuses the resume; the
// page starts a new session and says so plainly, in a notice the user can dismiss (the report: the
// raw "resume_rejected: …" in a banner that stayed, while the transcript silently emptied).
import assert from "node:assert/strict";
import { test } from "node:test";
import { startReference } from "../test/helpers.mjs";
import { WIDTHS, fillDeployForm, load, openPage, pageUntil, startWelcomeTurn } from "./chat-page.mjs";

/**
 * The controls a user answers or writes with (those of every form: the calls' and the composer),
 * which of them are enabled, however they are disabled (their own attribute or a fieldset's), and
 * whether that is `usable`: all of them (at least a form and the composer), or none.
 */
function answering(usable) {
  // The Stop button too: a cancel cannot be sent while reconnecting either.
  const controls = [...document.querySelectorAll("form :is(button, input, textarea, select), #stop:not([hidden])")];
  const enabled = controls.filter((control) => !control.matches(":disabled")).map((control) => control.outerHTML.slice(0, 80));
  const ok = usable ? controls.length >= 4 && enabled.length === controls.length : enabled.length === 0;
  return { ok, count: controls.length, enabled };
}

const badgeColour = (page) => page.evaluate(() => getComputedStyle(document.getElementById("connection")).backgroundColor);

/** Stops `old`; returns how to start a new reference on its address, with a fresh store. */
async function restart(t, old) {
  const addr = new URL(old.url).host;
  await old.stop();
  return async () => {
    const server = await startReference(["--ui", "--demo"], { addr, db: ":memory:" });
    t.after(() => server.stop());
    return server;
  };
}

for (const width of WIDTHS) {
  test(`${width} px: while reconnecting the page says so, distinctly, and nothing can be answered until it is open again`, async (t) => {
    // The browser reaches the server through a relay that plays a network failure: the server and
    // the session's pending form live on.
    const { relay, page, problems, pageUrl, shot } = await openPage(t, width, { relay: true });
    await load(page, pageUrl);
    const session = await page.getAttribute("body", "data-session");
    const form = await startWelcomeTurn(page);
    const open = await page.evaluate(answering, true);
    assert.ok(open.ok, `every control is usable while open: ${JSON.stringify(open)}`);
    const openColour = await badgeColour(page);

    relay.down();
    await page.waitForSelector('body[data-connection="reconnecting"]');
    assert.equal((await page.textContent("#connection")).trim(), "reconnecting");
    assert.notEqual(await badgeColour(page), openColour, "reconnecting looks like open");
    const down = await page.evaluate(answering, false);
    assert.deepEqual(down.enabled, [], "controls that answer or send are usable while disconnected");
    await shot("reconnecting");

    relay.up();
    await page.waitForSelector('body[data-connection="open"]');
    assert.equal(await page.getAttribute("body", "data-session"), session, "the same session was resumed");
    await pageUntil(page, "every control usable again", answering, true);
    await shot("reconnected");
    // And answering works again.
    const callId = await form.getAttribute("data-form-for");
    await fillDeployForm(form);
    await form.locator('button[type="submit"]').click();
    await page.locator(`[data-chip-for="${callId}"][data-status="completed"]`).waitFor();
    assert.deepEqual(problems, []);
  });

  test(`${width} px: a resume the restarted server refuses starts a new session, with a plain notice the user can dismiss`, async (t) => {
    const { reference, page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    const before = await page.getAttribute("body", "data-session");
    await startWelcomeTurn(page);

    // A fresh store: the session the page resumes is unknown to the new server.
    const startAgain = await restart(t, reference);
    await page.waitForSelector('body[data-connection="reconnecting"]');
    await startAgain();
    await page.waitForSelector('body[data-connection="open"]');
    await pageUntil(page, "a new session", (old) => {
      const now = document.body.dataset.session;
      return { ok: now !== undefined && now !== old, now };
    }, before);

    const notice = page.locator("#notice");
    await notice.waitFor({ state: "visible" });
    const said = await notice.textContent();
    assert.match(said, /new conversation/i);
    const raw = /resume_rejected|resume refused|resume token/;
    assert.doesNotMatch(said, raw);
    assert.doesNotMatch(await page.innerText("body"), raw, "the raw error is still shown somewhere");
    await shot("resume-refused");
    await page.click("#notice button.dismiss");
    await notice.waitFor({ state: "hidden" });

    // The new session works: the demo starts over.
    await startWelcomeTurn(page);
    await shot("resume-refused-new-session");
    assert.deepEqual(problems, []);
  });
}
