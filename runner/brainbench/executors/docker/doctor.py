"""``brainbench doctor``: the conformance self-check any image must pass before it is scored.

Each check sends harness-native stdin through the same Docker executor that scores
runs, so what passes here is exactly what the benchmark will see.
"""

from __future__ import annotations

import json
import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..base import HookCall, HookOutcome, SeamLaunch
from ..limits import MAX_OUTPUT_BYTES
from .config import DockerConfig
from .provider import DockerExecutor, DockerSeamProcess

# Claude Code caps additionalContext / plain stdout at 10,000 chars (since 2026-04-06).
MAX_OUTPUT_CHARS = 10_000
# Codex rejects the whole output if any other key is present (deny_unknown_fields).
CODEX_KEYS = {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason",
              "hookSpecificOutput"}
CODEX_HSO_KEYS = {"hookEventName", "additionalContext"}
# The image contract's EX_TEMPFAIL: the brain is unreachable (an infra fault, not a miss).
BACKEND_UNAVAILABLE = 75


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    detail: str


def _payload(prompt: str, **extra: object) -> bytes:
    doc: dict[str, object] = {"session_id": "doctor-session", "transcript_path": None, "cwd": "/tmp",
                              "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
                              "prompt": prompt}
    doc.update(extra)
    return json.dumps(doc).encode()


def output_problem(outcome: HookOutcome, harness: str) -> str | None:
    """Why this stdout would not be a valid UserPromptSubmit result, or None."""
    text = outcome.stdout.decode("utf-8", "replace")
    if len(text) > MAX_OUTPUT_CHARS:
        return f"stdout is {len(text)} chars (> {MAX_OUTPUT_CHARS})"
    stripped = text.strip()
    if not stripped:
        return None
    if not stripped.startswith("{"):
        return None  # plain-stdout rule: text becomes context
    try:
        doc = json.loads(stripped)
    except ValueError:
        return "stdout starts with '{' but is not valid JSON"
    if not isinstance(doc, dict):
        return "stdout JSON is not an object"
    hso = doc.get("hookSpecificOutput")
    if hso is not None:
        if not isinstance(hso, dict) or hso.get("hookEventName") != "UserPromptSubmit":
            return "hookSpecificOutput.hookEventName must be 'UserPromptSubmit'"
        if not isinstance(hso.get("additionalContext", ""), str):
            return "additionalContext must be a string"
    if harness == "codex":
        extra = set(doc) - CODEX_KEYS
        if isinstance(hso, dict):
            extra |= {f"hookSpecificOutput.{k}" for k in set(hso) - CODEX_HSO_KEYS}
        if extra:
            return f"keys Codex rejects: {sorted(extra)}"
    return None


async def run_doctor(image: str, *, command: Sequence[str] = (), mode: Literal["exec", "stream"] = "exec",
                     env: Mapping[str, str] | None = None, timeout_s: float = 10.0,
                     harness: Literal["claude-code", "codex", "openclaw"] = "claude-code",
                     config: DockerConfig | None = None) -> list[CheckResult]:
    results: list[CheckResult] = []
    executor = DockerExecutor(config, run_id=f"bb-doctor-{uuid.uuid4().hex[:8]}")
    env = dict(env or {})
    has_db = bool(env.get("BRAINBENCH_DATABASE_URL"))
    try:
        try:
            proc = await executor.start(SeamLaunch(seam=harness, command=tuple(command), mode=mode,
                                                   image=image, env=env, run_id=executor.run_id))
        except Exception as exc:
            return [CheckResult("container starts hardened", False, f"{type(exc).__name__}: {exc}")]
        assert isinstance(proc, DockerSeamProcess)
        results.append(CheckResult("container starts hardened", True,
                                   f"{proc.image_digest} as {proc.container.attrs['Config']['User']}, "
                                   f"hook: {' '.join(proc.hook_cmd)}"))
        outcomes: dict[str, HookOutcome] = {}

        async def case(name: str, payload: bytes, *, must_be_silent_or_valid: bool = True) -> None:
            o = await proc.call(HookCall(payload, env, timeout_s))
            outcomes[name] = o
            problems = []
            if o.infra_error:
                problems.append(f"infra error: {o.infra_error}")
            if o.timed_out:
                problems.append(f"timed out after {timeout_s:g}s")
            elif o.exit_code == BACKEND_UNAVAILABLE and not has_db:
                pass  # no brain was given: "backend unavailable" is the contract's honest answer
            elif o.exit_code != 0:
                problems.append(f"exit {o.exit_code} (fail-open means exit 0"
                                + ("; 2 blocks the user's prompt" if o.exit_code == 2 else "") + ")")
            if must_be_silent_or_valid and (why := output_problem(o, harness)):
                problems.append(why)
            detail = "; ".join(problems) or (f"exit 0, {len(o.stdout)} bytes, {o.duration_ms:.0f} ms")
            results.append(CheckResult(name, not problems, detail))

        base = "What did we decide about the Acme Example launch with Alice Smith?"
        await case("happy path", _payload(base))
        await case("empty stdin", b"")
        await case("{} (no fields)", b"{}")
        await case("non-object JSON", b"[]")
        await case("unknown keys", _payload(base, prompt_id="p-1", effort="high", agent_id=None,
                                            future_key={"nested": [1, 2, 3]}))
        await case("oversize prompt (1 MiB)", _payload("acme " * 209_715))

        # A hook killed for output over the capture cap (executors.limits) left no stdout to measure.
        sizes = {n: len(o.stdout.decode("utf-8", "replace")) if o.oversize is None else MAX_OUTPUT_BYTES
                 for n, o in outcomes.items()}
        too_big = {n: s for n, s in sizes.items() if s > MAX_OUTPUT_CHARS}
        results.append(CheckResult(f"output size ≤ {MAX_OUTPUT_CHARS:,} chars", not too_big,
                                   f"largest {max(sizes.values(), default=0)} chars"
                                   + (f"; over: {too_big}" if too_big else "")))
        codes = {n: o.exit_code for n, o in outcomes.items()}
        blocks = [n for n, c in codes.items() if c == 2]
        allowed = {0} if has_db else {0, BACKEND_UNAVAILABLE}
        results.append(CheckResult("exit codes (never 2/block, all 0)",
                                   not blocks and all(c in allowed for c in codes.values()),
                                   ", ".join(f"{n}={c}" for n, c in codes.items())))

        # Timeout enforcement needs /bin/sh + `timeout` in the image: a hook and its child
        # sleep past the deadline; both must die and nothing they printed may survive.
        probe = HookCall(b"", env, 1.0)
        o = await _run(proc, ["/bin/sh", "-c", "echo partial; sleep 30 & sleep 30"], probe)
        leftovers = await _run(proc, ["/bin/sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' "
                                      "< $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 30' || true"],
                               HookCall(b"", env, 5.0))
        alive = leftovers.stdout.decode().strip() or "?"
        ok = o.timed_out and o.stdout == b"" and o.duration_ms < 4000 and alive == "0"
        results.append(CheckResult("timeout kills hook and children, output discarded", ok,
                                   f"timed_out={o.timed_out} after {o.duration_ms:.0f} ms, "
                                   f"leftover processes={alive}"))
        lat = [o.duration_ms for n, o in outcomes.items() if not o.timed_out and "oversize" not in n]
        if lat:
            results.append(CheckResult("latency (informational)", True,
                                       f"median {statistics.median(lat):.0f} ms over {len(lat)} calls ({mode})"))
        return results
    finally:
        await executor.close()


async def _run(proc: DockerSeamProcess, command: list[str], call: HookCall) -> HookOutcome:
    import anyio

    return await anyio.to_thread.run_sync(proc.run_command, command, call)
