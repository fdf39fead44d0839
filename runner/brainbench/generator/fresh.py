"""A corpus nobody has seen: generated at grading time from a fresh seed (``run --fresh-corpus [SEED]``).

The committed corpus's gold is public, so an image can ship it and score perfectly without
reading the brain.  A fresh corpus is our generator's output for a seed drawn now (53 random bits,
so it survives a round trip through JavaScript's numbers and cannot be guessed or enumerated), with
every category, memory-trust included; its fixtures carry the same ids as the committed ones
but other people, prompts, pages and gold.

The result records the seed, or with ``--withhold-seed`` only a commitment to it: SHA-256 over
the generator, the trust mode, the seed and a 128-bit random salt (the salt keeps a small, chosen
seed from being found by trying seeds against the commitment).  The seed and salt then go to a
seed file (mode 0600) to publish with the result; ``brainbench corpus verify-seed`` checks a
revealed seed against the commitment and regenerates the corpus to check the receipt's
fixtures_hash, so a publisher cannot swap the gold after the fact.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainbench.generator.corpus import GENERATOR_NAME, GENERATOR_VERSION, generate_corpus
from brainbench.generator.trust import TrustMode
from brainbench.generator.write import dumps, write_corpus
from brainbench.models.result import MAX_FRESH_SEED, FreshCorpus

SEED_BITS = 53  # MAX_FRESH_SEED's width
TRUST: TrustMode = "ours"
GENERATOR = f"{GENERATOR_NAME} {GENERATOR_VERSION}"
REVEAL_FORMAT = 1
WITHHELD_RECEIPT_SEED = -1
_COMMIT_DOMAIN = "brainbench-fresh-corpus-v1"


class FreshCorpusError(ValueError):
    """A seed or seed file that cannot be used: one line, naming what."""


def new_seed() -> int:
    seed = secrets.randbits(SEED_BITS)
    assert seed <= MAX_FRESH_SEED
    return seed


def commitment(seed: int, salt: str, generator: str = GENERATOR, trust: str = TRUST) -> str:
    text = f"{_COMMIT_DOMAIN}\n{generator}\n{trust}\n{seed}\n{salt}\n"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class FreshCorpusRun:
    """A generated corpus in a private temporary directory, and what the result records of it."""

    seed: int
    salt: str
    directory: Path
    fixtures: int

    @property
    def fixtures_dir(self) -> Path:
        return self.directory / "fixtures"

    @property
    def gold_dir(self) -> Path:
        return self.directory / "gold"

    def record(self, withhold: bool) -> FreshCorpus:
        return FreshCorpus(generator=GENERATOR, trust=TRUST, commitment=commitment(self.seed, self.salt),
                           seed=None if withhold else self.seed, salt=None if withhold else self.salt,
                           fixtures=self.fixtures)

    def reveal(self, fixtures_hash: str) -> dict[str, Any]:
        """The seed file's document: everything ``verify-seed`` needs, next to the result."""
        return {"fresh_corpus_reveal": REVEAL_FORMAT, "generator": GENERATOR, "trust": TRUST, "seed": self.seed,
                "salt": self.salt, "commitment": commitment(self.seed, self.salt), "fixtures_hash": fixtures_hash}

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def generate_fresh(seed: int, parent: Path | None = None) -> FreshCorpusRun:
    """Generate the corpus for ``seed`` into a new directory only our uid can read (mkdtemp is 0700)."""
    directory = Path(tempfile.mkdtemp(prefix="brainbench-fresh-", dir=parent))
    try:
        corpus = generate_corpus(seed, trust=TRUST)
        write_corpus(corpus, directory / "fixtures", directory / "gold")
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return FreshCorpusRun(seed=seed, salt=secrets.token_hex(16), directory=directory, fixtures=len(corpus.fixtures))


def write_reveal(path: Path, document: dict[str, Any]) -> None:
    """Write the seed file readable by its owner only; never over an existing file (a seed is not replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(dumps(document))


def redact_seed(argv: list[str]) -> list[str]:
    """``argv`` with a withheld seed replaced, so the receipt's cmd_args does not reveal it."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next and not arg.startswith("-"):
            out.append("<withheld>")
        elif arg.startswith(("--fresh-corpus=", "--fresh-corpus-seed=")):
            out.append(arg.split("=", 1)[0] + "=<withheld>")
        else:
            out.append(arg)
        hide_next = arg in ("--fresh-corpus", "--fresh-corpus-seed")
    return out


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FreshCorpusError(f"{path}: cannot read the {what}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(doc, dict):
        raise FreshCorpusError(f"{path}: $: the {what} must be a JSON object")
    return doc


def verify_seed(result_path: Path, reveal_path: Path | None) -> tuple[int, str]:
    """Check a revealed seed against a fresh-corpus result; returns (seed, fixtures_hash) or raises."""
    from brainbench.corpus.loader import load_corpus

    result = _load_json(result_path, "result")
    meta = (result.get("_meta") or {}).get("fresh_corpus")
    receipt = result.get("receipt") or {}
    if not isinstance(meta, dict) or not isinstance(meta.get("commitment"), str):
        raise FreshCorpusError(f"{result_path}: $._meta.fresh_corpus: not the result of a --fresh-corpus run")
    source, at = (result_path, "$._meta.fresh_corpus") if reveal_path is None else (reveal_path, "$")
    revealed = meta if reveal_path is None else _load_json(reveal_path, "seed file")
    seed, salt = revealed.get("seed"), revealed.get("salt")
    if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(salt, str):
        raise FreshCorpusError(f"{source}: {at}.seed: no seed and salt here (withheld? pass the seed file)")
    generator, trust = meta.get("generator", GENERATOR), meta.get("trust", TRUST)
    if commitment(seed, salt, generator, trust) != meta["commitment"]:
        raise FreshCorpusError(f"{source}: {at}.seed: seed {seed} and its salt do not match the result's commitment "
                               f"{meta['commitment'][:12]}…")
    if generator != GENERATOR or trust != TRUST:
        raise FreshCorpusError(f"{result_path}: $._meta.fresh_corpus.generator: made by {generator} ({trust}); "
                               f"this is {GENERATOR} ({TRUST}), which cannot regenerate it")
    run = generate_fresh(seed)
    try:
        fixtures_hash = load_corpus(run.fixtures_dir, run.gold_dir).fixtures_hash
    finally:
        run.remove()
    if fixtures_hash != receipt.get("fixtures_hash"):
        raise FreshCorpusError(f"{result_path}: $.receipt.fixtures_hash: seed {seed} generates a corpus hashing to "
                               f"{fixtures_hash[:12]}…, not the {str(receipt.get('fixtures_hash'))[:12]}… graded")
    return seed, fixtures_hash
