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
from brainbench.ownership import current_owner, owner_state, start_ticks, sweep_lock_files

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


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_two_owners_that_are_pid_1_of_their_namespaces_each_hold_their_own_lock(tmp_path: Path) -> None:
    # Every container's or unshare's runner is pid 1: a lock file named by pid alone was one
    # file for all of them, so the second had no lock and a dead one's could speak for a live one.
    first, first_owner = _spawn(["unshare", "--pid", "--fork", "--kill-child"], tmp_path)
    second, second_owner = _spawn(["unshare", "--pid", "--fork", "--kill-child"], tmp_path)
    try:
        assert first_owner.pid == second_owner.pid == 1
        assert first_owner.lock_path and second_owner.lock_path
        assert first_owner.lock_path != second_owner.lock_path
        assert owner_state(first_owner) == owner_state(second_owner) == "alive"
        first.kill()
        first.wait()
        assert _wait_dead(first_owner) == "dead"
        assert owner_state(second_owner) == "alive"
    finally:
        for proc in (first, second):
            proc.kill()
            proc.wait()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_an_owner_under_another_namespaces_proc_records_its_own_start_time(tmp_path: Path) -> None:
    # Under `unshare --pid` without its own /proc, /proc/1 is the host's init, not this process.
    code = ("import os, time; from brainbench.ownership import current_owner; "
            "print(current_owner().label(), os.readlink('/proc/self'), flush=True); time.sleep(60)")
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(tmp_path)}
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c", code],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        label, host_pid = proc.stdout.readline().rsplit(" ", 1)
        owner = Owner.model_validate(json.loads(label))
        assert owner.pid == 1
        assert owner.start_ticks == start_ticks(int(host_pid)) != start_ticks(1)
    finally:
        proc.kill()
        proc.wait()
