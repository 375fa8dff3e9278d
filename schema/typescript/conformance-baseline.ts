/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

export type Baseline = BaselineEntry[];

/**
 * One expected failure.
 */
export interface BaselineEntry {
  /**
   * Scenario id.
   */
  scenario: string;
  /**
   * Check id (as in the report, e.g. `step-04-expect` or `seq-increasing`).
   */
  check: string;
  /**
   * Why the failure is accepted for now (an issue link, a plan).
   */
  reason: string;
}
