// The release reference backend for a test file that drives the client end to end: the servers it
// needs, started before its tests and stopped after, and clients of them with the tests' options,
// closed after its tests. One place for what each such file would otherwise repeat.
import { after, before } from "node:test";
import { ChatwireClient } from "../../dist/index.js";
import { startReference, wsSockets } from "../helpers.mjs";

/**
 * Starts a reference per entry of `configs` (name → `serve` arguments) before the file's tests, all
 * at once, and stops them after. Returns `servers` (filled in by name once they started), `ready()`
 * (resolves then: Node may run a file's top-level hooks side by side), and `connect(server,
 * options)`, which makes a client of `server` over sockets the test can cut and returns
 * `{ client, sockets }`.
 */
export function useReferences(configs) {
  const servers = {};
  const clients = [];
  let starting = null;
  /** Starts the servers once; a file's own `before` that needs them awaits it too. */
  function ready() {
    starting ??= Promise.all(Object.entries(configs).map(async ([name, args]) => [name, await startReference(args)])).then(
      (started) => void Object.assign(servers, Object.fromEntries(started)),
    );
    return starting;
  }
  before(ready);
  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  });
  function connect(server, options = {}) {
    const sockets = wsSockets();
    const client = new ChatwireClient({
      url: server.url,
      socket: sockets.factory,
      clientName: "chatwire-npm-tests",
      requestTimeoutMs: 10_000,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 5 },
      ...options,
    });
    clients.push(client);
    return { client, sockets };
  }
  return { servers, ready, connect };
}
