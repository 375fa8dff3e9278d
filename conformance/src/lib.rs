//! Chatwire conformance runner (in progress).
