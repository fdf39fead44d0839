"""One conversation through one seam: build each wire message, call, grade.

The seam sees only what its real harness would hand it: the prompt, plus prior
context through the harness's own channel (Claude Code transcript file, Codex
rollout file, or OpenClaw's message list).  The runner keeps the history.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainbench.brain.server import DatabaseFailure
from brainbench.brain.shares import ShareLedger
from brainbench.executors.base import SeamProcess
from brainbench.executors.retry import INFRA_RETRY
from brainbench.harnesses.grading import Graded, grade
from brainbench.harnesses.injected import estimate_tokens, slugs_in_text
from brainbench.harnesses.registry import SeamSpec
from brainbench.harnesses.transcripts import claude_transcript_lines, codex_rollout_lines, write_lines
from brainbench.jsjson import stringify
from brainbench.jsstring import trim, without_lone_surrogates
from brainbench.models.corpus import PublicTurn
from brainbench.models.history import HistoryItem
from brainbench.models.hook_io import HookCall, HookOutcome
from brainbench.models.seed import AFTER_ASSISTANT, SESSION_END, SESSION_START

# Attempts of a call whose outcome is an infrastructure fault (the run's one policy).
INFRA_ATTEMPTS = INFRA_RETRY.attempts


@dataclass(frozen=True)
class TurnOutcome:
    context: str | None
    slugs: list[str]
    tokens: int
    latency_ms: float
    graded: Graded
    # Raw evidence for the trace: what the seam process itself said.
    exit_code: int | None = None
    stderr: bytes = b""
    timed_out: bool = False


@dataclass
class Conversation:
    spec: SeamSpec
    process: SeamProcess
    session_id: str
    workdir: Path
    env: Mapping[str, str]
    timeout_s: float
    history: list[HistoryItem] = field(default_factory=list)
    # The fixture's turns in array order.  When given, a Claude Code transcript
    # is rebuilt from them (spec §4.3, issue 13 rule 3) rather than from replay history.
    script: Sequence[PublicTurn] | None = None
    injections: dict[int, str] = field(default_factory=dict)
    session_context: str | None = None
    pending_session_tokens: int = 0
    faults: list[tuple[int, Graded]] = field(default_factory=list)
    # run --keep: every payload and answer is written here, named by call order.
    payload_dir: Path | None = None
    calls: int = 0
    # Who went over their share of the shared brain (brain/shares.py): a call during which this
    # seam did is its own contract violation, whatever it answered.
    share: ShareLedger | None = None
    # Seed contract v2: the lifecycle events the seam's image asks for (models.seed.LIFECYCLE_EVENTS);
    # each is called when its harness would call it, the transcript as it stands then.
    events: frozenset[str] = frozenset()
    # Each call's wall time as the executor measured it (``_meta.phases``), in call order.
    durations_ms: list[float] = field(default_factory=list)
    # Why the run's shared brain server is gone (``diagnose``), None while it runs: asked only after
    # an infrastructure fault, so that a dead server stops the run at once instead of being retried.
    brain_down: Callable[[], str | None] | None = None

    async def _call(self, message: dict[str, object], event: str) -> tuple[Graded, HookOutcome]:
        # JSON.stringify, as a JS harness sends it.  An earlier injection clipped
        # inside a surrogate pair (OpenClaw's message list carries it) goes as
        # U+FFFD: the executors re-encode the payload as UTF-8, where a lone half
        # cannot go (docs/FIDELITY.md).  Prior context only feeds substring
        # suppression (slugs, whole titles): only a title holding U+FFFD could tell.
        payload = stringify(without_lone_surrogates(message)).encode()
        # The hook starts in the session's cwd, the one its payload names, as under a harness
        # (made again if a hook removed it; a stat, not a failing mkdir, on every other call).
        if not os.path.isdir(self.workdir):
            self.workdir.mkdir(parents=True, exist_ok=True)
        call = HookCall(payload, self.env, self.timeout_s, cwd=str(self.workdir))
        mark = self.share.count(self.spec.harness) if self.share is not None else 0
        # The one layer that retries a hook call, and only for infrastructure faults (seam
        # could not run it, brain unreachable); anything the seam decided is graded as it
        # came, never retried (executors/retry.py).
        last: list[tuple[HookOutcome, Graded]] = []  # the retry check's grade, reused for the answer kept

        def grade_of(outcome: HookOutcome) -> Graded:
            if not last or last[0][0] is not outcome:
                last[:] = [(outcome, grade(outcome, self.spec.dialect, event))]
            return last[0][1]

        outcome: HookOutcome = await INFRA_RETRY.call_async(self.process.call, call,
                                                            faulty=lambda r: self._retryable(grade_of(r)))
        self.calls += 1
        self.durations_ms.append(outcome.duration_ms)
        if self.payload_dir is not None:
            self._keep(payload, outcome, event)
        over = self.share.since(self.spec.harness, mark) if self.share is not None else None
        if over is not None:
            return Graded(None, "contract_violation", over), outcome
        return grade_of(outcome), outcome

    def _retryable(self, graded: Graded) -> bool:
        """An infrastructure fault worth another attempt.  Not when the brain server itself died: no
        attempt can succeed, and its back-off would only let the fault's retry lines race the run's
        own one-line report of the dead server (DatabaseFailure, orchestrator/run.py)."""
        if graded.fault != "infra_error":
            return False
        if self.brain_down is not None and (why := self.brain_down()) is not None:
            raise DatabaseFailure(f"the brain database failed: {why}")
        return True

    async def begin(self) -> Graded | None:
        if not self.spec.session_start and SESSION_START.get(self.spec.harness) not in self.events:
            return None
        graded, _ = await self._call(self._base("SessionStart") | {"source": "startup"}, "SessionStart")
        if graded.context:
            self.session_context = graded.context
            self.pending_session_tokens = estimate_tokens(graded.context)
            # Session context reaches the model first, as a developer message in Codex.
            self.history.append(HistoryItem("context", graded.context))
        return graded

    def _keep(self, payload: bytes, outcome: HookOutcome, event: str) -> None:
        assert self.payload_dir is not None
        self.payload_dir.mkdir(parents=True, exist_ok=True)
        stem = self.payload_dir / f"{self.calls:03d}-{event}"
        stem.with_suffix(".in.json").write_bytes(payload)
        stem.with_suffix(".out").write_bytes(outcome.stdout)
        if outcome.stderr:
            stem.with_suffix(".err").write_bytes(outcome.stderr)

    def _base(self, event: str) -> dict[str, object]:
        return {"hook_event_name": event, "session_id": self.session_id, "cwd": str(self.workdir),
                "permission_mode": "default"}

    def _message(self, turn: PublicTurn) -> dict[str, object]:
        return self._with_prior(self._base("UserPromptSubmit") | {"prompt": turn.text}, turn.turn_id)

    def _with_prior(self, message: dict[str, object], before: int) -> dict[str, object]:
        """``message`` with the prior context its harness hands a hook: the turns before turn id ``before``."""
        if self.spec.prior == "transcript":
            path = self.workdir / "claude" / "projects" / "brainbench" / f"{self.session_id}.jsonl"
            write_lines(path, claude_transcript_lines(self._transcript_before(before)))
            message["transcript_path"] = str(path)
        elif self.spec.prior == "rollout":
            path = self.workdir / "codex" / "sessions" / f"{self.session_id}.jsonl"
            write_lines(path, codex_rollout_lines(self.session_id, str(self.workdir), self.history))
            message["transcript_path"] = str(path)
        else:
            message["messages"] = [
                {"role": "system", "content": h.text, "source": "memory"} if h.role == "context"
                else {"role": h.role, "content": h.text}
                for h in self.history if not self._is_session(h)
            ]
        return message

    def _transcript_before(self, before: int) -> list[HistoryItem]:
        """What a Claude Code transcript holds before ``turn``.

        gbrain's adapter walks the fixture's turns in array order and stops at the
        first whose id is >= this turn's, so with turn ids out of order an earlier
        turn (and its injection) can be left out, and with it the dedupe it causes.
        """
        if self.script is None:
            return [h for h in self.history if not self._is_session(h)]
        out: list[HistoryItem] = []
        for t in self.script:
            if t.turn_id >= before:
                break
            out.append(HistoryItem(t.role, t.text))
            if t.turn_id in self.injections:
                out.append(HistoryItem("context", self.injections[t.turn_id]))
        return out

    def prior_text(self) -> str:
        """The conversation so far as one string, session context left out: ``"\n" + text`` per item."""
        return "".join("\n" + h.text for h in self.history if not self._is_session(h))

    def _is_session(self, item: HistoryItem) -> bool:
        return self.session_context is not None and item is self.history[0] and item.role == "context"

    async def user_turn(self, turn: PublicTurn) -> TurnOutcome:
        graded, raw = await self._call(self._message(turn), "UserPromptSubmit")
        if graded.fault is not None:
            self.faults.append((turn.turn_id, graded))
        context = graded.context
        tokens = estimate_tokens(context)
        if self.pending_session_tokens and trim(turn.text):
            # Session context is billed to the first prompt actually submitted.
            tokens += self.pending_session_tokens
            self.pending_session_tokens = 0
        self.history.append(HistoryItem("user", turn.text))
        if context:
            self.history.append(HistoryItem("context", context))
            self.injections[turn.turn_id] = context
        return TurnOutcome(context, slugs_in_text(context), tokens, raw.duration_ms, graded,
                           raw.exit_code, raw.stderr, raw.timed_out)

    def assistant_turn(self, turn: PublicTurn) -> None:
        self.history.append(HistoryItem("assistant", turn.text))

    async def after_assistant(self, turn: PublicTurn) -> Graded | None:
        """Seed contract v2: the event a harness fires once the assistant answered (Claude Code and
        Codex ``Stop``, OpenClaw ``agent_end``), the transcript holding that answer; None when the
        image did not ask for it.  Its output is never context: only its faults count."""
        event = AFTER_ASSISTANT.get(self.spec.harness)
        if event not in self.events:
            return None
        extra: dict[str, object] = {"stop_hook_active": False} if event == "Stop" else {}
        graded, _ = await self._call(self._with_prior(self._base(event) | extra, turn.turn_id + 1), event)
        return graded

    async def end(self, last_turn_id: int) -> Graded | None:
        """Seed contract v2: the session's end (Claude Code ``SessionEnd``, OpenClaw ``session_end``)."""
        event = SESSION_END.get(self.spec.harness)
        if event not in self.events:
            return None
        extra: dict[str, object] = {"reason": "other"} if event == "SessionEnd" else {}
        graded, _ = await self._call(self._with_prior(self._base(event) | extra, last_turn_id + 1), event)
        return graded
