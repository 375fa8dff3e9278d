"""Shared paths: the tests read the corpora the Rust crate writes, from the repository."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"
