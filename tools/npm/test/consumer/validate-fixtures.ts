// Run by the consumer test after compiling: validates every fixture frame with the package's
// precompiled validators, from a project that installed the packed tarball.
// Usage: node validate-fixtures.js FIXTURES_DIR
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, basename, dirname } from "node:path";
import { CLIENT_FRAME_TYPES, validateClientFrame, validateServerFrame, type FrameResult } from "@chatwire/protocol";

const dir = process.argv[2];
if (!dir) throw new Error("usage: node validate-fixtures.js FIXTURES_DIR");

function files(path: string): string[] {
  return statSync(path).isDirectory() ? readdirSync(path).sort().flatMap((name) => files(join(path, name))) : path.endsWith(".json") ? [path] : [];
}

function beyondSafeIntegers(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(beyondSafeIntegers);
  if (value !== null && typeof value === "object") return Object.values(value).some(beyondSafeIntegers);
  return false;
}

const clientTypes: readonly string[] = CLIENT_FRAME_TYPES;
let checked = 0;
const wrong: string[] = [];
for (const expected of ["valid", "invalid"] as const) {
  for (const file of files(join(dir, expected))) {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    const folder = basename(dirname(file));
    let frame: unknown = parsed;
    let client = clientTypes.includes(folder);
    if (expected === "invalid") {
      const wrapper = parsed as { frame: unknown; direction?: string };
      frame = wrapper.frame;
      if (folder === "envelope") client = wrapper.direction === "client-to-server";
    }
    // Integers beyond 2^53 cannot be represented in JavaScript; those frames are not judged.
    if (beyondSafeIntegers(frame)) continue;
    const result: FrameResult<unknown> = client ? validateClientFrame(frame) : validateServerFrame(frame);
    if ((result.ok ? "valid" : "invalid") !== expected) wrong.push(`${file}: expected ${expected}`);
    checked++;
  }
}
for (const w of wrong) console.error(w);
console.log(`consumer: ${checked} fixture frames validated, ${wrong.length} wrong`);
if (checked < 150 || wrong.length > 0) process.exit(1);
