"""The image-backed memory provider (memory/image.py) against real processes: every way an operations
command can go wrong is a ``seam_fault`` refusal plus one fault, and an honest answer is parsed as sent."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

import pytest
from brainbench.memory.image import MAX_DEPTH, SEAM_FAULT, ImageMemory, json_depth
from brainbench.models import memory as m
from brainbench.models.hook_io import HookOutcome
from brainbench.models.seed import BrainContract

CAP = 1024 * 1024  # the executors' output cap, enforced here as they do


def run_sh(argv: Sequence[str], stdin: bytes, env: Mapping[str, str], timeout_s: float) -> HookOutcome:
    """A real process, as the seam's supervised exec runs it: stdin in, stdout/stderr out, killed at the timeout."""
    started = time.monotonic()
    try:
        done = subprocess.run(list(argv), input=stdin, capture_output=True, timeout=timeout_s, env=dict(env),
                              check=False)
    except subprocess.TimeoutExpired:
        return HookOutcome(None, b"", b"", True, (time.monotonic() - started) * 1000)
    ms = (time.monotonic() - started) * 1000
    if len(done.stdout) > CAP:
        return HookOutcome(None, b"", b"", False, ms, oversize=f"stdout over {CAP} bytes")
    return HookOutcome(done.returncode, done.stdout, done.stderr, False, ms)


def memory(script: str, timeout_s: float = 5.0) -> ImageMemory:
    return ImageMemory(run_sh, ["/bin/sh", "-c", script], {"PATH": "/usr/bin:/bin"}, timeout_s)


@pytest.mark.parametrize(("script", "fault_class", "words"), [
    ("echo boom >&2; exit 3", "adapter_crash", "exited 3; stderr tail: boom"),
    ("sleep 5", "adapter_timeout", "timed out after 0.5 s"),
    ("head -c 2000000 /dev/zero", "oversize", "killed: stdout over"),
    ("printf '\\377\\376'", "contract_violation", "not UTF-8"),
    ("true", "contract_violation", "answered nothing"),
    ("echo 'not json'", "contract_violation", "not one JSON value"),
    ("awk 'BEGIN { for (i = 0; i < 100000; i++) printf \"[\"; print \"\" }'", "contract_violation",
     f"nested deeper than {MAX_DEPTH}"),
    ("printf '{\"op\": \"recall\", \"ok\": true, \"message\": \"'; head -c 600000 /dev/zero | tr '\\000' y; echo '\"}'",
     "oversize", "the cap is"),
    ("echo '[1, 2]'", "contract_violation", "answered list, not an object"),
    ("echo '{\"op\": \"settle\", \"ok\": true}'", "contract_violation", "answered op 'settle' to a recall request"),
    ("echo '{\"op\": \"recall\", \"ok\": true, \"items\": [{\"kind\": \"fact\"}]}'", "contract_violation",
     "fails the outcome shape at items.0"),
])
def test_every_misbehaviour_is_a_seam_fault(script: str, fault_class: str, words: str) -> None:
    ops = memory(script, timeout_s=0.5 if "sleep" in script else 5.0)
    answer = ops.perform(m.Recall(entity="people/x"))
    assert isinstance(answer, m.Read) and (answer.ok, answer.code) == (False, SEAM_FAULT)
    assert [f.fault_class for f in ops.faults] == [fault_class]
    assert words in ops.faults[0].detail, ops.faults[0].detail
    assert answer.message == ops.faults[0].detail[:500]


def test_an_honest_answer_and_an_honest_unsupported_pass_through() -> None:
    reader = memory("cat >/dev/null; echo '{\"op\": \"recall\", \"ok\": true, \"items\": [{\"kind\": \"fact\", "
                    "\"id\": 4, \"source_id\": \"default\", \"text\": \"t\", \"trust_tier\": \"agent_written\", "
                    "\"origin\": \"write-back\", \"label\": \"l\", \"provenance\": \"p\", \"session_id\": \"s\", "
                    "\"page_slug\": \"conversations/x\"}]}'")
    read = reader.perform(m.Recall(page_slug="conversations/x"))
    assert isinstance(read, m.Read) and read.ok and reader.faults == []
    assert (read.items[0].provenance, read.items[0].session_id, read.items[0].page_slug) == (
        "p", "s", "conversations/x")
    # The request reaches the command as JSON on stdin, its verb in op.
    script = ("import json, sys; r = json.load(sys.stdin); print(json.dumps({'op': r['op'], 'ok': False, "
              "'code': 'unsupported', 'message': r['actor'] + ' ' + r['op']}))")
    echo = ImageMemory(run_sh, [sys.executable, "-c", script], {}, 5.0)
    refused = echo.perform(m.Confirm(actor="owner", ref=m.RowRef(table="facts", id=1), interactive=True))
    assert (refused.ok, refused.code, refused.message) == (False, "unsupported", "owner confirm")
    assert echo.faults == []


def test_declared_verbs_reach_the_command_and_the_others_are_answered_unsupported_without_a_call(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    calls = tmp_path / "calls"
    script = (f"import json, sys; r = json.load(sys.stdin); open({str(calls)!r}, 'a').write(r['op'] + '\\n'); "
              "print(json.dumps({'op': r['op'], 'ok': True, 'items': []}))")
    contract = BrainContract.model_validate({"version": 2, "seed": ["seed"], "operations_verbs": ["recall"],
                                             "operations": [sys.executable, "-c", script]})
    ops = ImageMemory.of(run_sh, contract, {})
    read = ops.perform(m.Recall(entity="people/x"))
    assert isinstance(read, m.Read) and read.ok
    refused = ops.perform(m.Confirm(actor="owner", ref=m.RowRef(table="facts", id=1), interactive=True))
    assert isinstance(refused, m.Confirmed) and (refused.ok, refused.code) == (False, "unsupported")
    assert "not among the image's operations_verbs (recall)" in (refused.message or "")
    assert calls.read_text() == "recall\n" and ops.faults == []  # confirm never started the command
    # Without the field every verb goes to the command, as before.
    everything = ImageMemory.of(run_sh, contract.model_copy(update={"operations_verbs": None}), {})
    everything.perform(m.Settle())
    assert calls.read_text() == "recall\nsettle\n"


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth('{"a": "[[[[{{{{", "b": [[1]]}') == 3
    assert json_depth('"\\"[["') == 0


def test_a_system_without_namespaces_is_graded_not_faulted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every verb `unsupported` (gbrain v0.46 has no trust operations): open_namespace's honest refusal is no
    fault of the seam; the steps still run in the fixture's own source and each records `unsupported`."""
    import shutil
    from pathlib import Path

    from brainbench.corpus.loader import load_corpus
    from brainbench.orchestrator.image_trust import scenario_of

    trust = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust"
    for kind in ("fixtures", "gold"):
        (tmp_path / kind).mkdir()
        for path in (trust / kind).glob("*trust-001*"):
            shutil.copy(path, tmp_path / kind)
    (item,) = load_corpus(tmp_path / "fixtures", tmp_path / "gold").fixtures
    script = ("import json, sys; r = json.load(sys.stdin); "
              "print(json.dumps({'op': r['op'], 'ok': False, 'code': 'unsupported'}))")
    ops = ImageMemory(run_sh, [sys.executable, "-c", script], {}, 5.0)
    scenario, why = scenario_of(ops, None, item, True)
    assert why is None and ops.faults == []
    codes = {rec.outcome.code for rec in scenario.records.values() if rec.outcome is not None}
    assert codes == {"unsupported"}, codes
