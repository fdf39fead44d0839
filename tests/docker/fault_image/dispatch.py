"""Per-turn fault plan for ``misbehave.py``: one CLI run exercises several behaviours.

``FAULT_PLAN`` is a JSON object mapping ``sha256(prompt)[:12]`` (UserPromptSubmit) or an event
name (``SessionStart``) to a ``misbehave.py`` behaviour; anything not in the plan gets a clean
answer (the canned context for a prompt, silence otherwise).  The plan is keyed by the prompt
text, not by a call counter, so tenacity's retries of an exit-75 turn hit the same behaviour.

The chosen behaviour runs as the real, unmodified ``misbehave.py BEHAVIOUR`` (exec'd, so
``docker top`` shows which behaviour a process has) with the original stdin bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CANNED = "## Fault hook\n- Canned page → `fault/canned`"


def prompt_key(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]


def main() -> None:
    raw = sys.stdin.buffer.read()
    try:
        message = json.loads(raw)
    except ValueError:
        message = {}
    if not isinstance(message, dict):
        message = {}
    event = str(message.get("hook_event_name") or "UserPromptSubmit")
    key = prompt_key(str(message.get("prompt", ""))) if event == "UserPromptSubmit" else event
    behaviour = json.loads(os.environ.get("FAULT_PLAN") or "{}").get(key, "clean")
    if behaviour == "clean":
        if event == "UserPromptSubmit":
            doc = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": CANNED}}
            sys.stdout.write(json.dumps(doc, ensure_ascii=False))
        return
    # Hand the exact stdin bytes to misbehave.py: an unlinked temp file becomes its fd 0.
    with tempfile.TemporaryFile(dir=os.environ.get("FAULT_STATE_DIR", "/tmp")) as fh:
        fh.write(raw)
        fh.seek(0)
        os.dup2(fh.fileno(), 0)
    os.execv(sys.executable, [sys.executable, os.path.join(HERE, "misbehave.py"), behaviour])


if __name__ == "__main__":
    main()
