// The reference chat page: a ChatwireClient on the page's own origin (`/ws`), rendering the
// UiState it holds. The session (id, resume token, last seq) is kept in sessionStorage, so a
// reload resumes the same session and shows the same state (a completed form stays completed).
import { ChatwireClient, type ClientStatus, type SessionResume } from "../dist/index.js";
import { Follow } from "./follow.js";
import { Renderer } from "./render.js";
import { StopButton } from "./stop.js";

const STORAGE_KEY = "chatwire.session";
/** The last failed run's error: `chat.run_complete` carries it, the UiState does not. */
const RUN_ERROR_KEY = "chatwire.run-error";

/** What the page says while it cannot send, by connection status. */
const OFFLINE: { readonly [S in ClientStatus]?: string } = {
  reconnecting: "Connection lost. Reconnecting; answers are paused until it is back.",
  closed: "Disconnected. Reload the page to connect again.",
};

/** The stored session, or null when there is none or it is not what this page wrote. */
function storedSession(): SessionResume | null {
  try {
    const raw: unknown = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? "null");
    if (typeof raw !== "object" || raw === null) return null;
    const { session_id, resume_token, last_seq } = raw as Record<string, unknown>;
    if (typeof session_id !== "string" || typeof resume_token !== "string" || typeof last_seq !== "number") return null;
    return { session_id, resume_token, last_seq };
  } catch {
    return null;
  }
}

/** The stored error of the last failed run, as [invocation id, error]. */
function storedRunError(): [string, string] | null {
  try {
    const raw: unknown = JSON.parse(sessionStorage.getItem(RUN_ERROR_KEY) ?? "null");
    if (!Array.isArray(raw)) return null;
    const [invocation, error] = raw as unknown[];
    return typeof invocation === "string" && typeof error === "string" ? [invocation, error] : null;
  } catch {
    return null;
  }
}

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** A banner with a text and a Dismiss button that hides it. */
function banner(id: string): (message: string) => void {
  const box = byId(id);
  const text = byId(`${id}-text`);
  box.querySelector("button.dismiss")?.addEventListener("click", () => {
    box.hidden = true;
  });
  return (message) => {
    text.textContent = message;
    box.hidden = false;
  };
}

/**
 * The artifacts panel's toggle (narrow screens: the panel covers the transcript while open);
 * returns how to bring one artifact into sight.
 */
function artifactsPanel(list: HTMLElement): (callId: string) => void {
  const toggle = byId("artifacts-toggle");
  const setOpen = (open: boolean): void => {
    document.body.dataset["artifacts"] = open ? "open" : "closed";
    toggle.setAttribute("aria-expanded", String(open));
  };
  setOpen(false);
  toggle.addEventListener("click", () => setOpen(document.body.dataset["artifacts"] !== "open"));
  byId("artifacts-close").addEventListener("click", () => setOpen(false));
  const count = (): void => {
    toggle.textContent = `Artifacts (${list.children.length})`;
  };
  count();
  new MutationObserver(count).observe(list, { childList: true });
  return (callId) => {
    setOpen(true);
    const card = list.querySelector<HTMLElement>(`[data-tool-call-id="${CSS.escape(callId)}"]`);
    if (card === null) return;
    card.scrollIntoView({ block: "nearest" });
    // A short highlight says which card the button meant (the animation restarts on each click).
    card.classList.remove("spotlight");
    void card.offsetWidth;
    card.classList.add("spotlight");
  };
}

function start(): void {
  const showError = banner("error");
  const showNotice = banner("notice");
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const client = new ChatwireClient({ url: `${scheme}://${location.host}/ws`, resume: storedSession(), clientName: "chatwire reference page" });
  const showArtifact = artifactsPanel(byId("artifact-list"));
  const renderer = new Renderer(
    {
      conversation: byId("conversation"),
      transcript: byId("transcript"),
      view: byId("view"),
      viewHeading: byId("view-heading"),
      viewBody: byId("view-body"),
      artifacts: byId("artifact-list"),
      composer: byId("composer"),
      inputRequest: byId("input-request"),
      run: byId("run"),
    },
    { submit: (id, value) => client.submit(id, value), dismiss: (id) => client.dismiss(id) },
    showError,
    showArtifact,
  );
  const stored = storedRunError();
  if (stored !== null) renderer.runFailed(...stored);
  const follow = new Follow(byId("transcript"), byId("new-messages"));
  byId("view-back").addEventListener("click", () => renderer.leaveView());

  const connection = byId("connection");
  const offline = byId("offline");
  const composerControls = byId<HTMLFieldSetElement>("composer-controls");
  const setStatus = (status: ClientStatus): void => {
    connection.textContent = status;
    document.body.dataset["connection"] = status;
    // Nothing can be sent unless the connection is open: say so, and disable every form.
    const answerable = status === "open";
    renderer.setAnswerable(answerable);
    composerControls.disabled = !answerable;
    offline.textContent = OFFLINE[status] ?? "";
    offline.hidden = OFFLINE[status] === undefined;
  };
  setStatus(client.status);
  client.on("status", setStatus);
  client.on("session", (session) => {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ session_id: session.session_id, resume_token: session.resume_token, last_seq: session.last_seq }));
    document.body.dataset["session"] = session.session_id;
  });
  client.on("frame", (frame) => {
    if (frame.type === "chat.run_complete" && frame.status === "failed") {
      const error = frame.error ?? "no reason given";
      sessionStorage.setItem(RUN_ERROR_KEY, JSON.stringify([frame.invocation_id, error]));
      renderer.runFailed(frame.invocation_id, error);
    }
  });
  client.on("error", (error) => {
    if (error.code === "resume_rejected") {
      // The server no longer knows the session (restarted with a fresh store, or the session
      // expired); the client has opened a new one. Say so plainly: the transcript starts over.
      sessionStorage.removeItem(RUN_ERROR_KEY);
      showNotice("This conversation is no longer on the server (it may have restarted), so a new conversation was started.");
      return;
    }
    showError(`${error.code}: ${error.message}`);
  });
  const stop = new StopButton(byId("run"), { canCancel: () => client.session?.capabilities.includes("cancel") ?? false, cancel: (id) => client.cancel(id) }, showError);
  stop.setSendable(client.status === "open");
  client.on("status", (status) => stop.setSendable(status === "open"));
  client.subscribe((state) => {
    renderer.render(state);
    stop.render(state);
  });

  const composer = byId<HTMLFormElement>("composer");
  const message = byId<HTMLTextAreaElement>("message");
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (text === "") return;
    byId("error").hidden = true;
    // The user's own message: bring them to the bottom, where it and the reply appear.
    follow.toBottom();
    client.sendMessage(text).then(
      () => {
        message.value = "";
      },
      (error: Error) => showError(error.message),
    );
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  byId("new-session").addEventListener("click", () => {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(RUN_ERROR_KEY);
    location.reload();
  });
  client.connect().catch((error: Error) => showError(error.message));
}

start();
