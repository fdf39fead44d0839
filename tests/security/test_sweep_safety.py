"""A sweep deletes an embedded cluster only when no server can still be running on it.

Two ways a leftover's ``postmaster.pid`` misleads a sweep, each built here against a real
server: a sweeper in another pid namespace (``unshare --pid``) cannot reach the postmaster
its pid names, and a pid a killed postmaster left behind may since belong to another
cluster's postmaster.  Either way the old sweep signalled that pid and deleted the files:
the live server went down with "no postmaster.pid" in its data directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.server import EMBEDDED_PREFIX, EmbeddedPostgres, sweep_embedded
from brainbench.ownership import current_owner
from brainbench.scratch_owner import OWNER_FILE


def _answers(server: EmbeddedPostgres) -> bool:
    try:
        with psycopg.connect(server.admin_url, connect_timeout=10) as conn:
            return conn.execute("select 1").fetchone() == (1,)
    except psycopg.Error:
        return False


def _gone(pid: int) -> bool:
    """Exited (a zombie waiting for whatever init reaps orphans here counts as exited)."""
    for _ in range(50):
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _dead_owner_label(tmp_path: Path, **changes: object) -> str:
    """A provably dead owner as any namespace sees it: its lock file is there and free."""
    free = tmp_path / "dead-owner.lock"
    free.write_text("")
    me = current_owner()
    return me.model_copy(update={"pid": 7, "start_ticks": me.start_ticks + 1, "lock_path": str(free),
                                 **changes}).label()


@pytest.fixture
def live(short_scratch: Path):  # type: ignore[no-untyped-def]
    scratch = short_scratch
    server = EmbeddedPostgres(scratch)
    try:
        yield server
    finally:
        server.close()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_a_sweeper_in_another_pid_namespace_leaves_a_running_cluster_alone(live: EmbeddedPostgres,
                                                                           tmp_path: Path) -> None:
    # Its owner is dead (a SIGKILLed runner), its postmaster is not: this namespace's pid is
    # meaningless in the sweeper's, so it can neither stop the server nor delete under it.
    (live.root / OWNER_FILE).write_text(_dead_owner_label(tmp_path, pid_ns="pid:[1]"))
    sweep = ("import sys; from pathlib import Path; from brainbench.brain.server import sweep_embedded; "
             "print(sweep_embedded(Path(sys.argv[1])))")
    out = subprocess.run(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c", sweep,
                          str(live.root.parent)], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
    assert (live.data / "postmaster.pid").exists()
    assert _answers(live), live.diagnose()


def test_a_stale_postmaster_pid_never_stops_the_process_that_now_has_that_pid(live: EmbeddedPostgres,
                                                                             tmp_path: Path) -> None:
    # A leftover whose postmaster was killed: its postmaster.pid names a pid the kernel has
    # since given to another live cluster's postmaster (here: exactly that one).
    victim_pid = (live.data / "postmaster.pid").read_text().splitlines()
    leftover = Path(live.root.parent / f"{EMBEDDED_PREFIX}leftover")
    (leftover / "data").mkdir(parents=True)
    (leftover / OWNER_FILE).write_text(_dead_owner_label(tmp_path))
    # A short socket dir (as the server picks when the scratch path is long): sun_path is 108 bytes.
    sockets = Path(tempfile.mkdtemp(prefix="bbtest-"))
    try:
        stale = [victim_pid[0], str(leftover / "data"), victim_pid[2], "5432", str(sockets), "",
                 "      0   2147483000", "ready   "]
        (leftover / "data" / "postmaster.pid").write_text("\n".join(stale) + "\n")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as orphan:  # what a killed postmaster leaves
            orphan.bind(str(sockets / ".s.PGSQL.5432"))
        shutil.copy(live.data / "PG_VERSION", leftover / "data" / "PG_VERSION")
        assert sweep_embedded(live.root.parent) == [leftover]
        assert (live.data / "postmaster.pid").exists(), live.diagnose()
        assert _answers(live), live.diagnose()
    finally:
        shutil.rmtree(sockets)


def test_a_killed_runners_cluster_is_still_stopped_and_deleted(short_scratch: Path) -> None:
    # The case sweeps exist for: the runner SIGKILLed, its (detached) postmaster still serving.
    code = ("import sys, time; from pathlib import Path; from brainbench.brain.server import EmbeddedPostgres; "
            "s = EmbeddedPostgres(Path(sys.argv[1])); print(s.root, s.data / 'postmaster.pid', flush=True); "
            "time.sleep(120)")
    scratch = short_scratch / "scratch"
    runner = subprocess.Popen([sys.executable, "-c", code, str(scratch)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "BRAINBENCH_SCRATCH_DIR": str(scratch)})
    assert runner.stdout is not None
    root, pid_file = (Path(p) for p in runner.stdout.readline().split())
    postmaster = int(pid_file.read_text().split("\n", 1)[0])
    runner.kill()
    runner.wait()
    try:
        assert sweep_embedded(scratch) == [root]
        assert not root.exists()
        assert _gone(postmaster)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(postmaster, signal.SIGKILL)
