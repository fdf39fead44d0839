"""``brainbench doctor --image IMAGE``: exit 0 pass, 1 a conformance failure, 2 could not check."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

_STATUS = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]", "warn": "[yellow]WARN[/yellow]",
           "info": "[dim]info[/dim]"}


def _parse_env(values: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--env")
        env[key] = value
    return env


def doctor(
    image: Annotated[str, typer.Option("--image", help="Image to check (ours or a production one).")],
    command: Annotated[str | None, typer.Option(
        "--command", help="Hook command (shell form); default: the image's ENTRYPOINT + CMD.")] = None,
    mode: Annotated[str | None, typer.Option(
        "--mode", help="exec or stream; default: every mode the image declares (io.brainbench.modes).")] = None,
    harness: Annotated[str, typer.Option("--harness", help="claude-code, codex or openclaw")] = "claude-code",
    env: Annotated[list[str], typer.Option("--env", help="KEY=VALUE passed to every call.")] = [],  # noqa: B006
    timeout: Annotated[float | None, typer.Option(
        "--timeout", help="Per-call timeout, seconds (default: the run's, 30).")] = None,
    database_url: Annotated[str | None, typer.Option(
        "--database-url", help="Seed doctor's brain on this Postgres (default: an embedded one).")] = None,
    docker_host: Annotated[str | None, typer.Option("--docker-host", envvar="DOCKER_HOST")] = None,
) -> None:
    """Predict the run: check an image in the modes the run would use, graded by the run's own rules."""
    import anyio
    from rich.console import Console
    from rich.table import Table

    from brainbench.doctor.checks import run_doctor
    from brainbench.models.config import DEFAULT_TIMEOUT_S

    if mode not in (None, "exec", "stream"):
        raise typer.BadParameter("must be exec or stream", param_hint="--mode")
    if harness not in ("claude-code", "codex", "openclaw"):
        raise typer.BadParameter("must be claude-code, codex or openclaw", param_hint="--harness")
    call_env = _parse_env(env)
    from brainbench.executors.extras import docker_sdk_missing

    if (missing := docker_sdk_missing("doctor")) is not None:
        sys.stderr.write(f"brainbench doctor: could not check {image}: {missing}\n")
        raise typer.Exit(2)
    report = anyio.run(lambda: run_doctor(
        image, command=(command,) if command else (), mode=mode, env=call_env,  # type: ignore[arg-type]
        timeout_s=timeout or DEFAULT_TIMEOUT_S, harness=harness, database_url=database_url, docker_host=docker_host))  # type: ignore[arg-type]
    console = Console()
    if report.results:
        table = Table(title=f"brainbench doctor {image} ({harness}; modes: {', '.join(report.modes) or '-'})")
        table.add_column("check")
        table.add_column("result")
        table.add_column("detail", overflow="fold")
        for r in report.results:
            table.add_row(r.name, _STATUS[r.status], r.detail)
        console.print(table)
        for r in report.results:
            if not r.passed and r.stderr_tail:
                console.print(f"[red]hook stderr[/red] ({r.name}):", highlight=False)
                console.print("\n".join("  " + line for line in r.stderr_tail.splitlines()), markup=False,
                              highlight=False)
    if report.cannot_check:
        sys.stderr.write(f"brainbench doctor: could not check {image}: {report.cannot_check}\n")
        raise typer.Exit(report.exit_code)
    failed = [r for r in report.results if not r.passed]
    console.print(f"{len(report.results) - len(failed)} passed, {len(failed)} failed"
                  + ("" if failed else ": the run will see what doctor saw"), highlight=False)
    raise typer.Exit(report.exit_code)


def register(target: typer.Typer) -> None:
    target.command("doctor")(doctor)
