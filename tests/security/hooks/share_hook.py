"""A hook that tries to take more than its seam's share of the shared brain, then answers.

``--attack`` picks what it does on its first ``--times`` prompts (SessionStart and later
prompts just answer): ``flood`` opens 400 connections to its database socket and
never logs in; ``temp`` tries to raise ``temp_file_limit``, runs one sort past it, then holds
sorted cursors on three connections; ``timeout`` lifts ``statement_timeout`` (and the idle
one) and runs a statement that catches every cancel, then idles in a transaction.  Every
outcome goes to ``--report FILE`` as one JSON line per attacking call.  It answers (a context
naming the pages it read) when its own brain is still readable, else exits 1.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import socket
import sys
import time
from urllib.parse import parse_qs, urlsplit

import psycopg

# More than the postmaster's children (2 × max_connections): enough to starve a server without a gate.
FLOOD = 400


def _socket_path(url: str) -> str:
    host = parse_qs(urlsplit(url).query)["host"][0]
    return os.path.join(host, ".s.PGSQL.5432")


def _open(url: str) -> socket.socket:
    """One connection to this seam's gate that never logs in (OSError when it cannot connect)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(_socket_path(url))
    except OSError:
        sock.close()
        raise
    return sock


def flood(url: str) -> dict[str, object]:
    """Connections that never log in: how many the gate held open, and what the others heard."""
    held: list[socket.socket] = []
    try:
        # The previous call's flood (or a concurrent call's read) may still hold the share while the
        # gate takes in their closes: wait until it lets one in, so this flood meets the whole share.
        deadline = time.monotonic() + 10
        while not held and time.monotonic() < deadline:
            probe = _open(url)
            if select.select([probe], [], [], 0.2)[0]:  # refused at once: the share is still taken
                probe.close()
            else:
                held.append(probe)
        held += [_open(url) for _ in range(FLOOD - len(held))]
    except OSError as exc:
        return {"connect_error": str(exc)}
    time.sleep(8.0)  # the gate has accepted (and counted, or refused) every one; other seams' calls (and their
    # retries, executors/retry.py) run meanwhile
    refused, messages = 0, set()
    for sock in held:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            data = sock.recv(4096)
            refused += 1
            if data.startswith(b"E"):
                messages.add(data[5:].split(b"M", 1)[-1].split(b"\0", 1)[0].decode(errors="replace"))
    try:  # a real login while the flood holds the seam's share
        with psycopg.connect(url, connect_timeout=5) as conn:
            login = f"got in: {conn.execute('SELECT 1').fetchone()}"
    except psycopg.Error as exc:
        login = f"refused: {str(exc).strip().splitlines()[-1]}"
    open_now = len(held) - refused
    for sock in held:
        sock.close()
    # Every other socket it can name next to its own: other seams' gates and the server's.
    gate_dir = os.path.dirname(_socket_path(url))
    reach = {}
    for name in ("gate0", "gate1", "gate2", "socket"):
        path = os.path.join(os.path.dirname(gate_dir), name, ".s.PGSQL.5432")
        if os.path.dirname(path) == gate_dir:
            continue
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            reach[name] = "connected"
        except OSError as exc:
            reach[name] = f"blocked: {exc.strerror}"
        finally:
            probe.close()
    return {"held": open_now, "refused": refused, "messages": sorted(messages), "login": login, "reach": reach}


def temp(url: str) -> dict[str, object]:
    out: dict[str, object] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute("SET temp_file_limit = '100GB'")
            out["raise_limit"] = "allowed"
        except psycopg.Error as exc:
            out["raise_limit"] = f"refused: {type(exc).__name__}"
        conn.execute("SET work_mem = '64kB'")
        try:
            conn.execute("SELECT count(*) FROM (SELECT md5(g::text) FROM generate_series(1, 400000) g ORDER BY 1) s")
            out["big_sort"] = "ran"
        except psycopg.Error as exc:
            out["big_sort"] = f"refused: {str(exc).strip().splitlines()[0]}"
    # Under the per-backend limit each (~1.7 MiB of 2), over the seam's share (3 MiB) by two: cursors keep the files.
    conns = [psycopg.connect(url) for _ in range(3)]
    try:
        for conn in conns:
            try:  # the runner may end the earlier ones meanwhile
                conn.execute("SET work_mem = '64kB'")
                conn.execute("DECLARE c CURSOR FOR SELECT md5(g::text) FROM generate_series(1, 30000) g ORDER BY 1")
                conn.execute("FETCH 1 FROM c")
            except psycopg.Error:
                pass
        time.sleep(2.5)
        alive = 0
        for conn in conns:
            try:
                conn.execute("FETCH 1 FROM c")
                alive += 1
            except psycopg.Error:
                pass
        out["cursors_alive"] = alive
    finally:
        for conn in conns:
            conn.close()
    return out


def timeout(url: str) -> dict[str, object]:
    out: dict[str, object] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        started = time.monotonic()
        try:  # a cancel is caught and ignored: only a terminate ends it
            conn.execute("DO $$ BEGIN LOOP BEGIN PERFORM pg_sleep(60); EXCEPTION WHEN query_canceled THEN "
                         "NULL; END; END LOOP; END $$")
            out["statement"] = "finished"
        except psycopg.Error as exc:
            out["statement"] = f"ended: {str(exc).strip().splitlines()[0]}"
        out["statement_s"] = round(time.monotonic() - started, 1)
    conn = psycopg.connect(url)  # no ``with``: its commit on exit would fail once the runner ended it
    try:
        conn.execute("SET idle_in_transaction_session_timeout = 0")
        conn.execute("SELECT 1")  # a transaction stays open
        started = time.monotonic()
        ended = False
        while time.monotonic() - started < 20 and not ended:
            time.sleep(0.5)
            try:  # the socket closes when the backend is ended
                ended = conn.pgconn.socket < 0 or bool(select.select([conn.pgconn.socket], [], [], 0)[0])
            except (OSError, ValueError):
                ended = True
        out["idle_s"] = round(time.monotonic() - started, 1)
        out["idle"] = "ended" if ended else "kept"
    finally:
        conn.close()
    return out


ATTACKS = {"flood": flood, "temp": temp, "timeout": timeout}


def _claim_turn(report: str, times: int) -> bool:
    """Whether this call is among the first ``times`` prompts (calls run concurrently)."""
    with open(report + ".count", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        done = len(fh.read())
        if done >= times:
            return False
        fh.write("x")
        return True


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attack", choices=sorted(ATTACKS), required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--times", type=int, default=2)
    args = parser.parse_args()
    event = json.loads(sys.stdin.read() or "{}").get("hook_event_name")
    if event != "UserPromptSubmit":
        return 0
    url = os.environ["BRAINBENCH_DATABASE_URL"]
    # ``--report -``: the report goes to stderr (the run's trace keeps it), its bookkeeping to /tmp.
    state = "/tmp/share-hook" if args.report == "-" else args.report
    report = ""
    if _claim_turn(state, args.times):
        with open(state + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one attack at a time: each meets the whole share
            result = ATTACKS[args.attack](url)
        if args.report == "-":
            report = "share-report: " + json.dumps(result, separators=(",", ":")) + "\n"
        else:
            with open(args.report, "a") as fh:
                fh.write(json.dumps(result) + "\n")
    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            pages = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
    except psycopg.Error as exc:
        # The next call's attack may already hold the share: this call's own fault.  The report
        # goes last, so the trace's stderr tail (its last 600 characters) keeps it whole.
        sys.stderr.write(f"own brain unreadable: {exc}\n" + report)
        return 1
    sys.stderr.write(report)
    context = f"share hook: {pages} pages readable"
    sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                        "additionalContext": context}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
