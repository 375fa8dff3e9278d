// The page's layout at a laptop's and a phone's width. Below ~600 px the artifacts leave the side
// (the field report: at 390 px the panel squeezed the transcript to ~30 px and cut off "New
// session") for a panel the user opens; the transcript keeps the width. A full view (display
// "view") has a heading and a way back to the transcript, and the transcript a way to it again.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WIDTHS, approveView, fillDeployForm, load, openPage, send, startWelcomeTurn } from "./chat-page.mjs";

const ARTIFACTS = 'aside[aria-label="Artifacts"]';

/** The box of the first element matching `selector`, and whether all of it lies in the viewport. */
async function box(page, selector) {
  return page.evaluate((selector) => {
    const node = document.querySelector(selector);
    if (node === null) return null;
    const { left, right, top, bottom, width } = node.getBoundingClientRect();
    const inViewport = left >= 0 && top >= 0 && right <= innerWidth && bottom <= innerHeight;
    return { left, right, width, inViewport, clipped: node.scrollWidth > node.clientWidth };
  }, selector);
}

for (const width of WIDTHS) {
  const narrow = width < 600;

  test(`${width} px: the transcript keeps the width, the header fits, artifacts are ${narrow ? "a panel the user opens" : "beside the transcript"}`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    // Attached, not visible: on a squeezed transcript the form is there but cannot be seen.
    await send(page, "Deploy the staging branch");
    await page.locator('form.answer:has(input[name="branch"])').waitFor({ state: "attached" });
    await page.locator("#artifact-list .tool-call").first().waitFor({ state: "attached" });

    const transcript = await box(page, "#transcript");
    assert.ok(transcript.width >= (narrow ? width - 2 : width * 0.55), `the transcript is ${transcript.width} px wide of ${width}`);
    const newSession = await box(page, "#new-session");
    assert.ok(newSession.inViewport && !newSession.clipped, `"New session" is cut off: ${JSON.stringify(newSession)}`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, "the page scrolls sideways");
    const report = page.locator('#artifact-list .tool-call:has-text("Build report")');
    if (narrow) {
      assert.equal(await report.isVisible(), false, "the artifacts cover the transcript before the user asked for them");
      const toggle = page.locator("#artifacts-toggle");
      assert.match(await toggle.textContent(), /Artifacts\s*1/);
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");
      await shot("layout-artifacts-closed");
      await toggle.click();
      await report.waitFor({ state: "visible" });
      assert.equal(await toggle.getAttribute("aria-expanded"), "true");
      const panel = await box(page, ARTIFACTS);
      assert.ok(panel.inViewport, `the opened panel is off screen: ${JSON.stringify(panel)}`);
      await shot("layout-artifacts-open");
      await page.click("#artifacts-close");
      await report.waitFor({ state: "hidden" });
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");
      // The transcript's reference to the artifact opens the panel on it too.
      await page.click("#transcript .artifact-ref button.show-artifact");
      await report.waitFor({ state: "visible" });
      await page.click("#artifacts-close");
      await report.waitFor({ state: "hidden" });
    } else {
      await report.waitFor({ state: "visible" });
      assert.equal(await page.isVisible("#artifacts-toggle"), false, "a toggle for a panel that is always shown");
      const panel = await box(page, ARTIFACTS);
      assert.ok(panel.left >= transcript.right - 1, "the artifacts are beside the transcript");
      await shot("layout-artifacts");
    }
    assert.deepEqual(problems, []);
  });

  test(`${width} px: a full view has a heading and a way back to the transcript, and the transcript a way to it`, async (t) => {
    const { page, problems, pageUrl, shot } = await openPage(t, width);
    await load(page, pageUrl);
    const form = await startWelcomeTurn(page);
    // finishWelcomeTurn's steps up to the view, which this test looks at before approving it.
    await fillDeployForm(form);
    await form.locator('button[type="submit"]').click();
    await page.fill("#input-request textarea", "routine Tuesday release");
    await page.click('#input-request button[type="submit"]');
    await page.locator("#view form.answer").waitFor();
    assert.equal(await page.isHidden("#transcript"), true, "a view takes the transcript's place");

    const heading = page.locator("#view-heading");
    await heading.waitFor();
    assert.match(await heading.textContent(), /Review the release notes/);
    await shot("view-open");
    await page.click("#view-back");
    await page.locator("#transcript").waitFor({ state: "visible" });
    assert.equal(await page.isHidden("#view"), true, "back to the transcript hides the view");
    const reopen = page.locator("#transcript button.open-view");
    await reopen.waitFor();
    await shot("view-back-in-transcript");
    await reopen.click();
    await heading.waitFor();
    await approveView(page);
    await page.waitForSelector('body[data-run-status="completed"]');
    await page.locator("#transcript").waitFor({ state: "visible" });
    assert.equal(await page.isHidden("#view"), true, "a settled view leaves the transcript shown");
    assert.deepEqual(problems, []);
  });
}
