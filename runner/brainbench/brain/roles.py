"""Least-privilege login roles for hooks: read one brain database, nothing else.

A hook is untrusted code.  It never learns the runner's credentials; it gets a role
of its own per (brain database, seam):

* ``NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS`` and no
  membership in any role, so none of ``pg_read_server_files``,
  ``pg_write_server_files``, ``pg_execute_server_program`` or ``pg_monitor``: no
  ``COPY … PROGRAM``, no ``pg_read_file``/``pg_ls_dir``, no other session's queries;
* ``CONNECT`` on its one database only (``CONNECT`` and ``TEMPORARY`` are revoked from
  ``PUBLIC`` on every BrainBench database, the template included), ``USAGE`` on the
  schema and ``SELECT`` on the brain tables, nothing else: write-back is the runner's job;
* a ``CONNECTION LIMIT`` (a hook cannot starve the server of connections), a
  ``statement_timeout`` / ``idle_in_transaction_session_timeout`` (nor hold it busy; the
  role may lift these, so ``brain/watchdog.py`` enforces them from outside) and a
  ``temp_file_limit``, which only a superuser may change.

Why per pooled database and not per lease: databases are pooled and reused across
fixtures of one run, and two concurrent leases are always different databases, so a
role per pooled database already keeps a hook out of every brain it is not graded on
at that moment, at no per-fixture cost.  Why per seam: what one seam's hook does to
its connections (holding all of them, say) must not cost another seam a turn.

Every role carries a comment with the run id and the owner identity, like the
databases, so a sweep can drop the roles of provably dead runs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from brainbench.brain.server import ServerError
from brainbench.models import bounded_json
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner, swept

ROLE_PREFIX = "bb_"
# The brain tables a hook reads (spec §2.2), and what labels and withholds them (trust spec §3.5:
# the brain's trust settings, the write gate's receipts); ``extract_rollups`` is the runner's bookkeeping.
HOOK_TABLES = ("sources", "pages", "page_aliases", "facts", "config", "write_gate_receipts")
DEFAULT_CONNECTION_LIMIT = 8
DEFAULT_STATEMENT_TIMEOUT_MS = 30_000
# temp_file_limit (kB) per backend: superuser-only (PGC_SUSET), so a hook role cannot raise it.
DEFAULT_TEMP_FILE_LIMIT_KB = 65_536
_ATTRIBUTES = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"


class PrivilegeError(ServerError):
    """The runner's own role may not do what isolating hooks needs (external servers)."""


@dataclass(frozen=True)
class HookRole:
    name: str
    password: str


def label(run_id: str) -> str:
    """The comment on every database and role a run creates."""
    return json.dumps({"brainbench.run_id": run_id, "owner": json.loads(current_owner().label())})


def label_owner(text: str | None) -> tuple[str | None, Owner | None]:
    """(run id, owner) of a comment written by :func:`label`; (None, None) if it is not one."""
    try:
        doc = bounded_json.loads(text or "")
    except json.JSONDecodeError:
        return None, None
    if not isinstance(doc, dict) or not isinstance(doc.get("brainbench.run_id"), str):
        return None, None
    owner = doc.get("owner")
    return doc["brainbench.run_id"], Owner.from_label(json.dumps(owner)) if isinstance(owner, dict) else None


def role_name(database: str, seam: str) -> str:
    return f"{database}_{seam.replace('-', '_')}"


def check_privileges(conn: psycopg.Connection) -> None:
    """One clear line when the runner's role cannot create databases or the hooks' roles."""
    row = conn.execute("SELECT rolsuper, rolcreatedb, rolcreaterole, current_user FROM pg_roles "
                       "WHERE rolname = current_user").fetchone()
    if row is None:
        raise PrivilegeError("cannot read the runner's own role from pg_roles")
    superuser, createdb, createrole, user = row
    missing = [] if superuser else [n for n, ok in (("CREATEDB", createdb), ("CREATEROLE", createrole)) if not ok]
    if missing:
        raise PrivilegeError(
            f"database role {user!r} lacks {' and '.join(missing)}: BrainBench creates a database per fixture "
            f"and a read-only role per hook; grant them (ALTER ROLE {user} {' '.join(missing)}) or use the "
            "embedded server (no --database-url)")


def may_set_temp_file_limit(conn: psycopg.Connection) -> bool:
    """Whether the runner's role may set ``temp_file_limit`` on a hook role: a superuser, or (PostgreSQL
    15+) a role granted ``SET`` on it; a ``--database-url`` role with only CREATEDB CREATEROLE may not."""
    row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    if row is not None and row[0]:
        return True
    if conn.info.server_version < 150000:
        return False
    granted = conn.execute("SELECT has_parameter_privilege('temp_file_limit', 'SET')").fetchone()
    return bool(granted and granted[0])


def lock_database(admin: psycopg.Connection, database: str) -> None:
    """Nobody but the runner and the roles granted below may connect or create temp tables."""
    admin.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(database)))


def lock_schema(conn: psycopg.Connection) -> None:
    """In the template (copied into every brain): the schema is not PUBLIC's, whatever the server version."""
    conn.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")


def create_hook_roles(admin: psycopg.Connection, database: str, seams: Sequence[str], run_id: str, *,
                      connection_limit: int = DEFAULT_CONNECTION_LIMIT,
                      statement_timeout_ms: int = DEFAULT_STATEMENT_TIMEOUT_MS,
                      temp_file_limit_kb: int | None = DEFAULT_TEMP_FILE_LIMIT_KB) -> dict[str, HookRole]:
    """One login role per seam, allowed to connect to ``database`` only (``temp_file_limit_kb`` None:
    the runner's role may not set that superuser-only parameter, see :func:`may_set_temp_file_limit`)."""
    roles: dict[str, HookRole] = {}
    comment = label(run_id)
    for seam in seams:
        role = HookRole(role_name(database, seam), secrets.token_urlsafe(24))
        ident = sql.Identifier(role.name)
        admin.execute(sql.SQL(
            "CREATE ROLE {role} " + _ATTRIBUTES + " CONNECTION LIMIT {limit} PASSWORD {password};"
            " COMMENT ON ROLE {role} IS {comment};"
            " ALTER ROLE {role} SET statement_timeout = {timeout};"
            " ALTER ROLE {role} SET idle_in_transaction_session_timeout = {timeout};"
            "{temp}"
            " GRANT CONNECT ON DATABASE {db} TO {role}").format(
            role=ident, limit=sql.Literal(int(connection_limit)), password=sql.Literal(role.password),
            comment=sql.Literal(comment), timeout=sql.Literal(int(statement_timeout_ms)),
            temp=sql.SQL("") if temp_file_limit_kb is None else sql.SQL(
                " ALTER ROLE {} SET temp_file_limit = {};").format(ident, sql.Literal(int(temp_file_limit_kb))),
            db=sql.Identifier(database)))
        roles[seam] = role
    return roles


def grant_reads(conn: psycopg.Connection, roles: Sequence[HookRole]) -> None:
    """Inside the brain database: read the brain tables, nothing more."""
    if not roles:
        return
    names = sql.SQL(", ").join(sql.Identifier(r.name) for r in roles)
    tables = sql.SQL(", ").join(sql.Identifier(t) for t in HOOK_TABLES)
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {names}; GRANT SELECT ON {tables} TO {names}").format(
        names=names, tables=tables))


def drop_role(admin: psycopg.Connection, name: str) -> None:
    admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def list_brainbench_roles(admin: psycopg.Connection) -> list[tuple[str, str | None, Owner | None]]:
    """(role, run id, owner) of every role carrying a BrainBench comment."""
    rows = admin.execute(
        "SELECT rolname, shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname LIKE %s ORDER BY 1",
        (ROLE_PREFIX.replace("_", r"\_") + "%",)).fetchall()
    out = []
    for name, comment in rows:
        run_id, owner = label_owner(comment)
        if run_id is not None:
            out.append((name, run_id, owner))
    return out


def sweep_roles(admin: psycopg.Connection, *, run_id: str | None = None, include_live: bool = False,
                keep_run_id: str | None = None) -> tuple[list[str], list[str]]:
    """Drop the roles of ``run_id``, of every run (``include_live``), or of provably dead runs.

    Returns (dropped, errors); run after the databases are dropped (a role with grants
    in a live database cannot be dropped, and then stays until its database goes).
    """
    dropped, errors = [], []
    for name, rid, owner in list_brainbench_roles(admin):
        if not swept(rid, owner, run_id=run_id, include_live=include_live, keep_run_id=keep_run_id):
            continue
        try:
            drop_role(admin, name)
            dropped.append(name)
        except psycopg.Error as exc:
            errors.append(f"role {name}: {str(exc).strip().splitlines()[0]}")
    return dropped, errors
