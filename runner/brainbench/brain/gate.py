"""Each seam's door to the shared brain: a Unix-socket relay that caps its open connections.

A role's ``CONNECTION LIMIT`` is checked only once a login completes.  Before that, every connection
holds a server backend process for up to ``authentication_timeout``, whoever opened it: a hook that
opens a few hundred and never finishes the login leaves the server "sorry, too many clients already"
for every seam (seen: the honest seams' turns became ``infra_error``). So no hook reaches the server
itself.  Each seam gets a socket of its own (``<dir>/.s.PGSQL.5432``), and a relay passes what comes
in there to the server's socket, counting that seam's connections from ``accept`` on, pending logins
included.  Past its cap a new connection is answered with one PostgreSQL error (``53300``) and
closed, so the flood costs that seam alone.

The relay is a process of its own with one ``selectors`` loop: in the runner's process its
threads would wait for the GIL on every message (measured here: about twice the run's wall time).  It
exits when the runner does (its stdin closes) and reports each refusal on stdout as
``seam<TAB>what``.  Only the byte stream is relayed: authentication is still the
server's (scram-sha-256), and the relay never reads a password.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

SOCKET_NAME = ".s.PGSQL.5432"
_SOCKET_PATH_MAX = 107  # sizeof(sun_path) - 1 on Linux
_CHUNK = 1 << 16
_READY = "ready"
_UPSTREAM_TIMEOUT_S = 2.0

Breach = Callable[[str, str], None]  # (seam, what it did)


def _error_response(message: str) -> bytes:
    """A FATAL ErrorResponse as the server sends it (libpq shows ``message``)."""
    fields = b"SFATAL\0VFATAL\0C53300\0M" + message.encode() + b"\0\0"
    return b"E" + struct.pack("!I", 4 + len(fields)) + fields


# --- the relay process ---------------------------------------------------------------------


class _Side:
    """One socket of a relayed connection; ``pending`` is what waits to be written to it."""

    def __init__(self, sock: socket.socket, gate: _Gate) -> None:
        self.sock = sock
        self.gate = gate
        self.peer: _Side | None = None
        self.pending = b""
        self.closed = False


class _Gate:
    def __init__(self, seam: str, path: str, cap: int) -> None:
        self.seam = seam
        self.cap = cap
        self.open = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        # Container users are not the runner: anyone who reaches the directory may connect, as to
        # the server's own socket; what they can do there is their role's business.
        os.chmod(path, 0o777)
        self.listener.listen(128)
        self.listener.setblocking(False)


class _Relay:
    def __init__(self, upstream: str, gates: list[_Gate]) -> None:
        self.upstream = upstream
        self.sel = selectors.DefaultSelector()
        for gate in gates:
            self.sel.register(gate.listener, selectors.EVENT_READ, gate)
        self.sel.register(sys.stdin.fileno(), selectors.EVENT_READ, None)

    def run(self) -> None:
        while True:
            for key, mask in self.sel.select():
                data = key.data
                if data is None:
                    if not os.read(key.fd, 4096):
                        return  # the runner is gone
                elif isinstance(data, _Gate):
                    self._accept(data)
                else:
                    if mask & selectors.EVENT_WRITE:
                        self._flush(data)
                    if mask & selectors.EVENT_READ and not data.closed:
                        self._read(data)

    def _accept(self, gate: _Gate) -> None:
        while True:
            try:
                client, _ = gate.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # EMFILE and the like: the connection waits in the backlog
            if gate.open >= gate.cap:
                with contextlib.suppress(OSError):
                    client.setblocking(False)
                    client.send(_error_response(f"seam {gate.seam} holds its share of {gate.cap} brain connections"))
                client.close()
                print(f"{gate.seam}\tmore than {gate.cap} connections open at once (pending logins included)",
                      flush=True)
                continue
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            # A local socket answers at once or refuses; a stopped server with a full backlog would
            # block the one loop every seam's connections go through, so not for long.
            up.settimeout(_UPSTREAM_TIMEOUT_S)
            try:
                up.connect(self.upstream)
            except OSError:
                up.close()
                client.close()  # the hook sees what it would see with the server down
                continue
            gate.open += 1
            a, b = _Side(client, gate), _Side(up, gate)
            a.peer, b.peer = b, a
            for side in (a, b):
                side.sock.setblocking(False)
                self.sel.register(side.sock, selectors.EVENT_READ, side)

    def _read(self, side: _Side) -> None:
        try:
            data = side.sock.recv(_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(side)
            return
        peer = side.peer
        assert peer is not None
        peer.pending += data
        self._flush(peer)
        if peer.pending and not peer.closed:  # the peer reads slowly: stop reading until it drains
            self._resume(side)

    def _pause(self, side: _Side) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(side.sock)

    def _resume(self, side: _Side) -> None:
        """Watch ``side`` for what it can do now: read while its peer has nothing queued, write
        while it has."""
        if side.closed:
            return
        peer_full = side.peer is not None and bool(side.peer.pending)
        events = (0 if peer_full else selectors.EVENT_READ) | (selectors.EVENT_WRITE if side.pending else 0)
        if not events:
            self._pause(side)
            return
        try:
            self.sel.modify(side.sock, events, side)
        except KeyError:
            self.sel.register(side.sock, events, side)

    def _flush(self, side: _Side) -> None:
        if side.closed:
            return
        try:
            sent = side.sock.send(side.pending) if side.pending else 0
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self._close(side)
            return
        side.pending = side.pending[sent:]
        self._resume(side)
        peer = side.peer
        if not side.pending and peer is not None and not peer.closed:
            self._resume(peer)  # drained: read from the other side again

    def _close(self, side: _Side) -> None:
        if side.closed:
            return
        for one in (side, side.peer):
            if one is None or one.closed:
                continue
            one.closed = True
            self._pause(one)
            one.sock.close()
        side.gate.open -= 1


def _serve(spec: dict[str, object]) -> None:
    gates = [_Gate(str(g["seam"]), str(g["path"]), int(g["cap"])) for g in spec["gates"]]  # type: ignore[attr-defined]
    relay = _Relay(str(spec["upstream"]), gates)
    print(_READY, flush=True)
    relay.run()


# --- the runner's side ---------------------------------------------------------------------


class SeamGates:
    """A gate per seam in front of one server socket, each in its own directory (a container
    mounts its seam's directory alone, so it can reach no other seam's gate)."""

    def __init__(self, upstream: str, caps: Mapping[str, int], parent: Path | None, breach: Breach) -> None:
        self.caps = dict(caps)
        self.dirs: dict[str, Path] = {}
        self._made: list[Path] = []
        self._proc: subprocess.Popen[str] | None = None
        self._breach = breach
        try:
            if parent is None:  # a server of someone else's: a directory of our own (removed at close)
                parent = Path(tempfile.mkdtemp(prefix="bbgate-"))
                parent.chmod(0o711)
                self._made.append(parent)
            for index, seam in enumerate(self.caps):
                directory = parent / f"gate{index}"
                if len(str(directory / SOCKET_NAME).encode()) > _SOCKET_PATH_MAX:
                    directory = Path(tempfile.mkdtemp(prefix="bbgate-"))  # a long TMPDIR
                directory.mkdir(mode=0o711, exist_ok=True)
                directory.chmod(0o711)  # traversable, not listable, by the hook users of containers
                self._made.append(directory)
                self.dirs[seam] = directory
            spec = {"upstream": upstream, "gates": [
                {"seam": seam, "path": str(self.dirs[seam] / SOCKET_NAME), "cap": cap} for seam, cap in caps.items()]}
            self._proc = subprocess.Popen([sys.executable, "-m", "brainbench.brain.gate", json.dumps(spec)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert self._proc.stdout is not None
            first = self._proc.stdout.readline().strip()
            if first != _READY:
                raise OSError(f"the brain's seam gates did not start ({first or 'no output'})")
            threading.Thread(target=self._reports, name="brain-gate-reports", daemon=True).start()
        except BaseException:
            self.close()
            raise

    def _reports(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            seam, _, what = line.rstrip("\n").partition("\t")
            if seam in self.caps:
                self._breach(seam, what)

    def directory(self, seam: str) -> str | None:
        found = self.dirs.get(seam)
        return str(found) if found else None

    def close(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(OSError):
                assert self._proc.stdin is not None
                self._proc.stdin.close()  # the relay exits, and every relayed connection with it
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        for directory in reversed(self._made):
            shutil.rmtree(directory, ignore_errors=True)


def via_gate(url: str, directory: str) -> str:
    """``url`` (a libpq URL) aimed at the gate socket in ``directory``: no other host or port."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    query = [p for p in parts.query.split("&") if p and p.split("=", 1)[0] not in ("host", "hostaddr", "port")]
    query.append(f"host={quote(directory, safe='/')}")
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(query), parts.fragment))


def server_socket(url: str) -> str | None:
    """The Unix socket a libpq URL names, or None for a TCP server (no gate: docs/SECURITY-BRAIN.md)."""
    parts = urlsplit(url)
    params = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
    host = unquote(params.get("host", "")) or (parts.hostname or "")
    if not host.startswith("/"):
        return None
    port = params.get("port") or (str(parts.port) if parts.port else "5432")
    return f"{host}/.s.PGSQL.{port}"


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
