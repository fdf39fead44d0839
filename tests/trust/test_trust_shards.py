"""A trust run split into shards and merged is the single run (trust fixtures are work units like any other)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import TRUST_SUITES, run_cli, slice_corpus

SLICE = ("gen-trust-002", "gen-state-002", "gen-poison-ext-002", "gen-poison-agent-002", "gen-del-002")


def _graded(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    for key in ("ts", "cmd_args"):
        doc["receipt"].pop(key)
    for key in ("run", "shard", "trace", "phases"):
        doc["_meta"].pop(key, None)
    for row in doc["turn_rows"]:
        row.pop("latency_ms")
    return doc


def test_shards_of_a_trust_run_merge_into_the_single_run(tmp_path: Path) -> None:
    fx, gd = slice_corpus(tmp_path, SLICE)
    common = ["run", "--quiet", "--fixtures", fx, "--gold", gd, "--suite", TRUST_SUITES, "--harness", "openclaw,codex"]
    single = tmp_path / "single.json"
    assert run_cli([*common, "--out", single], silent=True, cwd=tmp_path).returncode == 0
    parts = [tmp_path / f"part-{i}.json" for i in (1, 2)]
    for i, part in enumerate(parts, 1):
        proc = run_cli([*common, "--shard", f"{i}/2", "--out", part], silent=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert all(json.loads(p.read_text())["_meta"]["run"]["completed_fixtures"] for p in parts)  # both got work
    merged = tmp_path / "merged.json"
    proc = run_cli(["merge", *parts, "--out", merged], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _graded(json.loads(merged.read_text())) == _graded(json.loads(single.read_text()))
