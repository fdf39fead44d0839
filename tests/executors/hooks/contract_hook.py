#!/usr/bin/env python3
"""The provider contract suite's hook: exec (one JSON on stdin) and ``--stream``.

The prompt is a directive: ``echo`` answers with what the hook saw (prompt, env var
BB_PROBE, cwd); ``sleep:N`` prints partial output then sleeps; ``spawn:N`` leaves a
child ``sleep N`` behind and sleeps too; ``exit:K`` exits K with a stderr line.
"""

import io
import json
import os
import subprocess
import sys
import time


def handle(message: object, env: dict, out: io.TextIOBase, err: io.TextIOBase) -> int:
    if not isinstance(message, dict):
        return 0
    prompt = str(message.get("prompt", ""))
    if prompt.startswith(("sleep:", "spawn:")):
        seconds = prompt.split(":", 1)[1]
        out.write("partial output that must be discarded\n")
        out.flush()
        if prompt.startswith("spawn:"):
            subprocess.Popen(["sleep", seconds])
        time.sleep(float(seconds))
        return 0
    if prompt.startswith("exit:"):
        err.write("failing on purpose\n")
        return int(prompt.split(":", 1)[1])
    seen = {"prompt": prompt, "probe": env.get("BB_PROBE"), "cwd": os.getcwd()}
    out.write(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                 "additionalContext": json.dumps(seen)}}))
    err.write("stderr is kept\n")
    return 0


def main() -> int:
    if "--stream" not in sys.argv:
        try:
            message = json.loads(sys.stdin.read() or "null")
        except ValueError:
            message = None
        return handle(message, dict(os.environ), sys.stdout, sys.stderr)
    for line in sys.stdin:
        request = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        try:
            if request.get("cwd"):  # the stream codec's per-call cwd: answer from there
                os.chdir(request["cwd"])
        except OSError:  # as brainbench's own program: exit 75, an infrastructure fault
            sys.stdout.write(json.dumps({"id": request["id"], "exit_code": 75, "stdout": "",
                                         "stderr": f"cannot enter cwd {request['cwd']}\n"}) + "\n")
            sys.stdout.flush()
            continue
        code = handle(request["input"], {**os.environ, **request.get("env", {})}, out, err)
        sys.stdout.write(json.dumps({"id": request["id"], "exit_code": code, "stdout": out.getvalue(),
                                     "stderr": err.getvalue()}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
