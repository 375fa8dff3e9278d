// The UiState a client shows. In 1.0 every state frame carries the whole state, so tracking it is
// replacing it; the tracker exists so that 1.1's `ui_state_patch` (applied against its
// `base_seq`, with a resync when the base is not the state held) has one place to go.
import type { UiState, UiStateSnapshot, UiStateUpdated } from "./generated/protocol.js";

export class StateTracker {
  #state: UiState | null = null;
  #seq = -1;

  /** The current UiState, or null before the first snapshot. */
  get state(): UiState | null {
    return this.#state;
  }

  /** The `seq` of the frame that produced the current state (-1 before the first). */
  get seq(): number {
    return this.#seq;
  }

  /** A snapshot replaces whatever was held: it is authoritative (`RESUME-002`). */
  snapshot(frame: UiStateSnapshot): UiState {
    this.#state = frame.state;
    this.#seq = frame.seq;
    return frame.state;
  }

  /** An update replaces the state unless it is older than the one held. */
  update(frame: UiStateUpdated): UiState {
    if (this.#state === null || frame.seq > this.#seq) {
      this.#state = frame.state;
      this.#seq = frame.seq;
    }
    return this.#state;
  }

  /** Forgets the state (a new session starts from its own snapshot). */
  reset(): void {
    this.#state = null;
    this.#seq = -1;
  }
}
