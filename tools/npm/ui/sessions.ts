// Where the chat page keeps its sessions. The address names the conversation (`/#session=<id>`), so a
// second tab opened on the same address (a copied link, a bookmark, the browser's "Duplicate tab")
// shows the same conversation, and with protocol 1.2's `multi_attach` both stay live. The key that
// resumes it (the resume token) and the `seq` it reached are kept in localStorage, which every tab
// of this origin in this browser shares, never in the address: a link to a conversation does not
// carry the key to it, and a fragment never reaches the server. The tab's own session is also kept
// in sessionStorage, so a tab whose address names none (`/`, before the first welcome) still
// resumes on a reload.
import type { SessionResume } from "../dist/index.js";

const TAB_KEY = "chatwire.session";
const PREFIX = "chatwire.session:";
/** Sessions kept in localStorage; the least recently used beyond this are forgotten. */
const KEPT = 50;

interface Stored extends SessionResume {
  /** When a tab last used it (ms since the epoch). */
  used: number;
  /** The last failed run's error, as [invocation id, error]: `chat.run_complete` carries it, the UiState does not. */
  run_error?: [string, string];
}

function read(storage: Storage, key: string): Stored | null {
  try {
    const raw: unknown = JSON.parse(storage.getItem(key) ?? "null");
    if (typeof raw !== "object" || raw === null) return null;
    const { session_id, resume_token, last_seq, used, run_error } = raw as Record<string, unknown>;
    if (typeof session_id !== "string" || typeof resume_token !== "string" || typeof last_seq !== "number") return null;
    const stored: Stored = { session_id, resume_token, last_seq, used: typeof used === "number" ? used : 0 };
    if (Array.isArray(run_error) && run_error.length === 2 && run_error.every((x) => typeof x === "string")) stored.run_error = run_error as [string, string];
    return stored;
  } catch {
    return null;
  }
}

function write(storage: Storage, key: string, value: Stored): void {
  try {
    storage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled (private mode): the page still works, a reload starts over.
  }
}

/** The session the address names (`#session=<id>`), if any. */
export function addressedSession(): string | null {
  const id = new URLSearchParams(location.hash.slice(1)).get("session");
  return id === null || id === "" ? null : id;
}

/** The address of a session: this page with `#session=<id>`. */
export function sessionAddress(id: string): string {
  return `${location.pathname}${location.search}#session=${encodeURIComponent(id)}`;
}

/** Makes the address name `id` (without a new history entry), so it can be copied or reopened. */
export function showInAddress(id: string): void {
  if (addressedSession() !== id) history.replaceState(history.state, "", sessionAddress(id));
}

/**
 * The session this tab should resume: the one its address names, when this browser holds its key;
 * else, when the address names none, the tab's own from sessionStorage. `unknown` is true when the
 * address names a session this browser does not hold (a link from elsewhere, or one forgotten).
 */
export function sessionToResume(): { resume: SessionResume | null; unknown: boolean } {
  const named = addressedSession();
  if (named === null) return { resume: strip(read(sessionStorage, TAB_KEY)), unknown: false };
  const stored = read(localStorage, PREFIX + named) ?? matching(read(sessionStorage, TAB_KEY), named);
  return { resume: strip(stored), unknown: stored === null };
}

function matching(stored: Stored | null, id: string): Stored | null {
  return stored !== null && stored.session_id === id ? stored : null;
}

function strip(stored: Stored | null): SessionResume | null {
  return stored === null ? null : { session_id: stored.session_id, resume_token: stored.resume_token, last_seq: stored.last_seq };
}

/** Keeps what resumes `session` for this tab and for every tab of this browser. */
export function keepSession(session: SessionResume): void {
  const key = PREFIX + session.session_id;
  const before = read(localStorage, key);
  const stored: Stored = { session_id: session.session_id, resume_token: session.resume_token, last_seq: session.last_seq, used: Date.now() };
  if (before?.run_error !== undefined) stored.run_error = before.run_error;
  write(localStorage, key, stored);
  write(sessionStorage, TAB_KEY, stored);
  if (before === null) prune();
}

/** The stored error of the session's last failed run, as [invocation id, error]. */
export function storedRunError(id: string): [string, string] | null {
  return read(localStorage, PREFIX + id)?.run_error ?? null;
}

export function keepRunError(id: string, invocation: string, error: string): void {
  const stored = read(localStorage, PREFIX + id);
  if (stored !== null) write(localStorage, PREFIX + id, { ...stored, run_error: [invocation, error] });
}

/** This tab leaves its session (New session): the next page it shows opens a new one. */
export function leaveSession(): void {
  sessionStorage.removeItem(TAB_KEY);
}

/** Forgets the least recently used sessions beyond {@link KEPT}. */
function prune(): void {
  const all: Stored[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    const stored = key !== null && key.startsWith(PREFIX) ? read(localStorage, key) : null;
    if (stored !== null) all.push(stored);
  }
  all.sort((a, b) => b.used - a.used);
  for (const old of all.slice(KEPT)) localStorage.removeItem(PREFIX + old.session_id);
}
