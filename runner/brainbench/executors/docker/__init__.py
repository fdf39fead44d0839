"""Docker provider for the executor interface (see ``executors.base``).

Split by concern: ``provider`` (Executor/SeamProcess), ``client`` (SDK wrapper and
infra retries), ``attach`` (raw exec streams), ``cleanup`` (label sweep),
``hardening`` (container options), ``database`` (socket mount vs run network),
``failures`` (classification), ``seams_config`` (seams.toml / --image).  The image
self-check is ``brainbench.doctor``.  The docker SDK is imported lazily.
"""

from __future__ import annotations

from .config import CONTRACT_VERSION, DockerConfig, HardeningConfig
from .failures import DockerInfraError, DockerUnavailable
from .provider import DockerExecutor, DockerSeamProcess

__all__ = [
    "CONTRACT_VERSION",
    "DockerConfig",
    "DockerExecutor",
    "DockerInfraError",
    "DockerSeamProcess",
    "DockerUnavailable",
    "HardeningConfig",
]
