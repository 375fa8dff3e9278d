//! `chat.history_request` (`spec/window.md#paging-back`): the page just before a windowed
//! connection's cursor, sent to it alone, and its window moved to hold the page.

use std::sync::Arc;

use chatwire_schema::chat::history_page::HistoryPage;
use chatwire_schema::chat::history_request::HistoryRequest;
use chatwire_schema::error_order::first_failing;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ErrorCode, ServerFrame};

use super::outside::send_outside_state;
use super::state::{Inner, Session};
use super::view::seen_state;
use crate::outbox::ConnHandle;
use crate::protocol::Refusal;

/// Answers `request` with a `chat.history_page`, or refuses it in the order of `WINDOW-007` and
/// `WINDOW-010` (nothing changes then). The page takes a seq and changes no state (`WINDOW-008`).
pub(crate) async fn history(
    session: &Arc<Session>,
    g: &mut Inner,
    conn: &ConnHandle,
    request: HistoryRequest,
) -> Result<(), Refusal> {
    let window_faults = &session.shared.faults.window;
    let negotiated = &conn.negotiated;
    // The state as this connection sees it, borrowed: a page costs its own items, not the thread's.
    let seen = seen_state(&g.state, negotiated.has(&Capability::AssistantStream), negotiated.version);
    let Some(attachment) = g.attached.iter_mut().find(|a| a.conn.id == conn.id) else { return Ok(()) };
    let current = attachment.window.as_ref().and_then(|w| w.cursor(&seen));
    let cached = attachment.page_cache.as_ref().and_then(|cache| {
        let at = cache.iter().position(|item| item.id() == &request.before)?;
        Some(cache[at.saturating_sub(request.limit as usize)..at].to_vec())
    });
    let mut failing = Vec::new();
    if !negotiated.has(&Capability::StateWindow) {
        failing.push(ErrorCode::CapabilityNotOffered);
    }
    // A transcript's page (since 1.3, WINDOW-016) names a host; the reference offers no
    // sub-agents, so no connection holds one.
    if (current.as_ref() != Some(&request.before) && cached.is_none()) || request.tool_call_id.is_some() {
        failing.push(ErrorCode::StaleCursor);
    }
    if let Some(code) = first_failing("chat.history_request", &failing) {
        let message = match code {
            ErrorCode::CapabilityNotOffered => "state_window is not in force on this connection".to_owned(),
            _ => format!("{} is not this connection's cursor; page from the latest window's", request.before),
        };
        return Err(Refusal::new(code, message));
    }
    let (items, before) = match (current.as_ref() == Some(&request.before), attachment.window.as_mut()) {
        (true, Some(window)) => {
            let cursor_item = window.cursor_item(&seen);
            let page = window.page(&seen, request.limit);
            (window_faults.page_items(page.items.to_vec(), cursor_item), page.before)
        }
        // The planted fault `page-from-cache`: a cursor the copy holds is answered from it.
        _ => {
            let items = cached.unwrap_or_default();
            let before = items.first().map(|i| i.id().clone());
            (items, before)
        }
    };
    let page = HistoryPage {
        seq: 0,
        in_reply_to: request.id,
        tool_call_id: None,
        items,
        before,
        total: seen.items.len() as u64,
    };
    drop(seen);
    send_outside_state(session, g, conn, ServerFrame::HistoryPage(page)).await;
    Ok(())
}
