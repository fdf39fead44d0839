"""An image run says what it graded: each seam's image and digest in the scoreboard's footer,
the HTML report's header and ``explain`` — the digest the engine reports for that image."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
IMAGE = "brainbench/codex:latest"


def _bench(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"},
           "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def test_scoreboard_html_and_explain_name_the_image_and_its_digest(docker_client: Any, tmp_path: Path) -> None:
    from docker.errors import ImageNotFound

    try:
        digest = docker_client.images.get(IMAGE).id
    except ImageNotFound:
        pytest.skip(f"{IMAGE} not built: run scripts/build-images --offline")
    out, html = tmp_path / "result.json", tmp_path / "html"
    proc = _bench("run", "--executor", "docker", "--harness", "codex", "--suite", "know-to-ask", "--quiet",
                  "--format", "markdown", "--out", out, "--html", html)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The image's own id (no registry digest for a local build) is what was recorded and is shown.
    [seam] = json.loads(out.read_text())["_meta"]["run"]["seams"]
    assert (seam["image"], seam["image_digest"]) == (IMAGE, digest)
    footer = proc.stdout.split("_Images graded", 1)[1]
    assert f"- codex (contract, docker, stream): `{IMAGE}` `{digest}`" in footer
    page = (html / "index.html").read_text()
    header = page.split("<header>", 1)[1].split("</header>", 1)[0]
    assert f"codex (contract, docker, stream): {IMAGE} {digest}" in header
    assert "Gate: not gated" in header
    explain = _bench("explain", out, "gen-kta-pos-001#1")
    assert explain.returncode == 0, explain.stderr
    assert explain.stdout.splitlines()[0] == f"graded: codex (contract, docker, stream): {IMAGE} {digest}"


def test_a_local_run_names_no_image(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = _bench("run", "--harness", "codex", "--suite", "know-to-ask", "--quiet", "--format", "markdown",
                  "--out", out, "--html", tmp_path / "html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Images graded" not in proc.stdout
    header = (tmp_path / "html" / "index.html").read_text().split("<header>", 1)[1].split("</header>", 1)[0]
    assert "Seams: local processes, no images" in header
