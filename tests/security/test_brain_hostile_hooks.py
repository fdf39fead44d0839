"""Hostile hooks against the brain: every attack fails, and no honest seam's grade moves.

One seam (claude-code) is replaced by ``hooks/hostile_brain_hook.py``, which on every
call tries superuser actions, ``COPY … PROGRAM``, server file reads of the gold,
connections to the template and the other fixtures' databases, writes and object
creation in its own database, a hunt for credentials in every environment it can read,
and taking more connections than its role allows.  It answers only if every attack
failed (else it exits 2 and the run records the breach as a fault).

Each test then compares the honest seams (codex, openclaw) with a clean run of the same
corpus: cells and turn rows byte for byte (latency aside, which is wall-clock).
Local mode runs the hook as a real process; Docker mode builds it into an image
offline, the way tests/docker does, and skips only when no engine answers.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain.roles import list_brainbench_roles
from hostile_kit import honest_view  # type: ignore[import-not-found]
from psycopg import sql
from reference_corpus import copy_reference_corpus

HOOK = Path(__file__).parent / "hooks" / "hostile_brain_hook.py"
FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active", "cont-001-widget-pass-writer",
            "cont-001-widget-pass-reader")
HOSTILE = "claude-code"
HONEST = ("codex", "openclaw")
IMAGE_TAG = "bbtest-sec-hostile-brain:latest"
HOSTILE_BASE = "brainbench/claude-code:latest"  # has python3 + psycopg; built offline by scripts/build-images


def _bench(args: list[str], env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, check=False)


def _run(corpus: tuple[Path, Path], out: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    fixtures, gold = corpus
    proc = _bench(["--fixtures", str(fixtures), "--gold", str(gold), "--jobs", "2", "--quiet", "--json",
                   "--out", str(out), *extra], env)
    assert out.exists(), f"no result written (exit {proc.returncode}): {proc.stderr[-3000:]}"
    return json.loads(out.read_text())



OVER_SHARE = f"seam {HOSTILE} went over its share of the shared brain: more than"


def _assert_contained(result: dict[str, Any], clean: dict[str, Any]) -> None:
    # Taking every connection it can, while its other calls hold theirs, is more than its seam's
    # share (brain/gate.py): those calls are its own contract violations, and nothing else is a fault.
    over = {(f["fixture_id"], f["turn_id"]) for f in result["_meta"]["faults"]
            if f["harness"] == HOSTILE and f["fault_class"] == "contract_violation"
            and f["detail"].startswith(OVER_SHARE)}
    breaches = [f for f in result["_meta"]["faults"] if (f["fixture_id"], f["turn_id"]) not in over]
    assert not breaches, f"the hostile hook got through: {breaches[:3]}"
    assert all(f["harness"] == HOSTILE for f in result["_meta"]["faults"]), result["_meta"]["faults"][:3]
    hostile_rows = [r for r in result["turn_rows"] if r["harness"] == HOSTILE]
    assert hostile_rows, "the hostile seam was never called"
    # It answered every other turn: every attack failed and its own brain stayed readable.
    answered = [r for r in hostile_rows if (r["fixture_id"], r["turn_id"]) not in over]
    assert answered and all(r["injected_tokens"] > 0 for r in answered), hostile_rows[:3]
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("hostile-corpus"), FIXTURES)


@pytest.fixture(scope="module")
def clean_local(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(corpus, tmp_path_factory.mktemp("clean-local") / "result.json")


def test_hostile_hook_program_is_contained_and_honest_seams_do_not_move(
        corpus: tuple[Path, Path], clean_local: dict[str, Any], tmp_path: Path) -> None:
    report = tmp_path / "attacks.jsonl"
    command = f"{sys.executable} {HOOK} --gold {corpus[1]} --report {report}"
    result = _run(corpus, tmp_path / "result.json", env={"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": command})

    calls = [json.loads(line) for line in report.read_text().splitlines()]
    assert calls, "the hostile hook never ran"
    for call in calls:
        got_through = {k: v for k, v in call["results"].items() if not v.startswith("blocked")}
        assert not got_through, got_through
        # The attacks it tried, by family: none may silently drop out of the suite.
        names = " ".join(call["results"])
        for family in ("superuser", "copy to program", "pg_read_file", "pg_ls_dir gold", "insert page",
                       "create temp table", "_tmpl", "connect to postgres", "exceed connection limit",
                       "read other sessions", "log in as postgres"):
            assert family in names, f"attack {family!r} was not tried"
        # It got exactly its role's limit, or less when its seam's gate stopped it first; never more.
        pool = call["results"]["exceed connection limit"]
        got = re.fullmatch(r"blocked: (\d+) of limit \1", pool) or re.fullmatch(
            r"blocked by its seam's gate: (\d+) of limit (\d+)", pool)
        assert got and int(got.group(1)) <= int(got.groups()[-1]), call
    assert any(call["pages"] > 0 for call in calls), "the hook never saw its own brain: attacks proved nothing"
    # Different fixtures' databases were in reach by name, none by connection.
    assert any(k.startswith("connect to bb_") and not k.endswith("_tmpl") for c in calls for k in c["results"])
    assert not list(Path("/tmp").glob("bb-hostile-*")), "COPY … TO PROGRAM or TO a file wrote on the host"
    _assert_contained(result, clean_local)


@contextlib.contextmanager
def external_user(pg_server: Any, name: str, attributes: str, password: str) -> Iterator[str]:
    """A login role on the session's server, as a user of an external server would be handed one.

    It may connect to the maintenance database like any user of a server: the session's embedded
    server locks its stock databases once a run has used it as its own.
    """
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN {} PASSWORD {}").format(
            sql.Identifier(name), sql.SQL(attributes), sql.Literal(password)))
        admin.execute(sql.SQL("GRANT CONNECT ON DATABASE postgres TO {}").format(sql.Identifier(name)))
    try:
        yield pg_server.role_url("postgres", name, password)
    finally:
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("REVOKE ALL ON DATABASE postgres FROM {}").format(sql.Identifier(name)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def test_an_external_servers_credentials_never_reach_a_hook(corpus: tuple[Path, Path], pg_server: Any,
                                                           tmp_path: Path) -> None:
    """With --database-url the hook gets a role the runner created, never the user's login or PG* variables."""
    dump = tmp_path / "env.jsonl"
    script = tmp_path / "dump_env.py"
    script.write_text(
        "import json, os, sys\n"
        "sys.stdin.read()\n"
        f"open({str(dump)!r}, 'a').write(json.dumps(dict(os.environ)) + '\\n')\n")
    # Not a superuser: CREATEDB and CREATEROLE are all a run needs on a server it does not own.
    with external_user(pg_server, "bbtest_sec_owner", "CREATEDB CREATEROLE", "owner-secret-pw") as user_url:
        result = _run(corpus, tmp_path / "result.json", "--database-url", user_url,
                      env={"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": f"{sys.executable} {script}",
                           "PGPASSWORD": "users-secret", "PGUSER": "postgres"})
    assert not result["_meta"]["faults"], result["_meta"]["faults"][:3]
    envs = [json.loads(line) for line in dump.read_text().splitlines()]
    assert envs
    secret = user_url.split("@")[0].rsplit(":", 1)[1]
    for env in envs:
        url = env["BRAINBENCH_DATABASE_URL"]
        assert url.startswith("postgresql://bb_") and "_claude_code:" in url, url
        assert secret not in json.dumps(env) and "users-secret" not in json.dumps(env)
        assert not [k for k in env if k.startswith("PG")]
    run_id = result["_meta"]["run"]["run_id"]
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        assert run_id not in [rid for _, rid, _ in list_brainbench_roles(admin)], "the run dropped its hook roles"
        assert not admin.execute("SELECT 1 FROM pg_database WHERE datname LIKE %s", (f"bb_{run_id}%",)).fetchall()


def test_an_external_role_without_createrole_is_one_clear_line(corpus: tuple[Path, Path], pg_server: Any,
                                                               tmp_path: Path) -> None:
    with external_user(pg_server, "bbtest_sec_limited", "CREATEDB", "limited-pw") as url:
        proc = _bench(["--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--quiet",
                       "--database-url", url, "--out", str(tmp_path / "r.json")])
        assert proc.returncode == 2, proc.stderr
        # Besides the run's one-line choice of jobs (brain/budget.py), one line: the failure.
        lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("jobs: ")]
        assert len(lines) == 1 and "lacks CREATEROLE" in lines[0] and "bbtest_sec_limited" in lines[0], lines
        assert "Traceback" not in proc.stderr and "bug" not in proc.stderr


# --- Docker: the same hook as an image --------------------------------------------------


def _docker() -> Any:
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:
        pytest.skip(f"docker SDK not installed ({exc}): pip install '.[docker]'")
    try:
        client = docker.from_env(version="auto")
        client.ping()
    except DockerException as exc:  # no engine: the reason is the skip message
        pytest.skip(f"no Docker engine reachable ({exc.__class__.__name__}); run: eval \"$(scripts/start-dockerd)\"")
    return client


@pytest.fixture(scope="module")
def hostile_image() -> str:
    client = _docker()
    from docker.errors import ImageNotFound

    try:
        client.images.get(HOSTILE_BASE)
    except ImageNotFound:
        pytest.skip(f"{HOSTILE_BASE} is not built; run: scripts/build-images --offline")
    dockerfile = (f"FROM {HOSTILE_BASE}\n"
                  "COPY hostile_brain_hook.py /hostile/hook.py\n"
                  "USER 65534:65534\n"
                  'ENTRYPOINT ["python3", "/hostile/hook.py"]\n').encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
        tar.add(str(HOOK), arcname="hostile_brain_hook.py")
    buf.seek(0)
    client.images.build(fileobj=buf, custom_context=True, tag=IMAGE_TAG, rm=True, pull=False)
    return IMAGE_TAG


def test_hostile_hook_image_is_contained_and_honest_seams_do_not_move(
        corpus: tuple[Path, Path], hostile_image: str, tmp_path: Path) -> None:
    clean = _run(corpus, tmp_path / "clean.json", "--executor", "docker")
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.{HOSTILE}]\nimage = "{hostile_image}"\nmode = "exec"\n'
                     f'env = {{ BB_GOLD = "{corpus[1]}", BB_HOSTILE_SCAN_ALL = "1" }}\n')
    result = _run(corpus, tmp_path / "hostile.json", "--executor", "docker", "--seams", str(seams))
    _assert_contained(result, clean)
