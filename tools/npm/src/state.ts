// The UiState a client shows, and the `seq` of the frame that gave it. A snapshot or a 1.0 update
// replaces the state; a 1.1 `ui_state_patch` applies to it when its `base_seq` is the held state's
// `seq` (`STATE-037`). A patch for another base, or one that fails, is refused and leaves the state
// as it was: the client then resumes (`STATE-041`) naming the held state's `seq`, and gets a
// catch-up patch from it or a snapshot (`RESUME-017`, `RESUME-018`). A 1.1 stream's delta is a
// state change of its own (`STREAM-002`): applied with `STATE-042`, it gives the state of its `seq`;
// so is a 1.3 reasoning delta, applied with `STATE-054`.
// On a windowed connection (1.2, `state_window`) the state is the view the connection holds, and a
// `chat.history_page` joins it without changing its `seq` (`WINDOW-008`).
import type { ChatAssistantMessageDelta, ChatReasoningDelta, DisplayItem, UiState, UiStatePatch, UiStateSnapshot, UiStateUpdated } from "./generated/protocol.js";
import { applyJsonPatch, JsonPatchError } from "./json_patch.js";
import { applyDelta, applyReasoningDelta, type DeltaRefusal } from "./stream.js";
import { mergePage } from "./window.js";

/** Why a patch or a delta was not applied: no state is held, a patch's base is not the state held, a patch op failed, or the reducer refused a delta. */
export type PatchRefusal =
  | { reason: "base_mismatch"; held: number | null; base_seq: number }
  | { reason: "patch_failed"; error: JsonPatchError }
  | { reason: "delta_refused"; refusal: DeltaRefusal | "no_state"; message: string };

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

  /**
   * Applies a patch to the held state when `base_seq` is its `seq`; all or nothing. The new state
   * shares every untouched part with the old one (the old one is never changed).
   */
  patch(frame: UiStatePatch): { ok: true; state: UiState } | ({ ok: false } & PatchRefusal) {
    if (this.#state === null || frame.base_seq !== this.#seq) {
      return { ok: false, reason: "base_mismatch", held: this.#state === null ? null : this.#seq, base_seq: frame.base_seq };
    }
    try {
      this.#state = applyJsonPatch(this.#state, frame.patch);
    } catch (error) {
      if (error instanceof JsonPatchError) return { ok: false, reason: "patch_failed", error };
      throw error;
    }
    this.#seq = frame.seq;
    return { ok: true, state: this.#state };
  }

  /**
   * Applies a stream's delta to the held state (`STATE-042`, or `STATE-054` for reasoning); refused,
   * the state stays as it was and the client resumes as for a failing patch (`STREAM-007`).
   */
  delta(frame: ChatAssistantMessageDelta | ChatReasoningDelta): { ok: true; state: UiState } | ({ ok: false } & PatchRefusal) {
    if (this.#state === null) return { ok: false, reason: "delta_refused", refusal: "no_state", message: "no state is held" };
    const result = frame.type === "chat.reasoning_delta" ? applyReasoningDelta(this.#state, frame) : applyDelta(this.#state, frame);
    if (!result.ok) return { ok: false, reason: "delta_refused", refusal: result.refusal, message: result.message };
    this.#state = result.state;
    this.#seq = frame.seq;
    return { ok: true, state: this.#state };
  }

  /**
   * Joins a `chat.history_page` before `cursor` to the view held (`WINDOW-008`, {@link mergePage});
   * a page changes no state, so the `seq` stays. Null, the state unchanged, when it does not fit.
   */
  page(cursor: string, items: readonly DisplayItem[]): UiState | null {
    if (this.#state === null) return null;
    const merged = mergePage(this.#state, cursor, items);
    if (merged !== null) this.#state = merged;
    return merged;
  }

  /** Forgets the state (a new session starts from its own snapshot). */
  reset(): void {
    this.#state = null;
    this.#seq = -1;
  }
}
