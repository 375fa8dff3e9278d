// The checker accepts the committed document and rejects broken copies of it, each with exit 1
// and a line naming what is wrong: a check that cannot fail would prove nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { checkFile } from "../check.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const schemaDir = path.resolve(here, "../../../schema");
const committed = path.join(schemaDir, "asyncapi.json");
const checker = path.resolve(here, "../check.mjs");

/** Runs the CLI; resolves with its exit code and output whatever the code. */
async function runChecker(file) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [checker, file]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout, stderr: error.stderr };
  }
}

/** A copy of schema/asyncapi.json and schema/json in a temp dir, edited by `edit(doc, dir)`. */
async function brokenCopy(t, edit) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "chatwire-asyncapi-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await cp(path.join(schemaDir, "json"), path.join(dir, "json"), { recursive: true });
  const doc = JSON.parse(await readFile(committed, "utf8"));
  await edit(doc, dir);
  const file = path.join(dir, "asyncapi.json");
  await writeFile(file, JSON.stringify(doc, null, 2));
  return file;
}

const frameTypes = async (union) =>
  JSON.parse(await readFile(path.join(schemaDir, "json", union), "utf8")).oneOf.map((b) => b.properties.type.const);

test("the committed document is valid and has every frame of each direction", async () => {
  const { failing, operations } = await checkFile(committed);
  assert.deepEqual(failing, []);
  assert.deepEqual(operations, [
    ["receiveClientFrames", "receive", (await frameTypes("client-frame.json")).length],
    ["sendServerFrames", "send", (await frameTypes("server-frame.json")).length],
  ]);
  const run = await runChecker(committed);
  assert.equal(run.code, 0, run.stderr);
});

const broken = {
  "a $ref to a schema file that does not exist": {
    edit: (doc) => {
      doc.components.messages["session.hello"].payload.schema.$ref = "./json/no-such-frame.json";
    },
    says: "no-such-frame.json",
  },
  "an operation action AsyncAPI 3 does not know": {
    edit: (doc) => {
      doc.operations.sendServerFrames.action = "publish";
    },
    says: "/operations/sendServerFrames/action",
  },
  "an operation message that is not on its channel": {
    edit: (doc) => {
      doc.operations.receiveClientFrames.messages.push({ $ref: "#/components/messages/session.hello" });
    },
    says: "receiveClientFrames",
  },
  "a payload schema that is not valid draft 2020-12": {
    edit: async (_doc, dir) => {
      const file = path.join(dir, "json", "chat.rewind.json");
      const schema = JSON.parse(await readFile(file, "utf8"));
      schema.type = "objekt";
      await writeFile(file, JSON.stringify(schema));
    },
    says: "chat.rewind",
  },
  "a correlation id whose location is not a runtime expression": {
    edit: (doc) => {
      doc.components.correlationIds.inReplyTo.location = "payload.in_reply_to";
    },
    says: "/components/correlationIds/inReplyTo/location",
  },
  "a $ref that would be fetched over the network": {
    edit: (doc) => {
      doc.components.messages.error.payload.schema.$ref = "https://chatwire.dev/schema/v1/error.json";
    },
    says: "non-relative-ref: https://chatwire.dev/schema/v1/error.json",
  },
  "a remote $ref inside a schema file the document reaches": {
    edit: async (_doc, dir) => {
      const file = path.join(dir, "json", "session.welcome.json");
      const schema = JSON.parse(await readFile(file, "utf8"));
      schema.properties.seq = { $ref: "http://example.com/seq.json" };
      await writeFile(file, JSON.stringify(schema));
    },
    says: "session.welcome.json#/properties/seq",
  },
  "a document without info": {
    edit: (doc) => {
      delete doc.info;
    },
    says: "info",
  },
};

for (const [name, { edit, says }] of Object.entries(broken)) {
  test(`rejects ${name}`, async (t) => {
    const file = await brokenCopy(t, edit);
    const run = await runChecker(file);
    assert.equal(run.code, 1, `exit code; stdout: ${run.stdout} stderr: ${run.stderr}`);
    assert.match(run.stderr, /invalid/);
    assert.ok(run.stderr.includes(says), `stderr does not name ${says}:\n${run.stderr}`);
  });
}

test("a file that does not exist is a usage error, not a pass", async () => {
  const run = await runChecker(path.join(os.tmpdir(), "chatwire-no-such-asyncapi.json"));
  assert.notEqual(run.code, 0);
});
