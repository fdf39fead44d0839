"""Raw hijacked exec streams: write stdin, half-close, read multiplexed frames.

We speak the exec-start upgrade ourselves instead of using the SDK's
``socket=True`` because (a) http.client may have buffered the first stdout frame
together with the response headers, where the raw socket can no longer see it, and
(b) we need an honest half-close (shutdown(SHUT_WR)) so the hook sees EOF on stdin
while we keep reading its output -- exactly what ``docker exec -i`` does.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from urllib.parse import urlparse

from ..limits import CappedBuffer
from .failures import DockerInfraError
from .remote import ssh_socket, tls_wrap

STDOUT, STDERR = 1, 2


class HijackedExec:
    """One attached exec: a socket carrying stdin up and framed stdout/stderr down."""

    def __init__(self, sock: socket.socket, leftover: bytes) -> None:
        self.sock = sock
        self._buf = bytearray(leftover)
        self._eof = False

    @classmethod
    def start(cls, docker_host: str, api_version: str, exec_id: str, connect_timeout: float = 10.0
              ) -> HijackedExec:
        sock = _connect(docker_host, connect_timeout)
        body = json.dumps({"Detach": False, "Tty": False}).encode()
        request = (
            f"POST /v{api_version}/exec/{exec_id}/start HTTP/1.1\r\n"
            "Host: docker\r\nContent-Type: application/json\r\n"
            "Connection: Upgrade\r\nUpgrade: tcp\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        try:
            sock.settimeout(connect_timeout)
            sock.sendall(request)
            head = bytearray()
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    raise DockerInfraError("docker closed the exec attach before answering")
                head += chunk
        except OSError as exc:
            sock.close()
            raise DockerInfraError(f"exec attach failed: {exc}") from exc
        header, _, leftover = bytes(head).partition(b"\r\n\r\n")
        status_line = header.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or parts[1] not in ("101", "200"):
            sock.close()
            raise DockerInfraError(f"exec attach refused: {status_line} {leftover[:300]!r}")
        return cls(sock, leftover)

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            # The hook exited without reading all of stdin; its output still counts.
            pass

    def close_write(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def read_frame(self, deadline: float | None) -> tuple[int, bytes] | None:
        """Next (stream, data) frame, None at EOF; raises TimeoutError past deadline."""
        header = self._read_exact(8, deadline)
        if header is None:
            return None
        stream, size = struct.unpack(">BxxxL", header)
        data = self._read_exact(size, deadline) if size else b""
        if data is None:
            return None
        return stream, data

    def read_all(self, deadline: float | None) -> tuple[bytes, bytes]:
        """Demultiplex until EOF; raises TimeoutError past deadline and
        ``limits.OutputLimitExceeded`` as soon as one channel passes the output cap."""
        out, err = CappedBuffer("stdout"), CappedBuffer("stderr")
        while (frame := self.read_frame(deadline)) is not None:
            (out if frame[0] == STDOUT else err).add(frame[1])
        return bytes(out), bytes(err)

    def _read_exact(self, n: int, deadline: float | None) -> bytes | None:
        while len(self._buf) < n:
            if self._eof:
                return None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                self.sock.settimeout(remaining)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                raise
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                if len(self._buf) < n:
                    return None
            self._buf += chunk
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _connect(docker_host: str, timeout: float) -> socket.socket:
    url = urlparse(docker_host)
    try:
        if url.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(url.path)
        elif url.scheme in ("tcp", "http", "https"):
            host = url.hostname or "localhost"
            sock = tls_wrap(socket.create_connection((host, url.port or 2375), timeout=timeout), host)
        elif url.scheme == "ssh":
            sock = ssh_socket(docker_host, timeout)
        else:
            raise DockerInfraError(f"attach over {url.scheme}:// is not supported (use unix://, tcp:// or ssh://)")
    except OSError as exc:
        raise DockerInfraError(f"cannot connect to docker at {docker_host}: {exc}") from exc
    return sock
