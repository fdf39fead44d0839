"""Turn rows and per-fixture scores into (harness × suite) cells (spec §5.7, §8)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from brainbench.jsjson import round4
from brainbench.metrics.retrieval import avg_injected_tokens, isolation_violations, score_know_to_ask, score_push
from brainbench.metrics.trust_cells import trust_cell_parts
from brainbench.models.config import RunConfig
from brainbench.models.result import Cell, TurnRow


def _first_seen(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _cell(harness: str, suite: str, seam: str, total: int, failed: int, metrics: dict[str, float],
          fixtures: list[str]) -> Cell:
    return Cell.model_validate({
        "suite": suite, "harness": harness, "seam": seam, "gold_total": total, "gold_failed": failed,
        "metrics": {k: round4(v) if isinstance(v, float) else v for k, v in metrics.items()},
        "fixtures": fixtures,
    })


def write_back_metrics(scores: Sequence[Any], llm: bool) -> tuple[int, int, dict[str, float]]:
    total = sum(s.gold_total for s in scores)
    failed = sum(s.gold_failed for s in scores)
    survived = sum(s.survived for s in scores)
    prov = sum(s.provenance_ok for s in scores)
    metrics = {
        "write_back_fidelity": survived / total if total else 1.0,
        "provenance_accuracy": prov / survived if survived else 1.0,
    }
    if llm:
        stored = sum(s.stored_rows for s in scores)
        metrics["extraction_recall"] = survived / total if total else 1.0
        metrics["extraction_precision"] = sum(s.matched_any_gold for s in scores) / stored if stored else 1.0
    return total, failed, metrics


def assemble_cells(config: RunConfig, kinds: Mapping[str, str], rows: Sequence[TurnRow],
                   outcomes: Sequence[Any], image_seeded: Mapping[str, Collection[str]] | None = None) -> list[Cell]:
    """Cells per harness in ``kinds`` order (harness → seam kind: contract or production).

    ``image_seeded``: harness → the suites its image has no path to (seed contract v1: write-back,
    continuity and the memory-trust suites; v2: those it declares no command for).  Those get no
    cell (the run marks them not applicable); the others are graded from the image's own store.
    """
    no_path = image_seeded or {}
    cells: list[Cell] = []
    wb = [o.write_back for o in outcomes if o.write_back is not None]
    for harness, kind in kinds.items():
        for suite in config.suites:
            if suite in ("know-to-ask", "push"):
                mine = [r for r in rows if r.harness == harness and r.suite == suite]
                if not mine:
                    continue
                score = score_know_to_ask(mine) if suite == "know-to-ask" else score_push(mine)
                metrics = {**score.metrics, "source_isolation_violations": isolation_violations(mine),
                           "avg_injected_tokens": avg_injected_tokens(mine)}
                cells.append(_cell(harness, suite, kind, score.gold_total, score.gold_failed, metrics,
                                   _first_seen(r.fixture_id for r in mine)))
            elif suite in ("trust", "state-resolution", "poisoning", "deletion"):
                if suite in no_path.get(harness, ()):
                    continue  # its own brain never saw the steps: not applicable
                parts = trust_cell_parts(harness, suite, outcomes, rows)
                if parts is not None:
                    cells.append(_cell(harness, suite, kind, *parts))
            elif suite == "write-back":
                if harness in no_path and suite in no_path[harness]:
                    continue
                # An image-seeded seam is graded on its own store; every other seam on ours.
                mine_wb = ([o.image_write_back[harness] for o in outcomes if harness in o.image_write_back]
                           if harness in no_path else wb)
                if not mine_wb:
                    continue
                total, failed, metrics = write_back_metrics(mine_wb, config.llm)
                cells.append(_cell(harness, suite, kind, total, failed, metrics,
                                   _first_seen(s.fixture_id for s in mine_wb)))
            else:
                scores = [o.continuity[harness] for o in outcomes if harness in o.continuity]
                if not scores:
                    continue
                mine = [r for r in rows if r.harness == harness and r.suite == "continuity"]
                total = sum(s.gold_total for s in scores)
                failed = sum(s.gold_failed for s in scores)
                metrics = {"continuity_rate": (total - failed) / total if total else 1.0,
                           "source_isolation_violations": isolation_violations(mine),
                           "avg_injected_tokens": avg_injected_tokens(mine)}
                cells.append(_cell(harness, suite, kind, total, failed, metrics,
                                   _first_seen(r.fixture_id for r in mine)))
    return cells


def metric_names(cells: Iterable[Cell]) -> set[str]:
    return {name for c in cells for name in c.metrics}
