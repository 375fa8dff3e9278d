"""Usage sums in Python (since 1.3, feature `usage`): what `chat.run_complete.usage` adds to
`state.usage`.

Spec: `spec/usage.md`, reducer rules `STATE-056`, `STATE-057`, refusals `STATE-059` (a second
currency) and `STATE-063` (a sum above 2^53 - 1). A second implementation of
`chatwire_schema::usage` (schema/src/usage.rs), proven equal to it by tests/test_reducer_traces.py
on the traces the Rust crate writes. Integers add exactly; amounts add as decimal strings, keeping
the most fractional digits of their terms, never through a float.
"""

from __future__ import annotations

import copy
from typing import Any

from chatwire.facts import MAX_SAFE_INTEGER

__all__ = ["UsageError", "add_decimals", "slice_usage", "usage_added", "usage_plus"]

JsonObject = dict[str, Any]

#: The optional integer members of a `Usage`, in the order Rust writes them.
_OPTIONAL_COUNTS = ("reasoning_tokens", "cached_input_tokens")


class UsageError(ValueError):
    """Usage that cannot be added: `kind` is `UsageCurrencyMismatch` or `UsageOverflow`, the names
    of the reducer's refusals (`STATE-059`, `STATE-063`)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _add(a: int, b: int) -> int:
    total = int(a) + int(b)
    if total > MAX_SAFE_INTEGER:
        raise UsageError("UsageOverflow", "a usage sum exceeds 2^53 - 1")
    return total


def add_decimals(a: str, b: str) -> str:
    """The exact sum of two non-negative decimal strings, with the most fractional digits of the two
    (`"0.01"` + `"0.0123"` = `"0.0223"`, `"0.5"` + `"0.5"` = `"1.0"`, `"1"` + `"2"` = `"3"`)."""
    a_int, _, a_frac = a.partition(".")
    b_int, _, b_frac = b.partition(".")
    scale = max(len(a_frac), len(b_frac))
    total = str(int(a_int + a_frac.ljust(scale, "0")) + int(b_int + b_frac.ljust(scale, "0")))
    if scale == 0:
        return total
    total = total.rjust(scale + 1, "0")
    return f"{total[:-scale]}.{total[-scale:]}"


def usage_plus(a: JsonObject, b: JsonObject) -> JsonObject:
    """`a + b`, member by member (`Usage::plus`): a member present in either term is in the sum."""
    out: JsonObject = {
        "input_tokens": _add(a["input_tokens"], b["input_tokens"]),
        "output_tokens": _add(a["output_tokens"], b["output_tokens"]),
    }
    for key in _OPTIONAL_COUNTS:
        x, y = a.get(key), b.get(key)
        if x is not None and y is not None:
            out[key] = _add(x, y)
        elif x is not None:
            out[key] = int(x)
        elif y is not None:
            out[key] = int(y)
    cost_a, cost_b = a.get("cost"), b.get("cost")
    if cost_a is not None and cost_b is not None:
        if cost_a["currency"] != cost_b["currency"]:
            raise UsageError("UsageCurrencyMismatch", f"cost in {cost_b['currency']} added to a sum in {cost_a['currency']}")
        out["cost"] = {"amount": add_decimals(cost_a["amount"], cost_b["amount"]), "currency": cost_a["currency"]}
    elif cost_a is not None or cost_b is not None:
        out["cost"] = copy.deepcopy(cost_a if cost_a is not None else cost_b)
    return out


def _plain(usage: JsonObject) -> JsonObject:
    """A frame's usage as the state holds it: integers as integers (INT-001), no null members."""
    return usage_plus({"input_tokens": 0, "output_tokens": 0}, usage)


def usage_added(state_usage: JsonObject | None, invocation: str, usage: JsonObject) -> JsonObject:
    """The state's `usage` after a run slice of `invocation` reported `usage` (`STATE-056`,
    `UsageState::added`); raises `UsageError` and changes nothing on a refusal."""
    if state_usage is None:
        plain = _plain(usage)
        return {"total": plain, "invocations": {invocation: copy.deepcopy(plain)}}
    total = usage_plus(state_usage["total"], usage)
    held = state_usage["invocations"].get(invocation)
    entry = usage_plus(held, usage) if held is not None else _plain(usage)
    invocations = copy.deepcopy(state_usage["invocations"])
    invocations[invocation] = entry
    # Rust keeps the entries in a BTreeMap: by invocation id, in byte order.
    return {"total": total, "invocations": dict(sorted(invocations.items(), key=lambda kv: kv[0].encode()))}


def slice_usage(so_far: JsonObject | None, step: JsonObject) -> JsonObject:
    """A run slice's usage after a script's `usage` step (`SCRIPT-028`): `so_far` + `step`, as the
    reference adds them. A sum past 2^53 - 1, which the reducer would refuse on the slice's end
    (`STATE-063`), keeps the sum so far: the script asked for more than the protocol can carry,
    and the run still ends. (A second currency cannot reach here: rule 11 refuses the script.)"""
    try:
        return _plain(step) if so_far is None else usage_plus(so_far, step)
    except UsageError:
        return copy.deepcopy(so_far) if so_far is not None else {"input_tokens": 0, "output_tokens": 0}
