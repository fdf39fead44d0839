"""An image's ``operations`` command as a memory-operations provider (seed contract v2).

One request per call: the request as JSON on stdin, one answer (a ``MemoryOutcome`` of the
request's verb) as JSON on stdout.  The command runs where the image's hook runs, in the
seam's own hardened container, as the role of the fixture's database, under its timeout and
the executors' output cap; ``run`` is how the runner hands it over (this layer knows no
executor).

Everything the command does wrong is the seam's fault for that fixture, never the runner's:
a crash, a hang, output over the cap, text that is not JSON, JSON nested past
:data:`MAX_DEPTH` or longer than :data:`MAX_ANSWER_BYTES`, an answer of another verb or of the
wrong shape.  Each becomes a refusal with code :data:`SEAM_FAULT` (the step failed, scored as
the spec scores a failed step) and a :class:`CommandFault` the caller reports.  An honest
``unsupported`` is an answer like any other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError

from brainbench.memory.operations import MemoryOperations
from brainbench.models import memory as m
from brainbench.models.hook_io import HookOutcome
from brainbench.models.seed import BrainContract

SEAM_FAULT = "seam_fault"
UNSUPPORTED = "unsupported"
# A memory operation's honest answer is small; a read of 500 items with long texts fits.
MAX_ANSWER_BYTES = 512 * 1024
# Deeper than any outcome shape (a purge receipt is four levels): refused before json.loads recurses.
MAX_DEPTH = 32
STDERR_TAIL = 300

# (argv, stdin, env, timeout_s) → what came back; the runner's supervised exec in the seam.
RunCommand = Callable[[Sequence[str], bytes, Mapping[str, str], float], HookOutcome]


@dataclass(frozen=True)
class CommandFault:
    """One misbehaving call of an image command: what the run records as a fault of that seam."""

    fault_class: str  # a FaultClass: adapter_crash, adapter_timeout, oversize, contract_violation, infra_error
    detail: str


def _tail(data: bytes) -> str:
    text = " | ".join(line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip())
    return text[-STDERR_TAIL:]


def run_failure(what: str, outcome: HookOutcome, timeout_s: float) -> CommandFault | None:
    """None when the command exited 0 within its limits; else the fault it is."""
    if outcome.infra_error:
        return CommandFault("infra_error", f"{what} could not run: {outcome.infra_error}")
    if outcome.timed_out:
        return CommandFault("adapter_timeout", f"{what} timed out after {timeout_s:g} s and was killed")
    if outcome.oversize:
        return CommandFault("oversize", f"{what} was killed: {outcome.oversize}")
    if outcome.exit_code != 0:
        tail = _tail(outcome.stderr)
        return CommandFault("adapter_crash", f"{what} exited {outcome.exit_code}"
                            + (f"; stderr tail: {tail}" if tail else "; no stderr"))
    return None


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text`` outside strings, in one linear pass."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_bounded(stdout: bytes, what: str) -> tuple[Any, CommandFault | None]:
    """stdout as one JSON value, within the size and depth bounds; else the fault."""
    if len(stdout) > MAX_ANSWER_BYTES:
        return None, CommandFault("oversize", f"{what} answered {len(stdout)} bytes; the cap is {MAX_ANSWER_BYTES}")
    try:
        text = stdout.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return None, CommandFault("contract_violation", f"{what} answered bytes that are not UTF-8 ({exc.reason})")
    if not text:
        return None, CommandFault("contract_violation", f"{what} answered nothing (one JSON object expected)")
    if json_depth(text) > MAX_DEPTH:
        return None, CommandFault("contract_violation", f"{what} answered JSON nested deeper than {MAX_DEPTH}")
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "too deep"
        return None, CommandFault("contract_violation", f"{what} answered text that is not one JSON value ({msg})")


def first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"


def parse_answer(op: str, data: Any, what: str) -> tuple[Any, CommandFault | None]:
    """An answer to a request of verb ``op``, or the fault (another verb, a bad shape)."""
    if not isinstance(data, dict):
        return None, CommandFault("contract_violation", f"{what} answered {type(data).__name__}, not an object")
    if data.get("op") != op:
        return None, CommandFault("contract_violation", f"{what} answered op {str(data.get('op'))[:40]!r} "
                                  f"to a {op} request")
    try:
        return m.outcome_from_json(op, data), None
    except ValidationError as exc:
        return None, CommandFault("contract_violation", f"{what} answer fails the outcome shape at "
                                  f"{first_error(exc)[:200]}")


class ImageMemory(MemoryOperations):
    """The memory system of one image, in one fixture's database, through its operations command."""

    name: ClassVar[str] = "image"

    def __init__(self, run: RunCommand, argv: Sequence[str], env: Mapping[str, str], timeout_s: float,
                 on_fault: Callable[[CommandFault], None] | None = None,
                 verbs: Collection[str] | None = None) -> None:
        self.run = run
        self.argv = list(argv)
        self.env = dict(env)
        self.timeout_s = timeout_s
        self.faults: list[CommandFault] = []
        self.on_fault = on_fault
        # The label's operations_verbs: the others are answered here (None: all go to the command).
        self.verbs = frozenset(verbs) if verbs is not None else None

    @classmethod
    def of(cls, run: RunCommand, contract: BrainContract, env: Mapping[str, str]) -> ImageMemory:
        """The operations command of ``contract`` (which declares one), with its timeout and verbs."""
        assert contract.operations is not None
        return cls(run, contract.operations, env, contract.operations_timeout_s, verbs=contract.operations_verbs)

    def _fault(self, op: str, fault: CommandFault) -> Any:
        self.faults.append(fault)
        if self.on_fault is not None:
            self.on_fault(fault)
        return m.refusal(op, SEAM_FAULT, fault.detail)

    def call(self, request: m.MemoryRequest) -> m.MemoryOutcome:
        if self.verbs is not None and request.op not in self.verbs:
            return m.refusal(request.op, UNSUPPORTED, f"{request.op} is not among the image's operations_verbs "  # type: ignore[no-any-return]
                             f"({', '.join(sorted(self.verbs)) or 'none'}): answered by the runner, not called")
        what = f"operations ({' '.join(self.argv)}) on {request.op}"
        outcome = self.run(self.argv, request.model_dump_json().encode("utf-8"), self.env, self.timeout_s)
        fault = run_failure(what, outcome, self.timeout_s)
        if fault is not None:
            return self._fault(request.op, fault)  # type: ignore[no-any-return]
        data, fault = parse_bounded(outcome.stdout, what)
        if fault is None:
            answer, fault = parse_answer(request.op, data, what)
        if fault is not None:
            return self._fault(request.op, fault)  # type: ignore[no-any-return]
        return answer  # type: ignore[no-any-return]
