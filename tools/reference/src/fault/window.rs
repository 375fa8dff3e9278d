//! The window seam: what a windowed connection holds and is sent (`spec/window.md`).

use chatwire_schema::DisplayItem;

use super::list::{Fault, NoFault};

/// Faults of windows and pages; the defaults are the correct server.
pub(crate) trait WindowFaults: Send + Sync + std::fmt::Debug {
    /// Whether a window holds the always-held items older than it (`WINDOW-003`).
    fn pins_older_items(&self) -> bool {
        true
    }

    /// Whether a windowed connection's patches are projected onto its view (`WINDOW-005`).
    fn projects_patches(&self) -> bool {
        true
    }

    /// The items a `chat.history_page` carries, given the right ones and the cursor item.
    fn page_items(&self, items: Vec<DisplayItem>, _cursor_item: Option<&DisplayItem>) -> Vec<DisplayItem> {
        items
    }

    /// Whether pages come from a copy of the older items taken when the window opened, for any
    /// cursor that copy holds (`WINDOW-010`).
    fn pages_from_cache(&self) -> bool {
        false
    }
}

impl WindowFaults for NoFault {}

impl WindowFaults for Fault {
    fn pins_older_items(&self) -> bool {
        *self != Fault::WindowDropsOldPendingCall
    }

    fn projects_patches(&self) -> bool {
        *self != Fault::UnheldChangeSent
    }

    fn page_items(&self, mut items: Vec<DisplayItem>, cursor_item: Option<&DisplayItem>) -> Vec<DisplayItem> {
        match self {
            Fault::PageSkipsBoundaryItem => {
                items.pop();
            }
            Fault::PageRepeatsBoundaryItem => items.extend(cursor_item.cloned()),
            _ => {}
        }
        items
    }

    fn pages_from_cache(&self) -> bool {
        *self == Fault::PageFromCache
    }
}
