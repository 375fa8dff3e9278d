// The reference chat page: a ChatwireClient on the page's own origin (`/ws`), rendering the
// UiState it holds. The session (id, resume token, last seq) is kept in sessionStorage, so a
// reload resumes the same session and shows the same state (a completed form stays completed).
import { ChatwireClient, type SessionResume } from "../dist/index.js";
import { Renderer } from "./render.js";
import { StopButton } from "./stop.js";

const STORAGE_KEY = "chatwire.session";

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

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

function start(): void {
  const errorBox = byId("error");
  const showError = (message: string): void => {
    errorBox.textContent = message;
    errorBox.hidden = false;
  };
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const client = new ChatwireClient({ url: `${scheme}://${location.host}/ws`, resume: storedSession(), clientName: "chatwire reference page" });
  const renderer = new Renderer(
    {
      transcript: byId("transcript"),
      view: byId("view"),
      artifacts: byId("artifact-list"),
      composer: byId("composer"),
      inputRequest: byId("input-request"),
      run: byId("run"),
      error: errorBox,
    },
    { submit: (id, value) => client.submit(id, value), dismiss: (id) => client.dismiss(id) },
    showError,
  );
  const connection = byId("connection");
  client.on("status", (status) => {
    connection.textContent = status;
    document.body.dataset["connection"] = status;
  });
  client.on("session", (session) => {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ session_id: session.session_id, resume_token: session.resume_token, last_seq: session.last_seq }));
    document.body.dataset["session"] = session.session_id;
  });
  client.on("error", (error) => showError(`${error.code}: ${error.message}`));
  const stop = new StopButton(byId("run"), { canCancel: () => client.session?.capabilities.includes("cancel") ?? false, cancel: (id) => client.cancel(id) }, showError);
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
    errorBox.hidden = true;
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
    location.reload();
  });
  client.connect().catch((error: Error) => showError(error.message));
}

start();
