// The package README's links into the repository README land on headings that exist there.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const read = (relative) => readFileSync(new URL(relative, import.meta.url), "utf8");

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

test("every link from the package README into the repository README names an existing heading", () => {
  const anchors = new Set(
    read("../../../README.md")
      .split("\n")
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slug(line.replace(/^#+ /, ""))),
  );
  const links = [...read("../README.md").matchAll(/https:\/\/github\.com\/chatwire\/chatwire#([\w-]+)/g)].map((m) => m[1]);
  assert.ok(links.length > 0, "the package README links the repository README's guide");
  for (const anchor of links) assert.ok(anchors.has(anchor), `#${anchor} is no heading of README.md: ${[...anchors].join(", ")}`);
  // The anchor rule itself, on the heading the guide lives under.
  assert.equal(slug("Using Chatwire from a frontend: `@chatwire/protocol`"), "using-chatwire-from-a-frontend-chatwireprotocol");
});
