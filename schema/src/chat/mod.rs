//! Chat frames: turns, streamed assistant text, tool calls and their lifecycle, run completion,
//! rewind, retry and cancel, paged history, reasoning, and sub-agent runs.
//!
//! Spec: `spec/tool-calls.md`, `spec/run-completion.md`, `spec/rewind.md`, `spec/multi-tool.md`,
//! `spec/streaming.md`, `spec/retry.md`, `spec/cancel.md`, `spec/window.md`, `spec/reasoning.md`,
//! `spec/subagents.md`.

pub mod assistant_message;
pub mod assistant_message_delta;
pub mod cancel;
pub mod cancel_accepted;
pub mod history_page;
pub mod history_request;
pub mod reasoning;
pub mod reasoning_delta;
pub mod retry;
pub mod retry_accepted;
pub mod rewind;
pub mod rewind_complete;
pub mod run_complete;
pub mod run_started;
pub mod subagent_complete;
pub mod subagent_started;
pub mod tool_call;
pub mod tool_call_complete;
pub mod tool_call_dismiss;
pub mod tool_call_response;
pub mod tool_output;
pub mod tool_progress;
pub mod user_message;
pub mod user_message_accepted;
