"""A seed that writes until the disk is full fails its own fixture, on the shared server of a real run.

Behind claude-code, an image (seed contract v1, built offline from ``brainbench/example-base``)
whose ``seed`` for one fixture inserts rows until it is stopped; every other fixture it seeds
honestly.  With the clone's share shrunk to 32 MiB (``BRAINBENCH_BRAIN_SHARE``), the runner cuts
that clone's owner off: the fixture is a seed failure of that seam naming its share, its other
fixtures are graded, the server stays up, and the honest seams' cells and turn rows are
byte-identical to a clean run (latency aside).
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
from image_build import build_image  # type: ignore[import-not-found]
from memo_image import CREATE_TABLE, HOOK, SEED_PAGES  # type: ignore[import-not-found]
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

BASE = "brainbench/example-base:bookworm"  # Debian with psql and jq, built offline by scripts/build-images
TAG = "bbtest-i26s-seed-flood:1"
FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active", "cont-001-widget-pass-writer",
            "cont-001-widget-pass-reader")
FLOODS = "kta-001-deal-recall"
HOSTILE = "claude-code"
HONEST = ("codex", "openclaw")

INIT = """#!/bin/sh
set -eu
psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 \\
  -c "@CREATE_TABLE@" >/dev/null
""".replace("@CREATE_TABLE@", CREATE_TABLE)
SEED = """#!/bin/sh
set -eu
doc=$(cat)
if [ "${BRAINBENCH_FIXTURE:-}" = "@FLOODS@" ]; then
  psql "$BRAINBENCH_DATABASE_URL" -X -q -c "CREATE TABLE junk (x text)" >/dev/null
  n=0
  while [ $n -lt 2000 ]; do  # about 2 GiB if nothing stops it
    psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 \\
      -c "INSERT INTO junk SELECT repeat(md5(g::text), 32) FROM generate_series(1, 1000) g" >/dev/null
    n=$((n + 1))
  done
  exit 0
fi
""".replace("@FLOODS@", FLOODS) + SEED_PAGES
LABEL = {"version": 1, "extensions": [], "init": ["/opt/memo/init"], "seed": ["/opt/memo/seed"],
         "init_timeout_s": 30, "seed_timeout_s": 60}


@pytest.fixture(scope="module")
def flood_image() -> str:
    try:
        import docker

        client = docker.from_env(version="auto")
        client.ping()
    except Exception as exc:  # no SDK or no engine: the reason is the skip message
        pytest.skip(f"no Docker engine reachable ({exc.__class__.__name__}); run: eval \"$(scripts/start-dockerd)\"")
    try:
        client.images.get(BASE)
    except Exception:
        pytest.skip(f"{BASE} is not built; run: scripts/build-images --offline")
    return build_image(client, TAG, {
        "Dockerfile": f"FROM {BASE}\nCOPY init seed hook /opt/memo/\n"
                      f"LABEL io.brainbench.brain={json.dumps(json.dumps(LABEL))}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "init": INIT, "seed": SEED, "hook": HOOK})


def _run(corpus: tuple[Path, Path], out: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]), "--gold",
                           str(corpus[1]), "--jobs", "2", "--quiet", "--json", "--out", str(out), *extra],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600, check=False)
    assert out.exists(), f"no result written (exit {proc.returncode}): {proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr and "bug" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(out.read_text())



def test_a_seed_writing_until_the_disk_is_full_fails_its_own_fixture(
        flood_image: str, reference: Path, tmp_path: Path) -> None:
    corpus = copy_reference_corpus(reference, tmp_path / "corpus", FIXTURES)
    clean = _run(corpus, tmp_path / "clean.json")
    result = _run(corpus, tmp_path / "flood.json", "--image", f"{HOSTILE}={flood_image}",
                  env={"BRAINBENCH_BRAIN_SHARE": json.dumps({"clone_bytes": 32 << 20, "poll_s": 0.1})})

    failures = {f["fixture_id"]: f["error"] for f in result["seed_failures"]}
    assert set(failures) == {FLOODS}, failures
    error = failures[FLOODS]
    assert f"in seam {HOSTILE} (image {flood_image})" in error, error
    assert "went over its share of the shared brain: its database grew to" in error, error
    assert "past its 32 MiB (cut off by the runner)" in error, error
    assert not result["_meta"]["faults"], result["_meta"]["faults"][:3]
    # Its other fixtures were seeded and graded; the run went on to the end.
    ours = {r["fixture_id"] for r in result["turn_rows"] if r["harness"] == HOSTILE}
    assert "ms-002-nondefault-active" in ours and FLOODS not in ours, ours
    assert result["_meta"]["run"]["complete"] is True
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


SHARE_HOOK = Path(__file__).parent / "hooks" / "share_hook.py"
HOOK_BASE = "brainbench/claude-code:latest"  # python3 + psycopg; built offline by scripts/build-images


# The local tests' shrunk shares (test_brain_share.py), met in seconds.
SHARE = {"temp_file_limit_kb": 2048, "seam_temp_bytes": 3 << 20, "statement_s": 3, "grace_s": 1, "poll_s": 0.25}


def _check_flood(report: dict[str, Any], cap: int) -> str:
    assert 1 <= report["held"] <= cap and report["refused"] >= 400 - cap, report
    assert report["messages"] == [f"seam {HOSTILE} holds its share of {cap} brain connections"], report
    # Its container mounts its own gate alone: no other seam's gate, not the server's socket.
    assert report["reach"] and all(v.startswith("blocked") for v in report["reach"].values()), report
    return f"more than {cap} connections open at once"


def _check_temp(report: dict[str, Any], cap: int) -> str:
    assert report["raise_limit"] == "refused: InsufficientPrivilege", report
    assert report["big_sort"].startswith("refused") and "temp_file_limit" in report["big_sort"], report
    assert report["cursors_alive"] <= 1, report
    return "temporary files reached"


def _check_timeout(report: dict[str, Any], cap: int) -> str:
    bound = SHARE["statement_s"] + SHARE["grace_s"]
    assert report["statement"].startswith("ended: terminating connection"), report
    assert bound <= report["statement_s"] < bound + 4, report
    assert report["idle"] == "ended" and bound <= report["idle_s"] < bound + 4, report
    return f"past {SHARE['statement_s']} s"


@pytest.mark.parametrize("attack, check", [("flood", _check_flood), ("temp", _check_temp),
                                           ("timeout", _check_timeout)])
def test_a_containers_grab_at_the_shared_brain_costs_its_own_seam_only(
        reference: Path, tmp_path: Path, attack: str, check: Any) -> None:
    """Docker: the hook of test_brain_share.py as an image (exec mode) behind claude-code; its seam's
    share holds from a container as from a local process, and only its own calls fail."""
    try:
        import docker

        client = docker.from_env(version="auto")
        client.images.get(HOOK_BASE)
    except Exception as exc:
        pytest.skip(f"no Docker engine or no {HOOK_BASE} ({exc.__class__.__name__}); run: scripts/build-images "
                    "--offline")
    image = build_image(client, f"bbtest-i26s-share-{attack}:1", {
        "Dockerfile": f"FROM {HOOK_BASE}\nCOPY share_hook.py /share/hook.py\nUSER 65534:65534\n"
                      f'ENTRYPOINT ["python3", "/share/hook.py", "--attack", "{attack}", "--report", "-",'
                      ' "--times", "2"]\n',
        "share_hook.py": SHARE_HOOK})
    corpus = copy_reference_corpus(reference, tmp_path / "corpus", FIXTURES)
    clean = _run(corpus, tmp_path / "clean.json")
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.{HOSTILE}]\nimage = "{image}"\nmode = "exec"\n')
    result = _run(corpus, tmp_path / "hostile.json", "--seams", str(seams),
                  env={"BRAINBENCH_BRAIN_SHARE": json.dumps(SHARE)})

    cap = result["_meta"]["run"]["concurrency"]["budget"]["per_hook_role"]
    trace_file = tmp_path / result["_meta"]["trace"]["path"]  # relative: beside the result; else absolute
    trace = [json.loads(line) for line in trace_file.read_text().splitlines()]
    reports = [json.loads(line.split("share-report: ", 1)[1]) for row in trace if row["harness"] == HOSTILE
               for line in (row.get("stderr_tail") or "").splitlines() if line.startswith("share-report: ")]
    assert len(reports) == 2, reports
    (what,) = {check(report, cap) for report in reports}  # every report checked; one label
    faults = result["_meta"]["faults"]
    assert len(faults) >= 2 and all(
        f["harness"] == HOSTILE and f["fault_class"] == "contract_violation"
        and f["detail"].startswith(f"seam {HOSTILE} went over its share of the shared brain: ")
        for f in faults), faults
    assert any(what in f["detail"] for f in faults), faults
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"
