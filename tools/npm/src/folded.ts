// What this client can fold, as one list: the offer comes from it (a default `session.hello` lists
// exactly these features, so a server never puts another in force), and test/offer.test.mjs proves
// that the reducer handles each feature listed and no feature left out, so the two cannot drift.
import type { Capability } from "./generated/protocol.js";

/**
 * The features whose frames and state this client applies: patches and catch-ups (1.1), text
 * deltas (`STATE-042`), attached tabs and windows (1.2), reasoning deltas (`STATE-054`), usage and
 * sub-agent transcripts (1.3): a nested delta grows the transcript its `parent_call_id` names
 * (`STATE-065`, nested.ts), every other nested change arrives as a patch.
 */
export const FOLDED_FEATURES: readonly Capability[] = Object.freeze([
  "ui_state_patch",
  "resume_catch_up",
  "assistant_stream",
  "multi_attach",
  "state_window",
  "reasoning",
  "usage",
  "subagents",
] as const);
