//! `chat.retry` (`spec/retry.md`): cut the latest turn right after one of its items, durably, and
//! run the agent again from there, without running the kept tool calls again.

use std::sync::Arc;

use chatwire_schema::chat::retry::Retry;
use chatwire_schema::chat::retry_accepted::RetryAccepted;
use chatwire_schema::chat::subagent_started::SubagentStarted;
use chatwire_schema::error_order::first_failing;
use chatwire_schema::reducer::{is_open_call, retry_cut, retry_refusals};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ClientFrame, DisplayItem, ErrorCode, Id, ServerFrame};

use super::change::{Change, Unit};
use super::driver::run_started;
use super::launch::start_driver;
use super::outside::send_outside_state;
use super::pipeline::commit;
use super::state::{Inner, Session};
use crate::agent::Cursor;
use crate::plan::TurnPlan;
use crate::protocol::{Negotiated, Refusal};
use crate::util::rfc3339_now;

/// `chat.retry`: refused in the order of `RETRY-004` (the codes of every failing check, the first
/// in `chatwire_schema::error_order` answering), else `chat.retry_accepted` and `chat.run_started`
/// of the same invocation in one commit (`RETRY-001`), whose run slice plays the turn's
/// `retries[k]` (`SCRIPT-020`, `k` counted over the session's log).
pub(crate) async fn retry(
    session: &Arc<Session>,
    g: &mut Inner,
    negotiated: &Negotiated,
    retry: Retry,
) -> Result<(), Refusal> {
    let position = g.state.items.iter().position(|i| i.id() == &retry.after_item_id);
    let latest = g.state.latest_user_invocation().cloned();
    let offers = session.shared.offers(negotiated.version, &Capability::Retry);
    let failing = retry_refusals(&g.state, retry.after_item_id.as_str(), offers);
    if let Some(code) = first_failing("chat.retry", &failing) {
        return Err(refusal(code, &retry));
    }
    let (Some(named), Some(invocation)) = (position, latest) else {
        // Unreachable: a missing item or turn is a failing check above.
        return Err(refusal(ErrorCode::UnknownItem, &retry));
    };
    let cut = retry_cut(&g.state.items, named);
    // Fault retry-reruns-subagent: the kept hosts' sub-agents start again.
    let rerun = match session.shared.faults.decide.reruns_kept_subagents() {
        true => restarts(&g.state.items[..cut], &invocation),
        false => Vec::new(),
    };
    let removed = &g.state.items[cut..];
    let mut change = Change {
        // Deadlines of calls the cut removes end with them (RETRY-005: they are unknown now).
        remove_timers: removed.iter().filter(|i| is_open_call(i)).map(|i| i.id().clone()).collect(),
        ..Change::default()
    };
    change.units.push(Unit::Event(ServerFrame::RetryAccepted(RetryAccepted {
        seq: 0,
        in_reply_to: retry.id.clone(),
        invocation_id: invocation.clone(),
        after_item_id: retry.after_item_id.clone(),
        removed_item_ids: removed.iter().map(|i| i.id().clone()).collect(),
        ts: rfc3339_now(),
    })));
    change.units.push(Unit::Event(run_started(&invocation)));
    let turn = g.history.turns.get(&invocation).copied();
    let k = g.history.retries.get(&invocation).copied().unwrap_or(0);
    let user_text = g.state.items.iter().find_map(|i| match i {
        DisplayItem::UserMessage(m) if m.invocation_id == invocation => Some(m.text.clone()),
        _ => None,
    });
    let plan = turn
        .and_then(|n| g.agent.plan_retry(n, k, user_text.as_deref().unwrap_or_default()))
        .map(|turn| Arc::new(TurnPlan::from(turn)));
    change.plan = Some(plan);
    change.cursor = Some(Cursor {
        invocation_id: Some(invocation.clone()),
        step: 0,
        batch: None,
        stream: None,
        usage: None,
        outer: Vec::new(),
        ..g.cursor.clone()
    });
    change.requests.push(ClientFrame::Retry(retry));
    commit(session, g, change).await?;
    *g.history.retries.entry(invocation).or_default() += 1;
    let conns: Vec<_> = g.attached.iter().map(|a| a.conn.clone()).collect();
    for frame in rerun {
        for conn in &conns {
            send_outside_state(session, g, conn, frame.clone()).await;
        }
    }
    start_driver(session, g);
    Ok(())
}

/// A `chat.subagent_started` for each host of `invocation` among `kept`, as a server that runs
/// kept sub-agents again would send (fault `retry-reruns-subagent`).
fn restarts(kept: &[DisplayItem], invocation: &Id) -> Vec<ServerFrame> {
    let hosts = kept.iter().filter_map(|i| match i {
        DisplayItem::ToolCall(c) if &c.invocation_id == invocation => c.subagent.as_deref().map(|s| (c, s)),
        _ => None,
    });
    hosts
        .map(|(call, sub)| {
            ServerFrame::SubagentStarted(SubagentStarted {
                seq: 0,
                tool_call_id: call.id.clone(),
                thread_id: sub.thread_id.clone(),
                name: sub.name.clone(),
                input: sub.input.clone(),
                continues: None,
                answers_return: false,
                ts: rfc3339_now(),
            })
        })
        .collect()
}

/// The refusal for `code`, with its one sentence.
fn refusal(code: ErrorCode, retry: &Retry) -> Refusal {
    let item = &retry.after_item_id;
    let message = match code {
        ErrorCode::CapabilityNotOffered => "this server does not offer retry".to_owned(),
        ErrorCode::RunInProgress => "a run is in progress; wait for run_complete".to_owned(),
        ErrorCode::UnknownItem => format!("no item {item} in the effective state"),
        ErrorCode::ItemNotInLatestTurn => format!("item {item} is not in the latest turn"),
        ErrorCode::RetryKeepsOpenCall => format!("a tool call up to item {item} is still open"),
        other => format!("retry refused: {other}"),
    };
    Refusal::new(code, message)
}
