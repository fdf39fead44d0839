"""Validation problems: one line each, naming the file, the JSON path and the rule."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    path: str
    rule: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.rule}"


class CorpusError(Exception):
    """Raised once with every problem found, never just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def json_path(parts: tuple[object, ...] | list[object]) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path
