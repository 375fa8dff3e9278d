// Validates AsyncAPI documents with @asyncapi/parser: the document against the AsyncAPI 3.0
// specification (the parser's own ruleset), every $ref resolved (relative refs against the file's
// location), and every payload schema compiled as JSON Schema draft 2020-12 by ajv in strict mode.
//
//   node check.mjs FILE...   FILE: an AsyncAPI document in JSON
//   exit 0: valid; 1: a diagnostic of severity error or warning, or a $ref that is not a relative
//   file reference; 2: usage, or a FILE that cannot be read
//
// Nothing is fetched over the network: every $ref, in the document and in the files it reaches,
// must be local (`#/...`) or a relative file path; anything else fails before the parser runs.
//
// Warnings fail too: the document is generated, so a warning is a defect of the generator.
import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Parser, fromFile, DiagnosticSeverity } from "@asyncapi/parser";
import Ajv2020 from "ajv/dist/2020.js";

/** Media type the generator gives the payloads (tools/schema-tool/src/asyncapi.rs). */
export const PAYLOAD_SCHEMA_FORMAT = "application/schema+json;version=2020-12";

/** Integer formats schemars writes, registered with the range of their Rust type. */
const INTEGER_FORMATS = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  uint8: [0, 2 ** 8 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  uint16: [0, 2 ** 16 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  uint64: [0, 2 ** 64 - 1],
  uint: [0, 2 ** 64 - 1],
  int: [-(2 ** 63), 2 ** 63 - 1],
};

function draft2020Validator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  for (const [name, [min, max]] of Object.entries(INTEGER_FORMATS)) {
    ajv.addFormat(name, { type: "number", validate: (x) => Number.isInteger(x) && x >= min && x <= max });
  }
  ajv.addFormat("float", { type: "number", validate: (x) => Number.isFinite(x) });
  ajv.addFormat("double", { type: "number", validate: (x) => Number.isFinite(x) });
  // The minor that added a message, member or value (spec/versioning.md#since-annotations): an
  // annotation, validated by nothing.
  ajv.addKeyword("x-chatwire-since");
  // `ts` members carry `format: date-time` (FRAME-004). This check only compiles the payload
  // schemas, so the format need only be known here; the Rust, npm and Python validators assert it.
  ajv.addFormat("date-time", true);
  return ajv;
}

/** Compiles a payload schema; throws naming the payload when it is not valid draft 2020-12. */
function compileDraft2020(input) {
  try {
    // A fresh instance per payload: payloads are compiled once each, and two may share an `$id`.
    draft2020Validator().compile(input.data);
  } catch (error) {
    throw new Error(`/${input.path.join("/")} is not a valid draft 2020-12 schema: ${error.message}`);
  }
}

/**
 * A schema parser for draft 2020-12 payloads. For AsyncAPI 3 documents the parser calls only
 * `parse` (once per payload), and reports what it throws as an error diagnostic; `validate`
 * serves AsyncAPI 2 documents.
 */
const draft2020SchemaParser = {
  getMimeTypes: () => [PAYLOAD_SCHEMA_FORMAT],
  async validate(input) {
    try {
      compileDraft2020(input);
      return [];
    } catch (error) {
      return [{ message: error.message, path: input.path }];
    }
  },
  async parse(input) {
    compileDraft2020(input);
    return input.data;
  },
};

/**
 * The `$ref`s of `file` and of every file it reaches that are neither local (`#/...`) nor a
 * relative file path, as printable lines.
 */
export async function nonRelativeRefs(file) {
  const offending = [];
  const seen = new Set();
  const visit = async (current) => {
    if (seen.has(current)) return;
    seen.add(current);
    const targets = [];
    const walk = (node, pointer) => {
      if (Array.isArray(node)) {
        node.forEach((item, i) => walk(item, `${pointer}/${i}`));
      } else if (node !== null && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string") {
            const target = value.split("#")[0];
            if (target === "") continue;
            if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("/")) {
              offending.push(`error non-relative-ref: ${value} at ${path.basename(current)}#${pointer}`);
            } else {
              targets.push(path.resolve(path.dirname(current), target));
            }
          } else {
            walk(value, `${pointer}/${key}`);
          }
        }
      }
    };
    walk(JSON.parse(await readFile(current, "utf8")), "");
    for (const target of targets) {
      // A target that cannot be read or parsed is the parser's to report, with its $ref's path.
      await visit(target).catch(() => {});
    }
  };
  await visit(path.resolve(file));
  return offending;
}

const SEVERITY = {
  [DiagnosticSeverity.Error]: "error",
  [DiagnosticSeverity.Warning]: "warning",
  [DiagnosticSeverity.Information]: "info",
  [DiagnosticSeverity.Hint]: "hint",
};

/**
 * Parses one document; returns its failing diagnostics (errors and warnings) as printable lines,
 * and the number of messages per operation when it parsed.
 */
export async function checkFile(file) {
  const offending = await nonRelativeRefs(file);
  if (offending.length > 0) return { failing: offending, operations: [] };
  const parser = new Parser({ schemaParsers: [draft2020SchemaParser] });
  const { document, diagnostics } = await fromFile(parser, path.resolve(file)).parse();
  const failing = diagnostics
    .filter((d) => d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning)
    // An exception thrown while parsing (a payload schema that does not compile) arrives with its
    // stack appended: keep the message.
    .map((d) => `${SEVERITY[d.severity]} ${d.code}: ${d.message.split(", stack: ")[0]} at /${d.path.join("/")}`);
  if (document === undefined && failing.length === 0) {
    failing.push("error: the parser returned no document");
  }
  const operations = document
    ? document.operations().all().map((op) => [op.id(), op.action(), op.messages().all().length])
    : [];
  return { failing, operations };
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node check.mjs FILE...");
    return 2;
  }
  const version = createRequire(import.meta.url)("@asyncapi/parser/package.json").version;
  let status = 0;
  for (const file of files) {
    let result;
    try {
      result = await checkFile(file);
    } catch (error) {
      console.error(`${file}: cannot be parsed: ${error.message}`);
      status = Math.max(status, 2);
      continue;
    }
    if (result.failing.length > 0) {
      console.error(`${file}: invalid (@asyncapi/parser ${version})`);
      for (const line of result.failing) console.error(`  ${line}`);
      status = Math.max(status, 1);
    } else {
      const ops = result.operations.map(([id, action, n]) => `${id} (${action}, ${n} messages)`).join(", ");
      console.log(`${file}: valid AsyncAPI (@asyncapi/parser ${version}): ${ops}`);
    }
  }
  return status;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
