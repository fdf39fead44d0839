"""The Docker executor against a real engine: hardening, exec vs stream, timeouts."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from brainbench.executors.base import HookCall, HookOutcome, RunContext, SeamLaunch
from brainbench.executors.docker import DockerConfig, DockerExecutor
from brainbench.executors.docker.provider import DockerSeamProcess
from brainbench.models.sandbox import ResourceLimits

T = TypeVar("T")


def payload(prompt: str, **extra: Any) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": prompt,
                       "cwd": "/tmp", "unknown_future_key": {"x": 1}, **extra}).encode()


def run(fn: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(fn)


def with_seam(image: str, run_id: str, mode: str, body: Callable[[DockerSeamProcess], Awaitable[T]],
              config: DockerConfig | None = None, limits: ResourceLimits | None = None, **launch: Any) -> T:
    async def main() -> T:
        executor = DockerExecutor(config, run_id=run_id)
        try:
            if limits is not None:  # the run's limits arrive once, in the RunContext
                await executor.prepare(RunContext(run_id=run_id, limits=limits,
                                                  database_url=config.database_url if config else None))
            proc = await executor.start(SeamLaunch(seam="openclaw", command=(), mode=mode,  # type: ignore[arg-type]
                                                   image=image, run_id=run_id, **launch))
            assert isinstance(proc, DockerSeamProcess)
            return await body(proc)
        finally:
            await executor.close()

    return run(main)


def context_of(outcome: HookOutcome) -> dict[str, Any]:
    assert outcome.exit_code == 0, outcome
    doc = json.loads(outcome.stdout)
    return json.loads(doc["hookSpecificOutput"]["additionalContext"])


def test_container_is_hardened(hook_image: str, run_id: str, docker_client: Any) -> None:
    async def body(proc: DockerSeamProcess) -> None:
        attrs = docker_client.containers.get(proc.container.id).attrs
        host = attrs["HostConfig"]
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        assert "no-new-privileges:true" in host["SecurityOpt"]
        assert 0 < host["PidsLimit"] <= 1024
        assert 0 < host["Memory"] <= 1 << 30
        assert host["MemorySwap"] == host["Memory"]
        assert host["NetworkMode"] == "none"
        assert host["Init"] is True
        assert "/tmp" in host["Tmpfs"]
        assert attrs["Config"]["User"] not in ("", "0", "root")
        labels = attrs["Config"]["Labels"]
        assert labels["brainbench.run_id"] == run_id
        assert labels["brainbench.seam"] == "openclaw"
        # And from the inside: not root, rootfs not writable, /tmp writable, no network.
        probe = proc.container.exec_run(["/bin/sh", "-c",
                                         "id -u; touch /x 2>/dev/null && echo rootfs-writable; "
                                         "touch /tmp/ok && echo tmp-ok; ls /sys/class/net"])
        out = probe.output.decode()
        assert out.splitlines()[0] != "0"
        assert "rootfs-writable" not in out
        assert "tmp-ok" in out
        assert out.split("tmp-ok", 1)[1].split() == ["lo"]

    with_seam(hook_image, run_id, "exec", body)


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_roundtrip_env_and_stdin(hook_image: str, run_id: str, mode: str) -> None:
    async def body(proc: DockerSeamProcess) -> list[dict[str, Any]]:
        out = []
        for i in range(3):
            o = await proc.call(HookCall(payload(f"hello {i}"), {"BRAINBENCH_SOURCE": f"src-{i}"}, 10))
            assert not o.timed_out and o.infra_error is None
            out.append(context_of(o))
        return out

    seen = with_seam(hook_image, run_id, mode, body)
    assert [s["prompt"] for s in seen] == ["hello 0", "hello 1", "hello 2"]
    # Per-invocation env overlay reaches the hook in both modes.
    assert [s["source"] for s in seen] == ["src-0", "src-1", "src-2"]
    assert all(s["uid"] != 0 for s in seen)
    pids = {s["pid"] for s in seen}
    if mode == "stream":
        assert len(pids) == 1  # one long-lived process
    else:
        assert len(pids) == 3  # one process per call
        import hashlib

        assert seen[0]["stdin_sha256"] == hashlib.sha256(payload("hello 0")).hexdigest()  # verbatim stdin


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_exit_codes_and_stderr(hook_image: str, run_id: str, mode: str) -> None:
    async def body(proc: DockerSeamProcess) -> HookOutcome:
        return await proc.call(HookCall(payload("exit:2"), {}, 10))

    o = with_seam(hook_image, run_id, mode, body)
    assert o.exit_code == 2 and o.stdout == b"" and b"blocked by stand-in" in o.stderr


@pytest.mark.parametrize("raw", [b"", b"{}", b"[1, 2]", b"not json"])
@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_non_object_payloads_fail_open(hook_image: str, run_id: str, mode: str, raw: bytes) -> None:
    async def body(proc: DockerSeamProcess) -> HookOutcome:
        return await proc.call(HookCall(raw, {}, 10))

    o = with_seam(hook_image, run_id, mode, body)
    assert o.infra_error is None and not o.timed_out and o.exit_code == 0
    if raw != b"{}":
        assert o.stdout == b""


def _process_table(proc: DockerSeamProcess) -> str:
    """Every command line running in the seam's container, one per line."""
    return proc.container.exec_run(["/bin/sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' "
                                    "< $p/cmdline; echo; done"]).output.decode()


# A call that times out may take its timeout plus this many ordinary calls of the same seam, measured
# just before it (the kill, the reply and the container round trips): a ratio, so a loaded machine
# widens the bound as much as it slows the calls, while a timeout not enforced (the hook sleeps 30 or
# 60 s) stays far outside it.
KILL_SLACK_CALLS = 20


async def _ordinary_call_s(proc: DockerSeamProcess) -> float:
    """This machine's time, now, for one quick call of the seam (the slowest of three)."""
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        await proc.call(HookCall(payload("quick"), {}, 10))
        times.append(time.monotonic() - t0)
    return max(times)


async def _call_that_times_out(proc: DockerSeamProcess, prompt: str,
                                timeout_s: float) -> tuple[HookOutcome, float, str]:
    """(outcome, wall seconds, process table shortly after) of one call expected to time out."""
    t0 = time.monotonic()
    outcome = await proc.call(HookCall(payload(prompt), {}, timeout_s))
    wall = time.monotonic() - t0
    await anyio.sleep(0.4)  # let the kill land before looking
    return outcome, wall, _process_table(proc)


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_timeout_kills_inside_container_and_discards_output(hook_image: str, run_id: str, mode: str) -> None:
    async def body(proc: DockerSeamProcess) -> tuple[HookOutcome, float, str, HookOutcome, float]:
        quick = await _ordinary_call_s(proc)
        o, wall, ps = await _call_that_times_out(proc, "spawn:30", 1.0)
        after = await proc.call(HookCall(payload("after"), {}, 10))
        return o, wall, ps, after, quick

    o, wall, ps, after, quick = with_seam(hook_image, run_id, mode, body)
    assert o.timed_out is True
    assert o.stdout == b"" and o.stderr == b"" and o.exit_code is None  # output discarded
    assert 1.0 <= wall < 1.0 + max(3.0, KILL_SLACK_CALLS * quick), (wall, quick)
    # Neither the hook nor its child survived: only the idle loop's sleep remains, and in
    # stream mode the pool's other warm worker (started at warm-up), never the killed one.
    assert "sleep 30" not in ps and ps.count("echo_hook") == (1 if mode == "stream" else 0), ps
    # The seam keeps working after a timeout (stream mode restarts its process).
    assert context_of(after)["prompt"] == "after"


def test_wedged_exec_is_killed_from_the_host(hook_image: str, run_id: str) -> None:
    """If the in-container timeout never fires, the host deadline kills the call's processes.

    A negative grace makes the host deadline (30 - 28 = 2 s) come long before the
    in-container timeout (30 s): exactly what a wedged supervisor looks like from outside.
    """
    async def body(proc: DockerSeamProcess) -> tuple[HookOutcome, float, str, str, float]:
        quick = await _ordinary_call_s(proc)
        o, wall, ps = await _call_that_times_out(proc, "spawn:60", 30.0)
        pidfiles = proc.container.exec_run(["/bin/sh", "-c", "ls -a /tmp"]).output.decode()
        return o, wall, ps, pidfiles, quick

    o, wall, ps, pidfiles, quick = with_seam(hook_image, run_id, "exec", body,
                                             limits=ResourceLimits(call_grace_s=-28.0))
    assert o.timed_out is True and o.stdout == b"" and o.exit_code is None
    # The host deadline (2 s), not the in-container timeout (30 s).
    assert 2.0 <= wall < 2.0 + max(6.0, KILL_SLACK_CALLS * quick), (wall, quick)
    assert wall < 30.0, wall
    assert "sleep 60" not in ps and "echo_hook" not in ps and "timeout" not in ps, ps
    assert ".brainbench-exec-" not in pidfiles, pidfiles


def test_output_is_not_truncated_by_transport(hook_image: str, run_id: str) -> None:
    async def body(proc: DockerSeamProcess) -> HookOutcome:
        return await proc.call(HookCall(payload("big:200000", blob="y" * 1_000_000), {}, 20))

    o = with_seam(hook_image, run_id, "exec", body)
    doc = json.loads(o.stdout)
    assert len(doc["hookSpecificOutput"]["additionalContext"]) == 200000


def test_unix_socket_database_is_bind_mounted(hook_image: str, run_id: str, short_scratch: Path) -> None:
    # Stand-in for the embedded Postgres: a Unix socket in a 0700 temp dir.
    root = str(short_scratch)
    path = os.path.join(root, ".s.PGSQL.5432")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    os.chmod(path, 0o777)
    server.listen(4)

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"pong:" + conn.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    url = f"postgresql://postgres@/bb_x?host={root}"

    async def body(proc: DockerSeamProcess) -> HookOutcome:
        return await proc.call(HookCall(payload("socket"), {"BRAINBENCH_DATABASE_URL": url}, 10))

    try:
        o = with_seam(hook_image, run_id, "exec", body, config=DockerConfig(database_url=url))
    finally:
        server.close()
    assert json.loads(o.stdout)["hookSpecificOutput"]["additionalContext"] == "pong:ping"


def test_shared_paths_visible_at_same_path(hook_image: str, run_id: str, short_scratch: Path) -> None:
    run_dir = str(short_scratch)
    transcript = os.path.join(run_dir, "t.jsonl")
    with open(transcript, "w") as f:
        f.write('{"type":"user"}\n')

    async def body(proc: DockerSeamProcess) -> str:
        res = proc.container.exec_run(["cat", transcript])
        return res.output.decode()

    assert with_seam(hook_image, run_id, "exec", body, shared_paths=(run_dir,)) == '{"type":"user"}\n'


def test_production_image_swap(production_image: str, run_id: str) -> None:
    async def body(proc: DockerSeamProcess) -> tuple[HookOutcome, dict[str, Any]]:
        return await proc.call(HookCall(payload("anything"), {}, 10)), proc.describe()

    o, info = with_seam(production_image, run_id, "exec", body)
    assert o.exit_code == 0
    assert json.loads(o.stdout) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                           "additionalContext": "fixed production context"}}
    assert info["image_digest"].startswith("sha256:")
    assert info["command"] == "/usr/local/bin/memory-hook"


def test_close_removes_everything(hook_image: str, run_id: str, labelled_objects: Any) -> None:
    async def body(proc: DockerSeamProcess) -> int:
        return len(labelled_objects(run_id)[0])

    assert with_seam(hook_image, run_id, "stream", body) == 1
    containers, networks = labelled_objects(run_id)
    assert containers == [] and networks == []


def test_the_images_other_commands_go_through_the_call_server(hook_image: str, run_id: str) -> None:
    """The seed contract's commands (run_command) run in the seam's call server, not a ``docker exec``
    each: same stdin, env, exit status and output, a fraction of the engine's time."""
    from brainbench.executors.docker.exec_call import exec_call

    # What the command's parent is: the call server, or the supervisor of a docker exec (`timeout -s KILL`).
    command = ["sh", "-c", 'cat; echo "$WHO" >&2; tr "\\0" " " </proc/$PPID/cmdline >&2; exit 4']

    async def body(proc: DockerSeamProcess) -> tuple[list[HookOutcome], HookOutcome]:
        await proc.call(HookCall(payload("warm"), {}, 10))  # the call server is up
        call = HookCall(b"the document", {"WHO": "seed"}, 10)
        served = [await anyio.to_thread.run_sync(proc.run_command, command, call) for _ in range(3)]
        by_exec = await anyio.to_thread.run_sync(exec_call, proc.box, call, command)
        return served, by_exec

    served, by_exec = with_seam(hook_image, run_id, "exec", body)
    for outcome in [*served, by_exec]:
        assert (outcome.exit_code, outcome.stdout) == (4, b"the document"), outcome
        assert outcome.stderr.startswith(b"seed\n"), outcome
    assert b"timeout -s KILL" in by_exec.stderr  # the control: a docker exec's supervisor
    assert all(b"timeout" not in o.stderr for o in served), [o.stderr for o in served]
