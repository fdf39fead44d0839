"""Memory-trust fixtures never change the classic suites' grades: a corpus holding them grades the
classic suites exactly as the same corpus without them, whether only the classic suites are asked for
or all eight (a run's default)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

TRUST = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust"
CLASSIC = ("kta-001-deal-recall", "ms-002-nondefault-active")
CLASSIC_SUITES = ["--suite", "know-to-ask,push,write-back,continuity"]


def _bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False, env=env)


def _graded(path: Path) -> dict[str, Any]:
    """What a run graded: everything but the corpus hash, argv, timings and run bookkeeping."""
    doc = json.loads(path.read_text())
    doc["receipt"] = {k: v for k, v in doc["receipt"].items() if k not in ("ts", "cmd_args", "fixtures_hash")}
    doc["_meta"].pop("run")
    doc["_meta"].pop("trace", None)
    doc["_meta"].pop("phases", None)
    for row in doc["turn_rows"]:
        row.pop("latency_ms")
    return doc


def test_a_corpus_with_trust_fixtures_grades_exactly_as_without(reference: Path, tmp_path: Path) -> None:
    plain_fx, plain_gd = copy_reference_corpus(reference, tmp_path / "plain", CLASSIC)
    mixed_fx, mixed_gd = copy_reference_corpus(reference, tmp_path / "mixed", CLASSIC)
    for kind, target in (("fixtures", mixed_fx), ("gold", mixed_gd)):
        for path in (TRUST / kind).iterdir():
            shutil.copy(path, target)
    results = {}
    for name, fx, gd, extra in (("plain", plain_fx, plain_gd, []), ("mixed", mixed_fx, mixed_gd, CLASSIC_SUITES),
                                ("all", mixed_fx, mixed_gd, [])):
        out = tmp_path / f"{name}.json"
        proc = _bench("--fixtures", fx, "--gold", gd, "--project", tmp_path, "--harness", "openclaw", "--jobs", "1",
                      "--quiet", "--out", out, *extra)
        assert proc.returncode == 0, proc.stderr
        results[name] = _graded(out)
    assert results["mixed"] == results["plain"]
    assert {c["suite"] for c in results["mixed"]["cells"]} == {"know-to-ask", "push"}
    assert all(not f.startswith("gen-") for c in results["mixed"]["cells"] for f in c["fixtures"])
    # All eight (the default) adds the four trust cells (and poisoning's replay rows); the classic ones stay.
    every = results["all"]
    assert [c["suite"] for c in every["cells"]] == ["know-to-ask", "push", "trust", "state-resolution", "poisoning",
                                                    "deletion"]
    assert [c for c in every["cells"] if c["suite"] in ("know-to-ask", "push")] == results["plain"]["cells"]
    assert [r for r in every["turn_rows"] if r["suite"] != "poisoning"] == results["plain"]["turn_rows"]
