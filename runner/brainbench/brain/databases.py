"""One database per fixture (or continuity pair), cloned from a migrated template.

A database is the isolation unit: a seam connected to one fixture's brain has no
way to name another fixture's tables, and its hook logs in with a role that may
connect to that database only (``brain/roles.py``).  Every database and role carries
the run id and the owner identity in its comment, so leftovers of a dead run can be
found and dropped, and those of a live run (on this host or another) never are.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from importlib import resources

import psycopg
from psycopg import sql

from brainbench.brain import roles
from brainbench.brain.budget import ADMIN_CONNECTIONS
from brainbench.brain.gate import SeamGates, via_gate
from brainbench.brain.guarded import ConnectionGuard
from brainbench.brain.roles import HookRole
from brainbench.brain.server import EmbeddedPostgres, PostgresServer, first_line
from brainbench.brain.watchdog import ShareWatchdog
from brainbench.models.owner import Owner
from brainbench.ownership import swept

PREFIX = "bb_"


def migrations() -> list[tuple[str, str]]:
    files = resources.files("brainbench.brain") / "migrations"
    return sorted((f.name, f.read_text()) for f in files.iterdir() if f.name.endswith(".sql"))


def build_schema(conn: psycopg.Connection) -> None:
    """The brain's tables in the database ``conn`` is connected to, closed to every hook role."""
    for _, text in migrations():
        conn.execute(text)
    roles.lock_schema(conn)


# A template made while the runner still imports (``make_spare_template``), for its run to adopt.
SPARE_TEMPLATE = f"{PREFIX}spare_tmpl"
# Far longer than its ~0.1 s: past this, something is wrong with it and the run makes its own.
SPARE_TEMPLATE_WAIT_S = 30.0


def make_spare_template(server: EmbeddedPostgres) -> str:
    """Migrate a template on an embedded server started ahead (``server.prepare_ahead``): its ~0.1 s of
    migrations then overlap the runner's imports instead of following them.  Only a fresh cluster of
    this run has one; the run's ``BrainDatabases.prepare`` renames it to its own template and labels
    it, or makes one as ever when there is none (this failed, or the server was not made ahead)."""
    with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(SPARE_TEMPLATE)))
        roles.lock_database(conn, SPARE_TEMPLATE)  # before anything else: no hook may ever connect to it
    with psycopg.connect(server.database_url(SPARE_TEMPLATE), autocommit=True) as conn:
        build_schema(conn)
    return SPARE_TEMPLATE


def take_spare_template(server: PostgresServer) -> tuple[str | None, bool]:
    """The migrated template made ahead on ``server`` (waiting for it while it is being made), at most
    once, and whether one was being made: (None, True) is one that failed or is stuck, whose remains
    the caller drops; (None, False): none was asked for."""
    spare: Future[str] | None = getattr(server, "spare_template", None)
    if spare is None:
        return None, False
    server.spare_template = None  # type: ignore[attr-defined]
    try:
        return spare.result(timeout=SPARE_TEMPLATE_WAIT_S), True
    except Exception:  # e.g. the run restarted the server at its own size under the migrations
        return None, True


class BrainDatabases:
    """Creates and drops the run's databases and hook roles; ``close`` leaves the server as it found it.

    ``seams`` names the hooks that get a role (and a URL) per database; the runner's
    own URL (``server.database_url``) is never handed to a hook.
    """

    def __init__(self, server: PostgresServer, run_id: str, seams: Sequence[str] = (), *,
                 connection_limit: int = roles.DEFAULT_CONNECTION_LIMIT,
                 statement_timeout_ms: int = roles.DEFAULT_STATEMENT_TIMEOUT_MS,
                 temp_file_limit_kb: int | None = roles.DEFAULT_TEMP_FILE_LIMIT_KB,
                 guard: ConnectionGuard | None = None) -> None:
        self.server = server
        # Set for a server an image controls (a private brain): every admin connection bounded in time.
        self.guard = guard
        self.run_id = run_id
        self.seams = tuple(dict.fromkeys(seams))
        self.connection_limit = connection_limit
        self.statement_timeout_ms = statement_timeout_ms
        self.temp_file_limit_kb: int | None = temp_file_limit_kb
        # Each seam's own door to the server (brain/gate.py), when the run has one: a hook URL
        # names it instead of the server's socket.
        self.gates: SeamGates | None = None
        # The run's share watchdog on this server (brain/watchdog.py); None on a seam's private server.
        self.watchdog: ShareWatchdog | None = None
        # Which seam each hook role is (the watchdog's attribution), and the image-seeded
        # databases with their owner role and seam (the watchdog's size checks).
        self._role_seams: dict[str, str] = {}
        self._clones: dict[str, tuple[str, str]] = {}
        self.template = f"{PREFIX}{run_id}_tmpl"
        self._counter = itertools.count(1)
        self._created: list[str] = []
        self._roles: dict[str, dict[str, HookRole]] = {}
        self._lock = threading.Lock()
        self._file_copy = False
        self._idle: list[Brain] = []
        # Drops that failed on the shared server (one line each): ``leftovers`` reports them.
        self.problems: list[str] = []
        # The connection budget counts ADMIN_CONNECTIONS: without this, every job of
        # a wide run would open one at once to create its brain.
        self._admin_slots = threading.BoundedSemaphore(ADMIN_CONNECTIONS)

    @contextlib.contextmanager
    def _admin(self, database: str = "postgres") -> Iterator[psycopg.Connection]:
        connect = self.guard.connect if self.guard else psycopg.connect
        with self._admin_slots, connect(self.server.database_url(database), autocommit=True) as conn:
            yield conn

    def prepare(self) -> None:
        spare, attempted = take_spare_template(self.server)
        with self._admin() as conn:
            roles.check_privileges(conn)
            if not roles.may_set_temp_file_limit(conn):
                self.temp_file_limit_kb = None  # the watchdog's per-seam bound is what is left (SECURITY-BRAIN.md)
            self._file_copy = conn.info.server_version >= 150000
            if spare is None:
                if attempted:
                    drop_database(conn, SPARE_TEMPLATE)  # what a failed one left: nobody's template
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.template)))
            else:
                conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                    sql.Identifier(spare), sql.Identifier(self.template)))
            self._remember(self.template)
            conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(self.template), sql.Literal(roles.label(self.run_id))))
            roles.lock_database(conn, self.template)
            if getattr(self.server, "private", False):
                # Our own server: its stock databases are no hook's business either.
                for stock in ("postgres", "template1"):
                    roles.lock_database(conn, stock)
        if spare is None:
            with self._admin(self.template) as conn:
                build_schema(conn)

    def _remember(self, name: str) -> None:
        with self._lock:
            self._created.append(name)

    def admin(self, database: str = "postgres") -> contextlib.AbstractContextManager[psycopg.Connection]:
        """A superuser connection within the run's admin budget (image-seeded brains use it too)."""
        return self._admin(database)

    def adopt(self, name: str, owned_roles: dict[str, HookRole], seam: str | None = None) -> None:
        """Drop ``name`` (and then its roles) with the run's own databases, at ``drop`` or ``close``.

        ``seam``: the image-seeded seam whose owner roles these are (watched for size and time)."""
        with self._lock:
            if name not in self._created:
                self._created.append(name)
            self._roles.setdefault(name, {}).update(owned_roles)
            if seam is not None:
                for role in owned_roles.values():
                    self._role_seams[role.name] = seam
                    self._clones[name] = (role.name, seam)

    def seam_of(self, role: str) -> str | None:
        """The seam a hook role of this run belongs to (None: not a hook's)."""
        with self._lock:
            return self._role_seams.get(role)

    def clones(self) -> list[tuple[str, str, str]]:
        """(database, owner role, seam) of every image-seeded database alive now."""
        with self._lock:
            return [(name, role, seam) for name, (role, seam) in self._clones.items()]

    def hook_url(self, seam: str, database: str, role: HookRole) -> str:
        """``role``'s URL for ``database`` as ``seam`` reaches it: through its gate when it has one."""
        url = self.server.role_url(database, role.name, role.password)
        directory = self.gates.directory(seam) if self.gates is not None else None
        return via_gate(url, directory) if directory else url

    def create(self) -> tuple[str, str]:
        """A fresh brain; returns (database name, the runner's URL).  Its hook roles are in ``hook_roles``."""
        name = f"{PREFIX}{self.run_id}_{next(self._counter)}"
        # FILE_COPY: for a tiny template a file copy is far cheaper than WAL-logging every block.
        strategy = sql.SQL(" STRATEGY FILE_COPY") if self._file_copy else sql.SQL("")
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}{}").format(
                sql.Identifier(name), sql.Identifier(self.template), strategy))
            self._remember(name)
            conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(name), sql.Literal(roles.label(self.run_id))))
            roles.lock_database(conn, name)
            with self._lock:
                self._roles[name] = {}
            made = roles.create_hook_roles(conn, name, self.seams, self.run_id,
                                           connection_limit=self.connection_limit,
                                           statement_timeout_ms=self.statement_timeout_ms,
                                           temp_file_limit_kb=self.temp_file_limit_kb)
            with self._lock:
                self._roles[name] = made
                self._role_seams.update({role.name: seam for seam, role in made.items()})
        return name, self.server.database_url(name)

    def hook_roles(self, name: str) -> dict[str, HookRole]:
        with self._lock:
            return dict(self._roles.get(name, {}))

    @contextlib.contextmanager
    def lease(self) -> Iterator[Brain]:
        """A brain that is empty on entry and emptied on exit.

        Databases are pooled: creating one costs a checkpoint (tens to hundreds of
        milliseconds), emptying one a few DELETEs.  Two leases held at the same time
        are always different databases, so concurrent fixtures never share a brain.
        Each pooled brain keeps one runner-side connection for seeding and scoring.
        """
        with self._lock:
            brain = self._idle.pop() if self._idle else None
        if brain is None:
            name, url = self.create()
            made = self.hook_roles(name)
            brain = Brain(name, url, psycopg.connect(url, autocommit=True),
                          {seam: self.hook_url(seam, name, r) for seam, r in made.items()})
            roles.grant_reads(brain.conn, list(made.values()))
        try:
            yield brain
        finally:
            try:
                reset_brain(brain.conn)
            except psycopg.Error:
                brain.conn.close()
                self.drop(brain.name)  # could not be emptied: never hand it out again
            else:
                with self._lock:
                    self._idle.append(brain)

    def drop(self, name: str) -> None:
        """Drop ``name`` and then its roles, past any one that fails.

        On a server the run shares with images, a failure is recorded in ``problems`` (the
        name stays registered, so ``close`` tries again and ``leftovers`` reports it); on a
        private server (``guard``) it raises, since that server goes with its seam anyway.
        """
        dropped = True
        with self._admin() as conn:
            try:
                drop_database(conn, name)
            except psycopg.Error as exc:
                if self.guard is not None:
                    raise
                dropped = False
                self._problem(f"database {name}: {first_line(exc)}")
            with self._lock:
                made = dict(self._roles.get(name, {})) if dropped else {}
            kept: dict[str, HookRole] = {}
            for seam, role in made.items():  # after the database: its grants went with it
                try:
                    roles.drop_role(conn, role.name)
                except psycopg.Error as exc:
                    if self.guard is not None:
                        raise
                    kept[seam] = role
                    self._problem(f"role {role.name}: {first_line(exc)}")
        with self._lock:
            for seam, role in made.items():
                if seam not in kept:
                    self._role_seams.pop(role.name, None)
            if dropped:
                self._clones.pop(name, None)
            if dropped and not kept:
                if name in self._created:
                    self._created.remove(name)
                self._roles.pop(name, None)
            elif dropped:
                self._roles[name] = kept

    def _problem(self, line: str) -> None:
        with self._lock:
            if line not in self.problems:
                self.problems.append(line)

    def close(self, drop: bool = True) -> list[str]:
        """Drop everything the run created, past every failure; returns what is still on the server.

        ``drop=False`` for a server deleted whole right after (the embedded one): only the runner's
        connections close, since dropping one database after another there is time for nothing."""
        with self._lock:
            for brain in self._idle:
                brain.conn.close()
            self._idle.clear()
            names = list(reversed(self._created))
        if not drop:
            return []
        for name in names:
            self.drop(name)
        return self.leftovers()

    def leftovers(self) -> list[str]:
        """Databases and roles of this run still on the server, read from the server itself (one
        line each, with why its drop failed when it did): what no drop of ours removed."""
        with self._admin() as conn:
            rows = conn.execute("SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database "
                                "ORDER BY 1").fetchall()
            mine = PREFIX + self.run_id + "_"
            found = [f"database {n}" for n, comment in rows
                     if n.startswith(mine) or n in self._created or roles.label_owner(comment)[0] == self.run_id]
            found += [f"role {n}" for n, rid, _ in roles.list_brainbench_roles(conn) if rid == self.run_id]
        why = {line.split(":", 1)[0]: line for line in self.problems}
        return [why.get(item, f"{item}: still there after the run dropped it") for item in found]


def drop_database(conn: psycopg.Connection, name: str) -> None:
    """Undo what could keep ``name`` from being dropped, then drop it and end its sessions.

    An image's role never owns a database of ours (``brain/image_brains.py``), so it cannot
    mark one a template.  A database that is one anyway (left by a run from before that rule,
    whose clone an image's role owned) is taken back first: ``DROP DATABASE`` refuses a
    template, and only its owner may clear the flag.  A runner that is no superuser (a
    ``--database-url`` role with CREATEROLE) makes itself a member of the role it created
    to take ownership over.
    """
    row = conn.execute("SELECT d.datistemplate, pg_get_userbyid(d.datdba), current_user, "
                       "r.rolsuper FROM pg_database d, pg_roles r WHERE d.datname = %s AND r.rolname = current_user",
                       (name,)).fetchone()
    if row is None:
        return
    template, owner, me, superuser = row
    ident = sql.Identifier(name)
    if template and owner != me:
        if not superuser:
            with contextlib.suppress(psycopg.Error):  # not ours to grant: ALTER … OWNER says why
                conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(sql.Identifier(owner)))
        conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO CURRENT_USER").format(ident))
    if template:
        conn.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE false").format(ident))
    try:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
    except psycopg.errors.InsufficientPrivilege:
        # FORCE checks its right to end every process in the database first, and an autovacuum
        # worker belongs to no role a non-superuser runner has rights over, so a clean run could
        # leave its template behind.  A plain DROP stops autovacuum itself and waits (5 s) for
        # anyone else; a session the runner truly may not end still fails it, and says so.
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(ident))


@dataclass
class Brain:
    """One leased brain database, the runner's connection to it, and each seam's own URL."""

    name: str
    url: str  # the runner's: never given to a hook
    conn: psycopg.Connection
    hook_urls: dict[str, str] = field(default_factory=dict)  # seam → URL with that seam's read-only role


# Every table a brain fills, children before parents; ``reset_brain`` empties them all, so a pooled
# database that served a memory-trust fixture (config, receipts, tombstones, …) is clean again.
BRAIN_TABLES = ("content_chunks", "page_versions", "page_aliases", "facts", "extract_rollups", "write_gate_receipts",
                "write_gate_holds", "trust_proposals", "fact_purges", "memory_requests", "memory_effects",
                "owner_files", "config", "pages")
_SEQUENCES = ("pages_id_seq", "facts_id_seq", "content_chunks_id_seq", "page_versions_id_seq",
              "write_gate_receipts_id_seq", "write_gate_holds_id_seq", "trust_proposals_id_seq", "fact_purges_id_seq",
              "memory_requests_id_seq", "memory_effects_id_seq")


def reset_brain(conn: psycopg.Connection) -> None:
    """Empty every table and restart identities, keeping only the ``default`` source (gbrain's resetTables)."""
    # DELETE, not TRUNCATE: on a handful of rows it is ~10x faster, because TRUNCATE
    # swaps every table's files; identities are restarted so fact ids start at 1 again.
    deletes = " ".join(f"DELETE FROM {t};" for t in BRAIN_TABLES)
    # setval(…, 1, false) is ALTER SEQUENCE … RESTART without its DDL lock and catalog write: a third of
    # the cost of the whole reset with ten sequences.
    restarts = "SELECT " + ", ".join(f"setval('{s}', 1, false)" for s in _SEQUENCES) + ";"
    with conn.transaction():
        conn.execute(f"{deletes} DELETE FROM sources WHERE id <> 'default'; {restarts}"
                     # Large objects are the one thing a read-only role can still create.
                     " SELECT lo_unlink(oid) FROM pg_largeobject_metadata")


def list_brainbench_databases(server: PostgresServer) -> list[tuple[str, str, Owner | None]]:
    """(database, run id, owner) of every database carrying a BrainBench comment."""
    with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT d.datname, shobj_description(d.oid, 'pg_database') FROM pg_database d "
            "WHERE d.datname LIKE %s ORDER BY d.datname",
            (PREFIX.replace("_", r"\_") + "%",),
        ).fetchall()
    out = []
    for name, comment in rows:
        run_id, owner = roles.label_owner(comment)
        if run_id is not None:
            out.append((name, run_id, owner))
    return out


@dataclass
class SweepReport:
    databases: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def sweep_databases(server: PostgresServer, run_id: str | None = None, *, include_live: bool = False,
                    keep_run_id: str | None = None) -> SweepReport:
    """Drop the databases and hook roles of ``run_id``, of every run (``include_live``), or of provably dead runs.

    A run on another machine, or one whose liveness cannot be proven dead from here,
    is left alone: dropping a live run's brain would corrupt its grades.
    """
    report = SweepReport()
    for name, rid, owner in list_brainbench_databases(server):
        if not swept(rid, owner, run_id=run_id, include_live=include_live, keep_run_id=keep_run_id):
            continue
        try:
            with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
                drop_database(conn, name)
            report.databases.append(name)
        except psycopg.Error as exc:
            report.errors.append(f"database {name}: {str(exc).strip().splitlines()[0]}")
    with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
        dropped, errors = roles.sweep_roles(conn, run_id=run_id, include_live=include_live, keep_run_id=keep_run_id)
    report.roles += dropped
    report.errors += errors
    return report
