"""The Docker provider's lifecycle: the brain is given once, modes come from the image's label.

* ``prepare`` gets the database; calls with per-fixture database URLs never recreate the
  seam container (it used to be recreated on its first graded call).
* An image runs in stream mode only if it declares ``io.brainbench.modes``; asked for
  stream explicitly, an exec-only image fails at start with one clear line.
* ``--image SEAM=IMAGE`` alone (no ``--executor docker``) runs that seam in Docker and the
  others locally.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.executors.base import ExecutorError, HookCall, HookOutcome, RunContext, SeamLaunch
from engine_probe import BASE, docker_or_reason  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
EXEC_ONLY = "#!/bin/sh\ncat >/dev/null\nexit 0\n"


CLIENT, REASON = docker_or_reason()
pytestmark = pytest.mark.skipif(CLIENT is None, reason=REASON)


def build(tag: str, label: str = "") -> str:
    dockerfile = f"FROM {BASE}\nCOPY hook.sh /hook.sh\n{label}USER 10001:10001\nENTRYPOINT [\"/hook.sh\"]\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile, "hook.sh": EXEC_ONLY}.items():
            raw = data.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(raw), 0o755
            tar.addfile(info, io.BytesIO(raw))
    buf.seek(0)
    CLIENT.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True, pull=False)
    return tag


@pytest.fixture(scope="module")
def exec_only_image() -> str:
    return build("bbtest-exec-execonly:latest")


def test_no_container_is_recreated_during_a_run(pg_server: Any) -> None:
    from brainbench.executors.docker import DockerExecutor

    run_id = f"bbtest-exec-{uuid.uuid4().hex[:8]}"
    # One database per fixture, as the orchestrator hands them out (this hook never connects:
    # a prompt without a rollout is answered with silence before any query).
    urls = [pg_server.database_url(f"bbtest_exec_{i}") for i in range(3)]

    async def main() -> tuple[set[str], int]:
        executor = DockerExecutor(run_id=run_id)
        await executor.prepare(RunContext(run_id=run_id, database_url=pg_server.database_url("postgres")))
        try:
            seam: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec",
                                                        image="brainbench/codex:latest", run_id=run_id))
            ids = {seam.container.id}
            for url in urls:
                outcome = await seam.call(HookCall(json.dumps({"hook_event_name": "UserPromptSubmit",
                                                               "session_id": "s", "cwd": "/tmp",
                                                               "prompt": "hello"}).encode(),
                                                   {"BRAINBENCH_DATABASE_URL": url}, 30))
                assert outcome.exit_code == 0, outcome
                ids.add(seam.container.id)
            return ids, seam.box.created
        finally:
            await executor.close()

    ids, created = anyio.run(main)
    assert len(ids) == 1 and created == 1


def _start(image: str, mode: str, from_image: bool, **config: Any) -> tuple[str, str]:
    from brainbench.executors.docker import DockerConfig, DockerExecutor

    async def main() -> tuple[str, str]:
        executor = DockerExecutor(DockerConfig(**config), run_id=f"bbtest-exec-{uuid.uuid4().hex[:8]}")
        try:
            seam = await executor.start(SeamLaunch(seam="codex", command=(), mode=mode, image=image,  # type: ignore[arg-type]
                                                   mode_from_image=from_image))
            outcome = await seam.call(HookCall(b'{"prompt": "x"}', {}, 20))
            return seam.mode, f"exit {outcome.exit_code}"
        finally:
            await executor.close()

    return anyio.run(main)


def test_mode_follows_the_image_label(exec_only_image: str) -> None:
    assert _start(exec_only_image, "stream", True) == ("exec", "exit 0")
    labelled = build("bbtest-exec-labelled:latest", 'LABEL io.brainbench.modes="exec"\n')
    assert _start(labelled, "stream", True) == ("exec", "exit 0")


def test_an_exec_only_image_asked_for_stream_fails_fast_with_one_line(exec_only_image: str) -> None:
    with pytest.raises(ExecutorError) as info:
        _start(exec_only_image, "stream", False, stream_handshake_s=2.0)
    assert str(info.value) == ("codex: no answer to the stream handshake in 2 s: this image speaks exec only; "
                               "use mode=exec")


def test_image_flag_alone_runs_that_seam_in_docker(exec_only_image: str, reference: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from reference_corpus import copy_reference_corpus

    fx, gd = copy_reference_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures", str(fx),
                           "--gold", str(gd), "--out", str(out), "--image", f"codex={exec_only_image}"],
                          capture_output=True, text=True, timeout=600, check=False, cwd=REPO,
                          env={k: v for k, v in os.environ.items() if k != "CI"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    seams = {s["harness"]: s for s in json.loads(out.read_text())["_meta"]["run"]["seams"]}
    assert seams["codex"]["executor"] == "docker" and seams["codex"]["mode"] == "exec"
    assert seams["codex"]["seam"] == "production" and seams["codex"]["image_digest"]
    assert {seams[h]["executor"] for h in ("claude-code", "openclaw")} == {"local"}


@pytest.mark.parametrize("python", [True, False], ids=["python-image", "no-python-image"])
def test_exec_mode_uses_a_call_server_where_one_can_run(python: bool) -> None:
    """Python in the image: call_server.py.  No Python: the static server (call_server.c),
    where this host can build it; else ``docker exec`` per call."""
    from brainbench.executors.docker import DockerExecutor
    from brainbench.executors.docker.static_helper import helper_binary

    image = build("bbtest-exec-execonly:latest") if python else build(
        "bbtest-exec-nopython:latest", "RUN rm -f /usr/bin/python3* /usr/local/bin/python3* /usr/bin/python\n")

    async def main() -> tuple[str | None, list[int | None], str]:
        executor = DockerExecutor(run_id=f"bbtest-exec-{uuid.uuid4().hex[:8]}")
        try:
            seam: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec", image=image))
            codes = [(await seam.call(HookCall(b'{"prompt": "x"}', {}, 20))).exit_code for _ in range(3)]
            ps = seam.container.exec_run(["/bin/sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"])
            return seam.server.variant if seam.server else None, codes, ps.output.decode()
        finally:
            await executor.close()

    variant, codes, ps = anyio.run(main)
    assert variant == ("python" if python else "static" if helper_binary() else None)
    assert codes == [0, 0, 0]
    assert "in-container call server" not in ps  # ps shows a short boot line, never our source


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_a_dead_container_comes_back_under_the_one_retry_layer(mode: str) -> None:
    """The seam's container dies mid-run: the call that finds it dead is an infrastructure
    fault (nothing below retries it), the provider brings the container back once, and the
    orchestrator's policy (executors/retry.py) retries the call into the new container."""
    from brainbench.executors.docker import DockerExecutor
    from brainbench.executors.retry import INFRA_RETRY

    run_id = f"bbtest-exec-{uuid.uuid4().hex[:8]}"
    hello = HookCall(json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/tmp",
                                 "prompt": "hello"}).encode(), {}, 30)
    attempts: list[HookOutcome] = []

    async def main() -> tuple[HookOutcome, int, set[str]]:
        executor = DockerExecutor(run_id=run_id, pool_size=1)
        try:
            seam: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode=mode,  # type: ignore[arg-type]
                                                        image="brainbench/codex:latest", run_id=run_id))
            first = seam.container.id
            assert (await seam.call(hello)).exit_code == 0
            CLIENT.containers.get(first).kill()
            await anyio.sleep(0.5)

            async def counted(call: HookCall) -> HookOutcome:
                attempts.append(await seam.call(call))
                return attempts[-1]

            outcome = await INFRA_RETRY.call_async(counted, hello, faulty=lambda o: o.infra_error is not None)
            return outcome, seam.box.created, {first, seam.container.id}
        finally:
            await executor.close()

    outcome, created, ids = anyio.run(main)
    assert outcome.exit_code == 0 and outcome.infra_error is None, attempts
    assert 2 <= len(attempts) <= INFRA_RETRY.attempts, attempts
    assert all(a.infra_error for a in attempts[:-1]), attempts
    assert created == 2 and len(ids) == 2  # recreated once, not once per layer
