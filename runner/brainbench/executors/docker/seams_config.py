"""Seam → image configuration: ``seams.toml`` and ``--image SEAM=IMAGE[:tag]``.

Our own images are *contract* adapters; any other image that follows the image
contract (docs/CONTAINERS.md) is a *production* swap, and the scoreboard says which.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..base import SeamLaunch

SEAMS = ("openclaw", "claude-code", "codex")
SEAM_MODULES = {"openclaw": "openclaw", "claude-code": "claude_code", "codex": "codex"}
SeamKind = Literal["production", "contract"]


class SeamImageSpec(BaseModel):
    """How one seam runs in a container."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str
    # Empty: the image's ENTRYPOINT + CMD is the hook command.
    command: tuple[str, ...] = ()
    mode: Literal["exec", "stream"] = "exec"
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(30.0, gt=0)
    kind: SeamKind = "production"

    def launch(self, seam: str, *, run_id: str = "", shared_paths: tuple[str, ...] = (),
               env: Mapping[str, str] | None = None) -> SeamLaunch:
        return SeamLaunch(seam=seam, command=self.command, mode=self.mode, image=self.image,
                          env={**self.env, **(env or {})}, shared_paths=shared_paths, run_id=run_id)


class SeamsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seams: dict[str, SeamImageSpec]


class SeamsConfigError(ValueError):
    pass


def normalize_seam(name: str) -> str:
    seam = name.strip().replace("_", "-")
    if seam not in SEAMS:
        raise SeamsConfigError(f"unknown seam {name!r}; expected one of {', '.join(SEAMS)}")
    return seam


def contract_defaults(tag: str = "latest", mode: Literal["exec", "stream"] = "stream"
                      ) -> dict[str, SeamImageSpec]:
    """BrainBench's own adapter images (built by `brainbench images build`)."""
    return {
        seam: SeamImageSpec(image=f"brainbench/{seam}:{tag}",
                            command=("python", "-m", "brainbench.hooks", seam),
                            mode=mode, kind="contract")
        for seam in SEAMS
    }


def load_seams_file(path: str | Path) -> dict[str, SeamImageSpec]:
    """Read ``seams.toml``: one table per seam (``[claude-code]``), or under ``[seams.*]``."""
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    tables = raw.get("seams", raw)
    try:
        parsed = SeamsFile(seams={normalize_seam(k): v for k, v in tables.items()})
    except ValidationError as exc:
        raise SeamsConfigError(f"{path}: {exc}") from exc
    return parsed.seams


def parse_image_flags(values: Iterable[str]) -> dict[str, SeamImageSpec]:
    """``--image claude-code=IMAGE[:tag]`` (repeatable) → production specs in exec mode."""
    out: dict[str, SeamImageSpec] = {}
    for value in values:
        seam, sep, image = value.partition("=")
        if not sep or not image:
            raise SeamsConfigError(f"--image expects SEAM=IMAGE[:tag], got {value!r}")
        out[normalize_seam(seam)] = SeamImageSpec(image=image.strip())
    return out


def resolve(*, seams_file: str | Path | None = None, image_flags: Iterable[str] = (),
            tag: str = "latest", mode: Literal["exec", "stream"] = "stream") -> dict[str, SeamImageSpec]:
    """Defaults, overridden by seams.toml, overridden by --image flags."""
    specs = contract_defaults(tag, mode)
    if seams_file:
        specs.update(load_seams_file(seams_file))
    specs.update(parse_image_flags(image_flags))
    return specs
