"""A full gate run through a remote engine (a second dockerd on loopback TCP) grades like the
local run, and no container of it has a bind mount: transcripts are copied in, the brain is a
Postgres container on that engine, results come back over the API."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from gate_runs import cli_run, graded, missing_images  # type: ignore[import-not-found]
from second_engine import copy_images, second_engine  # type: ignore[import-not-found]

SEAMS = ("openclaw", "claude-code", "codex")
IMAGES = [f"brainbench/{s}:latest" for s in SEAMS] + ["brainbench/postgres:latest"]


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
    missing = missing_images(IMAGES)
    if missing:
        pytest.skip(f"images not built ({', '.join(missing)}): run scripts/build-images --offline")
    local = cli_run(tmp_path / "local.json")
    docker0 = Path("/sys/class/net/docker0")
    had_docker0 = docker0.exists()
    with second_engine() as (host, client):
        # The first engine's default bridge survives a second daemon (--bridge=none would delete it).
        assert docker0.exists() == had_docker0
        copy_images(os.environ.get("DOCKER_HOST"), client, IMAGES)
        watcher = Watcher(client)
        watcher.start()
        try:
            remote = cli_run(tmp_path / "remote.json", "--executor", "docker", docker_host=host)
        finally:
            watcher.stop.set()
            watcher.join(10)
        left = client.api.containers(all=True, filters={"label": "brainbench.managed=1"})
        networks = client.api.networks(filters={"label": "brainbench.managed=1"})

    assert graded(remote) == graded(local)
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
