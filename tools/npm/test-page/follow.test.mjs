// The transcript follows new content: after a second turn the user's own message and the reply
// are on screen (the field report: scrollTop stayed 0). Once the user scrolls up, new content no
// longer moves the transcript; a "new messages" button appears instead, and takes them down.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WIDTHS, finishWelcomeTurn, load, openPage, pageUntil, send, startWelcomeTurn } from "./chat-page.mjs";

/**
 * Where the transcript is scrolled, and whether the newest user message with `text` is in view;
 * `ok` when it is at its bottom, overflowing if `overflow`, with that message in view if `text`.
 */
function transcriptView({ text, overflow }) {
  const transcript = document.getElementById("transcript");
  const gap = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight;
  const box = transcript.getBoundingClientRect();
  const mine = [...transcript.querySelectorAll(".msg.user")].filter((node) => node.textContent === text).at(-1);
  const own = mine?.getBoundingClientRect();
  const ownInView = own !== undefined && own.top >= box.top - 1 && own.bottom <= box.bottom + 1;
  const overflows = transcript.scrollHeight > transcript.clientHeight + 1;
  const ok = gap <= 2 && (!overflow || overflows) && (text === undefined || ownInView);
  return { ok, gap, ownInView, overflows, scrollTop: transcript.scrollTop };
}

for (const width of WIDTHS) {
  test(`${width} px: the transcript follows new content, and offers "new messages" once the user scrolled up`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    await finishWelcomeTurn(page, await startWelcomeTurn(page));

    // A second turn: the user's own message, then the reply, stay in view at the bottom.
    await send(page, "What can go wrong?");
    await pageUntil(page, "the second message in view at the bottom", transcriptView, { text: "What can go wrong?" });
    await page.locator('form.answer:has(button:text-is("Yes"))').waitFor({ state: "attached" });
    await pageUntil(page, "the overflowing transcript at its bottom with the reply", transcriptView, { overflow: true });
    await shot("follow-second-turn");
    await page.click('form.answer button:text-is("Yes")');
    await page.waitForSelector('body[data-run-status="failed"]');

    // A third turn: the user scrolls up while the reply streams in; the transcript stays put.
    await send(page, "Once more");
    await page.locator(".msg.assistant[data-streaming]").waitFor();
    await page.hover("#transcript");
    await page.mouse.wheel(0, -100_000);
    const scrolled = await pageUntil(page, "the transcript scrolled to its top", () => {
      const top = document.getElementById("transcript").scrollTop;
      return { ok: top === 0, top };
    });
    assert.equal(scrolled.top, 0);
    await page.locator('form.answer:has(input[name="branch"])').waitFor({ state: "attached" });
    await page.locator("#new-messages").waitFor({ state: "visible" });
    assert.equal(await page.evaluate(() => document.getElementById("transcript").scrollTop), 0, "new content moved a transcript the user had scrolled up");
    await shot("follow-new-messages");

    // The button takes the user to the newest content, and goes away.
    await page.click("#new-messages");
    await pageUntil(page, "the transcript at its bottom after the new-messages button", transcriptView, { overflow: true });
    await page.locator("#new-messages").waitFor({ state: "hidden" });
    await shot("follow-after-new-messages");
    assert.deepEqual(problems, []);
  });
}
