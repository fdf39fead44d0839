"""The connection budget: how many brain connections a run can hold, and the ``--jobs`` that fits.

A run that asks the server for more connections than it allows does not fail
cleanly: hooks get "too many clients already", their turns become ``infra_error``
and the scores measure the machine.  So every holder of a connection is bounded
here, and the run either sizes its embedded server for the total or lowers its
concurrency to what an external server has free.

Who holds connections, at most:

* hooks: each seam's warm stream processes cache one connection per brain they
  served (``HOOK_CONNECTIONS_PER_PROCESS`` at most); in exec mode each call in
  flight holds one, and a seam has at most ``jobs`` calls in flight.  A seam's
  bound is its hook role's ``CONNECTION LIMIT`` (:func:`hook_role_connection_limit`),
  so a hostile hook cannot take more than an honest one would;
* the runner: one pooled connection per leased brain (seeding, write-back and
  scoring share it), at most ``ADMIN_CONNECTIONS`` for CREATE/DROP DATABASE,
  migrations and sweeps, and the share watchdog's one;
* a margin for backends of just-closed connections, which free their slot a
  moment after the client has gone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import psycopg

from brainbench.brain.server import DEFAULT_MAX_CONNECTIONS, ServerError
from brainbench.models.budget import Concurrency, ConnectionBudget, ServerCapacity

if TYPE_CHECKING:
    from brainbench.models.config import RunConfig

Mode = Literal["exec", "stream"]


def seam_mode(config: RunConfig, harness: str) -> Mode:
    """The invocation mode the orchestrator starts ``harness``'s seam in: its own, else the run's."""
    override = config.seams.get(harness)
    return (override.mode if override and override.mode else None) or config.mode


def seam_modes(config: RunConfig) -> list[Mode]:
    """Each seam's invocation mode, as the orchestrator will start it."""
    return [seam_mode(config, harness) for harness in dict.fromkeys(config.harnesses)]

# brain_access keeps one connection per brain URL, evicting beyond this many.
HOOK_CONNECTIONS_PER_PROCESS = 8
# A timed-out stream process is killed and restarted, and an exec hook's backend
# outlives its process by a moment: both briefly hold a slot twice.
HOOK_ROLE_SLACK = 2
ADMIN_CONNECTIONS = 2
# The share watchdog's one superuser connection (brain/watchdog.py), held for the whole run.
WATCHDOG_CONNECTIONS = 1
# PostgreSQL's default; the embedded server keeps it so a superuser can always get in.
EMBEDDED_SUPERUSER_RESERVED = 3
# Each slot costs the embedded server shared memory (locks, PGPROC): ~1000 stays small.
EMBEDDED_MAX_CONNECTIONS = 1000
# One job holds a brain (a template copy in scratch, usually RAM: 7 MiB measured), the
# runner's backend on it (5 MiB PSS) and a share of hook backends (5 MiB each), plus its
# rows and transcripts: 64 MiB is a generous bound, not a measurement.
MEMORY_PER_JOB = 64 << 20


class BudgetError(ServerError):
    """The brain server cannot carry even one job."""


def cores() -> int:
    """CPUs this process may run on, capped by a cgroup v2 CPU quota (containers, CI runners)."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            count = min(count, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, count)


def available_memory() -> int | None:
    """Bytes the host (or our cgroup, if tighter) can still give, or None when unknown."""
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit != "max" and available is not None:
            available = min(available, max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return available


def warm_workers(jobs: int, cpu: int | None = None) -> int:
    """Warm stream processes per seam: never more than the jobs that can call the seam at once,
    and never more than the cores that can run them (a hook call is CPU work)."""
    return max(1, min(jobs, max(2, cpu if cpu is not None else cores())))


def hook_role_connection_limit(jobs: int, mode: Mode, cpu: int | None = None) -> int:
    """The most connections one seam's hooks hold at once: the ``CONNECTION LIMIT`` of its role.

    Stream: each warm process caches a connection per brain it served, and there are
    at most ``jobs`` brains.  Exec: one per call in flight, at most ``jobs`` per seam.
    """
    if mode == "stream":
        held = warm_workers(jobs, cpu) * min(HOOK_CONNECTIONS_PER_PROCESS, jobs)
    else:
        held = jobs
    return held + HOOK_ROLE_SLACK


def connection_budget(jobs: int, modes: Sequence[Mode], cpu: int | None = None) -> ConnectionBudget:
    """The budget of a run of ``jobs`` with one seam per entry of ``modes``."""
    seams = max(1, len(modes))
    per_role = max(hook_role_connection_limit(jobs, m, cpu) for m in (modes or ["stream"]))
    hooks = seams * per_role
    runner = jobs + ADMIN_CONNECTIONS + WATCHDOG_CONNECTIONS
    margin = 4 + (hooks + runner) // 10
    return ConnectionBudget(
        jobs=jobs, seams=seams, modes=list(modes),
        warm_workers_per_seam=warm_workers(jobs, cpu) if "stream" in modes else 0,
        per_hook_role=per_role, hooks=hooks, runner_brains=jobs, admin=ADMIN_CONNECTIONS + WATCHDOG_CONNECTIONS,
        margin=margin,
        total=hooks + runner + margin)


def jobs_within(connections: int, modes: Sequence[Mode], ceiling: int, cpu: int | None = None) -> int:
    """The largest ``jobs ≤ ceiling`` whose budget fits in ``connections`` (0 if not even one)."""
    lo, hi = 0, ceiling
    while lo < hi:  # the budget grows with jobs, so bisect
        mid = (lo + hi + 1) // 2
        if connection_budget(mid, modes, cpu).total <= connections:
            lo = mid
        else:
            hi = mid - 1
    return lo


def embedded_max_connections(budget: ConnectionBudget) -> int:
    """What the embedded server is started with (it never goes below PostgreSQL's default)."""
    return max(DEFAULT_MAX_CONNECTIONS, budget.total + EMBEDDED_SUPERUSER_RESERVED)


def probe_capacity(admin_url: str) -> ServerCapacity:
    """Read a server's connection limits and current use (one short connection)."""
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute(
                "SELECT current_setting('max_connections')::int,"
                " current_setting('superuser_reserved_connections')::int,"
                " coalesce(current_setting('reserved_connections', true), '0')::int,"
                " (SELECT count(*) FROM pg_stat_activity"
                "   WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())::int").fetchone()
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or ["connect failed"])[0]
        raise ServerError(f"cannot use the brain database server: {first}") from exc
    assert row is not None
    return ServerCapacity(max_connections=row[0], superuser_reserved=row[1], reserved=row[2], in_use=row[3])


def _describe(capacity: ServerCapacity) -> str:
    return (f"max_connections={capacity.max_connections}, "
            f"{capacity.superuser_reserved + capacity.reserved} reserved, {capacity.in_use} in use")


def choose_concurrency(requested: int | None, modes: Sequence[Mode], capacity: ServerCapacity | None = None,
                       *, cpu: int | None = None, memory: int | None = -1) -> Concurrency:
    """The ``--jobs`` of a run: as requested, else what cores and memory carry; always what the
    server's connections carry.  ``capacity`` None means the embedded server, sized to fit.

    ``cpu`` and ``memory`` (bytes free) are read from the host when not given (memory -1);
    memory None means unknown.  Raises :class:`BudgetError` when the server cannot carry one job.
    """
    cpu = cores() if cpu is None else cpu
    memory = available_memory() if memory == -1 else memory
    # Half of what is free: the seams, the server's caches and everything else on the host need the rest.
    memory_jobs = max(1, memory // 2 // MEMORY_PER_JOB) if memory is not None else None
    if capacity is None:
        free = EMBEDDED_MAX_CONNECTIONS - EMBEDDED_SUPERUSER_RESERVED
    else:
        free = capacity.available
    ceiling = max(requested or 0, cpu, memory_jobs or 0, 1)
    connection_jobs = jobs_within(free, modes, ceiling, cpu)
    if connection_jobs < 1:
        need = connection_budget(1, modes, cpu).total
        where = f" ({_describe(capacity)})" if capacity is not None else ""
        raise BudgetError(f"the brain server has {max(free, 0)} free connection(s){where} and one job needs "
                          f"{need}: close other sessions or raise max_connections")
    limits: list[tuple[Literal["requested", "cores", "memory", "connections"], int]]
    if requested is not None:
        limits = [("requested", requested)]
    else:
        limits = [("cores", cpu)] + ([("memory", memory_jobs)] if memory_jobs is not None else [])
    limits.append(("connections", connection_jobs))
    limited_by, jobs = min(limits, key=lambda item: item[1])  # first wins a tie: the reason a person expects
    budget = connection_budget(jobs, modes, cpu)
    server_max = embedded_max_connections(budget) if capacity is None else capacity.max_connections
    return Concurrency(jobs=jobs, requested=requested, limited_by=limited_by, cores=cpu, memory_jobs=memory_jobs,
                       connection_jobs=connection_jobs, server_max_connections=server_max, budget=budget)


def describe_choice(choice: Concurrency, capacity: ServerCapacity | None = None) -> str:
    """One stderr line: the jobs chosen and why (a warning when the server lowered --jobs)."""
    if choice.requested is not None and choice.jobs < choice.requested:
        free = capacity.available if capacity is not None else EMBEDDED_MAX_CONNECTIONS - EMBEDDED_SUPERUSER_RESERVED
        where = f" ({_describe(capacity)})" if capacity is not None else ""
        wanted = connection_budget(choice.requested, choice.budget.modes, choice.cores).total
        return (f"warning: --jobs {choice.requested} lowered to {choice.jobs}: the brain server has {free} free "
                f"connection(s){where}; {choice.requested} jobs would need {wanted}, {choice.jobs} need "
                f"{choice.budget.total}")
    if choice.requested is not None:
        return f"jobs: {choice.jobs} (as requested; brain connections budgeted: {choice.budget.total})"
    memory = f", memory {choice.memory_jobs}" if choice.memory_jobs is not None else ""
    return (f"jobs: {choice.jobs} (default, limited by {choice.limited_by}: cores {choice.cores}{memory}, "
            f"connections {choice.connection_jobs})")
