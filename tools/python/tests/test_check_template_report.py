"""scripts/check_template_report.py, which CI runs on the template's conformance reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_template_report.py"


def _scenario(verdict: str, *messages: str) -> dict[str, Any]:
    findings = [{"message": m, "step": 1} for m in messages]
    return {"id": f"s-{len(messages)}-{verdict}", "verdict": verdict, "checks": [{"id": "c", "verdict": verdict, "findings": findings}]}


def _check(tmp_path: Path, versions: str, *scenarios: dict[str, Any]) -> int:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"scenarios": list(scenarios)}), encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), str(report), "--versions", versions], capture_output=True).returncode


def test_n_a_is_excused_only_for_a_version_the_template_does_not_speak(tmp_path: Path) -> None:
    needs_1_1 = _scenario("n/a", "the scenario needs 1.1 (its script or frames), but the offer negotiates 1.0")
    needs_feature = _scenario("n/a", "the feature(s) assistant_stream are not in force (negotiated 1.1; in force: [])")
    assert _check(tmp_path, "1.1,1.0", _scenario("pass")) == 0
    assert _check(tmp_path, "1.0", _scenario("pass"), needs_1_1) == 0
    assert _check(tmp_path, "1.1,1.0", needs_1_1) == 1
    assert _check(tmp_path, "1.1,1.0", needs_feature) == 1
    assert _check(tmp_path, "1.0", needs_feature) == 1
    assert _check(tmp_path, "1.0", _scenario("fail", "needs 1.1")) == 1
    assert _check(tmp_path, "1.0", _scenario("n/a")) == 1  # an n/a that says nothing is not excused


def test_n_a_is_excused_for_a_feature_named_not_implemented_and_only_that_one(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    attach = _scenario("n/a", "the feature(s) multi_attach are not in force (negotiated 1.2; in force: [ui_state_patch])")
    stream = _scenario("n/a", "the feature(s) assistant_stream, multi_attach are not in force (negotiated 1.2; in force: [])")

    def run(*args: str) -> int:
        cmd = [sys.executable, str(SCRIPT), str(report), "--versions", "1.2,1.1,1.0", *args]
        return subprocess.run(cmd, capture_output=True).returncode

    report.write_text(json.dumps({"scenarios": [attach]}), encoding="utf-8")
    assert run() == 1
    assert run("--not-implemented", "multi_attach") == 0
    report.write_text(json.dumps({"scenarios": [attach, stream]}), encoding="utf-8")
    assert run("--not-implemented", "multi_attach") == 1
    assert run("--not-implemented", "multi_attach,assistant_stream") == 0


def test_n_a_is_excused_for_a_cluster_scenario_the_run_has_too_few_instances_for(tmp_path: Path) -> None:
    needs_3 = _scenario(
        "n/a",
        "the scenario needs 3 replicas of the backend and the run has 1: run --replicas 3 --store postgres://… "
        "(with --exec or the bundled backend)",
    )
    assert _check(tmp_path, "1.2,1.1,1.0", _scenario("pass"), needs_3) == 0
    assert _check(tmp_path, "1.2,1.1,1.0", _scenario("fail", "the scenario needs 3 replicas of the backend and the run has 1")) == 1
    has_enough = _scenario("n/a", "the scenario needs 2 replicas of the backend and the run has 3")
    assert _check(tmp_path, "1.2,1.1,1.0", has_enough) == 1  # with enough instances, n/a is not excused


def test_a_13_feature_the_template_does_not_offer_is_excused_by_name_and_only_while_unoffered(tmp_path: Path) -> None:
    # The template speaks 1.3 without `subagents`: the runner reports those scenarios n/a, as a
    # feature not in force or a capability the welcome does not list. Named with --not-implemented,
    # both are excused; a welcome that does list it (the template offers it, yet the scenario was
    # n/a) is not, nor is another 1.3 feature the template does implement.
    report = tmp_path / "report.json"
    welcome = "rewind, tool_output, tool_expiry, retry, cancel, ui_state_patch, reasoning, usage, conformance_script"
    unforced = _scenario("n/a", "the feature(s) subagents are not in force (negotiated 1.3; in force: [ui_state_patch, reasoning, usage])")
    unlisted = _scenario("n/a", f"the server does not offer subagents (welcome lists: {welcome})")
    listed = _scenario("n/a", f"the server does not offer subagents (welcome lists: {welcome}, subagents)")
    in_force = _scenario("n/a", "the feature(s) subagents are not in force (negotiated 1.3; in force: [subagents])")
    reasoning = _scenario("n/a", "the feature(s) reasoning are not in force (negotiated 1.3; in force: [usage])")

    def run(*scenarios: dict[str, Any], excuse: str = "subagents") -> int:
        report.write_text(json.dumps({"scenarios": list(scenarios)}), encoding="utf-8")
        cmd = [sys.executable, str(SCRIPT), str(report), "--versions", "1.3,1.2,1.1,1.0", "--not-implemented", excuse]
        return subprocess.run(cmd, capture_output=True).returncode

    assert run(_scenario("pass"), unforced, unlisted) == 0
    assert run(unforced, excuse="") == 1
    assert run(unlisted, excuse="multi_attach") == 1
    assert run(listed) == 1
    assert run(in_force) == 1
    assert run(reasoning) == 1
