"""Wire grading: each way a hook can answer maps to context, silence, or the right fault class."""

from __future__ import annotations

import json

import pytest
from brainbench.harnesses.grading import Graded, grade
from brainbench.models.hook_io import HookOutcome
from brainbench.models.wire import MAX_CONTEXT_CHARS

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


# The details a fault carries, and the edges of each rule (what the mutation pass found untested).

@pytest.mark.parametrize(("code", "stderr", "fault", "detail"), [
    (2, "", "blocked", "exit 2 with empty stderr"),
    (2, "nope\nmore", "blocked", "nope"),
    (75, "", "infra_error", "backend unavailable"),
    (75, "db down", "infra_error", "db down"),
    (1, "", "adapter_crash", "exit 1: no stderr"),
    (1, "boom", "adapter_crash", "exit 1: boom"),
    (2, "x" * 300, "blocked", "x" * 200),  # one line, at most 200 characters
])
def test_fault_details(code: int, stderr: str, fault: str, detail: str) -> None:
    graded = grade(outcome("", code, stderr), "codex")
    assert (graded.context, graded.fault, graded.detail) == (None, fault, detail)


def test_context_at_the_cap_is_kept_and_one_over_is_oversize() -> None:
    at_cap = "a" * MAX_CONTEXT_CHARS
    assert grade(outcome(at_cap), "claude") == Graded(at_cap)
    assert grade(outcome(at_cap + "b"), "claude").fault == "oversize"


def test_not_utf8_is_a_contract_violation_only_claude_applies() -> None:
    raw = HookOutcome(0, b"ctx \xff here", b"", False, 1.0)
    claude, codex = grade(raw, "claude"), grade(raw, "codex")
    # Claude Code applies the replaced text (graded as an exit-0 answer, not a crash) and the fault is kept.
    assert (claude.context, claude.fault) == ("ctx \ufffd here", "contract_violation")
    assert claude.detail == "stdout is not UTF-8 (byte 4: invalid start byte)"
    assert (codex.context, codex.fault, codex.detail) == (None, "contract_violation", claude.detail)


def test_claude_drops_unknown_keys_and_says_which() -> None:
    doc = {**json.loads(OK), "sessionTitle": "x"}
    graded = grade(outcome(json.dumps(doc)), "claude")
    assert (graded.context, graded.fault, graded.detail) == ("ctx → `a/b`", "contract_violation",
                                                             "unknown output keys: sessionTitle")


def test_a_wrong_type_is_a_contract_violation_at_its_field() -> None:
    doc = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": 5}}
    graded = grade(outcome(json.dumps(doc)), "codex")
    assert graded.fault == "contract_violation"
    assert graded.detail.startswith("output fails the contract at hookSpecificOutput.additionalContext: ")


def test_a_block_decision_carries_its_reason_or_says_so() -> None:
    assert grade(outcome('{"decision":"block","reason":"r"}'), "claude").detail == "r"
    assert grade(outcome('{"decision":"block"}'), "claude").detail == "decision: block"
