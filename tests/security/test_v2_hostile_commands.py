"""A hostile seed contract v2 image: its write-back and operations commands crash, hang, lie and answer
huge or deeply nested JSON, and its Stop hook crashes.  Behind codex, in a real run next to our honest
adapters, every one of those is a fault of codex on that fixture (its cells fail), never a runner crash,
and the honest seams' cells and turn rows are exactly a clean run's.

Which misbehaviour comes is chosen by the request (the op) or the fixture, so one run meets them all:

* write_back: exit 3 (a write-back fixture), a hang past its 2 s timeout (a continuity writer);
* operations: recall prints 2 MB (over the executors' output cap), fact_state a valid 600 KB JSON
  answer (over the answer cap), open_namespace answers another verb, get_page/search a wrong shape,
  put_page/owner_write 100,000 nested brackets, connector_ingest exits 3, purge hangs, confirm answers
  ``unsupported`` after writing anyway; the rest answer an honest ``unsupported``;
* the hook: ``Stop`` exits 4 (the image declares it); every prompt it answers with silence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from container_kit import CLIENT, needs_docker, repo_root
from image_build import build_image  # type: ignore[import-not-found]

pytestmark = [needs_docker, pytest.mark.timeout(1200)]
BASE = "brainbench/example-base:bookworm"  # Debian with psql and jq
FIXTURES = ("wb-001-pricing-concern", "cont-001-widget-pass-writer", "cont-001-widget-pass-reader", "gen-trust-001",
            "gen-state-001", "gen-del-001", "gen-poison-agent-001", "kta-001-deal-recall")
HONEST = ("claude-code", "openclaw")

INIT = """#!/bin/sh
set -eu
psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE memo (doc text)" >/dev/null
"""
SEED = """#!/bin/sh
cat >/dev/null
"""
HOOK = """#!/bin/sh
event=$(jq -r '.hook_event_name // ""' 2>/dev/null)
[ "$event" = "Stop" ] && { echo "stop: on purpose" >&2; exit 4; }
exit 0
"""
WRITE_BACK = """#!/bin/sh
cat >/dev/null
case "${BRAINBENCH_FIXTURE:-}" in
  *writer*) sleep 60 ;;
  *) echo "write-back: crashing on purpose" >&2; exit 3 ;;
esac
"""
OPERATIONS = """#!/bin/sh
op=$(jq -r '.op // ""' 2>/dev/null)
case "$op" in
  recall) head -c 2000000 /dev/zero | tr '\\000' x ;;
  fact_state) printf '{"op": "fact_state", "ok": true, "message": "'; head -c 600000 /dev/zero | tr '\\000' y;
              echo '"}' ;;
  open_namespace) echo '{"op": "settle", "ok": true}' ;;
  get_page|search) echo '{"op": "'"$op"'", "ok": "yes", "items": 7}' ;;
  remember|fact_id_by_claim) echo '{"op": "'"$op"'", "ok": true, "ref": {"table": "facts", "id": 1}}' ;;
  put_page|owner_write) awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' ;;
  connector_ingest) echo "ingest: crashing on purpose" >&2; exit 3 ;;
  purge) sleep 60 ;;
  confirm) psql "$BRAINBENCH_DATABASE_URL" -X -q -c "INSERT INTO memo VALUES ('confirmed anyway')" >/dev/null
           echo '{"op": "confirm", "ok": false, "code": "unsupported"}' ;;
  *) printf '{"op": "%s", "ok": false, "code": "unsupported"}\\n' "$op" ;;
esac
"""
LABEL = {"version": 2, "init": ["/opt/memo/init"], "seed": ["/opt/memo/seed"],
         "write_back": ["/opt/memo/write-back"], "operations": ["/opt/memo/operations"],
         "events": {"codex": ["SessionStart", "UserPromptSubmit", "Stop"]},
         "init_timeout_s": 30, "seed_timeout_s": 10, "write_back_timeout_s": 2, "operations_timeout_s": 2}


@pytest.fixture(scope="module")
def image() -> str:
    label = json.dumps(json.dumps(LABEL))
    return build_image(CLIENT, "bbtest-v2-hostile-commands:i28", {
        "Dockerfile": f"FROM {BASE}\nCOPY init seed hook write-back operations /opt/memo/\n"
                      f"LABEL io.brainbench.brain={label}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "init": INIT, "seed": SEED, "hook": HOOK, "write-back": WRITE_BACK, "operations": OPERATIONS})


def _run(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    selection = [a for f in FIXTURES for a in ("--fixture", f)]
    cmd = [sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--jobs", "1", *selection, "--out", str(out),
           "--ledger", str(out.parent / "ledger.jsonl"), *args]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1100, check=False, env=env, cwd=repo_root())


def _honest(doc: dict[str, Any]) -> tuple[list[Any], list[Any], Any]:
    cells = [c for c in doc["cells"] if c["harness"] in HONEST]
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"] if r["harness"] in HONEST]
    trust = [(t["fixture_id"], t["shared"], *({h: v for h, v in t[arm].items() if h in HONEST}
                                             for arm in ("protections", "default")))
             for t in doc["_meta"]["trust"]]
    return cells, rows, trust


def test_hostile_v2_commands_are_faults_of_their_seam_only(image: str, tmp_path: Path) -> None:
    (tmp_path / "clean").mkdir()
    clean = _run(tmp_path / "clean" / "r.json")
    assert clean.returncode == 0, clean.stderr[-3000:]
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.codex]\nimage = "{image}"\ntimeout_s = 4\n')
    proc = _run(tmp_path / "r.json", "--seams", str(seams))
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1, 2), proc.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["_meta"]["run"]["complete"] is True

    faults = doc["_meta"]["faults"]
    assert {f["harness"] for f in faults} == {"codex"}, faults
    details = [f"{f['fault_class']}: {f['detail']}" for f in faults]

    def seen(fault_class: str, words: str) -> bool:
        return any(d.startswith(fault_class) and words in d for d in details)

    assert seen("adapter_crash", "write_back (/opt/memo/write-back) exited 3"), details
    assert seen("adapter_timeout", "write_back (/opt/memo/write-back) timed out after 2 s"), details
    assert seen("oversize", "on recall was killed"), details
    assert seen("oversize", "on fact_state answered"), details
    assert seen("contract_violation", "answered op 'settle' to a open_namespace request") or \
        seen("contract_violation", "would not open a namespace"), details
    assert seen("contract_violation", "nested deeper than 32"), details
    assert seen("contract_violation", "fails the outcome shape"), details
    assert seen("adapter_crash", "on connector_ingest exited 3"), details
    assert seen("adapter_timeout", "on purge timed out"), details
    assert seen("adapter_crash", "exit 4: stop: on purpose"), details  # the Stop event it declared

    # Its cells are graded and fail; none is n/a (it declares every command).
    codex = {c["suite"]: c for c in doc["cells"] if c["harness"] == "codex"}
    assert {"write-back", "continuity", "trust", "state-resolution", "poisoning", "deletion"} <= set(codex)
    assert codex["write-back"]["metrics"]["write_back_fidelity"] == 0
    assert codex["deletion"]["gold_failed"] == codex["deletion"]["gold_total"] > 0
    assert not doc["_meta"].get("not_applicable")
    # The honest seams are exactly what a run without the image gives.
    assert _honest(doc) == _honest(json.loads((tmp_path / "clean" / "r.json").read_text()))


def test_doctor_fails_each_broken_v2_command_in_its_own_check(image: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "doctor", "--image", image, "--harness", "codex"],
                          capture_output=True, text=True, timeout=600, check=False, env={**env, "COLUMNS": "250"},
                          cwd=repo_root())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    assert "seed contract write_back (exec) │ FAIL" in text and "exited 3" in text, text
    assert "seed contract operations (exec) │ FAIL" in text, text
    assert "seed contract unsupported is honest (exec) │ FAIL" in text, text
    assert "answered unsupported but changed its store: confirm" in text, text
    assert "lifecycle event Stop (exec) │ FAIL │ adapter_crash: exit 4: stop: on purpose" in text, text
