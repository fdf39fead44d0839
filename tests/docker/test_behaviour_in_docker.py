"""``--behaviour`` reaches seams in containers exactly as local ones: through each call's env.

gbrain's 7 reference fixtures, run with each release's behaviour by the local and the Docker
executor: the graded output is the same per release, and differs between releases (0.60's
injected text carries trust labels, 0.46's none).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_runs import cli_run, graded, missing_images  # type: ignore[import-not-found]

SEAM_IMAGES = ("brainbench/openclaw:latest", "brainbench/claude-code:latest", "brainbench/codex:latest")
LABEL = "[unverified origin · legacy]"


def _contexts(out: Path) -> list[str]:
    import json

    rows = [json.loads(line) for line in out.with_name(out.stem + ".trace.jsonl").read_text().splitlines()]
    return [r["context"] for r in rows if r["context"]]


@pytest.mark.parametrize("behaviour", ["0.60", "0.46"])
def test_each_release_grades_the_same_in_containers(reference: Path, tmp_path: Path, behaviour: str) -> None:
    missing = missing_images(SEAM_IMAGES)
    if missing:
        pytest.skip(f"seam images not built ({', '.join(missing)}): run scripts/build-images --offline")
    corpus = ("--fixtures", str(reference / "corpus" / "fixtures"), "--gold", str(reference / "corpus" / "gold"),
              "--behaviour", behaviour)
    local = cli_run(tmp_path / "local.json", *corpus)
    docker = cli_run(tmp_path / "docker.json", *corpus, "--executor", "docker")
    assert graded(docker) == graded(local)
    assert docker["_meta"]["run"]["behaviour"] == behaviour
    contexts = _contexts(tmp_path / "docker.json")
    assert contexts
    labeled = [c for c in contexts if LABEL in c]
    assert (labeled == contexts) if behaviour == "0.60" else not labeled
