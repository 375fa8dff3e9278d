//! Chatwire reference backend (in progress).
