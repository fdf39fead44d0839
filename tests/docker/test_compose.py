"""``scripts/compose run --rm brainbench`` as a newcomer runs it (docs/CONTAINERS.md), against the real engine.

No base-image variables, no build flags: on an engine that reaches no registry (this one) the
script builds what is missing or stale from the offline bases by itself, with its build output on
stderr, so stdout is the scoreboard alone; a second run rebuilds nothing.  Images are tagged
``bbtest-ux`` so the shared ``:latest`` tags are never replaced.  Checks: the run succeeds with
progress on stderr, the result is 0644 and owned by the corpus's owner and readable by an
unprivileged user, and after ``down`` nothing of the project (containers, networks, volumes) nor
of the run's seam containers is left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from brainbench import __version__

REPO = Path(__file__).resolve().parents[2]
BASES = ("brainbench/base:bookworm", "brainbench/postgres-base:bookworm")
IMAGES = ("postgres", "openclaw", "claude-code", "codex", "brainbench")

pytestmark = pytest.mark.timeout(1800)


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def compose_env() -> Iterator[dict[str, str]]:
    if shutil.which("docker") is None or subprocess.run(["docker", "compose", "version"], capture_output=True,
                                                         check=False).returncode != 0:
        pytest.skip("docker compose v2 not installed (scripts/start-dockerd installs it)")
    missing = [b for b in BASES if _docker("image", "inspect", b).returncode != 0]
    if missing:
        pytest.skip(f"offline bases not built ({', '.join(missing)}): run scripts/build-images --offline")
    out = Path(tempfile.mkdtemp(prefix="bbtest-ux-out-"))
    work = Path(tempfile.mkdtemp(prefix="bbtest-ux-work-"))
    for d in (out, work):
        d.chmod(0o755)  # a non-root user must be able to reach the result
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("BRAINBENCH_", "DOCKER_BUILDKIT"))},
           "BRAINBENCH_TAG": "bbtest-ux", "BRAINBENCH_OUT_DIR": str(out), "BRAINBENCH_WORKDIR": str(work),
           "COMPOSE_PROJECT_NAME": f"bbtest-ux-{uuid.uuid4().hex[:8]}"}
    try:
        yield env
    finally:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _compose(env: dict[str, str], *args: str, timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "scripts" / "compose"), *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)


def _image_id(ref: str) -> str:
    return _docker("image", "inspect", "--format", "{{.Id}}", ref).stdout.strip()


def _left(kind: str, label: str) -> list[str]:
    proc = _docker(kind, "ls", *(["-a"] if kind == "container" else []), "-q", "--filter", f"label={label}")
    return proc.stdout.split()


def test_compose_run_and_down(compose_env: dict[str, str]) -> None:
    project = compose_env["COMPOSE_PROJECT_NAME"]
    out = Path(compose_env["BRAINBENCH_OUT_DIR"])
    try:
        narrow = ("run", "--rm", "-e", "BRAINBENCH_HARNESS=codex", "-e", "BRAINBENCH_SUITE=know-to-ask", "brainbench")
        proc = _compose(compose_env, *narrow)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        # stdout is the scoreboard and nothing else: no build log, no compose chatter.
        assert proc.stdout.startswith("# BrainBench scoreboard"), proc.stdout[:2000]
        assert "replayed " in proc.stderr  # progress is visible without a TTY
        assert "brainbench: clean, not gated" in proc.stderr  # the closing line
        result = out / "compose-result.json"
        doc = json.loads(result.read_text())
        assert doc["seed_failures"] == [] and {c["harness"] for c in doc["cells"]} == {"codex"}
        st = result.stat()
        assert st.st_mode & 0o777 == 0o644
        owner = (REPO / "fixtures").stat()
        assert (st.st_uid, st.st_gid) == (owner.st_uid, owner.st_gid)
        assert (out / "brainbench-ledger.jsonl").stat().st_uid == owner.st_uid
        if shutil.which("setpriv"):
            nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat",
                                     str(result)], capture_output=True, text=True, check=False)
            assert nobody.returncode == 0 and json.loads(nobody.stdout) == doc, nobody.stderr
        run_id = doc["_meta"]["run"]["run_id"]
        # Up-to-date images are not rebuilt: a second run starts from the same images.
        ids = {n: _image_id(f"brainbench/{n}:bbtest-ux") for n in IMAGES}
        again = _compose(compose_env, *narrow)
        assert again.returncode == 0, again.stderr[-4000:]
        assert "build-images: nothing to build" in again.stderr and "docker build" not in again.stderr
        assert again.stdout.startswith("# BrainBench scoreboard")
        assert {n: _image_id(f"brainbench/{n}:bbtest-ux") for n in IMAGES} == ids
        assert all(ids.values())
        run_ids = [run_id, json.loads((out / "compose-result.json").read_text())["_meta"]["run"]["run_id"]]
        # Compose builds carry the labels scripts/build-images gives: the package version, the revision.
        for image in ("codex", "brainbench"):
            labels = json.loads(_docker("image", "inspect", "--format", "{{json .Config.Labels}}",
                                        f"brainbench/{image}:bbtest-ux").stdout)
            assert labels["org.opencontainers.image.version"] == __version__, labels
            assert labels["org.opencontainers.image.revision"] not in ("", "unknown"), labels
    finally:
        down = _compose(compose_env, "down", "--volumes", "--remove-orphans", timeout=300)
    assert down.returncode == 0, down.stderr
    for kind in ("container", "network", "volume"):
        assert _left(kind, f"com.docker.compose.project={project}") == [], kind
    for rid in run_ids:
        assert _left("container", f"brainbench.run_id={rid}") == []
        assert _left("network", f"brainbench.run_id={rid}") == []


def test_without_the_offline_bases_one_line_names_the_command_to_run_first(tmp_path: Path) -> None:
    """An engine that has never built anything (a fresh second engine) and reaches no registry:
    that command stops before compose starts, in one line, with nothing on stdout."""
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI")
    from second_engine import second_engine  # type: ignore[import-not-found]

    with second_engine() as (host, _client):
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")},
               "DOCKER_HOST": host, "BRAINBENCH_DOCKER_SOCKET": str(tmp_path / "unused.sock"),
               "BRAINBENCH_TAG": "bbtest-ux", "COMPOSE_PROJECT_NAME": f"bbtest-ux-{uuid.uuid4().hex[:8]}"}
        proc = _compose(env, "run", "--rm", "brainbench", timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "scripts/compose: no offline base image brainbench/base:bookworm brainbench/postgres-base:bookworm on this "
        "engine: run `bash scripts/build-images --offline` once first (it builds them from Debian's packages; "
        "docs/CONTAINERS.md, \"Offline\")"], proc.stderr
