"""The embedded cluster made ahead on a thread (``prepare_ahead``) while the runner imports.

``open_server`` must take it when it asks for the same place, make its own when it asks for
another (deleting the one made ahead), and a cluster nobody takes must not outlive the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from brainbench.brain import server
from brainbench.brain.server import EMBEDDED_PREFIX, EmbeddedPostgres, open_server, prepare_ahead


def _clusters(scratch: Path) -> list[Path]:
    return sorted(scratch.glob(f"{EMBEDDED_PREFIX}*"))


def test_open_server_takes_the_cluster_made_ahead_and_sizes_it_then(short_scratch: Path,
                                                                    monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=1)
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    assert not made._started, "made ahead means prepared, not running"
    assert _clusters(short_scratch) == [made.root]
    opened = open_server(None, max_connections=37, ram_needed=1)
    try:
        assert opened is made
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:
            assert conn.execute("SHOW max_connections").fetchone() == ("37",)
        assert _clusters(short_scratch) == [made.root], "no second cluster"
    finally:
        opened.close()
    assert server._ahead is None
    assert _clusters(short_scratch) == []


@pytest.mark.parametrize(("ahead", "asked"), [(37, 37), (30, 41)], ids=["same size", "another size"])
def test_a_server_started_ahead_is_taken_running_or_restarted_at_the_run_s_size(
        short_scratch: Path, monkeypatch, ahead: int, asked: int) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=1, max_connections=lambda: ahead)
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    assert made.running, "started on the thread, before any open_server"
    postmaster = made._postmaster
    opened = open_server(None, max_connections=asked, ram_needed=1)
    try:
        assert opened is made
        # Taken as it runs when the size is the run's; else restarted (a new postmaster) at the run's.
        assert (opened._postmaster == postmaster) is (ahead == asked)
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:
            assert conn.execute("SHOW max_connections").fetchone() == (str(asked),)
    finally:
        opened.close()
    assert _clusters(short_scratch) == []


def test_a_size_that_cannot_be_chosen_ahead_leaves_the_start_to_the_run(short_scratch: Path,
                                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))

    def no_size() -> int:
        raise RuntimeError("the budget cannot be chosen here")

    prepare_ahead(ram_needed=1, max_connections=no_size)
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    assert not made.running
    opened = open_server(None, max_connections=25, ram_needed=1)
    try:
        assert opened is made and opened.running
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:
            assert conn.execute("SHOW max_connections").fetchone() == ("25",)
    finally:
        opened.close()


def test_a_cluster_made_for_another_place_is_deleted_and_the_run_gets_its_own(short_scratch: Path,
                                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=0)  # no parent: the default place, which is not what open_server asks for below
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    opened = open_server(None, max_connections=20, ram_needed=1)
    try:
        assert isinstance(opened, EmbeddedPostgres) and opened is not made
        assert not made.root.exists()
        assert _clusters(short_scratch) == [opened.root]
    finally:
        opened.close()


_UNTAKEN = """
import json, sys
from brainbench.brain import server
server.prepare_ahead(ram_needed=1, max_connections=(lambda: 20) if sys.argv[1] == "started" else None)
made = server._ahead[1].result(timeout=60)
print(json.dumps([str(made.root), made._postmaster]), flush=True)
"""


@pytest.mark.parametrize("state", ["prepared", "started"])
def test_a_cluster_nobody_takes_is_deleted_when_the_process_exits(short_scratch: Path, state: str) -> None:
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(short_scratch)}
    proc = subprocess.run([sys.executable, "-c", _UNTAKEN, state], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    where, postmaster = json.loads(proc.stdout)
    root = Path(where)
    if state == "started":
        assert postmaster is not None and not server.pid_alive(postmaster), "its postmaster stopped too"
    assert root.parent == short_scratch and root.name.startswith(EMBEDDED_PREFIX)
    assert not root.exists()
    assert _clusters(short_scratch) == []


def _schema(url: str) -> list[tuple[str, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT table_name, column_name, data_type, column_default FROM information_schema.columns"
                            " WHERE table_schema = 'public' ORDER BY 1, 2").fetchall()


def test_the_template_migrated_ahead_is_the_runs_own_once_labelled_and_only_once(short_scratch: Path,
                                                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from brainbench.brain.databases import SPARE_TEMPLATE, BrainDatabases
    from brainbench.cli_run import _spare_template  # what a run hands prepare_ahead

    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=1, max_connections=lambda: 20, then=_spare_template)
    opened = open_server(None, max_connections=20, ram_needed=1)
    try:
        assert opened.spare_template is not None, "handed over while the template is being made"
        assert opened.spare_template.result(timeout=60) == SPARE_TEMPLATE
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:  # no hook could connect to it, ever
            assert conn.execute("SELECT count(*) FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = %s"
                                " AND a.grantee = 0", (SPARE_TEMPLATE,)).fetchone() == (0,)
        adopted = BrainDatabases(opened, "aheadrun", ["codex"])
        adopted.prepare()
        assert opened.spare_template is None, "adopted once"
        own = BrainDatabases(opened, "ownrun", ["codex"])
        own.prepare()  # nothing left to adopt: migrated here, as without a server made ahead
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:
            names = {r[0]: r[1] for r in conn.execute(
                "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database").fetchall()}
        assert SPARE_TEMPLATE not in names
        assert "aheadrun" in (names[adopted.template] or "") and "ownrun" in (names[own.template] or "")
        assert _schema(opened.database_url(adopted.template)) == _schema(opened.database_url(own.template)) != []
        adopted.close()
        own.close()
    finally:
        opened.close()


def test_a_template_that_cannot_be_made_ahead_is_made_by_the_run(short_scratch: Path,
                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from brainbench.brain.databases import SPARE_TEMPLATE, BrainDatabases

    def fails(made: EmbeddedPostgres) -> str:  # as one cut short by the run's restart of the server
        with psycopg.connect(made.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {SPARE_TEMPLATE}")
        raise psycopg.OperationalError("no template ahead")

    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=1, max_connections=lambda: 20, then=fails)
    opened = open_server(None, max_connections=20, ram_needed=1)
    try:
        assert opened.running and opened.spare_template is not None
        with pytest.raises(psycopg.OperationalError):
            opened.spare_template.result(timeout=60)
        dbs = BrainDatabases(opened, "plainrun", ["codex"])
        dbs.prepare()
        assert _schema(opened.database_url(dbs.template)) != []
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:  # its remains are gone
            assert conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (SPARE_TEMPLATE,)).fetchone() is None
        dbs.close()
    finally:
        opened.close()
