"""Helpers of the load and soak tests: the real CLI as a subprocess, a small "external" server,
a connection-count sampler and probes of what a run can leave behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
GOLD = REPO / "gold"
COMMITTED = REPO / "baselines" / "main.json"


def cli_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env.pop("CI", None)  # --update-baseline and friends behave as on a developer machine
    env.pop("BRAINBENCH_DATABASE_URL", None)
    return env


def bench_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "brainbench.cli", "run", "--quiet", *map(str, args)]


def bench(*args: str | Path, env: dict[str, str] | None = None,
          timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(bench_command(*args), capture_output=True, text=True, timeout=timeout, check=False,
                          env=env or cli_env())


def subset_corpus(root: Path, ids: tuple[str, ...]) -> tuple[Path, Path]:
    """``root/fixtures`` and ``root/gold`` holding the named fixtures of the committed corpus."""
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir(parents=True)
    gd.mkdir(parents=True)
    for fid in ids:
        shutil.copy(FIXTURES / f"{fid}.fixture.json", fx)
        shutil.copy(GOLD / f"{fid}.gold.json", gd)
    return fx, gd


def client_backends(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                       " AND pid <> pg_backend_pid()").fetchone()
    assert row is not None
    return int(row[0])


@contextlib.contextmanager
def peak_connections(url: str, every_s: float = 0.02) -> Iterator[list[int]]:
    """Sample the server's client connections (our sampler excluded) until the block ends: [peak]."""
    peak = [0]
    stop = threading.Event()
    conn = psycopg.connect(url, autocommit=True)

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], client_backends(conn))
            stop.wait(every_s)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join(5)
        conn.close()


def brainbench_databases(url: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'bb\\_%'")]


def roles(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("SELECT rolname FROM pg_roles")}


def processes_tagged(tag: str) -> list[str]:
    """Live processes whose environment carries ``tag`` (every process a soak run started inherits it)."""
    needle = tag.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie holds no memory and no files; its parent reaps it
                    found.append(f"{entry.name}: {cmd}")
        except OSError:
            continue
    return found


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemAvailable in /proc/meminfo")


def mem_total() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal in /proc/meminfo")


def open_files() -> int:
    """Allocated file handles host-wide (first field of /proc/sys/fs/file-nr)."""
    return int(Path("/proc/sys/fs/file-nr").read_text().split()[0])


def wait_for(predicate: object, timeout_s: float, every_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(every_s)
    return False
