"""Run a seam handler as a hook program, in exec or stream mode.

exec: one JSON on stdin until EOF → stdout, exit code (how real hooks run).
stream: one request per line → one response line each (same bytes an exec call
would have produced), so a warm process serves many hook calls.

Kept free of heavy imports: this is the start-up path of every exec-mode call.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from brainbench.jsjson import stringify
from brainbench.models import bounded_json

# The image contract's "backend unavailable" exit (EX_TEMPFAIL): the runner
# treats it as an infrastructure fault and may retry, never as a memory miss.
EXIT_BACKEND_UNAVAILABLE = 75
MAX_STDIN_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class HookResult:
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


class BackendUnavailable(RuntimeError):
    """The brain could not be reached; reported with exit 75."""


Handler = Callable[[dict[str, object], Mapping[str, str]], HookResult]


def context_output(event: str, text: str) -> str:
    if not text:
        return ""
    # JSON.stringify, like gbrain's hook: a lone surrogate is escaped, so stdout stays valid UTF-8.
    return stringify({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}) + "\n"


def invoke(handler: Handler, raw: str, env: Mapping[str, str]) -> HookResult:
    """Parse one message and run the handler, mapping failures to exit codes."""
    raw = raw.strip()
    if not raw:
        return HookResult(0, "", "empty stdin: nothing to do\n")
    try:
        message = bounded_json.loads(raw)
    except json.JSONDecodeError as exc:
        return HookResult(0, "", f"stdin is not JSON ({exc.msg}); staying silent\n")
    if not isinstance(message, dict):
        return HookResult(0, "", "stdin is not a JSON object; staying silent\n")
    try:
        return handler(message, env)
    except BackendUnavailable as exc:
        return HookResult(EXIT_BACKEND_UNAVAILABLE, "", f"brain unavailable: {exc}\n")
    except Exception:  # a hook must answer; the traceback goes to stderr
        return HookResult(1, "", traceback.format_exc())


def answer_stdin(handler: Handler, raw: bytes, env: Mapping[str, str]) -> HookResult:
    """One exec-mode call from its raw stdin (at most ``MAX_STDIN_BYTES + 1`` bytes read)."""
    if len(raw) > MAX_STDIN_BYTES:
        return HookResult(0, "", "stdin over 4 MiB; staying silent\n")
    return invoke(handler, raw.decode("utf-8", errors="replace"), env)


def _exec(handler: Handler) -> int:
    result = answer_stdin(handler, sys.stdin.buffer.read(MAX_STDIN_BYTES + 1), os.environ)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.exit_code


def enter_cwd(cwd: str) -> None:
    """A stream process of its own answers from the request's cwd, as an exec hook would run there."""
    os.chdir(cwd)


def serve_stream(handler: Handler, lines: Iterable[bytes], write: Callable[[bytes], None],
                 env: Mapping[str, str], enter: Callable[[str], None] = enter_cwd) -> None:
    """Answer stream requests, one line each, until ``lines`` ends.  ``enter(cwd)`` raises
    OSError where no exec hook could start; the warm hook server, which serves many sessions
    from one process, checks the cwd instead of entering it (``serve.check_cwd``)."""
    # The codec is imported here, not at the top: exec mode must not pay for it.
    from brainbench.models.stream_codec import StreamProtocolError, decode_request, encode_response

    for line in lines:
        if not line.strip():
            continue
        try:
            rid, request_env, message, cwd = decode_request(line)
        except StreamProtocolError as exc:
            write(encode_response(-1, 1, "", str(exc)))
            continue
        if cwd is not None:
            try:
                enter(cwd)
            except OSError as exc:  # no exec hook could start there: the runner's fault (exit 75)
                write(encode_response(rid, 75, "", f"cannot enter cwd {cwd}: {exc.strerror}\n"))
                continue
        result = invoke(handler, json.dumps(message, ensure_ascii=False), {**env, **request_env})
        write(encode_response(rid, result.exit_code, result.stdout, result.stderr))


def _stream(handler: Handler) -> int:
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    serve_stream(handler, sys.stdin.buffer, write, os.environ)
    return 0


def main(handler: Handler, argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--stream"]):
        sys.stderr.write("usage: python -m brainbench.hooks.<seam> [--stream]\n")
        raise SystemExit(64)
    raise SystemExit(_stream(handler) if args == ["--stream"] else _exec(handler))
