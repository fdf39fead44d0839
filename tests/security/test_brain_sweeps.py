"""Sweeps remove only what is provably dead: databases, hook roles and scratch directories.

Owners are written as a run writes them (``ownership.current_owner``); the cases a host
name + pid rule gets wrong are built explicitly: a live run in another pid namespace
(answered by its held lock file), a reused pid (same pid, other start time), another
machine (never swept), and a runner killed with SIGKILL (swept).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from brainbench.brain.databases import list_brainbench_databases, sweep_databases
from brainbench.brain.roles import list_brainbench_roles
from brainbench.brain.server import ExternalPostgres
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner
from brainbench.scratch_owner import OWNER_FILE, RUN_PREFIX, sweep_run_dirs
from psycopg import sql


def _dead_child_owner(tmp_path: Path) -> Owner:
    """The identity of a real process, in this namespace, that has since exited."""
    code = ("import json; from brainbench.ownership import current_owner; "
            "print(current_owner().label())")
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return Owner.model_validate_json(out.stdout.strip().splitlines()[-1])


def _owners(tmp_path: Path) -> dict[str, Owner | dict[str, Any]]:
    me = current_owner()
    dead = _dead_child_owner(tmp_path)
    assert me.lock_path, "this process holds an owner lock file"
    released = tmp_path / "released.lock"
    released.write_text("")
    return {
        "live": me,
        "dead": dead,
        "reused_pid": me.model_copy(update={"start_ticks": me.start_ticks + 1}),
        "other_ns_live": me.model_copy(update={"pid_ns": "pid:[1]", "pid": 7}),
        "other_ns_dead": me.model_copy(update={"pid_ns": "pid:[1]", "pid": 7, "lock_path": str(released)}),
        "other_ns_unknown": me.model_copy(update={"pid_ns": "pid:[1]", "pid": 7, "lock_path": None}),
        "other_machine": me.model_copy(update={"boot_id": "another-kernel", "pid": 7}),
    }


SWEPT = {"dead", "reused_pid", "other_ns_dead"}


def _label(run_id: str, owner: Owner) -> str:
    return json.dumps({"brainbench.run_id": run_id, "owner": json.loads(owner.label())})


def test_databases_and_roles_of_provably_dead_runs_only(pg_server: Any, tmp_path: Path) -> None:
    owners = _owners(tmp_path)
    tag = os.urandom(3).hex()
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        for case, owner in owners.items():
            run = f"sw{tag}{case.replace('_', '')}"
            db, role = sql.Identifier(f"bb_{run}_1"), sql.Identifier(f"bb_{run}_1_codex")
            admin.execute(sql.SQL("CREATE DATABASE {}").format(db))
            admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(db, sql.Literal(_label(run, owner))))
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
            admin.execute(sql.SQL("COMMENT ON ROLE {} IS {}").format(role, sql.Literal(_label(run, owner))))
            admin.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(db, role))
    server = ExternalPostgres(pg_server.admin_url)
    try:
        report = sweep_databases(server)
        assert not report.errors, report.errors
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            roles_left = {rid for _, rid, _ in list_brainbench_roles(admin)}
        dbs_left = {rid for _, rid, _ in list_brainbench_databases(server)}
        for case in owners:
            run = f"sw{tag}{case.replace('_', '')}"
            swept = case in SWEPT
            assert (run not in dbs_left) == swept, f"{case}: database {'kept' if swept else 'dropped'}"
            assert (run not in roles_left) == swept, f"{case}: role {'kept' if swept else 'dropped'}"
    finally:
        for case in owners:
            sweep_databases(server, f"sw{tag}{case.replace('_', '')}")


def test_scratch_dirs_of_provably_dead_runs_only(tmp_path: Path) -> None:
    owners = _owners(tmp_path)
    base = tmp_path / "scratch"
    base.mkdir()
    dirs = {}
    for case, owner in owners.items():
        root = base / f"{RUN_PREFIX}{case}-x"
        root.mkdir()
        (root / OWNER_FILE).write_text(owner.label())
        (root / "claude-code").mkdir()
        dirs[case] = root
    unlabelled = base / f"{RUN_PREFIX}being-created-x"  # a run between mkdtemp and its label
    unlabelled.mkdir()
    removed = set(sweep_run_dirs([base]))
    assert removed == {dirs[c] for c in SWEPT}
    assert unlabelled.exists()
    assert set(sweep_run_dirs([base], include_live=True)) == {dirs[c] for c in owners if c not in SWEPT} | {unlabelled}


def test_a_killed_run_leaves_nothing_the_next_run_does_not_sweep(pg_server: Any, tmp_path: Path) -> None:
    """SIGKILL a real runner mid-run; its databases, roles and transcripts go with the next sweep."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code = ("import sys, time\n"
            "from brainbench.brain.databases import BrainDatabases\n"
            "from brainbench.brain.server import ExternalPostgres\n"
            "from brainbench.scratch_owner import owned_scratch_dir\n"
            "dbs = BrainDatabases(ExternalPostgres(sys.argv[1]), 'killedrun', ['codex', 'openclaw'])\n"
            "dbs.prepare(); dbs.create()\n"
            "owned_scratch_dir('brainbench-run-killedrun-')\n"
            "print('ready', flush=True); time.sleep(60)\n")
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(scratch)}
    child = subprocess.Popen([sys.executable, "-c", code, pg_server.admin_url], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    finally:
        child.kill()
        child.wait()
    server = ExternalPostgres(pg_server.admin_url)
    assert [n for n, rid, _ in list_brainbench_databases(server) if rid == "killedrun"]
    report = sweep_databases(server)
    assert len([n for n in report.databases if "killedrun" in n]) == 2  # template + one brain
    assert len([n for n in report.roles if "killedrun" in n]) == 2  # one per seam
    [leftover] = [p for p in scratch.iterdir() if p.name.startswith(RUN_PREFIX)]
    assert sweep_run_dirs([scratch]) == [leftover]
    assert not leftover.exists()
