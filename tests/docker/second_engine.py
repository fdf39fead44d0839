"""A second, throwaway Docker engine on a loopback TCP port: a "remote" engine for tests.

It has its own data root, exec root and pidfile (as ``scripts/start-dockerd`` gives the
first engine), and no iptables management of its own: two daemons rewriting the same
iptables chains would break the first one's published ports.  Its default bridge is a
bridge interface of its own, created here: ``--bridge=none`` must not be used, because a
daemon started that way deletes the host's ``docker0``, the first engine's default bridge.
Its networks come from a private address pool; because the first engine set the FORWARD
policy to DROP (and bridged traffic passes iptables), one ACCEPT rule for traffic inside
that pool is added for the engine's lifetime and removed with it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _forward_rule(pool: str) -> list[str]:
    return ["FORWARD", "-s", pool, "-d", pool, "-j", "ACCEPT", "-m", "comment", "--comment", "brainbench-test"]


def _unmount_under(root: Path) -> None:
    # dockerd unmounts its layers on a clean stop; after a kill, lazy-unmount what is left.
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for target in sorted((m for m in mounts if m.startswith(str(root))), reverse=True):
        subprocess.run(["umount", "-l", target], check=False, capture_output=True)


@contextlib.contextmanager
def second_engine(start_timeout_s: float = 120.0) -> Iterator[tuple[str, Any]]:
    """Yields ``(DOCKER_HOST, client)`` of a fresh engine; stops it and deletes its data root after."""
    import docker

    port = _free_port()
    host = f"tcp://127.0.0.1:{port}"
    data_root = Path(tempfile.mkdtemp(prefix="bbtest-engine-", dir="/var/lib"))
    # Kept short: the managed containerd's socket lives under the exec root (108-byte limit).
    exec_root = Path(tempfile.mkdtemp(prefix="bbe-", dir="/run"))
    octet = 200 + os.getpid() % 50
    pool, networks = f"10.{octet}.0.0/16", f"10.{octet}.0.0/17"
    bridge = f"bbe{os.getpid() % 100000}"
    subprocess.run(["ip", "link", "add", "name", bridge, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "add", f"10.{octet}.200.1/24", "dev", bridge], check=True)
    subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
    log = (data_root / "dockerd.log").open("wb")
    proc = subprocess.Popen(
        ["dockerd", "--storage-driver=overlay2", "--data-root", str(data_root / "data"),
         "--exec-root", str(exec_root / "x"), "--pidfile", str(exec_root / "dockerd.pid"), "-H", host,
         "--iptables=false", "--ip-masq=false", "--bridge", bridge,
         "--default-address-pool", f"base={networks},size=24"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    rule_added = False
    client = None
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                client = docker.DockerClient(base_url=host, version="auto", timeout=300)
                client.ping()
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("second dockerd did not come up: "
                                       + (data_root / "dockerd.log").read_text()[-2000:]) from None
                time.sleep(0.3)
        if shutil.which("iptables"):
            rule_added = subprocess.run(["iptables", "-I", *_forward_rule(pool)], check=False).returncode == 0
        yield host, client
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        log.close()
        if rule_added:
            subprocess.run(["iptables", "-D", *_forward_rule(pool)], check=False)
        subprocess.run(["ip", "link", "delete", bridge, "type", "bridge"], check=False, capture_output=True)
        _unmount_under(data_root)
        _unmount_under(exec_root)
        shutil.rmtree(data_root, ignore_errors=True)
        shutil.rmtree(exec_root, ignore_errors=True)


def copy_images(source_host: str | None, target: Any, images: list[str]) -> None:
    """``docker save`` from the first engine, streamed into the second through its API (load)."""
    env = {**os.environ, **({"DOCKER_HOST": source_host} if source_host else {})}
    with subprocess.Popen(["docker", "save", *images], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env) as save:
        assert save.stdout is not None
        target.images.load(iter(lambda: save.stdout.read(1 << 20), b""))  # type: ignore[union-attr]
        _, err = save.communicate(timeout=600)
    if save.returncode != 0:
        raise RuntimeError(f"docker save failed: {err.decode(errors='replace')[-500:]}")
