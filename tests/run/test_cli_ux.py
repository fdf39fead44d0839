"""CLI ergonomics through the real command: env vars, help, completion, one-line user errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = [sys.executable, "-m", "brainbench.cli"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k not in ("COLUMNS", "CI")}
    return {**env, **extra}


def bench(*args: str | Path, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BENCH, *map(str, args)], capture_output=True, text=True, timeout=300, check=False,
                          cwd=cwd, env=_env(**env))


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "bug in BrainBench" not in proc.stderr and "Traceback" not in proc.stderr
    return lines[0]


def test_piped_help_is_full_width_and_shows_every_env_var() -> None:
    from brainbench.cli_options import run_parameters
    from brainbench.models.config import RunConfig, cli_spec

    proc = bench("run", "--help")
    assert proc.returncode == 0
    assert "--committed-baseline" in proc.stdout and "…" not in proc.stdout
    assert "--update-baseline" in proc.stdout and "--justification" in proc.stdout
    shown = 0
    for param in run_parameters():
        spec = cli_spec(param.name, RunConfig.model_fields[param.name])
        assert spec is not None
        if spec["hidden"]:
            continue
        assert spec["flag"] in proc.stdout
        if spec["envvar"]:
            assert spec["envvar"] in proc.stdout, spec["envvar"]
            shown += 1
    assert shown >= 25


def test_env_vars_land_in_the_model_and_flags_win() -> None:
    proc = bench("run", BRAINBENCH_HARNESS="nonesuch")
    assert _one_line_error(proc) == ("brainbench run: --harness: unknown value(s) nonesuch; "
                                     "choose from openclaw, claude-code, codex or all")
    assert bench("run", "--jobs", "0", BRAINBENCH_JOBS="2").stderr.startswith("brainbench run: --jobs:")
    # The flag wins over the variable: a valid --harness overrides the bad env value (then --jobs 0 stops it).
    proc = bench("run", "--harness", "codex", "--jobs", "0", BRAINBENCH_HARNESS="nonesuch")
    assert "--jobs" in _one_line_error(proc)


def test_shell_completion_offers_run_flags() -> None:
    proc = subprocess.run([*BENCH], capture_output=True, text=True, timeout=60, check=False,
                          env=_env(_BRAINBENCH_COMPLETE="complete_bash", COMP_WORDS="brainbench run --fix",
                                   COMP_CWORD="2"))
    assert "--fixtures" in proc.stdout, (proc.stdout, proc.stderr)


def test_missing_corpus_directory_is_one_line_per_directory(tmp_path: Path) -> None:
    proc = bench("run", "--fixtures", tmp_path / "nope", "--gold", REPO / "gold")
    assert _one_line_error(proc).startswith(f"--fixtures {tmp_path / 'nope'}: no such directory")


def test_missing_review_file_is_a_user_error(tmp_path: Path) -> None:
    proc = bench("corpus", "check-labels", tmp_path / "review.json", "--project", REPO)
    assert str(tmp_path / "review.json") in _one_line_error(proc)


def test_missing_seams_file_is_a_user_error(tmp_path: Path) -> None:
    proc = bench("run", "--seams", tmp_path / "seams.toml")
    assert str(tmp_path / "seams.toml") in _one_line_error(proc)


def test_validate_notices_a_stale_ledger_hash(tmp_path: Path) -> None:
    for name in ("fixtures", "gold"):
        shutil.copytree(REPO / name, tmp_path / name)
    assert bench("validate", cwd=tmp_path).returncode == 0
    ledger = tmp_path / "fixtures" / "_ledger.json"
    doc = json.loads(ledger.read_text())
    ledger.write_text(json.dumps({**doc, "fixtures_hash": "0" * 64}))
    line = _one_line_error(bench("validate", cwd=tmp_path))
    assert re.match(rf"{re.escape(str(ledger))}: \$\.fixtures_hash: records 000000000000… but the corpus hashes", line)


def test_corpus_out_still_accepted_with_a_deprecation_line(tmp_path: Path) -> None:
    proc = bench("corpus", "sample", "--fraction", "0.05", "--out", REPO, "-o", tmp_path / "s.json")
    assert proc.returncode == 0, proc.stderr
    assert "--out DIR is deprecated" in proc.stderr and "--project" in proc.stderr
    assert (tmp_path / "s.json").is_file()


def test_version() -> None:
    from brainbench import CONTRACT_VERSION, __version__

    proc = bench("--version")
    assert proc.returncode == 0
    assert re.fullmatch(rf"brainbench {re.escape(__version__)} \(revision [0-9a-f]{{40}}, hook contract "
                        rf"v{CONTRACT_VERSION}\)\n", proc.stdout)


def test_the_options_model_has_a_json_schema_naming_every_flag() -> None:
    from brainbench.models.config import RunConfig

    props = RunConfig.model_json_schema()["properties"]
    assert props["timeout_s"]["cli"]["flag"] == "--timeout"
    assert props["fixtures_dir"]["cli"]["flag"] == "--fixtures"
    assert "cli" not in props["seams"] and "cli" not in props["cmd_args"]  # model fields that are not flags
