"""A hostile image on its own private brain server: its superuser stalls the runner, and only its seam pays.

The image (seed contract, ``"server": "private"``) keeps a one-table memory like the examples in
tests/docker/test_seed_contract.py, but as its server's superuser it leaves a session behind that
holds ``pg_database`` in ACCESS EXCLUSIVE mode and sleeps: every new connection to that server
then waits in its start-up, the runner's included.  Behind codex, in a real run next to our
honest adapters:

* the stall is codex's seed failure, of that fixture and of every later one (the runner waits
  for that server once, bounded: brain/guarded.py), its hooks time out, and the honest seams'
  cells and turn rows equal a clean run's; the run ends, exit 2, nothing left behind;
* SIGINT or SIGTERM while the runner waits on that server ends the run at once, nothing left;
* SIGKILL leaves the servers and their socket directories, which the next run's sweep removes;
* ``brainbench doctor`` on such an image fails one check, in one line, instead of stopping.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from brainbench.models.owner import Owner
from brainbench.scratch_owner import scratch_dirs, scratch_owner
from container_kit import CLIENT, build, needs_docker, repo_root
from image_build import build_image  # type: ignore[import-not-found]
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

pytestmark = [needs_docker, pytest.mark.timeout(900)]
BASE = "brainbench/example-base:bookworm"  # Debian with psql and jq
IDS = ("kta-001-deal-recall", "ms-001-two-source-alias", "ms-002-nondefault-active")
STALLS = "kta-903-brain-stalls"
HONEST = ("claude-code", "openclaw")

# A superuser session that holds a shared catalog and sleeps: new connections wait in their start-up.
LOCKER = ('setsid psql "$BRAINBENCH_DATABASE_URL" -X -q -c "BEGIN; LOCK TABLE pg_catalog.pg_database IN ACCESS '
          'EXCLUSIVE MODE; SELECT pg_sleep(3600)" </dev/null >/dev/null 2>&1 & sleep 1')
INIT = """#!/bin/sh
set -eu
psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 \\
  -c "CREATE TABLE memo (source text, slug text, title text, body text, PRIMARY KEY (source, slug))" >/dev/null
[ -z "${STALL_IN_INIT:-}" ] || { LOCKER; }
""".replace("LOCKER", LOCKER)
SEED = """#!/bin/sh
set -eu
doc=$(cat)
printf '%s\\n' "INSERT INTO memo SELECT p->>'source', p->>'slug', p->>'title', p->>'body'
  FROM json_array_elements((:'doc')::json->'pages') p ON CONFLICT DO NOTHING;" |
  psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -v doc="$doc" >/dev/null
case "${BRAINBENCH_FIXTURE:-}" in *brain-stalls*) LOCKER ;; esac
""".replace("LOCKER", LOCKER)
# Silent, once its own server has answered (under the lock it waits, and the call times out).
HOOK = """#!/bin/sh
cat >/dev/null
psql "$BRAINBENCH_DATABASE_URL" -X -q -t -A -c "SELECT count(*) FROM memo" >/dev/null || exit 1
"""
LABEL = {"version": 1, "server": "private", "extensions": ["pg_trgm"], "init": ["/opt/memo/init"],
         "seed": ["/opt/memo/seed"], "init_timeout_s": 30, "seed_timeout_s": 10}


@pytest.fixture(scope="module")
def image() -> str:
    from pgvector_brain import ensure_pgvector_image  # type: ignore[import-not-found]

    ensure_pgvector_image(CLIENT)  # the private server's image
    label = json.dumps(json.dumps(LABEL))
    return build_image(CLIENT, "bbtest-exec-stalling-brain:latest", {
        "Dockerfile": f"FROM {BASE}\nCOPY init seed hook /opt/memo/\nLABEL io.brainbench.brain={label}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "init": INIT, "seed": SEED, "hook": HOOK})


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    fx, gd = copy_reference_corpus(reference, tmp_path_factory.mktemp("corpus"), IDS)
    for kind, folder in (("fixture", fx), ("gold", gd)):
        doc = json.loads((folder / f"kta-001-deal-recall.{kind}.json").read_text())
        doc["fixture_id"] = STALLS
        (folder / f"{STALLS}.{kind}.json").write_text(json.dumps(doc))
    return fx, gd


def _cli(corpus: tuple[Path, Path], out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--jobs", "1", "--fixtures", str(corpus[0]),
            "--gold", str(corpus[1]), "--out", str(out), "--ledger", str(out.parent / "ledger.jsonl"), *args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CI"}


def _seams(tmp: Path, image: str, **env: str) -> Path:
    seams = tmp / "seams.toml"
    extra = ", ".join(f'{k} = "{v}"' for k, v in env.items())
    seams.write_text(f'[seams.codex]\nimage = "{image}"\ntimeout_s = 4\nenv = {{ {extra} }}\n')
    return seams


def _honest(doc: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    cells = [c for c in doc["cells"] if c["harness"] in HONEST]
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"] if r["harness"] in HONEST]
    return cells, rows


def _left_by(pid: int) -> list[str]:
    """Containers, networks and scratch directories whose owner label names ``pid``."""
    def owned(labels: dict[str, str] | None) -> bool:
        raw = (labels or {}).get("brainbench.owner")
        return bool(raw) and Owner.from_label(raw).pid == pid

    managed = {"label": "brainbench.managed=1"}
    return ([f"container {c.name}" for c in CLIENT.containers.list(all=True, filters=managed, ignore_removed=True)
                                         if owned(c.labels)]
            + [f"network {n.name}" for n in CLIENT.networks.list(filters=managed) if owned(n.attrs.get("Labels"))]
            + [f"scratch {d}" for d in scratch_dirs("brainbench-run-")
               if (owner := scratch_owner(d)) is not None and owner.pid == pid])


def test_a_stalling_private_server_fails_its_own_seam_only(image: str, corpus: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    (tmp_path / "clean").mkdir()
    clean = subprocess.run(_cli(corpus, tmp_path / "clean" / "r.json"), capture_output=True, text=True,
                           timeout=600, check=False, env=_env(), cwd=repo_root())
    assert clean.returncode == 0, clean.stderr[-3000:]
    started = time.monotonic()
    proc = subprocess.Popen(_cli(corpus, tmp_path / "r.json", "--seams", str(_seams(tmp_path, image))),
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_env(), cwd=repo_root())
    _, stderr = proc.communicate(timeout=600)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, stderr[-3000:]
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["_meta"]["run"]["complete"] is True
    failures = [f["error"] for f in doc["seed_failures"]]
    assert failures and all("in seam codex" in error for error in failures), failures
    # The stall is bounded wherever it lands: on the runner's log-in or on a statement of a connection it
    # already holds (a clone, the share check: brain/guarded.py), or, when the clone was made ahead of the
    # lock (orchestrator/clone_pool.py), on the image's next seed.
    bounded = ("its private brain server did not let the runner connect within 15 s",
               "its private brain server held a lock the runner waited for over 15 s",
               "timed out after 10 s and was killed")
    assert any(b in e for e in failures for b in bounded), failures
    assert {f["harness"] for f in doc["_meta"]["faults"]} <= {"codex"}, doc["_meta"]["faults"]
    assert _honest(doc) == _honest(json.loads((tmp_path / "clean" / "r.json").read_text()))
    assert elapsed < 300  # one bounded wait, never a hang
    assert _left_by(proc.pid) == []


def test_doctor_reports_a_stalling_private_server_as_a_failed_check(image: str) -> None:
    """Its init leaves the lock behind: doctor's own work on that server stalls, and says so in one check."""
    stalling = build_image(CLIENT, "bbtest-exec-stalling-brain:init",
                           {"Dockerfile": f"FROM {image}\nENV STALL_IN_INIT=1\n"})
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "doctor", "--image", stalling], capture_output=True,
                          text=True, timeout=600, check=False, env={**_env(), "COLUMNS": "250"}, cwd=repo_root())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    assert "seed contract init (exec) │ PASS" in text, text
    assert "seed contract private server (exec) │ FAIL" in text, text
    assert "its private brain server did not let the runner connect within 15 s" in text, text


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_stalled_on_a_private_server_leaves_nothing(image: str, corpus: tuple[Path, Path],
                                                                      tmp_path: Path, sig: signal.Signals) -> None:
    # The stall comes right after init: the runner waits on that server to seal the template.
    seams = _seams(tmp_path, image, STALL_IN_INIT="1")
    proc = subprocess.Popen(_cli(corpus, tmp_path / "r.json", "--seams", str(seams)),
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_env(), cwd=repo_root())
    try:
        _wait_for_private_server(proc)
        time.sleep(6)  # init (with its locker) is done: the runner is waiting on the server
        interrupted = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
        assert time.monotonic() - interrupted < 30, "the run waited on the stalled server after the signal"
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + sig, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert _left_by(proc.pid) == []


def _wait_for_private_server(proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        if any(c.startswith("container ") and c.endswith("-brain") for c in _left_by(proc.pid)):
            return
        time.sleep(0.5)
    raise AssertionError("the run never started its private brain server")


# Alone: a killed run's leftovers are fair game for any concurrent run's start-of-run sweep, so they
# may vanish before this test has seen them.
@pytest.mark.alone
def test_a_killed_runs_private_server_is_swept_by_the_next_run(image: str, corpus: tuple[Path, Path],
                                                               reference: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(_cli(corpus, tmp_path / "r.json", "--seams", str(_seams(tmp_path, image))),
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=_env(), cwd=repo_root())
    try:
        _wait_for_private_server(proc)  # type: ignore[arg-type]
    finally:
        proc.kill()  # no handler runs: the leftovers are real
        proc.wait()
    # Its server is left (its socket directory too, unless a concurrent run's start swept that already).
    left = _left_by(proc.pid)
    assert any(item.endswith("-brain") for item in left), left
    # The next run, with a seam on the Docker executor (a silent hook of ours): its start sweeps what a
    # dead owner left.
    silent = build("silent", 'USER 10001:10001\nENTRYPOINT ["/bin/sh", "-c", "cat >/dev/null"]\n')
    fx, gd = copy_reference_corpus(reference, tmp_path / "next", ("kta-001-deal-recall",))
    nxt = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--image", f"openclaw={silent}",
                          "--harness", "openclaw", "--fixture", "kta-001-deal-recall", "--fixtures", str(fx),
                          "--gold", str(gd), "--ledger",
                          str(tmp_path / "l.jsonl")], capture_output=True, text=True, timeout=600, check=False,
                         env=_env(), cwd=repo_root())
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    assert _left_by(proc.pid) == []
