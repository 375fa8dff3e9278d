// The package's protocol facts are the Rust crate's (fixtures/protocol-facts.json, written by
// chatwire-schema-tool), as the built package exports them, and the client uses them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import {
  ANSWERED_BY,
  CLIENT_FRAME_TYPES,
  CLOSE_CODES,
  ERROR_CODE_VALUES,
  EVENT_TYPES,
  FATAL_CLOSE_CODES,
  MAX_HISTORY_PAGE_ITEMS,
  MAX_WINDOW_ITEMS,
  OFFERED_VERSIONS,
  PROTOCOL_VERSION,
  RESPONSE_SCHEMA_KEYWORDS,
  SERVER_FRAME_FACTS,
  SERVER_FRAME_TYPES,
  SUBPROTOCOL,
  SUPPORTED_VERSIONS,
  VERSION_FACTS,
} from "../dist/index.js";

const facts = JSON.parse(readFileSync(new URL("../../../fixtures/protocol-facts.json", import.meta.url), "utf8"));

test("versions, limits and codes are the crate's", () => {
  assert.equal(PROTOCOL_VERSION, facts.protocol_version);
  assert.equal(SUBPROTOCOL, facts.subprotocol);
  assert.deepEqual([...SUPPORTED_VERSIONS], facts.supported_versions);
  assert.deepEqual([...OFFERED_VERSIONS], facts.supported_versions, "the client offers every version it speaks");
  assert.equal(MAX_WINDOW_ITEMS, facts.max_window_items);
  assert.equal(MAX_HISTORY_PAGE_ITEMS, facts.max_history_page_items);
  assert.deepEqual(CLOSE_CODES, facts.close_codes);
  assert.deepEqual([...RESPONSE_SCHEMA_KEYWORDS], facts.response_schema.keywords);
  const fatal = facts.error_codes.filter((e) => e.fatal);
  assert.deepEqual(FATAL_CLOSE_CODES, Object.fromEntries(fatal.map((e) => [e.code, e.close_code])));
  assert.deepEqual(facts.error_codes.map((e) => e.code), [...ERROR_CODE_VALUES], "the facts and the schemas list the same codes");
});

test("the frame tables name every frame type of the schemas", () => {
  assert.deepEqual(Object.keys(ANSWERED_BY), [...CLIENT_FRAME_TYPES]);
  assert.deepEqual(Object.keys(SERVER_FRAME_FACTS), [...SERVER_FRAME_TYPES]);
  for (const [client, answers] of Object.entries(ANSWERED_BY)) {
    assert.ok(answers.length > 0, `${client} is answered`);
    for (const answer of answers) assert.notEqual(SERVER_FRAME_FACTS[answer].answer, "never", `${client} -> ${answer}`);
  }
  assert.deepEqual(
    [...EVENT_TYPES],
    SERVER_FRAME_TYPES.filter((t) => SERVER_FRAME_FACTS[t].event),
    "the event list is the server frames that are events",
  );
  assert.deepEqual([...VERSION_FACTS[PROTOCOL_VERSION].server_frames], [...SERVER_FRAME_TYPES], "the newest version has every frame");
  assert.ok(!VERSION_FACTS["1.0"].client_frames.includes("chat.retry"), "1.0 has no chat.retry");
});
