"""Crash cleanup, the TCP run network and the CLI, against a real engine (doctor: test_doctor.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.executors.base import HookCall, RunContext, SeamLaunch
from brainbench.executors.docker import DockerExecutor
from brainbench.executors.docker_cli import app as docker_app
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]
from typer.testing import CliRunner

RUNNER = textwrap.dedent("""
    import signal, sys, anyio
    from brainbench.executors.base import SeamLaunch
    from brainbench.executors.docker import DockerExecutor

    # Signals belong to the orchestrator, not the provider: SIGTERM unwinds like Ctrl-C, and
    # Ctrl-C is handled even when inherited ignored (a background job), as the CLI does.
    def interrupt(signum, frame):
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)

    async def main():
        ex = DockerExecutor(run_id=sys.argv[1])
        try:
            for seam in ("openclaw", "codex"):
                await ex.start(SeamLaunch(seam=seam, command=(), mode="stream", image=sys.argv[2]))
            print("ready", flush=True)
            await anyio.sleep(120)
        finally:
            await ex.close()

    anyio.run(main)
""")


def _spawn_runner(run_id: str, image: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, run_id, image], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", (line, proc.stderr.read() if proc.stderr else "")
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_leaves_nothing_behind(hook_image: str, run_id: str, labelled_objects: Any,
                                      sig: signal.Signals) -> None:
    proc = _spawn_runner(run_id, hook_image)
    assert len(labelled_objects(run_id)[0]) == 2
    proc.send_signal(sig)
    proc.wait(timeout=30)
    containers, networks = labelled_objects(run_id)
    assert containers == [] and networks == []


# Alone: a dead owner's leftover is fair game for any concurrent run's start-of-run sweep
# (other workers share this engine), so it may vanish before this test looks at it.
@pytest.mark.alone
def test_sigkill_leftovers_removed_by_cleanup_and_by_next_sweep(hook_image: str, run_id: str,
                                                                labelled_objects: Any) -> None:
    proc = _spawn_runner(run_id, hook_image)
    proc.kill()  # no handler runs: the leftovers are real
    proc.wait(timeout=10)
    assert len(labelled_objects(run_id)[0]) == 2

    # The next run's start-of-run sweep removes a dead run's objects ...
    other = f"bbtest-{uuid.uuid4().hex[:10]}"

    async def next_run() -> None:
        ex = DockerExecutor(run_id=other)
        try:
            await ex.start(SeamLaunch(seam="openclaw", command=(), mode="exec", image=hook_image))
            assert labelled_objects(run_id)[0] == []
            assert len(labelled_objects(other)[0]) == 1
        finally:
            await ex.close()

    anyio.run(next_run)

    # ... and `brainbench cleanup --run-id` does it on demand.
    proc = _spawn_runner(run_id, hook_image)
    proc.kill()
    proc.wait(timeout=10)
    result = CliRunner().invoke(docker_app, ["cleanup", "--run-id", run_id])
    assert result.exit_code == 0, result.output
    assert "removed container" in result.output
    assert labelled_objects(run_id) == ([], [])


# Alone: a dead owner's leftover is fair game for any concurrent run's start-of-run sweep
# (other workers share this engine), so it may vanish before this test looks at it.
@pytest.mark.alone
def test_sweep_tolerates_objects_removed_by_a_concurrent_run(hook_image: str, run_id: str,
                                                              labelled_objects: Any) -> None:
    """Two runs sweeping (or one closing while another sweeps) race on the same objects.

    CI once died here: the SDK's list inspected a container another run had just
    removed.  The race is forced: the listing is taken, then the objects vanish.
    """
    from brainbench.executors.docker.cleanup import remove_labelled, sweep_dead_runs
    from brainbench.executors.docker.client import DockerApi

    proc = _spawn_runner(run_id, hook_image)
    proc.kill()
    proc.wait(timeout=10)
    assert len(labelled_objects(run_id)[0]) == 2

    api = DockerApi()
    real_list = api.api.containers

    def list_then_lose_the_race(*args: Any, **kwargs: Any) -> Any:
        # Only this test's run: the engine is shared with other runs.
        listing = [e for e in real_list(*args, **kwargs) if (e.get("Labels") or {}).get("brainbench.run_id") == run_id]
        for entry in listing:
            api.api.remove_container(entry["Id"], force=True)
        return listing

    api.api.containers = list_then_lose_the_race  # type: ignore[method-assign]
    try:
        report = sweep_dead_runs(api, current_run_id="bbtest-someone-else")
        assert report.errors == []
        assert labelled_objects(run_id) == ([], [])
        # The explicit cleanup path takes the same race without an error either.
        assert remove_labelled(api, run_id=run_id).errors == []
    finally:
        api.close()


def test_tcp_database_reached_over_internal_run_network(hook_image: str, run_id: str, docker_client: Any,
                                                         labelled_objects: Any) -> None:
    # Stands in for compose: a Postgres container the runner reaches by name.
    from docker.errors import ImageNotFound

    try:
        docker_client.images.get("brainbench/postgres:latest")
    except ImageNotFound:
        pytest.skip("brainbench/postgres:latest not built (scripts/build-images --offline)")
    name = f"{run_id}-pg"
    pg = docker_client.containers.run("brainbench/postgres:latest", name=name, detach=True,
                                      environment={"POSTGRES_HOST_AUTH_METHOD": "trust"},
                                      labels={"brainbench.managed": "1", "brainbench.run_id": run_id + "-pg"})
    try:
        url = f"postgresql://postgres@{name}:5432/postgres"

        async def body() -> tuple[Any, Any, dict[str, Any]]:
            ex = DockerExecutor(run_id=run_id)
            try:
                await ex.prepare(RunContext(run_id=run_id, database_url=url, brain_container=name))
                proc = await ex.start(SeamLaunch(seam="codex", command=(), mode="exec", image=hook_image))
                deadline = time.monotonic() + 60
                while True:  # wait for initdb in the Postgres container
                    o = await proc.call(HookCall(json.dumps({"prompt": "tcp"}).encode(),
                                                 {"BRAINBENCH_DATABASE_URL": url}, 10))
                    if o.exit_code == 0 or time.monotonic() > deadline:
                        break
                    await anyio.sleep(1)
                egress = await proc.call(HookCall(json.dumps({"prompt": "egress"}).encode(), {}, 10))
                net = docker_client.networks.get(ex.network_name)
                return o, egress, net.attrs
            finally:
                await ex.close()

        o, egress, net = anyio.run(body)
        assert o.exit_code == 0, o
        assert json.loads(o.stdout)["hookSpecificOutput"]["additionalContext"] == f"connected to {name}"
        assert "no egress" in json.loads(egress.stdout)["hookSpecificOutput"]["additionalContext"]
        assert net["Internal"] is True
        assert net["Labels"]["brainbench.run_id"] == run_id
        assert labelled_objects(run_id) == ([], [])  # network gone, Postgres detached
        pg.reload()
        assert pg.status == "running"
    finally:
        pg.remove(force=True, v=True)


def test_cli_import_is_lazy() -> None:
    code = ("import sys, brainbench.executors.docker_cli, brainbench.executors.docker; "
            "print('docker' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ})
    assert out.stdout.strip() == "False"


def test_missing_image_stops_the_run_with_one_line(docker_client: Any, reference: Path, tmp_path: Path) -> None:
    fx, gd = copy_reference_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                           "--executor", "docker", "--harness", "codex",
                           "--image", "codex=brainbench-test/absent:never",
                           "--quiet"], capture_output=True, text=True, timeout=300, check=False,
                          env={k: v for k, v in os.environ.items() if k != "CI"})
    assert proc.returncode == 2, proc.stderr
    assert "run failed: image brainbench-test/absent:never not found" in proc.stderr
    assert "docker pull brainbench-test/absent:never" in proc.stderr and "docker build" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
