"""``brainbench gate`` and ``brainbench delta`` (spec §10.4, §9.3).

``gate`` is the CI entry point: it takes the baseline from the *main branch* (never
the PR's copy, so a change cannot approve itself), runs the corpus through
``brainbench run --compare`` in a subprocess, and passes its exit code through.
Running ``run`` as a subprocess keeps this module independent of the runner's
internals and is exactly what CI does.

Mount on the main app with :func:`register`; ``python -m brainbench.gate.cli`` runs
the two commands standalone.  Imports beyond typer stay inside the commands so the
CLI starts fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["app", "delta_command", "gate_command", "main", "register"]

EXIT_USAGE = 2
DEFAULT_MAIN_REFS = ("origin/main", "main")
# Same entry point as the ``brainbench`` console script, but tied to this
# interpreter so a venv without the script on PATH still works.
_RUN_BOOTSTRAP = "from brainbench.cli import entry; entry()"


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _resolve_ref(top: Path, explicit: str | None) -> str | None:
    env_ref = os.environ.get("BRAINBENCH_MAIN_REF")
    candidates = [explicit] if explicit else ([env_ref] if env_ref else list(DEFAULT_MAIN_REFS))
    for ref in candidates:
        if _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=top).returncode == 0:
            return ref
    return None


def _run_command(args: list[str]) -> list[str]:
    override = os.environ.get("BRAINBENCH_GATE_RUN_COMMAND")
    if override:
        # Tests and unusual installs can point at another launcher (split like a shell would).
        import shlex

        return [*shlex.split(override), "run", *args]
    return [sys.executable, "-c", _RUN_BOOTSTRAP, "run", *args]


def gate_command(
    ctx: typer.Context,
    main_ref: Annotated[
        str | None,
        typer.Option("--main-ref", help="Ref holding main's baseline (default: origin/main, else main)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Keep the full result JSON here (default: a temp file).")
    ] = None,
    baseline: Annotated[
        str, typer.Option("--baseline", help="Baseline path relative to the repository root.")
    ] = "baselines/main.json",
    delta: Annotated[
        Path | None,
        typer.Option("--delta", help="Append the markdown delta (main → HEAD) to this file."),
    ] = None,
) -> None:
    """Gate HEAD against the baseline on the main branch.  Extra arguments go to `brainbench run`."""
    top_proc = _git("rev-parse", "--show-toplevel")
    if top_proc.returncode != 0:
        _err("brainbench gate: not inside a git repository")
        raise typer.Exit(EXIT_USAGE)
    top = Path(top_proc.stdout.decode().strip())
    ref = _resolve_ref(top, main_ref)
    if ref is None:
        tried = main_ref or os.environ.get("BRAINBENCH_MAIN_REF") or " / ".join(DEFAULT_MAIN_REFS)
        _err(f"brainbench gate: main ref {tried} does not resolve to a commit (fetch it first)")
        raise typer.Exit(EXIT_USAGE)

    worktree_baseline = top / baseline
    extra = list(ctx.args)
    with tempfile.TemporaryDirectory(prefix="brainbench-gate-") as tmp:
        out_path = out.resolve() if out is not None else Path(tmp) / "result.json"
        main_copy: Path | None = None
        shown = _git("show", f"{ref}:{baseline}", cwd=top)
        if shown.returncode == 0:
            if not worktree_baseline.is_file():
                _err(
                    f"brainbench gate: {baseline} exists on {ref} but was deleted in this tree — "
                    "restore it; a change cannot remove the gate that judges it"
                )
                raise typer.Exit(EXIT_USAGE)
            main_copy = Path(tmp) / "main-baseline.json"
            main_copy.write_bytes(shown.stdout)
            args = ["--compare", str(main_copy), "--committed-baseline", str(worktree_baseline)]
        elif worktree_baseline.is_file():
            # First landing: main has no baseline yet, so the PR's own file is the reference.
            _err(f"brainbench gate: no {baseline} on {ref} — first landing, comparing with this tree's copy")
            main_copy = worktree_baseline
            args = ["--compare", str(worktree_baseline), "--committed-baseline", str(worktree_baseline)]
        else:
            _err(f"brainbench gate: no {baseline} on {ref} or in this tree — ungated run")
            args = []
        sys.stdout.flush()
        # The repository is the project (corpus, baselines, ledger) wherever in it the gate was started;
        # a --project/--fixtures among the extra arguments comes later and wins.
        code = subprocess.run(_run_command(["--project", str(top), *args, "--out", str(out_path), *extra]),
                              check=False).returncode
        if delta is not None and out_path.is_file():
            try:
                text = _render_delta_files(main_copy, out_path)
            except Exception as exc:  # the delta is a courtesy; never mask the gate's verdict
                _err(f"brainbench gate: could not render the delta: {exc}")
            else:
                delta.parent.mkdir(parents=True, exist_ok=True)
                with delta.open("a", encoding="utf-8") as fh:
                    fh.write(text)
    raise typer.Exit(code)


def _load_side(path: Path) -> object:
    """A run result (``--out`` file) or a baseline, told apart by their keys."""
    import json

    from brainbench.gate.baseline import parse_baseline_text

    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    if isinstance(data, dict) and "receipt" in data:
        from brainbench.report.trace_file import load_result

        return load_result(path)  # with its trace, so the delta can give each item its reason
    return parse_baseline_text(text, str(path))


def _render_delta_files(main: Path | None, head: Path, report_url: str | None = None) -> str:
    from brainbench.gate.markdown import render_delta
    from brainbench.models.result import RunResult

    head_doc = _load_side(head)
    if not isinstance(head_doc, RunResult):
        raise ValueError(f"{head}: HEAD must be a run result (--out file), not a baseline")
    main_doc = _load_side(main) if main is not None else None
    return render_delta(main_doc, head_doc, report_url)  # type: ignore[arg-type]


def delta_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="[MAIN] HEAD: MAIN is main's result or baseline; HEAD is a --out result file."),
    ] = None,
    report_url: Annotated[str | None, typer.Option(help="Where HEAD's HTML report is published: each newly "
                                                        "failed item links to its turn there.")] = None,
) -> None:
    """Print the markdown delta for a PR comment or $GITHUB_STEP_SUMMARY."""
    paths = list(files or [])
    if not paths or len(paths) > 2:
        _err("usage: brainbench delta [MAIN.json] HEAD.json")
        raise typer.Exit(EXIT_USAGE)
    main_path, head_path = (None, paths[0]) if len(paths) == 1 else (paths[0], paths[1])
    try:
        text = _render_delta_files(main_path, head_path, report_url)
    except Exception as exc:
        _err(f"brainbench delta: {exc}")
        raise typer.Exit(EXIT_USAGE) from None
    sys.stdout.write(text)


def register(target: typer.Typer) -> None:
    """Mount ``gate`` and ``delta`` on the main ``brainbench`` app."""
    target.command(
        "gate",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(gate_command)
    target.command("delta")(delta_command)


app = typer.Typer(add_completion=False, no_args_is_help=True, help="BrainBench regression gate.")
register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
