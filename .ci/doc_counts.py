#!/usr/bin/env python3
"""Keeps the counts the docs state equal to what a conformance report measured.

A doc states a run's counts between markers, e.g. in tools/python/README.md:

    <!-- count: python-template -->196 runs (150 scenarios and 46 `@reload` variants): 184 pass, 12 n/a (12 need several instances)<!-- /count -->

`doc_counts.py REPORT.json --key python-template FILE...` fails (exit 1) when a marked text with
that key differs from the text the report gives, or when no file has the key; `--update` writes
the report's text instead. CI runs it on the reports it has just produced, so no count in the docs
is ever typed by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

_NEEDS_VERSION = re.compile(r"needs (\d+\.\d+)")
_NEEDS_REPLICAS = re.compile(r"needs (\d+) replicas")
_NEEDS_FEATURE = re.compile(r"the feature\(s\) (.+?) are not in force")


def why_not_applicable(scenario: dict[str, Any]) -> str:
    """The reason an n/a scenario gives, in a few words."""
    for check in scenario["checks"]:
        for finding in check.get("findings", []):
            message = finding["message"]
            if _NEEDS_REPLICAS.search(message):
                return "need several instances"
            if _NEEDS_VERSION.search(message):
                return "need a later version"
            if _NEEDS_FEATURE.search(message):
                return "need a feature not in force"
    return "for another reason"


def counts_text(report: dict[str, Any]) -> str:
    """`196 runs (150 scenarios and 46 `@reload` variants): 184 pass, 12 n/a (12 need several instances)`."""
    runs = [s for s in report["scenarios"] if s.get("sweep") is None]
    reloads = sum(1 for s in runs if s["id"].endswith("@reload"))
    verdicts = Counter(s["verdict"] for s in runs)
    text = f"{len(runs)} runs ({len(runs) - reloads} scenarios and {reloads} `@reload` variants): {verdicts['pass']} pass"
    for verdict in ("warn", "fail", "timeout", "harness-error"):
        if verdicts[verdict]:
            text += f", {verdicts[verdict]} {verdict}"
    na = [s for s in runs if s["verdict"] == "n/a"]
    if na:
        reasons = Counter(why_not_applicable(s) for s in na)
        text += f", {len(na)} n/a (" + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda r: -r[1])) + ")"
    else:
        text += ", none n/a"
    return text


def marker(key: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- count: {re.escape(key)} -->)(.*?)(<!-- /count -->)", re.DOTALL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("report")
    parser.add_argument("--key", required=True, help="the marker's key")
    parser.add_argument("--update", action="store_true", help="write the report's counts into the docs")
    parser.add_argument("docs", nargs="+")
    args = parser.parse_args()
    with open(args.report, encoding="utf-8") as f:
        text = counts_text(json.load(f))
    print(f"{args.key}: {text}")
    found = 0
    stale: list[str] = []
    for doc in args.docs:
        path = Path(doc)
        content = path.read_text(encoding="utf-8")
        pattern = marker(args.key)
        for match in pattern.finditer(content):
            found += 1
            if match.group(2) != text:
                stale.append(f"{doc}: says {match.group(2)!r}")
        if args.update:
            path.write_text(pattern.sub(lambda m: m.group(1) + text + m.group(3), content), encoding="utf-8")
    if found == 0:
        print(f"no <!-- count: {args.key} --> marker in {', '.join(args.docs)}", file=sys.stderr)
        return 1
    if stale and not args.update:
        print("the docs' counts differ from the report's (run with --update, then review):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
