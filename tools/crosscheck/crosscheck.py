#!/usr/bin/env python3
"""Cross-validator agreement on the fixture corpus (fixtures/messages).

Three validators judge every valid and invalid fixture frame; they must reach the same verdict:

  python   Python `jsonschema` (Draft202012Validator) on schema/json
  rust     `chatwire-schema validate` (chatwire_schema::FrameValidator, Rust `jsonschema`)
  npm      the precompiled validators of @chatwire/protocol: tools/npm/scripts/verdicts.mjs writes
           its own verdict file

Subcommands:

  crosscheck.py python --out FILE
  crosscheck.py rust --bin PATH_TO_chatwire-schema --out FILE
  crosscheck.py compare FILE...      exit 1 listing every case where verdicts differ

A verdict file is {"validator": NAME, "verdicts": {CASE_ID: {"expected", "message", "union"?}}}:
`message` is the verdict of the frame's own schema, chosen by `type` within the case's direction
(a frame that is not an object, has no string `type`, or names no frame of that direction is
invalid); `union` is the verdict of the direction's union schema (client-frame.json or
server-frame.json). A validator that cannot represent a frame says "unrepresentable" (JavaScript
for integers beyond 2^53); that is reported as a finding, not a disagreement, when every other
verdict matches the expectation.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schema" / "json"
CORPUS = ROOT / "fixtures" / "messages"
UNIONS = {"client-to-server": "client-frame.json", "server-to-client": "server-frame.json"}


def load_schemas() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(SCHEMA_DIR.glob("*.json"))}


def union_tags(schemas: dict[str, dict]) -> dict[str, set[str]]:
    return {
        direction: {branch["properties"]["type"]["const"] for branch in schemas[file]["oneOf"]}
        for direction, file in UNIONS.items()
    }


def direction_of_type(tags: dict[str, set[str]], wire: str) -> str | None:
    return next((d for d, names in tags.items() if wire in names), None)


def cases(tags: dict[str, set[str]]) -> list[dict]:
    """Every fixture as {id, direction, frame, expected}; the directory names the wire type."""
    out = []
    for path in sorted((CORPUS / "valid").glob("*/*.json")):
        out.append({
            "id": path.relative_to(CORPUS).as_posix(),
            "direction": direction_of_type(tags, path.parent.name),
            "frame": json.loads(path.read_text(encoding="utf-8")),
            "expected": "valid",
        })
    for path in sorted((CORPUS / "invalid").glob("*/*.json")):
        wrapper = json.loads(path.read_text(encoding="utf-8"))
        folder = path.parent.name
        direction = wrapper.get("direction") if folder == "envelope" else direction_of_type(tags, folder)
        out.append({
            "id": path.relative_to(CORPUS).as_posix(),
            "direction": direction,
            "frame": wrapper["frame"],
            "expected": "invalid",
        })
    return out


def dispatchable(tags: dict[str, set[str]], case: dict) -> bool:
    """The envelope rules every validator applies before a message schema is chosen."""
    frame = case["frame"]
    return isinstance(frame, dict) and isinstance(frame.get("type"), str) and frame["type"] in tags[case["direction"]]


def python_verdicts() -> dict:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = load_schemas()
    tags = union_tags(schemas)
    FORMATS = Draft202012Validator.FORMAT_CHECKER
    # Without its optional dependency the checker silently skips `date-time`: refuse to judge.
    if "date-time" not in FORMATS.checkers:
        raise SystemExit("jsonschema cannot check date-time: install rfc3339-validator (requirements.txt)")
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values() if "$id" in schema
    )
    validators = {}
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        # `format` asserts, as in the Rust validator: `date-time` through rfc3339-validator (pinned
        # in requirements.txt). The integer formats schemars writes are not known to the checker
        # and stay annotations; their ranges are asserted through minimum/maximum.
        validators[name] = Draft202012Validator(schema, registry=registry, format_checker=FORMATS)
    verdicts = {}
    for case in cases(tags):
        if case["direction"] not in UNIONS:
            raise SystemExit(f"{case['id']}: cannot tell the direction")
        frame = case["frame"]
        if dispatchable(tags, case):
            message = "valid" if validators[f"{frame['type']}.json"].is_valid(frame) else "invalid"
        else:
            message = "invalid"
        union = "valid" if validators[UNIONS[case["direction"]]].is_valid(frame) else "invalid"
        verdicts[case["id"]] = {"expected": case["expected"], "message": message, "union": union}
    return {"validator": f"python jsonschema {metadata.version('jsonschema')} (Draft202012Validator)", "verdicts": verdicts}


def rust_verdicts(binary: str) -> dict:
    schemas = load_schemas()
    tags = union_tags(schemas)
    all_cases = cases(tags)
    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="chatwire-crosscheck-") as tmp:
        files = {}
        for index, case in enumerate(all_cases):
            if case["direction"] not in UNIONS:
                raise SystemExit(f"{case['id']}: cannot tell the direction")
            if not dispatchable(tags, case):
                # `validate` picks the direction from `type` itself, so a frame sent the wrong way
                # would be judged by the other direction's schema: the envelope rule decides here,
                # exactly as it does for the other two validators.
                verdicts[case["id"]] = {"expected": case["expected"], "message": "invalid", "by": "envelope rule"}
                continue
            path = Path(tmp) / f"case-{index:05}.json"
            path.write_text(json.dumps(case["frame"]), encoding="utf-8")
            files[str(path)] = case
        if files:
            run = subprocess.run([binary, "validate", *files], capture_output=True, text=True, timeout=300)
            if run.returncode not in (0, 1):
                raise SystemExit(f"chatwire-schema validate failed ({run.returncode}): {run.stderr.strip()}")
            said = {}
            for line in run.stdout.splitlines():
                for verdict in ("valid", "invalid"):
                    head, sep, _ = line.partition(f": {verdict} ")
                    if sep and head in files:
                        said[head] = verdict
            for path, case in files.items():
                if path not in said:
                    raise SystemExit(f"{case['id']}: chatwire-schema validate printed no verdict")
                verdicts[case["id"]] = {"expected": case["expected"], "message": said[path]}
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    return {"validator": f"rust {version} (chatwire_schema::FrameValidator)", "verdicts": verdicts}


def compare(paths: list[str]) -> int:
    reports = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    ids = sorted({case for r in reports for case in r["verdicts"]})
    disagreements, findings = [], []
    for case in ids:
        expected = {r["verdicts"][case]["expected"] for r in reports if case in r["verdicts"]}
        said = {}
        for r in reports:
            v = r["verdicts"].get(case)
            if v is None:
                said[f"{r['validator']}"] = "missing"
                continue
            for kind in ("message", "union"):
                if kind in v:
                    said[f"{r['validator']} [{kind}]"] = v[kind]
        if len(expected) != 1:
            disagreements.append((case, f"expectations differ: {sorted(expected)}", said))
            continue
        want = expected.pop()
        judged = {k: v for k, v in said.items() if v != "unrepresentable"}
        abstained = sorted(k for k, v in said.items() if v == "unrepresentable")
        if any(v != want for v in judged.values()):
            disagreements.append((case, f"expected {want}", said))
        elif abstained:
            findings.append((case, f"expected {want}; abstained: {', '.join(abstained)}"))
    names = ", ".join(r["validator"] for r in reports)
    print(f"crosscheck: {len(ids)} fixture frames, validators: {names}")
    for case, why in findings:
        print(f"FINDING {case}: {why}")
    for case, why, said in disagreements:
        print(f"DISAGREE {case}: {why}")
        for who, verdict in sorted(said.items()):
            print(f"    {verdict:<16} {who}")
    if not ids:
        print("crosscheck: no verdicts to compare", file=sys.stderr)
        return 1
    print(f"{len(ids) - len(disagreements)} passed, {len(disagreements)} failed")
    return 1 if disagreements else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    py = sub.add_parser("python", help="verdicts of Python jsonschema")
    py.add_argument("--out", required=True)
    rs = sub.add_parser("rust", help="verdicts of chatwire-schema validate")
    rs.add_argument("--bin", required=True)
    rs.add_argument("--out", required=True)
    cmp = sub.add_parser("compare", help="compare verdict files")
    cmp.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "compare":
        return compare(args.files)
    report = python_verdicts() if args.command == "python" else rust_verdicts(args.bin)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    wrong = [c for c, v in report["verdicts"].items() if any(v.get(k, v["expected"]) != v["expected"] for k in ("message", "union"))]
    for case in wrong:
        print(f"{report['validator']}: {case}: verdict differs from the expectation", file=sys.stderr)
    print(f"{report['validator']}: {len(report['verdicts'])} verdicts written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
