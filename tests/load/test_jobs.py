"""Any --jobs gives the committed baseline byte for byte, on the embedded server and on a small
external one, with no fault (issue 18).  --jobs 32 and 64 oversubscribe this machine on purpose."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from brainbench.brain.server import EmbeddedPostgres
from loadkit import COMMITTED, bench, peak_connections  # type: ignore[import-not-found]

# Small enough that --jobs 32 and 64 must be lowered, large enough for more than one job.
SMALL_MAX_CONNECTIONS = 40


@pytest.fixture(scope="module")
def external() -> Iterator[EmbeddedPostgres]:
    """A second, private PostgreSQL that the runs reach only by --database-url (its socket)."""
    server = EmbeddedPostgres(max_connections=SMALL_MAX_CONNECTIONS)
    try:
        yield server
    finally:
        server.close()


def _check_clean(tmp_path: Path, proc: object, jobs: int) -> dict:  # type: ignore[type-arg]
    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    assert (tmp_path / "baseline.json").read_bytes() == COMMITTED.read_bytes()
    doc = json.loads((tmp_path / "result.json").read_text())
    assert doc["_meta"]["faults"] == [] and doc["seed_failures"] == []
    return doc["_meta"]["run"]


@pytest.mark.parametrize("jobs", [1, 32, 64])
def test_embedded_any_jobs_gives_the_committed_baseline(tmp_path: Path, jobs: int) -> None:
    proc = bench("--jobs", str(jobs), "--update-baseline", tmp_path / "baseline.json",
                 "--out", tmp_path / "result.json")
    run = _check_clean(tmp_path, proc, jobs)
    assert run["jobs"] == jobs
    assert f"jobs: {jobs} (as requested" in proc.stderr
    assert run["concurrency"]["server_max_connections"] >= run["concurrency"]["budget"]["total"]


@pytest.mark.parametrize("jobs", [1, 32, 64])
def test_small_external_server_any_jobs_gives_the_committed_baseline(external: EmbeddedPostgres, tmp_path: Path,
                                                                     jobs: int) -> None:
    url = external.admin_url
    with peak_connections(url) as peak:
        proc = bench("--jobs", str(jobs), "--database-url", url, "--update-baseline", tmp_path / "baseline.json",
                     "--out", tmp_path / "result.json")
    run = _check_clean(tmp_path, proc, jobs)
    concurrency = run["concurrency"]
    assert concurrency["server_max_connections"] == SMALL_MAX_CONNECTIONS
    if jobs == 1:
        assert run["jobs"] == 1 and "warning" not in proc.stderr
    else:
        effective = run["jobs"]
        assert 1 < effective < jobs and concurrency["limited_by"] == "connections"
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
        assert warnings == [line for line in warnings if f"--jobs {jobs} lowered to {effective}" in line]
        assert len(warnings) == 1, proc.stderr
    # The budget is an upper bound of what the run really held (the sampler itself excluded).
    assert 0 < peak[0] <= concurrency["budget"]["total"], (peak[0], concurrency["budget"])
