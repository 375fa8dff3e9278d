// The page's Stop button (1.2, capability `cancel`, spec/cancel.md): shown while the session's run
// is `running` or `awaiting_input`, it asks the server to cancel that run's invocation. What the
// cancel does (the stream ends with the text so far, open calls are dismissed, the run completes
// `cancelled`) reaches the page as state, like everything else it shows, so a reload shows the
// same. Naming the invocation means a Stop pressed as the run ends cannot stop the next one
// (`CANCEL-001`): the server answers `run_not_active`, which the page treats as "already over".
import type { ChatCancelAccepted, UiState } from "../dist/index.js";

/** What the button needs from the client. */
export interface Canceller {
  /** Whether the server offers `cancel` on this connection (a 1.2 connection listing it). */
  canCancel(): boolean;
  cancel(invocationId: string): Promise<ChatCancelAccepted>;
}

const ACTIVE: ReadonlySet<UiState["run"]["status"]> = new Set(["running", "awaiting_input"]);

export class StopButton {
  readonly #button: HTMLButtonElement;
  readonly #canceller: Canceller;
  readonly #onError: (message: string) => void;
  /** The invocation whose run the button stops, while one is in progress. */
  #invocation: string | null = null;
  /** The invocation a cancel was sent for and not answered yet. */
  #stopping: string | null = null;
  /** Whether the connection is open: nothing can be sent while it reconnects. */
  #sendable = true;

  /** Puts the (hidden) button right after `anchor`, the run's status badge. */
  constructor(anchor: HTMLElement, canceller: Canceller, onError: (message: string) => void) {
    this.#canceller = canceller;
    this.#onError = onError;
    this.#button = document.createElement("button");
    this.#button.type = "button";
    this.#button.id = "stop";
    this.#button.className = "stop";
    this.#button.textContent = "■ Stop";
    this.#button.title = "Stop the run (the text so far stays)";
    this.#button.hidden = true;
    this.#button.addEventListener("click", () => this.#stop());
    anchor.after(this.#button);
  }

  /** Shows the button while the state's run is in progress and the server can cancel it. */
  render(state: UiState): void {
    const run = state.run;
    const active = ACTIVE.has(run.status) && run.invocation_id !== undefined && this.#canceller.canCancel();
    this.#invocation = active && run.invocation_id !== undefined ? run.invocation_id : null;
    this.#button.hidden = this.#invocation === null;
    this.#button.disabled = !this.#sendable || (this.#invocation !== null && this.#stopping === this.#invocation);
    if (this.#invocation !== null) this.#button.dataset["invocation"] = this.#invocation;
    else delete this.#button.dataset["invocation"];
  }

  /** Enables the button only while the connection is open (it stays visible while reconnecting). */
  setSendable(sendable: boolean): void {
    this.#sendable = sendable;
    this.#button.disabled = !sendable || (this.#invocation !== null && this.#stopping === this.#invocation);
  }

  #stop(): void {
    const invocation = this.#invocation;
    if (invocation === null || this.#stopping === invocation || !this.#sendable) return;
    this.#stopping = invocation;
    this.#button.disabled = true;
    this.#canceller.cancel(invocation).then(
      () => {
        // The closing frames follow the answer; the state they give hides the button.
      },
      (error: Error & { code?: string }) => {
        this.#stopping = null;
        this.#button.disabled = this.#invocation === null;
        // The run ended on its own before the cancel was committed: nothing to stop.
        if (error.code === "run_not_active") return;
        this.#onError(`stop: ${error.code === undefined ? "" : `${error.code}: `}${error.message}`);
      },
    );
  }
}
