// Long threads (protocol 1.2, `state_window`): the page opens a session with a window of the newest
// items and loads older ones as the user scrolls up. A line where the window starts (after the
// always-held older items: a form asked long ago stays on top) says there is more ("Loading
// earlier messages…"); once it comes within about a screen of the view, the next page loads and
// goes in at that line without moving what the user is reading (`anchor`); the "new messages"
// button stays for content that arrives below.

/** How close to the view the "earlier messages" line loads the next page, in screens. */
const AHEAD = 1.0;

/**
 * Remembers where the last item the user sees in `scroller` is; the returned function scrolls so
 * that it is there again. A page goes in above it (where the "earlier messages" line is, after the
 * always-held items, which may leave the top), so what the user reads stays put. Nothing to keep
 * when the user is at the bottom: the transcript follows the newest content there (ui/follow.ts).
 */
export function anchor(scroller: HTMLElement): () => void {
  if (scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight <= 2) return () => undefined;
  const bottom = scroller.getBoundingClientRect().bottom;
  const children = scroller.children;
  // The children are stacked top to bottom: the last one whose top is above the bottom edge.
  let lo = 0;
  let hi = children.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (children[mid]!.getBoundingClientRect().top < bottom) lo = mid + 1;
    else hi = mid;
  }
  const node = children[lo - 1];
  if (node === undefined) return () => undefined;
  const offset = node.getBoundingClientRect().top;
  return () => {
    if (node.parentElement !== scroller) return;
    const moved = node.getBoundingClientRect().top - offset;
    if (moved !== 0) scroller.scrollTop += moved;
  };
}

/** What the loader needs from the client. */
export interface OlderSource {
  /** Whether items older than those held exist (`client.hasOlder`). */
  hasOlder(): boolean;
  /** Whether a request can be sent now (the connection is open and a state is held). */
  ready(): boolean;
  /** Loads the next page (`client.loadOlder()`), merging it into the state held. */
  load(): Promise<unknown>;
  /** Whether a refusal means "page again from the fresh window" (`stale_cursor`). */
  retryable(error: unknown): boolean;
}

/** Loads older pages while the user is near the top of the transcript, one at a time. */
export class OlderLoader {
  readonly #scroller: HTMLElement;
  readonly #source: OlderSource;
  readonly #onError: (message: string) => void;
  /** The line the transcript shows where the window starts, while older items exist. */
  readonly line: HTMLElement;
  #loading = false;
  #scheduled = false;

  constructor(scroller: HTMLElement, source: OlderSource, onError: (message: string) => void) {
    this.#scroller = scroller;
    this.#source = source;
    this.#onError = onError;
    this.line = document.createElement("div");
    this.line.id = "older";
    this.line.className = "older";
    this.line.setAttribute("role", "status");
    this.line.textContent = "Loading earlier messages…";
    this.#show(false);
    scroller.addEventListener("scroll", () => this.check(), { passive: true });
  }

  /**
   * The line turns into a loading row (a spinner, `aria-busy`) while a page is on its way. Only its
   * attributes change: new text would change the line's box right where the page goes in, and move
   * what the user reads.
   */
  #show(loading: boolean): void {
    this.line.dataset["state"] = loading ? "loading" : "idle";
    this.line.setAttribute("aria-busy", String(loading));
  }

  /** Whether a page is being loaded. */
  get loading(): boolean {
    return this.#loading;
  }

  /** Checks on the next frame (after a render, when the layout is settled). */
  later(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => {
      this.#scheduled = false;
      this.check();
    });
  }

  /** Loads the next page when older items exist and their line is within about a screen of the view. */
  check(): void {
    const s = this.#scroller;
    if (this.#loading || !this.#source.hasOlder() || !this.#source.ready() || this.line.parentElement !== s) return;
    const view = s.getBoundingClientRect();
    if (view.height === 0 || this.line.getBoundingClientRect().bottom < view.top - view.height * AHEAD) return;
    this.#loading = true;
    this.#show(true);
    this.#source.load().then(
      () => {
        this.#loading = false;
        this.#show(false);
        this.later();
      },
      (error: unknown) => {
        this.#loading = false;
        this.#show(false);
        // A cut moved the window (its fresh snapshot is already shown): page from the new cursor.
        if (this.#source.retryable(error)) this.later();
        else if (this.#source.ready()) this.#onError(`loading earlier messages: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }
}
