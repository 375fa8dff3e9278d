// The certification pages (`chatwire-conformance matrix --html`, issue #35) in Debian's chromium at
// 1280 and 390 px: the matrix and each run's page load nothing but their own files (no script, no
// external asset), show every run with its badges, link each requirement to the spec's text, and
// fit the width. CHATWIRE_MATRIX names the directory .ci/run writes; screenshots go to SHOTS.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import test from "node:test";
import { chromium } from "playwright-core";
import { CHROMIUM, SHOTS, STEP_MS, WIDTHS } from "./chat-page.mjs";

const MATRIX = process.env.CHATWIRE_MATRIX;
const skip = MATRIX ? false : "CHATWIRE_MATRIX is not set (.ci/run sets it after `chatwire-conformance matrix --html`)";

async function open(t, width, file) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"], timeout: 30_000 });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width, height: width < 600 ? 844 : 800 } });
  page.setDefaultTimeout(STEP_MS);
  const problems = [];
  const requests = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => message.type() === "error" && problems.push(`console error: ${message.text()}`));
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForLoadState("load");
  return { page, problems, requests };
}

async function fitsWidth(page, width) {
  const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scroll <= width + 1, `the page scrolls sideways at ${width} px (${scroll} px wide)`);
}

async function badgesDrawn(page) {
  const sizes = await page.$$eval("img", (images) => images.map((img) => [img.getAttribute("src"), img.complete, img.naturalWidth]));
  assert.ok(sizes.length > 0, "no badge on the page");
  for (const [src, complete, natural] of sizes) assert.ok(complete && natural > 0, `badge ${src} did not load`);
}

for (const width of WIDTHS) {
  test(`certification matrix at ${width} px: every run, badges, requirement links, nothing loaded from outside`, { skip }, async (t) => {
    await mkdir(SHOTS, { recursive: true });
    const { page, problems, requests } = await open(t, width, path.join(MATRIX, "index.html"));
    const runs = await page.locator("table.runs tr").count();
    assert.ok(runs - 1 >= 3, `the matrix shows ${runs - 1} runs, fewer than 3`);
    const columns = await page.locator("th.impl").count();
    assert.equal(columns, runs - 1, "one matrix column per run");
    const link = await page.locator('.matrix a[href*="spec/"]').first().getAttribute("href");
    assert.match(link ?? "", /spec\/[a-z-]+\.md#[a-z0-9-]+$/, "a requirement links to its section of the spec");
    await badgesDrawn(page);
    await fitsWidth(page, width);
    await page.screenshot({ path: path.join(SHOTS, `certify-matrix-${width}.png`), fullPage: false });
    // Each run's page: the verdict, what was tested, its badges, its requirements.
    await page.locator("table.runs a").first().click();
    await page.waitForSelector("#verdict");
    assert.match(await page.locator("#verdict").innerText(), /conformant/);
    assert.ok((await page.locator("#target").innerText()).length > 0, "the run page names the implementation");
    assert.ok((await page.locator("table.requirements tr").count()) > 10, "the run page lists the requirements");
    await badgesDrawn(page);
    await fitsWidth(page, width);
    await page.screenshot({ path: path.join(SHOTS, `certify-run-${width}.png`), fullPage: false });
    assert.deepEqual(requests.filter((url) => !url.startsWith("file:")), [], "the pages load only their own files");
    assert.deepEqual(problems, []);
  });
}
