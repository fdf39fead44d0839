"""``brainbench run`` end to end: config → corpus → run → gate → outputs → exit code.

Output discipline for foreign runners: the ``--out`` file is written first and
atomically; stdout carries only the scoreboard or (with ``--json``) one JSON
line; every diagnostic goes to stderr.
"""

from __future__ import annotations

import os
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from brainbench.harnesses.registry import DEFAULT_HARNESSES
from brainbench.models.config import RunConfig, SeamOverride
from brainbench.models.corpus import SUITES

EXIT_OK, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2


@dataclass
class RunRequest:
    fixtures: Path
    gold: Path
    harness: str = "all"
    suite: str = "all"
    include_holdout: bool = False
    json_out: bool = False
    out: Path | None = None
    fmt: str = "auto"
    compare: Path | None = None
    compare_current: Path | None = None
    committed_baseline: Path | None = None
    update_baseline: Path | None = None
    justification: str | None = None
    allow_regression: str | None = None
    llm: bool = False
    budget_usd: float = 5.0
    seed: int = 42
    jobs: int | None = None  # None: chosen from cores, memory and the server's connections
    executor: str = "local"
    mode: str = "stream"
    timeout: float = 30.0
    database_url: str | None = None
    images: list[str] = field(default_factory=list)
    seams_file: Path | None = None
    ledger: Path | None = None
    resume: Path | None = None
    quiet: bool = False
    shard: str | None = None
    keep: bool = False
    html: Path | None = None
    cmd_args: list[str] = field(default_factory=list)
    fixture_ids: list[str] = field(default_factory=list)


class UsageError(ValueError):
    pass


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")


def load_or_report(fixtures: Path, gold: Path):  # type: ignore[no-untyped-def]
    """The corpus, or None after printing every problem (one line each) to stderr."""
    from brainbench.corpus.errors import CorpusError
    from brainbench.corpus.loader import load_corpus

    try:
        return load_corpus(fixtures, gold)
    except CorpusError as exc:
        _err(f"fixture validation: {len(exc.problems)} problem(s)")
        for problem in exc.problems:
            _err(f"  {problem}")
        return None


def _csv(value: str, allowed: tuple[str, ...], flag: str) -> list[str]:
    if value.strip() == "all":
        return list(allowed)
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in allowed]
    if unknown or not items:
        raise UsageError(f"{flag}: unknown value(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(allowed)} or all")
    return items


def _seam_overrides(req: RunRequest) -> dict[str, SeamOverride]:
    raw: dict[str, dict[str, object]] = {}
    if req.seams_file is not None:
        try:
            doc = tomllib.loads(req.seams_file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"{req.seams_file}: cannot read seams config: {exc}") from exc
        for name, body in (doc.get("seams") or doc).items():
            if name not in DEFAULT_HARNESSES or not isinstance(body, dict):
                raise UsageError(f"{req.seams_file}: [seams.{name}]: unknown seam (choose from "
                                 f"{', '.join(DEFAULT_HARNESSES)})")
            raw[name] = dict(body)
    for item in req.images:
        name, sep, image = item.partition("=")
        if not sep or name not in DEFAULT_HARNESSES or not image:
            raise UsageError(f"--image {item!r}: expected SEAM=IMAGE with SEAM one of {', '.join(DEFAULT_HARNESSES)}")
        raw.setdefault(name, {})["image"] = image
    for name in DEFAULT_HARNESSES:
        # BRAINBENCH_SEAM_COMMAND_<SEAM>: swap the program behind a seam without a config file
        # (tests use it to put a deliberately worse or broken hook behind one seam).
        command = os.environ.get(f"BRAINBENCH_SEAM_COMMAND_{name.replace('-', '_').upper()}")
        if command:
            raw.setdefault(name, {}).update({"command": shlex.split(command), "mode": "exec"})
    out = {}
    for name, body in raw.items():
        try:
            out[name] = SeamOverride.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UsageError(f"{req.seams_file or '--image'}: seams.{name}.{where}: {first['msg']}") from exc
    return out


def build_config(req: RunRequest) -> RunConfig:
    if req.executor not in ("local", "docker"):
        raise UsageError(f"--executor: {req.executor!r} is not local or docker")
    if req.mode not in ("exec", "stream"):
        raise UsageError(f"--mode: {req.mode!r} is not exec or stream")
    if req.jobs is not None and req.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    try:
        return RunConfig(
            fixtures_dir=req.fixtures, gold_dir=req.gold,
            harnesses=_csv(req.harness, DEFAULT_HARNESSES, "--harness"),  # type: ignore[arg-type]
            suites=_csv(req.suite, SUITES, "--suite"),  # type: ignore[arg-type]
            include_holdout=req.include_holdout, llm=req.llm, budget_usd=req.budget_usd, seed=req.seed,
            jobs=req.jobs, executor=req.executor, mode=req.mode, timeout_s=req.timeout,  # type: ignore[arg-type]
            database_url=req.database_url, seams=_seam_overrides(req), cmd_args=req.cmd_args, keep=req.keep,
            fixture_ids=list(dict.fromkeys(req.fixture_ids)),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--{first['loc'][0]}: {first['msg']}") from exc


def _pure_compare(req: RunRequest) -> int:
    from brainbench.gate.flow import ci_from_env, compare_files, outcome_json

    assert req.compare is not None and req.compare_current is not None
    report = compare_files(req.compare, req.compare_current, allow_regression=req.allow_regression,
                           ci=ci_from_env())
    for message in report.messages:
        _err(message)
    if report.outcome is not None:
        sys.stdout.write(outcome_json(report.outcome))
    return report.exit_code


def parse_shard(req: RunRequest):  # type: ignore[no-untyped-def]
    from brainbench.models.shard import ShardSpec

    if req.shard is None:
        return None
    try:
        spec = ShardSpec.parse(req.shard)
    except ValidationError as exc:
        raise UsageError(f"--shard {req.shard!r}: {exc.errors()[0]['msg']}") from exc
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    gated = [flag for flag, value in (("--compare", req.compare), ("--update-baseline", req.update_baseline),
                                      ("--resume", req.resume)) if value is not None]
    if gated:
        raise UsageError(f"--shard cannot be combined with {', '.join(gated)}: gate the merged result "
                         "(`brainbench merge SHARD.json… --compare BASELINE`)")
    if req.out is None:
        raise UsageError("--shard needs --out FILE: the shard result is what `brainbench merge` reads")
    return spec


def execute(req: RunRequest) -> int:
    if req.compare is not None and req.compare_current is not None:
        return _pure_compare(req)
    try:
        config = build_config(req)
        shard = parse_shard(req)
    except UsageError as exc:
        _err(f"brainbench run: {exc}")
        return EXIT_ERROR
    if config.llm:
        from brainbench.writeback.extractors import llm_configured

        if not llm_configured():
            _err("brainbench run: --llm requires a configured chat model "
                 "(BRAINBENCH_LLM_BASE_URL and BRAINBENCH_LLM_MODEL)")
            return EXIT_ERROR
    corpus = load_or_report(config.fixtures_dir, config.gold_dir)
    if corpus is None:
        return EXIT_ERROR
    if not corpus.fixtures:
        _err(f"no fixtures found in {config.fixtures_dir} — refusing a vacuous pass")
        return EXIT_ERROR
    if config.fixture_ids and (problem := _selection_problem(config, corpus)):
        _err(f"brainbench run: {problem}")
        return EXIT_ERROR
    return _run_and_report(config, corpus, req, shard)


def _selection_problem(config: RunConfig, corpus) -> str | None:  # type: ignore[no-untyped-def]
    """Why ``--fixture`` cannot run as asked (a pattern that matches nothing is a typo, not a pass)."""
    import difflib

    from brainbench.orchestrator.selection import unmatched_patterns

    missing = unmatched_patterns(corpus, config.fixture_ids)
    if not missing:
        return None
    ids = [item.fixture_id for item in corpus.fixtures]
    near = sorted({m for p in missing for m in difflib.get_close_matches(p, ids, n=3)})
    return (f"--fixture {', '.join(missing)}: no such fixture in {config.fixtures_dir}"
            + (f" (did you mean {', '.join(near)}?)" if near else " (`brainbench validate` lists the corpus)"))


def _run_and_report(config: RunConfig, corpus, req: RunRequest, shard=None) -> int:  # type: ignore[no-untyped-def]
    from brainbench.orchestrator.progress import progress_reporter
    from brainbench.orchestrator.run import RUN_FAILURES, Runner, run_benchmark

    runner = Runner(config, corpus, shard=shard)
    if runner.full_plan.is_empty:
        _err("filters matched zero fixtures — refusing a vacuous pass")
        return EXIT_ERROR
    total = len(runner.plan.regular) + len(runner.plan.pairs)
    if shard is not None:
        _err(f"shard {shard}: {total} of {len(runner.full_plan.regular) + len(runner.full_plan.pairs)} units")
    previous = None
    if req.resume is not None:
        try:
            previous = resumable(req.resume, config, corpus.fixtures_hash)
        except UsageError as exc:
            _err(f"brainbench run: {exc}")
            return EXIT_ERROR
    try:
        with progress_reporter(total, enabled=not req.quiet and sys.stderr.isatty()) as advance:
            result = run_benchmark(config, corpus, advance, resume=previous, notify=_err, shard=shard)
    except RUN_FAILURES as exc:
        partial = getattr(exc, "partial", None)
        if partial is not None and req.out is not None and partial.meta.run is not None:
            from brainbench.report.files import atomic_write, result_pretty

            atomic_write(req.out, result_pretty(partial))
            _err(f"run failed: {exc} (partial result of {len(partial.meta.run.completed_fixtures)} fixture(s) "
                 f"written to {req.out}; continue with --resume {req.out})")
        else:
            _err(f"run failed: {exc}")
        return EXIT_ERROR
    run_info = result.meta.run
    if run_info is not None and not run_info.complete:
        return _report_interrupted(result, req)
    if not result.cells and not result.seed_failures and shard is None:
        _err("filters matched zero fixtures — refusing a vacuous pass")
        return EXIT_ERROR
    return report_result(result, config, req)


def report_result(result, config: RunConfig, req: RunRequest,  # type: ignore[no-untyped-def]
                  ledger_extra: dict[str, object] | None = None) -> int:
    """Gate, write ``--out`` and the ledger, print the scoreboard; the exit code of a finished run."""
    from brainbench.gate.flow import apply_gate, ci_from_env
    from brainbench.gate.markdown import render_gate_section
    from brainbench.report.files import append_ledger, atomic_write, result_compact, result_pretty
    from brainbench.report.scoreboard import render_markdown, render_table

    report = apply_gate(
        result, harnesses=list(config.harnesses), suites=list(config.suites), compare=req.compare,
        committed=req.committed_baseline, update_baseline=req.update_baseline, justification=req.justification,
        allow_regression=req.allow_regression, ci=ci_from_env(), selection=list(config.fixture_ids),
    )
    if report.outcome is not None:
        result.compare = report.outcome
    code = report.exit_code
    if result.meta.faults:
        code = max(code, EXIT_ERROR)
    if result.seed_failures:
        code = max(code, EXIT_ERROR)
    if req.out is not None:
        from brainbench.report.trace_file import write_trace

        write_trace(req.out, result)
        atomic_write(req.out, result_pretty(result))
    _report_artefacts(result, req)
    # Every run leaves one line: next to --out, else under ./.brainbench/ (gbrain keeps .gbrain-evals/).
    ledger = req.ledger or (req.out.parent if req.out else Path(".brainbench")) / "brainbench-ledger.jsonl"
    append_ledger(ledger, result, code, ledger_extra)
    for message in report.messages:
        _err(message)
    if req.json_out:
        sys.stdout.write(result_compact(result))
    else:
        gate = render_gate_section(report.outcome) if report.outcome is not None else None
        use_table = req.fmt == "table" or (req.fmt == "auto" and sys.stdout.isatty())
        if use_table:
            from rich.console import Console

            console = Console()
            console.print(render_table(result))
            extra = render_markdown(result, gate).split("\n\n", 3)
            if len(extra) > 3:
                console.print(extra[3].strip(), markup=False)
        else:
            sys.stdout.write(render_markdown(result, gate))
    sys.stdout.flush()
    return code


def _report_artefacts(result, req: RunRequest) -> None:  # type: ignore[no-untyped-def]
    """--keep and --html: say where the evidence is (stderr, so stdout stays the scoreboard)."""
    info = result.meta.trace
    if req.keep and info is not None and info.work_root:
        _err(f"work root kept (transcripts, payloads): {info.work_root}")
    if req.html is not None:
        from brainbench.report.html import write_report

        baseline = None
        if req.compare is not None:
            from brainbench.report.html import load_side

            baseline = load_side(req.compare)
        _err(f"report: {write_report(req.html, result, baseline)}")


def resumable(path: Path, config: RunConfig, fixtures_hash: str):  # type: ignore[no-untyped-def]
    """The interrupted result at ``path``, if it was produced by this corpus and config."""
    from brainbench.report.trace_file import TraceFileError, load_result

    try:
        previous = load_result(path)  # with its trace, so resumed fixtures keep their evidence
    except TraceFileError as exc:
        raise UsageError(f"--resume {path}: not a readable result file ({str(exc).splitlines()[0]})") from exc
    run = previous.meta.run
    if run is None or run.complete:
        raise UsageError(f"--resume {path}: that run completed; nothing to resume")
    mismatches = []
    if previous.receipt.fixtures_hash != fixtures_hash:
        mismatches.append("fixtures_hash")
    if previous.receipt.include_holdout != config.include_holdout:
        mismatches.append("include_holdout")
    if previous.receipt.llm != config.llm:
        mismatches.append("llm")
    if run.harnesses != list(config.harnesses):
        mismatches.append("harnesses")
    if run.suites != list(config.suites):
        mismatches.append("suites")
    if (run.fixture_selection or []) != list(config.fixture_ids):
        mismatches.append("--fixture selection")
    if mismatches:
        raise UsageError(f"--resume {path}: refusing, the run differs in {', '.join(mismatches)}")
    return previous


def _report_interrupted(result, req: RunRequest) -> int:  # type: ignore[no-untyped-def]
    from brainbench.report.files import atomic_write, result_pretty
    from brainbench.report.scoreboard import render_markdown

    run = result.meta.run
    code = 130 if run.interrupted_by == "SIGINT" else 143
    if req.update_baseline is not None:
        from brainbench.gate.flow import unclean_reasons

        # A refused baseline is an error (2) whatever made the run unclean, faults and signals alike.
        _err(f"refusing --update-baseline: the run is not clean ({unclean_reasons(result)}); "
             f"{req.update_baseline} left untouched")
        code = EXIT_ERROR
    if req.out is not None:
        from brainbench.report.trace_file import write_trace

        write_trace(req.out, result)
        atomic_write(req.out, result_pretty(result))
        _err(f"interrupted by {run.interrupted_by}: partial result ({len(run.completed_fixtures)} fixtures) "
             f"written to {req.out}; continue with --resume {req.out}")
    else:
        _err(f"interrupted by {run.interrupted_by}; nothing written (no --out)")
    if not req.json_out:
        sys.stdout.write(render_markdown(result))
    return code
