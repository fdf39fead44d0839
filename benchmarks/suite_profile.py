"""Where the test suite's CPU goes: each test run alone, charged the machine's busy CPU while it ran.

    .venv/bin/python benchmarks/suite_profile.py [PYTEST ARGS...]   # default: the parallel pass's selection

The suite is CPU-bound on this 2-core machine (its parallel pass leaves the cores idle < 10 % of the
time), so its wall time follows its CPU.  A test's own process cannot see most of that CPU: it
is spent in the processes a test starts (CLI runs, seam processes, the warm hook server, Postgres,
dockerd and containers).  So the tests run one at a time (``-n 0``) and each is charged the
machine-wide busy time (``/proc/stat``) between its start and end; a module's fixtures are
charged to its first test.  Run it on a quiet machine: other work is charged too.

Writes ``benchmarks/suite_profile.json`` (per test: CPU-s and wall-s) and prints the modules by CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "suite_profile.json"
_RECORD_ENV = "BRAINBENCH_SUITE_PROFILE_RECORD"
# scripts/test's parallel pass, as it selects it (tests/benchmarks/test_doc_tables.py holds the two equal):
# a `-m` given here replaces pyproject's, so the `gbrain` tests (they need a gbrain checkout) are left out here too.
PARALLEL_PASS = "not serial and not alone and not gbrain"


def _busy_s() -> float:
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in stat.readline().split()[1:8])
    # Not steal: on a VM that is the host running someone else.
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    import time

    cpu0, wall0 = _busy_s(), time.monotonic()
    yield
    cpu, wall = _busy_s() - cpu0, time.monotonic() - wall0
    with open(os.environ[_RECORD_ENV], "a") as record:
        record.write(json.dumps({"test": item.nodeid, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}) + "\n")


def measure(args: list[str]) -> tuple[int, list[dict[str, Any]]]:
    """pytest's exit code and one row per test (CPU-s, wall-s); also written to suite_profile.json."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as record:
        path = Path(record.name)
    env = {**os.environ, _RECORD_ENV: str(path), "PYTHONPATH": str(Path(__file__).parent)}
    selection = args or ["-m", PARALLEL_PASS]
    code = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_profile", "-n", "0", "-q", *selection],
                          cwd=REPO, env=env, check=False).returncode
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    OUT.write_text(json.dumps(rows, indent=1) + "\n")
    return code, rows


def by_module(rows: list[dict[str, Any]], top: int) -> dict[str, Any]:
    """The totals and the ``top`` modules by CPU: [module, CPU-s, wall-s, tests]."""
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        module = modules[row["test"].split("::")[0]]
        module[0] += row["cpu_s"]
        module[1] += row["wall_s"]
        module[2] += 1
    ranked = sorted(modules.items(), key=lambda kv: -kv[1][0])
    return {"tests": len(rows), "cpu_s": round(sum(m[0] for m in modules.values()), 1),
            "wall_s": round(sum(m[1] for m in modules.values()), 1),
            "modules": [[name, round(cpu, 1), round(wall, 1), int(n)] for name, (cpu, wall, n) in ranked[:top]]}


def main(args: list[str]) -> int:
    code, rows = measure(args)
    summary = by_module(rows, 30)
    print(f"\n{summary['tests']} tests, {summary['cpu_s']:.0f} CPU-s in all; the modules by CPU (CPU-s, wall-s):")
    for name, cpu, wall, _ in summary["modules"]:
        print(f"  {cpu:7.1f} {wall:7.1f}  {name}")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
