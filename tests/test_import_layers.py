"""The import graph reads in the order the data flows, with no import back up that flow.

Every ``import`` counts, including ones inside functions (a lazy import is still a
dependency at run time); only ``if TYPE_CHECKING:`` blocks are exempt.
"""

from __future__ import annotations

import ast
from pathlib import Path

import brainbench

PACKAGE = Path(brainbench.__file__).parent

# Data-flow order.  A module may import its own layer or any earlier one, never a later one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("models",),  # shapes (pydantic models, the hook-call dataclasses)
    ("jsjson", "jsstring", "jscase", "jsdate", "scratch", "ownership", "scratch_owner", "version", "_revision",
     "disk_full"),  # small shared helpers
    ("corpus",),
    ("brain",),
    ("reflex",),  # the retrieval rules the hook programs run
    ("hooks",),  # the hook programs (contract adapters)
    ("executors",),  # run hook programs: local process, docker
    ("harnesses",),  # what the runner knows about each harness: registry, grading, injected text
    ("orchestrator",),
    ("writeback",),
    ("metrics",),
    ("report",),
    ("gate",),
    # entry points, and the composition of a whole run (pipeline)
    ("pipeline", "schemas", "generator", "doctor", "serve_cli", "cli_options", "cli_run", "cli_merge", "cli"),
)

# Known imports back up the flow, each with the reason it still exists.  Shrink this, never grow it.
# Empty: the orchestrator receives its downstream stages (orchestrator/stages.py) from
# brainbench.pipeline, and the result document is built in metrics/.
KNOWN_BACK_EDGES: dict[tuple[str, str], str] = {}


def _layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if not top:
        return 0
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"{module}: package brainbench.{top} is in no layer; add it to LAYERS in data-flow order")


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute module) for every brainbench import in the file, lazy ones included."""
    module = _module_name(path, root)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((node.lineno, target))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return [(line, name) for line, name in found if name == "brainbench" or name.startswith("brainbench.")]


def back_edges(root: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        importer = _module_name(path, root)
        mine = _layer_of(importer)
        for line, target in _imports(path, root):
            if _layer_of(target) > mine:
                top = target.split(".")[1]
                edges.setdefault((importer, top), []).append(f"{path.relative_to(root.parent)}:{line} {target}")
    return edges


def test_every_package_has_a_layer() -> None:
    for path in PACKAGE.iterdir():
        if path.name.startswith(("_", ".")) or not (path.suffix == ".py" or (path / "__init__.py").exists()):
            continue
        _layer_of(f"brainbench.{path.stem}")


def test_no_import_back_up_the_flow() -> None:
    unexpected = {edge: where for edge, where in back_edges().items() if edge not in KNOWN_BACK_EDGES}
    assert not unexpected, "imports back up the data flow:\n" + "\n".join(
        line for where in unexpected.values() for line in where)


def test_known_back_edges_still_exist() -> None:
    # A fixed back edge must leave the list, so the list only ever shrinks.
    stale = sorted(set(KNOWN_BACK_EDGES) - set(back_edges()))
    assert not stale, f"no longer imported, remove from KNOWN_BACK_EDGES: {stale}"


def test_the_checker_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    source = ("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
              "from .program import main\n"
              "if TYPE_CHECKING:\n    from brainbench.gate import flow\n"
              "def f():\n    from brainbench.orchestrator import run\n")
    root = tmp_path / "brainbench"
    (root / "hooks").mkdir(parents=True)
    probe = root / "hooks" / "probe.py"
    probe.write_text(source, encoding="utf-8")
    assert [name for _, name in _imports(probe, root)] == ["brainbench.hooks.program", "brainbench.orchestrator"]
    assert set(back_edges(root)) == {("brainbench.hooks.probe", "orchestrator")}
