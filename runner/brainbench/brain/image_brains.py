"""Databases of an image-seeded seam (seed contract v1): a template per run, a clone per fixture.

The image keeps its memory in a schema of its own, so its brain cannot be one of ours:

* template ``bb_<run>_<seam>_tpl``: the extensions the image declares are created by the
  runner (superuser: most are untrusted), then the image's ``init`` runs as a role that owns
  the template's ``public`` schema and nothing else;
* per fixture a clone of it, whose objects (all owned by the template's role) are handed
  to a role of that clone alone (``REASSIGN OWNED``), which may connect to the clone and
  create in it; the database itself stays the runner's, so no image can make it a template
  (undroppable), rename it or change its settings.
  The image's ``seed`` and then its hook log in with that role.

On a *private* server (``superuser=True``: a throw-away Postgres of that seam alone,
``executors/docker/private_brain.py``) there are no owner roles: ``init``, ``seed`` and the
hook get the server's superuser URL of their database, since what needs a private server
is a schema only a superuser can create (event triggers, row-level security).

Owner roles are hook roles (``brain/roles.py``): ``NOSUPERUSER NOCREATEDB NOCREATEROLE
NOINHERIT``, ``CONNECT`` on their own database only, a connection limit and a statement
timeout.  Every database and role is registered with the run's :class:`BrainDatabases`,
so it is dropped with the run's own, and carries the run's ownership label, so a sweep
finds what a dead run left.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from brainbench.brain import roles
from brainbench.brain.databases import PREFIX, BrainDatabases
from brainbench.brain.roles import HookRole
from brainbench.brain.server import ServerError, first_line
from brainbench.models.seed import refused_on_shared, shared_refusal

OWNER = "owner"  # the one "seam" whose role create_hook_roles makes: ``<database>_owner``


class ExtensionMissing(ServerError):
    """The brain server cannot create an extension an image declares (one line, exit 2)."""


class ExtensionRefused(ExtensionMissing):
    """An extension off the shared server's allowlist (``models/seed.py``): never created there."""


@dataclass(frozen=True)
class ImageBrain:
    """One fixture's clone: its name and the owner role's URL (given to seed and hook)."""

    name: str
    url: str


def seam_ident(seam: str) -> str:
    return seam.replace("-", "_")


class ImageSeededBrains:
    """The template and per-fixture clones of one image-seeded seam in one run."""

    def __init__(self, dbs: BrainDatabases, seam: str, image: str, extensions: Sequence[str] = (),
                 superuser: bool = False) -> None:
        self.dbs = dbs
        self.superuser = superuser
        self.seam = seam
        self.image = image
        self.extensions = tuple(extensions)
        self.base = f"{PREFIX}{dbs.run_id}_{seam_ident(seam)}"
        self.template = f"{self.base}_tpl"
        self._template_role: HookRole | None = None
        self._counter = itertools.count(1)
        self._prepared = False

    def _create(self, conn: psycopg.Connection, name: str, template: str | None) -> None:
        if template is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        else:
            strategy = sql.SQL(" STRATEGY FILE_COPY") if conn.info.server_version >= 150000 else sql.SQL("")
            conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}{}").format(
                sql.Identifier(name), sql.Identifier(template), strategy))
        self.dbs.adopt(name, {})
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
            sql.Identifier(name), sql.Literal(roles.label(self.dbs.run_id))))

    def _new_database(self, conn: psycopg.Connection, name: str, template: str | None = None) -> HookRole:
        """Create ``name`` (labelled, locked) and its owner role; both are the run's to drop."""
        self._create(conn, name, template)
        roles.lock_database(conn, name)
        made = roles.create_hook_roles(conn, name, [OWNER], self.dbs.run_id,
                                       connection_limit=self.dbs.connection_limit,
                                       statement_timeout_ms=self.dbs.statement_timeout_ms,
                                       temp_file_limit_kb=self.dbs.temp_file_limit_kb)
        self.dbs.adopt(name, made, seam=self.seam)
        return made[OWNER]

    def prepare_template(self) -> str:
        """Create the template with its extensions; returns the URL ``init`` runs with."""
        if not self.superuser and refused_on_shared(self.extensions):
            # The label check refuses this first; here so that no other path creates one either.
            raise ExtensionRefused(f"image {self.image} (seam {self.seam}) {shared_refusal(self.extensions)}")
        with self.dbs.admin() as conn:
            if self.superuser:
                self._create(conn, self.template, None)
            else:
                role = self._template_role = self._new_database(conn, self.template)
                # CREATE, not ownership: REASSIGN OWNED in a clone must never hand over the template itself.
                conn.execute(sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(
                    sql.Identifier(self.template), sql.Identifier(role.name)))
        self._prepared = True
        with self.dbs.admin(self.template) as conn:
            for extension in self.extensions:
                try:
                    conn.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(extension)))
                except psycopg.Error as exc:
                    raise ExtensionMissing(
                        f"image {self.image} (seam {self.seam}) needs Postgres extension {extension!r}, which the "
                        f"brain server cannot create: {first_line(exc)}; run against a server that has it, e.g. "
                        "brainbench/postgres-vector (docs/GBRAIN.md)") from exc
            if self.superuser:
                return self.dbs.server.database_url(self.template)
            roles.lock_schema(conn)
            conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(sql.Identifier(role.name)))
        return self.dbs.hook_url(self.seam, self.template, role)

    def seal_template(self) -> None:
        """After ``init``: nobody may connect to the template any more (a copy needs it idle)."""
        if not self._prepared:
            raise RuntimeError("prepare_template comes first")
        with self.dbs.admin() as conn:
            if self._template_role is not None:
                conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(
                    sql.Identifier(self.template), sql.Identifier(self._template_role.name)))
            # A process init left behind (a daemon, a pool) would make every CREATE … TEMPLATE fail.
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
                         " AND pid <> pg_backend_pid()", (self.template,))

    def clone(self) -> ImageBrain:
        """A fresh copy of the (initialised) template, owned by a role of its own."""
        if not self._prepared:
            raise RuntimeError("prepare_template comes first")
        name = f"{self.base}_{next(self._counter)}"
        if self._template_role is None:  # private server: its superuser, no owner role
            with self.dbs.admin() as conn:
                self._create(conn, name, self.template)
            return ImageBrain(name, self.dbs.server.database_url(name))
        with self.dbs.admin() as conn:
            owner = self._new_database(conn, name, self.template)
            # The runner stays the database's owner: an owner may mark it a template (which no
            # DROP DATABASE removes) or change its settings and connection limit.  The seam's role
            # gets what a seed and a hook use: connect, create schemas and temp tables.
            conn.execute(sql.SQL("GRANT CONNECT, CREATE, TEMPORARY ON DATABASE {} TO {}").format(
                sql.Identifier(name), sql.Identifier(owner.name)))
        with self.dbs.admin(name) as conn:
            conn.execute(sql.SQL("REASSIGN OWNED BY {} TO {}").format(
                sql.Identifier(self._template_role.name), sql.Identifier(owner.name)))
        return ImageBrain(name, self.dbs.hook_url(self.seam, name, owner))

    def over_share(self, name: str) -> str | None:
        """Why the image's database ``name`` (a clone, or the template) is past its share of the
        shared server, or None (also on a private server: that disk is the seam's own)."""
        watchdog = self.dbs.watchdog
        return watchdog.over_size(name) if watchdog is not None else None

    def drop(self, brain: ImageBrain) -> None:
        self.dbs.drop(brain.name)
