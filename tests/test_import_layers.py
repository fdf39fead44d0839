"""The import graph reads in the order the data flows, with no import back up that flow.

Every ``import`` counts, including ones inside functions (a lazy import is still a
dependency at run time); only ``if TYPE_CHECKING:`` blocks are exempt.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import brainbench

PACKAGE = Path(brainbench.__file__).parent

# Data-flow order.  A module may import its own layer or any earlier one, never a later one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("models",),  # shapes (pydantic models, the hook-call dataclasses)
    ("jsjson", "jsstring", "jscase", "jsdate", "scratch", "ownership", "scratch_owner", "version", "_revision",
     "disk_full", "process_exit", "collector"),  # small shared helpers
    ("corpus",),
    ("brain",),
    ("memory",),  # memory systems the trust suites drive: the operations interface and our reference one
    ("reflex",),  # the retrieval rules the hook programs run
    ("hooks",),  # the hook programs (contract adapters)
    ("executors",),  # run hook programs: local process, docker
    ("harnesses",),  # what the runner knows about each harness: registry, grading, injected text
    ("orchestrator",),
    ("diagnosis",),  # the reference replay of missed turns, handed to the orchestrator as a stage
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

# Imports that the order allows but the design does not: (importer package, imported package) → why.
# The orchestrator knows the seams only by what crosses the wire, so it takes nothing from the seams'
# side of it: the reference reflex reaches it as a stage (diagnosis/, composed by brainbench.pipeline),
# and the transcript files it writes are harness knowledge (harnesses/transcripts.py).
FORBIDDEN: dict[tuple[str, str], str] = {
    ("orchestrator", "reflex"): "the reference reflex is the diagnosis stage's (diagnosis/reference.py)",
    ("orchestrator", "hooks"): "transcript formats are harness knowledge (harnesses/transcripts.py)",
}


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


def _imports(path: Path, root: Path = PACKAGE, *, type_checking: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module) for every brainbench import in the file, lazy ones included
    (``type_checking``: those under ``if TYPE_CHECKING:`` too)."""
    module = _module_name(path, root)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
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


def forbidden_edges(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        importer = _module_name(path, root).split(".")
        for line, target in _imports(path, root):
            edge = (importer[1] if len(importer) > 1 else "", ([*target.split("."), ""])[1])
            if edge in FORBIDDEN:
                found.append(f"{path.relative_to(root.parent)}:{line} {target}: {FORBIDDEN[edge]}")
    return found


def test_the_orchestrator_stays_on_its_side_of_the_wire() -> None:
    found = forbidden_edges()
    assert not found, "imports across the wire:\n" + "\n".join(found)


def test_the_checker_sees_imports_across_the_wire(tmp_path: Path) -> None:
    root = tmp_path / "brainbench"
    (root / "orchestrator").mkdir(parents=True)
    (root / "orchestrator" / "probe.py").write_text(
        "def f():\n    from brainbench.hooks.transcripts import HistoryItem\n"
        "from brainbench.reflex import resolve\nfrom brainbench.harnesses import transcripts\n", encoding="utf-8")
    found = forbidden_edges(root)
    assert [line.split(" ")[0] for line in found] == ["brainbench/orchestrator/probe.py:2",
                                                      "brainbench/orchestrator/probe.py:3"]


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


# Packages whose modules import each other in layers, with no cycle.  Here an import under
# ``if TYPE_CHECKING:`` counts too: a module whose signatures name a module that imports it
# is one design split in two files (executors/docker once had a seven-module cycle so).
ACYCLIC_PACKAGES = ("brainbench.executors.docker",)


def import_graph(package: str, root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules of ``package`` it imports (lazy and TYPE_CHECKING imports included)."""
    folder = root.parent.joinpath(*package.split("."))
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        importer = _module_name(path, root)
        if importer == package:
            continue  # the package's __init__ re-exports its modules; nothing imports it back
        graph[importer] = {target for _, target in _imports(path, root, type_checking=True)
                           if target.startswith(package + ".") and target != importer}
    return graph


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(reversed(exc.args[1]))  # reversed: each module imports the next
    return None


def test_packages_import_their_modules_in_layers() -> None:
    for package in ACYCLIC_PACKAGES:
        cycle = import_cycle(import_graph(package))
        assert cycle is None, f"{package}: import cycle " + " -> ".join(cycle or [])


def test_the_cycle_check_sees_type_checking_imports(tmp_path: Path) -> None:
    root = tmp_path / "brainbench"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("from .a import A\n", encoding="utf-8")
    (root / "pkg" / "a.py").write_text("from .b import B\n", encoding="utf-8")
    (root / "pkg" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       "    from brainbench.pkg.a import A\n", encoding="utf-8")
    graph = import_graph("brainbench.pkg", root)
    assert graph == {"brainbench.pkg.a": {"brainbench.pkg.b"}, "brainbench.pkg.b": {"brainbench.pkg.a"}}
    assert set(import_cycle(graph) or []) == {"brainbench.pkg.a", "brainbench.pkg.b"}
    (root / "pkg" / "b.py").write_text("B = 1\n", encoding="utf-8")
    assert import_cycle(import_graph("brainbench.pkg", root)) is None
