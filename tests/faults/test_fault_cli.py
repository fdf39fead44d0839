"""Fault injection through the real CLI: one misbehaving program behind ONE seam per run.

Each case runs ``python -m brainbench.cli run`` on a two-fixture know-to-ask corpus
with ``tests/faults/hooks/misbehave.py`` (exec mode, via BRAINBENCH_SEAM_COMMAND_<SEAM>)
or ``stream_misbehave.py`` (stream mode, via ``--seams``) behind one seam, and
checks the README's "Failure semantics" table end to end: the fault class of every
turn, the scoreboard's SEAM FAULTS block, exit 2, the other seam untouched.

Speed: all runs share the session's embedded Postgres (``--database-url``) and run
four at a time from one module fixture; the tests then only read the results.
The faulty seam gets a short per-seam ``timeout_s``; the real seams keep a generous
``--timeout`` so a loaded machine cannot turn their cold start into a fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

HOOKS = Path(__file__).parent / "hooks"
FIXTURE_IDS = ("kta-001-deal-recall", "ms-002-nondefault-active")
OTHER = "openclaw"  # the seam that must not notice anything
REAL_TIMEOUT = "20"
CANNED_SLUG = "fault/canned"

# (fixture_id, turn_id) → fault class
Expected = dict[tuple[str, int], str]
UserTurns = dict[str, list[int]]


def every_call(fault: str) -> Callable[[UserTurns, bool], Expected]:
    """The fault hits every call, SessionStart (turn 0) included when the seam has one."""
    def expect(turns: UserTurns, session_start: bool) -> Expected:
        out = {(fid, t): fault for fid, ids in turns.items() for t in ids}
        if session_start:
            out.update({(fid, 0): fault for fid in turns})
        return out
    return expect


def nth_prompt(fault: str, n: int) -> Callable[[UserTurns, bool], Expected]:
    return lambda turns, _: {(fid, ids[n - 1]): fault for fid, ids in turns.items()}


def after_prompt(fault: str, n: int) -> Callable[[UserTurns, bool], Expected]:
    return lambda turns, _: {(fid, t): fault for fid, ids in turns.items() for t in ids[n:]}


def no_fault(turns: UserTurns, session_start: bool) -> Expected:
    return {}


@dataclass(frozen=True)
class Case:
    name: str
    seam: str
    behaviour: str
    expect: Callable[[UserTurns, bool], Expected]
    timeout_s: float = 2.0
    env: dict[str, str] = field(default_factory=dict)
    # What a faulted turn delivers: claude-code honours {-prefixed invalid JSON and unknown keys.
    faulted_turn_injects: bool = False
    # What a clean turn of the fault program delivers.
    clean_turn_injects: bool = True
    detail: str = ""
    stream: bool = False


CASES = [
    Case("crash_on_start", "codex", "crash_on_start", every_call("adapter_crash"), detail="crash on start"),
    Case("crash_on_turn", "codex", "crash_on_turn", nth_prompt("adapter_crash", 2), env={"FAULT_TURN": "2"},
         detail="crash on this turn"),
    Case("hang", "codex", "hang", every_call("adapter_timeout"), timeout_s=1.5, detail="no answer within"),
    # 2.2 s of sleep (plus ~0.2 s interpreter start) against a 3 s deadline: graded like any answer.
    Case("sleep_under", "codex", "sleep_under", no_fault, timeout_s=3.0, env={"FAULT_SLEEP_S": "2.2"}),
    Case("partial_json_codex", "codex", "partial_json", every_call("contract_violation"), detail="invalid JSON"),
    Case("partial_json_claude", "claude-code", "partial_json", every_call("contract_violation"),
         faulted_turn_injects=True, detail="invalid JSON"),
    Case("json_garbage_codex", "codex", "json_garbage", every_call("contract_violation"), detail="invalid JSON"),
    Case("json_garbage_claude", "claude-code", "json_garbage", every_call("contract_violation"),
         faulted_turn_injects=True, detail="invalid JSON"),
    Case("unknown_keys_codex", "codex", "unknown_keys", every_call("contract_violation"),
         detail="unknown output keys: brainbenchFaultExtra"),
    Case("unknown_keys_claude", "claude-code", "unknown_keys", every_call("contract_violation"),
         faulted_turn_injects=True, detail="unknown output keys: brainbenchFaultExtra"),
    Case("oversize", "codex", "oversize", every_call("oversize"), detail="the cap is 10000"),
    Case("exit2_stderr", "codex", "exit2_stderr", every_call("blocked"), detail="blocked this prompt"),
    Case("exit2_silent", "codex", "exit2_silent", every_call("blocked"), detail="exit 2 with empty stderr"),
    Case("no_stdin", "codex", "no_stdin", no_fault),
    Case("stderr_only", "codex", "stderr_only", no_fault, clean_turn_injects=False),
    Case("leak_child", "codex", "leak_child", no_fault),
    Case("db_lost", "codex", "db_lost", after_prompt("infra_error", 1), env={"FAULT_AFTER": "1"},
         detail="brain unavailable"),
    Case("stream_hang", "codex", "hang_on_turn", nth_prompt("adapter_timeout", 2), timeout_s=1.5,
         env={"FAULT_TURN": "2"}, detail="no answer within", stream=True),
    Case("stream_die", "codex", "die_on_turn", nth_prompt("adapter_crash", 2), env={"FAULT_TURN": "2"},
         detail="stream process died", stream=True),
]


@dataclass
class Outcome:
    case: Case
    proc: subprocess.CompletedProcess[str]
    doc: dict[str, Any]
    state: Path


def _bench(args: list[str | Path], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    full_env.pop("CI", None)
    for name in ("OPENCLAW", "CLAUDE_CODE", "CODEX"):
        full_env.pop(f"BRAINBENCH_SEAM_COMMAND_{name}", None)
    full_env.update({k: v for k, v in env.items() if k.startswith("BRAINBENCH_SEAM_COMMAND_")})
    return subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *map(str, args)], capture_output=True,
                          text=True, timeout=300, check=False, env=full_env, cwd=cwd)


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _run_case(case: Case, corpus: tuple[Path, Path], db_url: str, root: Path) -> Outcome:
    work = root / case.name
    state = work / "state"
    state.mkdir(parents=True)
    out = work / "result.json"
    seam_env = {"FAULT_STATE_DIR": str(state), **case.env}
    table = [f"[seams.{case.seam}]", f"timeout_s = {case.timeout_s}"]
    env: dict[str, str] = {}
    if case.stream:
        program = [sys.executable, str(HOOKS / "stream_misbehave.py"), case.behaviour]
        table += [f"command = {_toml_list(program)}", 'mode = "stream"']
    else:
        command = f"{sys.executable} {HOOKS / 'misbehave.py'} {case.behaviour}"
        env[f"BRAINBENCH_SEAM_COMMAND_{case.seam.replace('-', '_').upper()}"] = command
    table += [f"[seams.{case.seam}.env]", *(f"{k} = {json.dumps(v)}" for k, v in seam_env.items())]
    seams_file = work / "seams.toml"
    seams_file.write_text("\n".join(table) + "\n")
    proc = _bench(["--fixtures", corpus[0], "--gold", corpus[1], "--out", out, "--suite", "know-to-ask",
                   "--harness", f"{OTHER},{case.seam}", "--timeout", REAL_TIMEOUT, "--jobs", "2",
                   "--database-url", db_url, "--seams", seams_file], env, work)
    doc = json.loads(out.read_text()) if out.exists() else {}
    return Outcome(case, proc, doc, state)


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("fault-corpus"), FIXTURE_IDS)


@pytest.fixture(scope="module")
def user_turns(corpus: tuple[Path, Path]) -> UserTurns:
    out = {}
    for fid in FIXTURE_IDS:
        doc = json.loads((corpus[0] / f"{fid}.fixture.json").read_text())
        out[fid] = [t["turn_id"] for t in doc["turns"] if t["role"] == "user"]
    return out


@pytest.fixture(scope="module")
def runs(corpus: tuple[Path, Path], pg_server: Any,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """One clean baseline (all three seams) plus every fault case, four CLI runs at a time."""
    root = tmp_path_factory.mktemp("fault-runs")
    url = pg_server.admin_url
    baseline = Case("baseline", "codex", "", no_fault)

    def clean() -> Outcome:
        work = root / "baseline"
        work.mkdir()
        out = work / "result.json"
        proc = _bench(["--fixtures", corpus[0], "--gold", corpus[1], "--out", out, "--suite", "know-to-ask",
                       "--timeout", REAL_TIMEOUT, "--jobs", "2", "--database-url", url], {}, work)
        return Outcome(baseline, proc, json.loads(out.read_text()) if out.exists() else {}, work)

    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {"baseline": pool.submit(clean)}
        futures |= {c.name: pool.submit(_run_case, c, corpus, url, root) for c in CASES}
        return {name: f.result() for name, f in futures.items()}


def _cells(doc: dict[str, Any], harness: str) -> list[dict[str, Any]]:
    return [c for c in doc["cells"] if c["harness"] == harness]


def _rows(doc: dict[str, Any], harness: str) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["fixture_id"], r["turn_id"]): {k: v for k, v in r.items() if k != "latency_ms"}
            for r in doc["turn_rows"] if r["harness"] == harness}


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for a reaper is dead for our purpose


def test_clean_baseline_has_no_faults(runs: dict[str, Outcome]) -> None:
    base = runs["baseline"]
    assert base.proc.returncode == 0, base.proc.stderr
    assert base.doc["_meta"]["faults"] == []
    assert "SEAM FAULTS" not in base.proc.stdout


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault_case(case: Case, runs: dict[str, Outcome], user_turns: UserTurns) -> None:
    run = runs[case.name]
    proc, doc = run.proc, run.doc
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    assert doc, f"no result file written (exit {proc.returncode}): {proc.stderr}"
    assert doc["_meta"]["run"]["complete"] is True

    session_start = case.seam == "codex"
    expected = case.expect(user_turns, session_start)
    faults = doc["_meta"]["faults"]
    got = {(f["fixture_id"], f["turn_id"]): f["fault_class"] for f in faults}
    assert got == expected, faults
    assert len(faults) == len(expected), "one fault per faulted turn, none duplicated"
    assert {f["harness"] for f in faults} <= {case.seam}
    assert all(case.detail in f["detail"] for f in faults), faults

    # Exit code and scoreboard: any fault → 2 and a SEAM FAULTS block with per-class counts.
    if expected:
        assert proc.returncode == 2, proc.stderr
        assert f"**SEAM FAULTS ({len(expected)})**" in proc.stdout, proc.stdout
        for cls in set(expected.values()):
            count = sum(1 for v in expected.values() if v == cls)
            assert f"- {case.seam}: {cls} × {count}" in proc.stdout, proc.stdout
        assert doc["_meta"]["run"]["fault_counts"] == {cls: list(expected.values()).count(cls)
                                                for cls in set(expected.values())}
    else:
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
        assert "SEAM FAULTS" not in proc.stdout

    # The other seam is untouched: its cells and turn rows equal the clean run's.
    base = runs["baseline"].doc
    assert base, "the clean baseline run failed"
    assert _cells(doc, OTHER) == _cells(base, OTHER)
    assert _rows(doc, OTHER) == _rows(base, OTHER)

    # The faulty seam: faulted turns are silence (or, for claude-code's lenient parse, the text);
    # clean turns carry the canned answer.
    rows = _rows(doc, case.seam)
    assert {k for k in rows} == {(fid, t) for fid, ids in user_turns.items() for t in ids}
    for key, row in rows.items():
        injects = case.faulted_turn_injects if key in expected else case.clean_turn_injects
        assert (CANNED_SLUG in row["injected_slugs"]) is injects, (key, row)
        if not injects:
            assert row["injected_tokens"] == 0, (key, row)


def test_timeouts_kill_the_hook_and_discard_its_output(runs: dict[str, Outcome]) -> None:
    run = runs["hang"]
    pids = [int(p.read_text()) for p in run.state.glob("hang-*.pid")]
    assert len(pids) >= 8  # every call of both fixtures hung (SessionStart included)
    assert not [p for p in pids if _pid_alive(p)], "a timed-out hook survived the run"


def test_leaked_children_die_with_the_hook(runs: dict[str, Outcome]) -> None:
    run = runs["leak_child"]
    pids = [int(p.read_text()) for p in run.state.glob("child-*.pid") if p.read_text()]
    assert len(pids) >= 8
    assert not [p for p in pids if _pid_alive(p)], "a hook's leaked child outlived the run"


def test_stream_workers_are_killed_and_respawned(runs: dict[str, Outcome]) -> None:
    for name in ("stream_hang", "stream_die"):
        run = runs[name]
        pids = [int(p.read_text()) for p in run.state.glob("stream-*.pid")]
        # Each faulted turn costs a worker, and the turns after it are answered by a fresh one.
        assert len(pids) >= 3, (name, pids)
        assert not [p for p in pids if _pid_alive(p)], f"{name}: a stream worker outlived the run"


def test_infra_errors_are_retried_and_crashes_are_not(runs: dict[str, Outcome], user_turns: UserTurns) -> None:
    def prompt_calls(name: str) -> int:
        log = (runs[name].state / "calls.log").read_text().splitlines()
        return sum(1 for line in log if json.loads(line)["event"] == "UserPromptSubmit")

    prompts = sum(len(ids) for ids in user_turns.values())
    # db_lost: one good prompt per fixture, every later one tried 3 times (tenacity) before it is recorded.
    lost = prompts - len(user_turns)
    assert prompt_calls("db_lost") == len(user_turns) + 3 * lost
    # A crash is the seam's own answer: graded once, never retried.
    assert prompt_calls("crash_on_turn") == prompts
