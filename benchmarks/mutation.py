"""A mutation score for the code that grades: plant one small bug at a time, run that module's fast tests.

    .venv/bin/python benchmarks/mutation.py                      # every target (≈ 20 min on a busy 2-core machine)
    .venv/bin/python benchmarks/mutation.py --only metrics/retrieval.py --jobs 2
    .venv/bin/python benchmarks/mutation.py --list               # the mutants, without running anything

Each mutant is one AST change (a comparison or arithmetic operator swapped, an integer constant + 1,
a `not` dropped, `and` ↔ `or`), applied to a copy of runner/ in a temporary directory; the module's fast
tests then run against that copy (PYTHONPATH first, so the hook programs the tests start import it too).
A mutant is killed when the tests fail (or run past their time limit), survived when they pass.  The
per-module counts and every survivor go to benchmarks/results.json (``rows.mutation``), and
benchmarks/update_docs.py --render-only writes them into README.md and docs/MUTATION.md, where each
survivor carries the reason it is equivalent (benchmarks/mutation_reasons.json) or says it is not explained.

Our own mutator, not mutmut: no new dependency, and the operators are the ones the issue's planted bugs
are made of (a wrong denominator, a dropped de-duplication, an off-by-one).
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "runner" / "brainbench"
METRICS_TESTS = ("tests/metrics/test_metric_formulas.py",)
# module (under runner/brainbench/) → (the fast tests that cover it, the functions mutated; () = all of it).
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "metrics/retrieval.py": (METRICS_TESTS, ()),
    "metrics/cells.py": (METRICS_TESTS, ("write_back_metrics", "assemble_cells")),
    # The per-item scorers need a scenario and its memory system (tests/memory, tests/trust: minutes a
    # mutant); the counters' formulas, the refusal and receipt rules are mutated here.
    "metrics/trust_suites.py": ((*METRICS_TESTS, "tests/memory/test_trust_scoring.py"),
                                ("rate", "suite_metrics", "_promotion", "_unaccounted", "_surfaces_for")),
    "metrics/trust_cells.py": (METRICS_TESTS, ()),
    "metrics/poisoning.py": ((*METRICS_TESTS, "tests/memory/test_trust_scoring.py"), ("poisoning_metrics",)),
    "models/writeback.py": (METRICS_TESTS, ("of", "metrics")),
    "writeback/score.py": (METRICS_TESTS, ("score_rows", "_has_keywords", "_matches", "gold_items")),
    "writeback/continuity.py": (METRICS_TESTS, ("score_continuity_by",)),
    "harnesses/grading.py": (("tests/harnesses/test_grading.py",), ()),
    "harnesses/injected.py": (("tests/harnesses/test_grading.py", "tests/metrics/test_metric_formulas.py",
                               "tests/hooks/test_reference_turns.py::test_reference_turns_byte_for_byte[stream]"),
                              ()),
    "reflex/render.py": (("tests/reflex/test_reflex_rules.py",
                          "tests/hooks/test_reference_turns.py::test_reference_turns_byte_for_byte[stream]"), ()),
    # gbrain 0.46's index (the reference turns) and 0.60's, which hides quarantined and filtered pages.
    "hooks/codex.py": (("tests/hooks/test_reference_turns.py::test_reference_turns_byte_for_byte[stream]",
                        "tests/hooks/test_trust_labels.py::"
                        "test_filter_policy_hides_external_pages_and_a_quarantined_page_is_pointed_to_as_data"),
                       ("brain_index",)),
}

_COMPARE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
            ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div}
_SYMBOL = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
           ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
           ast.Div: "/", ast.FloorDiv: "//", ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    what: str
    source: str

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}: {self.what}"


def _skipped_nodes(tree: ast.AST, functions: tuple[str, ...]) -> tuple[set[int], set[int] | None]:
    """ids of nodes never mutated (annotations, docstrings) and, when ``functions`` is set, the only ones that are."""
    skip: set[int] = set()
    only: set[int] | None = set() if functions else None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and only is not None and node.name in functions:
            only.update(id(n) for n in ast.walk(node))
        for ann in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if ann is not None:
                skip.update(id(n) for n in ast.walk(ann))
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                                              ast.Constant):
            skip.update(id(n) for n in ast.walk(body[0]))
    return skip, only


def _changes(node: ast.AST) -> Iterator[tuple[str, object]]:
    """(description, change) for every mutation of one node; ``change`` is applied by ``_apply``."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARE:
                new = _COMPARE[type(op)]
                yield f"`{_SYMBOL[type(op)]}` → `{_SYMBOL[new]}`", ("compare", i, new)
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _ARITH:
        new = _ARITH[type(node.op)]
        yield f"`{_SYMBOL[type(node.op)]}` → `{_SYMBOL[new]}`", ("op", new)
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"`{_SYMBOL[type(node.op)]}` → `{_SYMBOL[new]}`", ("op", new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "`not` dropped", ("not",)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        yield f"`{node.value!r}` → `{node.value + 1!r}`", ("const",)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return super().generic_visit(node)


def _apply(tree: ast.Module, node: ast.AST, change: tuple[object, ...]) -> str:
    kind = change[0]
    if kind == "compare":
        node.ops[change[1]] = change[2]()  # type: ignore[attr-defined, index, operator]
    elif kind == "op":
        node.op = change[1]()  # type: ignore[attr-defined, operator]
    elif kind == "const":
        node.value = node.value + 1  # type: ignore[attr-defined]
    else:  # drop `not`: replace the UnaryOp by its operand
        tree = _Replace(node, node.operand).visit(tree)  # type: ignore[attr-defined]
    return ast.unparse(tree)


def mutants(module: str, functions: tuple[str, ...] = ()) -> Iterator[Mutant]:
    source = (PACKAGE / module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    skip, only = _skipped_nodes(tree, functions)
    nodes = list(ast.walk(tree))
    for index, node in enumerate(nodes):
        if id(node) in skip or (only is not None and id(node) not in only):
            continue
        for what, change in _changes(node):
            fresh = copy.deepcopy(tree)
            target = list(ast.walk(fresh))[index]
            yield Mutant(module, getattr(node, "lineno", 0), what, _apply(fresh, target, change))  # type: ignore[arg-type]


def unmutated(module: str) -> str:
    """The module as the mutants are written (unparsed: no comments), which must pass its tests too."""
    return ast.unparse(ast.parse((PACKAGE / module).read_text(encoding="utf-8")))


class Sandbox:
    """A private copy of runner/ whose one module is rewritten per mutant.

    tests/ is copied too, so editing the tests while a long run goes on cannot change its verdicts; the
    rest of the checkout is linked.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for name in ("runner", "tests"):
            shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for entry in REPO.iterdir():
            if entry.name not in ("runner", "tests", ".git") and not (root / entry.name).exists():
                (root / entry.name).symlink_to(entry)

    def run(self, module: str, source: str, tests: tuple[str, ...], timeout_s: float) -> tuple[bool, float]:
        """(tests passed, seconds)."""
        path = self.root / "runner" / "brainbench" / module
        path.write_text(source, encoding="utf-8")
        # Not the outer pytest's worker identity (xdist names databases and scratch by it).
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
        # No plugin autoload: xdist, hypothesis' and playwright's plugins cost ≈ 1.5 CPU-s a start, most
        # of a mutant's run; the one plugin the fast tests use is named.
        env |= {"PYTHONPATH": str(self.root / "runner"), "BRAINBENCH_HOOK_SERVE": "0",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "anyio.pytest_plugin", "-p", "no:cacheprovider",
               "--no-header", "-o", "addopts=", "-m", "not gbrain", *tests]
        start = time.monotonic()
        try:
            done = subprocess.run(cmd, cwd=self.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=timeout_s, check=False)
            passed = done.returncode == 0
        except subprocess.TimeoutExpired:
            passed = False  # a mutant that hangs the tests is caught by them
        finally:
            shutil.copyfile(PACKAGE / module, path)
        return passed, time.monotonic() - start


def score_module(module: str, jobs: int, log: bool = True) -> dict[str, object]:
    tests, functions = TARGETS[module]
    found = list(mutants(module, functions))
    with tempfile.TemporaryDirectory(prefix="bb-mutation-") as tmp:
        boxes = [Sandbox(Path(tmp) / f"w{i}") for i in range(jobs)]
        ok, baseline_s = boxes[0].run(module, unmutated(module), tests, 600)
        if not ok:
            raise SystemExit(f"mutation: {module}: its tests fail on the unmutated module ({' '.join(tests)})")
        limit = max(30.0, 5 * baseline_s)
        free = list(boxes)

        def one(m: Mutant) -> tuple[Mutant, bool]:
            box = free.pop()
            try:
                passed, _ = box.run(module, m.source, tests, limit)
            finally:
                free.append(box)
            if log:
                print(f"  {'SURVIVED' if passed else 'killed  '} {m.key}", flush=True)
            return m, passed

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, found))
    survivors = [m.key for m, passed in results if passed]
    return {"tests": list(tests), "functions": list(functions), "mutants": len(results),
            "killed": len(results) - len(survivors), "survived": survivors}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated modules (as in TARGETS), default: all")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    args = parser.parse_args(argv)
    modules = args.only.split(",") if args.only else list(TARGETS)
    unknown = [m for m in modules if m not in TARGETS]
    if unknown:
        print(f"mutation: unknown module {unknown[0]!r}; known: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    if args.list:
        for module in modules:
            for m in mutants(module, TARGETS[module][1]):
                print(m.key)
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import doc_tables  # a sibling script, not a package

    doc = doc_tables.load()
    row = doc["rows"].get("mutation", {"modules": {}})
    loads = []
    for module in modules:  # saved after each module: a long run stopped half-way keeps what it measured
        print(f"{module}: {len(list(mutants(module, TARGETS[module][1])))} mutants", flush=True)
        row["modules"][module] = score_module(module, args.jobs)
        loads.append(os.getloadavg()[0])
        row["modules"] = {m: row["modules"][m] for m in TARGETS if m in row["modules"]}
        row |= {"measured_on": dt.date.today().isoformat(), "load_1m": round(sum(loads) / len(loads), 1),
                "cores": os.cpu_count() or 1}
        doc["rows"]["mutation"] = row
        doc_tables.save(doc)
        for path in doc_tables.write_docs(doc):
            print(f"rewrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
