"""Adversarial corpus input: whatever bytes sit in the fixture and gold dirs, the loader
either returns a corpus or raises ``CorpusError`` whose every problem names a file and
a JSON path — it never raises anything else, never hangs, and stays within bounded memory.

Property tests mutate the reference fixtures (structure and raw bytes) and throw random
JSON at both file kinds; the explicit tests cover the limits one by one.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import MAX_FILE_BYTES, Corpus, load_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEEDS = ("kta-001-deal-recall", "ms-002-nondefault-active", "cont-001-widget-pass-writer")
# Moderate example counts keep this file well under a minute.  No wall-clock deadline per example:
# "never hangs" is load_or_problems' bound, a ratio to this machine's own time for a clean corpus.
PROPERTY = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
# A broken corpus may cost this many clean loads (its problems are collected, not raised at the first).
HANG_RATIO = 50
PATH_RE = re.compile(r"^\$(\.[^.\[\]]+|\[\d+\])*$")


def _reference_dir() -> Path:
    # Resolved at import time for hypothesis strategies (the repo's copy, see its PROVENANCE.md).
    return Path(__file__).resolve().parents[1] / "data" / "reference" / "corpus"


def _seed_docs() -> dict[str, tuple[Any, Any]]:
    ref = _reference_dir()
    out = {}
    for fid in SEEDS:
        fx, gd = ref / "fixtures" / f"{fid}.fixture.json", ref / "gold" / f"{fid}.gold.json"
        out[fid] = (json.loads(fx.read_text()), json.loads(gd.read_text()))
    return out


SEED_DOCS = _seed_docs()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)


@contextmanager
def corpus_dirs(files: dict[str, bytes]) -> Iterator[tuple[Path, Path, set[str]]]:
    """Write ``{"fixtures/x.fixture.json": bytes, "gold/x.gold.json": bytes}`` into a fresh temp dir."""
    with tempfile.TemporaryDirectory(prefix="bb-adversarial-") as tmp:
        root = Path(tmp)
        (root / "fixtures").mkdir()
        (root / "gold").mkdir()
        for rel, data in files.items():
            (root / rel).write_bytes(data)
        names = {str(root / rel) for rel in files} | {str(root / "fixtures"), str(root / "gold")}
        yield root / "fixtures", root / "gold", names


def load_or_problems(fx: Path, gd: Path, names: set[str]) -> Corpus | CorpusError:
    """The property every test shares: a corpus, or a CorpusError whose problems name file + path."""
    started = time.monotonic()
    try:
        corpus = load_corpus(fx, gd)
    except CorpusError as exc:
        assert exc.problems, "a CorpusError must list at least one problem"
        for problem in exc.problems:
            assert problem.file in names, problem
            assert PATH_RE.match(problem.path) or problem.path.startswith("$"), problem
            assert problem.rule, problem
            assert str(problem).startswith(f"{problem.file}: {problem.path}: ")
        outcome: Corpus | CorpusError = exc
    else:
        outcome = corpus
    elapsed = time.monotonic() - started
    assert elapsed < max(1.0, HANG_RATIO * _clean_load_s()), (elapsed, _clean_load_s())
    return outcome


@functools.cache
def _clean_load_s() -> float:
    """This machine's time to load the whole (clean) reference corpus, measured once, in this process."""
    started = time.monotonic()
    load_corpus(_reference_dir() / "fixtures", _reference_dir() / "gold")
    return time.monotonic() - started


def dump(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode()


def files_for(fid: str, fixture: bytes, gold: bytes) -> dict[str, bytes]:
    return {f"fixtures/{fid}.fixture.json": fixture, f"gold/{fid}.gold.json": gold}


def _paths(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*at, i))


def _mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any, key: str) -> Any:
    doc = json.loads(json.dumps(doc))
    if not path:
        if action == "replace":
            return value
        if action == "add_key" and isinstance(doc, dict):
            doc[key] = value
        return doc
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "replace":
        parent[last] = value
    elif action == "delete":
        del parent[last]
    elif action == "add_key" and isinstance(parent[last], dict):
        parent[last][key] = value
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(last, parent[last])
    return doc


# --- properties ---------------------------------------------------------------------------------


@PROPERTY
@given(fixture=json_values, gold=json_values)
def test_random_json_is_a_corpus_error(fixture: Any, gold: Any) -> None:
    with corpus_dirs(files_for("random", dump(fixture), dump(gold))) as (fx, gd, names):
        assert isinstance(load_or_problems(fx, gd, names), CorpusError)


@PROPERTY
@given(data=st.data(), target=st.sampled_from(["fixture", "gold"]),
       action=st.sampled_from(["replace", "delete", "add_key", "duplicate"]),
       value=json_values, key=st.sampled_from(["gold", "gold_slugs", "unknown", "turn_id", "", "should_retrieve"]))
def test_mutated_reference_documents(data: st.DataObject, target: str, action: str, value: Any, key: str) -> None:
    fid = data.draw(st.sampled_from(sorted(SEED_DOCS)), label="seed")
    fixture, gold = SEED_DOCS[fid]
    doc = fixture if target == "fixture" else gold
    path = data.draw(st.sampled_from(list(_paths(doc))), label="path")
    mutated = _mutate(doc, path, action, value, key)
    fixture, gold = (mutated, gold) if target == "fixture" else (fixture, mutated)
    files = files_for(fid, dump(fixture), dump(gold))
    if fid.startswith("cont-"):  # a writer needs its reader, or every case is "incomplete pair"
        reader_fx, reader_gd = _reader_docs()
        files |= files_for("cont-001-widget-pass-reader", dump(reader_fx), dump(reader_gd))
    with corpus_dirs(files) as (fx, gd, names):
        outcome = load_or_problems(fx, gd, names)
    if isinstance(outcome, Corpus):
        assert {f.fixture_id for f in outcome.fixtures} >= {fixture["fixture_id"]}
    if target == "fixture" and action == "add_key" and key == "gold" and isinstance(_at(fixture, path), dict):
        # Gold sealed inside a fixture is always refused, wherever it hides.
        assert isinstance(outcome, CorpusError)
        assert any("gold" in p.path for p in outcome.problems), outcome.problems


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _reader_docs() -> tuple[Any, Any]:
    ref = _reference_dir()
    return (json.loads((ref / "fixtures" / "cont-001-widget-pass-reader.fixture.json").read_text()),
            json.loads((ref / "gold" / "cont-001-widget-pass-reader.gold.json").read_text()))


@PROPERTY
@given(data=st.data(), target=st.sampled_from(["fixture", "gold"]),
       action=st.sampled_from(["truncate", "insert", "overwrite"]),
       blob=st.binary(min_size=1, max_size=8) | st.sampled_from([b"\x00", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80",
                                                                 b"\\u0000", b'"', b"{", b"]"]))
def test_byte_level_damage(data: st.DataObject, target: str, action: str, blob: bytes) -> None:
    fid = data.draw(st.sampled_from([f for f in sorted(SEED_DOCS) if not f.startswith("cont-")]), label="seed")
    fixture, gold = (dump(d) for d in SEED_DOCS[fid])
    raw = fixture if target == "fixture" else gold
    at = data.draw(st.integers(0, len(raw)), label="offset")
    if action == "truncate":
        raw = raw[:at]
    elif action == "insert":
        raw = raw[:at] + blob + raw[at:]
    else:
        raw = raw[:at] + blob + raw[at + len(blob):]
    fixture, gold = (raw, gold) if target == "fixture" else (fixture, raw)
    with corpus_dirs(files_for(fid, fixture, gold)) as (fx, gd, names):
        load_or_problems(fx, gd, names)


# --- the limits, one by one ------------------------------------------------------------------------


def _only(outcome: Corpus | CorpusError) -> list[str]:
    assert isinstance(outcome, CorpusError), "expected the corpus to be rejected"
    return [f"{Path(p.file).name}: {p.path}: {p.rule}" for p in outcome.problems]


def test_a_file_over_the_size_limit_is_rejected_without_reading_it() -> None:
    fixture, gold = SEED_DOCS["kta-001-deal-recall"]
    with corpus_dirs(files_for("kta-001-deal-recall", dump(fixture), dump(gold))) as (fx, gd, names):
        with (fx / "kta-001-deal-recall.fixture.json").open("r+b") as fh:
            fh.truncate(MAX_FILE_BYTES + 1)  # sparse: 16 MiB on paper, no disk and no time
        tracemalloc.start()
        try:
            problems = _only(load_or_problems(fx, gd, names))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert f"kta-001-deal-recall.fixture.json: $: file is {MAX_FILE_BYTES + 1} bytes; the limit is " \
           f"{MAX_FILE_BYTES}" in problems
    assert peak < 4 * 1024 * 1024, f"the loader read a file it had already rejected ({peak} bytes)"


@pytest.mark.parametrize("depth", [990, 5_000, 200_000])
def test_deep_nesting(depth: int) -> None:
    for opener, closer in (("[", "]"), ('{"a":', "}")):
        body = opener * depth + "1" * (opener != "[") + closer * depth
        fixture = ('{"schema_version": 1, "fixture_id": "deep", "suites": ["know-to-ask"], '
                   '"turns": [{"turn_id": 1, "role": "user", "text": "hi"}], "category": ' + body + "}")
        gold = b'{"fixture_id": "deep", "turns": {"1": {"should_retrieve": false}}}'
        with corpus_dirs(files_for("deep", fixture.encode(), gold)) as (fx, gd, names):
            problems = _only(load_or_problems(fx, gd, names))
        assert any(p.startswith("deep.fixture.json: $") for p in problems), problems


@pytest.mark.parametrize(("damage", "needle"), [
    (lambda b: b.replace(b"Alice", b"Al\xffice", 1), "not valid UTF-8"),
    (lambda b: b.replace(b"Alice", b"Al\x00ice", 1), "invalid JSON: Invalid control character"),
    (lambda b: b"\xef\xbb\xbf" + b, "invalid JSON"),
    (lambda b: b.replace(b"What did", b"What \xed\xa0\x80did", 1), "not valid UTF-8"),  # CESU surrogate
    (lambda b: b"", "invalid JSON"),
    (lambda b: b"\x00" * 64, "invalid JSON"),
], ids=["non-utf8", "raw-nul", "bom", "surrogate-bytes", "empty", "all-nul"])
def test_bad_bytes_name_the_file(damage: Any, needle: str) -> None:
    fixture, gold = SEED_DOCS["kta-001-deal-recall"]
    with corpus_dirs(files_for("kta-001-deal-recall", damage(dump(fixture)), dump(gold))) as (fx, gd, names):
        problems = _only(load_or_problems(fx, gd, names))
    assert any(p.startswith("kta-001-deal-recall.fixture.json: $: " + needle) for p in problems), problems


def test_escaped_nul_and_lone_surrogates_in_strings() -> None:
    fixture, gold = SEED_DOCS["kta-001-deal-recall"]
    doc = json.loads(json.dumps(fixture))
    doc["turns"][0]["text"] += "\ud800"  # valid JSON escape: JSON.parse keeps the half, so gbrain runs it
    with corpus_dirs(files_for("kta-001-deal-recall", json.dumps(doc).encode(), dump(gold))) as (fx, gd, names):
        corpus = load_or_problems(fx, gd, names)
    # No pydantic str can hold the half: it loads as U+FFFD (docs/FIDELITY.md), not a corpus error.
    assert isinstance(corpus, Corpus)
    assert corpus.by_id()["kta-001-deal-recall"].fixture.turns[0].text.endswith("\ufffd")
    # An escaped NUL is a valid JSON string: it loads here and is refused at seeding (a seed failure).
    doc = json.loads(json.dumps(fixture))
    doc["turns"][0]["text"] += "\u0000"
    with corpus_dirs(files_for("kta-001-deal-recall", json.dumps(doc).encode(), dump(gold))) as (fx, gd, names):
        assert isinstance(load_or_problems(fx, gd, names), Corpus)


def test_a_number_too_long_to_parse_is_a_corpus_error() -> None:
    # JSON.parse reads a 5,001-digit literal as Infinity, which is no integer (Python's int()
    # would refuse it outright): one problem naming the field, as gbrain's loader reports it.
    fixture, gold = SEED_DOCS["kta-001-deal-recall"]
    raw = dump(fixture).replace(b'"turn_id": 1', b'"turn_id": 1' + b"0" * 5000, 1)
    with corpus_dirs(files_for("kta-001-deal-recall", raw, dump(gold))) as (fx, gd, names):
        problems = _only(load_or_problems(fx, gd, names))
    assert any(p.startswith("kta-001-deal-recall.fixture.json: $.turns[0].turn_id:") for p in problems), problems


@pytest.mark.parametrize("target", ["fixture", "gold", "both"])
def test_a_null_document_is_not_silently_skipped(target: str) -> None:
    # ``null`` parses to None, which the loader also uses for "unreadable, already reported".
    fixture, gold = SEED_DOCS["kta-001-deal-recall"]
    fixture_raw = b"null" if target in ("fixture", "both") else dump(fixture)
    gold_raw = b"null" if target in ("gold", "both") else dump(gold)
    with corpus_dirs(files_for("kta-001-deal-recall", fixture_raw, gold_raw)) as (fx, gd, names):
        problems = _only(load_or_problems(fx, gd, names))
    if target != "gold":
        assert any(p.startswith("kta-001-deal-recall.fixture.json: $") for p in problems), problems
    if target != "fixture":
        assert any(p.startswith("kta-001-deal-recall.gold.json: $") for p in problems), problems


def _long_fixture_load(n: int) -> tuple[Corpus, float, int]:
    """(corpus, seconds, peak traced bytes) of loading one fixture of ``n`` turns."""
    turns = [{"turn_id": i, "role": "user" if i % 2 else "assistant", "text": f"turn {i} about Widget Co"}
             for i in range(1, n + 1)]
    fixture = {"schema_version": 1, "fixture_id": "long-turns", "suites": ["know-to-ask"], "turns": turns}
    gold = {"fixture_id": "long-turns", "turns": {str(i): {"should_retrieve": False} for i in range(1, n + 1, 2)}}
    with corpus_dirs(files_for("long-turns", dump(fixture), dump(gold))) as (fx, gd, _):
        del turns, fixture, gold
        tracemalloc.start()
        try:
            started = time.monotonic()
            corpus = load_corpus(fx, gd)
            elapsed = time.monotonic() - started
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return corpus, elapsed, peak


def test_a_100k_turn_fixture_loads_in_bounded_memory() -> None:
    # Time as a ratio to a 10k-turn load on this machine, now: linear is ≈ 10×, so 40× leaves room for a
    # loaded machine, while anything quadratic (≈ 100×) fails wherever it runs.  The slower of two small
    # loads: a 1k-turn load (~30 ms) caught on a quiet core once made a linear 100k load look 375× slower.
    small_s = max(_long_fixture_load(10_000)[1] for _ in range(2))
    corpus, elapsed, peak = _long_fixture_load(100_000)
    assert len(corpus.fixtures[0].fixture.turns) == 100_000
    assert len(corpus.fixtures[0].public_turns()) == 100_000
    assert peak < 300 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"
    assert elapsed < max(5.0, 40 * small_s), (elapsed, small_s)
