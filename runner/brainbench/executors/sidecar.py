"""The sidecar provider: each seam is a call server already running in a container of its own.

In a Kubernetes pod every seam image runs as a native sidecar with the call server in
listen mode (``call-server --listen 127.0.0.1:PORT --token-file FILE -- HOOK…``,
deploy/kubernetes/shard-job-images.yaml); the runner container connects to each over the
pod's loopback.  ``start`` connects and authenticates (``call_server.py``'s handshake: each side
proves it holds the seam's token without sending it, the server first, so the runner proves
nothing to whoever holds the port), so the seam is warm before any graded call.  Every call is one request
line: a fresh hook process in the sidecar, exec semantics as real hooks run, with the
transcript and cwd the call names carried in the request (``call_files``): a sidecar
sees none of the runner's files, so the gold and the other seams' transcripts stay out
of its reach.

What a pod cannot isolate (docs/SCALING.md): its containers share one network namespace,
so a hook can connect to any loopback port, or bind a dead call server's; the call servers
refuse every connection that cannot prove the seam's token, the runner answers no peer that
cannot prove it either, and the brain's superuser password is in neither the seams'
environment nor their files (each hook gets its own role's URL, as with every provider).
A call server that dies during the run is that seam's failure: its connection is tried again
once (a restarted sidecar is the same server, token and all), and if that fails the seam is
dead for the rest of the run, each of its calls an ``adapter_crash`` at once, never served
by whatever took its port.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import secrets
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import anyio

from .base import Executor, ExecutorError, HookCall, HookOutcome, RunContext, SeamLaunch, SeamProcess, stop_all
from .call_files import files_for
from .call_protocol import CallChannel, CallServerError
from .call_server import CLIENT_ROLE, SERVER_ROLE, nonce_ok, proof
from .limits import LineSplitter

log = logging.getLogger(__name__)

# A sidecar's server may still be starting when the runner does (a pod starts its
# sidecars in order but does not wait for them to listen): connection refused is retried.
CONNECT_TIMEOUT_S = 60.0
HANDSHAKE_TIMEOUT_S = 10.0
# A listening call server serves one client at a time and says "busy" to others; right
# after a client hangs up it is busy for as long as it takes to kill that client's calls.
BUSY_WAIT_S = 10.0
# After the seam started: how long its call server has to be back (a restarted sidecar) before the seam is dead.
RECONNECT_TIMEOUT_S = 15.0
# The first attempt's wait for the hello's answer, doubled at each silent attempt up to HANDSHAKE_TIMEOUT_S:
# a connection made while the old server was still dying can be taken and then never answered, and must
# not use up the whole deadline.
FIRST_HELLO_WAIT_S = 1.0


def parse_endpoints(items: Sequence[str]) -> dict[str, tuple[str, int]]:
    """``SEAM=HOST:PORT`` items (validated by the options model) as {seam: (host, port)}."""
    out: dict[str, tuple[str, int]] = {}
    for item in items:
        seam, _, address = item.partition("=")
        host, _, port = address.rpartition(":")
        out[seam] = (host.strip("[]"), int(port))
    return out


class _NobodyBehind(ConnectionError):
    """The port took the connection but nobody answered it: closed without a byte, as a forwarder
    does (Docker's published port, ``kubectl port-forward``) while nothing listens behind it yet, or
    silent (taken by a server that was dying).  Retried, as connection refused is, never taken for
    a peer that failed the handshake."""


class TcpCallChannel(CallChannel):
    """The call server protocol over one TCP connection to a listening call server."""

    def __init__(self, seam: str, host: str, port: int) -> None:
        super().__init__()
        self.seam, self.host, self.port = seam, host, port
        self.sock: socket.socket | None = None
        self.heard = False  # any byte from the peer on this connection
        self._send_lock = threading.Lock()

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    def connect(self, token: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        busy_until: float | None = None
        while True:
            answer = self._handshake(token, deadline)
            if answer.get("ready"):
                return
            error = str(answer.get("error") or "no answer to the handshake")
            # A server still killing the calls of a client that just hung up (this runner's
            # own dropped connection, or the run before) says busy for a moment: wait it out.
            now = time.monotonic()
            busy_until = busy_until or min(deadline, now + BUSY_WAIT_S)
            if not error.startswith("busy") or now >= busy_until:
                raise CallServerError(f"{self.seam}: the call server at {self.where} refused the runner: {error}")
            time.sleep(0.1)

    def _handshake(self, token: str, deadline: float) -> dict[str, object]:
        hello_wait = FIRST_HELLO_WAIT_S
        while True:
            try:
                return self._attempt(token, hello_wait)
            except OSError as exc:  # _NobodyBehind among them
                if time.monotonic() >= deadline:
                    raise CallServerError(f"{self.seam}: no call server answers at {self.where} "
                                          f"(--seam-endpoint {self.seam}=HOST:PORT): {exc}") from exc
                hello_wait = min(hello_wait * 2, HANDSHAKE_TIMEOUT_S)
                time.sleep(0.2)

    def _attempt(self, token: str, hello_wait: float) -> dict[str, object]:
        """One connection and handshake; ``_NobodyBehind`` when the peer said nothing at all."""
        self.sock = socket.create_connection((self.host, self.port), timeout=HANDSHAKE_TIMEOUT_S)
        self.heard = False
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.alive = True
        reader = threading.Thread(target=self._read, args=(self.sock,), name=f"bb-sidecar-{self.seam}", daemon=True)
        reader.start()
        ready = False
        try:
            answer = self._authenticate(token.encode("utf-8"), hello_wait)
            ready = bool(answer.get("ready"))
            return answer
        finally:
            if not ready:
                self.close()
                reader.join(HANDSHAKE_TIMEOUT_S)  # its end must not mark the next attempt's connection dead

    def _authenticate(self, token: bytes, hello_wait: float) -> dict[str, object]:
        """call_server.py's handshake, client side: the answer to our proof ({"ready": ...} or an error).
        Raises when the peer cannot prove it holds the token: then it has heard nothing but a nonce."""
        nonce = secrets.token_hex(16)
        challenge = self.hello(hello_wait, nonce=nonce)
        if not challenge and not self.heard:
            raise _NobodyBehind("the connection was closed before any answer" if not self.alive else
                                f"nothing answered the hello within {hello_wait:g} s")
        if challenge.get("error"):
            return challenge
        server_nonce, shown = challenge.get("challenge"), challenge.get("proof")
        genuine = nonce_ok(server_nonce) and isinstance(shown, str) and hmac.compare_digest(
            shown.encode("utf-8", "surrogateescape"), proof(token, SERVER_ROLE, nonce, str(server_nonce)).encode())
        if not genuine:
            raise CallServerError(
                f"{self.seam}: the peer at {self.where} is not {self.seam}'s call server: it cannot prove it holds "
                "the seam's token (a wrong --seam-tokens file, or another process on that port)")
        return self.ask({"auth": proof(token, CLIENT_ROLE, nonce, str(server_nonce))}, HANDSHAKE_TIMEOUT_S)

    def send_line(self, line: bytes) -> None:
        if self.sock is None:
            raise CallServerError(f"{self.seam}: not connected")
        with self._send_lock:
            self.sock.sendall(line)

    def _read(self, sock: socket.socket) -> None:
        lines = LineSplitter()
        try:
            while chunk := sock.recv(65536):
                self.heard = True
                for line in lines.feed(chunk):
                    self.deliver(line)
        except Exception as exc:  # closed under us, or a line over the cap: either way it is done
            log.debug("sidecar %s: reader ended: %s", self.seam, exc)
        finally:
            self.reader_ended()

    def close(self) -> None:
        """Hang up: the server kills whatever this connection still had running."""
        self.alive = False
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self.sock.close()


class SeamDead(CallServerError):
    """The seam's call server died during the run and did not come back: that seam's failure."""


class SidecarSeam(SeamProcess):
    mode = "exec"

    def __init__(self, launch: SeamLaunch, host: str, port: int, token: str, grace_s: float) -> None:
        self.launch = launch
        self.seam = launch.seam
        self.host, self.port, self.token = host, port, token
        self.grace_s = grace_s
        self.channel: TcpCallChannel | None = None
        # Why the seam's call server is gone for good (set once a reconnect failed).
        self.dead: str | None = None
        self._lock = threading.Lock()

    def connect(self, timeout_s: float = CONNECT_TIMEOUT_S) -> TcpCallChannel:
        channel = TcpCallChannel(self.seam, self.host, self.port)
        channel.connect(self.token, timeout_s)
        self.channel = channel
        return channel

    def _live(self) -> TcpCallChannel:
        """The connection, made again once if it dropped since the last call; raises ``SeamDead``
        when the server is not back within ``RECONNECT_TIMEOUT_S`` (or something else holds its port)."""
        with self._lock:
            if self.dead is not None:
                raise SeamDead(self.dead)
            if self.channel is not None and self.channel.alive:
                return self.channel
            if self.channel is not None:
                self.channel.close()
            try:
                return self.connect(RECONNECT_TIMEOUT_S)
            except CallServerError as exc:
                self.dead = f"the call server of {self.seam} died during the run and did not come back ({exc})"
                log.warning("sidecar: %s", self.dead)
                raise SeamDead(self.dead) from None

    def _drop(self, channel: TcpCallChannel) -> None:
        with self._lock:
            if self.channel is channel:
                self.channel = None
                channel.close()

    async def call(self, call: HookCall) -> HookOutcome:
        return await anyio.to_thread.run_sync(self._call, call, abandon_on_cancel=True)

    def _call(self, call: HookCall) -> HookOutcome:
        started = time.perf_counter()
        channel: TcpCallChannel | None = None
        try:
            channel = self._live()
            files = files_for(call.payload, self.launch.shared_paths)
            return channel.run(call, {**self.launch.env, **call.env}, self.grace_s, self.seam, files)
        except SeamDead as exc:
            # The seam's own failure, graded once (a crash, as a dead stream process is): never retried.
            return HookOutcome(1, b"", f"{exc}\n".encode(), False, (time.perf_counter() - started) * 1000)
        except (CallServerError, OSError, ValueError, KeyError, TypeError) as exc:
            # An infrastructure fault, never the hook's grade; the orchestrator retries the call.
            if channel is not None:
                self._drop(channel)
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - started) * 1000,
                               infra_error=f"{type(exc).__name__}: {exc}")

    async def stop(self) -> None:
        with self._lock:
            if self.channel is not None:
                self.channel.close()
                self.channel = None


class SidecarExecutor(Executor):
    """Seams as call servers in containers of their own (``--executor sidecar``)."""

    name: ClassVar[str] = "sidecar"

    def __init__(self, endpoints: Mapping[str, tuple[str, int]], token_dir: Path | None) -> None:
        self.endpoints = dict(endpoints)
        self.token_dir = token_dir
        self.context: RunContext | None = None
        self._seams: list[SidecarSeam] = []

    async def prepare(self, context: RunContext) -> None:
        self.context = context

    def token_of(self, seam: str) -> str:
        if self.token_dir is None:
            raise ExecutorError("--executor sidecar needs --seam-tokens DIR (a file per seam holding its "
                                "call server's token)")
        path = Path(self.token_dir) / seam
        try:
            token = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ExecutorError(f"{path}: cannot read the {seam} call server's token: {exc}") from None
        if not token:
            raise ExecutorError(f"{path}: the {seam} call server's token is empty")
        return token

    async def start(self, launch: SeamLaunch) -> SeamProcess:
        if launch.image:
            raise ExecutorError(f"{launch.seam}: --image has no effect with --executor sidecar (the seam's "
                                "image is the sidecar's); set `kind` in --seams to record a production image")
        endpoint = self.endpoints.get(launch.seam)
        if endpoint is None:
            raise ExecutorError(f"{launch.seam}: --executor sidecar needs --seam-endpoint {launch.seam}=HOST:PORT "
                                "(where that seam's call server listens)")
        grace = self.context.limits.call_grace_s if self.context else 5.0
        seam = SidecarSeam(launch, *endpoint, self.token_of(launch.seam), grace)
        try:
            await anyio.to_thread.run_sync(seam.connect, abandon_on_cancel=True)
        except CallServerError as exc:
            raise ExecutorError(str(exc)) from None
        self._seams.append(seam)
        return seam

    async def close(self, interrupted: bool = False) -> None:
        await stop_all(self._seams)
