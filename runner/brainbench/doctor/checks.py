"""The checks: every hook answer goes through the run's executor and the run's ``grade()``."""

from __future__ import annotations

import contextlib
import json
import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from brainbench.executors.base import HookCall, HookOutcome, InvocationMode, SeamLaunch
from brainbench.harnesses.grading import grade
from brainbench.harnesses.injected import slugs_in_text
from brainbench.harnesses.registry import SEAMS
from brainbench.models.config import DEFAULT_TIMEOUT_S

from . import sample

Status = Literal["pass", "fail", "warn", "info"]
MODES: tuple[InvocationMode, ...] = ("exec", "stream")
LABEL_CONTRACT = "io.brainbench.contract-version"
STDERR_TAIL_CHARS = 600
# How often, and how far apart, the timeout check counts what a killed hook left running.
LEFTOVER_LOOKS = 10
LEFTOVER_PAUSE_S = 0.2
# Checks whose prompt names the sample page (its title or its alias "acme"): silence there is only
# an answer when the hook says nothing else, since a fail-open hook that failed is silent too.
PROMPT_CASES = ("unknown keys", "oversize prompt (1 MiB)")
ARGV_LIMIT_HINT = ("a prompt passed as a command-line argument fails over Linux's 128 KiB limit per argument "
                   "(E2BIG, \"Argument list too long\"): read it from stdin, or clip it first "
                   "(docs/HOOK_AUTHORS.md, section 1)")


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    detail: str
    # The hook's last words when a check failed: usually the whole explanation.
    stderr_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.status != "fail"


@dataclass
class DoctorReport:
    image: str
    harness: str
    modes: tuple[InvocationMode, ...] = ()
    results: list[CheckResult] = field(default_factory=list)
    # Set when nothing could be checked (no engine, no image, no database): exit 2.
    cannot_check: str | None = None

    @property
    def exit_code(self) -> int:
        if self.cannot_check:
            return 2
        return 1 if any(not r.passed for r in self.results) else 0


def declared_modes(labels: Mapping[str, str]) -> tuple[tuple[InvocationMode, ...], list[str]]:
    """The modes an image declares (exec is always among them) and any unknown words."""
    from brainbench.executors.docker.config import LABEL_MODES

    raw = labels.get(LABEL_MODES)
    if raw is None:
        return ("exec",), []
    words = [w.strip().lower() for w in raw.split(",") if w.strip()]
    unknown = [w for w in words if w not in MODES]
    # Non-object payloads always go through exec, even on a stream seam.
    return tuple(m for m in MODES if m == "exec" or m in words), unknown


def _payload(harness: str, prompt: str, **extra: object) -> bytes:
    doc: dict[str, object] = {"session_id": "doctor-session", "cwd": "/tmp", "permission_mode": "default",
                              "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    prior = SEAMS[harness].prior
    if prior == "messages":
        doc["messages"] = []
    else:
        doc["transcript_path"] = None
    if harness == "codex":
        doc.update({"turn_id": "doctor-turn-1", "model": "gpt-5-codex"})
    doc.update(extra)
    return json.dumps(doc).encode()


def _tail(outcome: HookOutcome) -> str:
    text = outcome.stderr.decode("utf-8", "replace").rstrip()
    return text[-STDERR_TAIL_CHARS:]


async def run_doctor(image: str, *, command: Sequence[str] = (), mode: InvocationMode | None = None,
                     env: Mapping[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                     harness: Literal["claude-code", "codex", "openclaw"] = "claude-code",
                     database_url: str | None = None, docker_host: str | None = None) -> DoctorReport:
    """Check ``image`` behind ``harness``'s seam in every mode the run would use."""
    from brainbench.executors.docker.client import DockerApi
    from brainbench.executors.docker.failures import DockerUnavailable, missing_image_hint
    from brainbench.executors.retry import INFRA_RETRY

    report = DoctorReport(image=image, harness=harness)
    try:
        api = await anyio.to_thread.run_sync(lambda: DockerApi(docker_host, policy=INFRA_RETRY.once()))
    except DockerUnavailable as exc:
        report.cannot_check = f"{exc} (start one, or point DOCKER_HOST at it)"
        return report
    try:
        import docker.errors

        try:
            attrs: dict[str, Any] = (await anyio.to_thread.run_sync(api.client.images.get, image)).attrs
        except docker.errors.ImageNotFound:
            report.cannot_check = missing_image_hint(image)
            return report
    finally:
        api.close()
    config = attrs.get("Config") or {}
    labels: dict[str, str] = config.get("Labels") or {}
    if not _static_checks(report, labels, config, command, mode):
        return report
    from .seed_contract import check_label

    contract, go_on = check_label(report, labels)
    if not go_on:
        return report
    await _with_brain(report, command=command, env=env or {}, timeout_s=timeout_s, database_url=database_url,
                      docker_host=docker_host, contract=contract)
    return report


def _static_checks(report: DoctorReport, labels: Mapping[str, str], config: Mapping[str, Any],
                   command: Sequence[str], mode: InvocationMode | None) -> bool:
    """Labels and command; False when there is nothing to start."""
    from brainbench.executors.docker.config import CONTRACT_VERSION, LABEL_MODES

    version = labels.get(LABEL_CONTRACT)
    if version is None:
        report.results.append(CheckResult(
            "contract-version label", "warn",
            f"absent; add LABEL {LABEL_CONTRACT}=\"{CONTRACT_VERSION}\" so a contract change cannot go unnoticed"))
    elif version != CONTRACT_VERSION:
        report.results.append(CheckResult(
            "contract-version label", "fail",
            f"{LABEL_CONTRACT}={version!r}, but this BrainBench speaks contract {CONTRACT_VERSION}"))
    else:
        report.results.append(CheckResult("contract-version label", "pass", f"{LABEL_CONTRACT}={version}"))

    modes, unknown = declared_modes(labels)
    shown = labels.get(LABEL_MODES)
    source = f"{LABEL_MODES}={shown}" if shown is not None else f"no {LABEL_MODES} label: exec only"
    if unknown:
        report.results.append(CheckResult("modes", "fail", f"{source}: unknown mode(s) {', '.join(unknown)}; "
                                          f"use a comma list of {', '.join(MODES)}"))
    elif mode is not None and mode not in modes:
        report.results.append(CheckResult("modes", "warn", f"{source}, but --mode {mode} was asked for: checked "
                                          f"anyway; declare it ({LABEL_MODES}=exec,{mode}) if the image speaks it"))
    else:
        report.results.append(CheckResult("modes", "pass", f"{source}; the run uses "
                                          f"{'stream' if 'stream' in modes else 'exec'}"))
    report.modes = (mode,) if mode is not None else modes

    image_cmd = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    if not command and not image_cmd:
        report.results.append(CheckResult(
            "hook command", "fail", "the image has no ENTRYPOINT or CMD and no --command was given: add "
            "ENTRYPOINT [\"/path/to/hook\"] to its Dockerfile (or `command` in seams.toml)"))
        return False
    report.results.append(CheckResult("hook command", "pass", " ".join(command or image_cmd)))
    return True


async def _with_brain(report: DoctorReport, *, command: Sequence[str], env: Mapping[str, str], timeout_s: float,
                      database_url: str | None, docker_host: str | None, contract: Any = None) -> None:
    import psycopg

    from brainbench.brain.serve import served_brain
    from brainbench.brain.server import ServerError, open_server

    try:
        server = await anyio.to_thread.run_sync(open_server, database_url)
    except ServerError as exc:
        report.cannot_check = f"no brain database: {exc}"
        return
    try:
        if contract is not None:  # the image seeds its own brain, per mode, in that mode's container
            for mode in report.modes:
                await _check_mode(report, mode, command=command, env=env, timeout_s=timeout_s,
                                  docker_host=docker_host, seeded=(server, contract))
                if report.cannot_check:
                    return
            return
        with served_brain(server, sample.seed_sample, source=sample.SOURCE) as brain:
            call_env = {**env, **brain.hook_env()}
            for mode in report.modes:
                await _check_mode(report, mode, command=command, env=call_env, timeout_s=timeout_s,
                                  docker_host=docker_host)
                if report.cannot_check:
                    return
    except (ServerError, psycopg.Error) as exc:
        report.cannot_check = f"no brain database: {str(exc).strip().splitlines()[0]}"
    finally:
        server.close()


async def _check_mode(report: DoctorReport, mode: InvocationMode, *, command: Sequence[str],
                      env: Mapping[str, str], timeout_s: float, docker_host: str | None,
                      seeded: tuple[Any, Any] | None = None) -> None:
    """``seeded``: (server, seed contract) when the image seeds its own brain."""
    from brainbench.executors.docker.config import DockerConfig
    from brainbench.executors.docker.failures import ImageContractError, describe
    from brainbench.executors.docker.provider import DockerExecutor, DockerSeamProcess

    harness = report.harness
    # The stream warm-up handshake gets the same deadline as a call.
    # Where the brain is (socket or host) for the container; with a seed contract never a hook's env.
    db_url = seeded[0].database_url("postgres") if seeded else env.get("BRAINBENCH_DATABASE_URL")
    config = DockerConfig(docker_host=docker_host, database_url=db_url, stream_handshake_s=timeout_s)
    executor = DockerExecutor(config, run_id=f"bb-doctor-{uuid.uuid4().hex[:8]}", pool_size=1)
    try:
        try:
            proc = await executor.start(SeamLaunch(seam=harness, command=tuple(command), mode=mode,
                                                   image=report.image, env=dict(env), run_id=executor.run_id))
        except ImageContractError as exc:  # the image's fault: a conformance failure
            report.results.append(CheckResult(f"container starts ({mode})", "fail", str(exc)))
            return
        except Exception as exc:  # the engine's fault: nothing about the image was learnt
            report.cannot_check = f"{mode} container did not start: {describe(exc)}"
            return
        assert isinstance(proc, DockerSeamProcess)
        report.results.append(CheckResult(f"container starts ({mode})", "pass",
                                          f"hardened, as {proc.container.attrs['Config']['User']}; "
                                          f"hook: {' '.join(proc.hook_cmd)}"))
        if mode == "exec":
            await _check_shell(report, proc, env)
        if seeded is None:
            await _check_calls(report, proc, mode, harness, env, timeout_s)
        else:
            from .seed_contract import seeded_brain

            async with seeded_brain(report, proc, seeded[0], seeded[1], mode) as url:
                if url is None:
                    return
                seeded_env = {**env, "BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": sample.SOURCE}
                await _check_calls(report, proc, mode, harness, seeded_env, timeout_s)
                if seeded[1].events:  # seed contract v2: the lifecycle events the image declares
                    from .seed_v2 import check_events

                    await check_events(report, proc, mode, harness, seeded_env, timeout_s, seeded[1])
        if mode == "exec":
            await _check_timeout(report, proc, env)
    finally:
        with contextlib.suppress(Exception):
            await executor.close()


async def _run(proc: Any, command: list[str], call: HookCall) -> HookOutcome:
    return await anyio.to_thread.run_sync(proc.run_command, command, call)


async def _check_shell(report: DoctorReport, proc: Any, env: Mapping[str, str]) -> None:
    o = await _run(proc, ["/bin/sh", "-c", "command -v timeout"], HookCall(b"", env, 10.0))
    if o.exit_code == 0 and o.stdout.strip():
        report.results.append(CheckResult("/bin/sh and timeout", "pass", o.stdout.decode().strip()))
    else:
        report.results.append(CheckResult(
            "/bin/sh and timeout", "fail", "`timeout` (coreutils or busybox) is missing: the executor enforces "
            "each call's deadline with it inside the container", _tail(o)))


async def _check_calls(report: DoctorReport, proc: Any, mode: InvocationMode, harness: str,
                       env: Mapping[str, str], timeout_s: float) -> None:
    dialect = SEAMS[harness].dialect
    cases: list[tuple[str, bytes]] = [
        ("happy path", _payload(harness, sample.PROMPT)),
        ("{} (no fields)", b"{}"),
        ("unknown keys", _payload(harness, sample.PROMPT, prompt_id="p-1", effort="high", agent_id=None,
                                  future_key={"nested": [1, 2, 3]})),
        ("oversize prompt (1 MiB)", _payload(harness, "acme " * 209_715)),
    ]
    if mode == "exec":
        # Stream seams send these through exec too, so checking them once is enough.
        cases[1:1] = [("empty stdin", b""), ("non-object JSON", b"[]")]
    if SEAMS[harness].session_start:
        # A run opens every codex conversation with SessionStart before the first prompt.
        start = json.loads(_payload(harness, "", hook_event_name="SessionStart", source="startup"))
        del start["prompt"], start["turn_id"]
        cases.insert(0, ("SessionStart", json.dumps(start).encode()))
    latencies: list[float] = []
    for name, payload in cases:
        outcome = await proc.call(HookCall(payload, env, timeout_s))
        graded = grade(outcome, dialect, "SessionStart" if name == "SessionStart" else "UserPromptSubmit")
        label = f"{name} ({mode})"
        problem = None
        if outcome.timed_out and mode == "stream" and name in ("happy path", "SessionStart"):
            problem = (f"no answer to the stream request in {timeout_s:g} s: this image speaks exec only; "
                       "use mode=exec (and leave `stream` out of io.brainbench.modes)")
        elif graded.fault is not None:
            problem = f"the run would grade this `{graded.fault}`: {graded.detail}"
        elif name == "happy path":
            slugs = slugs_in_text(graded.context)
            if sample.FOREIGN_SLUG in slugs:
                problem = (f"injected `{sample.FOREIGN_SLUG}`, a page of source {sample.OTHER_SOURCE!r} while "
                           f"BRAINBENCH_SOURCE={sample.SOURCE!r}: a source-isolation leak")
            elif sample.EXPECTED_SLUG not in slugs:
                got = ", ".join(slugs) or ("silence" if not graded.context else "context without any slug marker")
                problem = (f"expected `{sample.EXPECTED_SLUG}` (the prompt names its title, \"Acme Example\") "
                           f"as a ``→ `slug` `` marker in additionalContext; got {got}")
        elif name in PROMPT_CASES and not graded.context and outcome.stderr.strip():
            problem = failed_silence(name, outcome)
        if problem:
            report.results.append(CheckResult(label, "fail", problem, _tail(outcome)))
            if outcome.timed_out and mode == "stream":
                return  # every further stream call would wait out the same timeout
            continue
        if "oversize" not in name:
            latencies.append(outcome.duration_ms)
        what = "silence, nothing on stderr" if not graded.context else f"context, {len(graded.context)} chars"
        report.results.append(CheckResult(label, "pass", f"exit {outcome.exit_code}, {what}, "
                                          f"{outcome.duration_ms:.0f} ms"))
    if latencies:
        report.results.append(CheckResult(f"latency ({mode})", "info",
                                          f"median {statistics.median(latencies):.0f} ms over {len(latencies)} calls"))


def failed_silence(name: str, outcome: HookOutcome) -> str:
    """Why an exit-0 silence that left words on stderr is a failure, not an answer.

    A harness cannot tell a hook that failed and exited 0 (fail-open) from one that found
    nothing: both inject nothing.  Doctor can: the prompt names a page, and the hook spoke up.
    """
    text = outcome.stderr.decode("utf-8", "replace")
    hint = ARGV_LIMIT_HINT if "argument list too long" in text.lower() or "oversize" in name else ""
    return (f"exit {outcome.exit_code} and silence, but the hook wrote to stderr: it failed rather than found "
            "nothing (a run scores both as a miss)" + (f"; {hint}" if hint else ""))


async def _check_timeout(report: DoctorReport, proc: Any, env: Mapping[str, str]) -> None:
    # A hook and its child sleep past the deadline; both must die and nothing they
    # printed may survive (the harness rule the executor enforces with `timeout`).
    o = await _run(proc, ["/bin/sh", "-c", "echo partial; sleep 30 & sleep 30"], HookCall(b"", env, 1.0))
    # Killed is not yet gone: on a loaded machine a SIGKILLed process may still be listed for a moment,
    # so they are counted again, for up to ~2 s, until none is left.
    for _ in range(LEFTOVER_LOOKS):
        leftovers = await _run(proc, ["/bin/sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' "
                                      "< $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 30' || true"],
                               HookCall(b"", env, 5.0))
        alive = leftovers.stdout.decode().strip() or "?"
        if alive == "0":
            break
        await anyio.sleep(LEFTOVER_PAUSE_S)
    # Well under the 30 s the sleeps would take, with room for a loaded engine.
    ok = o.timed_out and o.stdout == b"" and o.duration_ms < 15_000 and alive == "0"
    report.results.append(CheckResult("timeout kills hook and children, output discarded", "pass" if ok else "fail",
                                      f"timed_out={o.timed_out} after {o.duration_ms:.0f} ms, "
                                      f"leftover processes={alive}"))
