#!/usr/bin/env python3
"""Stand-in seam for the docker tests: speaks the exec and --stream contracts.

Directives in the prompt drive behaviour: ``sleep:N`` (print partial output, then
sleep), ``spawn:N`` (a child process sleeps too), ``exit:K`` (exit code K with a
stderr message), ``big:N`` (N chars of context), ``socket`` (talk to the Unix socket
named by BRAINBENCH_DATABASE_URL's host=), ``tcp`` (connect to its TCP host),
``egress`` (try the outside world).  Otherwise it echoes what it saw.
"""

import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit


def handle(raw: bytes, env: dict, out: io.TextIOBase, err: io.TextIOBase) -> int:
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return 0  # fail open: silence
    prompt = str(data.get("prompt", ""))
    event = data.get("hook_event_name", "UserPromptSubmit")
    context = None
    if prompt.startswith("sleep:") or prompt.startswith("spawn:"):
        out.write("partial output that must be discarded\n")
        out.flush()
        if prompt.startswith("spawn:"):
            subprocess.Popen(["sleep", prompt.split(":", 1)[1]])
        time.sleep(float(prompt.split(":", 1)[1]))
    elif prompt.startswith("exit:"):
        err.write("blocked by stand-in\n")
        return int(prompt.split(":", 1)[1])
    elif prompt.startswith("big:"):
        context = "x" * int(prompt.split(":", 1)[1])
    elif prompt == "socket":
        url = env.get("BRAINBENCH_DATABASE_URL", "")
        sock_dir = parse_qs(urlsplit(url).query)["host"][0]
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(os.path.join(sock_dir, ".s.PGSQL.5432"))
            s.sendall(b"ping")
            context = s.recv(100).decode()
    elif prompt == "tcp":
        url = urlsplit(env.get("BRAINBENCH_DATABASE_URL", ""))
        with socket.create_connection((url.hostname, url.port or 5432), timeout=3):
            context = f"connected to {url.hostname}"
    elif prompt == "egress":
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1).close()
            context = "egress possible"
        except OSError as exc:
            context = f"no egress: {exc.__class__.__name__}"
    if context is None:
        context = json.dumps({
            "prompt": prompt,
            "source": env.get("BRAINBENCH_SOURCE"),
            "pid": os.getpid(),
            "uid": os.getuid(),
            "stdin_sha256": hashlib.sha256(raw).hexdigest(),
        }, sort_keys=True)
    out.write(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}))
    return 0


def main() -> int:
    if "--stream" in sys.argv[1:]:
        for line in sys.stdin.buffer:
            req = json.loads(line)
            env = {**os.environ, **req.get("env", {})}
            out, err = io.StringIO(), io.StringIO()
            raw = json.dumps(req["input"]).encode()
            code = handle(raw, env, out, err)
            sys.stdout.write(json.dumps({"id": req["id"], "exit_code": code, "stdout": out.getvalue(),
                                         "stderr": err.getvalue()}) + "\n")
            sys.stdout.flush()
        return 0
    return handle(sys.stdin.buffer.read(), dict(os.environ), sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
