"""Configuration of the Docker provider itself: the engine, images, the brain's reachability.

What a seam may use (limits) and do (hardening) is the run's, given in ``RunContext``
(``brainbench.models.sandbox``); the run's options model sets both from the CLI.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# Limits and hardening belong to the run (RunContext), not to this provider; re-exported
# for the callers that build them by hand.
from brainbench.models.sandbox import HardeningConfig, ResourceLimits

__all__ = ["CONTRACT_VERSION", "DockerConfig", "HardeningConfig", "ResourceLimits"]

# Bumped when the image contract (env names, stream line protocol, labels) changes.
CONTRACT_VERSION = "1"
# Where a hook finds its brain (the image contract's one database variable).
DB_ENV = "BRAINBENCH_DATABASE_URL"

LABEL_MANAGED = "brainbench.managed"
LABEL_RUN_ID = "brainbench.run_id"
LABEL_SEAM = "brainbench.seam"
# Brain servers the runner starts in containers are thrown away after the run (the embedded
# server makes the same trade): no durability, so a clone's checkpoint and a seed's commits are cheap.
THROWAWAY_SETTINGS = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
# The owning process instance (models.owner.Owner as JSON): what sweeps judge liveness by.
LABEL_OWNER = "brainbench.owner"
LABEL_CREATED = "brainbench.created"
# On the Postgres container a run started on a remote engine ("brain") and its network:
# the executor attaches it to the run network, and the brain's own close (not the
# executor's) removes it.
LABEL_ROLE = "brainbench.role"
ROLE_BRAIN = "brain"
# Image label: the invocation modes a hook image speaks, a comma list such as
# "exec,stream"; absent means exec only (the standard hook contract).
LABEL_MODES = "io.brainbench.modes"

# Where the stream wrapper records the long-lived hook's pid so a timeout can kill it
# (docker exec has no kill API; the pid lives on the container's tmpfs).
STREAM_PIDFILE = "/tmp/.brainbench-stream.pid"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DockerConfig(_Strict):
    """How the Docker executor reaches the engine, the brain and the seam images."""

    # None: DOCKER_HOST from the environment, else the default local socket.
    docker_host: str | None = None
    # The engine does not share this machine's filesystem: nothing is bind-mounted, files
    # are copied in with each call.  None: BRAINBENCH_DOCKER_REMOTE, else tcp/ssh = remote.
    remote: bool | None = None
    # Callers without a run (doctor, tests): the database the provider prepares for when
    # ``start`` comes before ``prepare``.  A run gives it in RunContext.database_url.
    database_url: str | None = None
    # Exec mode: run calls through the in-container call server (one attached exec per
    # container) instead of one ``docker exec`` per call.  "auto": the Python server where
    # the image has Python 3, else the static one (when this host can build it), else
    # ``docker exec``; "python"/"static": only that one; "off": always ``docker exec``.
    call_server: Literal["auto", "python", "static", "off"] = "auto"
    # Stream mode: seconds each pool slot has to answer its warm-up handshake before the
    # seam fails to start with one clear line (an exec-only image never answers).
    stream_handshake_s: float = 30.0
    # Remove leftovers of provably dead runs (by owner label) when the first seam starts.
    sweep_on_start: bool = True
    # The Postgres image of a seed-contract seam's private brain server ("server": "private").
    # None: $BRAINBENCH_PRIVATE_BRAIN_IMAGE, else brainbench/postgres-vector:latest.
    private_brain_image: str | None = None
    private_brain_start_s: float = 90.0
    default_image_prefix: str = "brainbench/"
    default_image_tag: str = "latest"
