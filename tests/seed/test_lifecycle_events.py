"""Seed contract v2's lifecycle events, called during replay as each harness calls them.

A real hook process (the local executor, exec mode) records every call it gets: the event, and
the transcript as it stood then (Claude Code's transcript file, Codex's rollout, OpenClaw's
message list).  The replay of a real fixture must call the declared events in the harness's
order, with the transcript growing turn by turn, and no undeclared one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.corpus.loader import load_corpus
from brainbench.executors.base import SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.registry import SEAMS
from brainbench.orchestrator.replay import replay_fixture

REPO = Path(__file__).resolve().parents[2]
# Appends {event, prior} per call to $RECORD, where prior counts what the harness handed over.
RECORDER = r"""
import json, os, sys
doc = json.loads(sys.stdin.read() or "{}")
prior = None
path = doc.get("transcript_path")
if path and os.path.exists(path):
    prior = sum(1 for line in open(path) if line.strip())
elif "messages" in doc:
    prior = len(doc["messages"])
with open(os.environ["RECORD"], "a") as out:
    out.write(json.dumps({"event": doc.get("hook_event_name"), "prior": prior}) + "\n")
if doc.get("hook_event_name") == "Stop" and os.environ.get("CRASH_ON_STOP"):
    sys.stderr.write("stop: crashing on purpose\n")
    sys.exit(3)
"""


def _replay(harness: str, events: list[str] | None, tmp: Path, crash: bool = False) -> tuple[list[Any], Any]:
    item = load_corpus(REPO / "fixtures", REPO / "gold").by_id()["kta-001-deal-recall"]
    tmp.mkdir(parents=True, exist_ok=True)
    hook = tmp / "recorder.py"
    hook.write_text(RECORDER)
    record = tmp / f"{harness}.jsonl"

    async def main() -> Any:
        executor = LocalExecutor(pool_size=1)
        process = await executor.start(SeamLaunch(seam=harness, command=(sys.executable, str(hook)), mode="exec"))
        try:
            env = {"RECORD": str(record), "CLAUDE_CONFIG_DIR": str(tmp / "claude"),
                   **({"CRASH_ON_STOP": "1"} if crash else {})}
            return await replay_fixture(item, SEAMS[harness], process, suites=["know-to-ask"], env=env,
                                        workdir=tmp / harness, timeout_s=30, slug_sources={}, events=events)
        finally:
            await process.stop()

    replay = anyio.run(main)
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    return calls, replay


def _turns() -> list[str]:
    item = load_corpus(REPO / "fixtures", REPO / "gold").by_id()["kta-001-deal-recall"]
    return [t.role for t in item.public_turns()]


def test_claude_code_gets_session_start_stop_after_each_answer_and_session_end(tmp_path: Path) -> None:
    calls, replay = _replay("claude-code", ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"], tmp_path)
    expected = ["SessionStart"] + [{"user": "UserPromptSubmit", "assistant": "Stop"}[r] for r in _turns()] + [
        "SessionEnd"]
    assert [c["event"] for c in calls] == expected
    # The transcript grows: each Stop sees more lines than the prompt before it.
    stops = [c["prior"] for c in calls if c["event"] == "Stop"]
    prompts = [c["prior"] for c in calls if c["event"] == "UserPromptSubmit"]
    assert stops == sorted(stops) and all(s > p for s, p in zip(stops, prompts, strict=False)), calls
    assert calls[-1]["prior"] >= stops[-1]
    assert replay.faults == [] and replay.calls == len(calls)


@pytest.mark.parametrize(("harness", "after", "end"), [("codex", "Stop", None),
                                                       ("openclaw", "agent_end", "session_end")])
def test_codex_and_openclaw_get_their_own_events(harness: str, after: str, end: str | None, tmp_path: Path) -> None:
    declared = [e for e in ("SessionStart", "Stop", "agent_end", "session_end") if e in (after, end, "SessionStart")]
    calls, _ = _replay(harness, declared, tmp_path)
    events = [c["event"] for c in calls]
    assert events.count(after) == _turns().count("assistant")
    assert (events[-1] == end) if end else (events[-1] in (after, "UserPromptSubmit"))
    assert ("SessionStart" in events) == (harness == "codex")  # openclaw has no SessionStart to declare


def test_undeclared_events_are_never_called_and_a_crashing_stop_is_a_fault(tmp_path: Path) -> None:
    calls, _ = _replay("claude-code", None, tmp_path)
    assert {c["event"] for c in calls} == {"UserPromptSubmit"}
    calls, replay = _replay("claude-code", ["Stop"], tmp_path / "crash", crash=True)
    assert {f.fault_class for f in replay.faults} == {"adapter_crash"}
    assert all("stop: crashing on purpose" in f.detail for f in replay.faults)
    assert len(replay.faults) == _turns().count("assistant")
