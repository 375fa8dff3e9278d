// Validates every frame of fixtures/messages with ajv (draft 2020-12, strict mode): valid/ must
// pass, invalid/ must fail. Each frame is judged twice: against its message's schema, chosen by
// `type` within the direction (as chatwire_schema::FrameValidator does), and against the
// direction's union (client-frame.json / server-frame.json). Writes the verdicts as JSON with
// --out FILE (for tools/crosscheck/compare.py) and exits 1 when a verdict is not the expected one.
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const schemaDir = path.join(root, "schema/json");
const corpus = path.join(root, "fixtures/messages");
const outIndex = process.argv.indexOf("--out");
const outFile = outIndex > 0 ? process.argv[outIndex + 1] : null;
const ajvVersion = createRequire(import.meta.url)("ajv/package.json").version;

const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  // schemars writes Option<T> as `"type": [T, "null"]`; strict mode allows union types only when
  // told so. Everything else strict mode checks stays on.
  allowUnionTypes: true,
});

// Formats schemars emits for Rust integers. Strict mode rejects unknown formats, so each is
// registered with the range of its Rust type (serde enforces the same range when deserializing).
const INTEGER_FORMATS = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  uint8: [0, 2 ** 8 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  uint16: [0, 2 ** 16 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  // JavaScript numbers are exact only up to 2^53; beyond that the bound is approximate.
  int64: [-(2 ** 63), 2 ** 63 - 1],
  uint64: [0, 2 ** 64 - 1],
  uint: [0, 2 ** 64 - 1],
  int: [-(2 ** 63), 2 ** 63 - 1],
};
for (const [name, [min, max]] of Object.entries(INTEGER_FORMATS)) {
  ajv.addFormat(name, { type: "number", validate: (x) => Number.isInteger(x) && x >= min && x <= max });
}
// f32/f64: any finite JSON number.
ajv.addFormat("float", { type: "number", validate: (x) => Number.isFinite(x) });
ajv.addFormat("double", { type: "number", validate: (x) => Number.isFinite(x) });

const files = (await readdir(schemaDir)).filter((f) => f.endsWith(".json"));
for (const file of files) {
  ajv.addSchema(JSON.parse(await readFile(path.join(schemaDir, file), "utf8")), file);
}
// Compile every schema up front: strict mode errors surface here, not on the first frame.
for (const file of files) ajv.getSchema(file);

const DIRECTIONS = { "client-to-server": "client-frame.json", "server-to-client": "server-frame.json" };
const tagsOf = (unionFile) =>
  new Set(ajv.getSchema(unionFile).schema.oneOf.map((branch) => branch.properties.type.const));
const TAGS = Object.fromEntries(Object.entries(DIRECTIONS).map(([d, f]) => [d, tagsOf(f)]));
const directionOfType = (wire) => Object.keys(TAGS).find((d) => TAGS[d].has(wire)) ?? null;

async function listJson(dir) {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listJson(full)));
    else if (e.name.endsWith(".json")) out.push(full);
  }
  return out.sort();
}

/** The corpus as cases: id, direction, frame, expected verdict. */
async function cases() {
  const out = [];
  for (const file of await listJson(path.join(corpus, "valid"))) {
    const wire = path.basename(path.dirname(file));
    out.push({ id: path.relative(corpus, file), direction: directionOfType(wire), frame: JSON.parse(await readFile(file, "utf8")), expected: "valid" });
  }
  for (const file of await listJson(path.join(corpus, "invalid"))) {
    const wrapper = JSON.parse(await readFile(file, "utf8"));
    const dir = path.basename(path.dirname(file));
    const direction = dir === "envelope" ? wrapper.direction : directionOfType(dir);
    out.push({ id: path.relative(corpus, file), direction, frame: wrapper.frame, expected: "invalid" });
  }
  return out;
}

/**
 * True when the parsed frame holds an integer JavaScript cannot represent exactly (beyond
 * +-(2^53 - 1)): JSON.parse has already rounded it, so no JavaScript validator can judge the
 * frame's bounds (2^64 and 2^64 - 1 parse to the same double). ajv abstains on such frames.
 */
function beyondSafeIntegers(value) {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(beyondSafeIntegers);
  if (value !== null && typeof value === "object") return Object.values(value).some(beyondSafeIntegers);
  return false;
}

function byMessage(direction, frame) {
  if (frame === null || typeof frame !== "object" || Array.isArray(frame)) return "invalid";
  if (typeof frame.type !== "string" || !TAGS[direction]?.has(frame.type)) return "invalid";
  return ajv.getSchema(`${frame.type}.json`)(frame) ? "valid" : "invalid";
}

function byUnion(direction, frame) {
  const validate = ajv.getSchema(DIRECTIONS[direction]);
  return validate && validate(frame) ? "valid" : "invalid";
}

const verdicts = {};
const wrong = [];
const abstained = [];
const all = await cases();
for (const c of all) {
  if (!DIRECTIONS[c.direction]) {
    wrong.push(`${c.id}: cannot tell the direction`);
    continue;
  }
  if (beyondSafeIntegers(c.frame)) {
    verdicts[c.id] = { expected: c.expected, message: "unrepresentable", union: "unrepresentable" };
    abstained.push(c.id);
    continue;
  }
  const v = { expected: c.expected, message: byMessage(c.direction, c.frame), union: byUnion(c.direction, c.frame) };
  verdicts[c.id] = v;
  for (const kind of ["message", "union"]) {
    if (v[kind] !== c.expected) wrong.push(`${c.id}: ${kind} schema says ${v[kind]}, expected ${c.expected}`);
  }
}
if (outFile) {
  await writeFile(outFile, JSON.stringify({ validator: `ajv ${ajvVersion} (draft 2020-12, strict)`, verdicts }, null, 2) + "\n");
}
for (const w of wrong) console.error(`ajv: ${w}`);
for (const id of abstained) console.log(`ajv: ${id}: abstained, holds an integer beyond 2^53 that JavaScript cannot represent`);
const failed = new Set(wrong.map((w) => w.split(":")[0])).size;
console.log(`ajv: ${all.length} fixture frames checked`);
console.log(`${all.length - failed - abstained.length} passed, ${failed} failed, ${abstained.length} skipped`);
if (all.length === 0) {
  console.error("ajv: no fixture frames found under fixtures/messages");
  process.exit(1);
}
process.exit(wrong.length > 0 ? 1 : 0);
