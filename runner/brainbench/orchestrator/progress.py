"""A progress bar on stderr for long runs (rich), or nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_reporter(total: int, enabled: bool) -> Iterator[Callable[[str], None]]:
    if not enabled:
        yield lambda _key: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda key: bar.update(task, advance=1, description=key)
