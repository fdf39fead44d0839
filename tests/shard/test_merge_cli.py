"""`run --shard I/N` then `merge`, through the real CLI: the merged result is the single run's.

The single (reference) runs and every merge start a fresh interpreter; the shard runs, 226
of them, are forked from one pre-imported CLI (``tests/forked_cli.py``): each is still its
own process running ``brainbench.cli.main()``, without ~1.5 s of imports apiece.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from forked_cli import ForkedCli  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
CORPUS = ("--fixtures", str(REPO / "fixtures"), "--gold", str(REPO / "gold"))


def fresh(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=900, check=False, env=env, cwd=cwd)


def graded(doc: dict[str, Any]) -> dict[str, Any]:
    """Everything graded; drops what differs between any two runs (times, ids, argv, latencies, shard info)."""
    doc = json.loads(json.dumps(doc))
    for key in ("ts", "cmd_args"):
        doc["receipt"].pop(key)
    doc["_meta"].pop("run")
    doc["_meta"].pop("shard", None)
    doc["_meta"].pop("trace", None)  # its sha256 covers latencies; the evidence is compared row by row
    doc["_meta"].pop("phases", None)  # wall times: measured, differ run to run
    for row in doc["turn_rows"]:
        row.pop("latency_ms")
    return doc


def evidence(trace: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in trace.read_text().splitlines()]
    for row in rows:
        row.pop("latency_ms")
    return rows


def run_shards(servers: list[ForkedCli], total: int, root: Path, *extra: str) -> list[Path]:
    outs = [root / f"shard-{i}-of-{total}.json" for i in range(1, total + 1)]

    def lane(first: int) -> None:
        server = servers[first]
        for index in range(first + 1, total + 1, len(servers)):
            proc = server.run("run", *CORPUS, *extra, "--shard", f"{index}/{total}", "--out", outs[index - 1],
                              "--jobs", "1", "--quiet", cwd=root)
            assert proc.returncode == 0, proc.stderr

    with ThreadPoolExecutor(len(servers)) as pool:
        list(pool.map(lane, range(min(len(servers), total))))
    return outs


_SINGLE_RUNS: dict[tuple[str, ...], Path] = {}


def single_run(extra: tuple[str, ...], factory: pytest.TempPathFactory) -> tuple[tuple[str, ...], Path]:
    """One single (unsharded) run per selection and test session: what every merge must equal."""
    if extra not in _SINGLE_RUNS:
        root = factory.mktemp("single")
        proc = fresh("run", *CORPUS, *extra, "--out", root / "result.json", "--update-baseline",
                          root / "baseline.json", "--quiet", cwd=root)
        assert proc.returncode == 0, proc.stderr
        _SINGLE_RUNS[extra] = root
    return extra, _SINGLE_RUNS[extra]


@pytest.fixture(scope="module", params=[(), ("--include-holdout",)], ids=["gate", "holdout"])
def single(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[str, ...], Path]:
    return single_run(request.param, tmp_path_factory)


def merge_and_check(single: tuple[tuple[str, ...], Path], outs: list[Path], root: Path,
                    cli: ForkedCli | None = None) -> None:
    _extra, single_root = single

    def brainbench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        return cli.run(*args, cwd=cwd) if cli is not None else fresh(*args, cwd=cwd)

    proc = brainbench("merge", *outs, "--out", root / "merged.json", "--update-baseline", root / "baseline.json",
                      "--ledger", root / "ledger.jsonl", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / "baseline.json").read_bytes() == (single_root / "baseline.json").read_bytes()
    merged = json.loads((root / "merged.json").read_text())
    assert graded(merged) == graded(json.loads((single_root / "result.json").read_text()))
    assert "shard" not in merged["_meta"]
    # every turn's evidence (verdicts, reasons) travels with its rows
    assert evidence(root / "merged.trace.jsonl") == evidence(single_root / "result.trace.jsonl")
    assert merged["_meta"]["trace"]["rows"] == len(evidence(root / "merged.trace.jsonl")) > 0
    line = json.loads((root / "ledger.jsonl").read_text().splitlines()[-1])
    assert [m["shard"] for m in line["merged_from"]] == [f"{i}/{len(outs)}" for i in range(1, len(outs) + 1)]
    assert all(m["run_id"] for m in line["merged_from"])
    # the gate works on the merged result exactly as on a single run
    gate = brainbench("merge", *outs, "--compare", single_root / "baseline.json", "--committed-baseline",
                      single_root / "baseline.json", "--json", cwd=root)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    doc = json.loads(gate.stdout)
    assert (doc.get("compare") or doc["_meta"].get("compare"))["verdict"] == "pass"


@pytest.mark.parametrize("total", [1, 2, 3, 7])
def test_shards_merge_into_the_single_run(single: tuple[tuple[str, ...], Path], total: int, tmp_path: Path,
                                         forked: list[ForkedCli], pg_server: Any) -> None:
    # N <= 2: every shard on its own embedded server, the default; N >= 3: one server for all (as
    # in a cluster whose pods share a database server), each shard in databases and roles of its own.
    shared = ("--database-url", pg_server.admin_url) if total >= 3 else ()
    outs = run_shards(forked, total, tmp_path, *single[0], *shared)
    merge_and_check(single, outs, tmp_path, forked[0])


# --- refusals ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory, forked: list[ForkedCli]) -> list[Path]:
    root = tmp_path_factory.mktemp("three")
    return run_shards(forked, 3, root, "--suite", "push,continuity")


def edited(path: Path, tmp_path: Path, name: str, change: Any) -> Path:
    doc = json.loads(path.read_text())
    doc["_meta"].pop("trace", None)  # the copy has no trace file beside it; evidence is optional
    change(doc)
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def refused(tmp_path: Path, *files: Path) -> str:
    proc = fresh("merge", *files, "--out", tmp_path / "merged.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not (tmp_path / "merged.json").exists()
    assert "Traceback" not in proc.stderr
    return proc.stderr


def test_merge_of_complete_shards_passes(three: list[Path], tmp_path: Path) -> None:
    proc = fresh("merge", *three, "--out", tmp_path / "merged.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_refuses_a_missing_shard(three: list[Path], tmp_path: Path) -> None:
    assert "missing shard(s): 2/3" in refused(tmp_path, three[0], three[2])


def test_refuses_overlapping_shards(three: list[Path], tmp_path: Path) -> None:
    assert "overlapping shards: 1/3 given 2 times" in refused(tmp_path, three[0], three[0], three[1], three[2])
    moved = json.loads(three[1].read_text())["_meta"]["shard"]["keys"][0]

    def steal(doc: dict[str, Any]) -> None:
        doc["_meta"]["shard"]["keys"].append(moved)

    thief = edited(three[0], tmp_path, "thief.json", steal)
    assert f"overlapping shards: {moved} is in both" in refused(tmp_path, thief, three[1], three[2])


def test_refuses_shards_of_another_corpus(three: list[Path], tmp_path: Path) -> None:
    def other(doc: dict[str, Any]) -> None:
        doc["receipt"]["fixtures_hash"] = "0" * 64

    assert "shards differ in corpus (fixtures_hash)" in refused(
        tmp_path, edited(three[0], tmp_path, "other.json", other), three[1], three[2])


@pytest.mark.parametrize(("key", "value"), [("suites", ["push"]), ("include_holdout", True), ("llm", True),
                                            ("brainbench_version", "9.9.9"), ("harness_sha", "f" * 40),
                                            ("seams", {"codex": {"image": "x/y:1"}})])
def test_refuses_shards_of_another_config_or_version(three: list[Path], tmp_path: Path, key: str,
                                                     value: Any) -> None:
    def other(doc: dict[str, Any]) -> None:
        doc["_meta"]["shard"]["fingerprint"][key] = value

    assert f"shards differ in config {key}" in refused(
        tmp_path, three[0], edited(three[1], tmp_path, "other.json", other), three[2])


def test_refuses_results_that_are_not_finished_shards(three: list[Path], tmp_path: Path) -> None:
    def unshard(doc: dict[str, Any]) -> None:
        doc["_meta"].pop("shard")

    def interrupt(doc: dict[str, Any]) -> None:
        doc["_meta"]["run"]["complete"] = False

    assert "not a shard result" in refused(tmp_path, edited(three[0], tmp_path, "plain.json", unshard),
                                           three[1], three[2])
    assert "an interrupted run" in refused(tmp_path, edited(three[0], tmp_path, "cut.json", interrupt),
                                           three[1], three[2])
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{\"receipt\": 3}")
    assert f"{garbage}: not a BrainBench result" in refused(tmp_path, garbage, three[1], three[2])
    assert "cannot read" in refused(tmp_path, tmp_path / "absent.json", three[1], three[2])


def test_run_refuses_a_gate_on_a_shard(tmp_path: Path) -> None:
    proc = fresh("run", *CORPUS, "--shard", "1/2", "--out", tmp_path / "s.json", "--compare",
                      REPO / "baselines" / "main.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "gate the merged result" in proc.stderr
    proc = fresh("run", *CORPUS, "--shard", "3/2", "--out", tmp_path / "s.json", cwd=tmp_path)
    assert proc.returncode == 2 and "--shard" in proc.stderr and "Traceback" not in proc.stderr
