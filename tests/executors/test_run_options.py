"""One options model from the command line to the executor: limits set as flags or env land
in RunConfig once, reach the provider in the RunContext given at ``prepare``, and are what
the seam container is created with."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.cli_options import config_from_cli
from brainbench.executors.base import RunContext, SeamLaunch
from brainbench.executors.docker.static_helper import TARGET, helper_binary
from brainbench.models.config import OptionsError, RunConfig
from brainbench.models.sandbox import HardeningConfig, ResourceLimits
from brainbench.orchestrator.launch import run_context, seam_cpus
from engine_probe import docker_or_reason  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
CLIENT, REASON = docker_or_reason()


def test_flags_land_in_the_run_context_once() -> None:
    config = config_from_cli({"memory": "256M", "cpus": 0.5, "pids_limit": 64, "call_grace_s": 2.0,
                              "brain_container": "pg", "container_db_host": "postgres:5432"}, [])
    context = run_context(config, "bb-x", "postgresql://u@/d?host=/tmp", None, 2)
    assert context.limits == ResourceLimits(memory="256m", cpus=0.5, pids_limit=64, call_grace_s=2.0)
    assert context.hardening == HardeningConfig()  # hardening is never loosened from the command line
    assert (context.brain_container, context.container_db_host) == ("pg", "postgres:5432")
    # Left out: the hardened defaults; --cpus 0 means no quota.
    assert run_context(RunConfig(), "bb-y", None, None, 1, cores=1).limits == ResourceLimits()
    assert RunConfig(cpus=0).limits().cpus is None


def test_without_cpus_the_cores_are_shared_among_the_contained_seams() -> None:
    docker_all = config_from_cli({"executor": "docker", "harnesses": "all"}, [])
    assert seam_cpus(docker_all, 2) == 1.0  # three seams on two cores: one each, never less
    assert seam_cpus(docker_all, 6) == 2.0
    lone_image = config_from_cli({"images": ["claude-code=brainbench/gbrain:latest"], "harnesses": "claude-code"}, [])
    assert seam_cpus(lone_image, 2) == 2.0  # a lone image gets the machine
    assert run_context(lone_image, "bb-z", None, None, 1, cores=4).limits.cpus == 4.0
    # Seams that run as local processes take no share: only the image's container counts.
    mixed = config_from_cli({"images": ["codex=brainbench/codex:latest"], "harnesses": "all"}, [])
    assert seam_cpus(mixed, 2) == 2.0
    # Given, --cpus wins, whatever the cores.
    given = config_from_cli({"images": ["claude-code=x:1"], "harnesses": "claude-code", "cpus": 0.5}, [])
    assert run_context(given, "bb-w", None, None, 1, cores=8).limits.cpus == 0.5


def test_bad_limits_are_one_line_naming_the_flag() -> None:
    with pytest.raises(OptionsError, match=r"^--memory: 'lots' is not a size such as 512m or 2g$"):
        config_from_cli({"memory": "lots"}, [])
    with pytest.raises(OptionsError, match=r"^--pids-limit: "):
        config_from_cli({"pids_limit": 0}, [])


def test_env_and_flags_reach_the_cli() -> None:
    env = {**os.environ, "BRAINBENCH_MEMORY": "nonsense"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet"], capture_output=True,
                          text=True, timeout=120, check=False, cwd=REPO, env=env)
    assert proc.returncode == 2 and "--memory: 'nonsense' is not a size" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    helptext = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--help"], capture_output=True,
                              text=True, timeout=120, check=False, cwd=REPO,
                              env={**os.environ, "COLUMNS": "200"}).stdout
    for flag in ("--memory", "--cpus", "--pids-limit", "--call-grace", "--brain-container", "--container-db-host"):
        assert flag in helptext, flag


@pytest.mark.skipif(CLIENT is None, reason=REASON)
def test_the_container_is_created_with_the_runs_limits(tmp_path: Path) -> None:
    from brainbench.executors.docker import DockerExecutor

    config = config_from_cli({"memory": "96m", "cpus": 0.5, "pids_limit": 48}, [])
    run_id = f"bbtest-exec-{uuid.uuid4().hex[:8]}"

    async def main() -> dict[str, Any]:
        executor = DockerExecutor(run_id=run_id)
        await executor.prepare(run_context(config, run_id, None, tmp_path, 1))
        try:
            seam: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec",
                                                        image="brainbench/codex:latest", run_id=run_id))
            return CLIENT.containers.get(seam.container.id).attrs
        finally:
            await executor.close()

    attrs = anyio.run(main)
    host = attrs["HostConfig"]
    if helper_binary():  # the static call server is staged in the work root, mounted read-only
        mount = next(m for m in attrs["Mounts"] if m["Destination"] == TARGET)
        assert mount["Source"] == str(tmp_path / ".brainbench-call-server") and mount["RW"] is False
    assert host["Memory"] == host["MemorySwap"] == 96 * 1024 * 1024
    assert host["NanoCpus"] == 500_000_000
    assert host["PidsLimit"] == 48
    assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"]


@pytest.mark.skipif(CLIENT is None, reason=REASON)
def test_a_quota_above_the_engines_cpus_is_the_engines_cpus(tmp_path: Path) -> None:
    """The runner's machine may have more cores than the engine (a remote one): Docker would refuse the
    container; the seam gets all the engine has, and says so."""
    from brainbench.executors.docker import DockerExecutor

    assert CLIENT is not None
    engine_cpus = CLIENT.info()["NCPU"]
    config = config_from_cli({"cpus": float(engine_cpus + 8)}, [])
    run_id = f"bbtest-exec-{uuid.uuid4().hex[:8]}"

    async def main() -> tuple[float | None, dict[str, Any]]:
        executor = DockerExecutor(run_id=run_id)
        await executor.prepare(run_context(config, run_id, None, tmp_path, 1))
        try:
            seam: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec",
                                                        image="brainbench/codex:latest", run_id=run_id))
            return seam.cpus, CLIENT.containers.get(seam.container.id).attrs
        finally:
            await executor.close()

    cpus, attrs = anyio.run(main)
    assert cpus == float(engine_cpus)
    assert attrs["HostConfig"]["NanoCpus"] == engine_cpus * 1_000_000_000


def test_context_defaults_are_the_hardened_ones() -> None:
    context = RunContext(run_id="r")
    assert context.limits.memory == "512m" and context.limits.pids_limit == 256
    assert context.hardening.read_only_rootfs and context.hardening.cap_drop == ("ALL",)
