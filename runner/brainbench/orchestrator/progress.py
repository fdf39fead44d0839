"""Progress on stderr for long runs: a bar on a terminal, a line per tenth of the run
otherwise (CI logs, ``docker compose run`` without a TTY), or nothing (``--quiet``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_reporter(total: int, enabled: bool, tty: bool = True) -> Iterator[Callable[[str], None]]:
    if not enabled:
        yield lambda _key: None
        return
    if not tty:
        yield _line_progress(total)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda key: bar.update(task, advance=1, description=key)


def _line_progress(total: int) -> Callable[[str], None]:
    import sys
    import time

    started = time.monotonic()
    step = max(1, total // 10)
    done = 0

    def advance(_key: str) -> None:
        nonlocal done
        done += 1
        if done % step == 0 or done == total:
            sys.stderr.write(f"replayed {done}/{total} ({time.monotonic() - started:.0f} s)\n")
            sys.stderr.flush()

    return advance
