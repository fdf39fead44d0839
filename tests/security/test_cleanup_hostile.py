"""Cleanup an image cannot defeat: the runner owns every database it makes, undoes, goes on, and says so.

Before: an image-seeded clone was owned by the seam's role, so a ``seed`` could run
``ALTER DATABASE … IS_TEMPLATE true``; ``DROP DATABASE`` refuses a template, so the run's
own drop failed, stopped dropping the rest, and the run still exited 0 with databases and
login roles left on a ``--database-url`` server that even ``cleanup --all`` could not remove.

Now (``brain/image_brains.py``, ``brain/databases.py``):

* the runner stays every database's owner; the seam's role gets CONNECT, CREATE and TEMPORARY,
  so ``IS_TEMPLATE``, ``RENAME``, ``OWNER TO``, ``SET`` and ``CONNECTION LIMIT`` are refused;
* a drop first undoes a template flag (taking ownership back, as a non-superuser too), and
  ``close`` goes on past a failed drop; what is still on the server is read back from it;
* a run that leaves anything says so on stderr, one line per object, and exits 2;
* ``brainbench cleanup`` takes back and drops a templated leftover of an older run, and goes
  on past one it cannot drop (one line, exit 2).
"""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain import roles
from brainbench.brain.databases import BrainDatabases
from brainbench.brain.image_brains import ImageSeededBrains
from brainbench.brain.server import ExternalPostgres
from hostile_kit import HOSTILE, bench, honest_view, run_result
from psycopg import sql
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active")
RUNNER_ROLE = "bbtest_26p_runner"  # a --database-url login: CREATEDB CREATEROLE, no superuser


def _on_server(admin_url: str, run_id: str) -> list[str]:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        dbs = [n for n, in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                         (f"bb\\_{run_id}\\_%",))]
        return dbs + [n for n, rid, _ in roles.list_brainbench_roles(conn) if rid == run_id]


@contextlib.contextmanager
def runner_login(pg_server: Any) -> Iterator[str]:
    """A non-superuser login as a user of an external server would pass with --database-url."""
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(RUNNER_ROLE)))
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEDB CREATEROLE PASSWORD 'runner-pw'").format(
            sql.Identifier(RUNNER_ROLE)))
        admin.execute(sql.SQL("GRANT CONNECT ON DATABASE postgres TO {}").format(sql.Identifier(RUNNER_ROLE)))
    try:
        yield pg_server.role_url("postgres", RUNNER_ROLE, "runner-pw")
    finally:
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(RUNNER_ROLE)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(RUNNER_ROLE)))


def _pin(admin_url: str, role: str) -> str:
    """Make ``role`` own a table in ``postgres``: DROP ROLE then fails (what no run can undo)."""
    table = f"bbtest_pin_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE TABLE {} (x int); ALTER TABLE {} OWNER TO {}").format(
            sql.Identifier(table), sql.Identifier(table), sql.Identifier(role)))
    return table


def _unpin(admin_url: str, table: str, role: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_a_seam_role_cannot_make_its_clone_a_template_or_take_it(pg_server: Any) -> None:
    dbs = BrainDatabases(pg_server, f"c26p{uuid.uuid4().hex[:6]}", [])
    dbs.prepare()
    brains = ImageSeededBrains(dbs, "codex", "bbtest-26p-seed:1")
    brains.prepare_template()
    brains.seal_template()
    clone = brains.clone()
    with psycopg.connect(clone.url, autocommit=True) as conn:  # what a seed or hook can send
        conn.execute("CREATE TABLE memo (slug text)")  # its own objects: still allowed
        for attack in ("IS_TEMPLATE true", "RENAME TO bbtest_26p_renamed", "OWNER TO CURRENT_USER",
                       "SET default_transaction_read_only = on", "CONNECTION LIMIT 0", "ALLOW_CONNECTIONS false"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql.SQL("ALTER DATABASE {} " + attack).format(sql.Identifier(clone.name)))
    assert dbs.close() == []
    assert _on_server(pg_server.admin_url, dbs.run_id) == []


def test_close_undoes_a_template_goes_on_past_a_failed_drop_and_says_what_is_left(pg_server: Any) -> None:
    with runner_login(pg_server) as url:
        dbs = BrainDatabases(ExternalPostgres(url), f"c26p{uuid.uuid4().hex[:6]}", ["codex", "openclaw"])
        dbs.prepare()
        first, _ = dbs.create()
        second, _ = dbs.create()
        third, _ = dbs.create()
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:  # done behind the runner's back
            admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true").format(sql.Identifier(first)))
        pinned = dbs.hook_roles(second)["codex"].name
        table = _pin(pg_server.admin_url, pinned)
        try:
            left = dbs.close()
            assert len(left) == 1 and left[0].startswith(f"role {pinned}: ") and "depend" in left[0], left
            assert _on_server(pg_server.admin_url, dbs.run_id) == [pinned]  # the template and the rest went
            assert third not in str(left)
        finally:
            _unpin(pg_server.admin_url, table, pinned)


def test_cleanup_takes_back_an_older_runs_template_and_goes_on_past_a_failure(pg_server: Any) -> None:
    run_id = f"c26p{uuid.uuid4().hex[:6]}"
    with runner_login(pg_server) as url:
        # An older run's leftovers, as the runner made them then: a clone owned by its seam's role,
        # which the image marked a template, and a role that owns something elsewhere.
        with psycopg.connect(url, autocommit=True) as runner:
            for name in (f"bb_{run_id}_1", f"bb_{run_id}_2"):
                runner.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                runner.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                    sql.Identifier(name), sql.Literal(roles.label(run_id))))
            # A runner that is no superuser may not set temp_file_limit (brain/roles.py: may_set_temp_file_limit).
            made = {**roles.create_hook_roles(runner, f"bb_{run_id}_1", ["codex"], run_id, temp_file_limit_kb=None),
                    **roles.create_hook_roles(runner, f"bb_{run_id}_2", ["openclaw"], run_id,
                                              temp_file_limit_kb=None)}
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(f"bb_{run_id}_1"), sql.Identifier(made["codex"].name)))
            admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true").format(sql.Identifier(f"bb_{run_id}_1")))
        table = _pin(pg_server.admin_url, made["openclaw"].name)
        try:
            proc = bench("cleanup", "--run-id", run_id, "--database-url", url)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert f"removed database bb_{run_id}_1" in proc.stdout, proc.stdout
            assert f"removed database bb_{run_id}_2" in proc.stdout and f"removed role {made['codex'].name}" \
                in proc.stdout, proc.stdout
            assert f"role {made['openclaw'].name}:" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
            assert _on_server(pg_server.admin_url, run_id) == [made["openclaw"].name]
        finally:
            _unpin(pg_server.admin_url, table, made["openclaw"].name)


# --- a run: what it cannot drop is said, and the run does not pass --------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("cleanup-corpus"), FIXTURES)


PINNING_HOOK = """\
import os, sys, uuid
import psycopg
from psycopg import sql

sys.stdin.read()
url = os.environ["BRAINBENCH_DATABASE_URL"]
with psycopg.connect(url) as conn:
    role, database = conn.execute("SELECT current_user, current_database()").fetchone()
# What an image with more reach than a hook role (an older runner's owner role, a careless grant)
# leaves: its brain marked a template, and its role owning something the run cannot drop.
with psycopg.connect(ADMIN, autocommit=True) as admin:
    admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true").format(sql.Identifier(database)))
    table = "bbtest_pin_" + role
    admin.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (x int); ALTER TABLE {} OWNER TO {}").format(
        sql.Identifier(table), sql.Identifier(table), sql.Identifier(role)))
"""


def test_a_run_that_leaves_anything_says_so_and_exits_2(corpus: tuple[Path, Path], pg_server: Any,
                                                        tmp_path: Path) -> None:
    hook = tmp_path / "pin.py"
    hook.write_text(PINNING_HOOK.replace("ADMIN", repr(pg_server.admin_url)))
    with runner_login(pg_server) as url:
        clean_proc, clean = run_result(corpus, tmp_path / "clean.json", "--database-url", url)
        assert clean_proc.returncode != 2 and "left behind" not in clean_proc.stderr, clean_proc.stderr
        proc, result = run_result(corpus, tmp_path / "result.json", "--database-url", url,
                                  env={"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": f"{sys.executable} {hook}"})
        run_id = result["_meta"]["run"]["run_id"]
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            pinned = [t for t, in admin.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE %s",
                                                (f"bbtest\\_pin\\_bb\\_{run_id}%",))]
        try:
            assert pinned, "the hook never ran"
            assert proc.returncode == 2, proc.stderr
            said = [line for line in proc.stderr.splitlines() if "left behind on the brain server" in line]
            left = _on_server(pg_server.admin_url, run_id)
            # Every pinned role is named, once, and nothing else is left: the templates were undone and dropped.
            assert sorted(left) == sorted(t.removeprefix("bbtest_pin_") for t in pinned), left
            assert len(said) == len(left) and all(any(f"role {r}:" in line for line in said) for r in left), said
            # The hook's own turns are its own; the honest seams' are a clean run's.
            assert not [f for f in result["_meta"]["faults"] if f["harness"] != HOSTILE]
            assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"
        finally:
            for table in pinned:
                _unpin(pg_server.admin_url, table, table.removeprefix("bbtest_pin_"))


# --- a hostile seed image on the shared server --------------------------------------------

SEED_BASE = "brainbench/example-base:bookworm"  # Debian with psql and jq
TEMPLATING_SEED = """#!/bin/sh
set -u
cat >/dev/null
db=$(psql "$BRAINBENCH_DATABASE_URL" -X -q -t -A -c "SELECT current_database()") || exit 4
for stmt in "IS_TEMPLATE true" "RENAME TO bbtest_26p_kept" "OWNER TO CURRENT_USER" "CONNECTION LIMIT 0" \\
            "SET default_transaction_read_only = on"; do
  if psql "$BRAINBENCH_DATABASE_URL" -X -q -c "ALTER DATABASE \\"$db\\" $stmt" >/dev/null 2>&1; then
    echo "got through: ALTER DATABASE $stmt" >&2; exit 3
  fi
done
"""
SILENT_HOOK = "#!/bin/sh\ncat >/dev/null\n"


def test_a_seed_that_tries_to_keep_its_clone_is_refused_and_nothing_is_left(
        corpus: tuple[Path, Path], pg_server: Any, tmp_path: Path) -> None:
    from container_kit import CLIENT, REASON  # type: ignore[import-not-found]
    from image_build import build_image  # type: ignore[import-not-found]

    if CLIENT is None:
        pytest.skip(REASON)
    label = json.dumps({"version": 1, "seed": ["/opt/memo/seed"], "seed_timeout_s": 20})
    image = build_image(CLIENT, "bbtest-26p-templating-seed:latest", {
        "Dockerfile": f"FROM {SEED_BASE}\nCOPY seed hook /opt/memo/\nLABEL io.brainbench.brain={json.dumps(label)}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "seed": TEMPLATING_SEED, "hook": SILENT_HOOK})
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.codex]\nimage = "{image}"\n')
    honest = ("claude-code", "openclaw")
    _, clean = run_result(corpus, tmp_path / "clean.json", "--database-url", pg_server.admin_url)
    proc, result = run_result(corpus, tmp_path / "result.json", "--database-url", pg_server.admin_url,
                              "--seams", str(seams))
    # Every attempt was refused (else the seed exits 3: a seed failure), the seam was graded ...
    assert result["seed_failures"] == [], result["seed_failures"]
    assert [r for r in result["turn_rows"] if r["harness"] == "codex"]
    # ... nothing is left on the server, nothing said, and the honest seams are a clean run's.
    assert "left behind" not in proc.stderr and proc.returncode != 2, proc.stderr
    assert _on_server(pg_server.admin_url, result["_meta"]["run"]["run_id"]) == []
    assert honest_view(result, honest) == honest_view(clean, honest), "an honest seam's grade moved"
