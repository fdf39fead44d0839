"""The stream codec: one JSON object per line, shaped by ``wire.StreamRequest``/``wire.StreamResponse``.

One implementation for the seam program and every executor.  Plain ``json`` on the hot path (a
warm stream answers in well under a millisecond); the models stay the published schema of the
same lines.  A module of its own, without pydantic: the warm hook server and every stream
program import it, and pydantic is a tenth of their start-up (docs/EXECUTORS.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from brainbench.models import bounded_json

# The warm-up request every stream process must answer (with any exit code) before the
# run starts; never graded.  Its own event name, so a hook that counts prompts skips it.
HANDSHAKE_INPUT: dict[str, object] = {"hook_event_name": "BrainBenchHandshake"}


class StreamProtocolError(ValueError):
    """A line that is not a well-formed stream request or response."""


def _line(doc: dict[str, object]) -> bytes:
    try:
        return (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates (undecodable output kept as surrogate escapes): ASCII JSON carries
        # them as \udcXX escapes, where raw bytes would make the line invalid UTF-8.
        return (json.dumps(doc) + "\n").encode("ascii")


def encode_request(request_id: int, env: Mapping[str, str], input: object, cwd: str | None = None) -> bytes:
    doc: dict[str, object] = {"id": request_id, "env": dict(env), "input": input}
    if cwd is not None:
        doc["cwd"] = cwd
    return _line(doc)


def decode_request(line: str | bytes) -> tuple[int, dict[str, str], object, str | None]:
    """(id, env, input, cwd) of one request line.  ``input`` is passed on as the hook's stdin
    would be: a program answers a non-object input exactly as its exec mode would."""
    try:
        doc = bounded_json.loads(line)
        request_id = doc["id"]
        env = doc.get("env") or {}
        body = doc["input"]
        cwd = doc.get("cwd")
        if type(request_id) is not int or not isinstance(env, dict):
            raise TypeError("id must be an integer and env an object")
        if cwd is not None and not isinstance(cwd, str):
            raise TypeError("cwd must be a string")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StreamProtocolError(f"bad stream request: {exc}") from exc
    return request_id, {str(k): str(v) for k, v in env.items()}, body, cwd


def encode_response(request_id: int, exit_code: int, stdout: str, stderr: str = "") -> bytes:
    return _line({"id": request_id, "exit_code": exit_code, "stdout": stdout, "stderr": stderr})


def decode_response(line: str | bytes, expected_id: int) -> tuple[int, str, str]:
    """(exit_code, stdout, stderr) of the answer to request ``expected_id``."""
    try:
        doc = bounded_json.loads(line)
        if not isinstance(doc, dict):
            raise TypeError("the answer is not a JSON object")
        if doc.get("id") != expected_id:
            raise ValueError(f"answer id {doc.get('id')} for request {expected_id}")
        code = doc["exit_code"]
        if type(code) is not int:
            raise TypeError(f"exit_code {code!r} is not an integer")
        return code, str(doc.get("stdout", "")), str(doc.get("stderr", ""))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StreamProtocolError(f"stream protocol violation: {exc}") from exc
