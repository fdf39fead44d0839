"""Our embedded gate run against gbrain's own BrainBench, paired, on gbrain's corpus.

Usage: .venv/bin/python benchmarks/versus_gbrain.py [--gbrain DIR] [--pairs N]

Runs, N times each and in alternating order (so that a slow spell of the machine falls on both),
gbrain's own ``bun src/cli.ts eval brainbench --harness all --suite all`` in a gbrain checkout
with its ``node_modules`` (default: the one ``scripts/build-gbrain`` stages in
``.images/gbrain-context/gbrain``), and ``brainbench run`` on that checkout's
``evals/brainbench`` corpus with the behaviour of its release.  It reports the median wall time
of each, the ratio of the medians and the median of the pairs' ratios, and whether both runs gave
the same cells (they must: the point is the same benchmark, faster).  gbrain's run in between
outlasts our warm hook server's idle time (10 s), so each of our runs starts that server afresh, as
a single run on a fresh machine does: no warm process of ours is left over from the run before.

Without a checkout, its ``node_modules`` or bun it measures nothing and says why (``unavailable()``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import one_row  # a sibling script, not a package

REPO = Path(__file__).resolve().parents[1]
STAGED = REPO / ".images" / "gbrain-context" / "gbrain"
PAIRS = 5
# What measure() records (results.json adds update_docs' stamp).
FIELDS = ("gbrain_version", "behaviour", "pairs", "ours_s", "theirs_s", "ours_median_s", "theirs_median_s",
          "ratio_of_medians", "median_pair_ratio", "same_cells", "fixtures")


def _bun() -> str | None:
    proc = subprocess.run(["bash", str(REPO / "scripts" / "install-bun"), "--check"], capture_output=True,
                          text=True, check=False)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def unavailable(gbrain: Path = STAGED) -> str | None:
    """Why the pair cannot be measured here, or None."""
    for need, how in ((gbrain / "src" / "cli.ts", "a gbrain checkout (scripts/build-gbrain GBRAIN_SRC stages one)"),
                      (gbrain / "node_modules", "its dependencies (scripts/build-gbrain installs them)"),
                      (gbrain / "evals" / "brainbench" / "fixtures", "its BrainBench corpus")):
        if not need.exists():
            return f"no {need} ({how})"
    if _bun() is None:
        return "no bun (scripts/install-bun)"
    return None


def behaviour_of(gbrain: Path) -> tuple[str, str]:
    """The checkout's version and the behaviour our seams follow for it."""
    version = json.loads((gbrain / "package.json").read_text())["version"]
    return version, ("0.46" if version.startswith("0.46.") else "0.60")


def _cells(doc: dict[str, Any]) -> dict[str, Any]:
    return {f"{c['harness']}/{c['suite']}": (c["gold_total"], c["gold_failed"], c["metrics"]) for c in doc["cells"]}


def _timed(command: list[str], cwd: Path, env: dict[str, str], out: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1) or not out.is_file():  # 1: a gate failure, still a whole run
        raise RuntimeError(f"{' '.join(command[:4])} … exited {proc.returncode}: {proc.stderr[-1500:]}")
    return wall, json.loads(out.read_text())


def measure(gbrain: Path = STAGED, pairs: int = PAIRS) -> dict[str, Any]:
    bun = _bun()
    assert bun is not None
    version, behaviour = behaviour_of(gbrain)
    corpus = gbrain / "evals" / "brainbench"
    ours_s: list[float] = []
    theirs_s: list[float] = []
    same = True
    fixtures = 0
    with tempfile.TemporaryDirectory() as tmp:
        # gbrain's CLI reads its config from HOME; a bench run needs none, and must touch no user's brain.
        theirs_env = {**os.environ, "HOME": tmp}
        ours_env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
        theirs = [bun, "src/cli.ts", "eval", "brainbench", "--harness", "all", "--suite", "all", "--json", "--out",
                  str(Path(tmp) / "theirs.json")]
        ours = [sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures", str(corpus / "fixtures"),
                "--gold", str(corpus / "gold"), "--behaviour", behaviour, "--out", str(Path(tmp) / "ours.json")]
        for i in range(pairs):
            order = ("ours", "theirs") if i % 2 == 0 else ("theirs", "ours")
            docs = {}
            for side in order:
                if side == "ours":
                    wall, docs[side] = _timed(ours, REPO, ours_env, Path(tmp) / "ours.json")
                    ours_s.append(round(wall, 2))
                else:
                    wall, docs[side] = _timed(theirs, gbrain, theirs_env, Path(tmp) / "theirs.json")
                    theirs_s.append(round(wall, 2))
            same = same and _cells(docs["ours"]) == _cells(docs["theirs"])
            fixtures = len({r["fixture_id"] for r in docs["ours"]["turn_rows"]})
    ours_median, theirs_median = statistics.median(ours_s), statistics.median(theirs_s)
    return {"gbrain_version": version, "behaviour": behaviour, "pairs": pairs, "ours_s": ours_s,
            "theirs_s": theirs_s, "ours_median_s": round(ours_median, 2), "theirs_median_s": round(theirs_median, 2),
            "ratio_of_medians": round(ours_median / theirs_median, 3),
            "median_pair_ratio": round(statistics.median(o / t for o, t in zip(ours_s, theirs_s, strict=True)), 3),
            "same_cells": same, "fixtures": fixtures}


def line(row: dict[str, Any]) -> str:
    """The README's result cell."""
    same = "the same cells" if row["same_cells"] else "**cells differ**"
    return (f"**{row['ours_median_s']:.2f} s** median wall against gbrain's own {row['theirs_median_s']:.1f} s "
            f"(gbrain {row['gbrain_version']}, {row['fixtures']} replayed fixtures, behaviour {row['behaviour']}; "
            f"{row['pairs']} pairs, alternating): ratio of medians **{row['ratio_of_medians']:.3f}**, median of the "
            f"pairs' ratios {row['median_pair_ratio']:.3f}; {same}; ours {', '.join(f'{s:.2f}' for s in row['ours_s'])}"
            f" s, theirs {', '.join(f'{s:.1f}' for s in row['theirs_s'])} s")


def main(argv: list[str]) -> int:
    gbrain, pairs = STAGED, PAIRS
    while argv:
        if argv[0] == "--gbrain" and len(argv) > 1:
            gbrain, argv = Path(argv[1]).resolve(), argv[2:]
        elif argv[0] == "--pairs" and len(argv) > 1:
            pairs, argv = int(argv[1]), argv[2:]
        else:
            print(__doc__)
            return 2
    return one_row.report("versus_gbrain", unavailable(gbrain), lambda: measure(gbrain, pairs), line)

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
