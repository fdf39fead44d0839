"""A hook that memorised a corpus's gold and never reads the brain: ``python memorised_gold_hook.py TABLE``.

TABLE is JSON, prompt text -> the gold slugs to inject; the test builds it from the committed
corpus, whose gold is public.  The hook answers every prompt it knows with exactly those slugs and
stays silent otherwise: what an image shipping the committed gold would do.  Stdlib only, no
database driver: it has no way to read the brain, and does not try.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(table_path: str) -> None:
    table = json.loads(Path(table_path).read_text(encoding="utf-8"))
    try:
        message = json.loads(sys.stdin.read())
    except ValueError:
        message = {}
    event = message.get("hook_event_name", "UserPromptSubmit")
    slugs = table.get(message.get("prompt", ""), []) if event == "UserPromptSubmit" else []
    if not slugs:
        sys.stdout.write("{}\n")
        return
    context = "\n".join(["## Brain pages mentioned this turn", *(f"- {s} → `{s}`" for s in slugs)])
    sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
