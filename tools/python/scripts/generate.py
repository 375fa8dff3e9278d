#!/usr/bin/env python3
"""Generates the package's copies of schema/json, its pydantic models and its protocol facts.

    generate.py            write src/chatwire/schemas/*.json, src/chatwire/models/*.py and
                           src/chatwire/protocol_facts.py
    generate.py --check    exit 1 when a committed file differs from what would be written

The schemas in schema/json and fixtures/protocol-facts.json are themselves generated from the Rust
crate (chatwire-schema, `cargo run -p chatwire-schema-tool -- export`); this script copies the
protocol documents, runs datamodel-code-generator (pinned in requirements-dev.lock) on the four
top-level documents, and renders the facts as typed constants (scripts/facts_module.py). CI runs
--check.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import facts_module

HERE = Path(__file__).resolve().parent.parent
ROOT = HERE.parents[1]
SCHEMA_DIR = ROOT / "schema" / "json"
# The protocol's facts as chatwire-schema states them (chatwire_schema::protocol_facts).
FACTS = ROOT / "fixtures" / "protocol-facts.json"
# The module of typed constants rendered from FACTS.
FACTS_MODULE = "protocol_facts.py"
PACKAGE = HERE / "src" / "chatwire"
# The runner's own documents (scenarios, reports, baselines) are not part of the wire protocol.
NOT_PROTOCOL = {"scenario.json", "conformance-report.json", "conformance-baseline.json"}
# One module per top-level document: the two frame unions, the UiState and the scripted agent.
MODELS = {
    "client-frame.json": "client_frame.py",
    "server-frame.json": "server_frame.py",
    "ui-state.json": "ui_state.py",
    "agent-script.json": "agent_script.py",
}
MODELS_INIT = '''"""Pydantic v2 models generated from schema/json by tools/python/scripts/generate.py. Do not edit."""
'''


def protocol_schemas() -> list[Path]:
    return [p for p in sorted(SCHEMA_DIR.glob("*.json")) if p.name not in NOT_PROTOCOL]


def render(out: Path) -> None:
    """Writes every generated file under `out`, laid out like src/chatwire."""
    schemas = out / "schemas"
    models = out / "models"
    schemas.mkdir(parents=True)
    models.mkdir(parents=True)
    for path in protocol_schemas():
        shutil.copyfile(path, schemas / path.name)
    (models / "__init__.py").write_text(MODELS_INIT, encoding="utf-8")
    (out / FACTS_MODULE).write_text(facts_module.render(json.loads(FACTS.read_text(encoding="utf-8"))), encoding="utf-8")
    codegen = Path(sys.executable).with_name("datamodel-codegen")
    for source, module in MODELS.items():
        subprocess.run(
            [
                str(codegen),
                "--input", str(SCHEMA_DIR / source),
                "--input-file-type", "jsonschema",
                "--preset", "standard-py310-20261027",
                "--use-tag-as-union-variant-name",
                # Lax int stays: it reads `4.0` as 4 (INT-001); the readers in chatwire.models
                # check the schema first, so a string never reaches an int field.
                "--strict-types", "str", "bool", "float",
                # `ts` stays the wire string: the schema check before the model (chatwire.typed)
                # asserts date-time, and a datetime would refuse leap seconds and year 0, which
                # RFC 3339 allows, and rewrite the text (`.040Z` comes back as `.040000Z`).
                "--type-mappings", "string+date-time=string",
                "--output-model-type", "pydantic_v2.BaseModel",
                "--extra-fields", "forbid",
                "--disable-timestamp",
                "--custom-file-header", f"# Generated from schema/json/{source} by tools/python/scripts/generate.py. Do not edit.",
                "--output", str(models / module),
            ],
            check=True,
            capture_output=True,
            text=True,
        )


def generated_files(base: Path) -> dict[str, Path]:
    files = {}
    if (base / FACTS_MODULE).is_file():
        files[FACTS_MODULE] = base / FACTS_MODULE
    for sub in ("schemas", "models"):
        for path in sorted((base / sub).glob("*")):
            if path.is_file() and path.suffix in (".json", ".py"):
                files[f"{sub}/{path.name}"] = path
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chatwire-py-gen-") as tmp:
        fresh_root = Path(tmp) / "out"
        render(fresh_root)
        fresh = generated_files(fresh_root)
        committed = generated_files(PACKAGE)
        if args.check:
            drift = []
            for name in sorted(set(fresh) | set(committed)):
                if name not in committed:
                    drift.append(f"missing: src/chatwire/{name}")
                elif name not in fresh:
                    drift.append(f"stale (no longer generated): src/chatwire/{name}")
                else:
                    old = committed[name].read_text(encoding="utf-8")
                    new = fresh[name].read_text(encoding="utf-8")
                    if old != new:
                        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"committed/{name}", f"generated/{name}", lineterm="", n=1)
                        drift.append(f"differs: src/chatwire/{name}\n" + "\n".join(list(diff)[:40]))
            for line in drift:
                print(line, file=sys.stderr)
            if drift:
                print("generated Python files are out of date: run tools/python/scripts/generate.py", file=sys.stderr)
                return 1
            print(f"generate --check: {len(fresh)} generated files up to date")
            return 0
        for sub in ("schemas", "models"):
            target = PACKAGE / sub
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(fresh_root / sub, target)
        shutil.copyfile(fresh_root / FACTS_MODULE, PACKAGE / FACTS_MODULE)
        print(f"wrote {len(fresh)} files under {PACKAGE.relative_to(ROOT)}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
