"""The five bugs an audit planted that the suite once missed (issue #33), each planted alone, must now fail
the fast tests of the module it sits in.

Each bug is a one-line edit to a copy of runner/ in a temporary directory (benchmarks/mutation.py's
sandbox: PYTHONPATH first, so the hook programs the tests start read the bug too); the module's fast
tests run there as a subprocess.  The unplanted copy passing the same tests is checked once, so a
failure here means the tests caught the bug, not that the sandbox is broken.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


mutation = _load("mutation")

# (module, the line as it is, the line with the bug): the list, in its order.
BUGS = {
    "false_fire_rate over the wrong denominator": (
        "metrics/retrieval.py",
        '"false_fire_rate": false_fires / quiet if quiet else 0.0,',
        '"false_fire_rate": false_fires / (retrieve + quiet) if retrieve + quiet else 0.0,'),
    "write-back: one stored row satisfies several gold facts": (
        "writeback/score.py",
        "row = next((r for r in rows if r.id not in consumed and _matches(r, spec)), None)",
        "row = next((r for r in rows if _matches(r, spec)), None)"),
    "push scoring without de-duplicating injected slugs": (
        "metrics/retrieval.py",
        "injected = list(dict.fromkeys(row.injected_slugs))",
        "injected = list(row.injected_slugs)"),
    "codex's static Brain index in reverse order": (
        "hooks/codex.py",
        'for slug, title in rows)])',
        'for slug, title in rows[::-1])])'),
    "avg_injected_tokens off by one in its denominator": (
        "metrics/retrieval.py",
        "return sum(r.injected_tokens for r in rows) / len(rows) if rows else 0.0",
        "return sum(r.injected_tokens for r in rows) / (len(rows) + 1) if rows else 0.0"),
}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> object:
    return mutation.Sandbox(tmp_path_factory.mktemp("planted"))


def _tests(module: str) -> tuple[str, ...]:
    return mutation.TARGETS[module][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("module", sorted({m for m, _, _ in BUGS.values()}))
def test_the_unplanted_copy_passes(sandbox: object, module: str) -> None:
    source = (mutation.PACKAGE / module).read_text(encoding="utf-8")
    passed, _ = sandbox.run(module, source, _tests(module), 300)  # type: ignore[attr-defined]
    assert passed, f"{module}: its fast tests fail without any planted bug ({' '.join(_tests(module))})"


@pytest.mark.parametrize("bug", list(BUGS))
def test_a_planted_bug_fails_the_fast_tests(sandbox: object, bug: str) -> None:
    module, line, planted = BUGS[bug]
    source = (mutation.PACKAGE / module).read_text(encoding="utf-8")
    assert source.count(line) == 1, f"{module} no longer has the line this bug edits: update BUGS"
    passed, _ = sandbox.run(module, source.replace(line, planted), _tests(module), 300)  # type: ignore[attr-defined]
    assert not passed, f"planted in {module}, not caught by {' '.join(_tests(module))}: {bug}"
