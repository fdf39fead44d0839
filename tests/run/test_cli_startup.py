"""The CLI other repos shell out to starts without importing the heavy machinery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("psycopg", "docker", "pydantic", "anyio", "brainbench.orchestrator", "brainbench.brain")


def test_help_does_not_import_heavy_modules() -> None:
    # main(), not the program's entry(): that one ends the process before the print below.
    code = ("import sys\nsys.argv = ['brainbench', '--help']\nimport brainbench.cli as cli\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_a_bug_exits_2_with_one_line_and_a_crash_file(tmp_path: Path) -> None:
    """Exit 1 means "regression" to callers, so an uncaught exception must not produce it."""
    code = ("import sys\nimport brainbench.cli as cli\n"
            "@cli.app.command('explode')\n"
            "def explode() -> None:\n    raise RuntimeError('kaboom')\n"
            "sys.argv = ['brainbench', 'explode']\ncli.main()\n")
    env = {**os.environ, "BRAINBENCH_CRASH_DIR": str(tmp_path)}
    env.pop("BRAINBENCH_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "internal error: RuntimeError: kaboom" in proc.stderr
    [crash] = tmp_path.glob("brainbench-crash-*.txt")
    assert str(crash) in proc.stderr
    assert "Traceback" in crash.read_text() and "kaboom" in crash.read_text()


def test_cleanup_without_an_engine_is_an_error_not_a_traceback() -> None:
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "cleanup"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "no docker engine reachable" in (proc.stdout + proc.stderr).lower()
    assert "Traceback" not in proc.stderr


def test_cleanup_on_a_machine_without_docker_cleans_the_brain_side_and_exits_0(tmp_path: Path) -> None:
    """No engine named and none on the local socket (this machine and CI: their engine is named by
    DOCKER_HOST): the brain side is the whole job, and `--help` says what it removes."""
    env = {k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "BRAINBENCH_DOCKER_HOST")}
    env["BRAINBENCH_SCRATCH_DIR"] = str(tmp_path)  # only this test's scratch is looked at
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "cleanup"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if not Path("/var/run/docker.sock").exists():
        assert "no Docker engine on this machine" in proc.stdout
        assert "containers and networks not looked for" in proc.stdout
    assert "cleanup: " in proc.stdout and "Traceback" not in proc.stderr
    help_text = subprocess.run([sys.executable, "-m", "brainbench.cli", "cleanup", "--help"], capture_output=True,
                               text=True, timeout=60, env={**env, "COLUMNS": "200"}).stdout
    assert "scratch, embedded servers, databases and roles, containers and networks" in help_text
    assert "Without Docker only the brain side is cleaned" in help_text


def test_the_warm_hook_servers_stack_imports_no_pydantic() -> None:
    """The hook server and every stream program start on this path: pydantic was a tenth of it."""
    code = ("import importlib, sys\nimport brainbench.hooks.serve\nfrom brainbench.hooks.ipc import SEAM_MODULES\n"
            "for module in SEAM_MODULES.values():\n    importlib.import_module(module)\n"
            "import brainbench.models.stream_codec\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_a_program_defers_collection_while_it_imports_and_freezes_what_it_imported() -> None:
    code = ("import gc\nfrom brainbench import collector\n"
            "collector.resume()\nprint(gc.isenabled(), gc.get_freeze_count())\n"  # no defer: untouched
            "collector.defer()\nimport brainbench.models.result\nprint(gc.isenabled())\n"
            "collector.resume()\nprint(gc.isenabled(), gc.get_freeze_count() > 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.split() == ["True", "0", "False", "True", "True"], proc.stdout
