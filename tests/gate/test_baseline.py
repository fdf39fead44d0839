"""Canonical baseline: byte stability, key order, parsing, both schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.gate.baseline import (
    BaselineError,
    canonical_baseline,
    parse_baseline,
    serialize_baseline,
    write_baseline,
)
from brainbench.models.baseline import Baseline

from ._builders import HASH_A, KTA_METRICS, PUSH_METRICS, make_cell, make_result

REPO_ROOT = Path(__file__).resolve().parents[2]
GBRAIN_SCHEMA = REPO_ROOT / "tests" / "data" / "reference" / "schema" / "baseline.schema.json"

EXPECTED = f"""{{
  "schema_version": 1,
  "fixtures_hash": "{HASH_A}",
  "config": {{
    "include_holdout": false,
    "llm": false,
    "harnesses": [
      "claude-code",
      "openclaw"
    ],
    "suites": [
      "know-to-ask",
      "push"
    ]
  }},
  "cells": {{
    "claude-code/push": {{
      "avg_injected_tokens": 50.1963,
      "push_precision": 1,
      "push_recall": 1,
      "source_isolation_violations": 0
    }},
    "openclaw/know-to-ask": {{
      "avg_injected_tokens": 38.2752,
      "false_fire_rate": 0,
      "know_to_ask_failure_rate": 0.1235,
      "source_isolation_violations": 0
    }},
    "openclaw/push": {{
      "avg_injected_tokens": 50.0841,
      "push_precision": 1,
      "push_recall": 0.9063,
      "source_isolation_violations": 0
    }}
  }},
  "counts": {{
    "claude-code/push": {{
      "gold_total": 96,
      "gold_failed": 0
    }},
    "openclaw/know-to-ask": {{
      "gold_total": 149,
      "gold_failed": 3
    }},
    "openclaw/push": {{
      "gold_total": 96,
      "gold_failed": 9
    }}
  }}
}}
"""


def _cells():
    kta = dict(KTA_METRICS, know_to_ask_failure_rate=0.123456789)
    return [
        make_cell("openclaw", "know-to-ask", kta, 149, 3),
        make_cell("openclaw", "push", dict(PUSH_METRICS), 96, 9),
        make_cell("claude-code", "push", {"push_precision": 1.0, "push_recall": 1.0,
                                          "source_isolation_violations": 0,
                                          "avg_injected_tokens": 5371 / 107}, 96, 0),
    ]


def _canonical(cells=None, **kw) -> Baseline:
    return canonical_baseline(
        make_result(cells or _cells(), **kw), harnesses=["openclaw", "claude-code"], suites=["push", "know-to-ask"]
    )


def test_exact_bytes() -> None:
    assert serialize_baseline(_canonical()) == EXPECTED


def test_bytes_independent_of_cell_order_and_receipts() -> None:
    a = serialize_baseline(_canonical())
    b = serialize_baseline(_canonical(list(reversed(_cells())), harness_sha="other", cmd_args=["--json"]))
    assert a == b
    assert "harness_sha" not in a and "cmd_args" not in a and "turn_rows" not in a and "seam" not in a


def test_config_lists_sorted_not_deduplicated() -> None:
    b = canonical_baseline(make_result(_cells()), harnesses=["openclaw", "openclaw"], suites=["push"])
    assert b.config.harnesses == ["openclaw", "openclaw"]


def test_justification_position_and_truthiness() -> None:
    b = _canonical()
    text = serialize_baseline(b.model_copy(update={"justification": "why"}))
    keys = list(json.loads(text))
    assert keys == ["schema_version", "fixtures_hash", "config", "justification", "cells", "counts"]
    assert "justification" not in serialize_baseline(b.model_copy(update={"justification": ""}))


def test_write_twice_byte_identical_and_round_trips(tmp_path: Path) -> None:
    p1, p2 = tmp_path / "a" / "main.json", tmp_path / "b.json"
    write_baseline(_canonical(), p1)
    write_baseline(_canonical(), p2)
    assert p1.read_bytes() == p2.read_bytes()
    parsed = parse_baseline(p1)
    assert parsed.fixtures_hash == HASH_A
    assert serialize_baseline(parsed) == p1.read_text()


def test_round_trip_through_our_json_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = Baseline.model_json_schema()
    doc = json.loads(serialize_baseline(_canonical()))
    jsonschema.validate(doc, schema)
    assert Baseline.model_validate(doc) == _canonical()


def test_round_trip_through_gbrain_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(GBRAIN_SCHEMA.read_text())
    for b in (_canonical(), _canonical().model_copy(update={"justification": "x"})):
        doc = json.loads(serialize_baseline(b))
        jsonschema.validate(doc, schema)
        assert serialize_baseline(Baseline.model_validate(doc)) == serialize_baseline(b)
    bad = json.loads(serialize_baseline(_canonical()))
    bad["receipt"] = {}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "invalid JSON"),
        ('{"schema_version": 1, "fixtures_hash": NaN}', "invalid JSON"),
        ("[]", "expected a JSON object"),
        ('{"schema_version": 2}', "schema_version must be 1"),
        ('{"schema_version": true}', "schema_version must be 1"),
        ('{"schema_version": 1, "config": {}}', "missing required field(s): fixtures_hash, cells, counts"),
    ],
)
def test_parse_errors_name_the_file(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "broken.json"
    p.write_text(content)
    with pytest.raises(BaselineError) as err:
        parse_baseline(p)
    assert str(p) in str(err.value)
    assert needle in str(err.value)


def test_parse_rejects_unknown_keys_and_bad_counts(tmp_path: Path) -> None:
    doc = json.loads(serialize_baseline(_canonical()))
    doc["extra"] = 1
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(BaselineError, match="extra"):
        parse_baseline(p)
    doc.pop("extra")
    doc["counts"]["openclaw/push"]["gold_failed"] = -1
    p.write_text(json.dumps(doc))
    with pytest.raises(BaselineError, match="gold_failed"):
        parse_baseline(p)


def test_parse_accepts_integral_float_counts(tmp_path: Path) -> None:
    doc = json.loads(serialize_baseline(_canonical()))
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc).replace('"gold_total": 96', '"gold_total": 96.0'))
    assert parse_baseline(p).counts["openclaw/push"].gold_total == 96


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="not found"):
        parse_baseline(tmp_path / "nope.json")
