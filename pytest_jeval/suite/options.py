"""A benchmark's own settings (``[benchmarks.options]``) and its ``data_dir``, checked at plan time.

A benchmark declares its settings as a pydantic model (``Benchmark.options``, ``extra="forbid"``); the plan
validates the entry's ``[benchmarks.options]`` table against it, so a misspelled key is refused before any
request with the keys the benchmark takes. Path settings typed :data:`SuitePath` are resolved against the
suite file's folder (``~`` expanded), as ``data_files`` are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ValidationError, ValidationInfo


def _resolve(value: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("suite_dir")
    path = Path(value).expanduser()
    return path if path.is_absolute() or base is None else Path(base) / path


SuitePath = Annotated[Path, AfterValidator(_resolve)]
"""A path setting, resolved against the suite file's folder (``~`` expanded)."""


class OptionsError(ValueError):
    """Options the benchmark does not take, or values it refuses; one line per problem, each ``key: why``."""


def validate_options(model: Any, values: dict[str, Any], *, benchmark: str, suite_dir: Path) -> Any:
    """``values`` validated by the benchmark's options ``model`` (None when it has none and none are set)."""
    if model is None:
        if values:
            raise OptionsError(f"{', '.join(sorted(values))}: {benchmark!r} takes no options")
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise OptionsError(f"{benchmark!r} declares options that are not a pydantic model: {model!r}")
    try:
        return model.model_validate(values, context={"suite_dir": suite_dir})
    except ValidationError as exc:
        known = ", ".join(model.model_fields) or "none"
        lines = []
        for e in exc.errors():
            key = ".".join(str(p) for p in e["loc"]) or "options"
            if e["type"] == "extra_forbidden":
                lines.append(f"{key}: unknown key; the options of {benchmark!r} are: {known}")
            elif e["type"] == "missing":
                lines.append(f"{key}: required key is missing")
            else:
                lines.append(f"{key}: {e['msg']}")
        raise OptionsError("\n".join(lines)) from None


def check_data_dir(value: str | None, *, benchmark: str, layout: str, suite_dir: Path) -> Path | None:
    """The entry's ``data_dir`` resolved and checked: an existing directory, for a benchmark that takes one."""
    if value is None:
        return None
    if not layout:
        raise OptionsError(f"{benchmark!r} takes no data_dir (its data comes from data_files or its own source)")
    path = Path(value).expanduser()
    path = path if path.is_absolute() else suite_dir / path
    if not path.is_dir():
        raise OptionsError(f"no such directory: {path} (it should hold {layout})")
    return path
