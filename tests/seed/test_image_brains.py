"""Image-seeded brains on a real Postgres: template, extensions, per-fixture owner roles, isolation, sweeps."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from brainbench.brain.databases import BrainDatabases, list_brainbench_databases, sweep_databases
from brainbench.brain.image_brains import ExtensionMissing, ImageSeededBrains
from brainbench.brain.roles import list_brainbench_roles


@pytest.fixture
def dbs(pg_server: object) -> Iterator[BrainDatabases]:
    made = BrainDatabases(pg_server, f"img{uuid.uuid4().hex[:8]}", ["claude-code"])  # type: ignore[arg-type]
    made.prepare()
    try:
        yield made
    finally:
        made.close()


def _refused(url: str, database: str) -> str:
    """The error a connection to ``database`` with ``url``'s role gets (it must get one)."""
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(url, dbname=database).close()
    return str(info.value)


def test_clone_objects_are_owned_by_a_role_of_its_own_that_reaches_nothing_else(dbs: BrainDatabases) -> None:
    brains = ImageSeededBrains(dbs, "claude-code", "bbtest-seed-img:1", ["pg_trgm"])
    init_url = brains.prepare_template()
    assert brains.template == f"bb_{dbs.run_id}_claude_code_tpl"
    with psycopg.connect(init_url, autocommit=True) as conn:  # what the image's init does
        conn.execute("CREATE TABLE memo (slug text PRIMARY KEY, title text)")
        assert conn.execute("SELECT similarity('acme', 'acme')").fetchone() == (1.0,)  # extension came first
    brains.seal_template()
    first, second = brains.clone(), brains.clone()
    ours, _ = dbs.create()
    with psycopg.connect(first.url, autocommit=True) as conn:  # what seed and hook do
        role = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
        assert role == f"{first.name}_owner"
        conn.execute("INSERT INTO memo VALUES ('companies/acme', 'Acme')")
        conn.execute("CREATE TABLE serve_log (line text)")  # owner: may write its own tables
        owners = dict(conn.execute("SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public'"))
        assert owners == {"memo": role, "serve_log": role}
        flags = conn.execute("SELECT rolsuper, rolcreatedb, rolcreaterole, rolinherit, rolbypassrls FROM pg_roles"
                             " WHERE rolname = current_user").fetchone()
        assert flags == (False, False, False, False, False)
        # The database stays the runner's (no image can make it a template); its role may create in it.
        assert conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
                            ).fetchone() == ("postgres",)
        assert conn.execute("SELECT has_database_privilege(current_database(), 'CREATE, TEMPORARY')").fetchone() \
            == (True,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT pg_read_file('PG_VERSION')")
    for other in (brains.template, second.name, ours, "postgres", "template1"):
        assert "permission denied for database" in _refused(first.url, other)
    with psycopg.connect(second.url) as conn:  # the other fixture's clone never saw that row
        assert conn.execute("SELECT count(*) FROM memo").fetchone() == (0,)
    brains.drop(first)
    names = [n for n, _, _ in list_brainbench_databases(dbs.server)]
    assert first.name not in names and second.name in names


def test_a_missing_extension_is_one_line_naming_it_and_the_image(dbs: BrainDatabases) -> None:
    # superuser: a private server creates any extension it has (the shared one only SHARED_EXTENSIONS).
    brains = ImageSeededBrains(dbs, "codex", "bbtest-seed-img:2", ["pg_trgm", "bbtest_no_such_extension"],
                               superuser=True)
    with pytest.raises(ExtensionMissing) as info:
        brains.prepare_template()
    message = str(info.value)
    assert "\n" not in message
    assert "bbtest-seed-img:2" in message and "'bbtest_no_such_extension'" in message
    assert "brainbench/postgres-vector" in message  # where to find a server that has them


def test_on_a_private_server_init_seed_and_hook_are_its_superuser(dbs: BrainDatabases) -> None:
    """superuser=True (a server of the seam's own): no owner roles, and what only a superuser may do works."""
    brains = ImageSeededBrains(dbs, "claude-code", "bbtest-seed-img:4", ["pg_trgm"], superuser=True)
    url = brains.prepare_template()
    assert url == dbs.server.database_url(brains.template)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION memo_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$")
        conn.execute("CREATE EVENT TRIGGER memo_ddl ON ddl_command_end EXECUTE FUNCTION memo_ddl()")
        conn.execute("CREATE TABLE memo (slug text)")
    brains.seal_template()
    brain = brains.clone()
    assert brain.url == dbs.server.database_url(brain.name)
    assert dbs.hook_roles(brain.name) == {}
    with psycopg.connect(brain.url) as conn:  # the clone carries the trigger
        assert conn.execute("SELECT evtname FROM pg_event_trigger").fetchall() == [("memo_ddl",)]
        assert conn.execute("SELECT count(*) FROM memo").fetchone() == (0,)
    brains.drop(brain)
    assert brain.name not in [n for n, _, _ in list_brainbench_databases(dbs.server)]


def test_a_sweep_takes_a_dead_runs_image_brains_and_roles(pg_server: object) -> None:
    run_id = f"img{uuid.uuid4().hex[:8]}"
    dbs = BrainDatabases(pg_server, run_id, [])  # type: ignore[arg-type]
    dbs.prepare()
    brains = ImageSeededBrains(dbs, "openclaw", "bbtest-seed-img:3")
    brains.prepare_template()
    brains.seal_template()
    clone = brains.clone()
    # The run "dies" here: nothing is closed; only the labels say whose these are.
    report = sweep_databases(dbs.server, run_id)
    assert {brains.template, clone.name} <= set(report.databases)
    assert {f"{brains.template}_owner", f"{clone.name}_owner"} <= set(report.roles)
    assert report.errors == []
    with psycopg.connect(dbs.server.database_url("postgres")) as conn:
        left = [n for n, rid, _ in list_brainbench_roles(conn) if rid == run_id]
    assert left == []
