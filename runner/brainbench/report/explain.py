"""``brainbench explain``: one fixture's (or one turn's) evidence in the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from brainbench.models.phases import RunPhases
from brainbench.models.trace import TurnTrace
from brainbench.report.phases import HEADER, rows, summary_line

_STYLE = {"injected": "green", "quiet": "green", "budget": "yellow", "suppressed": "cyan",
          "unresolvable": "magenta", "not_injected": "red", "fault": "red bold", "other_source": "red bold",
          "wrong_page": "red", "false_fire": "red"}


def select(traces: Sequence[TurnTrace], target: str, harness: str | None) -> list[TurnTrace]:
    """Rows for ``FIXTURE`` or ``FIXTURE#TURN`` (optionally one harness), in run order."""
    fixture, sep, turn = target.partition("#")
    if sep and not turn.strip().isdigit():
        raise ValueError(f"{target!r}: expected FIXTURE or FIXTURE#TURN with a numeric turn")
    out = [t for t in traces if t.fixture_id == fixture and (not sep or t.turn_id == int(turn))
           and (harness is None or t.harness == harness)]
    return out


def _highlight(context: str, slugs: Sequence[str]) -> Text:
    text = Text(context)
    for slug in slugs:
        text.highlight_words([slug], style="bold green")
    return text


def render_turn(t: TurnTrace) -> Panel:
    gold = t.gold
    wanted = [*(gold.gold_slugs or []), *(gold.acceptable_slugs or [])] if gold else []
    head = Table.grid(padding=(0, 1))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("prompt", escape(t.prompt))
    if t.image:
        head.add_row("image", escape(t.image) + " (reasons compare it with the reference; its internals are not read)")
    head.add_row("prior", f"{t.prior_messages} earlier message(s), {t.prior_injections} earlier injection(s)")
    if gold is None:
        head.add_row("gold", "none for this turn")
    else:
        what = "retrieve " + ", ".join(gold.gold_slugs or []) if gold.should_retrieve else "stay quiet"
        if gold.acceptable_slugs:
            what += f" (acceptable: {', '.join(gold.acceptable_slugs)})"
        head.add_row("gold", escape(what))
    wire = f"exit {t.exit_code}" if t.exit_code is not None else "no exit code"
    wire += f" · {t.latency_ms:.1f} ms · {t.injected_tokens} tokens · {t.context_chars} chars"
    if t.timed_out:
        wire += " · timed out"
    head.add_row("wire", wire)
    if t.fault_class:
        head.add_row("fault", Text(f"{t.fault_class}: {t.fault_detail}", style="red"))
    if t.stderr_tail.strip():
        head.add_row("stderr", escape(t.stderr_tail.strip()[-300:]))
    verdicts = Table(show_header=True, header_style="bold", expand=True)
    verdicts.add_column("item", no_wrap=True)
    verdicts.add_column("verdict", no_wrap=True)
    verdicts.add_column("reason")
    for v in t.verdicts:
        verdicts.add_row(v.slug or "(turn)", Text(v.verdict, style=_STYLE.get(v.verdict, "")), escape(v.reason))
    parts: list[object] = [head]
    if t.context:
        cut = " (cut)" if t.context_chars > len(t.context) else ""
        parts.append(Panel(_highlight(t.context, wanted), title=f"injected context{cut}", border_style="dim"))
    else:
        parts.append(Text("injected context: (silence)", style="dim"))
    if t.reference:
        ref = ", ".join(f"{p.slug} [{p.fate}{f' #{p.rank}' if p.rank else ''}; {p.rule}]" for p in t.reference)
        parts.append(Text(f"reference reflex (budget {t.budget}): {ref}", style="dim"))
    if t.verdicts:
        parts.append(verdicts)
    failed = any(not v.passed for v in t.verdicts)
    title = f"{t.harness} · {t.fixture_id}#{t.turn_id} · {', '.join(t.suites)}"
    return Panel(Group(*parts), title=title, title_align="left",  # type: ignore[arg-type]
                 border_style="red" if failed else "green")


def print_explain(console: Console, traces: Sequence[TurnTrace]) -> None:
    for t in traces:
        console.print(render_turn(t))


def render_phases(phases: RunPhases) -> Group:
    """Where the run's wall time went, one small table per seam (``_meta.phases``)."""
    parts: list[object] = []
    for row in rows(phases):
        table = Table(show_header=False, title=f"phases · {row[0]} · {row[1]}", title_justify="left")
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for name, cell in zip(HEADER[2:], row[2:], strict=True):
            table.add_row(name, escape(cell))
        parts.append(table)
    parts.append(Text(summary_line(phases), style="dim"))
    return Group(*parts)  # type: ignore[arg-type]
