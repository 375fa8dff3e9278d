/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

export type { ServerFrame, Capability, DisplayItem, Fraction, ApprovalDecision, Id, ProtocolVersion, Limits, UiState, Progress, Dismissal, RunState, UiState1 } from "./server-frame";
export type { ClientFrame, ScriptStep, Resume, AgentScript, ScriptTurn, ScriptToolCall, ScriptProgress, ScriptOutput } from "./client-frame";
export type { ChatAssistantMessage } from "./chat.assistant_message";
export type { ChatRewind } from "./chat.rewind";
export type { ChatRewindComplete } from "./chat.rewind_complete";
export type { ChatRunComplete } from "./chat.run_complete";
export type { ChatRunStarted } from "./chat.run_started";
export type { ChatToolCall } from "./chat.tool_call";
export type { ChatToolCallComplete } from "./chat.tool_call_complete";
export type { ChatToolCallDismiss } from "./chat.tool_call_dismiss";
export type { ChatToolCallResponse } from "./chat.tool_call_response";
export type { ChatToolOutput } from "./chat.tool_output";
export type { ChatToolProgress } from "./chat.tool_progress";
export type { ChatUserMessage } from "./chat.user_message";
export type { ChatUserMessageAccepted } from "./chat.user_message_accepted";
export type { Baseline, BaselineEntry } from "./conformance-baseline";
export type { RunReport, Summary, ScenarioReport, CheckReport, Finding, SweepVariant, StaleEntry, BackendLog, SweepSummary } from "./conformance-report";
export type { Error as ErrorFrame } from "./error";
export type { RequirementId, Step, Scenario } from "./scenario";
export type { SessionHello } from "./session.hello";
export type { SessionWelcome } from "./session.welcome";
export type { UiStateSnapshot } from "./ui_state_snapshot";
export type { UiStateUpdated } from "./ui_state_updated";
