"""The embedded server: least OS privilege, and no connection without a password.

Uses the session's real server (tests/conftest.py).  The uid/gid checks need root,
which is how CI and the compose image run BrainBench (PostgreSQL itself refuses root,
so the server gets a system user of its own).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain.server import SERVER_USER


def _postmaster(pg: Any) -> int:
    return int((pg.data / "postmaster.pid").read_text().split("\n", 1)[0])


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


@pytest.mark.skipif(os.geteuid() != 0, reason="as non-root the server runs as the runner's own uid")
def test_server_runs_as_its_own_user_and_group_with_no_supplementary_groups(pg_server: Any) -> None:
    import pwd

    entry = pwd.getpwnam(SERVER_USER)
    status = _status(_postmaster(pg_server))
    assert status["Uid"].split() == [str(entry.pw_uid)] * 4
    assert status["Gid"].split() == [str(entry.pw_gid)] * 4
    assert entry.pw_gid != 0
    assert status["Groups"] == "", "no supplementary groups (root's group above all)"


def test_data_is_private_and_the_socket_dir_holds_only_the_socket(pg_server: Any) -> None:
    assert stat.S_IMODE(pg_server.data.stat().st_mode) == 0o700
    assert stat.S_IMODE(pg_server.root.stat().st_mode) & 0o077 in (0o011, 0o000), "others may traverse, not list"
    assert pg_server.socket_dir != pg_server.root
    assert sorted(p.name for p in pg_server.socket_dir.iterdir()) == [".s.PGSQL.5432", ".s.PGSQL.5432.lock"]
    assert stat.S_IMODE((pg_server.socket_dir / ".s.PGSQL.5432.lock").stat().st_mode) & 0o077 == 0
    log = pg_server.root / "server.log"
    assert stat.S_IMODE(log.stat().st_mode) & 0o077 == 0


def test_every_connection_needs_the_password(pg_server: Any) -> None:
    hba = (pg_server.data / "pg_hba.conf").read_text()
    rules = [line.split() for line in hba.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert rules == [["local", "all", "all", "scram-sha-256"]]
    host = pg_server.socket_dir
    for user in ("postgres", "nobody"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://{user}@/postgres?host={host}", connect_timeout=5)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"postgresql://postgres:guess@/postgres?host={host}", connect_timeout=5)
    with psycopg.connect(pg_server.admin_url) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
    assert pg_server.password not in os.environ.values()
