"""BrainBench's own deterministic corpus generator (spec §12).

``generate_and_write`` is what ``brainbench corpus generate`` calls; tests call
``generate_corpus`` directly with small counts. Names are resolved lazily so mounting
the CLI sub-app (which imports this package) stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brainbench.generator.corpus import Corpus

__all__ = ["DEFAULT_COUNTS", "DEFAULT_SEED", "Corpus", "generate_and_write", "generate_corpus",
           "rebuild_command"]

_FROM_CORPUS = {"DEFAULT_COUNTS", "DEFAULT_SEED", "Corpus", "generate_corpus"}


def __getattr__(name: str) -> Any:
    if name in _FROM_CORPUS:
        from brainbench.generator import corpus

        return getattr(corpus, name)
    raise AttributeError(name)


def rebuild_command(seed: int, trust: str = "ours") -> str:
    extra = f" --trust {trust}" if trust != "ours" else ""
    return f"brainbench corpus generate --seed {seed}{extra} --project ."


def generate_and_write(seed: int, fixtures_dir: Path, gold_dir: Path,
                       counts: dict[str, int] | None = None, trust: str = "ours") -> tuple[Corpus, dict[str, Any]]:
    """Regenerate the ``gen-*`` files and the ledger; returns (corpus, ledger)."""
    from brainbench.generator.corpus import generate_corpus
    from brainbench.generator.ledger import build_ledger, ledger_path, read_ledger, write_ledger
    from brainbench.generator.write import write_corpus

    corpus = generate_corpus(seed, counts, trust)  # type: ignore[arg-type]
    write_corpus(corpus, fixtures_dir, gold_dir)
    path = ledger_path(fixtures_dir)
    ledger = build_ledger(corpus, fixtures_dir, gold_dir, rebuild_command(seed, trust), read_ledger(path))
    write_ledger(path, ledger)
    return corpus, ledger
