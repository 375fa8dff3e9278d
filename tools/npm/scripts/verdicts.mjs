// Verdicts of the package's precompiled validators on every fixture, in the format of
// tools/crosscheck/crosscheck.py (`compare` checks them against the Rust and Python validators).
// Usage: node scripts/verdicts.mjs --out FILE
import { readFile, writeFile } from "node:fs/promises";
import { validateClientFrame, validateServerFrame } from "../dist/index.js";
import { beyondSafeIntegers, corpus } from "./corpus.mjs";

const outIndex = process.argv.indexOf("--out");
if (outIndex < 0 || !process.argv[outIndex + 1]) {
  console.error("usage: node scripts/verdicts.mjs --out FILE");
  process.exit(2);
}
const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const verdicts = {};
for (const c of await corpus()) {
  const validate = { "server-to-client": validateServerFrame, "client-to-server": validateClientFrame }[c.direction];
  if (!validate) {
    console.error(`${c.id}: cannot tell the direction`);
    process.exit(1);
  }
  // A frame JavaScript cannot represent is abstained on, not judged on rounded numbers.
  const message = beyondSafeIntegers(c.frame) ? "unrepresentable" : validate(c.frame).ok ? "valid" : "invalid";
  verdicts[c.id] = { expected: c.expected, message };
}
await writeFile(process.argv[outIndex + 1], `${JSON.stringify({ validator: `${pkg.name} ${pkg.version} (ajv standalone, precompiled)`, verdicts }, null, 2)}\n`);
console.log(`verdicts: ${Object.keys(verdicts).length} fixture frames`);
