"""Exec mode through the in-container call server (``executors/call_server.py``).

One attached exec per seam container runs the call server; every hook call is one
request line on it, answered by id, so a call costs a line each way instead of the
Engine API round trips of a ``docker exec`` (create, attach, inspect).  The hook still
runs as a fresh process per call, exactly as under ``docker exec``.

Two servers speak the same protocol: ``call_server.py`` run by the image's own Python 3
(its source streamed in at start), and, for images without Python, the static binary built
from ``call_server.c`` and bind-mounted read-only (``static_helper``).  Where neither can
run, the seam falls back to ``docker exec`` per call (``exec_call``).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..base import HookCall, HookOutcome
from ..call_protocol import CANCEL_GRACE_S, CallChannel, CallServerError
from ..limits import LineSplitter
from .attach import STDOUT, HijackedExec
from .remote_files import CallFiles
from .static_helper import TARGET as STATIC_SERVER

if TYPE_CHECKING:
    from .container import SeamContainer

__all__ = ["BOOT", "CANCEL_GRACE_S", "PIDFILE", "SOURCE", "CallServer", "CallServerError"]

log = logging.getLogger(__name__)

SOURCE = (Path(__file__).resolve().parents[1] / "call_server.py").read_text()
# The interpreter reads the server's source as its first stdin line (JSON-encoded).
BOOT = "import json,sys;exec(compile(json.loads(sys.stdin.buffer.readline()),'call_server','exec'))"
PIDFILE = "/tmp/.brainbench-call-server.pid"
# Records the server's pid so the host can kill it (and the hooks it runs are their own groups).
WRAPPER = 'echo "$$" > "$0"; for py in python3 python; do command -v "$py" >/dev/null 2>&1 && exec "$py" "$@"; done; ' \
          'echo "no python3 in the image" >&2; exit 127'
STATIC_WRAPPER = 'echo "$$" > "$0"; exec "$@"'


class CallServer(CallChannel):
    """The call server of one seam container, over an attached exec's stdin and stdout."""

    def __init__(self, seam: SeamContainer, variant: str = "python") -> None:
        super().__init__()
        self.seam = seam
        # "python": call_server.py on the image's interpreter; "static": the mounted binary.
        self.variant = variant
        self.handle: HijackedExec | None = None
        self.stderr_tail = b""
        self.runs_commands = False  # set by the handshake

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, handshake_s: float, in_call: bool = False) -> None:
        seam = self.seam
        api = seam.executor.api
        if self.variant == "static":
            cmd, env = ["/bin/sh", "-c", STATIC_WRAPPER, PIDFILE, STATIC_SERVER, *seam.hook_cmd], seam.base_env
        else:
            cmd = ["/bin/sh", "-c", WRAPPER, PIDFILE, "-c", BOOT]
            env = {**seam.base_env, "BRAINBENCH_CALL_ARGV": json.dumps(seam.hook_cmd)}
        exec_id = seam.create_exec(cmd, env, in_call=in_call)
        self.handle = HijackedExec.start(api.host, api.api_version, exec_id)
        if self.variant == "python":
            self.handle.send(json.dumps(SOURCE).encode() + b"\n")
        self.alive = True
        threading.Thread(target=self._read, name="bb-call-server", daemon=True).start()
        answer = self.hello(handshake_s)
        # Ours runs other commands of the image too; an older one would run the hook instead.
        self.runs_commands = answer.get("argv") is True
        if not answer.get("ready"):
            self.close()
            why = self.stderr_tail.decode("utf-8", "replace").strip() or "no answer"
            raise CallServerError(f"{self.variant} call server did not start in {seam.image_ref}: {why}")

    def close(self) -> None:
        self.alive = False
        if self.handle is not None:
            self.handle.close_write()
            self.handle.close()
        self.seam.kill_by_pidfile(PIDFILE)

    def send_line(self, line: bytes) -> None:
        assert self.handle is not None
        self.handle.send(line)

    def _read(self) -> None:
        assert self.handle is not None
        lines = LineSplitter()
        try:
            while (frame := self.handle.read_frame(None)) is not None:
                stream, data = frame
                if stream != STDOUT:
                    self.stderr_tail = (self.stderr_tail + data)[-4096:]
                    continue
                for line in lines.feed(data):
                    self.deliver(line)
        except Exception as exc:  # closed under us, or a line over the cap: either way it is done
            log.debug("call server reader ended: %s", exc)
        finally:
            self.reader_ended()

    # -- calls -------------------------------------------------------------------------------
    def write_files(self, files: CallFiles) -> None:  # type: ignore[override]
        """Copy a call's files in ahead of it (stream mode on a remote engine)."""
        super().write_files(files, self.seam.executor.limits.call_grace_s, self.seam.seam)

    def call(self, call: HookCall, files: CallFiles | None = None, argv: Sequence[str] | None = None) -> HookOutcome:
        executor = self.seam.executor
        return self.run(call, self.seam.container_env(call.env), executor.limits.call_grace_s, self.seam.seam, files,
                        argv)
