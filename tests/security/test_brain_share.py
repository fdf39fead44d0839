"""Each seam's share of the shared brain: a hook that takes more fails its own turns, no one else's.

Behind claude-code, ``hooks/share_hook.py`` attacks on its first two prompts: a flood of
connections that never log in, temp files past ``temp_file_limit`` and past the seam's share
together, and a statement (then a transaction) that lifts its own timeouts and ignores cancels.
The run shrinks the shares (``BRAINBENCH_BRAIN_SHARE``) so that each is met in seconds.  Each
test requires: the attack was stopped (the hook's own report says how), every turn during which
the hostile seam went over its share is that seam's ``contract_violation`` naming it, and the
honest seams' cells and turn rows are byte-identical to a clean run (latency aside).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_kit import honest_view  # type: ignore[import-not-found]
from reference_corpus import copy_reference_corpus

HOOK = Path(__file__).parent / "hooks" / "share_hook.py"
FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active", "cont-001-widget-pass-writer",
            "cont-001-widget-pass-reader")
HOSTILE = "claude-code"
HONEST = ("codex", "openclaw")
ATTACKING_CALLS = 2
# Small enough to meet in seconds, far above what the honest adapters use on these brains.  The seam's
# temp share is above one backend's temp_file_limit, so one sort meets its own bound first (with the share
# below it, the watchdog could end the sort between the two under load) and only cursors together pass it.
SHARE = {"temp_file_limit_kb": 2048, "seam_temp_bytes": 3 << 20, "statement_s": 3, "grace_s": 1, "poll_s": 0.25}


def _run(corpus: tuple[Path, Path], out: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    fixtures, gold = corpus
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fixtures), "--gold",
                           str(gold), "--jobs", "2", "--quiet", "--json", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300, check=False)
    assert out.exists(), f"no result written (exit {proc.returncode}): {proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr and "bug" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(out.read_text())



@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("share-corpus"), FIXTURES)


@pytest.fixture(scope="module")
def clean(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result = _run(corpus, tmp_path_factory.mktemp("clean") / "result.json")
    assert not result["_meta"]["faults"], result["_meta"]["faults"][:3]
    return result


@pytest.fixture(scope="module")
def clean_exec(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Exec mode: every honest call logs in anew, so a flood that starved the server would show."""
    result = _run(corpus, tmp_path_factory.mktemp("clean-exec") / "result.json", env={"BRAINBENCH_MODE": "exec"})
    assert not result["_meta"]["faults"], result["_meta"]["faults"][:3]
    return result


def _hostile_run(corpus: tuple[Path, Path], tmp_path: Path, attack: str,
                 env: dict[str, str] | None = None) -> tuple[dict[str, Any], list[dict]]:
    report = tmp_path / "attacks.jsonl"
    command = f"{sys.executable} {HOOK} --attack {attack} --report {report} --times {ATTACKING_CALLS}"
    result = _run(corpus, tmp_path / "result.json", env={"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": command,
                                                         "BRAINBENCH_BRAIN_SHARE": json.dumps(SHARE), **(env or {})})
    calls = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(calls) == ATTACKING_CALLS, calls
    return result, calls


def _assert_own_fault_only(result: dict[str, Any], clean: dict[str, Any], what: str) -> None:
    faults = result["_meta"]["faults"]
    assert all(f["harness"] == HOSTILE for f in faults), faults
    over = [f for f in faults if f["fault_class"] == "contract_violation"
            and f["detail"].startswith(f"seam {HOSTILE} went over its share of the shared brain")]
    # The attacking calls, and any call of the same seam in flight while it was over its share.
    assert ATTACKING_CALLS <= len(over) == len(faults), faults
    assert any(what in f["detail"] for f in over), over
    hostile_rows = [r for r in result["turn_rows"] if r["harness"] == HOSTILE]
    silent = {(r["fixture_id"], r["turn_id"]) for r in hostile_rows if r["injected_tokens"] == 0}
    assert silent == {(f["fixture_id"], f["turn_id"]) for f in over if f["turn_id"] > 0}, silent
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


def test_a_flood_of_connections_that_never_log_in_costs_its_own_seam_only(
        corpus: tuple[Path, Path], clean_exec: dict[str, Any], tmp_path: Path) -> None:
    # Without the gate, 400 pending logins held for 8 s leave the server "too many clients" for the
    # honest seams' calls in that time (seen on main before the gate: their turns became infra_error).
    result, calls = _hostile_run(corpus, tmp_path, "flood", {"BRAINBENCH_MODE": "exec"})
    cap = result["_meta"]["run"]["concurrency"]["budget"]["per_hook_role"]
    for call in calls:
        assert 1 <= call["held"] <= cap, call  # its other calls may hold some of the share at that moment
        assert call["refused"] >= 400 - cap, call
        assert call["messages"] == [f"seam {HOSTILE} holds its share of {cap} brain connections"], call
        # A login while the flood holds the share is refused, unless its other call let go meanwhile.
        assert call["login"] == "got in: (1,)" or "holds its share" in call["login"], call
    _assert_own_fault_only(result, clean_exec, f"more than {cap} connections open at once")


def test_temp_files_past_the_seams_share_end_its_own_sessions(
        corpus: tuple[Path, Path], clean: dict[str, Any], tmp_path: Path) -> None:
    result, calls = _hostile_run(corpus, tmp_path, "temp")
    for call in calls:
        assert call["raise_limit"] == "refused: InsufficientPrivilege", call  # superuser-only
        assert call["big_sort"].startswith("refused") and "temp_file_limit" in call["big_sort"], call
        # Each cursor's files are under temp_file_limit, over half the seam's share: at most one may survive.
        assert call["cursors_alive"] <= 1, call
    _assert_own_fault_only(result, clean, "temporary files reached")


def test_a_lifted_statement_timeout_still_ends_at_the_documented_bound(
        corpus: tuple[Path, Path], clean: dict[str, Any], tmp_path: Path) -> None:
    result, calls = _hostile_run(corpus, tmp_path, "timeout")
    bound = SHARE["statement_s"] + SHARE["grace_s"]
    for call in calls:
        assert call["statement"].startswith("ended: terminating connection"), call
        assert bound <= call["statement_s"] < bound + 4, call
        assert call["idle"] == "ended" and bound <= call["idle_s"] < bound + 4, call
    _assert_own_fault_only(result, clean, f"past {SHARE['statement_s']} s")


def test_an_image_seeded_database_past_its_share_is_cut_off_alone(pg_server: Any) -> None:
    """A seed (its clone's owner role) writing until the disk is full: the watchdog takes the role's
    logins and sessions at the clone's share, the seed's fixture fails as that seam's, and another
    seam's clone on the same server goes on writing."""
    import uuid

    import psycopg
    from brainbench.brain.databases import BrainDatabases
    from brainbench.brain.image_brains import ImageSeededBrains
    from brainbench.brain.shares import ShareLedger
    from brainbench.brain.watchdog import ShareWatchdog
    from brainbench.models.share import BrainShare

    run_id = uuid.uuid4().hex[:10]
    dbs = BrainDatabases(pg_server, run_id)
    ledger = ShareLedger()
    share = BrainShare(clone_bytes=32 << 20, poll_s=0.1)
    watchdog = ShareWatchdog(pg_server.admin_url, f"bb_{run_id}_", share, ledger, dbs.seam_of, dbs.clones)
    try:
        dbs.prepare()
        hostile, honest = (ImageSeededBrains(dbs, seam, "bbtest/seed") for seam in ("codex", "openclaw"))
        for brains in (hostile, honest):
            brains.prepare_template()
            brains.seal_template()
        flooded, other = hostile.clone(), honest.clone()
        watchdog.start()
        dbs.watchdog = watchdog
        written, error = 0, ""
        with psycopg.connect(flooded.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE junk (x text)")
            try:
                while written < 1 << 30:  # a gigabyte, if nothing stopped it
                    conn.execute("INSERT INTO junk SELECT repeat(md5(g::text), 32) FROM generate_series(1, 1000) g")
                    written += 1000 * 1024
            except psycopg.Error as exc:
                error = str(exc).strip().splitlines()[0]
        # The backend's last word ("terminating connection due to administrator command") is lost when it
        # closes while the client is still sending; who ended the session is checked just below.
        assert error.startswith(("terminating connection", "consuming input failed: server closed the connection")), \
            error
        assert written < 4 * share.clone_bytes, written  # stopped near its share, not at the disk's end
        why = hostile.over_share(flooded.name)
        assert why is not None and "past its 32 MiB (cut off by the runner)" in why, why
        assert ledger.since("codex", 0) == f"seam codex went over its share of the shared brain: {why}"
        assert ledger.count("openclaw") == 0
        with pytest.raises(psycopg.OperationalError, match="not permitted to log in"):
            psycopg.connect(flooded.url).close()
        # The other seam's clone on the same server: untouched, still its owner's to write.
        with psycopg.connect(other.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (x text)")
            conn.execute("INSERT INTO kept VALUES ('fine')")
            assert conn.execute("SELECT x FROM kept").fetchone() == ("fine",)
        assert honest.over_share(other.name) is None
    finally:
        watchdog.close()
        dbs.close()


@pytest.mark.parametrize("seam_temp_bytes, expect_ram", [(1 << 20, True), (1 << 50, False)])
def test_the_brain_is_in_ram_only_when_every_share_at_once_fits(
        corpus: tuple[Path, Path], tmp_path: Path, seam_temp_bytes: int, expect_ram: bool) -> None:
    """/dev/shm is memory: the cluster goes there only with room for every seam's whole share."""
    import shutil
    import tempfile

    free = shutil.disk_usage("/dev/shm").free
    if expect_ram and free < (2 << 30):
        pytest.skip(f"/dev/shm has {free >> 20} MiB free here: no run would use it")
    dump = tmp_path / "urls.txt"
    script = tmp_path / "dump_url.py"
    script.write_text("import os, sys\nsys.stdin.read()\n"
                      f"open({str(dump)!r}, 'a').write(os.environ['BRAINBENCH_DATABASE_URL'] + '\\n')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "BRAINBENCH_SCRATCH_DIR")}
    env |= {"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": f"{sys.executable} {script}",
            "BRAINBENCH_BRAIN_SHARE": json.dumps({"seam_temp_bytes": seam_temp_bytes})}
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]), "--gold",
                           str(corpus[1]), "--fixture", "kta-001-deal-recall", "--harness", HOSTILE, "--quiet",
                           "--json", "--out", str(out)], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert out.exists(), proc.stderr[-2000:]
    hosts = {line.split("host=", 1)[1] for line in dump.read_text().splitlines()}
    assert hosts and all(h.endswith("/gate0") for h in hosts), hosts  # through its gate, never the server
    where = "/dev/shm/" if expect_ram else tempfile.gettempdir() + "/"
    assert all(h.startswith(where) for h in hosts), hosts


def test_a_bad_share_setting_is_one_line(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]), "--gold",
                           str(corpus[1]), "--fixture", "kta-001-deal-recall", "--quiet",
                           "--out", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, "BRAINBENCH_BRAIN_SHARE": '{"statement_s": -1}'})
    assert proc.returncode == 2, proc.stderr
    assert "BRAINBENCH_BRAIN_SHARE: statement_s: Input should be greater than 0" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_lost_watchdog_connection_is_replaced_not_the_runs_failure(pg_server: Any) -> None:
    """The watchdog's connection can be lost mid-run (a statement timeout under load, a backend ended
    from outside); a seed's last check (``over_size``, from the runner's thread) then opens a new one
    instead of failing the run with the driver's error (once, under the full suite's load: "the brain
    database failed: the connection is closed")."""
    import uuid

    import psycopg
    from brainbench.brain.databases import BrainDatabases
    from brainbench.brain.image_brains import ImageSeededBrains
    from brainbench.brain.shares import ShareLedger
    from brainbench.brain.watchdog import ShareWatchdog
    from brainbench.models.share import BrainShare

    run_id = uuid.uuid4().hex[:10]
    dbs = BrainDatabases(pg_server, run_id)
    share = BrainShare(clone_bytes=32 << 20, poll_s=3600)  # no pass of its own: only the seed's check
    watchdog = ShareWatchdog(pg_server.admin_url, f"bb_{run_id}_", share, ShareLedger(), dbs.seam_of, dbs.clones)
    try:
        dbs.prepare()
        brains = ImageSeededBrains(dbs, "codex", "bbtest/seed")
        brains.prepare_template()
        brains.seal_template()
        clone = brains.clone()
        watchdog.start()
        dbs.watchdog = watchdog
        assert brains.over_share(clone.name) is None
        lost = watchdog._conn
        assert lost is not None
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (lost.info.backend_pid,))
        assert brains.over_share(clone.name) is None  # answered on a new connection
        assert watchdog._conn is not None and watchdog._conn is not lost and not watchdog._conn.closed
    finally:
        watchdog.close()
        dbs.close()
