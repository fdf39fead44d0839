"""``brainbench explain`` and ``brainbench report``: read a result and its trace, show why."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

EXIT_OK, EXIT_ERROR = 0, 2


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")


def explain_command(
    result: Annotated[Path, typer.Argument(help="A result file written by run --out.")],
    target: Annotated[str | None, typer.Argument(
        metavar="FIXTURE[#TURN|#ITEM]",
        help="A fixture id, fixture#turn, or a trust fixture's fixture#item (optional with --phases).")] = None,
    harness: Annotated[str | None, typer.Option(help="Only this harness (openclaw, claude-code, codex).")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="Only turns with a failing verdict.")] = False,
    phases: Annotated[bool, typer.Option("--phases", help="Also print where the run's wall time went per seam: "
                                         "template, clones, seeds, brain start, hook calls, teardown.")] = False,
) -> None:
    """Print the evidence of one fixture or turn: prompt, injected context, gold, verdicts and reasons."""
    from rich.console import Console

    from brainbench.report.explain import print_explain, render_phases, select
    from brainbench.report.trace_file import TraceFileError, load_result

    if target is None and not phases:
        _err("brainbench explain: name a FIXTURE[#TURN|#ITEM], or pass --phases")
        raise typer.Exit(EXIT_ERROR)
    try:
        doc = load_result(result)
    except TraceFileError as exc:
        _err(f"brainbench explain: {exc}")
        raise typer.Exit(EXIT_ERROR) from None
    if phases:
        if doc.meta.phases is None:
            _err(f"brainbench explain: {result} records no phases (_meta.phases): it was written before they were")
            raise typer.Exit(EXIT_ERROR)
        Console().print(render_phases(doc.meta.phases))
        if target is None:
            return
    if _explain_trust(doc, target, harness, failed):
        return
    try:
        rows = select(doc.trace, target, harness)
    except ValueError as exc:
        _err(f"brainbench explain: {exc}")
        raise typer.Exit(EXIT_ERROR) from None
    if not doc.trace:
        _err(f"brainbench explain: {result} carries no trace (_meta.trace); rerun with --out to record one")
        raise typer.Exit(EXIT_ERROR)
    if failed:
        rows = [t for t in rows if any(not v.passed for v in t.verdicts)]
    if rows:
        from brainbench.report.scoreboard import graded_images

        for line in graded_images(doc, {t.harness for t in rows}):
            typer.echo(f"graded: {line.replace('`', '')}")
    if not rows:
        known = sorted({t.fixture_id for t in doc.trace})
        hint = f" (fixtures include {', '.join(known[:5])}…)" if known else ""
        _err(f"brainbench explain: no traced turn matches {target!r}"
             f"{f' for harness {harness}' if harness else ''}{hint}")
        raise typer.Exit(EXIT_ERROR)
    print_explain(Console(), rows)


def _explain_trust(doc: object, target: str, harness: str | None, failed: bool) -> bool:
    """Explain a memory-trust fixture item by item (and, for poisoning, its replayed turns); False when
    ``target`` names no trust fixture of the result."""
    from rich.console import Console

    from brainbench.report.explain import print_explain
    from brainbench.report.trust_explain import find, render_item, verdicts

    found = find(doc.meta.trust, target)  # type: ignore[attr-defined]
    if found is None:
        return False
    score, item = found
    items = [v for v in verdicts(score, item, harness) if not failed or not v.passed]
    if not items:
        _err(f"brainbench explain: no {'failing ' if failed else ''}gold item matches {target!r}"
             f"{f' for harness {harness}' if harness else ''}")
        raise typer.Exit(EXIT_ERROR)
    console = Console()
    for v in items:
        console.print(render_item(score, v))
    if item is None and not failed:
        print_explain(console, [t for t in doc.trace if t.fixture_id == score.fixture_id  # type: ignore[attr-defined]
                                and (harness is None or t.harness == harness)])
    return True


def report_command(
    result: Annotated[Path, typer.Argument(help="A result file written by run --out.")],
    html: Annotated[Path, typer.Option(help="Directory to write index.html into.")],
    compare: Annotated[Path | None, typer.Option(help="A baseline or an earlier result to compare with.")] = None,
) -> None:
    """Write a self-contained HTML report (works from file://, no network): scoreboard, drill-down, plots."""
    from brainbench.report.html import load_side, write_report
    from brainbench.report.trace_file import TraceFileError, load_result

    try:
        doc = load_result(result)
        baseline = load_side(compare) if compare is not None else None
    except (TraceFileError, ValueError) as exc:
        _err(f"brainbench report: {exc}")
        raise typer.Exit(EXIT_ERROR) from None
    if not doc.trace:
        _err(f"brainbench report: {result} carries no trace; the report shows cells only")
    typer.echo(str(write_report(html, doc, baseline)))


def register(app: typer.Typer) -> None:
    app.command("explain")(explain_command)
    app.command("report")(report_command)
