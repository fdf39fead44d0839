"""How a run is configured: the one options model from the command line to the executors.

Every knob of ``brainbench run`` is a field of :class:`RunConfig`, declared once with
:func:`option`: its help text, its flag (default ``--<field-name>``) and its
environment variable (``BRAINBENCH_<FLAG>``, e.g. ``BRAINBENCH_FIXTURES``) live on the field, and the CLI
command is generated from the model (``brainbench.cli_options``).  Flags, env vars
and the ``--seams`` file all land here, once; the orchestrator and executors read
the validated model and nothing else.

Adding an option is one field: ``keep: bool = option(False, "Keep the run directory.")``.
"""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from brainbench.models.behaviour import NEWEST, Behaviour
from brainbench.models.corpus import ALL_SUITES, Suite
from brainbench.models.result import HARNESSES, MAX_FRESH_SEED, Harness
from brainbench.models.sandbox import ResourceLimits, check_size

DEFAULT_TIMEOUT_S = 30.0
LEDGER_RELPATH = Path(".brainbench") / "brainbench-ledger.jsonl"
TRACES_RELPATH = Path(".brainbench") / "traces"
BASELINE_RELPATH = Path("baselines") / "main.json"
ENV_PREFIX = "BRAINBENCH_"


def option(default: Any = None, help: str = "", *, flag: str | None = None, hidden: bool = False,
           cli_type: Literal["str", "path"] | None = None, env: bool = True, metavar: str | None = None,
           **field_kwargs: Any) -> Any:
    """A :class:`RunConfig` field that is also a ``brainbench run`` option.

    ``flag`` defaults to ``--<field-name-with-dashes>``; the env var is ``BRAINBENCH_<FLAG>``
    (``--database-url``: ``BRAINBENCH_DATABASE_URL``) unless ``env=False``; ``cli_type`` is
    what the command line parses when it differs from the field's type (``--harness a,b``
    is a string that the model splits into a list).
    """
    cli = {"flag": flag, "hidden": hidden, "cli_type": cli_type, "env": env, "metavar": metavar}
    factory = field_kwargs.pop("default_factory", None)
    if factory is not None:
        return Field(default_factory=factory, description=help, json_schema_extra={"cli": cli}, **field_kwargs)
    return Field(default, description=help, json_schema_extra={"cli": cli}, **field_kwargs)


def cli_spec(name: str, info: Any) -> dict[str, Any] | None:
    """The CLI metadata of one field (None for fields that are not options)."""
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    cli = extra.get("cli")
    if not isinstance(cli, dict):
        return None
    flag = cli["flag"] or "--" + name.replace("_", "-")
    return {**cli, "flag": flag, "envvar": ENV_PREFIX + flag[2:].replace("-", "_").upper() if cli["env"] else None}


class SeamOverride(BaseModel):
    """Replace what runs behind a seam: a production image or another command."""

    model_config = ConfigDict(extra="forbid")

    image: str | None = None
    command: list[str] | None = None
    mode: Literal["exec", "stream"] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0)
    kind: Literal["production", "contract"] | None = None


class OptionsError(ValueError):
    """A user error in the options: one line, naming the flag or file and field."""


def _csv(value: object, allowed: tuple[str, ...], flag: str) -> object:
    if not isinstance(value, str):
        return value
    if value.strip() == "all":
        return list(allowed)
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in allowed]
    if unknown or not items:
        raise OptionsError(f"{flag}: unknown value(s) {', '.join(unknown) or '(none)'}; "
                           f"choose from {', '.join(allowed)} or all")
    return items


def _seams_from(seams_file: Path | None, images: list[str]) -> dict[str, dict[str, object]]:
    """The ``--seams`` file, ``--image SEAM=IMAGE`` and ``BRAINBENCH_SEAM_COMMAND_<SEAM>``, merged."""
    raw: dict[str, dict[str, object]] = {}
    if seams_file is not None:
        try:
            doc = tomllib.loads(Path(seams_file).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise OptionsError(f"{seams_file}: cannot read seams config: {exc}") from exc
        for name, body in (doc.get("seams") or doc).items():
            if name not in HARNESSES or not isinstance(body, dict):
                raise OptionsError(f"{seams_file}: [seams.{name}]: unknown seam (choose from {', '.join(HARNESSES)})")
            raw[name] = dict(body)
    for item in images:
        name, sep, image = item.partition("=")
        if not sep or name not in HARNESSES or not image:
            raise OptionsError(f"--image {item!r}: expected SEAM=IMAGE with SEAM one of {', '.join(HARNESSES)}")
        raw.setdefault(name, {})["image"] = image
    for name in HARNESSES:
        # Swap the program behind a seam without a config file (tests put a deliberately
        # worse or broken hook behind one seam this way).
        command = os.environ.get(f"{ENV_PREFIX}SEAM_COMMAND_{name.replace('-', '_').upper()}")
        if command:
            raw.setdefault(name, {}).update({"command": shlex.split(command), "mode": "exec"})
    for name, body in raw.items():
        try:
            SeamOverride.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise OptionsError(f"{seams_file or '--image'}: seams.{name}.{where}: {first['msg']}") from exc
    return raw


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # --- where: the project and its corpus ---------------------------------------------
    project: Path = option(
        default_factory=Path.cwd,
        help="Project directory: default fixtures/, gold/, baselines/ and .brainbench/ live here.")
    fixtures_dir: Path = option(None, "Fixture directory (default: PROJECT/fixtures).", flag="--fixtures",  # type: ignore[arg-type]
                                cli_type="path")
    gold_dir: Path = option(None, "Sealed gold directory (default: PROJECT/gold).", flag="--gold",  # type: ignore[arg-type]
                            cli_type="path")

    # --- what: the slice of the corpus -------------------------------------------------
    harnesses: list[Harness] = option(default_factory=lambda: list(HARNESSES),
                                      help="openclaw,claude-code,codex or all.", flag="--harness", cli_type="str")
    suites: list[Suite] = option(default_factory=lambda: list(ALL_SUITES),
                                 help="know-to-ask,push,write-back,continuity,trust,state-resolution,poisoning,"
                                      "deletion or all (the eight).", flag="--suite", cli_type="str")
    include_holdout: bool = option(False, "Score holdout fixtures (published-run mode).")
    # Empty = the whole corpus.  A partial run is never gated.
    fixture_ids: list[str] = option(default_factory=list, flag="--fixture", metavar="ID",
                                    help="Run only this fixture id (repeatable; globs such as 'kta-00*'). Never gated.")
    fresh_corpus: bool = option(
        False, "Grade on a corpus generated now by our generator instead of fixtures/ and gold/ (every category; a "
               "random 53-bit seed, or `--fresh-corpus SEED`): no image can have seen its gold. Recorded in "
               "_meta.fresh_corpus; against a baseline of another corpus only seed-independent invariants are gated "
               "(docs/SECURITY-BRAIN.md).")
    fresh_corpus_seed: int | None = option(None, hidden=True, env=False, cli_type="str")
    withhold_seed: bool = option(False, "With --fresh-corpus: the result records a commitment to the seed, not the "
                                        "seed; seed and salt go to --seed-file, to publish later (`brainbench corpus "
                                        "verify-seed RESULT SEEDFILE`).")
    seed_file: Path | None = option(None, "Where --withhold-seed writes the seed (mode 0600; default OUT.seed.json "
                                          "beside --out, else PROJECT/.brainbench/fresh-<commitment>.seed.json).")
    llm: bool = option(False, "Model-based write-back extractor (BRAINBENCH_LLM_* env).")
    budget_usd: float = option(5.0, "Spend cap for --llm.", gt=0)
    seed: int = option(42, "Recorded in the receipt.")
    # None: resolved after validation (``_resolve_behaviour``), so downstream always reads a release.
    behaviour: Behaviour | None = option(
        None, "gbrain release our reference seams behave like: 0.60 (trust labels in every injected text, "
              "openclaw's volunteer arm) or 0.46. Default: the one the project's committed baseline records, "
              f"else {NEWEST}. Never gated across.", cli_type="str", metavar="0.60|0.46")

    # --- how: executors and seams ------------------------------------------------------
    # None: chosen at run time from cores, memory and the brain server's connections.
    jobs: int | None = option(None, "Fixtures run concurrently (default: what the cores, memory and the brain "
                                    "server's connections carry).", ge=1)
    executor: Literal["local", "docker", "sidecar"] = option(
        "local", "local, docker, or sidecar (each seam a call server in a container of its own: a pod's "
                 "sidecars; docs/SCALING.md).", cli_type="str")
    seam_endpoints: list[str] = option(default_factory=list, flag="--seam-endpoint", metavar="SEAM=HOST:PORT",
                                       help="--executor sidecar: where SEAM's call server listens (repeatable; "
                                            "the env var takes several, space-separated).")
    seam_tokens: Path | None = option(None, "--executor sidecar: directory with one file per seam (named after "
                                            "it) holding that seam's call server token.", metavar="DIR")
    mode: Literal["exec", "stream"] = option("stream", "Seam invocation: stream (warm) or exec (one process per call).",
                                             cli_type="str")
    timeout_s: float = option(DEFAULT_TIMEOUT_S, "Per-hook timeout in seconds.", flag="--timeout", gt=0)
    database_url: str | None = option(None, "Use this Postgres instead of the embedded one.")
    private_brain_image: str | None = option(
        None, "Postgres image of a private brain server (seed contract \"server\": \"private\"; default "
              "brainbench/postgres-vector:latest).", metavar="IMAGE")
    images: list[str] = option(default_factory=list, flag="--image", metavar="SEAM=IMAGE",
                               help="SEAM=IMAGE: run a production image behind a seam (repeatable; the env var "
                                    "takes several, space-separated).")
    seams_file: Path | None = option(None, "seams.toml: per-seam image/command/mode/env/timeout.", flag="--seams")
    seams: dict[str, SeamOverride] = Field(default_factory=dict)

    # --- sandbox: what each seam container may use (models/sandbox.py; Docker seams) ---
    memory: str = option("512m", "Memory per seam container, no swap on top (Docker syntax: 512m, 2g).")
    cpus: float | None = option(None, "CPUs per seam container (0: no quota; default: the cores shared among the "
                                      "run's seams in containers, at least 1 each).", ge=0)
    pids_limit: int = option(256, "Processes per seam container (a fork bomb stops here).", ge=1)
    call_grace_s: float = option(5.0, "Seconds past a hook's timeout before the runner kills a wedged call "
                                      "from outside.", flag="--call-grace", ge=0)
    docker_host: str | None = option(None, "Docker engine endpoint (default: DOCKER_HOST, else the local socket).")
    brain_container: str | None = option(None, "TCP --database-url with --executor docker: the Postgres container "
                                               "to attach to the run's internal network (default: the container "
                                               "whose compose service or name is the URL's host).")
    container_db_host: str | None = option(None, "TCP --database-url with --executor docker: host[:port] seam "
                                                 "containers use for the brain (default: the network alias).")

    # --- outputs -----------------------------------------------------------------------
    out: Path | None = option(None, "Write the pretty result JSON to this file (atomically).")
    json_out: bool = option(False, "Result JSON on stdout (one line).", flag="--json")
    trace: Path | None = option(None, "Write the per-turn trace here (default: beside --out; with --json, in "
                                      "PROJECT/.brainbench/traces/, where the newest 10 are kept).")
    fmt: Literal["auto", "markdown", "table"] = option("auto", "Scoreboard: auto, markdown or table.",
                                                       flag="--format", cli_type="str")
    ledger: Path | None = option(None, "Append a run line here (default: PROJECT/.brainbench/brainbench-ledger.jsonl).")
    resume: Path | None = option(None, "Continue an interrupted run from its --out file.")
    quiet: bool = option(False, "No progress bar.")
    shard: str | None = option(None, "I/N: run only the I-th of N slices; combine with `brainbench merge`.",
                               metavar="I/N")
    keep: bool = option(False, "Keep the run's work root (transcripts, payloads); says where.")
    html: Path | None = option(None, "Also write the HTML report into this directory.")

    # --- gate --------------------------------------------------------------------------
    compare: Path | None = option(None, "Gate against this baseline (main's). `--compare BASE CURRENT` compares "
                                        "two files without a run.")
    compare_current: Path | None = option(None, hidden=True, env=False)
    committed_baseline: Path | None = option(
        None, "Bless/hardening target (default: PROJECT/baselines/main.json when the corpus is in PROJECT and "
              "that file exists).")
    update_baseline: bool = option(False, "Write the run's baseline (`--update-baseline [FILE]`, default "
                                          "PROJECT/baselines/main.json); an adverse move needs --justification.")
    update_baseline_to: Path | None = option(None, hidden=True, env=False)
    justification: str | None = option(None, "Reason stored with --update-baseline.")
    allow_regression: str | None = option(None, "Local escape hatch; refused under CI.")

    # The argv as given, recorded in the receipt (not an option).
    cmd_args: list[str] = Field(default_factory=list)

    @field_validator("harnesses", mode="before")
    @classmethod
    def _split_harnesses(cls, value: object) -> object:
        return _csv(value, get_args(Harness), "--harness")

    @field_validator("fixture_ids")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    @field_validator("seam_endpoints")
    @classmethod
    def _endpoints(cls, value: list[str]) -> list[str]:
        for item in value:
            seam, sep, address = item.partition("=")
            host, colon, port = address.rpartition(":")
            if not sep or seam not in HARNESSES or not colon or not host or not port.isdigit() or int(port) > 65535:
                raise OptionsError(f"--seam-endpoint {item!r}: expected SEAM=HOST:PORT with SEAM one of "
                                   f"{', '.join(HARNESSES)}")
        return value

    @field_validator("fresh_corpus_seed", mode="before")
    @classmethod
    def _fresh_seed(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                value = int(value, 10)
            except ValueError:
                raise OptionsError(f"--fresh-corpus SEED: {value!r} is not an integer") from None
        if isinstance(value, int) and not 0 <= value <= MAX_FRESH_SEED:
            raise OptionsError(f"--fresh-corpus SEED: {value} is outside 0..{MAX_FRESH_SEED} (2^53 - 1)")
        return value

    @field_validator("memory")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        try:
            return check_size(value)
        except ValueError as exc:
            raise OptionsError(f"--memory: {exc}") from None

    @field_validator("suites", mode="before")
    @classmethod
    def _split_suites(cls, value: object) -> object:
        return _csv(value, ALL_SUITES, "--suite")

    @model_validator(mode="before")
    @classmethod
    def _project_defaults(cls, data: Any) -> Any:
        """Paths the user left out resolve from the project (the working directory unless
        --project / BRAINBENCH_PROJECT), never from where the package is installed."""
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v is not None}
        fresh = data.get("fresh_corpus") or data.get("fresh_corpus_seed") is not None
        if fresh and ("fixtures_dir" in data or "gold_dir" in data):
            raise OptionsError("--fresh-corpus generates the corpus it grades: drop --fixtures/--gold "
                               "(or BRAINBENCH_FIXTURES/BRAINBENCH_GOLD)")
        project = Path(data.get("project") or Path.cwd())
        data["project"] = project
        data.setdefault("fixtures_dir", project / "fixtures")
        data.setdefault("gold_dir", project / "gold")
        if data.get("seams_file") is not None or data.get("images") or "seams" not in data:
            data["seams"] = {**_seams_from(data.get("seams_file"), list(data.get("images") or [])),
                             **(data.get("seams") or {})}
        return data

    @model_validator(mode="after")
    def _gate_defaults(self) -> RunConfig:
        if self.update_baseline and self.update_baseline_to is None:
            self.update_baseline_to = self.project / BASELINE_RELPATH
        if self.update_baseline_to is not None:
            self.update_baseline = True
        if self.ledger is None:
            self.ledger = self.project / LEDGER_RELPATH
            self._ledger_defaulted = True
        if self.behaviour is None:
            self.behaviour, self._behaviour_from = self._resolve_behaviour()
        return self

    @model_validator(mode="after")
    def _fresh_corpus_rules(self) -> RunConfig:
        if self.fresh_corpus_seed is not None:
            self.fresh_corpus = True
        if not self.fresh_corpus:
            if self.withhold_seed or self.seed_file is not None:
                raise OptionsError("--withhold-seed and --seed-file only apply with --fresh-corpus")
            return self
        if self.seed_file is not None and not self.withhold_seed:
            raise OptionsError("--seed-file is where --withhold-seed writes the seed: add --withhold-seed")
        refused = [flag for flag, value in (("--shard", self.shard), ("--resume", self.resume)) if value is not None]
        if refused:
            raise OptionsError(f"--fresh-corpus cannot be combined with {', '.join(refused)}: every shard or resumed "
                               "run would grade a corpus of its own")
        committed = self.project / BASELINE_RELPATH
        if self.update_baseline_to is not None and self.update_baseline_to.resolve() == committed.resolve():
            raise OptionsError(f"--update-baseline with --fresh-corpus needs a FILE: {committed} is the committed "
                               "corpus's baseline")
        return self

    _behaviour_from: Path | None = PrivateAttr(default=None)
    # The ledger is the project's default, not --ledger: on a read-only project (a corpus baked into
    # an image, a read-only mount) its line goes to a writable place instead (report/files.py).
    _ledger_defaulted: bool = PrivateAttr(default=False)

    @property
    def ledger_defaulted(self) -> bool:
        return self._ledger_defaulted

    def _resolve_behaviour(self) -> tuple[Behaviour, Path | None]:
        """The release the committed baseline was made with (so the gate it runs against compares
        like with like until that baseline is regenerated), else the newest."""
        path = self.default_committed_baseline()
        if path is None:
            return NEWEST, None
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))["config"].get("behaviour")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return NEWEST, None  # an unreadable baseline is the gate's to report, by name
        if recorded in get_args(Behaviour) and recorded != NEWEST:
            return recorded, path
        return NEWEST, None

    @property
    def behaviour_from(self) -> Path | None:
        """The committed baseline the behaviour was taken from; None when given or the newest."""
        return self._behaviour_from

    def trace_path(self) -> Path | None:
        """Where this run's trace goes (None: nowhere, without --out): --trace, else beside --out, except
        for a --json run, whose caller owns the directory of --out: the project's .brainbench/traces/."""
        if self.trace is not None:
            return self.trace
        if self.out is None:
            return None
        name = f"{self.out.stem}.trace.jsonl"
        return self.project / TRACES_RELPATH / name if self.json_out else self.out.with_name(name)

    def limits(self, default_cpus: float = 1.0) -> ResourceLimits:
        """The per-seam resource limits these options ask for (handed to providers in RunContext);
        ``default_cpus`` is the quota when --cpus is not given (orchestrator/launch.py: seam_cpus)."""
        cpus = default_cpus if self.cpus is None else self.cpus
        return ResourceLimits(memory=self.memory, cpus=cpus or None, pids_limit=self.pids_limit,
                              call_grace_s=self.call_grace_s)

    def default_committed_baseline(self) -> Path | None:
        """The committed baseline of the corpus's project: ``PROJECT/baselines/main.json`` when the
        fixtures live in PROJECT and the file exists; otherwise none (a foreign corpus has none)."""
        if self.committed_baseline is not None:
            return self.committed_baseline
        candidate = self.project / BASELINE_RELPATH
        try:
            self.fixtures_dir.resolve().relative_to(self.project.resolve())
        except ValueError:
            return None
        return candidate if candidate.is_file() else None
