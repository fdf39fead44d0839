"""A deliberately misbehaving *stream-mode* seam: ``python stream_misbehave.py BEHAVIOUR``.

Speaks the stream protocol (one ``{"id","env","input"}`` request per line, one
``{"id","exit_code","stdout","stderr"}`` answer per line) and misbehaves on the
FAULT_TURN-th UserPromptSubmit of each session; every other call gets a canned
context naming ``fault/canned``.  Stdlib only, so a respawned worker is warm at once.

Behaviours:
  hang_on_turn  stop answering (the runner must time out, kill the worker and respawn one)
  die_on_turn   exit mid-request (the runner must grade a crash and respawn)

Environment: FAULT_STATE_DIR (counters, ``stream-<pid>.pid`` for every worker), FAULT_TURN.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

CANNED = "## Fault hook\n- Canned page → `fault/canned`"


def main(behaviour: str) -> None:
    state = Path(os.environ["FAULT_STATE_DIR"])
    fault_turn = int(os.environ["FAULT_TURN"])
    (state / f"stream-{os.getpid()}.pid").write_text(str(os.getpid()))
    for line in sys.stdin:
        request = json.loads(line)
        message = request["input"]
        event = message.get("hook_event_name", "UserPromptSubmit")
        stdout = ""
        if event == "UserPromptSubmit":
            # Per-session file counter: workers are respawned and shared between fixtures.
            counter = state / f"count-{message.get('session_id')}"
            count = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(count))
            if count == fault_turn:
                if behaviour == "hang_on_turn":
                    time.sleep(600)
                if behaviour == "die_on_turn":
                    sys.stderr.write("stream fault hook: dying mid-request\n")
                    os._exit(3)
            stdout = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": CANNED}})
        sys.stdout.write(json.dumps({"id": request["id"], "exit_code": 0, "stdout": stdout, "stderr": ""}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
