"""Load a corpus: fixture dir + sealed gold dir → validated, hashed, joined fixtures.

Every problem in every file is collected and raised once as ``CorpusError``; a
corpus is either wholly valid or not used at all.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from brainbench.corpus.errors import CorpusError, Problem, json_path
from brainbench.corpus.hashing import fixtures_hash
from brainbench.corpus.rules import SEALED, find_gold_keys, fixture_rules, gold_rules
from brainbench.jsjson import js_sort_key, json_parse_number
from brainbench.jsstring import without_lone_surrogates
from brainbench.models.corpus import Fixture, Gold, PublicTurn

FIXTURE_SUFFIX = ".fixture.json"
GOLD_SUFFIX = ".gold.json"
# Bigger than gbrain's 5,000,000-byte seed-page cap on purpose: such a page must
# load and then fail seeding (a per-fixture seed failure), as in gbrain.
MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class LoadedFixture:
    fixture: Fixture
    gold: Gold
    file: Path
    gold_file: Path

    @property
    def fixture_id(self) -> str:
        return self.fixture.fixture_id

    def public_turns(self) -> list[PublicTurn]:
        return [PublicTurn.of(t) for t in self.fixture.turns]


@dataclass(frozen=True)
class ContinuityPair:
    pair_id: str
    writer: LoadedFixture
    reader: LoadedFixture


@dataclass(frozen=True)
class Corpus:
    fixtures: list[LoadedFixture]
    fixtures_hash: str
    fixtures_dir: Path
    gold_dir: Path
    pairs: dict[str, ContinuityPair] = field(default_factory=dict)

    def by_id(self) -> dict[str, LoadedFixture]:
        return {f.fixture_id: f for f in self.fixtures}


def _list(directory: Path, suffix: str, problems: list[Problem]) -> list[Path]:
    if not directory.is_dir():
        problems.append(Problem(str(directory), "$", "directory does not exist"))
        return []
    # JS's default sort (UTF-16 code units): code-point order differs for astral names.
    return sorted((p for p in directory.iterdir() if p.name.endswith(suffix)), key=lambda p: js_sort_key(p.name))


# "Unreadable, already reported": distinct from a document that is JSON ``null``.
_UNREADABLE: Any = object()


def _read_capped(path: Path) -> bytes | str:
    """The file's bytes, or why it is refused: corpus files are data, never devices, pipes or foreign files.

    A symlink must stay inside its own directory (a fixture linked to the gold, or to
    /dev/zero, is refused).  The file is opened non-blocking (a FIFO must not hang the
    loader), must be a regular file, and is read up to the cap only, even if it grows.
    """
    root = path.parent.resolve()
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(root):
            return f"symlink to {target} leaves the corpus directory {root}"
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file (a device, pipe or socket cannot be a corpus file)"
        if info.st_size > MAX_FILE_BYTES:
            return f"file is {info.st_size} bytes; the limit is {MAX_FILE_BYTES}"
        # In chunks: a buffered read(n) allocates n bytes up front, even for a tiny file.
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, MAX_FILE_BYTES + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                return f"file grew past the limit of {MAX_FILE_BYTES} bytes while being read"
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_json(path: Path, problems: list[Problem]) -> Any:
    try:
        data = _read_capped(path)
        if isinstance(data, str):
            problems.append(Problem(str(path), "$", data))
            return _UNREADABLE
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(str(path), "$", f"not valid UTF-8 (byte {exc.start})"))
        return _UNREADABLE
    except OSError as exc:
        problems.append(Problem(str(path), "$", f"cannot read file: {exc.strerror}"))
        return _UNREADABLE
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_int=json_parse_number, parse_float=json_parse_number)
        # JSON.parse keeps a lone "\udXXX" half; a pydantic str cannot, so it loads as
        # U+FFFD -- also what gbrain's UTF-8 storage makes of it (docs/FIDELITY.md).
        return without_lone_surrogates(doc) if _SURROGATE_ESCAPE.search(text) else doc
    except json.JSONDecodeError as exc:
        problems.append(Problem(str(path), "$", f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"))
    except ValueError as exc:  # NaN / Infinity, which JSON.parse refuses too
        problems.append(Problem(str(path), "$", f"invalid JSON: {exc}"))
    except RecursionError:
        problems.append(Problem(str(path), "$", "invalid JSON: nesting too deep"))
    return _UNREADABLE


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _no_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON.parse (and so gbrain) does not.
    raise ValueError(f"{name} is not JSON")


def _rule_of(error: dict[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown key {error['loc'][-1]!r}"
    if kind == "missing":
        return "missing required field"
    return str(error["msg"])


def _model_problems(file: Path, exc: ValidationError, skip: set[str]) -> list[Problem]:
    out = []
    for error in exc.errors():
        path = json_path(error["loc"])
        if path in skip:
            continue
        out.append(Problem(str(file), path, _rule_of(error)))
    return out


def _validate_fixture(path: Path, raw: Any) -> tuple[Fixture | None, list[Problem]]:
    if not isinstance(raw, dict):
        return None, [Problem(str(path), "$", "fixture must be a JSON object")]
    sealed = list(find_gold_keys(raw))
    problems = [Problem(str(path), at, SEALED) for at in sealed]
    try:
        fixture = Fixture.model_validate(raw)
    except ValidationError as exc:
        return None, problems + _model_problems(path, exc, set(sealed))
    problems += [Problem(str(path), at, rule) for at, rule in fixture_rules(fixture)]
    return (None if problems else fixture), problems


def _validate_gold(path: Path, raw: Any, fixture: Fixture) -> tuple[Gold | None, list[Problem]]:
    try:
        gold = Gold.model_validate(raw)
    except ValidationError as exc:
        return None, _model_problems(path, exc, set())
    problems = [Problem(str(path), at, rule) for at, rule in gold_rules(gold, fixture)]
    return (None if problems else gold), problems


def load_corpus(fixtures_dir: Path, gold_dir: Path) -> Corpus:
    """Load, validate, join and hash a corpus, or raise ``CorpusError`` listing every problem."""
    problems: list[Problem] = []
    gold_files = _list(gold_dir, GOLD_SUFFIX, problems)
    fixture_files = _list(fixtures_dir, FIXTURE_SUFFIX, problems)

    gold_raw: dict[str, tuple[Path, Any]] = {}
    for path in gold_files:
        raw = _read_json(path, problems)
        if raw is _UNREADABLE:
            continue
        if not isinstance(raw, dict) or not isinstance(raw.get("fixture_id"), str):
            problems.append(Problem(str(path), "$.fixture_id", "gold must be an object with a string fixture_id"))
            continue
        fid = raw["fixture_id"]
        if fid in gold_raw:
            problems.append(
                Problem(str(path), "$.fixture_id",
                        f"duplicate gold fixture_id {fid!r} (also in {gold_raw[fid][0].name})")
            )
            continue
        gold_raw[fid] = (path, raw)

    loaded: list[LoadedFixture] = []
    seen_ids: dict[str, Path] = {}
    joined: set[str] = set()
    for path in fixture_files:
        raw = _read_json(path, problems)
        if raw is _UNREADABLE:
            continue
        fixture, found = _validate_fixture(path, raw)
        problems += found
        fid = raw.get("fixture_id") if isinstance(raw, dict) else None
        if isinstance(fid, str):
            if fid in seen_ids:
                problems.append(
                    Problem(str(path), "$.fixture_id", f"duplicate fixture_id {fid!r} (also in {seen_ids[fid].name})")
                )
                continue
            seen_ids[fid] = path
            if fid in gold_raw:
                joined.add(fid)
            else:
                problems.append(Problem(str(path), "$.fixture_id", f"no gold file for fixture_id {fid!r}"))
        if fixture is None or fixture.fixture_id not in gold_raw:
            continue
        gold_path, gold_doc = gold_raw[fixture.fixture_id]
        gold, found = _validate_gold(gold_path, gold_doc, fixture)
        problems += found
        if gold is not None:
            loaded.append(LoadedFixture(fixture, gold, path, gold_path))

    for fid, (path, _) in gold_raw.items():
        if fid not in joined:
            problems.append(Problem(str(path), "$.fixture_id", f"orphan gold file: no fixture has fixture_id {fid!r}"))

    pairs = _pair(loaded, problems)
    if problems:
        raise CorpusError(sorted(set(problems), key=lambda p: (p.file, p.path, p.rule)))
    return Corpus(
        fixtures=loaded,
        fixtures_hash=fixtures_hash(gold_files, fixture_files),
        fixtures_dir=fixtures_dir,
        gold_dir=gold_dir,
        pairs=pairs,
    )


def _pair(loaded: list[LoadedFixture], problems: list[Problem]) -> dict[str, ContinuityPair]:
    members: dict[str, dict[str, LoadedFixture]] = {}
    for item in loaded:
        block = item.fixture.continuity
        if block is None:
            continue
        slot = members.setdefault(block.pair_id, {})
        if block.pair_role in slot:
            problems.append(
                Problem(
                    str(item.file),
                    "$.continuity.pair_role",
                    f"continuity pair {block.pair_id!r} has a second {block.pair_role}",
                )
            )
            continue
        slot[block.pair_role] = item
    pairs: dict[str, ContinuityPair] = {}
    for pair_id, slot in members.items():
        if "writer" in slot and "reader" in slot:
            pairs[pair_id] = ContinuityPair(pair_id, slot["writer"], slot["reader"])
        else:
            present = next(iter(slot.values()))
            missing = "reader" if "writer" in slot else "writer"
            problems.append(
                Problem(str(present.file), "$.continuity", f"continuity pair {pair_id!r} incomplete: no {missing}")
            )
    return pairs
