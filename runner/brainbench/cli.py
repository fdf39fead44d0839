"""The ``brainbench`` command: parses flags, calls library functions, maps outcomes to exit codes.

Exit codes: 0 ran clean (or gate passed), 1 regression, 2 error / inconclusive
(bad corpus, seed failure, seam faults, usage).
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                  help="BrainBench: a cross-harness conformance benchmark for agent memory.")
schema_app = typer.Typer(no_args_is_help=True, help="JSON Schemas of every document.")
app.add_typer(schema_app, name="schema")


def _print_version(value: bool) -> None:
    if value:
        from brainbench.version import version_line

        typer.echo(version_line())
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                help="Print version, source revision and hook contract version.")]
          = False) -> None:
    pass

@app.command()
def validate(
    project: Annotated[Path | None, typer.Option(envvar="BRAINBENCH_PROJECT", show_envvar=True,
                                                 help="Project directory (default: cwd).")] = None,
    fixtures: Annotated[Path | None, typer.Option(envvar="BRAINBENCH_FIXTURES", show_envvar=True,
                                                  help="Fixture directory (default: PROJECT/fixtures).")] = None,
    gold: Annotated[Path | None, typer.Option(envvar="BRAINBENCH_GOLD", show_envvar=True,
                                              help="Sealed gold directory (default: PROJECT/gold).")] = None,
    list_ids: Annotated[bool, typer.Option("--list", help="Also list every fixture: id, suites, holdout.")]
    = False,
) -> None:
    """Validate a corpus and print its fixtures_hash; every problem is listed, one per line.

    When the corpus has a generator ledger (fixtures/_ledger.json), its recorded
    fixtures_hash must match the corpus.  ``--list`` prints one line per fixture
    (tab-separated: id, suites, ``holdout`` when it is one), the ids ``run --fixture`` takes.
    """
    from brainbench.cli_run import EXIT_ERROR, check_ledger_hash, load_or_report, say_shipped, shipped_fallback

    root = project or Path.cwd()
    fixtures, gold = fixtures or root / "fixtures", gold or root / "gold"
    shipped = shipped_fallback(root, fixtures, gold)
    corpus = load_or_report(*(shipped or (fixtures, gold)))
    if corpus is None:
        raise typer.Exit(EXIT_ERROR)
    if shipped is not None:
        say_shipped(root, corpus, "validating")
    stale = check_ledger_hash(corpus)
    if stale:
        sys.stderr.write(stale + "\n")
        raise typer.Exit(EXIT_ERROR)
    holdout = sum(1 for f in corpus.fixtures if f.fixture.is_holdout)
    typer.echo(f"ok: {len(corpus.fixtures)} fixtures ({holdout} holdout), {len(corpus.pairs)} continuity pairs")
    typer.echo(f"fixtures_hash {corpus.fixtures_hash}")
    if list_ids:
        for item in corpus.fixtures:
            holdout = "\tholdout" if item.fixture.is_holdout else ""
            typer.echo(f"{item.fixture_id}\t{','.join(item.fixture.suites)}{holdout}")


@schema_app.command("export")
def schema_export(directory: Annotated[Path, typer.Argument(help="Where to write *.schema.json.")]) -> None:
    """Write the JSON Schemas generated from the models (fixture, gold, result, baseline, hook wire)."""
    from brainbench.schemas import export_schemas

    for path in export_schemas(directory):
        typer.echo(str(path))


def _split_optional_values(argv: list[str]) -> list[str]:
    """Give ``--update-baseline [FILE]``, ``--compare BASE [CURRENT]`` and ``--fresh-corpus [SEED]`` their
    optional values.

    Click has no optional-value options; gbrain's CLI does, so we translate to
    explicit flags before parsing.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--update-baseline":
            if nxt is None or nxt.startswith("--"):
                out += ["--update-baseline"]  # the project's baselines/main.json (RunConfig)
                i += 1
            else:
                out += ["--update-baseline-to", nxt]
                i += 2
            continue
        if arg == "--fresh-corpus" or arg.startswith("--fresh-corpus="):
            value = arg.partition("=")[2] if "=" in arg else None
            if value is None and nxt is not None and not nxt.startswith("-"):
                value = nxt
                i += 1
            out += ["--fresh-corpus"] + (["--fresh-corpus-seed", value] if value is not None else [])
            i += 1
            continue
        if arg == "--compare" and nxt is not None and not nxt.startswith("--"):
            after = argv[i + 2] if i + 2 < len(argv) else None
            out += ["--compare", nxt]
            i += 2
            if after is not None and not after.startswith("--"):
                out += ["--compare-current", after]
                i += 1
            continue
        out.append(arg)
        i += 1
    return out


RUN_HELP = "Replay the corpus through the seams, grade it, print the scoreboard (and gate it)."
EVAL_HELP = ("gbrain-evals' spelling of `run`: `brainbench eval brainbench --harness all --suite all --json "
             "--out FILE [--include-holdout]`, from a project (checkout) holding fixtures/ and gold/.")
eval_app = typer.Typer(no_args_is_help=True, help="Benchmarks under gbrain's `eval` spelling (see `eval brainbench`).")


def run(**options: Any) -> None:
    from brainbench.cli_run import execute_cli

    raise typer.Exit(execute_cli(options, sys.argv[2:]))


def eval_brainbench(**options: Any) -> None:
    from brainbench.cli_run import execute_cli

    raise typer.Exit(execute_cli(options, sys.argv[3:]))


def _register_run(with_options: bool) -> None:
    """Mount ``run`` and ``eval brainbench``.  Their options are generated from ``RunConfig``
    (add a flag there, not here); building them imports pydantic, so only when one of them
    (or shell completion) is what was asked for: ``brainbench --help`` stays fast."""
    settings = {"help_option_names": ["-h", "--help"]}
    for command, target, name, text in ((run, app, "run", RUN_HELP),
                                        (eval_brainbench, eval_app, "brainbench", EVAL_HELP)):
        if with_options:
            from brainbench.cli_options import with_run_signature

            with_run_signature(command)
        else:
            command.__signature__ = inspect.Signature([])  # type: ignore[attr-defined]
        target.command(name, help=text, context_settings=settings)(command)
    app.add_typer(eval_app, name="eval")


def _mount_optional() -> None:
    from brainbench.gate.cli import register

    register(app)
    from brainbench.cli_merge import register as register_merge

    register_merge(app)
    from brainbench.report.cli import register as register_report

    register_report(app)
    from brainbench.serve_cli import register as register_brain

    register_brain(app)
    from brainbench.doctor.cli import register as register_doctor

    register_doctor(app)
    try:
        from brainbench.generator.cli import app as corpus_app

        app.add_typer(corpus_app, name="corpus", help="Generate, sample and review the corpus.")
    except ImportError:  # pragma: no cover - generator not installed
        pass
    try:
        from brainbench.executors.docker_cli import register as register_docker

        register_docker(app)
    except ImportError:  # pragma: no cover
        pass


def _full_width_help_when_piped(argv: list[str]) -> None:
    """Rich wraps at 80 columns when stdout is not a terminal, cutting flag names in half
    (``--committed-basel…``); piped help (CI logs, ``| less``, other tools) gets room instead."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS") or os.environ.get("TERMINAL_WIDTH"):
        return
    if argv and not {"--help", "-h"} & set(argv):
        return  # not asking for help: spare every run rich's import (~0.1 s of CPU)
    import typer.rich_utils

    typer.rich_utils.MAX_WIDTH = 200


def main() -> None:
    warnings.filterwarnings("ignore", module="platformdirs")
    # Ctrl-C (SIGINT) stops a run or a served brain cleanly in every phase, even when the
    # process inherited SIGINT ignored (a shell's background job), where Python would not
    # install its handler and only the replay's own signal watcher would answer it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = sys.argv[1:]
    _full_width_help_when_piped(argv)
    runs = argv[:1] == ["run"] or argv[:2] == ["eval", "brainbench"]
    completing = "_BRAINBENCH_COMPLETE" in os.environ
    _register_run(with_options=runs or completing)
    if not runs or completing:
        # A run needs none of the other commands: building them costs every run ~50 ms of CPU.
        _mount_optional()
    if argv[:1] == ["run"]:
        argv = ["run", *_split_optional_values(argv[1:])]
    elif argv[:2] == ["eval", "brainbench"]:
        argv = ["eval", "brainbench", *_split_optional_values(argv[2:])]
    try:
        app(args=argv, prog_name="brainbench", standalone_mode=True)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        if exc.filename is None:
            raise SystemExit(_report_crash(exc)) from None
        # A file the user named is missing or unreadable: their error, not ours.
        sys.stderr.write(f"brainbench: {exc.filename}: {exc.strerror}\n")
        raise SystemExit(2) from None
    except Exception as exc:
        from brainbench.disk_full import disk_full_message, is_disk_full

        if is_disk_full(exc):  # the machine's state, not a bug (and a crash file would not fit either)
            sys.stderr.write(f"brainbench: {disk_full_message(exc)}\n")
            raise SystemExit(2) from None
        # An uncaught exception would exit 1, which callers read as "regression";
        # a bug in BrainBench is an error (2), reported in one line plus a crash file.
        raise SystemExit(_report_crash(exc)) from None


def _report_crash(exc: Exception) -> int:
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(exc))
    crash_dir = Path(os.environ.get("BRAINBENCH_CRASH_DIR") or tempfile.gettempdir())
    try:
        crash_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="brainbench-crash-", suffix=".txt", dir=crash_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"argv: {sys.argv!r}\n\n{text}")
        where = f"full traceback in {name}"
    except OSError as write_error:
        where = f"could not write the crash file ({write_error})"
    sys.stderr.write(f"brainbench: internal error: {type(exc).__name__}: {exc}\n"
                     f"brainbench: this is a bug in BrainBench, not in the corpus or the seams; {where}\n")
    if os.environ.get("BRAINBENCH_DEBUG"):
        sys.stderr.write(text)
    return 2

def entry() -> None:
    """The ``brainbench`` program: :func:`main`, then the process ends without the interpreter's
    teardown (``process_exit``: ~0.13 s of every run's wall, after its last output)."""
    from brainbench.process_exit import run_then_exit

    if sys.argv[1:2] == ["run"] or sys.argv[1:3] == ["eval", "brainbench"]:
        from brainbench import collector

        collector.defer()  # resumed once the run has imported its stack (cli_run._run_and_report)
    run_then_exit(main)


if __name__ == "__main__":
    entry()
