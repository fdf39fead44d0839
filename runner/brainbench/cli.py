"""The ``brainbench`` command: parses flags, calls library functions, maps outcomes to exit codes.

Exit codes: 0 ran clean (or gate passed), 1 regression, 2 error / inconclusive
(bad corpus, seed failure, seam faults, usage).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="BrainBench: a cross-harness conformance benchmark for agent memory.")
schema_app = typer.Typer(add_completion=False, no_args_is_help=True, help="JSON Schemas of every document.")
app.add_typer(schema_app, name="schema")

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FIXTURES = REPO_ROOT / "fixtures"
DEFAULT_GOLD = REPO_ROOT / "gold"


@app.command()
def validate(
    fixtures: Annotated[Path, typer.Option(help="Fixture directory (*.fixture.json).")] = DEFAULT_FIXTURES,
    gold: Annotated[Path, typer.Option(help="Sealed gold directory (*.gold.json).")] = DEFAULT_GOLD,
) -> None:
    """Validate a corpus and print its fixtures_hash; every problem is listed, one per line."""
    from brainbench.cli_run import EXIT_ERROR, load_or_report

    corpus = load_or_report(fixtures, gold)
    if corpus is None:
        raise typer.Exit(EXIT_ERROR)
    holdout = sum(1 for f in corpus.fixtures if f.fixture.is_holdout)
    typer.echo(f"ok: {len(corpus.fixtures)} fixtures ({holdout} holdout), {len(corpus.pairs)} continuity pairs")
    typer.echo(f"fixtures_hash {corpus.fixtures_hash}")


@schema_app.command("export")
def schema_export(directory: Annotated[Path, typer.Argument(help="Where to write *.schema.json.")]) -> None:
    """Write the JSON Schemas generated from the models (fixture, gold, result, baseline, hook wire)."""
    from brainbench.schemas import export_schemas

    for path in export_schemas(directory):
        typer.echo(str(path))


def _split_optional_values(argv: list[str]) -> list[str]:
    """Give ``--update-baseline [FILE]`` and ``--compare BASE [CURRENT]`` their optional values.

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
                out += ["--update-baseline-to", str(REPO_ROOT / "baselines" / "main.json")]
                i += 1
            else:
                out += ["--update-baseline-to", nxt]
                i += 2
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


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def run(
    fixtures: Annotated[Path, typer.Option(help="Fixture directory.")] = DEFAULT_FIXTURES,
    gold: Annotated[Path, typer.Option(help="Sealed gold directory.")] = DEFAULT_GOLD,
    harness: Annotated[str, typer.Option(help="openclaw,claude-code,codex or all.")] = "all",
    suite: Annotated[str, typer.Option(help="know-to-ask,push,write-back,continuity or all.")] = "all",
    include_holdout: Annotated[bool, typer.Option(help="Score holdout fixtures (published-run mode).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Result JSON on stdout (one line).")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the pretty result JSON here (atomically).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Scoreboard: auto, markdown or table.")] = "auto",
    compare: Annotated[Path | None, typer.Option(help="Gate against this baseline (main's).")] = None,
    compare_current: Annotated[Path | None, typer.Option(hidden=True)] = None,
    committed_baseline: Annotated[Path | None, typer.Option(help="Bless/hardening target.")] = None,
    update_baseline_to: Annotated[Path | None, typer.Option("--update-baseline-to", hidden=True)] = None,
    justification: Annotated[str | None, typer.Option(help="Reason stored with --update-baseline.")] = None,
    allow_regression: Annotated[str | None, typer.Option(help="Local escape hatch; refused under CI.")] = None,
    llm: Annotated[bool, typer.Option(help="Model-based write-back extractor (BRAINBENCH_LLM_* env).")] = False,
    budget_usd: Annotated[float, typer.Option(help="Spend cap for --llm.")] = 5.0,
    seed: Annotated[int, typer.Option(help="Recorded in the receipt.")] = 42,
    jobs: Annotated[int | None, typer.Option(help="Fixtures run concurrently (default: what the cores, memory and "
                                                  "the brain server's connections carry).")] = None,
    executor: Annotated[str, typer.Option(help="local or docker.")] = "local",
    mode: Annotated[str, typer.Option(help="Seam invocation: stream (warm) or exec (one process per call).")] = (
        "stream"),
    timeout: Annotated[float, typer.Option(help="Per-hook timeout in seconds.")] = 30.0,
    database_url: Annotated[str | None, typer.Option(envvar="BRAINBENCH_DATABASE_URL",
                                                     help="Use this Postgres instead of the embedded one.")] = None,
    image: Annotated[list[str] | None, typer.Option(help="SEAM=IMAGE: run a production image behind a seam.")] = None,
    seams: Annotated[Path | None, typer.Option(help="seams.toml: per-seam image/command/mode/env/timeout.")] = None,
    ledger: Annotated[Path | None, typer.Option(help="Append a run line here (default: next to --out).")] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue an interrupted run from its --out file.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    shard: Annotated[str | None, typer.Option(help="I/N: run only the I-th of N slices; combine with "
                                                   "`brainbench merge`.")] = None,
    keep: Annotated[bool, typer.Option(help="Keep the run's work root (transcripts, payloads); says where.")] = False,
    html: Annotated[Path | None, typer.Option(help="Also write the HTML report into this directory.")] = None,
    fixture: Annotated[list[str] | None, typer.Option(
        "--fixture", help="Run only this fixture id (repeatable; globs such as 'kta-00*'). Never gated.")] = None,
) -> None:
    """Replay the corpus through the seams, grade it, print the scoreboard (and gate it)."""
    from brainbench.cli_run import RunRequest, execute

    code = execute(RunRequest(
        fixtures=fixtures, gold=gold, harness=harness, suite=suite, include_holdout=include_holdout,
        json_out=json_out, out=out, fmt=fmt, compare=compare, compare_current=compare_current,
        committed_baseline=committed_baseline, update_baseline=update_baseline_to, justification=justification,
        allow_regression=allow_regression, llm=llm, budget_usd=budget_usd, seed=seed, jobs=jobs,
        executor=executor, mode=mode, timeout=timeout, database_url=database_url, images=image or [],
        seams_file=seams, ledger=ledger, resume=resume, quiet=quiet, keep=keep, html=html, shard=shard,
        cmd_args=sys.argv[2:],
        fixture_ids=fixture or [],
    ))
    raise typer.Exit(code)


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


def main() -> None:
    warnings.filterwarnings("ignore", module="platformdirs")
    _mount_optional()
    argv = sys.argv[1:]
    if argv[:1] == ["run"]:
        argv = ["run", *_split_optional_values(argv[1:])]
    try:
        app(args=argv, prog_name="brainbench", standalone_mode=True)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    except Exception as exc:
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

if __name__ == "__main__":
    main()
