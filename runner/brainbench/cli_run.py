"""``brainbench run`` end to end: config → corpus → run → gate → outputs → exit code.

Output discipline for foreign runners: the ``--out`` file is written first and
atomically; stdout carries only the scoreboard or (with ``--json``) one JSON
line; every diagnostic goes to stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from brainbench.models.config import OptionsError, RunConfig

if TYPE_CHECKING:
    from brainbench.brain.server import EmbeddedPostgres

EXIT_OK, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2
# When the command started (this module is imported by `run` itself): the clock of its progress lines.
STARTED = time.monotonic()


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")


def load_or_report(fixtures: Path, gold: Path):  # type: ignore[no-untyped-def]
    """The corpus, or None after printing every problem (one line each) to stderr."""
    from brainbench.corpus.errors import CorpusError
    from brainbench.corpus.loader import load_corpus

    missing = [f"{flag} {path}: no such directory" for flag, path in (("--fixtures", fixtures), ("--gold", gold))
               if not path.is_dir()]
    if missing:
        # One line per missing directory, not one per orphaned file on the other side.
        for line in missing:
            _err(f"{line} (run from a project holding fixtures/ and gold/, or pass --project DIR)")
        return None

    try:
        return load_corpus(fixtures, gold)
    except CorpusError as exc:
        _err(f"fixture validation: {len(exc.problems)} problem(s)")
        for problem in exc.problems:
            _err(f"  {problem}")
        return None


def shipped_fallback(project: Path, fixtures: Path, gold: Path) -> tuple[Path, Path] | None:
    """The shipped corpus's (fixtures, gold) when the defaults name a project that holds neither
    (an installed `brainbench run` in an empty directory); None when the project has a corpus, or
    either directory was named on purpose."""
    if fixtures != project / "fixtures" or gold != project / "gold" or fixtures.exists() or gold.exists():
        return None
    from brainbench.corpus.shipped import shipped_corpus

    root = shipped_corpus()
    return (root / "fixtures", root / "gold") if root is not None else None


def say_shipped(project: Path, corpus, doing: str = "grading") -> None:  # type: ignore[no-untyped-def]
    from brainbench.corpus.shipped import describe

    _err(f"no fixtures/ or gold/ in {project}: {doing} {describe(len(corpus.fixtures), corpus.fixtures_hash)}; "
         "`brainbench corpus init DIR` copies it, with its baseline, into a project of your own")


def check_ledger_hash(corpus) -> str | None:  # type: ignore[no-untyped-def]
    """A problem line when ``fixtures/_ledger.json`` records another fixtures_hash than the corpus has."""
    import json

    path = corpus.fixtures_dir / "_ledger.json"
    if not path.is_file():
        return None
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("fixtures_hash")
    except (OSError, ValueError, AttributeError) as exc:
        return f"{path}: $: not a readable ledger ({exc})"
    if recorded != corpus.fixtures_hash:
        return (f"{path}: $.fixtures_hash: records {str(recorded)[:12]}… but the corpus hashes to "
                f"{corpus.fixtures_hash[:12]}… — the ledger is stale (regenerate: brainbench corpus generate)")
    return None


def _pure_compare(config: RunConfig) -> int:
    from brainbench.gate.flow import ci_from_env, compare_files, outcome_json

    assert config.compare is not None and config.compare_current is not None
    report = compare_files(config.compare, config.compare_current, allow_regression=config.allow_regression,
                           ci=ci_from_env())
    for message in report.messages:
        _err(message)
    if report.outcome is not None:
        sys.stdout.write(outcome_json(report.outcome))
    return report.exit_code


def execute_cli(values: dict[str, Any], cmd_args: list[str]) -> int:
    """``brainbench run`` from what Click parsed: validate into the one model, then run it."""
    from brainbench.cli_options import config_from_cli

    try:
        config = config_from_cli(values, cmd_args)
    except OptionsError as exc:
        _err(f"brainbench run: {exc}")
        return EXIT_ERROR
    return execute(config)


def parse_shard(config: RunConfig):  # type: ignore[no-untyped-def]
    """``--shard I/N`` as a ShardSpec (None without it); OptionsError when it cannot run as asked."""
    from brainbench.models.shard import ShardSpec

    if config.shard is None:
        return None
    try:
        spec = ShardSpec.parse(config.shard)
    except ValidationError as exc:
        raise OptionsError(f"--shard {config.shard!r}: {exc.errors()[0]['msg']}") from exc
    except ValueError as exc:
        raise OptionsError(str(exc)) from exc
    gated = [flag for flag, value in (("--compare", config.compare), ("--update-baseline", config.update_baseline_to),
                                      ("--resume", config.resume)) if value is not None]
    if gated:
        raise OptionsError(f"--shard cannot be combined with {', '.join(gated)}: gate the merged result "
                           "(`brainbench merge SHARD.json… --compare BASELINE`)")
    if config.out is None:
        raise OptionsError("--shard needs --out FILE: the shard result is what `brainbench merge` reads")
    return spec


def execute(config: RunConfig) -> int:
    if config.compare is not None and config.compare_current is not None:
        return _pure_compare(config)
    _warm_hook_server(config)
    _embedded_brain_ahead(config)
    try:
        shard = parse_shard(config)
    except OptionsError as exc:
        _err(f"brainbench run: {exc}")
        return EXIT_ERROR
    if (missing := _missing_extra(config)) is not None:
        _err(f"brainbench run: {missing}")
        return EXIT_ERROR
    if config.out is not None and config.out != config.resume:
        # A run that fails before writing must not leave an earlier result looking like its own.
        config.out.unlink(missing_ok=True)
    if config.llm:
        from brainbench.writeback.extractors import llm_configured

        if not llm_configured():
            _err("brainbench run: --llm requires a configured chat model "
                 "(BRAINBENCH_LLM_BASE_URL and BRAINBENCH_LLM_MODEL)")
            return EXIT_ERROR
    if config.behaviour_from is not None:
        _err(f"behaviour: gbrain {config.behaviour}'s, as {config.behaviour_from} records "
             "(--behaviour 0.60 for the newest; that baseline then no longer gates the run)")
    fresh = None
    if config.fresh_corpus:
        try:
            fresh, config = _generate_fresh_corpus(config)
        except OSError as exc:
            _err(f"brainbench run: --fresh-corpus: cannot write the generated corpus: {exc.strerror or exc}")
            return EXIT_ERROR
    if fresh is None and (shipped := shipped_fallback(config.project, config.fixtures_dir,
                                                      config.gold_dir)) is not None:
        config = config.model_copy(update={"fixtures_dir": shipped[0], "gold_dir": shipped[1]})
    else:
        shipped = None
    try:
        corpus = load_or_report(config.fixtures_dir, config.gold_dir)
        if corpus is None:
            return EXIT_ERROR
        if shipped is not None:
            say_shipped(config.project, corpus)
        if not corpus.fixtures:
            _err(f"no fixtures found in {config.fixtures_dir} — refusing a vacuous pass")
            return EXIT_ERROR
        if config.fixture_ids and (problem := _selection_problem(config, corpus)):
            _err(f"brainbench run: {problem}")
            return EXIT_ERROR
        record = None
        if fresh is not None:
            record = fresh.record(withhold=config.withhold_seed)
            if config.withhold_seed and not _keep_seed(config, fresh, record.commitment, corpus.fixtures_hash):
                return EXIT_ERROR
        return _run_and_report(config, corpus, shard, record)
    finally:
        if fresh is not None:
            fresh.remove()


def _generate_fresh_corpus(config: RunConfig):  # type: ignore[no-untyped-def]
    """Generate the corpus ``--fresh-corpus`` grades; the config now points at it and records its seed."""
    from brainbench.generator.fresh import WITHHELD_RECEIPT_SEED, generate_fresh, new_seed, redact_seed

    seed = config.fresh_corpus_seed if config.fresh_corpus_seed is not None else new_seed()
    fresh = generate_fresh(seed)
    update: dict[str, Any] = {"fixtures_dir": fresh.fixtures_dir, "gold_dir": fresh.gold_dir, "seed": seed}
    if config.withhold_seed:
        update |= {"seed": WITHHELD_RECEIPT_SEED, "cmd_args": redact_seed(config.cmd_args)}
        _err(f"fresh corpus: {fresh.fixtures} fixtures, seed withheld")
    else:
        _err(f"fresh corpus: {fresh.fixtures} fixtures from seed {seed}")
    return fresh, config.model_copy(update=update)


def _keep_seed(config: RunConfig, fresh, commitment: str, fixtures_hash: str) -> bool:  # type: ignore[no-untyped-def]
    """Write the withheld seed's file before the run starts (a crash must not lose it); False after an error line."""
    from brainbench.generator.fresh import write_reveal

    if config.seed_file is not None:
        path = config.seed_file
    elif config.out is not None:
        path = config.out.with_name(config.out.name.removesuffix(".json") + ".seed.json")
    else:
        path = config.project / ".brainbench" / f"fresh-{commitment[:16]}.seed.json"
    try:
        write_reveal(path, fresh.reveal(fixtures_hash))
    except FileExistsError:
        _err(f"--seed-file {path}: exists; a seed file is never overwritten (move it, or pass another --seed-file)")
        return False
    except OSError as exc:
        _err(f"--seed-file {path}: cannot write the seed: {exc.strerror or exc}")
        return False
    _err(f"fresh corpus: seed and salt written to {path} (mode 0600): keep it private until publication; "
         f"the result records only the commitment {commitment[:16]}…")
    return True


def runs_our_adapters_locally(config: RunConfig) -> bool:
    """Whether some seam of the run is our own adapter run as a local process (so through the warm hook server)."""
    from brainbench.orchestrator.launch import ours_locally

    return any(ours_locally(config, h) for h in config.harnesses)


def _warm_hook_server(config: RunConfig) -> None:
    """Our adapters' warm hook server, started before the runner's own imports and corpus (≈ 0.5 s on
    one core) rather than when the first seam asks for it: its imports then run on the other core."""
    if not runs_our_adapters_locally(config):
        return
    from brainbench.executors.hook_env import inherited_environment
    from brainbench.hooks.__main__ import warm_server

    warm_server(inherited_environment())  # the environment a local seam process gets, so the same server


def _embedded_brain_ahead(config: RunConfig) -> None:
    """The embedded server's cluster made on a thread while this process imports the runner and loads
    the corpus (``brain.server.prepare_ahead``), for a run whose brain is the embedded default and
    whose seams all run here (no image seeds a clone of its own, so the cluster's place is known now:
    it is what ``orchestrator.run._open_budgeted`` asks for with no clones)."""
    if config.database_url or config.executor != "local":
        return
    if any((o := config.seams.get(h)) and o.image for h in config.harnesses):
        return
    from brainbench.brain.server import prepare_ahead
    from brainbench.models.share import share_from_env

    try:
        share = share_from_env()
    except ValueError:
        return  # the run says so, in its own words
    prepare_ahead(share.worst_case_bytes(len(set(config.harnesses)), 0), lambda: _ahead_max_connections(config),
                  _spare_template)


def _spare_template(server: EmbeddedPostgres) -> str:
    # Imported on the thread that makes the server: the migrations overlap this thread's imports.
    from brainbench.brain.databases import make_spare_template

    return make_spare_template(server)


def _ahead_max_connections(config: RunConfig) -> int:
    """The ``max_connections`` the run will ask of the embedded server (``orchestrator.run._open_budgeted``,
    the same choice from the same config and host), so that the server made ahead is started ahead too."""
    from brainbench.brain.budget import choose_concurrency, seam_modes

    return choose_concurrency(config.jobs, seam_modes(config)).server_max_connections


def _missing_extra(config: RunConfig) -> str | None:
    """The extra to install when a seam needs the Docker SDK and this install has none."""
    from brainbench.executors.extras import docker_sdk_missing
    from brainbench.orchestrator.launch import provider_for

    docker = [h for h in config.harnesses if provider_for(config, h) == "docker"]
    if not docker:
        return None
    why = "--executor docker" if config.executor == "docker" else f"--image for {', '.join(docker)}"
    return docker_sdk_missing(why)


def _selection_problem(config: RunConfig, corpus) -> str | None:  # type: ignore[no-untyped-def]
    """Why ``--fixture`` cannot run as asked (a pattern that matches nothing is a typo, not a pass)."""
    from brainbench.corpus.names import unknown_fixture_hint
    from brainbench.orchestrator.selection import unmatched_patterns

    missing = unmatched_patterns(corpus, config.fixture_ids)
    if not missing:
        return None
    ids = [item.fixture_id for item in corpus.fixtures]
    return (f"--fixture {', '.join(missing)}: no such fixture in {config.fixtures_dir} "
            f"({unknown_fixture_hint(missing, ids)})")


def _run_and_report(config: RunConfig, corpus, shard=None, fresh=None) -> int:  # type: ignore[no-untyped-def]
    from brainbench import collector
    from brainbench.orchestrator.progress import progress_reporter
    from brainbench.orchestrator.run import RUN_FAILURES, Runner
    from brainbench.pipeline import run_benchmark

    collector.resume()  # everything the run imports is loaded by now (brainbench.collector)
    runner = Runner(config, corpus, shard=shard)
    if runner.full_plan.is_empty:
        _err("filters matched zero fixtures — refusing a vacuous pass")
        return EXIT_ERROR
    total = runner.fixture_count
    if shard is not None:
        whole = len(runner.full_plan.regular) + 2 * len(runner.full_plan.pairs)
        _err(f"shard {shard}: {total} of {whole} fixtures")
    previous = None
    if config.resume is not None:
        try:
            previous = resumable(config.resume, config, corpus.fixtures_hash)
        except OptionsError as exc:
            _err(f"brainbench run: {exc}")
            return EXIT_ERROR
    try:
        with progress_reporter(total, enabled=not config.quiet, tty=sys.stderr.isatty(), started=STARTED) as tally:
            result = run_benchmark(config, corpus, tally, resume=previous, notify=_err, shard=shard)
    except RUN_FAILURES as exc:
        partial = getattr(exc, "partial", None)
        if partial is not None:
            partial.meta.fresh_corpus = fresh
        if partial is not None and config.out is not None and partial.meta.run is not None:
            from brainbench.report.files import write_result

            try:
                write_result(config.out, partial)
            except OSError as write_error:  # the cause may be a full disk, which this write meets too
                _err(f"run failed: {exc} (its partial result could not be written to {config.out}: "
                     f"{write_error.strerror or write_error})")
                return EXIT_ERROR
            _err(f"run failed: {exc} (partial result of {len(partial.meta.run.completed_fixtures)} fixture(s) "
                 f"written to {config.out}; continue with --resume {config.out})")
        else:
            _err(f"run failed: {exc}")
        return EXIT_ERROR
    result.meta.fresh_corpus = fresh
    run_info = result.meta.run
    if run_info is not None and not run_info.complete:
        code = _report_interrupted(result, config)
        _closing_line(config, tally, result, code)
        return code
    if not result.cells and not result.seed_failures and shard is None:
        _err("filters matched zero fixtures — refusing a vacuous pass")
        return EXIT_ERROR
    code = report_result(result, config)
    _closing_line(config, tally, result, code)
    return code


def _verdict(result, code: int) -> str:  # type: ignore[no-untyped-def]
    run = result.meta.run
    if run is not None and not run.complete:
        return f"INTERRUPTED by {run.interrupted_by} (partial numbers)"
    problems = [f"{n} {what}" for n, what in ((len(result.meta.faults), "seam fault(s)"),
                                              (len(result.seed_failures), "seed failure(s)")) if n]
    outcome = result.meta.compare
    if outcome is not None:
        verdict = f"gate {outcome.verdict.upper()} ({outcome.mode})"
    elif problems:
        verdict = "INVALID"
    else:
        verdict = "clean, not gated (no --compare)"
    return verdict + (f", {', '.join(problems)}" if problems else "")


def _closing_line(config: RunConfig, tally, result, code: int) -> None:  # type: ignore[no-untyped-def]
    """One line to end on: verdict and exit code, where the result went, how long it took, what it did."""
    if config.quiet:
        return
    where = str(config.out) if config.out is not None else "stdout (--json)" if config.json_out else \
        "not written (no --out)"
    _err(f"brainbench: {_verdict(result, code)}, exit {code} · result {where} · {tally.elapsed_s:.1f} s · "
         f"{tally.counts()}")


def report_result(result, config: RunConfig,  # type: ignore[no-untyped-def]
                  ledger_extra: dict[str, object] | None = None) -> int:
    """Gate, write ``--out`` and the ledger, print the scoreboard; the exit code of a finished run."""
    from brainbench.gate.flow import apply_gate, ci_from_env
    from brainbench.gate.markdown import render_gate_section
    from brainbench.report.files import append_ledger_or_say, result_compact, write_result
    from brainbench.report.scoreboard import render_markdown, render_table

    report = apply_gate(
        result, harnesses=list(config.harnesses), suites=list(config.suites), compare=config.compare,
        committed=config.default_committed_baseline(), update_baseline=config.update_baseline_to,
        justification=config.justification, allow_regression=config.allow_regression, ci=ci_from_env(),
        selection=list(config.fixture_ids),
    )
    if report.outcome is not None:
        result.meta.compare = report.outcome
    code = report.exit_code
    if result.meta.faults:
        code = max(code, EXIT_ERROR)
    if result.seed_failures:
        code = max(code, EXIT_ERROR)
    for leftover in result.leftovers:
        # An image that defeated cleanup must not pass unnoticed: a run that leaves anything is an error.
        _err(f"brainbench: left behind on the brain server: {leftover} (remove with: brainbench cleanup)")
        code = max(code, EXIT_ERROR)
    if config.out is not None:
        _write_trace(config, result)
        write_result(config.out, result)
    _report_artefacts(result, config)
    # Every run leaves one line in the project's .brainbench/ (gbrain keeps .gbrain-evals/), never
    # next to --out: that is often a shared temp dir.
    assert config.ledger is not None
    if (note := append_ledger_or_say(config.ledger, result, code, ledger_extra,
                                     defaulted=config.ledger_defaulted)) is not None:
        _err(note)
    for message in report.messages:
        _err(message)
    if config.json_out:
        sys.stdout.write(result_compact(result))
    else:
        gate = render_gate_section(report.outcome) if report.outcome is not None else None
        use_table = config.fmt == "table" or (config.fmt == "auto" and sys.stdout.isatty())
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


def _write_trace(config: RunConfig, result) -> None:  # type: ignore[no-untyped-def]
    from brainbench.models.config import TRACES_RELPATH
    from brainbench.report.trace_file import prune_traces, write_trace

    assert config.out is not None
    path = config.trace_path()
    write_trace(config.out, result, path)
    if path is not None and path.parent == config.project / TRACES_RELPATH:
        prune_traces(path.parent)


def _report_artefacts(result, config: RunConfig) -> None:  # type: ignore[no-untyped-def]
    """--keep and --html: say where the evidence is (stderr, so stdout stays the scoreboard)."""
    info = result.meta.trace
    if config.keep and info is not None and info.work_root:
        _err(f"work root kept (transcripts, payloads): {info.work_root}")
    if config.html is not None:
        from brainbench.report.html import write_report

        baseline = None
        if config.compare is not None:
            from brainbench.report.html import load_side

            baseline = load_side(config.compare)
        _err(f"report: {write_report(config.html, result, baseline)}")


def resumable(path: Path, config: RunConfig, fixtures_hash: str):  # type: ignore[no-untyped-def]
    """The interrupted result at ``path``, if it was produced by this corpus and config."""
    from brainbench.report.trace_file import TraceFileError, load_result

    try:
        previous = load_result(path)  # with its trace, so resumed fixtures keep their evidence
    except TraceFileError as exc:
        raise OptionsError(f"--resume {path}: not a readable result file ({str(exc).splitlines()[0]})") from exc
    run = previous.meta.run
    if run is None or run.complete:
        raise OptionsError(f"--resume {path}: that run completed; nothing to resume")
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
    if (run.behaviour or "0.46") != config.behaviour:  # a result without it predates gbrain 0.60's seams
        mismatches.append("behaviour")
    if (run.fixture_selection or []) != list(config.fixture_ids):
        mismatches.append("--fixture selection")
    if mismatches:
        raise OptionsError(f"--resume {path}: refusing, the run differs in {', '.join(mismatches)}")
    return previous


def _report_interrupted(result, config: RunConfig) -> int:  # type: ignore[no-untyped-def]
    from brainbench.report.files import write_result
    from brainbench.report.scoreboard import render_markdown

    run = result.meta.run
    code = 130 if run.interrupted_by == "SIGINT" else 143
    if config.update_baseline_to is not None:
        from brainbench.gate.flow import unclean_reasons

        # A refused baseline is an error (2) whatever made the run unclean, faults and signals alike.
        _err(f"refusing --update-baseline: the run is not clean ({unclean_reasons(result)}); "
             f"{config.update_baseline_to} left untouched")
        code = EXIT_ERROR
    if config.out is not None:
        _write_trace(config, result)
        write_result(config.out, result)
        _err(f"interrupted by {run.interrupted_by}: partial result ({len(run.completed_fixtures)} fixtures) "
             f"written to {config.out}; continue with --resume {config.out}")
    else:
        _err(f"interrupted by {run.interrupted_by}; nothing written (no --out)")
    if not config.json_out:
        sys.stdout.write(render_markdown(result))
    return code
