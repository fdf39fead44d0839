"""The CLI-level gate flow of ``brainbench run`` (spec §10.3).

``brainbench run`` calls :func:`apply_gate` after scoring and before writing its
outputs; ``brainbench run --compare BASE CURRENT`` calls :func:`compare_files`.
Neither prints: both return a :class:`GateReport` whose messages the CLI writes to
stderr and whose exit code it exits with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainbench.gate.baseline import (
    BaselineError,
    canonical_baseline,
    parse_baseline,
    parse_baseline_text,
    read_gate_file,
    write_baseline,
)
from brainbench.gate.compare import compare_baselines, exit_code_for, failed_items
from brainbench.jsjson import js_json_dumps

if TYPE_CHECKING:
    from brainbench.models.baseline import Baseline
    from brainbench.models.result import CompareOutcome, RunResult

__all__ = [
    "BASELINE_RELPATH",
    "EXIT_INCONCLUSIVE",
    "GateReport",
    "apply_gate",
    "ci_from_env",
    "compare_files",
    "outcome_json",
    "unclean_reasons",
]

BASELINE_RELPATH = Path("baselines") / "main.json"
EXIT_INCONCLUSIVE = 2
MAX_NAMED_ITEMS = 25


def ci_from_env(env: Mapping[str, str] | None = None) -> bool:
    """True when ``CI`` is set (GitHub Actions and our ``.ci/run`` set ``CI=true``)."""
    value = (os.environ if env is None else env).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


@dataclass
class GateReport:
    """What the gate decided; the CLI turns it into stderr lines and an exit code."""

    outcome: CompareOutcome | None = None
    exit_code: int = 0
    messages: list[str] = field(default_factory=list)
    baseline_written: Path | None = None

    def fail(self, message: str, code: int = EXIT_INCONCLUSIVE) -> GateReport:
        self.messages.append(message)
        self.exit_code = max(self.exit_code, code)
        return self


def outcome_json(outcome: CompareOutcome) -> str:
    """The outcome as gbrain prints it for ``--compare BASE CURRENT`` (pretty JSON)."""
    return js_json_dumps(outcome.model_dump(mode="json"), 2) + "\n"


def _name_failed_items(outcome: CompareOutcome, result: RunResult) -> None:
    """Add a note naming the failing gold items of every cell that lost items.

    The baselines carry counts only; the run's turn rows say *which* items fail.
    For a cell that was clean on main these are exactly the newly failed ones.
    """
    names = failed_items(result)
    for breach in outcome.breaches:
        if breach.metric != "gold_failed" or breach.current is None:
            continue
        items = names.get(breach.cell)
        if not items:
            continue
        shown = ", ".join(items[:MAX_NAMED_ITEMS])
        more = f" … and {len(items) - MAX_NAMED_ITEMS} more" if len(items) > MAX_NAMED_ITEMS else ""
        scope = "newly-failed items" if not breach.main else f"failing items now (main had {breach.main})"
        outcome.notes.append(f"{scope} in {breach.cell}: {shown}{more}")


def unclean_reasons(result: RunResult) -> str:
    """Why a run's numbers must not become a baseline ("" when it is clean).

    A fault, a seed failure or an interruption means some turns measured the machine
    (connections, timeouts, a dead container), not the memory system.
    """
    reasons = []
    counts: dict[str, int] = {}
    for fault in result.meta.faults:
        counts[fault.fault_class] = counts.get(fault.fault_class, 0) + 1
    reasons += [f"{n} {cls}" for cls, n in sorted(counts.items())]
    if result.seed_failures:
        reasons.append(f"{len(result.seed_failures)} seed failure(s)")
    run = result.meta.run
    if run is not None and not run.complete:
        reasons.append(f"interrupted by {run.interrupted_by or 'a signal'}")
    return ", ".join(reasons)


def apply_gate(
    result: RunResult,
    *,
    harnesses: list[str],
    suites: list[str],
    compare: Path | None,
    committed: Path | None,
    update_baseline: Path | None,
    justification: str | None,
    allow_regression: str | None,
    ci: bool,
    selection: list[str] | None = None,
) -> GateReport:
    """Update the baseline and/or gate a finished run (spec §10.3).

    * ``selection`` (``--fixture``): a partial run is never compared with, nor
      written as, a baseline -- a baseline always covers the whole corpus.

    * ``update_baseline``: write the canonical baseline (with ``justification``)
      BEFORE comparing, so a local ``--update-baseline --compare main.json`` sees its
      own update as the committed baseline.  Refused when the run is not clean
      (faults, seed failures, interruption): see :func:`unclean_reasons`.
    * ``compare``: main's baseline.  ``committed`` is the bless/hardening target;
      ``None`` or a missing file means "no committed baseline" (the CLI resolves the
      default from the corpus's project: ``RunConfig.default_committed_baseline``).
    * ``allow_regression`` is a local escape hatch and is refused under CI, before
      anything is written.
    * Seed failures make the run invalid: exit 2 whatever the verdict.

    The caller attaches ``report.outcome`` to the result (``result.meta.compare``) before
    writing ``--out``/``--json``.
    """
    report = GateReport()
    if allow_regression is not None and ci:
        return report.fail(
            "--allow-regression is a local escape hatch and is refused when CI is set: "
            "a change must not approve itself (commit a baseline with --justification instead)"
        )
    if selection and (compare is not None or update_baseline is not None):
        flag = "--compare" if compare is not None else "--update-baseline"
        return report.fail(
            f"refusing {flag} on a partial run (--fixture {' '.join(selection)}): a baseline covers the whole "
            f"corpus, so the missing fixtures would read as lost coverage — re-run without --fixture to gate"
        )
    if justification is not None and update_baseline is None:
        report.messages.append("note: --justification only takes effect with --update-baseline")

    if update_baseline is not None:
        unclean = unclean_reasons(result)
        if unclean:
            report.fail(f"refusing --update-baseline: the run is not clean ({unclean}); "
                        f"{update_baseline} left untouched")
        else:
            baseline = canonical_baseline(
                result, harnesses=harnesses, suites=suites, justification=justification
            )
            if justification is None:
                _warn_if_justification_needed(report, baseline, compare or update_baseline)
            write_baseline(baseline, update_baseline)
            report.baseline_written = update_baseline
            report.messages.append(f"wrote baseline {update_baseline}")

    if compare is not None:
        try:
            main = parse_baseline(compare)
            committed_baseline = parse_baseline(committed) if committed is not None and committed.is_file() else None
        except BaselineError as exc:
            return report.fail(f"compare failed: {exc}")
        current = canonical_baseline(result, harnesses=harnesses, suites=suites)
        outcome = compare_baselines(
            current, main, allow_regression=allow_regression, committed=committed_baseline,
            fresh_corpus=result.meta.fresh_corpus is not None,
        )
        _name_failed_items(outcome, result)
        report.outcome = outcome
        report.exit_code = max(report.exit_code, exit_code_for(outcome.verdict))

    if result.seed_failures:
        ids = ", ".join(f.fixture_id for f in result.seed_failures)
        report.fail(f"SEED FAILURES ({len(result.seed_failures)}) — run is invalid: {ids}")
    return report


def _warn_if_justification_needed(report: GateReport, baseline: Baseline, reference: Path) -> None:
    """Say so now when the new baseline moves adversely vs the one it replaces (or main's):
    the gate will refuse it without a ``justification``, and exit 0 here would hide that."""
    if not reference.is_file():
        return
    try:
        previous = parse_baseline(reference)
    except BaselineError:
        return
    breaches = compare_baselines(baseline, previous).breaches
    if breaches:
        cells = ", ".join(sorted({f"{b.cell} {b.metric}" for b in breaches})[:5])
        report.messages.append(
            f"warning: the new baseline regresses vs {reference} ({cells}) — the gate will need a "
            'justification: re-run with --update-baseline --justification "why" and commit that'
        )


def compare_side(path: Path, role: str) -> Baseline:
    """One file of ``--compare BASE CURRENT`` as a baseline; a run result (``--out``) stands for its own.

    Errors name the argument (BASE or CURRENT) and the file, so a result given where a
    baseline belongs is never reported as the *other* file's fault.
    """
    import json

    from pydantic import ValidationError

    from brainbench.models.result import RunResult

    where = f"--compare {role} {path}"
    text = read_gate_file(path, where)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not (isinstance(data, dict) and "receipt" in data and "schema_version" not in data):
        try:
            return parse_baseline_text(text, str(path))
        except BaselineError as exc:
            raise BaselineError(f"{where}: not a baseline: {str(exc).split(': ', 1)[-1]}") from None
    try:
        result = RunResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BaselineError(f"{where}: a run result that cannot be read: "
                            f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    run = result.meta.run
    if run is not None and (not run.complete or run.fixture_selection):
        why = "is incomplete" if not run.complete else f"covers only --fixture {' '.join(run.fixture_selection or [])}"
        raise BaselineError(f"{where}: a run result that {why}; a baseline covers the whole corpus")
    harnesses = list(run.harnesses) if run and run.harnesses else sorted({c.harness for c in result.cells})
    suites = list(run.suites) if run and run.suites else sorted({c.suite for c in result.cells})
    return canonical_baseline(result, harnesses=harnesses, suites=suites)


def compare_files(base: Path, current: Path, *, allow_regression: str | None = None,
                  ci: bool = False) -> GateReport:
    """``--compare BASE CURRENT``: pure file-vs-file, no run, no committed-baseline check.

    Either file may be a baseline or a run result (its canonical baseline is compared).
    The CLI prints :func:`outcome_json` of ``report.outcome`` on stdout.
    """
    report = GateReport()
    if allow_regression is not None and ci:
        return report.fail("--allow-regression is a local escape hatch and is refused when CI is set")
    try:
        main = compare_side(base, "BASE")
        cur = compare_side(current, "CURRENT")
    except BaselineError as exc:
        return report.fail(f"compare failed: {exc}")
    outcome = compare_baselines(cur, main, allow_regression=allow_regression)
    report.outcome = outcome
    report.exit_code = exit_code_for(outcome.verdict)
    return report
