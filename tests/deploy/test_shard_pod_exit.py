"""The shard pod's command as the manifests spell it: the pod exits with the runner's code.

The wrapper used to end in ``exit 0`` whenever a result file existed, which hid every shard
run that ended in an internal error (the default ledger lay on the read-only corpus) and every
shard with faults.  Each manifest's shell script runs here under ``/bin/sh`` with a stand-in
``brainbench`` first on PATH that writes the shard's result, records its arguments and exits
with a chosen code; the results volume and the secrets mount become temporary directories
(the only change made to the script).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

MANIFESTS = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
STAND_IN = """#!/bin/sh
printf '%s\\n' "$@" > "$ARGS_FILE"
out=""; prev=""
for a in "$@"; do [ "$prev" = "--out" ] && out="$a"; prev="$a"; done
echo '{}' > "$out"
exit "$EXIT_WITH"
"""


def _script(manifest: str) -> tuple[str, dict[str, str]]:
    pod = yaml.safe_load((MANIFESTS / manifest).read_text())["spec"]["template"]["spec"]
    main = next(c for c in pod["containers"] if c["name"] == "brainbench")
    assert main["command"] == ["/bin/sh", "-c"]
    return main["args"][0], {e["name"]: e["value"] for e in main["env"]}


@pytest.mark.parametrize("manifest", ["shard-job.yaml", "shard-job-images.yaml"])
@pytest.mark.parametrize("code", [0, 1, 2, 70])
def test_the_pod_exits_with_the_runners_code_and_keeps_its_ledger_off_the_corpus(
        manifest: str, code: int, tmp_path: Path) -> None:
    script, env = _script(manifest)
    results, secrets, bin_dir = tmp_path / "results", tmp_path / "secrets", tmp_path / "bin"
    for d in (results, secrets, bin_dir):
        d.mkdir()
    (secrets / "postgres-password").write_text("pw")
    (bin_dir / "brainbench").write_text(STAND_IN)
    (bin_dir / "brainbench").chmod(0o755)
    script = script.replace("/results/", f"{results}/").replace("/run/brainbench/secrets/", f"{secrets}/")
    args_file = tmp_path / "args"
    proc = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, **env, "JOB_COMPLETION_INDEX": "0", "EXIT_WITH": str(code),
                               "ARGS_FILE": str(args_file), "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert proc.returncode == code, proc.stdout + proc.stderr
    args = args_file.read_text().splitlines()
    shards = env["SHARDS"]
    assert (results / env["RUN_NAME"] / f"shard-1-of-{shards}.json").is_file()
    ledger = args[args.index("--ledger") + 1]
    assert ledger == f"{results}/{env['RUN_NAME']}/ledger-shard-1-of-{shards}.jsonl", args
