"""Shared test helpers: the reference material and one real embedded Postgres per session."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci_policy import ci_failure

warnings.filterwarnings("ignore", module="platformdirs")

REPO = Path(__file__).resolve().parents[1]
# gbrain's published reference material, copied into the repo (see its PROVENANCE.md).
REFERENCE = REPO / "tests" / "data" / "reference"


def _skip_reason(longrepr: object) -> str:
    # A skip's longrepr is (file, line, "Skipped: reason").
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(text).removeprefix("Skipped: ")


def _fail_skip_under_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    message = ci_failure(_skip_reason(report.longrepr))
    if message is not None:
        report.outcome = "failed"
        report.longrepr = message


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    _fail_skip_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield  # a module-level importorskip skips the whole module at collection
    _fail_skip_under_ci(outcome.get_result())


def reference_dir() -> Path:
    return REFERENCE


@pytest.fixture(scope="session")
def reference() -> Path:
    return reference_dir()


@pytest.fixture
def short_scratch() -> Iterator[Path]:
    """A scratch dir with a short path: under xdist ``tmp_path`` is long enough that a cluster's
    socket path would pass the kernel's 108-byte limit."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="bbtest-s-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    from brainbench.brain.server import EmbeddedPostgres

    server = EmbeddedPostgres()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def brain_dbs(pg_server: object) -> Iterator[object]:
    from brainbench.brain.databases import BrainDatabases

    dbs = BrainDatabases(pg_server, "pytest")  # type: ignore[arg-type]
    dbs.prepare()
    try:
        yield dbs
    finally:
        dbs.close()


@pytest.fixture
def brain(brain_dbs: object) -> Iterator[tuple[object, str]]:
    """A fresh brain database: (psycopg connection, URL)."""
    from brainbench.brain.store import connect

    name, url = brain_dbs.create()  # type: ignore[attr-defined]
    conn = connect(url)
    try:
        yield conn, url
    finally:
        conn.close()
        brain_dbs.drop(name)  # type: ignore[attr-defined]


# --- running the suite on xdist workers (scripts/test) ------------------------------------------

# Modules whose tests race a deadline or interrupt a run at a moment: `serial` keeps them out
# of the parallel pass, and scripts/test runs them afterwards on two workers (they mostly wait
# on their deadlines, so two at a time add little load), where another pass's load cannot decide them.
SERIAL_MODULES = (
    "executors/test_provider_contract.py",  # timeouts that must discard output and kill the group
    "faults/test_fault_cli.py",  # hook deadlines of a few seconds
    "faults/test_fault_database.py",  # the brain crash-stopped and restarted under a 30 s hook deadline
    "faults/test_fault_executor.py",  # "within 10 s, not the daemon's 30 s"
    "executors/test_docker_lifecycle.py",  # a killed seam container must come back within one retry
    "hooks/test_warm_server.py",  # a warm hook server's idle timeout between two calls
    "run/test_interrupt.py",  # signals sent a few seconds into a run
    "security/test_brain_database_errors.py",  # a server killed mid-run, 10 s hook timeout
)
# Modules that must have the machine to themselves (`alone`: the last pass, one at a time):
# host-wide measurements, and slack under a second.  Single tests carry `@pytest.mark.alone`
# themselves (a dead owner's leftover on the shared engine, which any run's sweep may take).
ALONE_MODULES = (
    "docker/test_docker_faults.py",  # a 3.2 s sleep against a 4 s deadline, kill slack in seconds
    "load/test_soak.py",  # host-wide memory and open files back where they were
    # Two exec-mode runs, one started while the other is under way: CPU-heavy and minutes long
    # under the parallel pass's load, where it would be the last module to finish.
    "security/test_concurrent_runs.py",
)
# The longest modules first, so the parallel pass does not end waiting on one of them
# (xdist hands whole modules to workers in collection order: --dist loadscope).
LONG_MODULES = (  # measured on this machine under the parallel pass's load, longest first
    "shard/test_merge_two_hundred.py", "shard/test_merge_cli.py", "docker/test_seed_contract.py",
    "docker/test_perl_memo.py", "docker/test_compose.py", "gate/test_e2e.py", "docker/test_remote_engine.py",
    "docker/test_kubernetes_sidecar_pod.py", "docker/test_example_image.py",
    "load/test_jobs.py", "security/test_brain_hostile_hooks.py", "docker/test_docker_executor.py",
    "security/test_container_runs.py", "docker/test_doctor.py", "run/test_cli_contract.py",
    "docker/test_kubernetes_pods.py", "packaging/test_installed_wheel.py", "run/test_fixture_selection.py",
    # the serial pass's longest
    "executors/test_provider_contract.py", "run/test_interrupt.py", "faults/test_fault_cli.py",
    "executors/test_docker_lifecycle.py",
)


def _module(item: pytest.Item) -> str:
    path = Path(str(item.fspath))
    return path.relative_to(REPO / "tests").as_posix() if path.is_relative_to(REPO / "tests") else str(path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _module(item) in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)
        if _module(item) in ALONE_MODULES:
            item.add_marker(pytest.mark.alone)
    rank = {name: i for i, name in enumerate(LONG_MODULES)}
    # A stable sort: the order inside a module, and of all other modules, is unchanged.
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))
