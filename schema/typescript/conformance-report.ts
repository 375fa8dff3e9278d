/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A whole run: what `--report-json` writes.
 */
export interface RunReport {
  /**
   * `chatwire-conformance <version>`.
   */
  tool: string;
  /**
   * What was tested: the URL, the exec command, or `bundled reference backend`.
   */
  target: string;
  /**
   * The timeout scale used.
   */
  timeout_scale: number;
  /**
   * Wall time in milliseconds.
   */
  duration_ms: number;
  summary: Summary;
  /**
   * Per scenario, in id order.
   */
  scenarios: ScenarioReport[];
  /**
   * Baseline entries whose check no longer fails: they fail the run.
   */
  stale_baseline?: StaleEntry[];
  /**
   * Standard error of the shared backend the runner started, if any.
   */
  backend_logs?: BackendLog[];
  /**
   * The reconnect sweep's counts, when the run was a sweep (`run --sweep`).
   */
  sweep?: SweepSummary | null;
  /**
   * The exit code the run ends with.
   */
  exit_code: number;
}
/**
 * Counts.
 */
export interface Summary {
  /**
   * Scenarios run.
   */
  scenarios: number;
  /**
   * Scenarios that passed.
   */
  pass: number;
  /**
   * Scenarios with warnings only.
   */
  warn: number;
  /**
   * Scenarios not applicable.
   */
  not_applicable: number;
  /**
   * Scenarios that timed out.
   */
  timeout: number;
  /**
   * Scenarios that failed.
   */
  fail: number;
  /**
   * Scenarios the harness could not run.
   */
  harness_error: number;
  /**
   * Failing checks excused by the baseline.
   */
  baselined: number;
  /**
   * Baseline entries whose check now passes.
   */
  stale_baseline: number;
}
/**
 * The result of one scenario.
 */
export interface ScenarioReport {
  /**
   * Scenario id.
   */
  id: string;
  /**
   * Scenario title.
   */
  title: string;
  /**
   * Scenario level.
   */
  level: "must" | "should" | "may";
  /**
   * Requirement ids the scenario covers.
   */
  requirements: string[];
  /**
   * The worst verdict of its checks, baselined failures not counted.
   */
  verdict: "pass" | "warn" | "n/a" | "timeout" | "fail" | "harness-error";
  /**
   * Wall time in milliseconds.
   */
  duration_ms: number;
  /**
   * Every check, in the order they were first recorded.
   */
  checks: CheckReport[];
  /**
   * The last frames exchanged (`conn > type` sent, `conn < type` received), for context.
   */
  wire_log?: string[];
  /**
   * Standard error of a backend the runner started for this scenario alone (restart scenarios).
   */
  backend_stderr?: string | null;
  /**
   * The normalized snapshots taken, by name (for review tooling).
   */
  snapshots?: {
    [k: string]: string | undefined;
  };
  /**
   * Set on a reconnect-sweep variant (`run --sweep`): which scenario it cuts, and where.
   */
  sweep?: SweepVariant | null;
}
/**
 * The result of one check in one scenario.
 */
export interface CheckReport {
  /**
   * Stable check id (`wire-schema-valid`, `step-03-expect`, `snapshot-final`…); baselines name it.
   */
  id: string;
  /**
   * The verdict.
   */
  verdict: "pass" | "warn" | "n/a" | "timeout" | "fail" | "harness-error";
  /**
   * Requirement ids the check verifies.
   */
  requirements: string[];
  /**
   * What the check verifies, one line.
   */
  summary: string;
  /**
   * Evidence, first ones only (see `findings_dropped`).
   */
  findings?: Finding[];
  /**
   * Findings beyond the first ones that were counted but not kept.
   */
  findings_dropped?: number;
  /**
   * Set when a baseline entry expects this check to fail: the entry's reason.
   */
  baselined?: string | null;
}
/**
 * One piece of evidence for a failed check.
 */
export interface Finding {
  /**
   * What is wrong, in one or a few lines.
   */
  message: string;
  /**
   * The 1-based step during which it was seen, if any.
   */
  step?: number | null;
  /**
   * The requirement broken.
   */
  requirement?: string | null;
  /**
   * The offending frame, ids replaced by placeholders and cut to a few hundred characters.
   */
  frame?: string | null;
}
/**
 * Where a reconnect-sweep variant cut its scenario.
 */
export interface SweepVariant {
  /**
   * The scenario id.
   */
  scenario: string;
  /**
   * The connection was cut right after this server frame (1-based, counted after the first
   * welcome and snapshot).
   */
  cut_after_frame: number;
  /**
   * How many such frames the uninterrupted run received.
   */
  frames: number;
}
/**
 * A baseline entry that no longer matches a failure.
 */
export interface StaleEntry {
  /**
   * Scenario id.
   */
  scenario: string;
  /**
   * Check id.
   */
  check: string;
  /**
   * The entry's reason.
   */
  reason: string;
  /**
   * What the check did instead of failing.
   */
  now: string;
}
/**
 * Standard error captured from a backend the runner started.
 */
export interface BackendLog {
  /**
   * Which backend instance (e.g. `shared`).
   */
  label: string;
  /**
   * The last part of its standard error.
   */
  stderr: string;
}
/**
 * Counts over the reconnect sweep of a run.
 */
export interface SweepSummary {
  /**
   * Scenarios swept (at least one variant run).
   */
  scenarios: number;
  /**
   * Variants run.
   */
  variants: number;
  /**
   * Variants that failed or timed out (baselined failures not counted).
   */
  failed: number;
  /**
   * Selected scenarios the sweep does not apply to (their report says why).
   */
  not_sweepable: number;
}
