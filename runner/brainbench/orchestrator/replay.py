"""Replay one fixture's conversation through one seam and turn it into rows (spec §5.2)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainbench.brain.shares import ShareLedger
from brainbench.corpus.loader import LoadedFixture
from brainbench.corpus.rules import turn_key
from brainbench.executors.base import SeamProcess
from brainbench.harnesses.grading import Graded
from brainbench.harnesses.registry import SeamSpec
from brainbench.jsstring import without_lone_surrogates
from brainbench.models.result import Fault, TurnRow
from brainbench.models.trace import CONTEXT_CAP, STDERR_TAIL, TurnTrace
from brainbench.orchestrator.conversation import Conversation, TurnOutcome


@dataclass
class SeamReplay:
    rows: list[TurnRow] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    injected: set[str] = field(default_factory=set)
    # turn_id → the exact injected text (None = silence); for inspection and conformance tests.
    contexts: dict[int, str | None] = field(default_factory=dict)
    # One evidence row per user turn; verdicts and reasons are added by the diagnosis stage (diagnosis/reference.py).
    traces: list[TurnTrace] = field(default_factory=list)
    calls: int = 0  # hook calls made, SessionStart included
    durations_ms: list[float] = field(default_factory=list)  # each call's wall time (``_meta.phases``)
    # The SessionStart context (codex's static index), None when the seam has none or stayed silent.
    preamble: str | None = None
    # turn_id → the prior context the turn's transcript carried, as gbrain accumulates it (spec §5.2).
    priors: dict[int, str] = field(default_factory=dict)


def cross_source(slugs: Sequence[str], slug_sources: Mapping[str, set[str]], active: str) -> list[str]:
    """Injected slugs that were seeded, but never into the active source: a leak."""
    return [s for s in slugs if s in slug_sources and active not in slug_sources[s]]


async def replay_fixture(
    item: LoadedFixture,
    spec: SeamSpec,
    process: SeamProcess,
    *,
    suites: Sequence[str],
    env: Mapping[str, str],
    workdir: Path,
    timeout_s: float,
    slug_sources: Mapping[str, set[str]],
    keep: bool = False,
    image: str | None = None,
    share: ShareLedger | None = None,
    events: Sequence[str] | None = None,
    brain_down: Callable[[], str | None] | None = None,
) -> SeamReplay:
    """``events``: the lifecycle events the seam's image declares (seed contract v2), called as its harness would."""
    fx = item.fixture
    conv = Conversation(spec, process, f"brainbench-{fx.fixture_id}-1", workdir, env, timeout_s,
                        payload_dir=workdir / "payloads" if keep else None, script=item.public_turns(),
                        share=share, events=frozenset(events or ()), brain_down=brain_down)
    out = SeamReplay()
    started = await conv.begin()
    if started is not None and started.fault is not None:
        out.faults.append(Fault(fixture_id=fx.fixture_id, turn_id=0, harness=spec.harness,
                                fault_class=started.fault, detail=f"SessionStart: {started.detail}"))
    last = 0
    for turn in item.public_turns():
        last = max(last, turn.turn_id)
        if turn.role == "assistant":
            conv.assistant_turn(turn)
            _lifecycle_fault(out, fx.fixture_id, turn.turn_id, spec, await conv.after_assistant(turn))
            continue
        out.priors[turn.turn_id] = conv.prior_text()
        result = await conv.user_turn(turn)
        if result.graded.fault is not None:
            out.faults.append(Fault(fixture_id=fx.fixture_id, turn_id=turn.turn_id, harness=spec.harness,
                                    fault_class=result.graded.fault, detail=result.graded.detail))
        out.injected.update(result.slugs)
        out.contexts[turn.turn_id] = result.context
        leaked = cross_source(result.slugs, slug_sources, fx.source)
        out.traces.append(_evidence(item, turn.turn_id, turn.text, spec, result, suites, image))
        for suite in suites:
            out.rows.append(TurnRow(
                fixture_id=fx.fixture_id,
                turn_id=turn.turn_id,
                harness=spec.harness,
                suite=suite,  # type: ignore[arg-type]
                injected_slugs=result.slugs,
                injected_tokens=result.tokens,
                gold=item.gold.turns.get(turn_key(turn.turn_id)),
                cross_source_slugs=leaked,
                latency_ms=round(result.latency_ms * 1000) / 1000,
            ))
    _lifecycle_fault(out, fx.fixture_id, last, spec, await conv.end(last))
    out.calls = conv.calls
    out.durations_ms = conv.durations_ms
    out.preamble = conv.session_context
    return out


def _lifecycle_fault(out: SeamReplay, fixture_id: str, turn_id: int, spec: SeamSpec, graded: Graded | None) -> None:
    """A lifecycle call (seed contract v2) that went wrong is a fault of the seam on that turn."""
    if graded is not None and graded.fault is not None:
        out.faults.append(Fault(fixture_id=fixture_id, turn_id=turn_id, harness=spec.harness,
                                fault_class=graded.fault, detail=graded.detail))


def _printable(text: str) -> str:
    # The trace is UTF-8 JSON: half a surrogate pair (gbrain's clip can cut one,
    # docs/FIDELITY.md) is shown as U+FFFD there; the scored text keeps it.
    return without_lone_surrogates(text)  # type: ignore[no-any-return]


def _evidence(item: LoadedFixture, turn_id: int, prompt: str, spec: SeamSpec, result: TurnOutcome,
              suites: Sequence[str], image: str | None) -> TurnTrace:
    context = result.context
    stderr = result.stderr.decode("utf-8", errors="replace")
    return TurnTrace(
        fixture_id=item.fixture_id, turn_id=turn_id, harness=spec.harness, suites=list(suites),  # type: ignore[arg-type]
        image=image, prompt=prompt, prior_messages=0, prior_injections=0,
        context=_printable(context[:CONTEXT_CAP]) if context else None, context_chars=len(context or ""),
        injected_slugs=result.slugs, injected_tokens=result.tokens, exit_code=result.exit_code,
        timed_out=result.timed_out, stderr_tail=stderr[-STDERR_TAIL:], fault_class=result.graded.fault,
        fault_detail=result.graded.detail, latency_ms=round(result.latency_ms * 1000) / 1000,
        gold=item.gold.turns.get(turn_key(turn_id)),
    )
