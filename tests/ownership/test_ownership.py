"""Owner identity: a live owner is never taken for dead, in this pid namespace or another one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner, owner_state, sweep_lock_files

CHILD = (
    "import sys, time; from brainbench.ownership import current_owner; "
    "print(current_owner().label(), flush=True); time.sleep(60)"
)


def _spawn(prefix: list[str], scratch: Path) -> tuple[subprocess.Popen[str], Owner]:
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(scratch)}
    proc = subprocess.Popen([*prefix, sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    owner = Owner.model_validate(json.loads(proc.stdout.readline()))
    return proc, owner


def _wait_dead(owner: Owner) -> str:
    for _ in range(50):
        state = owner_state(owner)
        if state == "dead":
            return state
        time.sleep(0.1)
    return owner_state(owner)


def test_my_own_identity_is_alive() -> None:
    me = current_owner()
    assert me.pid == os.getpid() and me.start_ticks > 0
    assert owner_state(me) == "alive"
    assert Owner.from_label(me.label()) == me


def test_a_killed_owner_in_this_namespace_is_dead(tmp_path: Path) -> None:
    proc, owner = _spawn([], tmp_path)
    assert owner_state(owner) == "alive"
    proc.kill()
    proc.wait()
    assert _wait_dead(owner) == "dead"


def test_a_reused_pid_is_not_the_owner() -> None:
    me = current_owner()
    impostor = me.model_copy(update={"start_ticks": me.start_ticks + 1})
    assert owner_state(impostor) == "dead"


def test_another_kernel_is_never_provably_dead() -> None:
    other = current_owner().model_copy(update={"boot_id": "another-machine"})
    assert owner_state(other) == "unknown"
    assert owner_state(None) == "unknown"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_an_owner_in_another_pid_namespace_is_judged_by_its_lock(tmp_path: Path) -> None:
    proc, owner = _spawn(["unshare", "--pid", "--fork", "--kill-child"], tmp_path)
    assert owner.pid_ns != current_owner().pid_ns
    assert owner_state(owner) == "alive"
    assert sweep_lock_files(tmp_path) == []  # a held lock is never swept
    proc.kill()
    proc.wait()
    assert _wait_dead(owner) == "dead"
    assert [p.name for p in sweep_lock_files(tmp_path)] == [Path(owner.lock_path or "").name]
    assert owner_state(owner) == "unknown"  # gone without a trace: no longer provable either way
