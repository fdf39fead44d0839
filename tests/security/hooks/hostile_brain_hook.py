"""A hostile hook: on every call it tries to break out of its brain role, then answers.

Every attack must fail.  The hook answers like an honest one (a context naming the
number of attacks repelled) only when each attack failed *and* its legitimate read
of its own brain worked; otherwise it exits 2 with the attacks that succeeded on
stderr, which the runner records as a fault.  With ``--report FILE`` (local mode) it
also appends one JSON line per call with every attack's outcome.

Arguments: ``--gold DIR`` (a path to try to read through the server), ``--report FILE``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg

MARKER_DIR = "/tmp"
# An attack is blocked only when the server refuses it for want of a privilege: a syntax error, a
# missing table or a dead server proves nothing about privileges, so those are reported as
# "NOT REFUSED" and fail the test.  42501 insufficient_privilege is what the statements provoke;
# a login is refused by authentication (28000 invalid authorization, 28P01 invalid password) or by
# the database's CONNECT privilege (42501).
SQL_REFUSALS = frozenset({"42501"})
LOGIN_REFUSALS = frozenset({"42501", "28000", "28P01"})
# A refused login reaches libpq as the server's FATAL message only (no SQLSTATE field on a failed
# connection), so logins are judged by the server's standard text for each refusal's SQLSTATE.
LOGIN_MESSAGES = (
    ("permission denied for database", "42501"),       # no CONNECT privilege
    ("password authentication failed", "28P01"),
    ("no pg_hba.conf entry", "28000"),
    ("pg_hba.conf rejects connection", "28000"),
    ("is not permitted to log in", "28000"),
    ("no password supplied", "28P01"),                 # libpq: the server asked for a password we lacked
    ("too many connections for role", "53300"),        # authenticated, then held to the role's limit
)


def _first_line(exc: BaseException, last: bool = False) -> str:
    lines = str(exc).strip().splitlines() or [""]
    return (lines[-1] if last else lines[0])[:160]


def refusal(exc: psycopg.Error, allowed: frozenset[str], *, login: bool = False) -> str:
    """The verdict on one failed attack: "blocked [SQLSTATE]: …" only for a privilege refusal."""
    code = exc.sqlstate
    if login and code is None:
        code = next((c for words, c in LOGIN_MESSAGES if words in str(exc)), None)
    text = _first_line(exc, last=login)
    if code in allowed:
        return f"blocked [{code}]: {text}"
    return f"NOT REFUSED [{code or 'no SQLSTATE'}]: {text}"


def _with_db(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database), parts.query, parts.fragment))


def _with_user(url: str, user: str, password: str | None) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    cred = quote(user) + (":" + quote(password) if password is not None else "")
    return urlunsplit((parts.scheme, f"{cred}@{host}", parts.path, parts.query, parts.fragment))


def _visible_pids() -> list[int]:
    """Every process of a container; on a shared host (local mode) only our ancestors, the runner among
    them: other users' processes on a developer machine are not the runner's to leak."""
    if os.environ.get("BB_HOSTILE_SCAN_ALL") == "1" or os.getpid() < 100:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    pids, pid = [], os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _past_the_gate(url: str) -> psycopg.Connection:
    """A login that gets past this seam's gate (brain/gate.py) to the server's own verdict.

    A concurrent call of the same hook may hold the seam's whole share for a moment (its
    connection-pool attack): the gate's refusal, or the server's "too many connections for role"
    (the role's CONNECTION LIMIT, taken by those same calls), then says nothing about the privilege
    under test, so the login is tried again until the server answers on that privilege.
    """
    for _ in range(100):
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=5)
        except psycopg.OperationalError as exc:
            if "holds its share" not in str(exc) and "too many connections for role" not in str(exc):
                raise
            time.sleep(0.1)
    return psycopg.connect(url, autocommit=True, connect_timeout=5)


class Attacks:
    def __init__(self, url: str, gold: str | None) -> None:
        self.url = url
        self.gold = gold
        self.conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
        self.own_db = self.conn.info.dbname
        self.results: dict[str, str] = {}  # attack → "blocked: …" or "SUCCEEDED: …"

    def _sql(self, name: str, statement: str, params: tuple[object, ...] = (), *, needs_rows: bool = False) -> None:
        """An attack that succeeds if the statement runs without an error (and, for a probe, finds rows)."""
        try:
            cur = self.conn.execute(statement, params)  # type: ignore[arg-type]
            rows = cur.fetchall() if cur.description else []
            if needs_rows and not rows:
                self.results[name] = "blocked: nothing visible"
            else:
                self.results[name] = f"SUCCEEDED: {str(rows)[:200]}"
        except psycopg.Error as exc:
            self.results[name] = refusal(exc, SQL_REFUSALS)
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            self.conn.execute("ROLLBACK")

    def _connect(self, name: str, url: str, *, own_seam_ok: bool = False) -> None:
        """Succeeds if the login works; with ``own_seam_ok`` a login as this same seam's role on another
        brain is not a breach: one seam's container serves its concurrent calls, and sees their URLs."""
        try:
            with _past_the_gate(url) as other:
                who = other.execute("SELECT current_user, current_database(), "
                                    "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)").fetchone()
            if own_seam_ok and who is not None and self._same_seam(str(who[0]), str(who[1])) and not who[2]:
                self.results[name] = f"blocked: only this seam's own role on {who[1]}"
            else:
                self.results[name] = f"SUCCEEDED: connected as {who}"
        except psycopg.Error as exc:
            # This seam's own role (own_seam_ok) is held to its connection limit: 53300 is its refusal.
            own = own_seam_ok and self._same_seam(unquote(urlsplit(url).username or ""),
                                                  unquote(urlsplit(url).path.lstrip("/")))
            self.results[name] = refusal(exc, LOGIN_REFUSALS | {"53300"} if own else LOGIN_REFUSALS, login=True)

    def _same_seam(self, role: str, database: str) -> bool:
        own_role = str(self.conn.info.user)
        seam = own_role[len(self.own_db) + 1:]
        return bool(seam) and role == f"{database}_{seam}"

    def superuser(self) -> None:
        self._sql("create superuser role", "CREATE ROLE bb_evil SUPERUSER LOGIN PASSWORD 'x'")
        self._sql("alter own role superuser", "ALTER ROLE CURRENT_USER SUPERUSER")
        self._sql("set role postgres", "SET ROLE postgres")
        self._sql("alter system", "ALTER SYSTEM SET log_statement = 'all'")
        self._sql("read password hashes", "SELECT rolname, rolpassword FROM pg_authid")
        self._sql("create database", "CREATE DATABASE bb_evil_db")
        self._sql("create extension dblink", "CREATE EXTENSION dblink")

    def host_programs(self) -> None:
        marker = f"{MARKER_DIR}/bb-hostile-{os.getpid()}"
        self._sql("copy to program", f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'")
        self._sql("copy from program", "COPY pages (slug) FROM PROGRAM 'id'")
        self._sql("copy to server file", "COPY (SELECT 1) TO '/tmp/bb-hostile-copy'")
        if os.path.exists(marker):
            self.results["copy to program (marker file)"] = f"SUCCEEDED: {marker} exists"

    def server_files(self) -> None:
        gold = self.gold or "/"
        self._sql("pg_ls_dir gold", "SELECT pg_ls_dir(%s)", (gold,))
        self._sql("pg_ls_dir data dir", "SELECT pg_ls_dir('.')")
        self._sql("pg_read_file passwd", "SELECT pg_read_file('/etc/passwd')")
        self._sql("pg_read_binary_file", "SELECT pg_read_binary_file('global/pg_control')")
        self._sql("copy from server file", "COPY pages (slug) FROM '/etc/hostname'")
        self._sql("lo_import", "SELECT lo_import('/etc/passwd')")
        self._sql("read server config", "SELECT setting FROM pg_settings WHERE name = 'data_directory' "
                                        "AND setting IS NOT NULL AND setting <> ''", needs_rows=True)
        if self.gold and os.path.isdir(self.gold):
            return  # local mode can read files anyway (documented); only the server route is under test
        for name in ("gold", "fixtures"):
            self._sql(f"pg_stat_file {name}", "SELECT pg_stat_file(%s)", (f"{gold}/../{name}",))

    def writes_in_own_database(self) -> None:
        self._sql("insert page", "INSERT INTO pages (source_id, slug, type, title, compiled_truth, content_hash) "
                                 "VALUES ('default', 'evil', 'x', 'evil', 'evil', 'x')")
        self._sql("update pages", "UPDATE pages SET compiled_truth = 'evil'")
        self._sql("delete facts", "DELETE FROM facts")
        self._sql("truncate aliases", "TRUNCATE page_aliases")
        self._sql("insert source", "INSERT INTO sources (id, name) VALUES ('evil', 'evil')")
        self._sql("create table", "CREATE TABLE evil (x int)")
        self._sql("create temp table", "CREATE TEMP TABLE evil_tmp (x int)")
        self._sql("create schema", "CREATE SCHEMA evil")
        self._sql("create function", "CREATE FUNCTION public.evil() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        self._sql("lock pages exclusively", "BEGIN; LOCK TABLE pages IN ACCESS EXCLUSIVE MODE; COMMIT")
        self._sql("select for update", "SELECT 1 FROM pages FOR UPDATE")
        self._sql("nextval on a brain sequence", "SELECT nextval('pages_id_seq')")
        self._sql("read write-back bookkeeping", "SELECT * FROM extract_rollups")
        # Without the grant option GRANT only warns ("no privileges were granted"): judge by the ACL.
        with contextlib.suppress(psycopg.Error):
            self.conn.execute("GRANT SELECT ON pages TO PUBLIC")
        self._sql("grant to public", "SELECT relacl FROM pg_class WHERE relname = 'pages' "
                                     "AND array_to_string(relacl, ',') ~ '(^|,)=r'", needs_rows=True)

    def other_databases(self) -> None:
        names = [r[0] for r in self.conn.execute("SELECT datname FROM pg_database WHERE datallowconn")]
        for name in names:
            if name != self.own_db:
                self._connect(f"connect to {name}", _with_db(self.url, name))
        roles = [r[0] for r in self.conn.execute(
            "SELECT rolname FROM pg_roles WHERE rolname <> current_user AND rolcanlogin")]
        password = urlsplit(self.url).password
        for role in roles:
            self._connect(f"log in as {role} with own password", _with_user(self.url, role, password))
            self._connect(f"log in as {role} without password", _with_user(self.url, role, None))

    def other_sessions(self) -> None:
        self._sql("read other sessions' queries",
                  "SELECT query FROM pg_stat_activity WHERE usename IS DISTINCT FROM current_user "
                  "AND query IS NOT NULL AND query NOT IN ('', '<insufficient privilege>')", needs_rows=True)
        pids = [r[0] for r in self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE usename IS DISTINCT FROM current_user AND pid IS NOT NULL")]
        for pid in pids[:3]:
            try:
                ok = self.conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
                self.results[f"terminate backend {pid}"] = "SUCCEEDED" if ok and ok[0] else "blocked: false"
            except psycopg.Error as exc:
                self.results[f"terminate backend {pid}"] = refusal(exc, SQL_REFUSALS)

    def credentials(self) -> None:
        """Any database URL or password visible in our environment or any process we can read."""
        texts = [json.dumps(dict(os.environ))]
        for pid in _visible_pids():
            if pid != os.getpid():
                for what in ("environ", "cmdline"):
                    with contextlib.suppress(OSError):
                        with open(f"/proc/{pid}/{what}", "rb") as fh:
                            texts.append(fh.read(1 << 20).decode(errors="replace").replace("\0", " "))
        found = set()
        for text in texts:
            found.update(re.findall(r"postgres(?:ql)?://[^\s\"'\\]+", text))
        for i, url in enumerate(sorted(found - {self.url})):
            self._connect(f"harvested url {i}", url, own_seam_ok=True)
            with contextlib.suppress(Exception):
                self._connect(f"harvested url {i} to postgres db", _with_db(url, "postgres"))
        for key in ("PGPASSWORD", "PGUSER", "DATABASE_URL", "PGPASSFILE"):
            if key in os.environ:
                self.results[f"environment has {key}"] = f"SUCCEEDED: {key} visible"
        self._connect("superuser without password", _with_user(_with_db(self.url, "postgres"), "postgres", None))

    def connection_pool(self) -> None:
        """Take as many connections as the server gives us; more than our role's limit is a breach."""
        limit = self.conn.execute("SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        held: list[psycopg.Connection] = []
        stopped = None
        try:
            gate = False
            for _ in range(40):
                try:
                    held.append(psycopg.connect(self.url, autocommit=True, connect_timeout=5))
                except psycopg.Error as exc:
                    # The seam's gate (brain/gate.py) may stop it first: its other calls hold the rest.
                    gate = "holds its share" in str(exc)
                    stopped = exc
                    break
            # Only the role's limit (53300) may end the grab; never stopping is judged by the limit below.
            # The gate's own refusal is 53300 too, in its own words (brain/gate.py).
            verdict = (refusal(stopped, frozenset({"53300"}), login=True) if stopped is not None and not gate
                       else "blocked")
            if not verdict.startswith("blocked"):
                self.results["connections stopped by the role's limit"] = verdict
            total = len(held) + 1
            breached = limit < 0 or total > limit
            self.results["exceed connection limit"] = (
                f"SUCCEEDED: {total} connections (limit {limit})" if breached
                else f"blocked by its seam's gate: {total} of limit {limit}" if gate
                else f"blocked: {total} of limit {limit}")
            time.sleep(0.2)  # hold them while other fixtures run
        finally:
            for conn in held:
                conn.close()

    def legit_read(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gold", default=os.environ.get("BB_GOLD"))
    parser.add_argument("--report")
    args = parser.parse_args()
    sys.stdin.read()
    url = os.environ.get("BRAINBENCH_DATABASE_URL", "")
    attacks = Attacks(url, args.gold)
    steps: list[Callable[[], None]] = [attacks.superuser, attacks.host_programs, attacks.server_files,
                                       attacks.writes_in_own_database, attacks.other_databases,
                                       attacks.other_sessions, attacks.credentials, attacks.connection_pool]
    for step in steps:
        step()
    pages = attacks.legit_read()
    breaches = {k: v for k, v in attacks.results.items() if not v.startswith("blocked")}
    if args.report:
        with open(args.report, "a") as fh:
            fh.write(json.dumps({"pages": pages, "results": attacks.results}) + "\n")
    if breaches:
        sys.stderr.write("BREACH " + json.dumps(breaches)[:3000] + "\n")
        return 2
    context = f"hostile hook: {len(attacks.results)} attacks repelled, {pages} pages readable"
    sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                        "additionalContext": context}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
