"""A hook whose every answer is ~6 KB of deeply nested JSON, under every size cap.

Exec mode: stdout is ``[`` six thousand times.  Stream mode (``--stream``): the handshake is
answered properly (so the seam starts), then graded requests alternate between a
well-formed answer line whose ``stdout`` is the nested text and an answer *line* that is
itself nested that deep.  Python's json and pydantic both recurse per level: before the
runner bounded every parse, either one ended the whole run as an internal error.
"""

import json
import sys

NESTED = "[" * 6000


def exec_mode() -> None:
    sys.stdin.buffer.read()
    sys.stdout.write(NESTED)


def stream_mode() -> None:
    graded = 0
    for line in sys.stdin:
        request = json.loads(line)
        rid = request["id"]
        message = request.get("input")
        if isinstance(message, dict) and message.get("hook_event_name") == "BrainBenchHandshake":
            answer = json.dumps({"id": rid, "exit_code": 0, "stdout": "", "stderr": ""})  # the handshake
        elif graded % 2 == 0:
            answer = json.dumps({"id": rid, "exit_code": 0, "stdout": NESTED, "stderr": ""})
        else:
            answer = f'{{"id": {rid}, "exit_code": 0, "stdout": "", "x": {NESTED}'
        graded += 1
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    stream_mode() if "--stream" in sys.argv else exec_mode()
