"""Remote Docker engines: an engine that does not share this machine's filesystem.

``DOCKER_HOST=tcp://…`` (TLS from ``DOCKER_TLS_VERIFY``/``DOCKER_CERT_PATH``, as the
docker CLI reads them) or ``ssh://user@host`` reaches an engine whose containers cannot
see our files: no bind mount may carry anything a hook needs.  A remote seam container
gets a tmpfs at its work subtree instead (same absolute path, owned by the hook user),
and the files a call names are copied in with the call (``remote_files``); the brain is
a Postgres container on that engine (``remote_brain``).

Detection: ``BRAINBENCH_DOCKER_REMOTE=1|0`` (or ``DockerConfig.remote``) decides; unset,
any ``tcp://``, ``http(s)://`` or ``ssh://`` engine counts as remote and a ``unix://``
or ``npipe://`` one as local.  A tcp engine on this very machine is treated as remote
too: copying in is correct everywhere, mounting only where the filesystem is shared.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .failures import DockerInfraError

REMOTE_ENV = "BRAINBENCH_DOCKER_REMOTE"
# Where the runner reaches a published port of the engine: the DOCKER_HOST's host name
# unless this says otherwise (an SSH tunnel, a NAT, a different interface).
PUBLISH_HOST_ENV = "BRAINBENCH_REMOTE_BRAIN_HOST"
REMOTE_SCHEMES = ("tcp", "http", "https", "ssh")


def is_remote(docker_host: str, explicit: bool | None = None) -> bool:
    if explicit is not None:
        return explicit
    flag = os.environ.get(REMOTE_ENV, "").strip().lower()
    if flag in ("1", "true", "yes"):
        return True
    if flag in ("0", "false", "no"):
        return False
    return urlparse(docker_host).scheme in REMOTE_SCHEMES


def engine_hostname(docker_host: str) -> str:
    """The host name by which this machine reaches the engine's published ports."""
    override = os.environ.get(PUBLISH_HOST_ENV, "").strip()
    if override:
        return override
    url = urlparse(docker_host)
    if url.scheme in REMOTE_SCHEMES and url.hostname:
        return url.hostname
    return "127.0.0.1"


def tls_files() -> tuple[str, str, str] | None:
    """(ca, cert, key) when the environment asks for TLS, as the docker CLI reads it."""
    verify = os.environ.get("DOCKER_TLS_VERIFY")
    cert_path = os.environ.get("DOCKER_CERT_PATH") or None
    if not (cert_path or (verify is not None and verify != "")):
        return None
    root = Path(cert_path or Path.home() / ".docker")
    return str(root / "ca.pem"), str(root / "cert.pem"), str(root / "key.pem")


def client_kwargs(docker_host: str) -> dict[str, Any]:
    """Extra ``DockerClient`` arguments for TLS or SSH engines."""
    scheme = urlparse(docker_host).scheme
    if scheme == "ssh":
        # The system ssh client (keys, agent, known_hosts and ~/.ssh/config as the user has them).
        return {"use_ssh_client": True}
    files = tls_files()
    if files and scheme in ("tcp", "https"):
        from docker.tls import TLSConfig

        ca, cert, key = files
        verify = os.environ.get("DOCKER_TLS_VERIFY") not in (None, "")
        return {"tls": TLSConfig(client_cert=(cert, key), ca_cert=ca if verify else None, verify=verify)}
    return {}


def tls_wrap(sock: socket.socket, hostname: str) -> socket.socket:
    """The raw attach socket under the same TLS the SDK uses."""
    files = tls_files()
    if files is None:
        return sock
    ca, cert, key = files
    verify = os.environ.get("DOCKER_TLS_VERIFY") not in (None, "")
    context = ssl.create_default_context(cafile=ca if verify else None)
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(cert, key)
    return context.wrap_socket(sock, server_hostname=hostname)


def ssh_socket(docker_host: str, timeout: float) -> socket.socket:
    """A socket to the engine through ``ssh HOST docker system dial-stdio`` (what the CLI does)."""
    url = urlparse(docker_host)
    target = f"{url.username}@{url.hostname}" if url.username else str(url.hostname)
    ours, theirs = socket.socketpair()
    cmd = ["ssh", "-o", f"ConnectTimeout={max(1, int(timeout))}", *(["-p", str(url.port)] if url.port else []),
           "--", target, "docker", "system", "dial-stdio"]
    try:
        subprocess.Popen(cmd, stdin=theirs, stdout=theirs, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        ours.close()
        raise DockerInfraError(f"cannot start ssh for {docker_host}: {exc}") from exc
    finally:
        theirs.close()
    ours.settimeout(timeout)
    return ours
