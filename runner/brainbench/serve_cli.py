"""``brainbench brain serve FIXTURE``: one fixture's brain, up until interrupted.

A hook author's kit: seed the brain a fixture runs against, print the connection
string and the environment a hook gets, and keep it up so a hook can be called by
hand (README "Hooks by hand", docs/HOOK_AUTHORS.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="The brain a hook reads: serve one by hand, or print a fixture's seed document.")

REPO_ROOT = Path(__file__).resolve().parents[2]


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")


def _sample_input(fixture) -> str:  # type: ignore[no-untyped-def]
    """The fixture's first user turn as Claude Code would send it (for copy-paste)."""
    prompt = next((t.text for t in fixture.turns if t.role == "user"), "hello")
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "by-hand", "prompt": prompt,
                       "cwd": "/tmp", "transcript_path": None}, ensure_ascii=False)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _seeder(item, corpus) -> tuple[Callable[[Any], Any], str | None]:  # type: ignore[no-untyped-def]
    """How to seed ``item``'s brain as a run would see it, and a note when that is more than its own seeds.

    A continuity reader is replayed against its pair's brain: both fixtures' seeds plus
    what the writer's conversation wrote back (the deterministic gold extractor).
    """
    from brainbench.brain.seeding import SeedReport, seed_fixture

    fx = item.fixture
    pair = corpus.pairs.get(fx.continuity.pair_id) if fx.continuity is not None else None
    if pair is None or pair.reader.fixture_id != item.fixture_id:
        return (lambda conn: seed_fixture(conn, fx)), None

    def seed(conn: Any) -> SeedReport:
        from brainbench.writeback.extractors import GoldExtractor
        from brainbench.writeback.pipeline import run_write_back

        report = SeedReport.merge(seed_fixture(conn, pair.writer.fixture), seed_fixture(conn, fx))
        run_write_back(conn, pair.writer, GoldExtractor(pair.writer))
        return report

    return seed, (f"continuity reader: the brain also holds {pair.writer.fixture_id}'s seeds and its "
                  "write-back, as in a run")


@app.command()
def serve(
    fixture_id: Annotated[str, typer.Argument(metavar="FIXTURE", help="Fixture id, e.g. kta-001-deal-recall.")],
    fixtures: Annotated[Path, typer.Option(help="Fixture directory.")] = REPO_ROOT / "fixtures",
    gold: Annotated[Path, typer.Option(help="Sealed gold directory.")] = REPO_ROOT / "gold",
    database_url: Annotated[str | None, typer.Option(
        "--database-url", help="Seed into this Postgres instead of an embedded one.")] = None,
    env_file: Annotated[Path | None, typer.Option(
        "--env-file", help="Also write the hook's environment here (`source` it from another shell).")] = None,
    image: Annotated[str | None, typer.Option(
        "--image", help="An image with a seed contract: it seeds its own brain, and its commands (write-back, "
        "operations, hook) are driven one line of stdin at a time (docs/HOOK_AUTHORS.md).")] = None,
    harness: Annotated[str, typer.Option(help="The seam the image stands behind (with --image).")] = "claude-code",
) -> None:
    """Seed FIXTURE's brain, print the env a hook gets, stay up until Ctrl-C (or SIGTERM)."""
    import psycopg

    from brainbench.brain.seeding import SeedError
    from brainbench.brain.serve import served_brain
    from brainbench.brain.server import ServerError, open_server
    from brainbench.cli_run import load_or_report
    from brainbench.corpus.names import unknown_fixture_hint

    corpus = load_or_report(fixtures, gold)
    if corpus is None:
        raise typer.Exit(2)
    by_id = {item.fixture_id: item for item in corpus.fixtures}
    item = by_id.get(fixture_id)
    if item is None:
        _err(f"brainbench brain serve: no fixture {fixture_id!r} in {fixtures}; "
             f"{unknown_fixture_hint([fixture_id], list(by_id))}")
        raise typer.Exit(2)
    fx = item.fixture
    # SIGTERM must unwind like Ctrl-C so the database and the embedded server go away.
    signal.signal(signal.SIGTERM, _interrupt)
    if image is not None:
        _by_hand(image, harness, item, database_url)
        return
    try:
        server = open_server(database_url)
    except ServerError as exc:
        _err(f"brainbench brain serve: cannot start the brain's database server: {exc}")
        raise typer.Exit(2) from exc
    try:
        seed, note = _seeder(item, corpus)
        with served_brain(server, seed, source=fx.source) as brain:
            env = brain.hook_env()
            exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
            if env_file is not None:
                tmp = env_file.with_name(env_file.name + ".tmp")
                tmp.write_text(exports, encoding="utf-8")
                os.replace(tmp, env_file)  # whole or absent: a reader never sees half of it
            sys.stdout.write(exports)
            sys.stdout.flush()
            _err(f"brain of {fx.fixture_id}: {brain.report.pages} seeded page(s), {brain.report.facts} seeded fact(s), "
                 f"source {fx.source!r}, database {brain.database}")
            if note:
                _err(note)
            _err(f"try:  echo {shlex.quote(_sample_input(fx))} "
                 f"| {shlex.quote(sys.executable)} -m brainbench.hooks openclaw")
            _err("up until Ctrl-C (the database is dropped then)")
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
    except (SeedError, ServerError, psycopg.Error) as exc:
        _err(f"brainbench brain serve: {exc}")
        raise typer.Exit(2) from exc
    finally:
        server.close()
        if env_file is not None:
            with contextlib.suppress(OSError):
                env_file.unlink()
    _err("stopped: brain dropped")


def _by_hand(image: str, harness: str, item: Any, database_url: str | None) -> None:
    import anyio

    from brainbench.brain.server import ServerError, open_server
    from brainbench.doctor.by_hand import ByHandError, drive
    from brainbench.executors.base import ExecutorError

    if harness not in ("claude-code", "codex", "openclaw"):
        _err(f"brainbench brain serve: --harness {harness!r}: one of claude-code, codex, openclaw")
        raise typer.Exit(2)
    try:
        server = open_server(database_url)
    except ServerError as exc:
        _err(f"brainbench brain serve: cannot start the brain's database server: {exc}")
        raise typer.Exit(2) from exc

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    try:
        anyio.run(drive, server, image, harness, item, out, _err)
    except KeyboardInterrupt:
        pass
    except (ByHandError, ServerError, ExecutorError) as exc:
        _err(f"brainbench brain serve: {exc}")
        raise typer.Exit(2) from exc
    finally:
        server.close()
    _err("stopped: the image's brain dropped")


def _one_fixture(command: str, fixture_id: str, fixtures: Path, gold: Path) -> Any:
    """The loaded fixture FIXTURE of the corpus, or one line naming what is wrong and exit 2."""
    from brainbench.cli_run import load_or_report
    from brainbench.corpus.names import unknown_fixture_hint

    corpus = load_or_report(fixtures, gold)
    if corpus is None:
        raise typer.Exit(2)
    by_id = {item.fixture_id: item for item in corpus.fixtures}
    if fixture_id not in by_id:
        _err(f"brainbench brain {command}: no fixture {fixture_id!r} in {fixtures}; "
             f"{unknown_fixture_hint([fixture_id], list(by_id))}")
        raise typer.Exit(2)
    return by_id[fixture_id]


@app.command("write-back-document")
def write_back_document_cmd(
    fixture_id: Annotated[str, typer.Argument(metavar="FIXTURE", help="Fixture id, e.g. wb-001-pricing-concern.")],
    fixtures: Annotated[Path, typer.Option(help="Fixture directory.")] = REPO_ROOT / "fixtures",
    gold: Annotated[Path, typer.Option(help="Sealed gold directory.")] = REPO_ROOT / "gold",
) -> None:
    """Print the write-back document an image's `write_back` gets for FIXTURE (seed contract v2) on stdout."""
    from brainbench.writeback.document import write_back_document
    from brainbench.writeback.extractors import GoldExtractor
    from brainbench.writeback.pipeline import WriteBackError

    item = _one_fixture("write-back-document", fixture_id, fixtures, gold)
    try:
        document = write_back_document(item, GoldExtractor(item))
    except WriteBackError as exc:
        _err(f"brainbench brain write-back-document: {exc}")
        raise typer.Exit(2) from exc
    sys.stdout.write(document.model_dump_json(indent=2) + "\n")


@app.command("seed-document")
def seed_document_cmd(
    fixture_id: Annotated[str, typer.Argument(metavar="FIXTURE", help="Fixture id, e.g. kta-001-deal-recall.")],
    fixtures: Annotated[Path, typer.Option(help="Fixture directory.")] = REPO_ROOT / "fixtures",
    gold: Annotated[Path, typer.Option(help="Sealed gold directory.")] = REPO_ROOT / "gold",
) -> None:
    """Print the seed document an image's `seed` gets for FIXTURE (seed contract v1) on stdout."""
    from brainbench.brain.seed_document import seed_document
    from brainbench.brain.seeding import SeedError

    item = _one_fixture("seed-document", fixture_id, fixtures, gold)
    try:
        document = seed_document(item.fixture)
    except SeedError as exc:
        _err(f"brainbench brain seed-document: {exc}")
        raise typer.Exit(2) from exc
    sys.stdout.write(document.model_dump_json(indent=2) + "\n")


def register(target: typer.Typer) -> None:
    target.add_typer(app, name="brain")
