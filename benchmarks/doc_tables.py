"""The numbers tables of README.md and docs/{TESTING,CONTAINERS,REPORT,SCALING}.md, from benchmarks/results.json.

The benchmark scripts write results.json; this module turns it into the tables
between the ``<!-- BEGIN GENERATED … -->`` / ``<!-- END GENERATED … -->`` markers.
A test renders the committed results.json with this code and compares it with the
committed docs, so a table edited by hand, or one in an older format, fails CI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gbrain_image  # sibling scripts, not a package
import versus_gbrain

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results.json"
README = REPO / "README.md"
TESTING = REPO / "docs" / "TESTING.md"
CONTAINERS = REPO / "docs" / "CONTAINERS.md"
REPORT = REPO / "docs" / "REPORT.md"
SCALING = REPO / "docs" / "SCALING.md"
MUTATION = REPO / "docs" / "MUTATION.md"
# Why each surviving mutant is harmless ("module:line: change" → reason), kept by hand next to the results.
MUTATION_REASONS = REPO / "benchmarks" / "mutation_reasons.json"
FORMAT = 1

# Each full gate run row: results key, what it is, the command that measures it alone.
GATE_ROWS: tuple[tuple[str, str, str], ...] = (
    ("gate/local/stream", "full gate run, embedded default (local, stream)", "benchmarks/gate_run.py"),
    ("gate/local/exec", "full gate run, local exec mode (a fresh process per hook call)",
     "benchmarks/gate_run.py --mode exec"),
    ("gate/docker/stream", "full gate run, Docker executor, stream", "benchmarks/gate_run.py --executor docker"),
    ("gate/docker/exec", "full gate run, Docker executor, exec mode",
     "benchmarks/gate_run.py --executor docker --mode exec"),
    ("gate/local/stream/scale3", "3× generated corpus, embedded default (local, stream)",
     "benchmarks/gate_run.py --scale 3"),
)
COLD_ROWS: tuple[tuple[str, str], ...] = (
    ("python", "`python -c pass`: interpreter start, the floor of any Python hook"),
    ("warm", "contract adapter cold start, default (thin client + warm hook server)"),
    ("in-process", "contract adapter cold start, in-process (`BRAINBENCH_HOOK_SERVE=0`)"),
)
SEAM_ORDER = ("openclaw", "claude-code", "codex")
# "readme-suite" keeps its name: the suite's numbers moved from the README to docs/TESTING.md.
BLOCKS = {README: ("readme-benchmarks", "readme-mutation"), TESTING: ("readme-suite",),
          CONTAINERS: ("containers-numbers",), REPORT: ("report-trace-overhead",), SCALING: ("scaling-numbers",),
          MUTATION: ("mutation-survivors",)}


def _begin(name: str) -> str:
    return f"<!-- BEGIN GENERATED {name}: benchmarks/update_docs.py writes this, do not edit -->"


def _end(name: str) -> str:
    return f"<!-- END GENERATED {name} -->"


def load() -> dict[str, Any]:
    doc = json.loads(RESULTS.read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{RESULTS}: format {doc.get('format')!r}, this code writes {FORMAT}")
    return doc


def save(doc: dict[str, Any]) -> None:
    RESULTS.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _when(row: dict[str, Any]) -> str:
    return f"{row['measured_on']}, load {row['load_1m']:.1f} on {row['cores']} cores"


def _when_any(row: dict[str, Any]) -> str:
    """When a row was measured, or when it was found unmeasurable (no load or cores then)."""
    return _when(row) if "load_1m" in row else row["measured_on"]


def _gate_result(row: dict[str, Any]) -> str:
    same = {True: "; cells and turn rows identical to the embedded stream run",
            False: "; **cells or turn rows differ from the embedded stream run**", None: ""}[row.get("identical")]
    return (f"**{row['wall_s']:.1f} s** wall, {row['turns_per_s']:.1f} turns/s, per-hook p50 {row['p50_ms']:.1f} ms / "
            f"p95 {row['p95_ms']:.1f} ms, peak RSS {row['peak_rss_mb']} MB{same}")


def _skipped(row: dict[str, Any]) -> str:
    return f"not measured: {row['skipped']}"


# Rows that need what a machine may lack (gbrain's image, a gbrain checkout): key, what, command, renderer.
OPTIONAL_ROWS: tuple[tuple[str, str, str, Callable[[dict[str, Any]], str]], ...] = (
    ("versus-gbrain", "full gate run, embedded default, on gbrain's own corpus, paired against gbrain's own "
     "`gbrain eval brainbench`", "benchmarks/versus_gbrain.py", versus_gbrain.line),
    ("gbrain-image", "gbrain's real Claude Code hook image on the committed corpus (claude-code seam, Docker, exec; "
     "`brainbench/gbrain:latest`)", "benchmarks/gbrain_image.py", gbrain_image.line),
    ("gbrain-image-scale", "the same image on a seed-42 generated corpus at 1× and 10× the default counts: does its "
     "run grow linearly?", "benchmarks/gbrain_image.py --scale 10", gbrain_image.scaling_line),
)


def render_readme(doc: dict[str, Any]) -> str:
    rows = doc["rows"]
    lines = ["| what | command (`.venv/bin/python …`) | result | measured |", "|---|---|---|---|"]
    for key, what, command in GATE_ROWS:
        row = rows.get(key)
        if row is None:
            continue
        result = _skipped(row) if "skipped" in row else _gate_result(row)
        if "calls" in row and key == "gate/local/stream/scale3":
            what = f"{what}: {row['fixtures']} fixtures, {row['calls']} calls"
        lines.append(f"| {what} | `{command}` | {result} | {_when(row)} |")
    for key, what, command, line in OPTIONAL_ROWS:
        row = rows.get(key)
        if row is not None:
            result = _skipped(row) if "skipped" in row else line(row)
            lines.append(f"| {what} | `{command}` | {result} | {_when_any(row)} |")
    cold = rows.get("cold")
    if cold is not None:
        for key, what in COLD_ROWS:
            got = cold[key]
            extra = ""
            if "seam_p50_ms" in got:
                per_seam = got["seam_p50_ms"]
                seams = ", ".join(f"{seam} {per_seam[seam]:.0f}" for seam in SEAM_ORDER if seam in per_seam)
                extra = f" (p50 per seam: {seams} ms; the client's own imports {got['imports_ms']:.0f} ms)"
            lines.append(f"| {what} | `benchmarks/cold_start.py` | p50 **{got['p50_ms']:.0f} ms** / "
                         f"p95 {got['p95_ms']:.0f} ms per call over {got['calls']} calls{extra} | {_when(cold)} |")
    stream = rows.get("stream-overhead")
    if stream is not None:
        got = "; ".join(f"{seam} p50 {v['p50_ms']:.2f} ms / p95 {v['p95_ms']:.2f} ms"
                        for seam, v in sorted(stream["seams"].items()))
        lines.append(f"| stream-mode round trip per hook call, excluding SQL | `benchmarks/stream_overhead.py` | "
                     f"{got} | {_when(stream)} |")
    overhead = rows.get("exec-overhead")
    if overhead is not None:
        got = "; ".join(f"{variant} call server p50 **{v['p50_ms']:.2f} ms** / p95 {v['p95_ms']:.2f} ms"
                        for variant, v in sorted(overhead["variants"].items()))
        lines.append(f"| Docker exec-mode call with a do-nothing hook (`/bin/true`): the runner's overhead per "
                     f"call, upper bound | `benchmarks/exec_overhead.py` | {got} | {_when(overhead)} |")
    return "\n".join(lines)


def render_containers(doc: dict[str, Any]) -> str:
    rows = doc["rows"]
    lines = ["| what | wall | per-hook latency (`latency_ms`) | measured |", "|---|---|---|---|"]
    for key, what, _ in GATE_ROWS:
        row = rows.get(key)
        if row is None or key.endswith("scale3"):
            continue
        if "skipped" in row:
            lines.append(f"| {what} | {_skipped(row)} | — | {row['measured_on']} |")
            continue
        same = "" if row.get("identical") is not False else " (**results differ**)"
        lines.append(f"| {what} | {row['wall_s']:.1f} s{same} | p50 {row['p50_ms']:.1f} ms, "
                     f"p95 {row['p95_ms']:.1f} ms | {_when(row)} |")
    return "\n".join(lines)


def render_report(doc: dict[str, Any]) -> str:
    import trace_overhead  # a sibling script; it imports brainbench only to measure

    row = doc["rows"].get("trace-overhead")
    if row is None:
        return "Not measured yet: run `.venv/bin/python benchmarks/update_docs.py --only trace`."
    return "\n".join([*trace_overhead.table(row), "", f"Measured {_when(row)}."])


def render_scaling(doc: dict[str, Any]) -> str:
    import scale_run  # a sibling script; it imports brainbench only to measure

    row = doc["rows"].get("scaling")
    if row is None:
        return "Not measured yet: run `.venv/bin/python benchmarks/update_docs.py --only scaling`."
    loads = ", ".join(f"{r['load_1m_before']:.1f}" for r in row["runs"])
    return "\n".join([*scale_run.table(row), "", scale_run.verdict(row), "",
                      f"Measured {_when(row)} (1-minute load before each run: {loads})."])


def render_suite(doc: dict[str, Any]) -> str:
    import suite_time  # a sibling script

    rows = doc["rows"]
    time, profile = rows.get("suite"), rows.get("suite-profile")
    lines = []
    if time is None:
        lines.append("Suite time not measured yet: run `.venv/bin/python benchmarks/update_docs.py --only suite`.")
    else:
        lines.append(f"{suite_time.line(time)}, measured by `benchmarks/update_docs.py --only suite` (runs "
                     f"`scripts/test -q` as CI does) on {_when(time)}.")
    if profile is not None:
        lines += ["", f"Where that time goes: the suite is CPU-bound here, so `benchmarks/update_docs.py --only "
                      f"suite-profile` runs the parallel pass's {profile['tests']:,} tests one at a time and charges "
                      f"each the machine's busy CPU while it ran (the processes it starts included): "
                      f"**{profile['cpu_s']:.0f} CPU-s** in all ({_when(profile)}). The costliest modules:", "",
                  "| module | CPU-s | wall-s | tests |", "|---|---|---|---|"]
        lines += [f"| `{name}` | {cpu:.1f} | {wall:.1f} | {n} |" for name, cpu, wall, n in profile["modules"]]
    return "\n".join(lines)


def _reasons() -> dict[str, str]:
    return json.loads(MUTATION_REASONS.read_text(encoding="utf-8")) if MUTATION_REASONS.exists() else {}


def render_mutation(doc: dict[str, Any]) -> str:
    row = doc["rows"].get("mutation")
    if row is None:
        return "Mutation score not measured yet: run `.venv/bin/python benchmarks/mutation.py`."
    reasons = _reasons()
    lines = ["| module (`runner/brainbench/…`) | mutants | killed | survived (explained) | score |",
             "|---|---|---|---|---|"]
    total = killed = 0
    for module, m in sorted(row["modules"].items()):  # results.json keeps keys sorted
        explained = sum(1 for key in m["survived"] if key in reasons)
        scope = f" ({', '.join(m['functions'])})" if m["functions"] else ""
        lines.append(f"| `{module}`{scope} | {m['mutants']} | {m['killed']} | {len(m['survived'])} ({explained}) | "
                     f"{m['killed'] / m['mutants']:.0%} |" if m["mutants"] else f"| `{module}`{scope} | 0 | | | |")
        total, killed = total + m["mutants"], killed + m["killed"]
    lines += ["", f"**{killed} of {total} mutants killed** ({killed / total:.0%}) by `benchmarks/mutation.py` on "
                  f"{_when(row)}; every survivor and why it is harmless: [docs/MUTATION.md](docs/MUTATION.md)."]
    return "\n".join(lines)


def render_mutation_survivors(doc: dict[str, Any]) -> str:
    row = doc["rows"].get("mutation")
    if row is None:
        return "Not measured yet."
    reasons = _reasons()
    lines = []
    for module, m in sorted(row["modules"].items()):  # results.json keeps keys sorted
        if not m["survived"]:
            continue
        lines += ["", f"`{module}` — tests: {', '.join(f'`{t}`' for t in m['tests'])}", ""]
        lines += [f"- `{key.split(': ', 1)[0]}` {key.split(': ', 1)[1]}: "
                  f"{reasons.get(key, '**not explained: kill it with a test or say why it is equivalent**')}"
                  for key in m["survived"]]
    return "\n".join(lines[1:]) if lines else "No mutant survived."


RENDERERS = {"readme-suite": render_suite, "readme-benchmarks": render_readme,
             "containers-numbers": render_containers,
             "report-trace-overhead": render_report, "scaling-numbers": render_scaling,
             "readme-mutation": render_mutation, "mutation-survivors": render_mutation_survivors}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(_begin(name)) + r"\n(.*?)\n?" + re.escape(_end(name)), re.S)


def committed_block(text: str, name: str) -> str | None:
    match = _pattern(name).search(text)
    return match.group(1) if match else None


def rewrite(text: str, name: str, body: str) -> str:
    if committed_block(text, name) is None:
        raise ValueError(f"markers for {name!r} not found")
    return _pattern(name).sub(lambda _: f"{_begin(name)}\n{body}\n{_end(name)}", text, count=1)


def write_docs(doc: dict[str, Any]) -> list[Path]:
    changed = []
    for path, names in BLOCKS.items():
        text = path.read_text(encoding="utf-8")
        new = text
        for name in names:
            new = rewrite(new, name, RENDERERS[name](doc))
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def stale_blocks(doc: dict[str, Any]) -> list[str]:
    """Blocks whose committed text is not what the current code renders from results.json."""
    stale = []
    for path, names in BLOCKS.items():
        text = path.read_text(encoding="utf-8")
        for name in names:
            if committed_block(text, name) != RENDERERS[name](doc):
                stale.append(f"{path.relative_to(REPO)}: {name}")
    return stale
