"""One behaviour suite that every provider and mode must pass (issue: executor v2).

Parametrised over local and docker × exec and stream (and, for Docker exec mode, the
static call server and the ``docker exec`` fallback), and the sidecar provider against a
listening call server (Python and static) run as a process here, with the same hook
(hooks/contract_hook.py): warm-up, exit codes, stderr, env, each call's cwd, timeouts
that discard output and kill the hook's whole process group, output over the cap, concurrent calls, and a
close after an interrupted call that leaves nothing running.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.executors.base import Executor, HookCall, HookOutcome, RunContext, SeamLaunch, SeamProcess
from brainbench.executors.docker.static_helper import helper_binary
from brainbench.executors.local import LocalExecutor
from brainbench.executors.sidecar import SidecarExecutor
from brainbench.harnesses.grading import grade
from engine_probe import BASE, docker_or_reason  # type: ignore[import-not-found]
from processes import live_processes  # type: ignore[import-not-found]

HOOK = Path(__file__).parent / "hooks" / "contract_hook.py"
IMAGE = "bbtest-exec-contract:latest"


CLIENT, REASON = docker_or_reason()
# "docker-static": exec mode through the static call server (call_server.c), what images
# without python3 get; "docker-fallback": ``docker exec`` per call, where no call server can
# run.  Both must behave exactly like the Python call server.
STATIC = None if CLIENT is None else helper_binary()
PROVIDERS = [pytest.param(("local", m), id=f"local-{m}") for m in ("exec", "stream")] + [
    pytest.param((k, m), id=f"{k}-{m}", marks=pytest.mark.skipif(CLIENT is None, reason=REASON))
    for k, m in (("docker", "exec"), ("docker", "stream"), ("docker-fallback", "exec"))] + [
    pytest.param(("docker-static", "exec"), id="docker-static-exec", marks=pytest.mark.skipif(
        CLIENT is None or STATIC is None,
        reason=REASON or "this host cannot build the static call server (cc -static)"))] + [
    pytest.param(("sidecar", "exec"), id="sidecar-python-exec"),
    pytest.param(("sidecar-static", "exec"), id="sidecar-static-exec", marks=pytest.mark.skipif(
        helper_binary() is None, reason="this host cannot build the static call server (cc -static)"))]
VARIANTS = {"docker": "auto", "docker-static": "static", "docker-fallback": "off"}


@pytest.fixture(scope="session")
def contract_image() -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in {"Dockerfile": f"FROM {BASE}\nCOPY hook.py /hook.py\nUSER 10001:10001\n"
                                         'ENTRYPOINT ["python3", "/hook.py"]\n',
                           "hook.py": HOOK.read_text()}.items():
            raw = data.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(raw), 0o755
            tar.addfile(info, io.BytesIO(raw))
    buf.seek(0)
    CLIENT.images.build(fileobj=buf, custom_context=True, tag=IMAGE, rm=True, pull=False)
    return IMAGE


def payload(prompt: str) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/tmp",
                       "prompt": prompt}).encode()


class Harness:
    """One provider × mode under test, with a way to look at what it left running."""

    def __init__(self, kind: str, mode: str, request: pytest.FixtureRequest,
                 shared: tuple[str, ...] = ()) -> None:
        self.mode = mode
        self.fallback = kind == "docker-fallback"
        self.static = kind == "docker-static"
        self.kind = "docker" if kind.startswith("docker") else "sidecar" if kind.startswith("sidecar") else kind
        self.shared = shared
        self.run_id = f"bbtest-exec-{uuid.uuid4().hex[:8]}"
        if self.kind == "sidecar":
            self.image = None
            self.command = ()
            self.executor = SidecarExecutor({"codex": ("127.0.0.1", self._listen(kind, request))},
                                            request.getfixturevalue("tmp_path"))
        elif self.kind == "docker":
            from brainbench.executors.docker import DockerConfig, DockerExecutor

            self.image: str | None = request.getfixturevalue("contract_image")
            self.executor: Executor = DockerExecutor(DockerConfig(call_server=VARIANTS[kind]),  # type: ignore[arg-type]
                                                     run_id=self.run_id)
            self.command: tuple[str, ...] = ("python3", "/hook.py")
        else:
            self.image = None
            self.executor = LocalExecutor()
            self.command = (sys.executable, str(HOOK))
        if mode == "stream":
            self.command += ("--stream",)

    def _listen(self, kind: str, request: pytest.FixtureRequest) -> int:
        """A call server in listen mode for the hook, as a pod's sidecar runs it; its port."""
        tokens = request.getfixturevalue("tmp_path")
        (tokens / "codex").write_text(uuid.uuid4().hex + "\n")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = ([str(helper_binary())] if kind == "sidecar-static" else
                  [sys.executable, str(Path(__file__).parents[2] / "runner/brainbench/executors/call_server.py")])
        proc = subprocess.Popen([*server, "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens / "codex"),
                                 "--", sys.executable, str(HOOK)], stderr=subprocess.DEVNULL)
        request.addfinalizer(lambda: (proc.kill(), proc.wait()))
        return port

    async def start(self) -> SeamProcess:
        await self.executor.prepare(RunContext(run_id=self.run_id, pool_size=2))
        return await self.executor.start(SeamLaunch(seam="codex", command=self.command, mode=self.mode,  # type: ignore[arg-type]
                                                    image=self.image, env={"BB_PROBE": "from-launch"},
                                                    shared_paths=self.shared, run_id=self.run_id))

    def running(self, process: SeamProcess, needle: str) -> int:
        """How many processes whose command line contains ``needle`` run for this seam."""
        if self.kind == "docker":
            if process.container is None:  # type: ignore[attr-defined]
                return 0
            table = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
            out = process.container.exec_run(["/bin/sh", "-c", table])  # type: ignore[attr-defined]
            return sum(needle in line and "/proc/" not in line for line in out.output.decode().splitlines())
        return sum(needle in cmdline for cmdline in live_processes().values())

    def leftovers(self) -> int:
        if self.kind == "docker":
            return len(CLIENT.containers.list(all=True, filters={"label": f"brainbench.run_id={self.run_id}"}))
        return 0


def run_with(provider: tuple[str, str], request: pytest.FixtureRequest,
             body: Callable[[Harness, SeamProcess], Awaitable[Any]], shared: tuple[str, ...] = ()) -> Any:
    h = Harness(*provider, request, shared)

    async def main() -> Any:
        try:
            process = await h.start()
            try:
                return await body(h, process)
            finally:
                await process.stop()
        finally:
            await h.executor.close()

    return anyio.run(main)


def context(outcome: HookOutcome) -> dict[str, Any]:
    assert outcome.exit_code == 0, outcome
    return json.loads(json.loads(outcome.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_started_warm_exit_codes_stderr_env(provider: tuple[str, str], request: pytest.FixtureRequest) -> None:
    async def body(h: Harness, p: SeamProcess) -> None:
        if h.mode == "stream":
            # Warm before the first call: every pool worker is already up and answered.
            # The full command: another checkout may run this suite on the same host.
            assert h.running(p, f"{'/hook.py' if h.kind == 'docker' else HOOK} --stream") == 2
        assert p.mode == h.mode
        if h.kind == "docker" and h.mode == "exec":  # which exec path answers is what was asked for
            assert (p.server is None) is h.fallback  # type: ignore[attr-defined]
            if not h.fallback:
                assert p.server.variant == ("static" if h.static else "python")  # type: ignore[attr-defined]
        echo = await p.call(HookCall(payload("echo"), {"BB_PROBE": "per-call"}, 20))
        assert context(echo)["prompt"] == "echo" and context(echo)["probe"] == "per-call"
        assert echo.stderr == b"stderr is kept\n"
        plain = await p.call(HookCall(payload("echo"), {}, 20))
        assert context(plain)["probe"] == "from-launch"
        for code in (1, 2, 75):
            failed = await p.call(HookCall(payload(f"exit:{code}"), {}, 20))
            assert failed.exit_code == code and failed.stderr == b"failing on purpose\n", failed

    run_with(provider, request, body)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_discards_output_and_kills_the_group(provider: tuple[str, str],
                                                     request: pytest.FixtureRequest) -> None:
    marker = f"{31 + uuid.uuid4().int % 1000 / 1000:.3f}"

    async def body(h: Harness, p: SeamProcess) -> None:
        outcome = await p.call(HookCall(payload(f"spawn:{marker}"), {}, 1.0))
        assert outcome.timed_out and outcome.stdout == b"" and outcome.stderr == b"" and outcome.exit_code is None
        # The child sleeps 31 s: gone within 10 s, it died with the hook (a SIGKILL lands asynchronously,
        # later still on a loaded machine).
        for _ in range(100):
            if h.running(p, f"sleep {marker}") == 0:
                break
            await anyio.sleep(0.1)
        assert h.running(p, f"sleep {marker}") == 0  # the child died with the hook
        after = await p.call(HookCall(payload("echo"), {}, 20))
        assert context(after)["prompt"] == "echo"  # and the seam still answers

    run_with(provider, request, body)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_concurrent_calls_get_their_own_answers(provider: tuple[str, str], request: pytest.FixtureRequest) -> None:
    async def body(h: Harness, p: SeamProcess) -> None:
        answers: dict[int, HookOutcome] = {}

        async def one(i: int) -> None:
            answers[i] = await p.call(HookCall(payload(f"echo-{i}"), {"BB_PROBE": str(i)}, 30))

        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(one, i)
        assert {i: (context(o)["prompt"], context(o)["probe"]) for i, o in answers.items()} == {
            i: (f"echo-{i}", str(i)) for i in range(6)}

    run_with(provider, request, body)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_close_after_an_interrupted_call_leaves_nothing(provider: tuple[str, str],
                                                        request: pytest.FixtureRequest) -> None:
    h = Harness(*provider, request)
    marker = f"{41 + uuid.uuid4().int % 1000 / 1000:.3f}"

    async def main() -> None:
        process = await h.start()
        with anyio.move_on_after(1.0):
            await process.call(HookCall(payload(f"spawn:{marker}"), {}, 60))
        await h.executor.close(interrupted=True)
        await process.stop()

    anyio.run(main)
    assert h.leftovers() == 0
    if h.kind in ("local", "sidecar"):
        # SIGKILL is delivered asynchronously: give the kernel a moment to finish the exit.
        for _ in range(50):
            if Harness.running(h, None, f"sleep {marker}") == 0:  # type: ignore[arg-type]
                break
            time.sleep(0.1)
        assert Harness.running(h, None, f"sleep {marker}") == 0  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_call_runs_in_its_own_cwd(provider: tuple[str, str], request: pytest.FixtureRequest,
                                       tmp_path: Path) -> None:
    """The hook starts in the cwd its harness would give it (the payload's), call by call;
    a cwd nobody could start it in is an infrastructure fault, not the hook's answer."""
    root = tmp_path / "seam"
    root.mkdir()
    sessions = [root / "fixture-a", root / "fixture-b"]

    async def body(h: Harness, p: SeamProcess) -> None:
        for where in sessions:  # made after the seam started, as the runner makes them
            where.mkdir()
        for where in (*sessions, sessions[0]):
            outcome = await p.call(HookCall(payload("echo"), {}, 20, cwd=str(where)))
            assert context(outcome)["cwd"] == str(where), outcome
        missing = await p.call(HookCall(payload("echo"), {}, 20, cwd=str(root / "gone")))
        assert grade(missing, "codex").fault == "infra_error", missing
        after = await p.call(HookCall(payload("echo"), {}, 20, cwd=str(sessions[1])))
        assert context(after)["cwd"] == str(sessions[1])

    run_with(provider, request, body, shared=(str(root),))
