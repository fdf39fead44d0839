"""Read the docs the way a newcomer follows them, and say where they lead nowhere.

Three checks over README.md and docs/*.md, each returning one line per problem (``file:line: what``):

* paths: every repository path a doc names in code (``runner/…``, ``tests/…``, a bare ``test_x.py``), every test
  it names (``test_x``) and every relative link (with its ``#anchor``) exists;
* commands: every ``brainbench …`` command a doc shows resolves to a command of the CLI, and every ``--flag``
  after it is one of that command's options; a ``--flag`` shown alone is an option of some command (or of one
  of our scripts, whose source names it);
* numbers: a number a benchmark writes lives only in its generated block (``benchmarks/update_docs.py``
  markers); a copy typed beside it goes stale the next time the block is rendered.

The CLI is read as its ``--help`` is built (click's command tree), so nothing is spawned and the check is fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# Top-level entries of the repository a path may start with (a path elsewhere is the reader's, not ours).
REPO_ROOTS = ("runner/", "tests/", "docs/", "scripts/", "benchmarks/", "harness_images/", "deploy/", "fixtures/",
              "gold/", "baselines/", "schema/", "gbrain-facade/", ".github/", ".ci/", "wheelhouse/")
REPO_FILES = ("README.md", "compose.yaml", "pyproject.toml")
OUR_SUFFIXES = (".py", ".sql", ".c")
# A token with one of these is a pattern or a placeholder, not a path.
PLACEHOLDER = re.compile(r"[<>$*{}\[\]~…|=]|\bN\b|\.\.\.|(?:^|/)[A-Z][A-Z_]+/")
# The changelog keeps dated history: its numbers were true when written.
HISTORY = "docs/CHANGELOG.md"
# Flags of tools that are not ours, shown in the docs (docker, pytest, the engine's own).
FOREIGN_FLAGS = frozenset({
    "--rm", "--tlsverify", "--bridge", "--iptables", "--data-root", "--exec-root", "--pidfile", "--host",
    "--no-deps", "--build", "-n", "--for", "--pid", "--offline", "--durations", "--timeout", "--read-only", "--network",
})

CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)|!\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BEGIN = re.compile(r"<!-- BEGIN GENERATED ([\w-]+):")
END = re.compile(r"<!-- END GENERATED ([\w-]+) -->")
COMMAND = re.compile(r"(?:^|[\s(])(?:\S*/)?brainbench((?:\s+[^\s;|&#)`]+)*)")
# What a benchmark writes: a number with one of the units its tables use.
MEASURED = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(ms|µs|s|min|MB|turns/s|CPU-s|×)(?![\w/])")
# Shapes only a measurement has, wherever it is typed: percentiles, throughput, CPU-seconds, size ratios.
MEASUREMENT_SHAPE = re.compile(
    r"\bp(?:50|95)\s+\*{0,2}\d|\d\s?turns/s|\d\s?CPU-s\b|\d\s?µs per call|\bpeak RSS[^.|]{0,40}?\d+(?:\.\d+)?\s?MB"
    r"|\d\.\d\d×")


@dataclass(frozen=True)
class Line:
    path: str  # relative to the repository
    number: int
    text: str
    code: bool  # inside a fenced block
    generated: bool  # inside a BEGIN/END GENERATED block


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def read_lines(root: Path, doc: Path) -> Iterator[Line]:
    code = generated = False
    rel = doc.relative_to(root).as_posix()
    for n, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        if BEGIN.search(text):
            generated = True
        fence = bool(FENCE.match(text.strip()))
        yield Line(rel, n, text, code or fence, generated)
        if fence:
            code = not code
        if END.search(text):
            generated = False


def _code_tokens(line: Line) -> Iterator[str]:
    """What a reader would copy: the words of fenced lines and of inline code spans."""
    chunks = [line.text] if line.code else [m.group(1) for m in CODE_SPAN.finditer(line.text)]
    for chunk in chunks:
        for word in re.split(r"[\s'\"(),;]+", chunk):
            word = word.strip("`:").rstrip("._,").removeprefix("./")
            if word:
                yield word


# --- paths and links ---------------------------------------------------------------------------------------

def repo_paths(root: Path) -> set[str]:
    """Every file and folder of the checkout, relative (what a reader could open); caches and build output pruned."""
    import os

    skip = {".git", ".venv", "__pycache__", "node_modules", ".brainbench", "dist", "build", ".pytest_cache", ".images",
            ".ruff_cache", ".hypothesis", ".ci-artefacts"}
    out: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        rel = Path(folder).relative_to(root)
        out.update((rel / name).as_posix() for name in (*dirs, *files))
    return out


def _is_repo_path(word: str) -> bool:
    if PLACEHOLDER.search(word) or "://" in word or word.startswith(("-", "/")):
        return False
    return word.startswith(REPO_ROOTS) or word in REPO_FILES


def _exists(root: Path, word: str, paths: set[str]) -> bool:
    """At the root, or as the tail of a path in the checkout (``executors/base.py``, ``test_x.py`` in a table
    of one test folder): a moved or renamed file matches nowhere."""
    word = word.split("#", 1)[0].split("::", 1)[0].rstrip("/")
    return (root / word).exists() or any(p.endswith("/" + word) for p in paths)


def _package_path(word: str) -> bool:
    """``executors/base.py``: a path of our own code below the package or tests, as running text writes it
    (gbrain's ``src/…ts`` files are not ours to check)."""
    return ("/" in word and word.endswith(OUR_SUFFIXES) and not PLACEHOLDER.search(word)
            and not word.startswith(("-", "/", "http")) and "://" not in word and not word.startswith(REPO_ROOTS))


def _bare_source(word: str) -> bool:
    return bool(re.fullmatch(r"(?:test_)?[a-z][\w-]*\.(?:py|sql|c)", word))


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    code = False
    for text in doc.read_text(encoding="utf-8").splitlines():
        if FENCE.match(text.strip()):
            code = not code
            continue
        m = HEADING.match(text)
        if m and not code:
            base = github_anchor(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def _test_names(root: Path) -> set[str]:
    names: set[str] = set()
    for path in (root / "tests").rglob("*.py"):
        names.update(re.findall(r"^\s*(?:async )?def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    return names


def path_problems(root: Path, docs: Iterable[Path]) -> list[str]:
    """Dead paths and links, and tests named (``test_x``) that the suite no longer has."""
    paths = repo_paths(root)
    tests = _test_names(root)
    problems: list[str] = []
    for doc in docs:
        for line in read_lines(root, doc):
            for word in _code_tokens(line):
                if _is_repo_path(word) or _package_path(word) or _bare_source(word):
                    if not _exists(root, word, paths):
                        problems.append(f"{line.path}:{line.number}: no such path in the repository: {word}")
                elif re.fullmatch(r"test_[a-z0-9_]+", word) and word not in tests:
                    problems.append(f"{line.path}:{line.number}: no such test in tests/: {word}")
            if line.code:
                continue
            # A link inside inline code is an example of text, not a link (`[Issue #n](…)`).
            for m in LINK.finditer(CODE_SPAN.sub("", line.text)):
                target = m.group(1) or m.group(2)
                if re.match(r"[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = (doc.parent / file_part).resolve() if file_part else doc
                if not dest.exists():
                    problems.append(f"{line.path}:{line.number}: link to a missing file: {target}")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problems.append(f"{line.path}:{line.number}: link to a missing heading: {target}")
    return problems


# --- commands and flags --------------------------------------------------------------------------------------

# The CLI as its ``--help`` prints it: command path ("" for the top, "corpus generate") → its options.  Read
# from typer's click tree in a child process, because ``brainbench.cli.main`` mounts the subcommands on the
# module's app as it starts, which a test process must not do twice.
CliTree = dict[str, set[str]]

_DUMP_TREE = """
import json, typer.main
from brainbench import cli
cli._register_run(with_options=True)
cli._mount_optional()
def walk(cmd, path, out):
    opts = set()
    for p in cmd.params:
        if p.param_type_name == "option" and not getattr(p, "hidden", False):
            opts.update((*p.opts, *p.secondary_opts))
    out[path] = sorted(opts)
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        if not sub.hidden:
            walk(sub, (path + " " + name).strip(), out)
    return out
print(json.dumps(walk(typer.main.get_command(cli.app), "", {})))
"""


def cli_tree(python: str) -> CliTree:
    import json
    import subprocess

    out = subprocess.run([python, "-c", _DUMP_TREE], capture_output=True, text=True, check=True, timeout=60)
    return {path: set(opts) for path, opts in json.loads(out.stdout).items()}


def _resolve(tree: CliTree, words: list[str]) -> tuple[str, list[str], str | None]:
    """The command path the words name, the words after it, and the first unknown subcommand."""
    path, rest = "", list(words)
    while rest and not rest[0].startswith("-"):
        children = {p.rsplit(" ", 1)[-1] for p in tree if p != path and p.startswith(path) and
                    p.count(" ") == (path.count(" ") + 1 if path else 0)}
        if not children:
            break
        if rest[0] not in children:
            return path, rest, rest[0]
        path, rest = (f"{path} {rest[0]}").strip(), rest[1:]
    return path, rest, None


def _script_flags(root: Path) -> set[str]:
    """Flags our own scripts and benchmarks take: their source spells each one."""
    flags: set[str] = set()
    for folder in ("scripts", "benchmarks", ".ci", "harness_images", "deploy", ".github"):
        for path in (root / folder).rglob("*"):
            if path.is_file() and path.stat().st_size < 200_000:
                try:
                    flags.update(re.findall(r"--[a-z][a-z0-9-]+", path.read_text(encoding="utf-8")))
                except UnicodeDecodeError:
                    continue
    return flags


def _commands(line: Line) -> Iterator[str]:
    chunks = [line.text] if line.code else [m.group(1) for m in CODE_SPAN.finditer(line.text)]
    for chunk in chunks:
        chunk = re.sub(r"\s#\s.*$", "", chunk)  # a shell comment
        for m in COMMAND.finditer(chunk):
            yield m.group(1)


def command_problems(root: Path, docs: Iterable[Path], tree: CliTree) -> list[str]:
    every = set().union(*tree.values())
    scripts = _script_flags(root)
    problems: list[str] = []
    for doc in docs:
        for line in read_lines(root, doc):
            shown_with_command: set[str] = set()
            for args in _commands(line):
                words = [w.strip("[]`") for w in args.split()]
                words = [w for w in words if w and not w.startswith("<")]
                if not words or words[0].startswith((".", "/")):
                    continue  # `brainbench.hooks`, `brainbench/…`: a module or a path, not the command
                path, rest, unknown = _resolve(tree, words)
                name = f"brainbench {path}".strip()
                if unknown is not None:
                    if re.fullmatch(r"[a-z][a-z-]+", unknown):
                        problems.append(f"{line.path}:{line.number}: `{name} {unknown}`: no such command")
                    continue
                known = tree[path] | {"--help", "-h"}
                for word in rest:
                    flag = word.split("=", 1)[0]
                    if flag.startswith("--") and re.fullmatch(r"--[a-z][a-z0-9-]*", flag):
                        shown_with_command.add(flag)
                        if flag not in known:
                            problems.append(f"{line.path}:{line.number}: `{name}` has no option {flag}")
            for word in _code_tokens(line):
                flag = word.split("=", 1)[0]
                if (re.fullmatch(r"--[a-z][a-z0-9-]*", flag) and flag not in shown_with_command
                        and flag not in every and flag not in scripts and flag not in FOREIGN_FLAGS):
                    problems.append(f"{line.path}:{line.number}: no command takes {flag}")
    return problems


# --- benchmark numbers ---------------------------------------------------------------------------------------

def _measured(text: str, thresholds: bool = True) -> set[str]:
    """``thresholds=False``: leave out a bound the row counts against ("155 over 800 ms"), a constant."""
    return {f"{m.group(1)} {m.group(2)}" for m in MEASURED.finditer(text)
            if thresholds or not text[:m.start()].endswith("over ")}


def number_problems(root: Path, docs: Iterable[Path]) -> list[str]:
    docs = [d for d in docs if d.relative_to(root).as_posix() != HISTORY]
    lines = [line for doc in docs for line in read_lines(root, doc)]
    generated: set[str] = set()
    for line in lines:
        if line.generated:
            # A table cell's integers (fixtures, calls) are counts of the corpus, not measurements.
            # A table's integers in seconds or times (a scale of 3×, retried 3×) are not measurements.
            generated |= {n for n in _measured(line.text, thresholds=False)
                          if "." in n.split()[0] or not n.endswith((" s", " ×"))}
    problems: list[str] = []
    for line in lines:
        if line.generated:
            continue
        copies = sorted(_measured(line.text) & generated)
        if copies:
            problems.append(f"{line.path}:{line.number}: {', '.join(copies)} typed by hand: the generated block "
                            "(benchmarks/update_docs.py) is its one home")
        elif MEASUREMENT_SHAPE.search(line.text):
            problems.append(f"{line.path}:{line.number}: a measurement typed by hand "
                            f"({MEASUREMENT_SHAPE.search(line.text).group(0)!r}): only a generated block "  # type: ignore[union-attr]
                            "(benchmarks/update_docs.py) may carry it, dated history goes to docs/CHANGELOG.md")
    return problems
