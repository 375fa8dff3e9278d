// The fixture corpus (fixtures/messages) as cases, for the package's tests and its cross-validator
// verdicts: every valid frame, and every invalid one with the field its fixture says is at fault.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENT_FRAME_TYPES, SERVER_FRAME_TYPES } from "../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const corpusDir = path.join(root, "fixtures/messages");

const directionOfType = (wire) =>
  SERVER_FRAME_TYPES.includes(wire) ? "server-to-client" : CLIENT_FRAME_TYPES.includes(wire) ? "client-to-server" : null;

async function listJson(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listJson(full)));
    else if (entry.name.endsWith(".json")) out.push(full);
  }
  return out.sort();
}

/**
 * Every fixture as {id, direction, frame, expected, text, expectPath?, expect?}; `text` is the
 * frame's JSON as written (JSON.parse of it loses integers beyond 2^53).
 */
export async function corpus() {
  const out = [];
  for (const file of await listJson(path.join(corpusDir, "valid"))) {
    const text = await readFile(file, "utf8");
    const wire = path.basename(path.dirname(file));
    out.push({ id: path.relative(corpusDir, file), direction: directionOfType(wire), frame: JSON.parse(text), expected: "valid" });
  }
  for (const file of await listJson(path.join(corpusDir, "invalid"))) {
    const wrapper = JSON.parse(await readFile(file, "utf8"));
    const folder = path.basename(path.dirname(file));
    out.push({
      id: path.relative(corpusDir, file),
      direction: folder === "envelope" ? wrapper.direction : directionOfType(folder),
      frame: wrapper.frame,
      expected: "invalid",
      expect: wrapper.expect,
      expectPath: wrapper.expect_path,
    });
  }
  return out;
}

/**
 * True when the parsed frame holds an integer JavaScript cannot represent exactly (beyond
 * ±(2^53 − 1)): JSON.parse already rounded it, so no JavaScript validator can judge its bounds.
 */
export function beyondSafeIntegers(value) {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(beyondSafeIntegers);
  if (value !== null && typeof value === "object") return Object.values(value).some(beyondSafeIntegers);
  return false;
}
