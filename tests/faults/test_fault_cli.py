"""Fault injection through the real CLI: every misbehaviour in ONE mixed-plan run.

The run replays one copy of gbrain's ``kta-001`` fixture per fault case (fixture id
``fc-<case>``) through three seams at once:

- openclaw: the real adapter, which must not notice anything;
- codex: ``tests/faults/hooks/misbehave.py mixed`` in exec mode;
- claude-code: ``tests/faults/hooks/stream_misbehave.py mixed`` in stream mode.

Both fault programs read the plan (``FAULT_PLAN``: fixture id → seam, behaviour, env)
and misbehave only on the fixtures whose case targets their seam; elsewhere they
answer with a canned context naming ``fault/canned``.  The tests then read the one
result and check docs/FAULTS.md's "Failure semantics" table per case: the fault class of
every turn, the SEAM FAULTS block, exit 2, the real seam untouched.

Timing: one deadline (``FAULT_TIMEOUT_S``) for both fault seams, generous enough that
a loaded machine cannot turn an interpreter start into a fault; the only case that
sleeps (``sleep_under``) stays far below it, and the hang cases are the only ones
that wait it out, overlapped by ``--jobs``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HOOKS = Path(__file__).parent / "hooks"
SOURCE_FIXTURE = "kta-001-deal-recall"
OTHER = "openclaw"  # the real seam that must not notice anything
EXEC_SEAM, STREAM_SEAM = "codex", "claude-code"
FAULT_TIMEOUT_S = 6.0
REAL_TIMEOUT = "60"
CANNED_SLUG = "fault/canned"

# (fixture_id, turn_id) → fault class
Expected = dict[tuple[str, int], str]


def every_call(fault: str) -> Callable[[str, list[int], bool], Expected]:
    """The fault hits every call, SessionStart (turn 0) included when the seam has one."""
    def expect(fid: str, turns: list[int], session_start: bool) -> Expected:
        return {(fid, t): fault for t in ([0] if session_start else []) + turns}
    return expect


def nth_prompt(fault: str, n: int) -> Callable[[str, list[int], bool], Expected]:
    return lambda fid, turns, _: {(fid, turns[n - 1]): fault}


def after_prompt(fault: str, n: int) -> Callable[[str, list[int], bool], Expected]:
    return lambda fid, turns, _: {(fid, t): fault for t in turns[n:]}


def no_fault(fid: str, turns: list[int], session_start: bool) -> Expected:
    return {}


@dataclass(frozen=True)
class Case:
    name: str
    seam: str
    behaviour: str
    expect: Callable[[str, list[int], bool], Expected]
    env: dict[str, str] = field(default_factory=dict)
    # What a faulted turn delivers: claude-code honours {-prefixed invalid JSON and unknown keys.
    faulted_turn_injects: bool = False
    # What a clean turn of the fault program delivers.
    clean_turn_injects: bool = True
    detail: str = ""

    @property
    def fixture_id(self) -> str:
        return "fc-" + self.name.replace("_", "-")


CASES = [
    Case("clean", EXEC_SEAM, "clean", no_fault),
    Case("crash_on_start", EXEC_SEAM, "crash_on_start", every_call("adapter_crash"), detail="crash on start"),
    Case("crash_on_turn", EXEC_SEAM, "crash_on_turn", nth_prompt("adapter_crash", 2), env={"FAULT_TURN": "2"},
         detail="crash on this turn"),
    Case("hang", EXEC_SEAM, "hang", every_call("adapter_timeout"), detail="no answer within"),
    # A second of sleep against the deadline: slow but in time is graded like any answer.
    Case("sleep_under", EXEC_SEAM, "sleep_under", no_fault, env={"FAULT_SLEEP_S": "1.0"}),
    Case("partial_json_codex", EXEC_SEAM, "partial_json", every_call("contract_violation"), detail="invalid JSON"),
    Case("partial_json_claude", STREAM_SEAM, "partial_json", every_call("contract_violation"),
         faulted_turn_injects=True, detail="invalid JSON"),
    Case("json_garbage_codex", EXEC_SEAM, "json_garbage", every_call("contract_violation"), detail="invalid JSON"),
    Case("json_garbage_claude", STREAM_SEAM, "json_garbage", every_call("contract_violation"),
         faulted_turn_injects=True, detail="invalid JSON"),
    Case("unknown_keys_codex", EXEC_SEAM, "unknown_keys", every_call("contract_violation"),
         detail="unknown output keys: brainbenchFaultExtra"),
    Case("unknown_keys_claude", STREAM_SEAM, "unknown_keys", every_call("contract_violation"),
         faulted_turn_injects=True, detail="unknown output keys: brainbenchFaultExtra"),
    Case("oversize", EXEC_SEAM, "oversize", every_call("oversize"), detail="the cap is 10000"),
    Case("exit2_stderr", EXEC_SEAM, "exit2_stderr", every_call("blocked"), detail="blocked this prompt"),
    Case("exit2_silent", EXEC_SEAM, "exit2_silent", every_call("blocked"), detail="exit 2 with empty stderr"),
    Case("no_stdin", EXEC_SEAM, "no_stdin", no_fault),
    Case("stderr_only", EXEC_SEAM, "stderr_only", no_fault, clean_turn_injects=False),
    Case("leak_child", EXEC_SEAM, "leak_child", no_fault),
    Case("db_lost", EXEC_SEAM, "db_lost", after_prompt("infra_error", 1), env={"FAULT_AFTER": "1"},
         detail="brain unavailable"),
    Case("stream_hang", STREAM_SEAM, "hang_on_turn", nth_prompt("adapter_timeout", 2), env={"FAULT_TURN": "2"},
         detail="no answer within"),
    Case("stream_die", STREAM_SEAM, "die_on_turn", nth_prompt("adapter_crash", 2), env={"FAULT_TURN": "2"},
         detail="stream process died"),
]
BY_NAME = {c.name: c for c in CASES}


@dataclass
class MixedRun:
    proc: subprocess.CompletedProcess[str]
    doc: dict[str, Any]
    state: Path
    user_turns: list[int]

    def state_of(self, case: str) -> Path:
        return self.state / BY_NAME[case].fixture_id


def _write_corpus(reference: Path, root: Path) -> tuple[Path, Path]:
    fx_dir, gold_dir = root / "fixtures", root / "gold"
    fx_dir.mkdir(parents=True)
    gold_dir.mkdir(parents=True)
    fixture = json.loads((reference / "corpus" / "fixtures" / f"{SOURCE_FIXTURE}.fixture.json").read_text())
    gold = json.loads((reference / "corpus" / "gold" / f"{SOURCE_FIXTURE}.gold.json").read_text())
    for case in CASES:
        fid = case.fixture_id
        (fx_dir / f"{fid}.fixture.json").write_text(json.dumps({**fixture, "fixture_id": fid}))
        (gold_dir / f"{fid}.gold.json").write_text(json.dumps({**gold, "fixture_id": fid}))
    return fx_dir, gold_dir


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


@pytest.fixture(scope="module")
def mixed(reference: Path, pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> MixedRun:
    root = tmp_path_factory.mktemp("fault-mixed")
    fx_dir, gold_dir = _write_corpus(reference, root)
    state = root / "state"
    for case in CASES:
        (state / case.fixture_id).mkdir(parents=True)
    plan = root / "plan.json"
    plan.write_text(json.dumps({c.fixture_id: {"seam": c.seam, "behaviour": c.behaviour, "env": c.env}
                                for c in CASES}))
    seam_env = [f"FAULT_STATE_DIR = {json.dumps(str(state))}", f"FAULT_PLAN = {json.dumps(str(plan))}"]
    exec_cmd = [sys.executable, str(HOOKS / "misbehave.py"), "mixed", EXEC_SEAM]
    stream_cmd = [sys.executable, str(HOOKS / "stream_misbehave.py"), "mixed", STREAM_SEAM]
    seams = root / "seams.toml"
    seams.write_text("\n".join([
        f"[seams.{EXEC_SEAM}]", f"timeout_s = {FAULT_TIMEOUT_S}", f"command = {_toml_list(exec_cmd)}",
        'mode = "exec"', f"[seams.{EXEC_SEAM}.env]", *seam_env,
        f"[seams.{STREAM_SEAM}]", f"timeout_s = {FAULT_TIMEOUT_S}", f"command = {_toml_list(stream_cmd)}",
        'mode = "stream"', f"[seams.{STREAM_SEAM}.env]", *seam_env,
    ]) + "\n")
    out = root / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "CI" and not k.startswith("BRAINBENCH_SEAM_COMMAND_")}
    proc = subprocess.run(
        [sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx_dir), "--gold", str(gold_dir),
         "--out", str(out), "--suite", "know-to-ask", "--harness", f"{OTHER},{STREAM_SEAM},{EXEC_SEAM}",
         "--timeout", REAL_TIMEOUT, "--jobs", "4", "--database-url", pg_server.admin_url, "--seams", str(seams)],
        capture_output=True, text=True, timeout=600, check=False, env=env, cwd=root)
    doc = json.loads(out.read_text()) if out.exists() else {}
    fixture = json.loads((fx_dir / f"{CASES[0].fixture_id}.fixture.json").read_text())
    user_turns = [t["turn_id"] for t in fixture["turns"] if t["role"] == "user"]
    return MixedRun(proc, doc, state, user_turns)


def _expected(case: Case, run: MixedRun) -> Expected:
    return case.expect(case.fixture_id, run.user_turns, case.seam == "codex")


def _rows(doc: dict[str, Any], harness: str, fixture_id: str) -> dict[int, dict[str, Any]]:
    return {r["turn_id"]: {k: v for k, v in r.items() if k not in ("latency_ms", "fixture_id")}
            for r in doc["turn_rows"] if r["harness"] == harness and r["fixture_id"] == fixture_id}


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for a reaper is dead for our purpose


def test_the_run_completes_and_reports_every_fault(mixed: MixedRun) -> None:
    proc, doc = mixed.proc, mixed.doc
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    assert doc, f"no result file written (exit {proc.returncode}): {proc.stderr}"
    assert doc["_meta"]["run"]["complete"] is True
    assert proc.returncode == 2, proc.stderr
    expected: Expected = {}
    per_seam: dict[tuple[str, str], int] = {}
    for case in CASES:
        for cls in _expected(case, mixed).values():
            per_seam[(case.seam, cls)] = per_seam.get((case.seam, cls), 0) + 1
        expected |= _expected(case, mixed)
    faults = doc["_meta"]["faults"]
    assert len(faults) == len(expected), "one fault per faulted turn, none duplicated"
    assert f"**SEAM FAULTS ({len(expected)})**" in proc.stdout, proc.stdout
    for (seam, cls), count in per_seam.items():
        assert f"- {seam}: {cls} × {count}" in proc.stdout, proc.stdout
    classes = [cls for cls in expected.values()]
    assert doc["_meta"]["run"]["fault_counts"] == {cls: classes.count(cls) for cls in set(classes)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault_case(case: Case, mixed: MixedRun) -> None:
    doc = mixed.doc
    assert doc, f"no result file written: {mixed.proc.stderr[-3000:]}"
    expected = _expected(case, mixed)
    faults = [f for f in doc["_meta"]["faults"] if f["fixture_id"] == case.fixture_id]
    got = {(f["fixture_id"], f["turn_id"]): f["fault_class"] for f in faults}
    assert got == expected, faults
    assert {f["harness"] for f in faults} <= {case.seam}
    assert all(case.detail in f["detail"] for f in faults), faults

    # The real seam is untouched: its turn rows equal those of the clean copy.
    assert _rows(doc, OTHER, case.fixture_id) == _rows(doc, OTHER, BY_NAME["clean"].fixture_id)

    # The faulty seam: faulted turns are silence (or, for claude-code's lenient parse, the text);
    # clean turns carry the canned answer.  The other fault seam behaves on this fixture.
    for seam in (EXEC_SEAM, STREAM_SEAM):
        rows = _rows(doc, seam, case.fixture_id)
        assert set(rows) == set(mixed.user_turns)
        for turn, row in rows.items():
            if seam != case.seam:
                injects = True
            else:
                injects = case.faulted_turn_injects if (case.fixture_id, turn) in expected else case.clean_turn_injects
            assert (CANNED_SLUG in row["injected_slugs"]) is injects, (seam, turn, row)
            if not injects:
                assert row["injected_tokens"] == 0, (seam, turn, row)


def test_the_real_seam_matches_gbrain(mixed: MixedRun, reference: Path) -> None:
    lines = [json.loads(line) for line in
             (reference / "turns" / "gbrain-turns-handauthored.jsonl").read_text().splitlines()]
    theirs = {r["turn_id"]: r["injected_slugs"] for r in lines
              if r.get("harness") == OTHER and r.get("fixture_id") == SOURCE_FIXTURE and "turn_id" in r}
    ours = {t: r["injected_slugs"] for t, r in _rows(mixed.doc, OTHER, BY_NAME["clean"].fixture_id).items()}
    assert ours == theirs


def test_timeouts_kill_the_hook_and_discard_its_output(mixed: MixedRun) -> None:
    pids = [int(p.read_text()) for p in mixed.state_of("hang").glob("hang-*.pid")]
    assert len(pids) >= len(mixed.user_turns) + 1  # every call hung, SessionStart included
    assert not [p for p in pids if _pid_alive(p)], "a timed-out hook survived the run"


def test_leaked_children_die_with_the_hook(mixed: MixedRun) -> None:
    pids = [int(p.read_text()) for p in mixed.state_of("leak_child").glob("child-*.pid") if p.read_text()]
    assert len(pids) >= len(mixed.user_turns)
    assert not [p for p in pids if _pid_alive(p)], "a hook's leaked child outlived the run"


def test_stream_workers_are_killed_and_respawned(mixed: MixedRun) -> None:
    all_pids = [int(p.read_text()) for p in mixed.state.glob("stream-*.pid")]
    assert not [p for p in all_pids if _pid_alive(p)], "a stream worker outlived the run"
    for name in ("stream_hang", "stream_die"):
        # The faulted turn costs its worker: the log shows the turns after it answered by another one.
        log = [json.loads(line) for line in (mixed.state_of(name) / "stream-calls.log").read_text().splitlines()]
        fault_pid = next(e["pid"] for e in log if e.get("faulted"))
        later = [e["pid"] for e in log[log.index(next(e for e in log if e.get("faulted"))) + 1:]]
        assert later and fault_pid not in later, (name, log)


def test_infra_errors_are_retried_and_crashes_are_not(mixed: MixedRun) -> None:
    def prompt_calls(name: str) -> int:
        log = (mixed.state_of(name) / "calls.log").read_text().splitlines()
        return sum(1 for line in log if json.loads(line)["event"] == "UserPromptSubmit")

    prompts = len(mixed.user_turns)
    # db_lost: one good prompt, every later one tried 3 times (tenacity) before it is recorded.
    assert prompt_calls("db_lost") == 1 + 3 * (prompts - 1)
    # A crash is the seam's own answer: graded once, never retried.
    assert prompt_calls("crash_on_turn") == prompts

