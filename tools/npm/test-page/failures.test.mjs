// What goes wrong, shown: the demo's second turn fails a tool, dismisses two calls, lets a poll
// expire (20 s) and ends the run failed with an error. The page shows that error (the field
// report: only a red badge), and every character it shows has a glyph in Debian's default fonts
// (the report: the expired chip's emoji hourglass was a missing-glyph box).
import assert from "node:assert/strict";
import { test } from "node:test";
import { STEP_MS, WIDTHS, finishWelcomeTurn, load, openPage, send, startWelcomeTurn } from "./chat-page.mjs";

/** The demo's second turn, failed at its end (demo-script.json). */
const RUN_ERROR = "the status check failed (simulated)";
const POLL_EXPIRES_MS = 20_000;

/**
 * The characters on the page (text, and `content` of ::before and ::after) that the browser draws
 * as a missing-glyph box. A character is drawn with its element's font on a canvas and compared
 * with characters no font has: Chromium draws those all with the same box.
 */
function missingGlyphs() {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 48;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  const draw = (char, font) => {
    context.clearRect(0, 0, 48, 48);
    context.font = font;
    context.textBaseline = "top";
    context.fillText(char, 4, 4);
    return context.getImageData(0, 0, 48, 48).data.join(",");
  };
  // Two unassigned code points: no font has a glyph for them.
  const NONE = ["\u0378", "\u{10FFFD}"];
  const missing = new Set();
  const check = (textContent, element) => {
    const style = getComputedStyle(element);
    const font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    for (const char of textContent) {
      if (char.codePointAt(0) < 0x80 || /\s/.test(char)) continue;
      const drawn = draw(char, font);
      if (NONE.some((none) => draw(none, font) === drawn)) missing.add(`${char} (U+${char.codePointAt(0).toString(16).toUpperCase()})`);
    }
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    if (node.parentElement !== null && node.parentElement.checkVisibility()) check(node.data, node.parentElement);
  }
  for (const element of document.body.querySelectorAll("*")) {
    if (!element.checkVisibility()) continue;
    for (const pseudo of ["::before", "::after"]) {
      const content = getComputedStyle(element, pseudo).content;
      if (content.startsWith('"')) check(JSON.parse(content), element);
    }
  }
  return [...missing];
}

for (const width of WIDTHS) {
  test(`${width} px: the demo's failing turn`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    await finishWelcomeTurn(page, await startWelcomeTurn(page));
    await send(page, "Show me failures");
    const poll = page.locator('form.answer:has(button:text-is("Yes"))');
    await poll.waitFor({ state: "attached" });
    const pollId = await poll.getAttribute("data-form-for");
    await page.locator(`[data-chip-for="${pollId}"][data-status="expired"]`).waitFor({ state: "attached", timeout: POLL_EXPIRES_MS + STEP_MS });
    await page.waitForSelector('body[data-run-status="failed"]');
    await shot("failed-run");

    await t.test("a failed run shows its error", async () => {
      const error = page.locator("#run-error");
      await error.waitFor({ state: "visible" });
      assert.match(await error.textContent(), new RegExp(RUN_ERROR.replace(/[()]/g, "\\$&")));
    });

    await t.test("every character on the page has a glyph in Debian's default fonts, the status chips' marks too", async () => {
      for (const status of ["completed", "failed", "dismissed", "expired"]) {
        assert.ok((await page.locator(`.chip[data-status="${status}"]`).count()) > 0, `no ${status} chip to look at`);
      }
      assert.deepEqual(await page.evaluate(missingGlyphs), []);
      await shot("chips");
    });
    assert.deepEqual(problems, []);
  });
}
