"""Runs of the memory-trust suites through the real CLI, on gbrain 0.60's trust corpus (or a slice of it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TRUST_DATA = HERE.parent / "data" / "reference-trust" / "corpus-trust"
TRUST_SUITES = "trust,state-resolution,poisoning,deletion"
SILENT = f"{sys.executable} {HERE / 'silent_hook.py'}"


def reference_main() -> dict[str, Any]:
    return json.loads((TRUST_DATA / "main.json").read_text())  # type: ignore[no-any-return]


def cli_env(silent: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "BRAINBENCH_DATABASE_URL") and not k.startswith("BRAINBENCH_SEAM_COMMAND_")}
    if silent:
        for seam in ("OPENCLAW", "CLAUDE_CODE", "CODEX"):
            env[f"BRAINBENCH_SEAM_COMMAND_{seam}"] = SILENT
    return env


def slice_corpus(root: Path, ids: Sequence[str]) -> tuple[Path, Path]:
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir(parents=True)
    gd.mkdir(parents=True)
    for fid in ids:
        shutil.copy(TRUST_DATA / "fixtures" / f"{fid}.fixture.json", fx)
        shutil.copy(TRUST_DATA / "gold" / f"{fid}.gold.json", gd)
    return fx, gd


def run_cli(args: Sequence[str | Path], *, silent: bool = False, driver: Sequence[str] = (),
            cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``brainbench ARGS`` in a fresh interpreter (``driver``: a test-only entry point around the CLI)."""
    command = [sys.executable, *driver] if driver else [sys.executable, "-m", "brainbench.cli"]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          check=False, env=cli_env(silent), cwd=cwd)
