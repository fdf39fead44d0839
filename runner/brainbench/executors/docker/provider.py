"""The Docker provider: one warm, hardened container per seam per run.

Exec mode runs one ``docker exec -i`` per hook call (stdin written, then closed;
no TTY).  Stream mode keeps one attached long-lived process per container that
speaks the JSON-lines protocol of ``brainbench.seams`` (``--stream``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import queue
import shlex
import signal
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import anyio

from ..base import Executor, HookCall, HookOutcome, SeamLaunch, SeamProcess
from ..limits import (
    MAX_OUTPUT_BYTES,
    LineSplitter,
    OutputLimitExceeded,
    decode_stream_text,
    oversize_outcome,
)
from .attach import STDOUT, HijackedExec
from .cleanup import owner_labels, remove_labelled, sweep_dead_runs
from .client import DockerApi
from .config import CONTRACT_VERSION, LABEL_SEAM, STREAM_PIDFILE, DockerConfig
from .database import DbTarget, is_loopback, parse_target, rewrite_host
from .failures import DockerInfraError, describe, is_transient
from .hardening import create_kwargs, resolve_user, user_spec
from .image import inspect_image, read_accounts
from .mounts import seam_mounts
from .users import Accounts, UserSpecError, needs_accounts

log = logging.getLogger(__name__)

DB_ENV = "BRAINBENCH_DATABASE_URL"
# `timeout -s KILL` exits 128+9 when it had to kill the hook.
KILLED_EXIT = 137
# The warm container's PID-1 child: idle forever with nothing but /bin/sh and sleep.
IDLE_COMMAND = "sleep infinity 2>/dev/null; while :; do sleep 3600; done"
# docker exec does not forward signals, so the timeout runs inside the container:
# coreutils/busybox `timeout` kills the hook (and its process group) with SIGKILL.
# timeout runs in the background so that, once the hook exits, its whole process
# group is killed: a leaked child would otherwise hold stdout open and eat the
# container's pids limit.  POSIX sh points a background job's stdin at /dev/null
# before explicit redirections, so the real stdin is handed over on fd 3.
# The supervisor records its own pid and the timeout's (each leads a process
# group) in a pidfile, so the host can still kill the call should the in-container
# timeout itself wedge; the file is removed when the call ends.
SUPERVISOR = ('pf="$0"; t="$1"; shift; exec 3<&0; timeout -s KILL "$t" "$@" <&3 3<&- & p=$!; exec 3<&-; '
              '{ echo "$p $$" > "$pf"; } 2>/dev/null; '
              'wait "$p"; rc=$?; kill -s KILL -- "-$p" 2>/dev/null; rm -f "$pf"; exit "$rc"')
# Records the stream process pid (per pool slot) so a timeout can kill it.
STREAM_WRAPPER = 'echo "$$" > "$0"; exec "$@"'
# Kills every process group named in a pidfile (a negative pid is the group).
KILL_BY_PIDFILE = ('for p in $(cat "$0" 2>/dev/null); do '
                   'kill -s KILL -- "-$p" 2>/dev/null || kill -s KILL "$p" 2>/dev/null; done; rm -f "$0"')
EXEC_PIDFILE_DIR = "/tmp"


def supervised(timeout_s: float, command: Sequence[str], pidfile: str) -> list[str]:
    return ["/bin/sh", "-c", SUPERVISOR, pidfile, f"{max(timeout_s, 0.001):g}", *command]


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


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class DockerExecutor(Executor):
    """Runs each seam in its own warm container; everything labelled by run id."""

    name: ClassVar[str] = "docker"

    def __init__(self, config: DockerConfig | None = None, *, run_id: str | None = None,
                 pool_size: int = 2) -> None:
        self.config = config or DockerConfig()
        # Stream mode: warm processes per seam container (calls in flight at once).
        self.pool_size = max(1, pool_size)
        self.run_id = run_id or f"bb-{uuid.uuid4().hex[:12]}"
        self._api: DockerApi | None = None
        self._processes: list[DockerSeamProcess] = []
        self._prepared = False
        self._prepare_lock = threading.RLock()
        self.db_target: DbTarget | None = None
        self.network_name: str | None = None
        self.db_host_override: str | None = self.config.container_db_host
        self._atexit_registered = False

    # -- infra -------------------------------------------------------------------------------
    @property
    def api(self) -> DockerApi:
        if self._api is None:
            self._api = DockerApi(self.config.docker_host, attempts=self.config.infra_attempts)
        return self._api

    async def start(self, launch: SeamLaunch) -> SeamProcess:
        if launch.run_id and not self._prepared:
            self.run_id = launch.run_id
        self._install_signal_handler()
        await anyio.to_thread.run_sync(self._prepare, launch)
        process = DockerSeamProcess(self, launch)
        self._processes.append(process)
        await anyio.to_thread.run_sync(process.boot, abandon_on_cancel=True)
        return process

    async def close(self) -> None:
        for process in list(self._processes):
            with contextlib.suppress(Exception):
                await process.stop()
        await anyio.to_thread.run_sync(self._teardown)

    def _prepare(self, launch: SeamLaunch) -> None:
        with self._prepare_lock:
            if self._prepared:
                return
            api = self.api
            self._install_cleanup_hooks()
            if self.config.sweep_on_start:
                sweep_dead_runs(api, current_run_id=self.run_id)
            url = self.config.database_url or launch.env.get(DB_ENV)
            if url:
                self.ensure_db(parse_target(url))
            self._prepared = True

    def ensure_db(self, target: DbTarget) -> bool:
        """Make ``target`` reachable for containers created from now on; True if it changed.

        The URL usually arrives only with the first hook call (per-fixture databases),
        so this also runs lazily and the seam container is recreated once to match.
        """
        with self._prepare_lock:
            if self.db_target == target or (self.db_target is not None and self.db_target.is_socket
                                            and target.socket_dir == self.db_target.socket_dir):
                return False
            if not target.is_socket and self.network_name is None:
                self._prepare_network(target)
            self.db_target = target
            return True

    def _prepare_network(self, target: DbTarget) -> None:
        """Internal (no egress) run network; Postgres is attached to it under an alias."""
        api = self.api
        name = f"{self.run_id}-db"
        network = api.retry(api.client.networks.create, name, driver="bridge", internal=True,
                            labels=owner_labels(self.run_id), check_duplicate=True)
        self.network_name = network.name
        pg = self._find_postgres(target)
        if pg is None:
            raise DockerInfraError(
                f"Postgres at {target.host}:{target.port} is not a container this executor can attach to "
                "the run network; pass DockerConfig.postgres_container (compose service) or use the "
                "embedded Unix-socket database")
        alias = "postgres" if is_loopback(target.host or "") else (target.host or "postgres")
        api.retry(network.connect, pg, aliases=[alias])
        if self.db_host_override is None and is_loopback(target.host or ""):
            # The runner talks to a published port on loopback; containers use the alias.
            self.db_host_override = f"{alias}:5432"

    def _find_postgres(self, target: DbTarget) -> Any:
        client = self.api.client
        if self.config.postgres_container:
            return client.containers.get(self.config.postgres_container)
        host = target.host or ""
        candidates = [
            c for c in client.containers.list(ignore_removed=True)
            if c.name == host or c.labels.get("com.docker.compose.service") == host
        ]
        if is_loopback(host):
            candidates = [c for c in client.containers.list(ignore_removed=True)
                          if c.labels.get("com.docker.compose.service") == "postgres"]
        if len(candidates) > 1:
            # Inside compose our hostname is our container id: prefer our own project.
            with contextlib.suppress(Exception):
                me = client.containers.get(socket.gethostname())
                project = me.labels.get("com.docker.compose.project")
                candidates = [c for c in candidates
                              if c.labels.get("com.docker.compose.project") == project] or candidates
        return candidates[0] if candidates else None

    def _teardown(self) -> None:
        if self._api is None:
            return
        with contextlib.suppress(Exception):
            report = remove_labelled(self._api, run_id=self.run_id)
            if report.errors:
                log.warning("docker: cleanup errors: %s", report.errors)
        self._uninstall_cleanup_hooks()

    def _install_cleanup_hooks(self) -> None:
        """Leave nothing labelled behind on exit, SIGTERM included."""
        if self._atexit_registered:
            return
        atexit.register(self._teardown)
        self._atexit_registered = True

    @staticmethod
    def _install_signal_handler() -> None:
        # SIGTERM's default action skips atexit and finally blocks; turn it into the
        # same unwinding as Ctrl-C, but only if nobody else handles SIGTERM.  Must run
        # on the main thread (start() does, before any worker thread).
        if threading.current_thread() is threading.main_thread():
            with contextlib.suppress(ValueError):
                if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)

    def _uninstall_cleanup_hooks(self) -> None:
        if self._atexit_registered:
            atexit.unregister(self._teardown)
            self._atexit_registered = False

    # -- helpers used by processes ---------------------------------------------------------
    def container_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Environment as a container must see it (DB URL rewritten for TCP mode)."""
        out = dict(env)
        if self.db_host_override and out.get(DB_ENV):
            out[DB_ENV] = rewrite_host(out[DB_ENV], self.db_host_override)
        return out


def _sigterm_to_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


class _StreamSession:
    """One attached `--stream` process: request lines up, response lines down."""

    def __init__(self, handle: HijackedExec, pidfile: str) -> None:
        self.handle = handle
        self.pidfile = pidfile
        self.next_id = 1
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_tail: deque[bytes] = deque(maxlen=64)
        self.alive = True
        # Set when the process wrote a response line over the cap; the caller kills it.
        self.overflow: OutputLimitExceeded | None = None
        self._reader = threading.Thread(target=self._read, name="bb-stream-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        lines = LineSplitter()
        try:
            while (frame := self.handle.read_frame(None)) is not None:
                stream, data = frame
                if stream != STDOUT:
                    self.stderr_tail.append(data[-4096:])
                    continue
                for line in lines.feed(data):
                    self.lines.put(line)
        except OutputLimitExceeded as exc:
            self.overflow = exc
        except Exception as exc:  # socket closed under us on kill/stop
            log.debug("stream reader ended: %s", exc)
        finally:
            self.alive = False
            self.lines.put(None)

    def request(self, line: bytes, timeout_s: float) -> bytes | None:
        """The next response line; None if the process died; raises TimeoutError."""
        self.handle.send(line)
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                raw = self.lines.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError from None
            if raw is None or raw.strip():
                return raw

    def close(self) -> None:
        self.alive = False
        self.handle.close_write()
        self.handle.close()


class DockerSeamProcess(SeamProcess):
    """A warm seam container; calls run as execs or through a pool of stream processes."""

    def __init__(self, executor: DockerExecutor, launch: SeamLaunch) -> None:
        self.executor = executor
        self.launch = launch
        self.seam = launch.seam
        self.mode = launch.mode
        cfg = executor.config
        self.image_ref = launch.image or f"{cfg.default_image_prefix}{launch.seam.replace('_', '-')}:" \
                                         f"{cfg.default_image_tag}"
        self.image_id: str | None = None
        # RepoDigests when the image came from a registry, else the local image id.
        self.image_digest: str | None = None
        self.image_user: str | None = None
        self.accounts: Accounts | None = None
        # The numeric uid:gid the hook runs as (never 0; see users.py).
        self.user: str = ""
        self.container: Any = None
        self.hook_cmd: list[str] = []
        self._base_env: dict[str, str] = {}
        self._db_built_for: DbTarget | None = None
        self._container_lock = threading.RLock()
        # Stream pool: idle sessions (None = slot not started yet), handed out in the
        # event loop thread so no lock is needed around the list itself.
        self._slots = anyio.Semaphore(executor.pool_size)
        self._idle: list[tuple[int, _StreamSession | None]] = [(i, None) for i in range(executor.pool_size)]
        self._sessions: dict[int, _StreamSession] = {}

    # -- lifecycle ---------------------------------------------------------------------------
    def boot(self) -> None:
        api = self.executor.api
        facts = inspect_image(api, self.image_ref)
        self.image_id = facts.id
        self.image_digest = facts.digest
        self.image_user = facts.user
        spec = user_spec(self.executor.config.hardening, facts.user)
        if spec and needs_accounts(spec):
            self.accounts = read_accounts(api, self.image_ref, owner_labels(self.executor.run_id))
        try:
            self.user = resolve_user(self.executor.config.hardening, facts.user, self.accounts)
        except UserSpecError as exc:
            raise DockerInfraError(f"{self.image_ref}: {exc}") from exc
        image_cmd = list(facts.command)
        labels = facts.labels
        command = list(self.launch.command)
        if command and command[0] == sys.executable:
            if labels.get("io.brainbench.kind") != "contract" and "brainbench.seams." in " ".join(command):
                # A production image behind a seam: our adapter's command means nothing
                # there; the image's own ENTRYPOINT/CMD is its hook.
                command = image_cmd + (["--stream"] if "--stream" in command else [])
            else:
                # The runner's interpreter is a host path; our images put their venv's
                # python first on PATH.
                command[0] = "python"
        self.hook_cmd = hook_command(command or image_cmd)
        if not self.hook_cmd:
            raise DockerInfraError(f"{self.image_ref}: no hook command (SeamLaunch.command is empty and "
                                   "the image has no ENTRYPOINT/CMD)")
        self._base_env = self.executor.container_env(self.launch.env)
        with self._container_lock:
            self.container = api.retry(self._create_and_start)

    def _create_and_start(self) -> Any:
        ex = self.executor
        target = ex.db_target
        mounts, groups = seam_mounts(list(self.launch.shared_paths), target.socket_dir if target else None,
                                     self.user)
        kwargs = create_kwargs(ex.config.hardening, self.image_user, self.accounts)
        if groups:
            kwargs["group_add"] = groups
        if ex.network_name:
            kwargs["network"] = ex.network_name
        else:
            # Unix-socket database (or none): the most hardened option, no network at all.
            kwargs["network_mode"] = "none"
        labels = {**owner_labels(ex.run_id), LABEL_SEAM: self.seam,
                  "brainbench.contract_version": CONTRACT_VERSION, "brainbench.mode": self.mode}
        name = f"{ex.run_id}-{self.seam.replace('_', '-')}-{uuid.uuid4().hex[:6]}"
        container = ex.api.client.containers.create(
            self.image_ref, entrypoint=["/bin/sh", "-c", IDLE_COMMAND], command=[], name=name,
            labels=labels, environment=self._base_env, mounts=mounts, hostname="seam", detach=True,
            **kwargs)
        try:
            container.start()
        except Exception:
            # A half-started container would block the retry's fresh attempt; remove it.
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise
        self._db_built_for = target
        return container

    def _recreate(self, why: str) -> None:
        with self._container_lock:
            log.info("docker: recreating %s container (%s)", self.seam, why)
            self._remove_container()
            self.container = self.executor.api.retry(self._create_and_start)

    def _ensure_db(self, env: Mapping[str, str]) -> None:
        """Before a hook runs: its database must be reachable from this container."""
        url = env.get(DB_ENV)
        if not url:
            return
        target = parse_target(url)
        changed = self.executor.ensure_db(target)
        with self._container_lock:
            if changed or self._db_built_for != self.executor.db_target:
                self._recreate(f"database at {target.socket_dir or target.host}")

    async def stop(self) -> None:
        await anyio.to_thread.run_sync(self._stop_sync, abandon_on_cancel=True)
        with contextlib.suppress(ValueError):
            self.executor._processes.remove(self)

    def _stop_sync(self) -> None:
        with self._container_lock:
            self._remove_container()

    def _remove_container(self) -> None:
        """Close the stream sessions and force-remove the container (caller holds the lock)."""
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()
        if self.container is not None:
            with contextlib.suppress(Exception):
                self.container.remove(force=True)
            self.container = None

    def _ensure_running(self) -> None:
        """Bring a dead container back before a call (the hook has not run yet)."""
        with self._container_lock:
            self.container.reload()
            if self.container.status != "running":
                self._recreate(f"container was {self.container.status}")

    # -- calls -------------------------------------------------------------------------------
    async def call(self, call: HookCall) -> HookOutcome:
        outcome = await self._call(call)
        if outcome.infra_error or outcome.exit_code not in (0, None) or outcome.timed_out:
            log.debug("docker: %s call: exit=%s timed_out=%s infra=%s stderr=%s", self.seam,
                      outcome.exit_code, outcome.timed_out, outcome.infra_error,
                      outcome.stderr[-2000:].decode("utf-8", "replace"))
        return outcome

    async def _call(self, call: HookCall) -> HookOutcome:
        if self.mode == "stream":
            obj = _json_object(call.payload)
            if obj is not None:
                # One request at a time per stream process, so the timeout measures only
                # this request, never queueing behind another.
                async with self._slots:
                    slot, session = self._idle.pop()
                    try:
                        outcome, session = await anyio.to_thread.run_sync(
                            self._stream_call, call, obj, slot, session, abandon_on_cancel=True)
                    finally:
                        self._idle.append((slot, session))
                    return outcome
            # Not a JSON object (empty stdin, arrays, garbage): the line protocol cannot
            # carry it verbatim, so that call goes through exec with the exact bytes.
        return await anyio.to_thread.run_sync(self._exec_call, call, abandon_on_cancel=True)

    def _create_exec(self, cmd: list[str], env: Mapping[str, str]) -> str:
        api = self.executor.api

        def create() -> str:
            try:
                res = api.api.exec_create(self.container.id, cmd, stdin=True, stdout=True, stderr=True,
                                          tty=False, environment=dict(env))
            except Exception as exc:
                if is_transient(exc) or "No such container" in str(exc):
                    self._ensure_running()
                raise
            return str(res["Id"])

        return api.retry(create)

    def _exit_code(self, exec_id: str) -> int | None:
        # The attach stream can hit EOF a moment before the daemon records the exit.
        for _ in range(200):
            info = self.executor.api.api.exec_inspect(exec_id)
            if not info.get("Running"):
                return info.get("ExitCode")
            time.sleep(0.01)
        return None

    def run_command(self, command: Sequence[str], call: HookCall) -> HookOutcome:
        """Run any command the way a hook runs (used by ``doctor`` to probe the image)."""
        return self._exec_call(call, list(command))

    def _exec_call(self, call: HookCall, command: list[str] | None = None) -> HookOutcome:
        ex = self.executor
        start = time.perf_counter()

        def infra(exc: BaseException) -> HookOutcome:
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - start) * 1000,
                               infra_error=describe(exc))

        env = {**self._base_env, **ex.container_env(call.env)}
        try:
            self._ensure_db(call.env)
            pidfile = f"{EXEC_PIDFILE_DIR}/.brainbench-exec-{uuid.uuid4().hex}"
            exec_id = self._create_exec(supervised(call.timeout_s, command or self.hook_cmd, pidfile), env)
            handle = HijackedExec.start(ex.api.host, ex.api.api_version, exec_id)
        except Exception as exc:
            return infra(exc)
        # Write stdin from a thread: a hook that prints before reading (or never reads)
        # must not deadlock against a large payload.
        writer = threading.Thread(target=_write_and_close, args=(handle, call.payload), daemon=True)
        writer.start()
        deadline = time.monotonic() + call.timeout_s + ex.config.exec_grace_s
        try:
            stdout, stderr = handle.read_all(deadline)
        except OutputLimitExceeded as exc:
            # Over the cap: stop reading and kill the hook's group now, not at its timeout.
            # The attach is closed first: the daemon holds the exec open while its copy of
            # our unread output is blocked (observed: the kill then took ~2.6 s).
            handle.close()
            self._kill_by_pidfile(pidfile)
            return oversize_outcome(exc, (time.perf_counter() - start) * 1000)
        except TimeoutError:
            # The in-container timeout should have fired; the exec is wedged.  Kill it
            # from the host side and discard the output like any timeout.
            log.warning("docker: %s exec outlived its in-container timeout by %.1fs; killing it", self.seam,
                        ex.config.exec_grace_s)
            self._kill_by_pidfile(pidfile)
            return HookOutcome(None, b"", b"", True, (time.perf_counter() - start) * 1000)
        finally:
            handle.close()
        elapsed = time.perf_counter() - start
        try:
            exit_code = self._exit_code(exec_id)
        except Exception as exc:
            return infra(exc)
        if exit_code == KILLED_EXIT and elapsed >= call.timeout_s:
            # Killed by the supervisor: discard everything it printed (harness rule).
            return HookOutcome(None, b"", b"", True, elapsed * 1000)
        return HookOutcome(exit_code, stdout, stderr, False, elapsed * 1000)

    def _start_stream(self, slot: int) -> _StreamSession:
        ex = self.executor
        pidfile = f"{STREAM_PIDFILE}.{slot}"
        cmd = ["/bin/sh", "-c", STREAM_WRAPPER, pidfile, *stream_command(self.hook_cmd)]
        exec_id = self._create_exec(cmd, self._base_env)
        handle = HijackedExec.start(ex.api.host, ex.api.api_version, exec_id)
        session = _StreamSession(handle, pidfile)
        self._sessions[slot] = session
        return session

    def _kill_stream(self, slot: int, session: _StreamSession) -> None:
        self._sessions.pop(slot, None)
        # Closed first: a daemon blocked on output we no longer read delays the kill.
        session.close()
        self._kill_by_pidfile(session.pidfile)

    def _kill_by_pidfile(self, pidfile: str) -> None:
        # docker exec cannot signal its process; kill it by the pid it recorded.  Each
        # exec is its own session leader (runc setsid), so the negative pid takes the
        # hook's children with it.
        api = self.executor.api.api
        with contextlib.suppress(Exception):
            # Detached: an attached exec_start here was observed to linger ~4 s after
            # the kill while the daemon reaps the other exec.
            exec_id = api.exec_create(self.container.id, ["/bin/sh", "-c", KILL_BY_PIDFILE, pidfile])["Id"]
            api.exec_start(exec_id, detach=True)
            self._exit_code(exec_id)

    def _stream_call(self, call: HookCall, obj: dict[str, Any], slot: int, session: _StreamSession | None
                     ) -> tuple[HookOutcome, _StreamSession | None]:
        """Mirrors the local executor's stream semantics so both grade identically."""
        ex = self.executor
        start = time.perf_counter()
        try:
            self._ensure_db(call.env)
            if session is None or not session.alive or self._sessions.get(slot) is not session:
                session = self._start_stream(slot)
        except Exception as exc:
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - start) * 1000,
                               infra_error=describe(exc)), None
        request_id = session.next_id
        session.next_id += 1
        line = json.dumps({"id": request_id, "env": ex.container_env(call.env), "input": obj},
                          ensure_ascii=False).encode() + b"\n"
        start = time.perf_counter()
        try:
            raw = session.request(line, call.timeout_s)
        except TimeoutError:
            self._kill_stream(slot, session)
            return HookOutcome(None, b"", b"", True, (time.perf_counter() - start) * 1000), None
        elapsed_ms = (time.perf_counter() - start) * 1000
        if raw is None and session.overflow is not None:
            self._kill_stream(slot, session)
            return oversize_outcome(session.overflow, elapsed_ms), None
        if raw is None:
            self._kill_stream(slot, session)
            log.debug("docker: %s stream process died: %s", self.seam, b"".join(session.stderr_tail)[-2000:])
            return HookOutcome(1, b"", b"stream process died", False, elapsed_ms), None
        try:
            doc = json.loads(raw)
            if doc.get("exit_code") not in (0, None):
                log.debug("docker: %s stream exit %s: %s", self.seam, doc.get("exit_code"),
                          str(doc.get("stderr", ""))[-2000:])
            if doc.get("id") != request_id:
                raise ValueError(f"answer id {doc.get('id')} for request {request_id}")
            out, err = decode_stream_text(doc.get("stdout", "")), decode_stream_text(doc.get("stderr", ""))
            code = int(doc["exit_code"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._kill_stream(slot, session)
            return HookOutcome(1, b"", f"stream protocol violation: {exc}".encode(), False, elapsed_ms), None
        for name, data in (("stdout", out), ("stderr", err)):
            if len(data) > MAX_OUTPUT_BYTES:
                self._kill_stream(slot, session)
                return oversize_outcome(OutputLimitExceeded(name, MAX_OUTPUT_BYTES), elapsed_ms), None
        return HookOutcome(code, out, err, False, elapsed_ms), session

    def describe(self) -> dict[str, Any]:
        """Facts for the result document (image digest, mode, container)."""
        return {"seam": self.seam, "image": self.image_ref, "image_id": self.image_id,
                "image_digest": self.image_digest, "mode": self.mode,
                "command": shlex.join(self.hook_cmd),
                "container": getattr(self.container, "name", None)}


def _write_and_close(handle: HijackedExec, payload: bytes) -> None:
    if payload:
        handle.send(payload)
    handle.close_write()
