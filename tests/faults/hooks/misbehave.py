"""A deliberately misbehaving exec-mode hook: ``python misbehave.py BEHAVIOUR``
or ``python misbehave.py mixed SEAM``.

It stands in for a real adapter behind one seam (``BRAINBENCH_SEAM_COMMAND_<SEAM>``)
and breaks the wire contract in exactly one way.  On calls where it behaves, it
answers with a canned context naming ``fault/canned`` so the tests can tell an
injected answer from silence.

Stdlib only on purpose: a hook that imports psycopg needs ~2 s to start on a
loaded 2-core machine, which would turn every behaviour into a timeout.

``mixed`` reads the plan ``FAULT_PLAN`` (JSON: fixture id → {seam, behaviour, env}),
finds the fixture from the per-fixture ``CLAUDE_CONFIG_DIR`` the runner sets
(``<work>/<fixture id>/<seam>/claude``: known before stdin is read, so ``crash_on_start``
still dies without touching it) and misbehaves as planned when the plan names SEAM;
otherwise it behaves (``clean``).  State then goes to
``FAULT_STATE_DIR/<fixture id>``, so one run can hold every case.

Environment:
  FAULT_STATE_DIR  per-session call counters, pid files and ``calls.log`` (one JSON line per invocation)
  FAULT_TURN       crash_on_turn: the 1-based UserPromptSubmit call (per session) that crashes
  FAULT_AFTER      db_lost: UserPromptSubmit calls (per session) answered before the brain is "lost"
  FAULT_SLEEP_S    sleep_under: seconds to sleep before answering
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CANNED = "## Fault hook\n- Canned page → `fault/canned`"
STATE = Path(os.environ.get("FAULT_STATE_DIR", "/nonexistent-fault-state"))


def planned(seam: str) -> str:
    """The behaviour the plan gives this call's fixture on ``seam`` (``clean`` when none)."""
    global STATE
    # The run hands each seam WORKROOT/<harness>/<fixture>/claude (executors mount only their own harness).
    fixture_id = Path(os.environ["CLAUDE_CONFIG_DIR"]).parts[-2]
    entry = json.loads(Path(os.environ["FAULT_PLAN"]).read_text()).get(fixture_id)
    STATE = STATE / fixture_id
    if entry is None or entry["seam"] != seam:
        return "clean"
    os.environ.update(entry["env"])
    return str(entry["behaviour"])


def answer(event: str, **extra: object) -> str:
    doc: dict[str, object] = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": CANNED}}
    doc.update(extra)
    return json.dumps(doc, ensure_ascii=False)


def read_message() -> dict[str, object]:
    raw = sys.stdin.read()
    try:
        doc = json.loads(raw)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def log_call(behaviour: str, message: dict[str, object]) -> None:
    line = {"behaviour": behaviour, "pid": os.getpid(), "session": message.get("session_id"),
            "event": message.get("hook_event_name")}
    # O_APPEND writes of one short line are atomic, so concurrent fixtures can share the log.
    with (STATE / "calls.log").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def prompt_number(message: dict[str, object]) -> int:
    """Count this session's UserPromptSubmit calls (retries included): a per-session file, so the
    count does not depend on how fixtures interleave under ``--jobs``."""
    counter = STATE / f"count-{message.get('session_id')}"
    count = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(count))
    return count


def emit(text: str, code: int = 0, err: str = "") -> None:
    sys.stdout.write(text)
    sys.stderr.write(err)
    sys.stdout.flush()
    sys.stderr.flush()
    raise SystemExit(code)


def main(behaviour: str, seam: str = "") -> None:
    if behaviour == "mixed":
        behaviour = planned(seam)
    if behaviour == "crash_on_start":
        # Dies before touching stdin, like a hook whose interpreter or import fails.
        emit("", 1, "fault hook: crash on start\n")
    if behaviour == "no_stdin":
        # Never reads stdin, so it cannot know the event: plain text is context for both events.
        emit(CANNED + "\n")

    message = read_message()
    event = str(message.get("hook_event_name") or "UserPromptSubmit")
    log_call(behaviour, message)
    is_prompt = event == "UserPromptSubmit"

    if behaviour == "clean":
        emit(answer(event) if is_prompt else "")
    if behaviour == "crash_on_turn":
        if is_prompt and prompt_number(message) == int(os.environ["FAULT_TURN"]):
            emit("", 1, "fault hook: crash on this turn\n")
        emit(answer(event) if is_prompt else "")
    if behaviour == "db_lost":
        if is_prompt and prompt_number(message) > int(os.environ["FAULT_AFTER"]):
            emit("", 75, "brain unavailable: server closed the connection unexpectedly\n")
        emit(answer(event) if is_prompt else "")
    if behaviour == "hang":
        (STATE / f"hang-{os.getpid()}.pid").write_text(str(os.getpid()))
        # A complete, valid answer is already on stdout when it hangs: the runner must still discard it.
        sys.stdout.write(answer(event))
        sys.stdout.flush()
        time.sleep(600)
        emit("")
    if behaviour == "sleep_under":
        time.sleep(float(os.environ["FAULT_SLEEP_S"]))
        emit(answer(event))
    if behaviour == "partial_json":
        emit(answer(event)[:-3])
    if behaviour == "json_garbage":
        emit(answer(event) + "\nhook done. bye!\n")
    if behaviour == "unknown_keys":
        emit(answer(event, brainbenchFaultExtra={"note": "not in any harness schema"}))
    if behaviour == "oversize":
        doc = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": CANNED + "\n" + "x" * 10_500}}
        emit(json.dumps(doc))
    if behaviour == "exit2_stderr":
        emit("", 2, "fault hook: blocked this prompt\n")
    if behaviour == "exit2_silent":
        emit("", 2)
    if behaviour == "stderr_only":
        emit("", 0, "fault hook: debug chatter on stderr only\n")
    if behaviour == "leak_child":
        # A background helper that inherits the hook's stdout and outlives it, in the hook's own
        # process group: the runner must kill it (and must not wait on the pipe it holds).
        pidfile = STATE / f"child-{os.getpid()}.pid"
        code = (f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(600)")
        subprocess.Popen([sys.executable, "-c", code])
        deadline = time.monotonic() + 10
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
        emit(answer(event))
    emit("", 64, f"fault hook: unknown behaviour {behaviour!r}\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
