// Test helpers: the bundled reference backend as a child process, sockets the tests can cut, and
// waiting for a condition with a deadline (nothing in these tests waits forever).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** The reference binary: $CHATWIRE_REFERENCE, else the workspace's release build. */
export function referenceBinary() {
  const bin = process.env.CHATWIRE_REFERENCE ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "release/chatwire-reference");
  if (!existsSync(bin)) throw new Error(`${bin} not found: run \`cargo build --release -p chatwire-reference\` first`);
  return bin;
}

/**
 * Starts `chatwire-reference serve` on a loopback address (default: a free port) with a store
 * (default: in memory); resolves once it printed its URL. A test that restarts the server passes
 * the previous `addr`, and the same `db` file to keep the sessions or a fresh one to lose them.
 */
export async function startReference(extra = ["--conformance"], { addr = "127.0.0.1:0", db = ":memory:" } = {}) {
  const child = spawn(referenceBinary(), ["serve", "--addr", addr, "--db", db, ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the reference printed no URL within 15 s: ${stderr}`)), 15_000);
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the reference exited with ${code}: ${stderr}`));
    });
  });
  if (!url.startsWith("ws://127.0.0.1:")) throw new Error(`unexpected first line from the reference: ${url}`);
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A socket factory over `ws` that remembers its sockets, so a test can cut the connection. */
export function wsSockets() {
  const sockets = [];
  /** Every frame the client sent on them, parsed, in order. */
  const sent = [];
  return {
    sockets,
    sent,
    factory: (url, protocols) => {
      const socket = new WebSocket(url, protocols);
      const send = socket.send.bind(socket);
      socket.send = (text, ...rest) => {
        sent.push(JSON.parse(text));
        send(text, ...rest);
      };
      sockets.push(socket);
      return socket;
    },
    /** Drops the newest connection without a closing handshake, as a network failure does. */
    cut() {
      sockets.at(-1)?.terminate();
    },
  };
}

/** Resolves with the first value `probe()` returns that is not undefined; rejects after `ms`. */
export async function until(what, probe, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const toolCalls = (state) => (state?.items ?? []).filter((item) => item.kind === "tool_call");
