"""The connection budget: its arithmetic, and the limits a real server reports."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from brainbench.brain import budget
from brainbench.brain.server import EmbeddedPostgres
from brainbench.models.budget import ServerCapacity
from loadkit import bench, subset_corpus  # type: ignore[import-not-found]

STREAM3 = ["stream", "stream", "stream"]


@pytest.fixture(scope="module")
def small_server() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(max_connections=30)
    try:
        yield server
    finally:
        server.close()


@contextlib.contextmanager
def holding(url: str, n: int) -> Iterator[None]:
    conns = [psycopg.connect(url, autocommit=True) for _ in range(n)]
    try:
        yield
    finally:
        for conn in conns:
            conn.close()


def test_budget_grows_with_jobs_and_caps_the_warm_pool() -> None:
    totals = [budget.connection_budget(j, STREAM3, cpu=4).total for j in range(1, 80)]
    assert totals == sorted(totals)
    wide = budget.connection_budget(64, STREAM3, cpu=4)
    assert wide.warm_workers_per_seam == 4  # cores, not jobs
    assert wide.hooks == 3 * wide.per_hook_role
    assert wide.runner_brains == 64
    assert wide.total == wide.hooks + wide.runner_brains + wide.admin + wide.margin
    assert budget.connection_budget(1, STREAM3, cpu=16).warm_workers_per_seam == 1  # never more than the jobs


def test_hook_role_limit_covers_what_one_seam_can_hold() -> None:
    # Stream: every warm process may cache one connection per brain it served.
    workers = budget.warm_workers(12, cpu=4)
    assert budget.hook_role_connection_limit(12, "stream", cpu=4) >= workers * budget.HOOK_CONNECTIONS_PER_PROCESS
    # Exec: one connection per call in flight; all jobs may be calling this seam.
    assert budget.hook_role_connection_limit(12, "exec", cpu=4) >= 12
    # One exec seam among stream seams: every seam's role gets the larger of both.
    mixed = budget.connection_budget(40, ["stream", "exec", "stream"], cpu=2)
    assert mixed.per_hook_role == budget.hook_role_connection_limit(40, "exec", cpu=2)


def test_hook_programs_cache_no_more_than_the_budget_assumes() -> None:
    from brainbench.hooks import brain_access

    assert brain_access._MAX_CACHED == budget.HOOK_CONNECTIONS_PER_PROCESS


def test_jobs_within_is_the_largest_fit() -> None:
    for free in (18, 40, 100, 300):  # 18: one job of three stream seams, the watchdog included
        jobs = budget.jobs_within(free, STREAM3, ceiling=500, cpu=2)
        assert budget.connection_budget(jobs, STREAM3, cpu=2).total <= free
        assert budget.connection_budget(jobs + 1, STREAM3, cpu=2).total > free
    assert budget.jobs_within(5, STREAM3, ceiling=64, cpu=2) == 0


def test_default_jobs_are_capped_by_cores_memory_and_connections() -> None:
    by_cores = budget.choose_concurrency(None, STREAM3, cpu=6, memory=1 << 40)
    assert (by_cores.jobs, by_cores.limited_by) == (6, "cores")
    by_memory = budget.choose_concurrency(None, STREAM3, cpu=16, memory=6 * budget.MEMORY_PER_JOB)
    assert (by_memory.jobs, by_memory.limited_by) == (3, "memory")
    tight = ServerCapacity(max_connections=40, superuser_reserved=3, reserved=2, in_use=5)
    by_server = budget.choose_concurrency(None, STREAM3, tight, cpu=16, memory=1 << 40)
    assert by_server.limited_by == "connections"
    assert by_server.budget.total <= tight.available < budget.connection_budget(by_server.jobs + 1, STREAM3,
                                                                               cpu=16).total
    # An explicit --jobs is honoured above cores and memory, never above the server.
    assert budget.choose_concurrency(64, STREAM3, cpu=2, memory=budget.MEMORY_PER_JOB).jobs == 64
    assert budget.choose_concurrency(64, STREAM3, tight, cpu=2).jobs < 64


def test_embedded_server_is_sized_for_the_budget() -> None:
    choice = budget.choose_concurrency(64, STREAM3, cpu=2)
    assert choice.server_max_connections >= choice.budget.total + budget.EMBEDDED_SUPERUSER_RESERVED


def test_embedded_server_takes_max_connections_and_probe_reads_it(small_server: EmbeddedPostgres) -> None:
    url = small_server.admin_url
    with holding(url, 4):
        capacity = budget.probe_capacity(url)
    assert capacity.max_connections == 30
    assert capacity.superuser_reserved == 3
    assert capacity.in_use == 4  # the probe's own connection is not counted
    assert capacity.available == 30 - 3 - capacity.reserved - 4


def test_a_server_that_cannot_carry_one_job_is_refused_in_one_line(small_server: EmbeddedPostgres,
                                                                   tmp_path: Path) -> None:
    fx, gd = subset_corpus(tmp_path, ("kta-001-deal-recall",))
    with holding(small_server.admin_url, 15):  # 30 - 3 reserved - 15 = 12 free, one job needs more
        proc = bench("--fixtures", fx, "--gold", gd, "--database-url", small_server.admin_url, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "12 free connection(s)" in lines[0] and "max_connections=30" in lines[0], lines[0]
    assert "one job needs" in lines[0] and "Traceback" not in proc.stderr
