#!/usr/bin/env python3
"""Fails unless a conformance report shows the template passing every scenario of the versions it
speaks: n/a is allowed only for a scenario that needs a version outside `--versions` (a 1.1
or 1.2 scenario against `--versions 1.0`), a feature named with `--not-implemented` (one the
template does not list, so the scenarios that need it are n/a by design: the runner says it is
not in force, or not offered, and the welcome it quotes does not list it), or more instances than
the run started (the `cluster-*` scenarios of a deployment of several, `run --replicas N`), never
for another feature of a version it speaks.

    check_template_report.py REPORT.json --versions 1.3,1.2,1.1,1.0 --not-implemented subagents
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

_NEEDS = re.compile(r"needs (\d+\.\d+)")
_FEATURES = re.compile(r"the feature\(s\) (.+?) are not in force \(negotiated [^;]*; in force: \[(.*?)\]\)")
_NOT_OFFERED = re.compile(r"the server does not offer (.+?) \(welcome lists: (.*?)\)")
_REPLICAS = re.compile(r"needs (\d+) replicas of the backend and the run has (\d+)")


def left_over(
    report: dict[str, Any], versions: set[str], not_implemented: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """The scenarios that neither passed nor are n/a for a version outside `versions` or for a
    feature in `not_implemented`."""

    def excused_by(message: str) -> bool:
        replicas = _REPLICAS.search(message)
        if replicas is not None:
            return int(replicas.group(2)) < int(replicas.group(1))
        needs = _NEEDS.search(message)
        if needs is not None:
            return needs.group(1) not in versions
        # A feature the template does not implement: n/a only where the welcome did not offer it
        # (a template that lists it and still gets n/a has a bug, which this must not excuse).
        for pattern in (_FEATURES, _NOT_OFFERED):
            found = pattern.search(message)
            if found is not None:
                missing = set(found.group(1).split(", "))
                offered = {name.strip() for name in found.group(2).split(",") if name.strip()}
                return missing <= not_implemented and not missing & offered
        return False

    def excused(scenario: dict[str, Any]) -> bool:
        found = [f["message"] for c in scenario["checks"] for f in c.get("findings", [])]
        return bool(found) and all(excused_by(m) for m in found)

    return [
        (s["id"], s["verdict"])
        for s in report["scenarios"]
        if s["verdict"] != "pass" and not (s["verdict"] == "n/a" and excused(s))
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("report")
    parser.add_argument("--versions", required=True, help="the versions the template was started with, comma-separated")
    parser.add_argument(
        "--not-implemented", default="", help="features the template does not list, comma-separated (their scenarios are n/a)"
    )
    args = parser.parse_args()
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    not_implemented = frozenset(v.strip() for v in args.not_implemented.split(",") if v.strip())
    left = left_over(report, {v.strip() for v in args.versions.split(",")}, not_implemented)
    verdicts: dict[str, int] = {}
    for s in report["scenarios"]:
        verdicts[s["verdict"]] = verdicts.get(s["verdict"], 0) + 1
    print(f"template speaking {args.versions}: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())))
    if left:
        print(f"not passed, and not n/a for a version the template does not speak: {left}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
