"""Wire grading: each way a hook can answer maps to context, silence, or the right fault class."""

from __future__ import annotations

import json

import pytest
from brainbench.harnesses.grading import grade
from brainbench.models.hook_io import HookOutcome

OK = json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx → `a/b`"}})


def outcome(stdout: str = "", code: int | None = 0, stderr: str = "", timed_out: bool = False) -> HookOutcome:
    return HookOutcome(code, stdout.encode(), stderr.encode(), timed_out, 1.0)


@pytest.mark.parametrize("dialect", ["claude", "codex", "openclaw"])
def test_clean_answers(dialect: str) -> None:
    assert grade(outcome(OK), dialect).context == "ctx → `a/b`"  # type: ignore[arg-type]
    assert grade(outcome(""), dialect).context is None  # type: ignore[arg-type]
    assert grade(outcome("", stderr="debug only"), dialect).fault is None  # type: ignore[arg-type]


CASES = [
    # (name, outcome, dialect, expected context, expected fault)
    ("timeout discards output", outcome(OK, None, timed_out=True), "claude", None, "adapter_timeout"),
    ("exit 2 blocks", outcome(OK, 2, "nope"), "claude", None, "blocked"),
    ("exit 2 without stderr", outcome("", 2), "codex", None, "blocked"),
    ("decision block", outcome('{"decision":"block","reason":"r"}'), "claude", None, "blocked"),
    ("crash, claude honours valid JSON", outcome(OK, 1, "boom"), "claude", "ctx → `a/b`", "adapter_crash"),
    ("crash, codex drops stdout", outcome(OK, 1, "boom"), "codex", None, "adapter_crash"),
    ("backend unavailable", outcome("", 75, "db down"), "openclaw", None, "infra_error"),
    ("partial JSON is text on claude", outcome('{"hookSpecificOutput": '), "claude", '{"hookSpecificOutput":',
     "contract_violation"),
    ("partial JSON fails on codex", outcome('{"hookSpecificOutput": '), "codex", None, "contract_violation"),
    ("JSON then garbage", outcome(OK + " trailing"), "codex", None, "contract_violation"),
    ("unknown keys tolerated by claude", outcome(json.dumps({**json.loads(OK), "sessionTitle": "x"})), "claude",
     "ctx → `a/b`", "contract_violation"),
    ("unknown keys invalidate codex", outcome(json.dumps({**json.loads(OK), "sessionTitle": "x"})), "codex", None,
     "contract_violation"),
    ("oversize stdout", outcome("x" * 10_001), "claude", None, "oversize"),
    ("oversize context", outcome(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                                    "additionalContext": "y" * 10_001}})),
     "codex", None, "oversize"),
    ("plain text is context", outcome("remember → `p/q`\n"), "codex", "remember → `p/q`", None),
    ("plain text is not JSON for the openclaw bridge", outcome("hello"), "openclaw", None, "contract_violation"),
    ("wrong event name", outcome(OK.replace("UserPromptSubmit", "SessionStart")), "claude", None,
     "contract_violation"),
]


@pytest.mark.parametrize(("name", "got", "dialect", "context", "fault"), CASES, ids=[c[0] for c in CASES])
def test_fault_classes(name: str, got: HookOutcome, dialect: str, context: str | None, fault: str | None) -> None:
    graded = grade(got, dialect)  # type: ignore[arg-type]
    assert (graded.context, graded.fault) == (context, fault), graded.detail


def test_infra_error_from_executor() -> None:
    got = HookOutcome(None, b"", b"", False, 0.0, infra_error="cannot start seam")
    assert grade(got, "claude").fault == "infra_error"
