"""The Python response-schema checker against fixtures/response-schemas/cases.jsonl.

The corpus is written by schema/tests/response_schema_corpus.rs from `chatwire_schema::response_schema`:
for each schema, whether it is one (and which refusal), and for every value of a fixed set the first
failing pointer and keyword, or none. A Python backend checks responses with `chatwire.response_schema`,
so both must agree on every case.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatwire.response_schema import SchemaError, check_schema, check_value
from conftest import FIXTURES

CASES = [json.loads(line) for line in (FIXTURES / "response-schemas" / "cases.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_corpus_reaches_every_outcome() -> None:
    assert len(CASES) >= 40
    refusals = {c["schema_error"] for c in CASES if c["schema_error"]}
    assert refusals == {"NotAnObject", "UnknownKeyword", "BadKeyword", "TooDeep"}
    keywords = {v["verdict"]["keyword"] for c in CASES for v in c["values"] if v["verdict"]}
    assert {"type", "enum", "minLength", "maxLength", "minimum", "maximum", "required", "additionalProperties"} <= keywords


@pytest.mark.parametrize("case", CASES, ids=[json.dumps(c["schema"])[:60] for c in CASES])
def test_every_verdict_is_the_rust_one(case: dict[str, Any]) -> None:
    if case["schema_error"]:
        with pytest.raises(SchemaError) as refused:
            check_schema(case["schema"])
        assert refused.value.kind == case["schema_error"]
        return
    check_schema(case["schema"])
    for v in case["values"]:
        found = check_value(case["schema"], v["value"])
        got = None if found is None else {"pointer": found.pointer, "keyword": found.keyword}
        assert got == v["verdict"], v["value"]
