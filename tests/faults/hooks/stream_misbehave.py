"""A deliberately misbehaving *stream-mode* seam: ``python stream_misbehave.py BEHAVIOUR``
or ``python stream_misbehave.py mixed SEAM``.

Speaks the stream protocol (one ``{"id","env","input"}`` request per line, one
``{"id","exit_code","stdout","stderr"}`` answer per line); every call it does not
break gets a canned context naming ``fault/canned``.  Stdlib only, so a respawned
worker is warm at once.

Behaviours:
  hang_on_turn  stop answering on the FAULT_TURN-th UserPromptSubmit of a session (the runner
                must time out, kill the worker and respawn one)
  die_on_turn   exit mid-request on that call (the runner must grade a crash and respawn)
  partial_json, json_garbage, unknown_keys
                answer every call with that broken stdout (as ``misbehave.py`` does in exec mode)
  clean         behave

``mixed`` reads the plan ``FAULT_PLAN`` (JSON: fixture id → {seam, behaviour, env}) and
picks each request's behaviour from its session id (``brainbench-<fixture id>-1``):
the planned one when the plan names SEAM, else ``clean``.  Counters, ``stream-calls.log``
(pid, event, faulted) and pid files then go to ``FAULT_STATE_DIR/<fixture id>``.

Environment: FAULT_STATE_DIR (``stream-<pid>.pid`` for every worker), FAULT_TURN, FAULT_PLAN.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

CANNED = "## Fault hook\n- Canned page → `fault/canned`"
SESSION_PREFIX, SESSION_SUFFIX = "brainbench-", "-1"


def answer(event: str, **extra: object) -> str:
    doc: dict[str, object] = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": CANNED}}
    doc.update(extra)
    return json.dumps(doc, ensure_ascii=False)


def plan_for(plan: dict[str, dict[str, object]] | None, seam: str, behaviour: str, state: Path,
             message: dict[str, object]) -> tuple[str, Path, dict[str, str]]:
    """(behaviour, state dir, env) for this request."""
    if plan is None:
        return behaviour, state, dict(os.environ)
    fixture_id = str(message.get("session_id") or "").removeprefix(SESSION_PREFIX).removesuffix(SESSION_SUFFIX)
    entry = plan.get(fixture_id)
    state = state / fixture_id
    if entry is None or entry["seam"] != seam:
        return "clean", state, {}
    return str(entry["behaviour"]), state, dict(entry["env"])  # type: ignore[arg-type]


def main(behaviour: str, seam: str = "") -> None:
    root = Path(os.environ["FAULT_STATE_DIR"])
    plan = json.loads(Path(os.environ["FAULT_PLAN"]).read_text()) if behaviour == "mixed" else None
    (root / f"stream-{os.getpid()}.pid").write_text(str(os.getpid()))
    for line in sys.stdin:
        request = json.loads(line)
        message = request["input"]
        event = message.get("hook_event_name", "UserPromptSubmit")
        doing, state, env = plan_for(plan, seam, behaviour, root, message)
        stdout = ""
        faulted = False
        if event == "UserPromptSubmit":
            # Per-session file counter: workers are respawned and shared between fixtures.
            # (named apart from misbehave.py's, which may share the state dir in a mixed run)
            counter = state / f"stream-count-{message.get('session_id')}"
            count = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(count))
            faulted = doing in ("hang_on_turn", "die_on_turn") and count == int(env["FAULT_TURN"])
            if plan is not None:
                with (state / "stream-calls.log").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"pid": os.getpid(), "event": event, "faulted": faulted}) + "\n")
            if faulted and doing == "hang_on_turn":
                time.sleep(600)
            if faulted and doing == "die_on_turn":
                sys.stderr.write("stream fault hook: dying mid-request\n")
                os._exit(3)
            stdout = answer(event)
        if doing == "partial_json":
            stdout = answer(event)[:-3]
        elif doing == "json_garbage":
            stdout = answer(event) + "\nhook done. bye!\n"
        elif doing == "unknown_keys":
            stdout = answer(event, brainbenchFaultExtra={"note": "not in any harness schema"})
        sys.stdout.write(json.dumps({"id": request["id"], "exit_code": 0, "stdout": stdout, "stderr": ""}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
