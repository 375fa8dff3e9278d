// The transcript follows new content while the user is at its bottom. Once the user scrolls up to
// read, new content leaves the transcript where it is and shows a "new messages" button instead,
// which scrolls to the bottom; reaching the bottom by hand hides it too. Older items put above what
// the user reads (a page of a long thread, ui/older.ts) are no new messages: only content that
// grows below the view shows the button.

/** How close to the bottom (px) still counts as "at the bottom". */
const SLACK = 24;

export class Follow {
  readonly #scroller: HTMLElement;
  readonly #button: HTMLElement;
  /** The user is at the bottom: new content scrolls into view. */
  #pinned = true;
  #lastTop = 0;
  #lastHeight = 0;
  /** The distance from the view's bottom to the content's, as last seen. */
  #lastGap = 0;

  constructor(scroller: HTMLElement, button: HTMLElement) {
    this.#scroller = scroller;
    this.#button = button;
    scroller.addEventListener("scroll", () => this.#scrolled(), { passive: true });
    button.addEventListener("click", () => this.toBottom());
    // Any change of the transcript's content (a render, a streamed delta) or of its own size (the
    // composer giving way to an input request, a view closed, a narrower window).
    new MutationObserver(() => this.#changed()).observe(scroller, { childList: true, subtree: true, characterData: true });
    new ResizeObserver(() => this.#changed()).observe(scroller);
  }

  /** Scrolls to the newest content and follows it again (the user sent a message, or asked). */
  toBottom(): void {
    this.#pinned = true;
    this.#button.hidden = true;
    this.#scroller.scrollTop = this.#scroller.scrollHeight;
    this.#lastTop = this.#scroller.scrollTop;
    this.#lastGap = this.#gap();
  }

  #gap(): number {
    const s = this.#scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight;
  }

  #scrolled(): void {
    const top = this.#scroller.scrollTop;
    // Only a move up unpins: content that grows or shrinks below never takes the user away.
    if (this.#gap() <= SLACK) {
      this.#pinned = true;
      this.#button.hidden = true;
    } else if (top < this.#lastTop) {
      this.#pinned = false;
    }
    this.#lastTop = top;
    this.#lastGap = this.#gap();
  }

  #changed(): void {
    const height = this.#scroller.scrollHeight;
    const gap = this.#gap();
    // Content grew below the view: items put above it keep the gap (ui/older.ts's anchor).
    const grewBelow = height > this.#lastHeight && gap > this.#lastGap + 1;
    this.#lastHeight = height;
    this.#lastGap = gap;
    if (this.#pinned) this.toBottom();
    else if (grewBelow && gap > SLACK) this.#button.hidden = false;
  }
}
