//! Which rule of `spec/ui-state.md#reducer-rules` an event falls under, and which refusal rules the
//! reducer checks it against: the tables the runner's oracle reports under, declared here beside
//! the reducer that applies them so the two cannot drift.

use crate::ui_event::UiEvent;
use crate::ReqId;

const fn r(id: &'static str) -> ReqId {
    ReqId::new(id)
}

/// Every refusal rule the reducer enforces (`STATE-006` and the rules each [`ReduceError`]
/// names), the requirements of the runner's "events follow the reducer's rules" check.
///
/// [`ReduceError`]: super::ReduceError
pub const REFUSAL_RULES: &[ReqId] = &[
    r("STATE-006"),
    r("STATE-015"),
    r("STATE-020"),
    r("STATE-021"),
    r("STATE-022"),
    r("STATE-023"),
    r("STATE-024"),
    r("STATE-025"),
    r("STATE-026"),
    r("STATE-027"),
    r("STATE-028"),
    r("STATE-030"),
    r("STATE-031"),
    r("STATE-032"),
    r("STATE-033"),
    r("STATE-034"),
    r("STATE-035"),
    r("STATE-045"),
    r("STATE-046"),
    r("STATE-047"),
    r("STATE-048"),
    r("STATE-049"),
    r("STATE-050"),
    r("STATE-051"),
    r("STATE-058"),
    r("STATE-059"),
    r("STATE-060"),
    r("STATE-061"),
    r("STATE-062"),
    r("STATE-063"),
    r("STATE-068"),
    r("STATE-069"),
    r("STATE-070"),
    r("STATE-071"),
    r("STATE-072"),
    r("STATE-073"),
    r("STATE-074"),
    r("STATE-075"),
];

impl UiEvent<'_> {
    /// The reducer rule this event falls under (`STATE-010`..`STATE-019`, `STATE-042`..`STATE-044`).
    pub fn rule(&self) -> ReqId {
        match self {
            UiEvent::UserMessageAccepted(_) => r("STATE-010"),
            UiEvent::RunStarted(_) => r("STATE-011"),
            UiEvent::AssistantMessage(_) => r("STATE-012"),
            UiEvent::ToolCall(_) => r("STATE-013"),
            UiEvent::ToolProgress(_) => r("STATE-014"),
            UiEvent::ToolOutput(_) => r("STATE-015"),
            UiEvent::ToolCallComplete(_) => r("STATE-016"),
            UiEvent::ToolCallDismiss(_) => r("STATE-017"),
            UiEvent::RunComplete(_) => r("STATE-018"),
            UiEvent::RewindComplete(_) => r("STATE-019"),
            UiEvent::AssistantMessageDelta(_) => r("STATE-042"),
            UiEvent::RetryAccepted(_) => r("STATE-044"),
            UiEvent::ReasoningDelta(_) => r("STATE-054"),
            UiEvent::Reasoning(_) => r("STATE-055"),
            UiEvent::SubagentStarted(_) => r("STATE-064"),
            UiEvent::SubagentComplete(_) => r("STATE-066"),
        }
    }

    /// The refusal rules the reducer checks this event against; an event it accepts kept them all.
    pub fn refusal_rules(&self) -> &'static [ReqId] {
        match self {
            UiEvent::UserMessageAccepted(_) => {
                const { &[r("STATE-020"), r("STATE-021"), r("STATE-023"), r("STATE-032")] }
            }
            UiEvent::RunStarted(_) => const { &[r("STATE-023"), r("STATE-024"), r("STATE-034")] },
            UiEvent::AssistantMessage(_) => {
                const { &[r("STATE-020"), r("STATE-022"), r("STATE-046"), r("STATE-047"), r("STATE-060"), r("STATE-071")] }
            }
            UiEvent::AssistantMessageDelta(_) => {
                const { &[r("STATE-022"), r("STATE-045"), r("STATE-046"), r("STATE-060"), r("STATE-071")] }
            }
            UiEvent::ToolCall(_) => {
                const {
                    &[
                        r("STATE-015"),
                        r("STATE-020"),
                        r("STATE-022"),
                        r("STATE-035"),
                        r("STATE-046"),
                        r("STATE-060"),
                        r("STATE-071"),
                    ]
                }
            }
            UiEvent::ToolProgress(_) => const { &[r("STATE-025"), r("STATE-026"), r("STATE-027")] },
            UiEvent::ToolOutput(_) => {
                const { &[r("STATE-015"), r("STATE-020"), r("STATE-025"), r("STATE-026"), r("STATE-074")] }
            }
            UiEvent::ToolCallComplete(_) => const { &[r("STATE-025"), r("STATE-026"), r("STATE-028"), r("STATE-073")] },
            UiEvent::ToolCallDismiss(_) => const { &[r("STATE-025"), r("STATE-026"), r("STATE-073")] },
            UiEvent::RunComplete(_) => {
                const {
                    &[
                        r("STATE-022"),
                        r("STATE-030"),
                        r("STATE-031"),
                        r("STATE-046"),
                        r("STATE-059"),
                        r("STATE-060"),
                        r("STATE-063"),
                    ]
                }
            }
            UiEvent::RewindComplete(_) => const { &[r("STATE-023"), r("STATE-024"), r("STATE-033")] },
            UiEvent::RetryAccepted(_) => {
                const { &[r("STATE-023"), r("STATE-048"), r("STATE-049"), r("STATE-050"), r("STATE-051")] }
            }
            UiEvent::ReasoningDelta(_) => const { &[r("STATE-022"), r("STATE-058"), r("STATE-060"), r("STATE-071")] },
            UiEvent::Reasoning(_) => {
                const { &[r("STATE-020"), r("STATE-022"), r("STATE-060"), r("STATE-061"), r("STATE-062"), r("STATE-071")] }
            }
            UiEvent::SubagentStarted(_) => {
                const { &[r("STATE-022"), r("STATE-025"), r("STATE-068"), r("STATE-069"), r("STATE-070")] }
            }
            UiEvent::SubagentComplete(_) => {
                const { &[r("STATE-022"), r("STATE-025"), r("STATE-071"), r("STATE-072"), r("STATE-075")] }
            }
        }
    }
}
