// The reference chat page: a ChatwireClient on the page's own origin (`/ws`), rendering the
// UiState it holds. The address names the session (`/#session=<id>`, ui/sessions.ts), so a reload
// resumes it and shows the same state (a completed form stays completed), and a second tab on the
// same address shows the same conversation. With protocol 1.2's `multi_attach` every such tab stays
// live (spec/attach.md): what one tab does (a message, an answer, a Stop) reaches the others as
// state. A tab whose session went elsewhere (another tab took it over, or the server detached it,
// the oldest, past its bound) says so and offers "Use here", which takes the session over.
// A long thread opens with a window of its newest items (1.2, `state_window`, spec/window.md) and
// loads older ones as the user scrolls up (ui/older.ts).
import { ChatwireClient, ChatwireError, type ClientStatus, type DisplacedCode } from "../dist/index.js";
import { Follow } from "./follow.js";
import { anchor, OlderLoader } from "./older.js";
import { Renderer } from "./render.js";
import { addressedSession, keepRunError, keepSession, leaveSession, sessionToResume, showInAddress, storedRunError } from "./sessions.js";
import { StopButton } from "./stop.js";

/** The newest items a page opens a session with; older ones load as the user scrolls up. */
const WINDOW_ITEMS = 100;
/** The items each scroll to the top loads. */
const PAGE_ITEMS = 100;

/** What the page says while it cannot send, by connection status. */
const OFFLINE: { readonly [S in ClientStatus]?: string } = {
  reconnecting: "Connection lost. Reconnecting; answers are paused until it is back.",
  closed: "Can't reach the server. Your conversation is kept; check your connection, then retry.",
};

/**
 * How many reconnection attempts the page makes before it gives up (the client's default, 10,
 * unless the address says `?retries=N`, 1 to 10: a way to see the page give up without waiting).
 */
function reconnectAttempts(): number | undefined {
  const asked = Number(new URLSearchParams(location.search).get("retries"));
  return Number.isInteger(asked) && asked >= 1 && asked <= 10 ? asked : undefined;
}

/** Whether the page is used with a finger or on a narrow screen: no keyboard hints there. */
const touch = (): boolean => matchMedia("(max-width: 600px), (pointer: coarse)").matches;

/** What the page says when its session went to another tab, by how (`client.displaced`). */
function elsewhereText(code: DisplacedCode, bound: number | undefined): string {
  const then = "Use here to continue in this tab (the others stop).";
  return code === "session_taken_over"
    ? `Another tab or window took this conversation over, so this one stopped. ${then}`
    : `This conversation is open in too many tabs or windows${bound === undefined ? "" : ` (${bound} stay live at once)`}, so this one, open the longest, stopped. ${then}`;
}

/** A refusal that means another tab answered the call first: the state already shows how it settled. */
function answeredElsewhere(error: unknown): boolean {
  return error instanceof ChatwireError && (error.code === "tool_call_settled" || error.code === "tool_call_not_awaiting");
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
  const label = byId("artifacts-count");
  const setOpen = (open: boolean): void => {
    document.body.dataset["artifacts"] = open ? "open" : "closed";
    toggle.setAttribute("aria-expanded", String(open));
  };
  setOpen(false);
  toggle.addEventListener("click", () => setOpen(document.body.dataset["artifacts"] !== "open"));
  byId("artifacts-close").addEventListener("click", () => setOpen(false));
  // No artifacts, no panel: the button and (on a wide screen) the column appear with the first one.
  const count = (): void => {
    const n = list.children.length;
    label.textContent = String(n);
    toggle.hidden = n === 0;
    document.body.dataset["artifactCount"] = String(n);
    if (n === 0) setOpen(false);
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
  const { resume, unknown } = sessionToResume();
  if (unknown) showNotice("This link names a conversation this browser does not hold (the key to it stays in the browser that opened it), so a new conversation was started.");
  const attempts = reconnectAttempts();
  const client = new ChatwireClient({
    url: `${scheme}://${location.host}/ws`,
    resume,
    clientName: "chatwire reference page",
    window: WINDOW_ITEMS,
    ...(attempts === undefined ? {} : { reconnect: { maxAttempts: attempts } }),
  });
  // Answering a call another tab answered first is refused: say so gently, the state shows the answer.
  const settledElsewhere = (error: unknown): undefined => {
    if (!answeredElsewhere(error)) throw error;
    showNotice("That was already answered in another tab or window; its answer stands.");
    return undefined;
  };
  const showArtifact = artifactsPanel(byId("artifact-list"));
  const older = new OlderLoader(
    byId("transcript"),
    {
      hasOlder: () => client.hasOlder,
      ready: () => client.status === "open" && client.state !== null,
      load: () => client.loadOlder(PAGE_ITEMS),
      retryable: (error) => error instanceof ChatwireError && error.code === "stale_cursor",
    },
    (message) => showError(message),
  );
  const renderer = new Renderer(
    {
      older: older.line,
      conversation: byId("conversation"),
      transcript: byId("transcript"),
      view: byId("view"),
      viewHeading: byId("view-heading"),
      viewBody: byId("view-body"),
      artifacts: byId("artifact-list"),
      composer: byId("composer"),
      inputRequest: byId("input-request"),
      run: byId("run"),
      usageTotal: byId("usage-total"),
    },
    { submit: (id, value) => client.submit(id, value).catch(settledElsewhere), dismiss: (id) => client.dismiss(id).catch(settledElsewhere) },
    showError,
    showArtifact,
  );
  const stored = resume === null ? null : storedRunError(resume.session_id);
  if (stored !== null) renderer.runFailed(...stored);
  const follow = new Follow(byId("transcript"), byId("new-messages"));
  byId("view-back").addEventListener("click", () => renderer.leaveView());

  const connection = byId("connection");
  const offline = byId("offline");
  const composerControls = byId<HTMLFieldSetElement>("composer-controls");
  const offlineText = byId("offline-text");
  const retry = byId<HTMLButtonElement>("retry");
  const run = byId("run");
  const elsewhere = byId("elsewhere");
  const useHere = byId<HTMLButtonElement>("use-here");
  /** The reconnection attempt under way, said while reconnecting ("attempt 3 of 10"). */
  let attempt: { n: number; of: number } | null = null;
  // A reload resumes the same conversation from this browser's storage: the retry after giving up.
  retry.addEventListener("click", () => location.reload());
  /** "Use here" was pressed and the takeover's welcome has not come yet. */
  let takingOver = false;
  const setStatus = (status: ClientStatus): void => {
    if (status === "open" || status === "closed") takingOver = false;
    // A session that went to another tab is not a lost connection: it is live there.
    const displaced = client.displaced;
    connection.textContent = displaced === null ? status : "elsewhere";
    document.body.dataset["connection"] = displaced === null ? status : "elsewhere";
    if (displaced === null) delete document.body.dataset["displaced"];
    else document.body.dataset["displaced"] = displaced;
    // Nothing can be sent unless the connection is open: say so, and disable every form.
    const answerable = status === "open";
    renderer.setAnswerable(answerable);
    composerControls.disabled = !answerable;
    if (status !== "reconnecting") attempt = null;
    const said = displaced !== null ? undefined : takingOver ? "Opening the conversation here…" : OFFLINE[status];
    const counted = status === "reconnecting" && attempt !== null ? ` (attempt ${attempt.n} of ${attempt.of})` : "";
    offlineText.textContent = said === undefined ? "" : said.replace("Reconnecting;", `Reconnecting${counted};`);
    offline.hidden = said === undefined;
    const gaveUp = status === "closed" && displaced === null;
    retry.hidden = !gaveUp;
    document.body.dataset["gaveUp"] = String(gaveUp);
    // Given up, the page no longer knows how the run goes: its badge says so rather than "running".
    if (gaveUp) {
      run.textContent = "unknown";
      run.dataset["runStatus"] = "unknown";
      byId("error").hidden = true;
      // Nothing can be stopped from here any more: no Stop beside an unknown run.
      document.getElementById("stop")?.setAttribute("hidden", "");
    }
    if (displaced !== null) byId("elsewhere-text").textContent = elsewhereText(displaced, client.session?.limits.max_attached_connections);
    elsewhere.hidden = displaced === null;
    useHere.disabled = displaced === null;
  };
  useHere.addEventListener("click", () => {
    useHere.disabled = true;
    byId("error").hidden = true;
    takingOver = true;
    client.takeOver().catch((error: Error) => {
      useHere.disabled = client.displaced === null;
      showError(`use here: ${error.message}`);
    });
  });
  setStatus(client.status);
  client.on("status", setStatus);
  client.on("reconnect", (r) => {
    attempt = { n: r.attempt, of: r.maxAttempts };
    setStatus(client.status);
  });
  client.on("session", (session) => {
    keepSession(session);
    // The address names the session: copy it, or open it in another tab, to see the same conversation.
    showInAddress(session.session_id);
    document.body.dataset["session"] = session.session_id;
    document.body.dataset["attached"] = String(client.attached);
  });
  client.on("frame", (frame) => {
    if (frame.type === "chat.run_complete" && frame.status === "failed") {
      const error = frame.error ?? "no reason given";
      const session = client.session?.session_id;
      if (session !== undefined) keepRunError(session, frame.invocation_id, error);
      renderer.runFailed(frame.invocation_id, error);
    }
  });
  client.on("error", (error) => {
    if (error.code === "resume_rejected") {
      // The server no longer knows the session (restarted with a fresh store, or the session
      // expired); the client has opened a new one. Say so plainly: the transcript starts over.
      showNotice("This conversation is no longer on the server (it may have restarted), so a new conversation was started.");
      return;
    }
    // The banner above says where the session went, with its "Use here"; the offline banner says
    // the page gave up, with its Retry: one banner each, never a second one with the raw cause.
    if (error.code === "session_taken_over" || error.code === "session_detached" || error.code === "unreachable") return;
    showError(`${error.code}: ${error.message}`);
  });
  const stop = new StopButton(byId("run"), { canCancel: () => client.session?.capabilities.includes("cancel") ?? false, cancel: (id) => client.cancel(id) }, showError);
  stop.setSendable(client.status === "open");
  client.on("status", (status) => stop.setSendable(status === "open"));
  client.on("status", () => older.later());
  const transcript = byId("transcript");
  client.subscribe((state) => {
    // A page of older items goes above what the user reads: keep that where it is.
    const keep = anchor(transcript);
    renderer.render(state, client.window?.before ?? null);
    keep();
    stop.render(state);
    document.body.dataset["older"] = String(client.hasOlder);
    older.later();
  });

  const composer = byId<HTMLFormElement>("composer");
  const message = byId<HTMLTextAreaElement>("message");
  // "Shift+Enter" means nothing on a phone: the hint is for keyboards only.
  const hint = (): void => {
    message.placeholder = touch() ? "Message" : "Message (Enter sends, Shift+Enter for a new line)";
  };
  hint();
  matchMedia("(max-width: 600px), (pointer: coarse)").addEventListener("change", hint);
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
      (error: Error) =>
        showError(
          error instanceof ChatwireError && error.code === "run_in_progress"
            ? "A reply is still running (it may have been started in another tab). Wait for it, or stop it, then send again."
            : error.message,
        ),
    );
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  byId("new-session").addEventListener("click", () => {
    // This tab leaves the conversation (it stays open, and resumable, in any other tab).
    client.close();
    leaveSession();
    history.replaceState(null, "", `${location.pathname}${location.search}`);
    location.reload();
  });
  // An address naming another conversation (a link pasted into this tab's address bar changes only
  // the fragment, which loads nothing): open that one.
  addEventListener("hashchange", () => {
    const named = addressedSession();
    if (named !== null && named !== client.session?.session_id) {
      client.close();
      location.reload();
    }
  });
  client.connect().catch((error: Error & { code?: string }) => {
    if (error.code !== "unreachable") showError(error.message);
  });
}

start();
