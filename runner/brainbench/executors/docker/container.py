"""One hardened, idle container per seam: image facts, user, mounts, exec plumbing.

The container's PID 1 (tini) idles; hooks run in it as execs (exec mode) or as
long-lived attached processes (stream mode).  It is created once, at ``start``, with
everything the run will need (the brain's socket or network, the seam's work subtree),
so no call ever has to recreate it.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from brainbench.models.seed import BrainContractError, brain_contract_of

from ..base import InvocationMode, SeamLaunch
from ..call_files import CallFiles, files_for
from .cleanup import owner_labels
from .config import CONTRACT_VERSION, DB_ENV, LABEL_SEAM
from .failures import (
    DockerInfraError,
    ImageContractError,
    check_started,
    is_transient,
    missing_shell,
    no_shell_message,
)
from .hardening import create_kwargs, resolve_user, user_spec
from .image import ImageFacts, inspect_image, read_accounts
from .labels import runner_labels
from .mounts import remote_tmpfs, seam_mounts
from .private_brain import PrivateBrain, private_brain_image, start_private_brain
from .users import Accounts, UserSpecError, needs_accounts

if TYPE_CHECKING:
    from .host import SeamHost

log = logging.getLogger(__name__)

# The warm container's PID-1 child: idle forever with nothing but /bin/sh and sleep.
IDLE_COMMAND = "sleep infinity 2>/dev/null; while :; do sleep 3600; done"
# Kills every process group named in a pidfile (a negative pid is the group).
KILL_BY_PIDFILE = ('for p in $(cat "$0" 2>/dev/null); do '
                   'kill -s KILL -- "-$p" 2>/dev/null || kill -s KILL "$p" 2>/dev/null; done; rm -f "$0"')


def hook_command(command: Sequence[str]) -> list[str]:
    """A single string with spaces is a shell command line, as harnesses run it (sh -c)."""
    if len(command) == 1 and any(ch.isspace() for ch in command[0]):
        return ["/bin/sh", "-c", command[0]]
    return list(command)


def stream_command(command: Sequence[str]) -> list[str]:
    cmd = hook_command(command)
    if cmd[:2] == ["/bin/sh", "-c"]:
        return ["/bin/sh", "-c", cmd[2] + " --stream"] if "--stream" not in cmd[2] else cmd
    return cmd if "--stream" in cmd else [*cmd, "--stream"]


def wants_private_brain(image: str, labels: dict[str, str]) -> bool:
    """The image's seed contract asks for a brain server of its own; a bad label is launch's to report."""
    try:
        contract = brain_contract_of(image, labels)
    except BrainContractError:
        return False
    return contract is not None and contract.server == "private"


def choose_mode(launch: SeamLaunch, facts: ImageFacts) -> InvocationMode:
    """Stream only where the image declares it, unless the launch asked for it explicitly."""
    if launch.mode == "stream" and launch.mode_from_image and "stream" not in facts.modes:
        return "exec"
    return launch.mode


class SeamContainer:
    def __init__(self, executor: SeamHost, launch: SeamLaunch) -> None:
        self.executor = executor
        self.launch = launch
        self.seam = launch.seam
        cfg = executor.config
        self.image_ref = launch.image or (f"{cfg.default_image_prefix}{launch.seam.replace('_', '-')}:"
                                          f"{cfg.default_image_tag}")
        self.facts: ImageFacts | None = None
        self.mode: InvocationMode = launch.mode
        self.accounts: Accounts | None = None
        # The numeric uid:gid the hook runs as (never 0; see users.py).
        self.user = ""
        self.hook_cmd: list[str] = []
        self.base_env: dict[str, str] = {}
        self.container: Any = None
        self.created = 0  # containers created for this seam: 1 in a healthy run
        self.cpus: float | None = None  # the container's CPU quota, once created
        # The seam's own brain server, when its image's seed contract asks for one.
        self.private: PrivateBrain | None = None
        self._lock = threading.RLock()

    # -- lifecycle ---------------------------------------------------------------------------
    def boot(self) -> None:
        api = self.executor.api
        facts = self.facts = inspect_image(api, self.image_ref)
        hardening = self.executor.hardening
        spec = user_spec(hardening, facts.user)
        if spec and needs_accounts(spec):
            self.accounts = read_accounts(api, self.image_ref, runner_labels(facts.labels,
                                                                             owner_labels(self.executor.run_id)))
        try:
            self.user = resolve_user(hardening, facts.user, self.accounts)
        except UserSpecError as exc:
            raise DockerInfraError(f"{self.image_ref}: {exc}") from exc
        self.mode = choose_mode(self.launch, facts)
        if self.private is None and wants_private_brain(self.image_ref, facts.labels):
            cfg = self.executor.config
            if self.executor.remote:
                raise DockerInfraError(
                    f"seam {self.seam}: image {self.image_ref} declares a private brain server, which needs a Docker "
                    f"engine on this machine (the runner reaches it through a Unix socket); the engine at {api.host} "
                    "is remote")
            context = self.executor.context
            if context is not None and context.notify is not None:  # the run's progress: name the wait
                context.notify(f"seam {self.seam}: starting a private brain server for image {self.image_ref}")
            # Before the container: the seam joins the private server's network namespace.
            self.private = start_private_brain(api, self.executor.run_id, self.seam,
                                               private_brain_image(cfg.private_brain_image),
                                               cfg.private_brain_start_s)
        command = list(self.launch.command)
        if command and command[0] == sys.executable:
            if "-m brainbench.hooks" in " ".join(command):
                # Our adapter's command names a module of the runner's checkout; inside an
                # image the image's own ENTRYPOINT/CMD is its hook (for our contract images
                # the same adapter, as built into that image).
                command = list(facts.command)
            else:
                # The runner's interpreter is a host path; our images put their venv's
                # python first on PATH.
                command[0] = "python"
        if "--stream" in command and self.mode == "exec":
            command.remove("--stream")
        self.hook_cmd = hook_command(command or list(facts.command))
        if not self.hook_cmd:
            raise ImageContractError(
                f"image {self.image_ref} has no ENTRYPOINT or CMD, so it has no hook to run: add "
                "ENTRYPOINT [\"/path/to/hook\"] to its Dockerfile, or give `command` in seams.toml")
        self.base_env = self.container_env(self.launch.env)
        with self._lock:
            try:
                self.container = api.retry(self._create_and_start)
            except Exception as exc:
                if missing_shell(exc):
                    raise ImageContractError(no_shell_message(self.image_ref)) from exc
                raise
            check_started(self.container, self.image_ref)

    def _create_and_start(self) -> Any:
        ex = self.executor
        target = ex.db_target
        kwargs = create_kwargs(ex.hardening, ex.limits, self.facts.user if self.facts else None, self.accounts)
        self.cpus = kwargs["nano_cpus"] / 1e9 if "nano_cpus" in kwargs else None
        if ex.remote:
            # Nothing of this machine can be mounted: the work subtree is a tmpfs owned by the
            # hook user, filled call by call (remote_files); the brain is reached over the network.
            mounts, groups = [], []
            kwargs["tmpfs"] = {**kwargs["tmpfs"], **remote_tmpfs(self.launch.shared_paths, self.user)}
        else:
            # A seam with a private brain server never sees the shared one: no socket, no run network.
            # Through its own gate when the run has one (brain/gate.py): never another seam's, nor the server's.
            gates = ex.context.seam_sockets if ex.context else {}
            socket_dir = (gates.get(self.seam) or target.socket_dir) if target and self.private is None else None
            mounts, groups = seam_mounts(list(self.launch.shared_paths), socket_dir, self.user, ex.static_helper)
        if groups:
            kwargs["group_add"] = groups
        # The private server's network namespace, which has only its loopback, names the host itself.
        host: dict[str, str] = {} if self.private is not None else {"hostname": "seam"}
        if self.private is not None:
            kwargs["network_mode"] = self.private.network_mode
        elif ex.network_name:
            kwargs["network"] = ex.network_name
        else:
            # Unix-socket database (or none): the most hardened option, no network at all.
            kwargs["network_mode"] = "none"
        # Only the runner's labels: the image's would otherwise pass on to the container (labels.py).
        labels = runner_labels(self.facts.labels if self.facts else None, {
            **owner_labels(ex.run_id), LABEL_SEAM: self.seam, "brainbench.contract_version": CONTRACT_VERSION,
            "brainbench.mode": self.mode})
        name = f"{ex.run_id}-{self.seam.replace('_', '-')}-{uuid.uuid4().hex[:6]}"
        container = ex.api.client.containers.create(
            self.image_ref, entrypoint=["/bin/sh", "-c", IDLE_COMMAND], command=[], name=name,
            labels=labels, environment=self.base_env, mounts=mounts, detach=True, **host, **kwargs)
        self.created += 1
        try:
            container.start()
        except Exception:
            # A half-started container would block the retry's fresh attempt; remove it.
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise
        return container

    def call_files(self, payload: bytes) -> CallFiles:
        """On a remote engine, the files this call's hook will read (nothing on a local one)."""
        if not self.executor.remote:
            return CallFiles()
        return files_for(payload, self.launch.shared_paths)

    def ensure_running(self) -> None:
        """Bring a dead or vanished container back (no hook of the failed call has run).

        Tried once, never in a loop of its own: whoever asked (a retried set-up step, or the
        orchestrator's retry of the whole call) tries again (``executors/retry.py``).
        """
        from docker.errors import NotFound

        with self._lock:
            if self.container is not None:
                try:
                    self.container.reload()
                    if self.container.status == "running":
                        return
                    was = self.container.status
                except NotFound:
                    was = "removed"
                log.warning("docker: recreating %s container (it was %s)", self.seam, was)
                self.remove()
            self.container = self._create_and_start()

    def remove(self) -> None:
        with self._lock:
            if self.container is not None:
                with contextlib.suppress(Exception):
                    self.container.remove(force=True)
                self.container = None

    def remove_private_brain(self) -> None:
        """At the seam's stop (the run's close): after its container, which shares the server's network."""
        with self._lock:
            if self.private is not None:
                self.private.remove()
                self.private = None

    def container_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment as this container must see it: the run's rewrite, and a URL of the
        seam's private server turned from the runner's socket to the seam's loopback."""
        out = self.executor.container_env(env)
        if self.private is not None and out.get(DB_ENV):
            out[DB_ENV] = self.private.for_seam(out[DB_ENV])
        return out

    # -- exec plumbing -----------------------------------------------------------------------
    def create_exec(self, cmd: list[str], env: Mapping[str, str], *, in_call: bool = False) -> str:
        """An exec in the seam container.  ``in_call``: for a graded call, so not retried here
        (the orchestrator retries the call); a dead container is still brought back for the
        next attempt."""
        api = self.executor.api

        def create() -> str:
            if self.container is None:  # an earlier recreate failed: try again now
                self.ensure_running()
            try:
                res = api.api.exec_create(self.container.id, cmd, stdin=True, stdout=True, stderr=True,
                                          tty=False, environment=dict(env))
            except Exception as exc:
                if is_transient(exc) or "No such container" in str(exc):
                    self.ensure_running()
                raise
            return str(res["Id"])

        return create() if in_call else api.retry(create)

    def exit_code(self, exec_id: str) -> int | None:
        # The attach stream can hit EOF a moment before the daemon records the exit.
        for _ in range(200):
            info = self.executor.api.api.exec_inspect(exec_id)
            if not info.get("Running"):
                return info.get("ExitCode")
            time.sleep(0.01)
        return None

    def kill_by_pidfile(self, pidfile: str) -> None:
        # docker exec cannot signal its process; kill it by the pid it recorded.  Each
        # exec is its own session leader (runc setsid), so the negative pid takes the
        # hook's children with it.
        api = self.executor.api.api
        with contextlib.suppress(Exception):
            # Detached: an attached exec_start here was observed to linger ~4 s after
            # the kill while the daemon reaps the other exec.
            exec_id = api.exec_create(self.container.id, ["/bin/sh", "-c", KILL_BY_PIDFILE, pidfile])["Id"]
            api.exec_start(exec_id, detach=True)
            self.exit_code(exec_id)

    def describe(self) -> dict[str, Any]:
        """Facts for the result document (image digest, mode, container)."""
        facts = self.facts
        return {"seam": self.seam, "image": self.image_ref, "image_id": facts.id if facts else None,
                "image_digest": facts.digest if facts else None, "mode": self.mode,
                "command": shlex.join(self.hook_cmd), "container": getattr(self.container, "name", None)}
