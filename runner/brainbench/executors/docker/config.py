"""Configuration models for the Docker executor (pydantic, unknown keys rejected)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# Bumped when the image contract (env names, stream line protocol, labels) changes.
CONTRACT_VERSION = "1"

LABEL_MANAGED = "brainbench.managed"
LABEL_RUN_ID = "brainbench.run_id"
LABEL_SEAM = "brainbench.seam"
# The owning process instance (models.owner.Owner as JSON): what sweeps judge liveness by.
LABEL_OWNER = "brainbench.owner"
LABEL_CREATED = "brainbench.created"
# Image label: the invocation modes a hook image speaks, a comma list such as
# "exec,stream"; absent means exec only (the standard hook contract).
LABEL_MODES = "io.brainbench.modes"

# Where the stream wrapper records the long-lived hook's pid so a timeout can kill it
# (docker exec has no kill API; the pid lives on the container's tmpfs).
STREAM_PIDFILE = "/tmp/.brainbench-stream.pid"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HardeningConfig(_Strict):
    """Container hardening; every default is the hardened choice."""

    read_only_rootfs: bool = True
    # noexec is deliberately absent: some production hooks unpack helpers into /tmp.
    tmpfs: dict[str, str] = Field(default_factory=lambda: {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"})
    cap_drop: tuple[str, ...] = ("ALL",)
    no_new_privileges: bool = True
    pids_limit: int = 256
    memory: str = "512m"
    cpus: float | None = 1.0
    # None: the image's own USER if it is non-root, else ``fallback_user``.
    user: str | None = None
    fallback_user: str = "65534:65534"
    # tini as PID 1 reaps the children that `timeout -s KILL` orphans.
    init: bool = True


class DockerConfig(_Strict):
    """How the Docker executor reaches the engine, the brain and the seam images."""

    # None: DOCKER_HOST from the environment, else the default local socket.
    docker_host: str | None = None
    hardening: HardeningConfig = Field(default_factory=HardeningConfig)
    # The runner's Postgres URL (decides socket bind-mount vs run network).  When None,
    # RunContext.database_url (else BRAINBENCH_DATABASE_URL in the first SeamLaunch.env).
    database_url: str | None = None
    # TCP only: container name/id of Postgres to attach to the run network.  None:
    # auto-detect a running container whose compose service or name equals the URL host.
    postgres_container: str | None = None
    # TCP only: replace host[:port] of every BRAINBENCH_DATABASE_URL handed to a
    # container (e.g. the runner uses 127.0.0.1:5432, containers reach "postgres:5432").
    container_db_host: str | None = None
    # Extra seconds the host waits beyond the in-container timeout before it
    # declares the exec hung (the in-container `timeout` should always fire first).
    exec_grace_s: float = 5.0
    # Exec mode: run calls through the in-container call server (one attached exec per
    # container) instead of one ``docker exec`` per call; images without Python 3 fall back.
    call_server: bool = True
    # Stream mode: seconds each pool slot has to answer its warm-up handshake before the
    # seam fails to start with one clear line (an exec-only image never answers).
    stream_handshake_s: float = 30.0
    # Infra retries (daemon hiccup, container start); graded calls are never retried.
    infra_attempts: int = 4
    # Remove leftovers of provably dead runs (by owner label) when the first seam starts.
    sweep_on_start: bool = True
    # The Postgres image of a seed-contract seam's private brain server ("server": "private").
    # None: $BRAINBENCH_PRIVATE_BRAIN_IMAGE, else brainbench/postgres-vector:latest.
    private_brain_image: str | None = None
    private_brain_start_s: float = 90.0
    default_image_prefix: str = "brainbench/"
    default_image_tag: str = "latest"
