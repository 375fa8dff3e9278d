// Tail-first windows and paged history on the client side (protocol 1.2, `state_window`,
// spec/window.md): the bounds the schema sets, and how a `chat.history_page` joins the view a
// windowed client holds. The view is the items from the cursor item on, preceded by the older items
// that are always held (a call that awaits or awaited a response, and its output, `WINDOW-003`), in
// display order; a page holds the items just before the cursor, always-held ones included.
// The bounds (`MAX_WINDOW_ITEMS`, `MAX_HISTORY_PAGE_ITEMS`) are protocol facts: ./generated/facts.ts.
import type { DisplayItem, UiState } from "./generated/protocol.js";

/**
 * The view after a page before `cursor` (`WINDOW-008`): the always-held items older than the page,
 * the page's items, then the items from the cursor item on. An always-held item the page carries
 * is held once, as the page has it (the held copy sits before the cursor item and is dropped).
 * Null when the view does not fit the page: no held item has the id `cursor`, or a page item is
 * also held from the cursor on. The input state is never changed.
 */
export function mergePage(state: UiState, cursor: string, page: readonly DisplayItem[]): UiState | null {
  const at = state.items.findIndex((item) => item.id === cursor);
  if (at < 0) return null;
  const paged = new Set(page.map((item) => item.id));
  if (paged.size !== page.length) return null;
  for (let i = at; i < state.items.length; i++) if (paged.has(state.items[i]!.id)) return null;
  const older = state.items.slice(0, at).filter((item) => !paged.has(item.id));
  return { ...state, items: [...older, ...page, ...state.items.slice(at)] };
}
