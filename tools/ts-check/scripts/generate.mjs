// Generates schema/typescript/*.ts from schema/json/*.json with json-schema-to-typescript, plus an
// index.ts that exports every type once. With --check it writes nothing and exits 1 naming every
// file that differs from what the schemas generate now (the drift check CI runs).
import { readdir, readFile, writeFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const schemaDir = path.join(root, "schema/json");
const outDir = path.join(root, "schema/typescript");
const check = process.argv.includes("--check");

const BANNER = [
  "/* eslint-disable */",
  "// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:",
  "// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.",
].join("\n");

// The unions and documents first: a type defined in several files is exported from the first.
const FIRST = ["server-frame.json", "client-frame.json", "ui-state.json", "agent-script.json"];

// Root types named after JavaScript globals would shadow them in a consumer's module; the index
// exports those under a `Frame` suffix as well (the `error` frame becomes `ErrorFrame`).
const GLOBALS = new Set(["Error", "Object", "Function", "Symbol", "Date", "Array", "String", "Number", "Boolean", "Map", "Set", "Promise"]);

function moduleName(file) {
  return file.replace(/\.json$/, "");
}

async function generate() {
  const files = (await readdir(schemaDir)).filter((f) => f.endsWith(".json"));
  files.sort((a, b) => {
    const ia = FIRST.indexOf(a), ib = FIRST.indexOf(b);
    if (ia !== ib) return (ia === -1 ? FIRST.length : ia) - (ib === -1 ? FIRST.length : ib);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  const out = new Map();
  const exported = new Map(); // type name -> module
  const index = [BANNER, ""];
  for (const file of files) {
    const schema = JSON.parse(await readFile(path.join(schemaDir, file), "utf8"));
    // Every schema is self-contained ($ref only into its own $defs): nothing is fetched.
    const ts = await compile(schema, schema.title ?? moduleName(file), {
      bannerComment: BANNER,
      cwd: schemaDir,
      declareExternallyReferenced: true,
      strictIndexSignatures: true,
      unknownAny: true,
      format: true,
      $refOptions: { resolve: { external: false } },
    });
    const name = `${moduleName(file)}.ts`;
    out.set(name, ts);
    const names = [...ts.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]);
    const fresh = names.filter((n) => !exported.has(n));
    fresh.forEach((n) => exported.set(n, name));
    if (fresh.length > 0) {
      const names = fresh.map((n) => (GLOBALS.has(n) ? `${n} as ${n}Frame` : n));
      index.push(`export type { ${names.join(", ")} } from "./${moduleName(file)}";`);
    }
  }
  index.push("");
  out.set("index.ts", index.join("\n"));
  return out;
}

const generated = await generate();
const present = new Set((await readdir(outDir).catch(() => [])).filter((f) => f.endsWith(".ts")));
if (check) {
  const drift = [];
  for (const [name, text] of generated) {
    const committed = await readFile(path.join(outDir, name), "utf8").catch(() => null);
    if (committed === null) drift.push(`${name}: missing`);
    else if (committed !== text) drift.push(`${name}: differs from what schema/json generates`);
  }
  for (const name of present) if (!generated.has(name)) drift.push(`${name}: no schema generates it`);
  if (drift.length > 0) {
    for (const d of drift) console.error(`drift: schema/typescript/${d}`);
    console.error(`${drift.length} file(s) out of date; run \`npm run generate\` in tools/ts-check`);
    process.exit(1);
  }
  console.log(`${generated.size} TypeScript files up to date in schema/typescript`);
} else {
  await mkdir(outDir, { recursive: true });
  for (const name of present) if (!generated.has(name)) await rm(path.join(outDir, name));
  for (const [name, text] of generated) await writeFile(path.join(outDir, name), text);
  console.log(`wrote ${generated.size} TypeScript files to schema/typescript`);
}
