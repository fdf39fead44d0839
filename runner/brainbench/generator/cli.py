"""``brainbench corpus …``: generate, sample, check-labels. Thin wrappers over the library.

Heavy work is imported inside the commands so mounting this sub-app costs nothing.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Generate, sample and validate the BrainBench corpus.", no_args_is_help=True)

_Project = Annotated[Path | None, typer.Option("--project", envvar="BRAINBENCH_PROJECT", show_envvar=True,
                                               help="Project containing fixtures/ and gold/ (default: cwd).")]
# `--out` named a directory here but a result file for `run`; renamed to --project.
# Still accepted for one release (deprecated, hidden).
_Out = Annotated[Path | None, typer.Option("--out", hidden=True, help="Deprecated spelling of --project.")]
_Fix = Annotated[Path | None, typer.Option("--fixtures", help="Fixture dir (default: PROJECT/fixtures).")]
_Gold = Annotated[Path | None, typer.Option("--gold", help="Gold dir (default: PROJECT/gold).")]


def _dirs(project: Path | None, out: Path | None, fixtures: Path | None, gold: Path | None) -> tuple[Path, Path]:
    if out is not None:
        sys.stderr.write("brainbench corpus: --out DIR is deprecated and will be removed in the next release; "
                         "use --project DIR\n")
    root = project or out or Path(".")
    return (fixtures or root / "fixtures", gold or root / "gold")


class Trust(StrEnum):
    off = "off"
    ours = "ours"
    gbrain = "gbrain"


@app.command()
def generate(
    seed: Annotated[int, typer.Option(help="PRNG seed; the committed corpus uses 42.")] = 42,
    trust: Annotated[Trust, typer.Option(
        help="Memory-trust categories (trust, state-resolution, poisoning-external, poisoning-agent, deletion): "
             "ours (our universe, drawn on from this seed's stream: the committed corpus); off (none: a "
             "classic 4-suite corpus); gbrain (gbrain 0.60's 42 trust fixtures byte for byte, whatever the "
             "seed).")] = Trust.ours,
    project: _Project = None,
    out: _Out = None,
    fixtures: _Fix = None,
    gold: _Gold = None,
) -> None:
    """Delete and rewrite the gen-* fixture/gold files and fixtures/_ledger.json."""
    from brainbench.generator import generate_and_write

    fixtures_dir, gold_dir = _dirs(project, out, fixtures, gold)
    corpus, ledger = generate_and_write(seed, fixtures_dir, gold_dir, trust=trust.value)
    typer.echo(f"generated {len(corpus.fixtures)} fixtures (seed {seed}, holdout {ledger['holdout']}, "
               f"gold turns {ledger['gold_turns']}) into {fixtures_dir} and {gold_dir}")
    typer.echo(f"fixtures_hash {ledger['fixtures_hash']}")


@app.command()
def init(directory: Annotated[Path, typer.Argument(help="Project directory to write (created if missing).")]
         = Path(".")) -> None:
    """Write the corpus shipped with brainbench (fixtures/, gold/, baselines/main.json) into a project."""
    from brainbench.corpus.shipped import InitError, init_project

    try:
        root = init_project(directory)
    except InitError as exc:
        sys.stderr.write(f"brainbench corpus init: {exc}\n")
        raise typer.Exit(2) from None
    count = len(list((root / "fixtures").glob("*.fixture.json")))
    typer.echo(f"wrote {count} fixtures, their gold and baselines/main.json into {root}")
    typer.echo(f"next: cd {root} && brainbench run --compare baselines/main.json   # grade it and gate it")


@app.command()
def sample(
    fraction: Annotated[float, typer.Option(help="Share of fixtures per category.")] = 0.1,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 1,
    project: _Project = None,
    out: _Out = None,
    fixtures: _Fix = None,
    gold: _Gold = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Print a stratified review sample (fixture text and brain, no gold)."""
    from brainbench.generator.sample import build_sample
    from brainbench.generator.write import dumps

    fixtures_dir, _ = _dirs(project, out, fixtures, gold)
    text = dumps(build_sample(fixtures_dir, fraction, seed))
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


@app.command("check-labels")
def check_labels_cmd(
    review: Annotated[Path, typer.Argument(help="The reviewer's filled-in sample JSON.")],
    project: _Project = None,
    out: _Out = None,
    fixtures: _Fix = None,
    gold: _Gold = None,
    reviewer: Annotated[str, typer.Option(help="Who labelled the sample.")] = "unnamed reviewer",
    date: Annotated[str | None, typer.Option(help="Receipt date (YYYY-MM-DD); default today UTC.")] = None,
    record: Annotated[bool, typer.Option(help="Write the receipt into the ledger.")] = True,
) -> None:
    """Compute agreement with the sealed gold and record the receipt in the ledger."""
    from brainbench.generator.labels import check_labels, record_receipt
    from brainbench.generator.ledger import ledger_path

    fixtures_dir, gold_dir = _dirs(project, out, fixtures, gold)
    try:
        data = json.loads(review.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"brainbench corpus check-labels: {review}: cannot read the review: "
                         f"{getattr(exc, 'strerror', None) or exc}\n")
        raise typer.Exit(2) from None
    result = check_labels(data, gold_dir)
    typer.echo(json.dumps(result, indent=2))
    if record:
        when = date or datetime.now(UTC).strftime("%Y-%m-%d")
        record_receipt(ledger_path(fixtures_dir), data, result, when, reviewer)
        typer.echo(f"receipt recorded in {ledger_path(fixtures_dir)}")


@app.command("verify-seed")
def verify_seed_cmd(
    result: Annotated[Path, typer.Argument(help="The result JSON of a `run --fresh-corpus` run.")],
    seed_file: Annotated[Path | None, typer.Argument(
        help="Its seed file (--withhold-seed); omit when the result records the seed itself.")] = None,
) -> None:
    """Check a fresh corpus's seed: it matches the result's commitment and regenerates the corpus graded."""
    from brainbench.generator.fresh import FreshCorpusError, verify_seed

    try:
        seed, fixtures_hash = verify_seed(result, seed_file)
    except FreshCorpusError as exc:
        sys.stderr.write(f"brainbench corpus verify-seed: {exc}\n")
        raise typer.Exit(2) from None
    typer.echo(f"ok: seed {seed} matches the commitment of {result} and generates the corpus it graded "
               f"(fixtures_hash {fixtures_hash})")
