// The precompiled validators on the whole fixture corpus, the typed frame they hand back, and the
// proof that they generate no code at run time.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { isDateTime, parseServerFrame, validateClientFrame, validateServerFrame } from "../dist/index.js";
import { beyondSafeIntegers, corpus } from "../scripts/corpus.mjs";

const cases = await corpus();
const validatorOf = (c) => (c.direction === "server-to-client" ? validateServerFrame : validateClientFrame);

test("every valid fixture validates and comes back unchanged", () => {
  const valid = cases.filter((c) => c.expected === "valid");
  assert.ok(valid.length > 50, `only ${valid.length} valid fixtures found`);
  for (const c of valid) {
    const result = validatorOf(c)(c.frame);
    assert.ok(result.ok, `${c.id}: ${JSON.stringify(result.ok ? null : result.errors)}`);
    // Fixtures never hold null in optional members, so the frame is the very same value.
    assert.equal(result.frame, c.frame, c.id);
  }
});

test("every invalid fixture is refused with an error naming the field its fixture names", () => {
  const invalid = cases.filter((c) => c.expected === "invalid" && !beyondSafeIntegers(c.frame));
  assert.ok(invalid.length > 100, `only ${invalid.length} invalid fixtures found`);
  for (const c of invalid) {
    const result = validatorOf(c)(c.frame);
    assert.equal(result.ok, false, `${c.id} was accepted`);
    if (result.ok) continue;
    const kinds = { not_object: "not_object", missing_type: "missing_type", unknown_type: "unknown_type" };
    assert.equal(result.errors[0].kind, kinds[c.expect] ?? "invalid", `${c.id}: ${JSON.stringify(result.errors)}`);
    const named = result.errors.some((e) => e.path === c.expectPath || e.path.startsWith(`${c.expectPath}/`));
    assert.ok(named, `${c.id}: no error at ${c.expectPath}: ${JSON.stringify(result.errors)}`);
    for (const e of result.errors) assert.ok(e.message.startsWith(e.path || "frame"), `${c.id}: message does not name the field: ${e.message}`);
  }
});

test("a frame of the other direction is an unknown type", () => {
  const hello = { type: "session.hello", id: "h-1", versions: ["1.0"] };
  assert.ok(validateClientFrame(hello).ok);
  const result = validateServerFrame(hello);
  assert.equal(result.ok, false);
  assert.deepEqual(result.ok ? null : result.errors.map((e) => [e.kind, e.path]), [["unknown_type", "/type"]]);
});

test("optional members sent as null are dropped from the typed frame, the input is untouched", () => {
  const frame = {
    type: "chat.run_complete",
    seq: 9,
    invocation_id: "inv-1",
    status: "completed",
    reason: null,
    ts: "2026-01-15T10:00:01Z",
  };
  const result = validateServerFrame(frame);
  assert.ok(result.ok);
  assert.equal("reason" in result.frame, false);
  assert.equal(frame.reason, null);
  const snapshot = {
    type: "ui_state_snapshot",
    seq: 2,
    v: "ui_state_v1",
    state: {
      items: [
        { kind: "user_message", id: "i-1", invocation_id: "inv-1", client_message_id: "m-1", text: "hi", ts: "2026-01-15T10:00:00Z" },
        {
          kind: "tool_call", id: "tc-1", invocation_id: "inv-1", tool_name: "ask", component_type: "YesNo", workflow_name: null,
          interaction_type: "ui_tool", display: "inline", awaiting_response: true, status: "pending",
          payload: { keep: null }, progress: { message: null, fraction: 0.5 }, ts: "2026-01-15T10:00:00Z",
        },
      ],
      run: { status: "awaiting_input", invocation_id: null },
    },
  };
  const state = validateServerFrame(snapshot);
  assert.ok(state.ok, JSON.stringify(state.ok ? null : state.errors));
  const [first, call] = state.frame.state.items;
  assert.equal(first, snapshot.state.items[0], "an item without nulls is shared, not copied");
  assert.equal("workflow_name" in call, false);
  assert.deepEqual(call.progress, { fraction: 0.5 });
  assert.deepEqual(call.payload, { keep: null }, "free JSON keeps its nulls");
  assert.deepEqual(state.frame.state.run, { status: "awaiting_input" });
  assert.equal(snapshot.state.items[1].workflow_name, null);
});

test("parseServerFrame refuses text that is not JSON", () => {
  const result = parseServerFrame("{not json");
  assert.equal(result.ok, false);
  assert.equal(result.ok ? null : result.errors[0].kind, "malformed_json");
});

test("isDateTime agrees with the shared list of date-time cases (fixtures/formats/date-time.json)", async () => {
  const cases = JSON.parse(await readFile(new URL("../../../fixtures/formats/date-time.json", import.meta.url), "utf8"));
  assert.ok(cases.valid.length > 5 && cases.invalid.length > 10);
  for (const s of cases.valid) assert.ok(isDateTime(s), `${JSON.stringify(s)} is an RFC 3339 date-time`);
  for (const s of cases.invalid) assert.equal(isDateTime(s), false, `${JSON.stringify(s)} is not an RFC 3339 date-time`);
  // The validators apply it to every ts, nested ones included.
  for (const s of cases.invalid) {
    const result = validateServerFrame({ type: "chat.run_started", seq: 1, invocation_id: "inv-1", ts: s });
    assert.equal(result.ok, false, s);
    assert.equal(result.ok ? null : result.errors[0].path, "/ts");
  }
});

test("the validators run with code generation from strings disabled (CSP without unsafe-eval)", () => {
  const script = `
    const { validateServerFrame, validateClientFrame } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
    const { corpus, beyondSafeIntegers } = await import(${JSON.stringify(new URL("../scripts/corpus.mjs", import.meta.url).href)});
    let judged = 0;
    for (const c of await corpus()) {
      if (beyondSafeIntegers(c.frame)) continue;
      const v = (c.direction === "server-to-client" ? validateServerFrame : validateClientFrame)(c.frame);
      if ((v.ok ? "valid" : "invalid") !== c.expected) throw new Error(c.id);
      judged++;
    }
    let blocked = false;
    try { new Function("return 1"); } catch { blocked = true; }
    console.log(JSON.stringify({ judged, blocked }));
  `;
  const out = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    encoding: "utf8",
    timeout: 60_000,
  });
  const { judged, blocked } = JSON.parse(out);
  assert.ok(blocked, "the flag did not block new Function, so this test proves nothing");
  assert.ok(judged > 150, `only ${judged} frames judged`);
});
