"""What a run says on stderr while it runs: every set-up phase as it starts, then fixtures and hook calls.

A bar on a terminal; otherwise one line per phase and a progress line per tenth of the fixtures or
every few seconds, whichever comes first (CI logs, ``docker compose run`` without a TTY); nothing with
``--quiet``.  The orchestrator reports events (:class:`RunEvents`); the CLI chooses the reporter.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

# A line at least this often while fixtures finish or image brains are seeded: no silent minutes.
LINE_EVERY_S = 5.0


class RunEvents(Protocol):
    """What the orchestrator tells whoever watches a run."""

    def phase(self, text: str) -> None:
        """A set-up phase starts (``building the brain template``, ``starting a private brain …``)."""

    def unit_done(self, key: str, fixtures: int, calls: int) -> None:
        """A unit finished: ``fixtures`` of the corpus (a continuity pair is two), ``calls`` hook calls."""

    def seeded(self, done: int, total: int) -> None:
        """An image seeded its brain for one more fixture (seed contract): ``done`` of ``total``."""


class Silent:
    """Events nobody watches (a library caller, ``--quiet``)."""

    def phase(self, text: str) -> None:
        pass

    def unit_done(self, key: str, fixtures: int, calls: int) -> None:
        pass

    def seeded(self, done: int, total: int) -> None:
        pass


class Tally(Silent):
    """Counts what a run did, for its closing line; the reporters below count the same way."""

    def __init__(self, total_fixtures: int, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self.total = total_fixtures
        self.fixtures = 0
        self.calls = 0
        self.seeds: tuple[int, int] | None = None

    def unit_done(self, key: str, fixtures: int, calls: int) -> None:
        self.fixtures += fixtures
        self.calls += calls

    def seeded(self, done: int, total: int) -> None:
        self.seeds = (done, total)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def counts(self) -> str:
        seeds = f"seeded {self.seeds[0]}/{self.seeds[1]} image brains, " if self.seeds else ""
        return f"{seeds}replayed {self.fixtures}/{self.total} fixtures, {self.calls:,} hook calls"


class LineProgress(Tally):
    """Plain lines on ``write`` (stderr), each stamped with the seconds since the run started."""

    def __init__(self, total_fixtures: int, write: Callable[[str], None], started: float | None = None) -> None:
        super().__init__(total_fixtures, started)
        self.write = write
        self.step = max(1, total_fixtures // 10)
        self.last_line = self.started

    def _line(self, text: str) -> None:
        self.last_line = time.monotonic()
        self.write(f"[{self.elapsed_s:6.1f} s] {text}")

    def phase(self, text: str) -> None:
        self._line(text)

    def unit_done(self, key: str, fixtures: int, calls: int) -> None:
        before = self.fixtures
        super().unit_done(key, fixtures, calls)
        tenth = self.fixtures // self.step > before // self.step
        if tenth or self.fixtures >= self.total or time.monotonic() - self.last_line >= LINE_EVERY_S:
            self._line(self.counts())

    def seeded(self, done: int, total: int) -> None:
        super().seeded(done, total)
        if time.monotonic() - self.last_line >= LINE_EVERY_S or done == total:
            self._line(self.counts())


class BarProgress(Tally):
    """A rich bar on a terminal; phases are printed above it and stay."""

    def __init__(self, total_fixtures: int, bar: Any, task: Any, started: float | None = None) -> None:
        super().__init__(total_fixtures, started)
        self.bar = bar
        self.task = task

    def phase(self, text: str) -> None:
        self.bar.console.print(f"[dim]{self.elapsed_s:6.1f} s[/dim] {text}", markup=True, highlight=False)
        self.bar.update(self.task, description=text)

    def unit_done(self, key: str, fixtures: int, calls: int) -> None:
        super().unit_done(key, fixtures, calls)
        self.bar.update(self.task, completed=self.fixtures, description=f"{self.calls:,} hook calls · {key}")

    def seeded(self, done: int, total: int) -> None:
        super().seeded(done, total)
        self.bar.update(self.task, description=f"seeded {done}/{total} image brains")


def _stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


@contextlib.contextmanager
def progress_reporter(total_fixtures: int, enabled: bool, tty: bool = True,
                      started: float | None = None) -> Iterator[Tally]:
    """The reporter for a run of ``total_fixtures`` fixtures, its clock started at ``started`` (monotonic;
    default now); a :class:`Tally` either way, for the closing line."""
    if not enabled:
        yield Tally(total_fixtures, started)
        return
    if not tty:
        yield LineProgress(total_fixtures, _stderr_line, started)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("fixtures"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=total_fixtures)
        yield BarProgress(total_fixtures, bar, task, started)
