"""What a started seam needs from its run, as an interface: the provider's side, seen from below.

``provider.DockerExecutor`` is the one implementation.  The modules under it (``container``,
the call modes ``exec_call``/``call_client``/``stream_pool``, ``remote_files`` and ``seam``)
name only this protocol, never the provider, so the package imports in one direction
(``tests/test_import_layers.py`` holds it): config, failures → client, attach, cleanup,
hardening, image, mounts → private_brain → container → the call modes → seam → provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from brainbench.executors.base import RunContext
    from brainbench.models.sandbox import HardeningConfig, ResourceLimits

    from .client import DockerApi
    from .config import DockerConfig
    from .database import DbTarget


class SeamHost(Protocol):
    """The run-scoped facts and resources every seam container of one run shares."""

    config: DockerConfig
    run_id: str
    # Stream mode: warm processes per seam container.
    pool_size: int
    # Host path of the static call server, bind-mounted into every seam container (or None).
    static_helper: str | None
    # Where the shared brain is (socket dir or TCP host), and the run network for a TCP one.
    db_target: DbTarget | None
    network_name: str | None
    # The run's context (None before prepare): its ``notify`` names a slow set-up phase as it starts.
    context: RunContext | None

    @property
    def api(self) -> DockerApi: ...

    @property
    def remote(self) -> bool: ...

    @property
    def limits(self) -> ResourceLimits: ...

    @property
    def hardening(self) -> HardeningConfig: ...

    def container_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment as a container must see it (the shared brain's URL rewritten for TCP mode)."""
        ...

    def forget(self, process: object) -> None:
        """A stopped seam leaves the run's list of seams to close."""
        ...
