"""Crash cleanup: find and remove BrainBench containers and networks by label.

Every object we create carries ``brainbench.managed=1``, ``brainbench.run_id`` and
``brainbench.owner`` (the owning process instance, ``brainbench.ownership``).  A run
removes its own objects on close; a killed run (SIGKILL, power loss) leaves them
behind, so the next run sweeps leftovers whose owner is *provably* dead.  An owner we
cannot judge (another machine, another pid namespace without a visible lock file, an
object from before owner labels) is never swept automatically: removing a live run's
container would corrupt its grades.  ``brainbench cleanup --all`` removes those too.
A container's labels are believed only where its image did not set them (``labels``): a
container someone made from an image carrying our labels is not ours, whatever they say.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brainbench.models.owner import Owner, OwnerState
from brainbench.ownership import current_owner, owner_state

from .config import LABEL_CREATED, LABEL_MANAGED, LABEL_OWNER, LABEL_ROLE, LABEL_RUN_ID
from .labels import ImageLabels

if TYPE_CHECKING:
    from .client import DockerApi

log = logging.getLogger(__name__)


@dataclass
class CleanupReport:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Objects left in place because their owner is alive or cannot be judged: "kind name (state)".
    kept: list[str] = field(default_factory=list)

    @property
    def removed(self) -> int:
        return len(self.containers) + len(self.networks)


def owner_labels(run_id: str) -> dict[str, str]:
    """Labels that let a later sweep decide whether the owning runner is dead."""
    return {
        LABEL_MANAGED: "1",
        LABEL_RUN_ID: run_id,
        LABEL_OWNER: current_owner().label(),
        LABEL_CREATED: str(int(time.time())),  # for people reading `docker ps`; no rule uses it
    }


def label_owner_state(labels: dict[str, str]) -> OwnerState:
    return owner_state(Owner.from_label(labels.get(LABEL_OWNER)))


def remove_labelled(api: DockerApi, *, run_id: str | None = None, dead_only: bool = False,
                    keep_run_id: str | None = None, keep_role: str | None = None) -> CleanupReport:
    """Remove managed containers first (they hold network endpoints), then networks.

    ``dead_only``: only objects whose owner is provably dead; the others are listed in
    ``report.kept``.  ``keep_role``: leave objects with that ``brainbench.role`` alone (the
    executor's close leaves the run's remote brain to the brain's own close).
    """
    report = CleanupReport()
    filters = {"label": [f"{LABEL_MANAGED}=1"] + ([f"{LABEL_RUN_ID}={run_id}"] if run_id else [])}

    def selected(labels: dict[str, str], what: str) -> bool:
        if keep_run_id and labels.get(LABEL_RUN_ID) == keep_run_id:
            return False
        if keep_role and labels.get(LABEL_ROLE) == keep_role:
            return False
        if not dead_only:
            return True
        state = label_owner_state(labels)
        if state != "dead":
            report.kept.append(f"{what} (run {labels.get(LABEL_RUN_ID, '?')}, owner {state})")
        return state == "dead"

    # The low-level list answers from one call; the SDK's ``containers.list`` inspects
    # every hit afterwards and raises 404 when a concurrent run removes one in between.
    images = ImageLabels(api)
    for entry in api.api.containers(all=True, filters=filters):
        name = (entry.get("Names") or [entry["Id"][:12]])[0].lstrip("/")
        labels = images.believed(entry)
        if LABEL_RUN_ID not in labels or (run_id and labels[LABEL_RUN_ID] != run_id):
            continue  # its image gave it our labels: not a container of any run
        if not selected(labels, f"container {name}"):
            continue
        try:
            api.api.remove_container(entry["Id"], force=True, v=True)
            report.containers.append(name)
        except Exception as exc:  # already gone (concurrent sweep or its own run's close) is fine
            if not _already_gone(exc):
                report.errors.append(f"container {name}: {exc}")
    for network in api.client.networks.list(filters=filters):
        labels = network.attrs.get("Labels") or {}
        if not selected(labels, f"network {network.name}"):
            continue
        try:
            network.reload()
            # Foreign containers (a compose Postgres) were connected by us; detach them.
            for cid in (network.attrs.get("Containers") or {}):
                try:
                    network.disconnect(cid, force=True)
                except Exception as exc:
                    log.debug("disconnect %s from %s: %s", cid, network.name, exc)
            network.remove()
            report.networks.append(network.name)
        except Exception as exc:
            if not _already_gone(exc):
                report.errors.append(f"network {network.name}: {exc}")
    return report


def _already_gone(exc: Exception) -> bool:
    text = str(exc)
    return any(marker in text for marker in ("No such container", "No such network", "not found",
                                             "already in progress", "404 Client Error"))


def sweep_dead_runs(api: DockerApi, *, current_run_id: str) -> CleanupReport:
    """Start-of-run sweep: leftovers of runs whose runner is provably gone (never our own)."""
    try:
        report = remove_labelled(api, dead_only=True, keep_run_id=current_run_id)
    except Exception as exc:  # housekeeping: a failed sweep must never cost the run
        log.warning("docker: start-of-run sweep skipped: %s", exc)
        return CleanupReport(errors=[f"sweep: {exc}"])
    for error in report.errors:
        log.warning("docker: sweep: %s", error)
    if report.removed:
        log.warning("docker: swept %d leftover object(s) of dead runs", report.removed)
    return report
