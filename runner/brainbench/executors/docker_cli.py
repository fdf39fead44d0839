"""CLI for the container side: ``cleanup``, ``images build`` (``doctor`` lives in ``brainbench.doctor``).

Mounted into the main CLI by ``register(app)``.  Heavy imports (the
docker SDK) happen inside the commands so ``brainbench --help`` stays fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Containers: cleanup, image builds.")
images_app = typer.Typer(no_args_is_help=True, help="Build BrainBench's container images.")
app.add_typer(images_app, name="images")


@app.command()
def cleanup(
    run_id: Annotated[str | None, typer.Option("--run-id", help="Only this run's objects.")] = None,
    dead_only: Annotated[bool, typer.Option("--dead-only", help="Only runs whose runner is gone (the default).")]
    = False,
    database_url: Annotated[str | None, typer.Option(
        "--database-url", help="Also drop labelled databases on this server.")] = None,
    docker_host: Annotated[str | None, typer.Option(
        "--docker-host", envvar="DOCKER_HOST",
        help="Docker engine whose containers and networks to remove (default: the local socket; a machine "
        "without Docker cleans the brain side only).")] = None,
    all_runs: Annotated[bool, typer.Option(
        "--all", help="Also remove the containers, networks, databases, roles and scratch of LIVE runs "
        "(and of runs that cannot be judged, e.g. another machine's).")] = False,
) -> None:
    """Remove dead runs' leftovers: scratch, embedded servers, databases and roles, containers and networks.

    Without Docker only the brain side is cleaned, and that is no error.  With --all: of every run.
    """
    from rich.console import Console

    from ..brain.cleanup import clean_brains
    from .docker.cleanup import remove_labelled
    from .docker.client import DockerApi
    from .docker.failures import DockerUnavailable

    console = Console()
    # Brain side first (it needs no engine): dead runs only unless --all or --run-id.
    if all_runs:
        console.print("[yellow]--all: removing the objects of live runs too[/yellow]")
    brains = clean_brains(database_url, run_id, include_live=all_runs)
    for what in brains.removed:
        console.print(f"removed {what}")
    for err in brains.errors:
        console.print(f"  [red]{err}[/red]")
    from .extras import docker_sdk_missing

    if (missing := docker_sdk_missing("cleanup of containers and networks")) is not None:
        console.print(missing, markup=False)
        raise typer.Exit(2 if brains.errors else 0)
    try:
        api = DockerApi(docker_host)
    except DockerUnavailable as exc:
        if docker_host is None:
            # No engine named and none on the local socket: a machine without Docker has no containers of
            # ours to remove, so the brain side was the whole job.  A named engine that does not answer is
            # an error: its containers may be there.
            console.print(f"no Docker engine on this machine ({exc}): containers and networks not looked for",
                          markup=False)
            console.print(f"cleanup: {len(brains.removed)} object(s) removed"
                          + (f", [red]{len(brains.errors)} error(s)[/red]" if brains.errors else ""))
            raise typer.Exit(2 if brains.errors else 0) from exc
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    # Dead runs only unless --all (the rule: removing a live run's objects is explicit);
    # --run-id narrows the selection, it does not widen it.
    report = remove_labelled(api, run_id=run_id, dead_only=dead_only or not all_runs)
    api.close()
    why = "" if all_runs else " (owner dead)"
    for name in report.containers:
        console.print(f"removed container {name}{why}")
    for name in report.networks:
        console.print(f"removed network {name}{why}")
    if report.kept:
        console.print(f"kept {len(report.kept)} object(s) of runs that may still be running; "
                      "`brainbench cleanup --all` removes them too (it would break those runs):")
        for item in report.kept:
            console.print(f"  {item}")
    errors = report.errors + brains.errors
    console.print(f"cleanup: {report.removed + len(brains.removed)} object(s) removed"
                  + (f", [red]{len(errors)} error(s)[/red]" if errors else ""))
    for err in report.errors:
        console.print(f"  [red]{err}[/red]")
    # A removal the engine or the server refused is an infrastructure error (2), never a "regression" (1).
    raise typer.Exit(2 if errors else 0)


def _repo_root() -> Path:
    """The checkout holding harness_images/ (images are built from source)."""
    candidates = [Path.cwd(), *Path.cwd().parents, Path(__file__).resolve().parents[3]]
    for path in candidates:
        if (path / "scripts" / "build-images").exists() and (path / "harness_images").is_dir():
            return path
    raise typer.BadParameter("run from a BrainBench checkout (needs scripts/build-images and harness_images/)")


@images_app.command("build")
def images_build(
    offline: Annotated[bool, typer.Option("--offline", help="debootstrap base, host wheelhouse, no registry.")]
    = False,
    only: Annotated[str | None, typer.Option(
        "--only", help="postgres,openclaw,claude-code,codex,brainbench,example-shell-recall,example-perl-memo "
        "(the default set), or postgres-vector (built only when named)")]
    = None,
    tag: Annotated[str, typer.Option("--tag")] = "latest",
    rebuild_base: Annotated[bool, typer.Option("--rebuild-base")] = False,
    if_stale: Annotated[bool, typer.Option("--if-stale", help="Only images whose inputs changed (label "
                                           "io.brainbench.inputs).")] = False,
) -> None:
    """Build the seam, orchestrator and Postgres images (scripts/build-images)."""
    root = _repo_root()
    argv = ["bash", str(root / "scripts" / "build-images"), "--tag", tag]
    if offline:
        argv.append("--offline")
    if rebuild_base:
        argv.append("--rebuild-base")
    if if_stale:
        argv.append("--if-stale")
    if only:
        argv += ["--only", only]
    env = dict(os.environ)
    env.setdefault("PYTHON", sys.executable)
    # A failed build is an infrastructure error: exit 2, never the 1 that reads as a regression.
    raise typer.Exit(0 if subprocess.call(argv, env=env) == 0 else 2)


def register(target: typer.Typer) -> None:
    """Mount ``cleanup`` and ``images build`` on the main ``brainbench`` app."""
    target.command("cleanup")(cleanup)
    target.add_typer(images_app, name="images")


def main() -> None:  # pragma: no cover - `python -m brainbench.executors.docker_cli`
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
