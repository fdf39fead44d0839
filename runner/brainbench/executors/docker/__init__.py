"""Docker provider for the executor interface (see ``executors.base``).

Split by concern: ``provider`` (the Executor: run-scoped resources), ``seam`` (a started
seam), ``container`` (one hardened container), ``exec_call`` and ``stream_pool`` (the two
modes), ``client`` (SDK wrapper and infra retries), ``attach`` (raw exec streams),
``cleanup`` (owner-label sweep), ``hardening``/``users``/``mounts`` (what a hook may do
and see), ``image`` (image facts and labels), ``database`` (socket mount vs run network),
``failures`` (classification).  The modules under ``provider`` see it only through
``host.SeamHost``, so the package imports in layers, without a cycle.  The image
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
