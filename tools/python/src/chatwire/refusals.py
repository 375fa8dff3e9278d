"""How the Python reducer refuses an event: `ReduceError`, named after the Rust variant and the rule it
breaks, and the rule most refusals begin with (`STATE-022`). Shared by reducer.py and subagents.py."""

from __future__ import annotations

from typing import Any

from chatwire import facts

JsonObject = dict[str, Any]


class ReduceError(ValueError):
    """An event the reducer refuses; `kind` is the Rust variant's name, `requirement` the rule."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.requirement = facts.REDUCE_REFUSALS[kind]


def ensure_running(state: JsonObject, invocation: str) -> None:
    """`STATE-022`: the event belongs to the run in progress."""
    run = state["run"]
    if not (run["status"] == "running" and run.get("invocation_id") == invocation):
        raise ReduceError("NotInRun", f"no run of invocation {invocation} is in progress")
