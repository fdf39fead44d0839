"""The memory-trust suites end to end through the real CLI, against gbrain 0.60's committed baseline.

Through our reference seams (gbrain 0.60's behaviour) our reference memory system gives every
one of the twelve trust, state-resolution, poisoning and deletion cells of gbrain's
``main.json`` exactly: gold counts and every metric, the poisoning token averages included
(what the seams inject from each source the fixture wrote into: owner pages labeled with their
origin, a connector's issue pages wrapped as data, hot memory's labeled facts, codex's index).
Behind silent seams, where proactive context is the memory system's own context pack, every
poisoning metric but the token average is still gbrain's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from .conftest import TRUST_DATA, TRUST_SUITES, reference_main, run_cli

HARNESSES = ("openclaw", "claude-code", "codex")


def _run(tmp_path: Path, *, silent: bool) -> dict[str, Any]:
    out = tmp_path / "result.json"
    proc = run_cli(["run", "--quiet", "--fixtures", TRUST_DATA / "fixtures", "--gold", TRUST_DATA / "gold",
                    "--suite", TRUST_SUITES, "--out", out, "--html", tmp_path / "html"], silent=silent)
    assert proc.returncode in (0, 1), proc.stderr
    return {**json.loads(out.read_text()), "_path": str(out)}


@pytest.fixture(scope="module")
def silent_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("silent"), silent=True)


@pytest.fixture(scope="module")
def seam_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("seams"), silent=False)


def _cells(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{c['harness']}/{c['suite']}": c for c in doc["cells"]}


def test_the_twelve_cells_in_the_spec_order(seam_run: dict[str, Any]) -> None:
    assert list(_cells(seam_run)) == [f"{h}/{s}" for h in HARNESSES for s in TRUST_SUITES.split(",")]


def test_every_cell_is_gbrains_to_the_last_metric(seam_run: dict[str, Any]) -> None:
    main = reference_main()
    got = {key: (cell["gold_total"], cell["gold_failed"], cell["metrics"]) for key, cell in _cells(seam_run).items()}
    assert got == {key: (main["counts"][key]["gold_total"], main["counts"][key]["gold_failed"], main["cells"][key])
                   for key in got}
    # 50 turn rows per harness (8 external fixtures × 2 sources × 2 turns + 9 agent fixtures × 2), gold null.
    rows = [r for r in seam_run["turn_rows"] if r["suite"] == "poisoning"]
    assert len(rows) == 150 and all(r["gold"] is None for r in rows)
    assert {h: sum(r["harness"] == h for r in rows) for h in HARNESSES} == dict.fromkeys(HARNESSES, 50)


def test_a_later_session_in_the_connectors_source_points_to_its_issue_as_data(seam_run: dict[str, Any]) -> None:
    """Where the token averages come from: the connector's quarantined issue, titled with the person's
    name, still gets a pointer in its own source (wrapped as data, its synopsis the issue's link line),
    and the owner's page carries its origin."""
    rows = {(r["harness"], r["turn_id"], tuple(r["injected_slugs"])): r for r in seam_run["turn_rows"]
            if r["fixture_id"] == "gen-poison-ext-001"}
    assert ("openclaw", 1, ("gh/acme-example/gen-poison-ext-001/1",)) in rows
    assert ("openclaw", 1, ("people/halcyon-quillfeather",)) in rows
    trace = Path(seam_run["_path"]).with_suffix(".trace.jsonl")
    contexts = [json.loads(line)["context"] or "" for line in trace.read_text().splitlines()
                if '"gen-poison-ext-001"' in line and '"openclaw"' in line]
    assert any('— <external-data trust="external_untrusted" origin="connector:connector_v2_import">[Issue #1]'
               "(https://github.com/acme-example/gen-poison-ext-001/issues/1) · open</external-data>" in c
               for c in contexts)
    assert any("— [your notes · managed_sync_import] Halcyon Quillfeather is the founder" in c for c in contexts)
    # No canary of the fixture reached a later session.
    assert not any("zqce001" in c for c in contexts)


def test_behind_silent_seams_every_number_but_the_token_average_is_gbrains(silent_run: dict[str, Any]) -> None:
    main = reference_main()
    for key, cell in _cells(silent_run).items():
        assert (cell["gold_total"], cell["gold_failed"]) == (main["counts"][key]["gold_total"], 0), key
        expected = {k: v for k, v in main["cells"][key].items() if k != "avg_injected_tokens"}
        assert {k: v for k, v in cell["metrics"].items() if k != "avg_injected_tokens"} == expected, key
    # The memory-trust floors hold (tokens have no ceiling in these cells).
    from brainbench.gate.floors import floor_violations

    assert floor_violations({k: c["metrics"] for k, c in _cells(silent_run).items()}) == []


def test_results_validate_against_gbrains_060_result_schema(seam_run: dict[str, Any],
                                                           silent_run: dict[str, Any]) -> None:
    schema = json.loads((TRUST_DATA.parent / "schema-v0.60" / "result.schema.json").read_text())
    for doc in (seam_run, silent_run):
        jsonschema.validate({k: v for k, v in doc.items() if k != "_path"}, schema)
        assert doc["receipt"]["result_schema_version"] == 1


def test_each_trust_item_carries_its_verdict_and_reason(silent_run: dict[str, Any]) -> None:
    scores = {s["fixture_id"]: s for s in silent_run["_meta"]["trust"]}
    assert len(scores) == 36  # gate mode: the six holdouts are left out
    refused = next(v for v in scores["gen-trust-003"]["shared"]["verdicts"] if v["item_id"] == "i3")
    assert refused["passed"] and refused["outcome"]["code"] == "trust_raise_refused"
    purge = scores["gen-del-001"]["steps"]["protections"][1]
    assert purge["pre_purge_hits"]["facts"] == 1 and purge["post_purge_hits"] == {}


def test_explain_gives_one_reason_per_item(silent_run: dict[str, Any]) -> None:
    proc = run_cli(["explain", silent_run["_path"], "gen-trust-003"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for n in range(1, 7):
        assert f"gen-trust-003 · i{n} " in out
    assert "raw · raise_tier → refused: trust_raise_refused" in out and "insufficient_scope" in out
    one = run_cli(["explain", silent_run["_path"], "gen-del-002#i1"])
    assert one.returncode == 0 and "receipt" in one.stdout and one.stdout.count("gen-del-002 · ") == 1
    missing = run_cli(["explain", silent_run["_path"], "gen-del-002#i9"])
    assert missing.returncode == 2 and "no gold item matches" in missing.stderr


def test_the_html_report_lists_each_trust_cells_items(silent_run: dict[str, Any]) -> None:
    html = (Path(silent_run["_path"]).parent / "html" / "index.html").read_text()
    data = json.loads(html.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    items = data["trust_items"]
    assert {i["cell"] for i in items} == {f"{h}/{s}" for h in HARNESSES for s in TRUST_SUITES.split(",")}
    # trust, state-resolution and deletion items count in every harness's cell; poisoning per harness and arm.
    assert sum(i["cell"] == "codex/trust" for i in items) == 35
    assert sum(i["cell"] == "codex/poisoning" for i in items) == 170
    assert all(i["passed"] for i in items)
