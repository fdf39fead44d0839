"""``brainbench merge``: shard results in, one result out — gated, written and reported like a run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def merge(
    shards: Annotated[list[Path], typer.Argument(help="Shard results written by `run --shard I/N --out FILE`.")],
    out: Annotated[Path | None, typer.Option(help="Write the merged result JSON here (atomically).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Merged result JSON on stdout (one line).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="Scoreboard: auto, markdown or table.")] = "auto",
    compare: Annotated[Path | None, typer.Option(help="Gate the merged result against this baseline.")] = None,
    committed_baseline: Annotated[Path | None, typer.Option(help="Bless/hardening target.")] = None,
    update_baseline: Annotated[Path | None, typer.Option(help="Write the merged run's baseline here.")] = None,
    justification: Annotated[str | None, typer.Option(help="Reason stored with --update-baseline.")] = None,
    allow_regression: Annotated[str | None, typer.Option(help="Local escape hatch; refused under CI.")] = None,
    ledger: Annotated[Path | None, typer.Option(
        help="Append the merge's line here (default: PROJECT/.brainbench/brainbench-ledger.jsonl).")] = None,
) -> None:
    """Merge shard results into the result a single run of the same selection gives, then gate it."""
    raise typer.Exit(execute_merge(shards, out=out, json_out=json_out, fmt=fmt, compare=compare,
                                   committed_baseline=committed_baseline, update_baseline=update_baseline,
                                   justification=justification, allow_regression=allow_regression, ledger=ledger))


def execute_merge(shards: list[Path], **options: object) -> int:
    from brainbench.cli_run import EXIT_ERROR, report_result
    from brainbench.metrics.merge import MergeError, merge_results
    from brainbench.models.result import RunResult
    from brainbench.report.trace_file import TraceFileError, load_result

    loaded: list[tuple[Path, RunResult]] = []
    problems: list[str] = []
    for path in shards:
        try:
            loaded.append((path, load_result(path)))  # with its trace: the merge keeps every turn's evidence
        except TraceFileError as exc:
            problems.append(str(exc))
    try:
        if problems:
            raise MergeError(problems)
        result = merge_results(loaded, ["merge", *(str(p) for p in shards)])
    except MergeError as exc:
        sys.stderr.write(f"brainbench merge: refusing: {len(exc.problems)} problem(s)\n")
        for problem in exc.problems:
            sys.stderr.write(f"  {problem}\n")
        return EXIT_ERROR
    run = result.meta.run
    assert run is not None
    from brainbench.models.config import RunConfig

    # The merged run's options in the one model: its slice from the shards, its outputs and gate from here.
    update_to = options.pop("update_baseline")
    config = RunConfig(harnesses=run.harnesses, suites=run.suites,  # type: ignore[arg-type]
                       include_holdout=result.receipt.include_holdout, llm=result.receipt.llm,
                       seed=result.receipt.seed, update_baseline_to=update_to, behaviour=run.behaviour,
                       **options)  # type: ignore[arg-type]
    merged_from = [{"file": str(p), "shard": f"{r.meta.shard.index}/{r.meta.shard.total}" if r.meta.shard else None,
                    "run_id": r.meta.run.run_id if r.meta.run else None, "ts": r.receipt.ts,
                    "harness_sha": r.receipt.harness_sha} for p, r in loaded]
    return report_result(result, config, ledger_extra={"merged_from": merged_from})


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)
