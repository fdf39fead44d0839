"""Turn :class:`~brainbench.models.config.RunConfig` into ``brainbench run``'s options, and back.

The command's signature is generated from the model's fields (flag, help, env var), so
an option is declared once, on the model.  :func:`config_from_cli` validates what Click
parsed into the model and turns a validation error into one line naming the flag.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from brainbench.models.config import OptionsError, RunConfig, cli_spec

CLI_TYPES: dict[str, Any] = {"str": str, "path": Path}


def _cli_type(annotation: Any, spec: dict[str, Any]) -> Any:
    if spec["cli_type"] is not None:
        return CLI_TYPES[spec["cli_type"]]
    return annotation


def run_parameters() -> list[inspect.Parameter]:
    """One keyword parameter per option field, typed and annotated for Typer."""
    params = []
    for name, info in RunConfig.model_fields.items():
        spec = cli_spec(name, info)
        if spec is None:
            continue
        kind = _cli_type(info.annotation, spec)
        default = info.default if info.default is not PydanticUndefined else None
        if kind is bool:
            default = bool(default)
            decls = [spec["flag"]] if spec["flag"] == "--json" else [f"{spec['flag']}/--no-{spec['flag'][2:]}"]
        else:
            decls = [spec["flag"]]
        if kind == list[str]:
            kind, default = list[str] | None, None
        elif default is None and kind in (str, Path, int, float):
            kind = kind | None  # unset on the command line: the model's default applies
        opt = typer.Option(*decls, help=info.description or "", hidden=spec["hidden"], envvar=spec["envvar"],
                           metavar=spec["metavar"],
                           show_envvar=spec["envvar"] is not None, show_default=default not in (None, False))
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=Annotated[kind, opt]))
    return params


def with_run_signature(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``func(**options)`` the generated signature so Typer builds its options from the model."""
    func.__signature__ = inspect.Signature(run_parameters())  # type: ignore[attr-defined]
    return func


def flag_of(field: str) -> str:
    info = RunConfig.model_fields.get(field)
    spec = cli_spec(field, info) if info is not None else None
    return spec["flag"] if spec else field


def config_from_cli(values: dict[str, Any], cmd_args: list[str]) -> RunConfig:
    """The validated model, or :class:`OptionsError` with one line naming the flag or file."""
    given = {k: v for k, v in values.items() if v is not None and v != []}
    try:
        return RunConfig.model_validate({**given, "cmd_args": cmd_args})
    except OptionsError:
        raise
    except ValidationError as exc:
        first = exc.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        if isinstance(cause, OptionsError):
            raise cause from None
        where = flag_of(str(first["loc"][0])) if first["loc"] else "options"
        raise OptionsError(f"{where}: {first['msg']}") from None
