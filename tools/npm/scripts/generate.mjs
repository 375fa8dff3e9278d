// Generates src/generated/protocol.ts from schema/json: one named export per frame, per `$defs`
// entry and per enum, the frame unions and their runtime lists, and the plan that tells the
// validators which optional members may arrive as `null` (serde reads null as absent there); and
// src/generated/facts.ts from fixtures/protocol-facts.json (scripts/facts.mjs): versions, limits,
// close and error codes, the event list, what answers each client frame, per-frame and per-version
// tables. With --check it writes nothing and exits 1 when a committed file differs (CI's drift check).
//
// Rules of the mapping, chosen for what a frontend needs:
// - a `$defs` entry becomes a named type; a `oneOf` of `const` branches becomes a union of string
//   literals plus a runtime list `<NAME>_VALUES`; a `oneOf` of objects tagged by a `const`
//   member becomes one interface per variant (`DisplayItemToolCall`) and their union;
// - a schema without a type (`result`, `value`) is free JSON: `unknown`;
// - an optional member that admits null is typed without null: the server never sends null there
//   and the validators drop such members before handing the frame over;
// - the frame named `error` is `ErrorFrame`, so no export shadows the global `Error`;
// - a `$defs` entry may refer to itself (`ResponseSchema`): it becomes a recursive named type, and
//   its null plan is null when no optional member at any depth admits null; otherwise (a tool
//   call item holds a sub-agent's items, since 1.3) its nested copies refer to it by name,
//   `{r: name}`, and NAMED_PLANS holds its plan.
import { readdir, readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { factsModule } from "./facts.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, "..");
const root = path.resolve(pkgDir, "../..");
const schemaDir = path.join(root, "schema/json");
const outFile = path.join(pkgDir, "src/generated/protocol.ts");
const factsFile = path.join(pkgDir, "src/generated/facts.ts");
const factsSource = path.join(root, "fixtures/protocol-facts.json");
const check = process.argv.includes("--check");

const UNIONS = { server: "server-frame.json", client: "client-frame.json" };

function fail(message) {
  console.error(`generate: ${message}`);
  process.exit(1);
}

const pascal = (s) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("");
const frameTypeName = (wire) => (wire === "error" ? "ErrorFrame" : pascal(wire));
const constName = (name) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();

async function readJson(file) {
  return JSON.parse(await readFile(path.join(schemaDir, file), "utf8"));
}

async function readFacts() {
  return JSON.parse(await readFile(factsSource, "utf8"));
}

function doc(text, indent) {
  if (!text) return "";
  const lines = text.replace(/\*\//g, "*\\/").split("\n");
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ""}`).join("\n")}\n${indent} */\n`;
}

const refName = (ref) => {
  const m = /^#\/\$defs\/(\w+)$/.exec(ref);
  if (!m) fail(`unsupported $ref ${ref}: schemas must be self-contained`);
  return m[1];
};

/** The branches of a nullable schema other than null, and whether null was among them. */
function withoutNull(schema) {
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const rest = schema.type.filter((t) => t !== "null");
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(schema[key]) && schema[key].some((b) => b.type === "null")) {
      const rest = schema[key].filter((b) => b.type !== "null");
      const { [key]: _drop, ...others } = schema;
      return { schema: rest.length === 1 ? { ...others, ...rest[0] } : { ...others, [key]: rest }, nullable: true };
    }
  }
  return { schema, nullable: false };
}

const isConstBranch = (b) => b && b.const !== undefined && !b.properties;

/** The tag member of a union of closed objects, when every branch has a `const` there. */
function tagOf(branches) {
  if (!branches.every((b) => b.type === "object" && b.properties)) return null;
  const first = branches[0];
  for (const name of Object.keys(first.properties)) {
    if (branches.every((b) => b.properties[name]?.const !== undefined && (b.required ?? []).includes(name))) return name;
  }
  return null;
}

/** A TypeScript type expression for `schema`. */
function tsType(schema, indent) {
  if (schema === true) return "unknown";
  if (schema === false) return "never";
  if (schema.$ref) return refName(schema.$ref);
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const union = schema.oneOf ?? schema.anyOf;
  if (union) {
    const parts = union.map((b) => tsType(b, indent));
    return parts.length === 1 ? parts[0] : parts.map((p) => (p.includes("\n") ? p : p)).join(" | ");
  }
  if (schema.type === undefined) {
    if (schema.properties) return objectType(schema, indent);
    return "unknown";
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const parts = types.map((t) => {
    switch (t) {
      case "string":
        return "string";
      case "integer":
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array": {
        const item = schema.items === undefined ? "unknown" : tsType(schema.items, indent);
        return /^[\w"]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case "object":
        return objectType(schema, indent);
      default:
        return fail(`unsupported type ${t}`);
    }
  });
  return parts.join(" | ");
}

/** The members of an object schema, one per line, with their docs. */
function members(schema, indent) {
  const required = new Set(schema.required ?? []);
  const out = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const optional = !required.has(name);
    // A `null` the server never sends is not part of the type (see the header).
    const prop = optional ? withoutNull(raw).schema : raw;
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
    out.push(`${doc(raw.description, indent)}${indent}${key}${optional ? "?" : ""}: ${tsType(prop, indent)};`);
  }
  const extra = schema.additionalProperties;
  // Members named by a pattern (an id-keyed map, e.g. `usage.invocations`): keys are strings, the
  // pattern checked by the validators.
  const patterned = Object.values(schema.patternProperties ?? {});
  if (patterned.length > 0) {
    out.push(`${indent}[key: string]: ${patterned.map((p) => tsType(p, indent)).join(" | ")};`);
  } else if (extra !== false && (extra !== undefined || !schema.properties)) {
    const value = extra === undefined || extra === true ? "unknown" : tsType(extra, indent);
    out.push(`${indent}[key: string]: ${value};`);
  }
  return out.join("\n");
}

function objectType(schema, indent) {
  const inner = members(schema, `${indent}  `);
  return inner ? `{\n${inner}\n${indent}}` : "{ [key: string]: unknown }";
}

/**
 * Which optional members admit null, down to every nested object: the validators delete them.
 * A plan is null (nothing to do), {o: {member: plan}, n: [member…]}, {a: plan} for array items,
 * {t: tag, v: {tagValue: plan}} for a tagged union, or {u: [plan…]} for an untagged union.
 */
function makePlanner(defs) {
  const memo = new Map();
  const active = new Set();
  // Recursive definitions met while their own plan is being made (`ResponseSchema` nests itself).
  const assumed = new Set();
  // Recursive definitions whose plan is not null: their nested copies are `{r: name}`.
  const recursing = new Set();
  const named = {};
  function plan(schema) {
    if (!schema || typeof schema !== "object") return null;
    if (schema.$ref) {
      const name = refName(schema.$ref);
      if (memo.has(name)) return memo.get(name);
      if (active.has(name)) {
        // A recursive definition: plan it as if its nested copies needed nothing. When the plan
        // made that way is null, null is the plan (nothing to delete at any depth); otherwise
        // plan it again with its nested copies referring to it by name.
        assumed.add(name);
        return recursing.has(name) ? { r: name } : null;
      }
      const known = new Set(memo.keys());
      active.add(name);
      let result = plan(defs[name]);
      if (assumed.has(name) && result !== null) {
        // The definitions planned on the way assumed the nested copies needed nothing: again.
        for (const key of [...memo.keys()].filter((k) => !known.has(k))) memo.delete(key);
        recursing.add(name);
        result = plan(defs[name]);
        named[name] = result;
      }
      active.delete(name);
      memo.set(name, result);
      return result;
    }
    const union = schema.oneOf ?? schema.anyOf;
    if (union) {
      const branches = union.filter((b) => b.type !== "null");
      const tag = tagOf(branches.map((b) => (b.$ref ? defs[refName(b.$ref)] : b)));
      if (tag) {
        const v = {};
        for (const b of branches) {
          const body = b.$ref ? defs[refName(b.$ref)] : b;
          const p = plan(b);
          if (p) v[body.properties[tag].const] = p;
        }
        return Object.keys(v).length ? { t: tag, v } : null;
      }
      const plans = branches.map(plan).filter(Boolean);
      if (plans.length === 0) return null;
      return plans.length === 1 ? plans[0] : { u: plans };
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes("array") && schema.items) {
      const p = plan(schema.items);
      return p ? { a: p } : null;
    }
    if (schema.properties) {
      const required = new Set(schema.required ?? []);
      const o = {};
      const n = [];
      for (const [name, prop] of Object.entries(schema.properties)) {
        const { schema: inner, nullable } = withoutNull(prop);
        if (nullable && !required.has(name)) n.push(name);
        const p = plan(inner);
        if (p) o[name] = p;
      }
      if (n.length === 0 && Object.keys(o).length === 0) return null;
      return { ...(Object.keys(o).length ? { o } : {}), ...(n.length ? { n } : {}) };
    }
    return null;
  }
  plan.named = named;
  return plan;
}

function defDeclaration(name, schema) {
  const header = doc(schema.description, "");
  const union = schema.oneOf ?? schema.anyOf;
  if (union && union.every(isConstBranch)) {
    const lines = union.map((b) => `- \`${b.const}\`${b.description ? `: ${b.description}` : ""}`);
    const full = [schema.description, "", ...lines].filter((l) => l !== undefined).join("\n");
    const values = union.map((b) => JSON.stringify(b.const));
    return [
      `${doc(full, "")}export type ${name} = ${values.join(" | ")};`,
      `/** Every value of {@link ${name}}, in schema order. */`,
      `export const ${constName(name)}_VALUES = [${values.join(", ")}] as const satisfies readonly ${name}[];`,
    ].join("\n");
  }
  if (union) {
    const tag = tagOf(union);
    if (tag) {
      const variants = union.map((b) => {
        const variant = `${name}${pascal(b.properties[tag].const)}`;
        return { variant, text: `${doc(b.description, "")}export interface ${variant} {\n${members(b, "  ")}\n}` };
      });
      return [
        ...variants.map((v) => v.text),
        `${header}export type ${name} = ${variants.map((v) => v.variant).join(" | ")};`,
      ].join("\n");
    }
  }
  if (schema.type === "object" && schema.properties) {
    return `${header}export interface ${name} {\n${members(schema, "  ")}\n}`;
  }
  return `${header}export type ${name} = ${tsType(schema, "")};`;
}

async function generate(facts) {
  const version = facts.protocol_version;
  const pkg = JSON.parse(await readFile(path.join(pkgDir, "package.json"), "utf8"));
  if (!pkg.version.startsWith(`${version}.`)) {
    fail(`package.json version ${pkg.version} is not a release of protocol ${version}: use ${version}.PATCH`);
  }
  const directions = {};
  for (const [direction, file] of Object.entries(UNIONS)) {
    directions[direction] = (await readJson(file)).oneOf.map((b) => b.properties.type.const);
  }
  const files = ["ui-state.json", ...Object.values(directions).flat().map((wire) => `${wire}.json`)];
  const defs = {};
  const frames = {};
  for (const file of files) {
    const schema = await readJson(file);
    for (const [name, def] of Object.entries(schema.$defs ?? {})) {
      if (defs[name] && !isDeepStrictEqual(defs[name], def)) fail(`$defs/${name} differs between files (${file})`);
      defs[name] = def;
    }
    if (file !== "ui-state.json") frames[schema.title] = schema;
  }
  const plan = makePlanner(defs);
  const out = [
    "// Generated from schema/json by tools/npm/scripts/generate.mjs. Do not edit: change the Rust",
    "// types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate` in tools/npm.",
    "// The protocol's version, limits and other facts are in ./facts.ts.",
    "",
  ];
  for (const name of Object.keys(defs).sort()) out.push(defDeclaration(name, defs[name]), "");
  for (const [wire, schema] of Object.entries(frames)) {
    out.push(`${doc(schema.description, "")}export interface ${frameTypeName(wire)} {\n${members(schema, "  ")}\n}`, "");
  }
  const list = (names) => names.map((w) => `  | ${frameTypeName(w)}`).join("\n");
  out.push(
    "/** Any frame a server sends to a client, tagged on `type`. */",
    `export type ServerFrame =\n${list(directions.server)};`,
    "/** Any frame a client sends to a server, tagged on `type`. */",
    `export type ClientFrame =\n${list(directions.client)};`,
    "/** Any frame, either direction. */",
    "export type Frame = ServerFrame | ClientFrame;",
    "/** The wire name of a frame. */",
    'export type FrameType = Frame["type"];',
    'export type ServerFrameType = ServerFrame["type"];',
    'export type ClientFrameType = ClientFrame["type"];',
    "/** The frame with wire name `T`: `FrameOf<\"chat.tool_call\">` is {@link ChatToolCall}. */",
    "export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;",
    "/** The display item of kind `K`: `ItemOf<\"tool_call\">` is {@link DisplayItemToolCall}. */",
    'export type ItemOf<K extends DisplayItem["kind"]> = Extract<DisplayItem, { kind: K }>;',
    "",
    "/** Every server frame type, in schema order. */",
    `export const SERVER_FRAME_TYPES = ${JSON.stringify(directions.server)} as const satisfies readonly ServerFrameType[];`,
    "/** Every client frame type, in schema order. */",
    `export const CLIENT_FRAME_TYPES = ${JSON.stringify(directions.client)} as const satisfies readonly ClientFrameType[];`,
    "",
    "/** @internal Which optional members admit null, per frame type (see validate.ts). */",
    `export const NULL_PLANS: { readonly [type: string]: NullPlan | null } = ${JSON.stringify(
      Object.fromEntries(Object.entries(frames).map(([wire, schema]) => [wire, plan(schema)])),
    )};`,
    "/** @internal The plans of recursive definitions, which their nested copies name (`{r}`). */",
    `export const NAMED_PLANS: { readonly [name: string]: NullPlan | null } = ${JSON.stringify(plan.named)};`,
    "/** @internal */",
    "export type NullPlan =",
    "  | { readonly o?: { readonly [member: string]: NullPlan }; readonly n?: readonly string[] }",
    "  | { readonly a: NullPlan }",
    "  | { readonly t: string; readonly v: { readonly [tag: string]: NullPlan } }",
    "  | { readonly u: readonly NullPlan[] }",
    "  | { readonly r: string };",
    "",
  );
  return out.join("\n");
}

const facts = await readFacts();
const outputs = [
  [outFile, await generate(facts), "schema/json"],
  [factsFile, factsModule(facts), "fixtures/protocol-facts.json"],
];
if (check) {
  let drifted = false;
  for (const [file, text, source] of outputs) {
    const name = path.relative(root, file);
    const committed = await readFile(file, "utf8").catch(() => null);
    if (committed !== text) {
      console.error(`drift: ${name} differs from what ${source} generates; run \`npm run generate\` in tools/npm`);
      drifted = true;
    } else {
      console.log(`${name} is up to date`);
    }
  }
  if (drifted) process.exit(1);
} else {
  for (const [file, text] of outputs) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    console.log(`wrote ${path.relative(root, file)}`);
  }
}
