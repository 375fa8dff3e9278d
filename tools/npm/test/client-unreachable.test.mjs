// ChatwireClient against a dead loopback port, over the real `ws` package: every retry is reported
// through the `reconnect` event with its cause, and the final error names it (ECONNREFUSED) instead
// of only "gave up after N attempts".
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import WebSocket from "ws";
import { ChatwireClient } from "../dist/index.js";

/** A loopback port nothing listens on: bound once by the OS, then released. */
async function deadPort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a dead URL: each retry is reported with its cause, and the final error names it", { timeout: 10_000 }, async () => {
  const port = await deadPort();
  const url = `ws://127.0.0.1:${port}/ws`;
  const client = new ChatwireClient({
    url,
    socket: (u, protocols) => new WebSocket(u, protocols),
    reconnect: { initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 },
  });
  const retries = [];
  const statuses = [];
  client.on("reconnect", (attempt) => retries.push(attempt));
  client.on("status", (status) => statuses.push(status));
  const started = Date.now();
  const error = await client.connect().then(
    () => assert.fail("connected to a dead port"),
    (e) => e,
  );
  assert.equal(error.code, "unreachable");
  assert.match(error.message, /ECONNREFUSED/, error.message);
  assert.ok(error.message.includes(`cannot connect to ${url}`), error.message);
  assert.match(error.message, /gave up after 2 attempts/, error.message);
  assert.deepEqual(
    retries.map(({ attempt, maxAttempts }) => [attempt, maxAttempts]),
    [
      [1, 2],
      [2, 2],
    ],
  );
  for (const retry of retries) {
    assert.match(retry.reason, /ECONNREFUSED/, retry.reason);
    assert.ok(retry.delayMs >= 0 && retry.delayMs <= 20, `${retry.delayMs}`);
  }
  assert.deepEqual(statuses, ["connecting", "reconnecting", "closed"]);
  assert.equal(client.status, "closed");
  assert.ok(Date.now() - started < 5_000);
});
