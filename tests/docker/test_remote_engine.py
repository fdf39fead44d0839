"""A full gate run through a remote engine (a second dockerd on loopback TCP) grades like the
local run, and no container of it has a bind mount: transcripts are copied in, the brain is a
Postgres container on that engine, results come back over the API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from second_engine import copy_images, second_engine  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
SEAMS = ("openclaw", "claude-code", "codex")
IMAGES = [f"brainbench/{s}:latest" for s in SEAMS] + ["brainbench/postgres:latest"]


def _missing_images() -> list[str]:
    import docker

    client = docker.from_env(version="auto")
    missing = []
    for name in IMAGES:
        try:
            client.images.get(name)
        except docker.errors.ImageNotFound:
            missing.append(name)
    return missing


def _run(out: Path, docker_host: str | None, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=1800, check=False, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _graded(doc: dict[str, Any]) -> tuple[Any, Any]:
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"]]
    return doc["cells"], rows


class Watcher(threading.Thread):
    """Inspects every container the engine runs while the run goes on (they are gone after it)."""

    def __init__(self, client: Any) -> None:
        super().__init__(daemon=True)
        self.api = client.api
        self.seen: dict[str, dict[str, Any]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            try:
                for entry in self.api.containers(all=True):
                    if entry["Id"] not in self.seen:
                        self.seen[entry["Id"]] = self.api.inspect_container(entry["Id"])
            except Exception:  # a container removed between list and inspect: the next pass sees the rest
                continue


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("dockerd") is None,
                    reason="starting a second Docker engine needs root and dockerd")
def test_gate_run_through_a_remote_engine_equals_the_local_run_without_bind_mounts(tmp_path: Path) -> None:
    missing = _missing_images()
    if missing:
        pytest.skip(f"images not built ({', '.join(missing)}): run scripts/build-images --offline")
    local = _run(tmp_path / "local.json", None)
    docker0 = Path("/sys/class/net/docker0")
    had_docker0 = docker0.exists()
    with second_engine() as (host, client):
        # The first engine's default bridge survives a second daemon (--bridge=none would delete it).
        assert docker0.exists() == had_docker0
        copy_images(os.environ.get("DOCKER_HOST"), client, IMAGES)
        watcher = Watcher(client)
        watcher.start()
        try:
            remote = _run(tmp_path / "remote.json", host, "--executor", "docker")
        finally:
            watcher.stop.set()
            watcher.join(10)
        left = client.api.containers(all=True, filters={"label": "brainbench.managed=1"})
        networks = client.api.networks(filters={"label": "brainbench.managed=1"})

    assert _graded(remote) == _graded(local)
    assert {s["executor"] for s in remote["_meta"]["run"]["seams"]} == {"docker"}

    roles = {c["Config"]["Labels"].get("brainbench.seam") or c["Config"]["Labels"].get("brainbench.role")
             for c in watcher.seen.values()}
    assert roles >= {*SEAMS, "brain"}, f"the watcher saw {roles}"
    for container in watcher.seen.values():
        name = container["Name"]
        assert not container["HostConfig"].get("Binds"), f"{name} has binds {container['HostConfig']['Binds']}"
        binds = [m for m in container.get("Mounts") or [] if m.get("Type") == "bind"]
        assert not binds, f"{name} has bind mounts {binds}"
    seam_boxes = [c for c in watcher.seen.values() if c["Config"]["Labels"].get("brainbench.seam")]
    for box in seam_boxes:
        # The seam's work subtree is a tmpfs the hook user owns, at the host path.
        assert any(p.endswith("/" + box["Config"]["Labels"]["brainbench.seam"]) for p in box["HostConfig"]["Tmpfs"])
    assert not left and not networks, f"left behind: {left} {networks}"
