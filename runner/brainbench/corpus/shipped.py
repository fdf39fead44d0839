"""The corpus shipped in the package: the committed fixtures, gold and baseline, for a project that has none.

``corpus/committed/`` links to the checkout's ``fixtures/``, ``gold/`` and ``baselines/``; a wheel
or sdist carries the files themselves (package data), so an installed ``brainbench run`` in an
empty directory grades this corpus, and ``brainbench corpus init DIR`` copies it into a project.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from brainbench import __version__

BASELINE = Path("baselines") / "main.json"


def shipped_corpus() -> Path | None:
    """The directory holding the shipped ``fixtures/``, ``gold/`` and ``baselines/``; None if absent."""
    root = Path(str(resources.files("brainbench.corpus").joinpath("committed")))
    return root if (root / "fixtures").is_dir() and (root / "gold").is_dir() else None


def describe(fixtures: int, fixtures_hash: str) -> str:
    return (f"the corpus shipped with brainbench {__version__} ({fixtures} fixtures, "
            f"fixtures_hash {fixtures_hash[:12]}…)")


class InitError(ValueError):
    """``corpus init`` cannot write where it was asked to; the message names the path."""


def init_project(directory: Path) -> Path:
    """Copy the shipped corpus (fixtures/, gold/, baselines/main.json) into ``directory``; returns it."""
    source = shipped_corpus()
    if source is None:
        raise InitError("this install carries no corpus (build the wheel with scripts/build-dist)")
    taken = [directory / name for name in ("fixtures", "gold", str(BASELINE)) if (directory / name).exists()]
    if taken:
        raise InitError(f"{taken[0]}: already exists; `corpus init` writes a corpus only where there is none")
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("fixtures", "gold"):
        shutil.copytree(source / name, directory / name)
    (directory / BASELINE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / BASELINE, directory / BASELINE)
    return directory
