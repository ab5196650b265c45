"""The suite behind ``jeval run``: built from the options, validated as a suite file is, and written.

The options become a suite dict, the dict becomes TOML, and the TOML is checked by the same
code that checks a suite file (:func:`pytest_jeval.suite.config.parse_suite`, then
:meth:`pytest_jeval.suite.plan.EvalPlan.from_file` for benchmarks, data files and keys), so a bad
value gets the suite's message, with the key path turned into the option that set it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_jeval.cli._run_options import SUITE_WIDE, suite_wide_values
from pytest_jeval.cli._toml import dumps

#: ``-m local``: the bundled model, as configs/quickstart.toml names it.
LOCAL_ALIAS = "local"
LOCAL_MODEL = "smollm2-135m"
#: The suite file's name in the output directory.
SUITE_NAME = "suite.toml"

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_OPTION = {
    **{o.key: o.flags[-1] for o in SUITE_WIDE},
    "run.output_dir": "--output",
    "run.output_file": "--output",
    "benchmarks.num_fewshot": "--num-fewshot",
    "judge.model": "--judge-model",
    "judge.engine": "--judge-engine",
    "judge.base_url": "--judge-base-url",
    "judge.api_key_env": "--judge-api-key-env",
    "user.model": "--user-model",
    "user.engine": "--user-engine",
    "user.base_url": "--user-base-url",
    "user.api_key_env": "--user-api-key-env",
    "benchmarks.name": "-b",
    "benchmarks.max_samples": "--max-samples",
    "benchmarks.split": "--split",
    "benchmarks.subset": "--subset",
    "benchmarks.data_files": "--data-files",
    "benchmarks.backend": "--backend",
    "benchmarks.tools": "--tools",
    "benchmarks.agent": "--agent",
    "models.name": "-m",
    "models.engine": "--engine",
    "models.base_url": "--base-url",
    "models.api_key_env": "--api-key-env",
}
_LOC = re.compile(r"(?P<table>[a-z_]+)(?:\[\d+\])?(?:\.(?P<key>[a-z_]+))?(?:\[\d+\])?")


class RunUsageError(Exception):
    """Options that do not make a usable suite; each line of the message is one problem."""


@dataclass(frozen=True)
class WrittenSuite:
    """Where the suite went, and a note when the usual name was taken by another suite."""

    path: Path
    note: str | None = None


def _integer(text: str | None) -> int | str | None:
    """An option's integer, or its text unchanged (the suite's validation then says what is wrong)."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _env_name(option: str, name: str | None) -> str | None:
    """An environment variable's name; anything else is refused without repeating it (it may be a key)."""
    if name is not None and not _ENV_NAME.fullmatch(name):
        raise RunUsageError(f"{option} takes the NAME of an environment variable (letters, digits and _), "
                            "not a key; the value given is not one (not shown)")
    return name


def _unique(option: str, values: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for v in values:
        if v in seen:
            raise RunUsageError(f"{option} {v} is given twice")
        seen.append(v)
    return seen


def select_models(models: Sequence[str], model_filter: str | None) -> list[str]:
    """The ``-m`` models whose name contains ``--model-filter`` (all without one)."""
    names = _unique("-m", models)
    if model_filter is None:
        return names
    chosen = [m for m in names if model_filter in m]
    if not chosen:
        raise RunUsageError(f"--model-filter {model_filter!r} matches none of the models ({', '.join(names)})")
    return chosen


def _model(name: str, args: argparse.Namespace) -> dict[str, Any]:
    if name == LOCAL_ALIAS:
        return {"name": LOCAL_MODEL, "engine": "local"}
    entry: dict[str, Any] = {"name": name, "engine": args.engine}
    if args.engine != "local":
        entry.update(base_url=args.base_url, api_key_env=args.api_key_env)
    return entry


def _judge(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.judge_model is None:
        for option in ("judge_engine", "judge_base_url", "judge_api_key_env"):
            if getattr(args, option) is not None:
                raise RunUsageError(f"--{option.replace('_', '-')} needs --judge-model")
        return None
    if args.judge_model == LOCAL_ALIAS:
        return {"model": LOCAL_MODEL, "engine": "local"}
    return {"model": args.judge_model, "engine": args.judge_engine, "base_url": args.judge_base_url,
            "api_key_env": _env_name("--judge-api-key-env", args.judge_api_key_env)}


def _user(args: argparse.Namespace) -> dict[str, Any] | None:
    model = getattr(args, "user_model", None)
    if model is None:
        for option in ("user_engine", "user_base_url", "user_api_key_env"):
            if getattr(args, option, None) is not None:
                raise RunUsageError(f"--{option.replace('_', '-')} needs --user-model")
        return None
    if model == LOCAL_ALIAS:
        return {"model": LOCAL_MODEL, "engine": "local"}
    return {"model": model, "engine": getattr(args, "user_engine", None),
            "base_url": getattr(args, "user_base_url", None),
            "api_key_env": _env_name("--user-api-key-env", getattr(args, "user_api_key_env", None))}


def _check_remote(models: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """``--base-url`` and ``--api-key-env`` need a model that uses them: none is accepted and ignored."""
    if any(m["engine"] != "local" for m in models):
        return
    for option in ("base_url", "api_key_env"):
        if getattr(args, option) is not None:
            raise RunUsageError(f"--{option.replace('_', '-')}: every model runs on the bundled local engine, "
                                "which does not use it")


def _data_files(files: Sequence[str] | None, benchmarks: Sequence[str], cwd: Path) -> list[str] | None:
    if not files:
        return None
    if len(benchmarks) != 1:
        raise RunUsageError("--data-files needs exactly one -b benchmark (the files are that benchmark's data)")
    return [str((cwd / Path(f).expanduser()).absolute()) for f in files]


def _tools(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def output_target(output: str, cwd: Path) -> tuple[Path, Path | None]:
    """``-o``: the output directory, and the results file when ``output`` names a ``.jsonl`` file
    (the reference's output file; its summary goes beside it), absolute."""
    path = (cwd / Path(output).expanduser()).absolute()
    if output.endswith(".jsonl") and path.name != ".jsonl":
        return path.parent, path
    return path, None


def _dotted(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"run.seed": 7}`` -> ``{"run": {"seed": 7}}``."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        table, _, name = key.partition(".")
        out.setdefault(table, {})[name] = value
    return out


def build_suite(args: argparse.Namespace, benchmarks: Sequence[str], cwd: Path) -> dict[str, Any]:
    """The suite dict the options describe (values the options give as text stay text when they are
    not numbers, so the suite's validation reports them)."""
    names = _unique("-b", benchmarks)
    _env_name("--api-key-env", args.api_key_env)
    models = [_model(m, args) for m in select_models(args.models, args.model_filter)]
    _check_remote(models, args)
    data_files = _data_files(getattr(args, "data_files", None), names, cwd)
    bench_keys = {
        "max_samples": _integer(args.max_samples),
        "split": getattr(args, "split", None),
        "subset": getattr(args, "subset", None),
        "data_files": data_files,
        "backend": getattr(args, "backend", None),
        "tools": _tools(getattr(args, "tools", None)),
        "agent": getattr(args, "agent", None),
        "num_fewshot": _integer(getattr(args, "num_fewshot", None)),
    }
    directory, file = output_target(getattr(args, "output", None) or "results/", cwd)
    if file is not None and len(names) * len(models) != 1:
        raise RunUsageError(f"--output {args.output}: a .jsonl file holds the results of one benchmark on one model "
                            f"(the reference's output file); this run has {len(names)} benchmark(s) on "
                            f"{len(models)} model(s): give a directory instead")
    wide = _dotted(suite_wide_values(args, cwd))
    suite: dict[str, Any] = {
        "meta": {"name": f"jeval {args.command}",
                 "description": f"{', '.join(names)} on {', '.join(m['name'] for m in models)}"},
        "defaults": wide.get("defaults", {}),
        "run": {"output_dir": str(directory), "output_file": str(file) if file is not None else None,
                **wide.get("run", {})},
    }
    judge = _judge(args)
    if judge is not None:
        suite["judge"] = judge
    user = _user(args)
    if user is not None:
        suite["user"] = user
    suite["models"] = models
    suite["benchmarks"] = [{"name": n, **bench_keys} for n in names]
    return _pruned(suite)


def _pruned(table: dict[str, Any]) -> dict[str, Any]:
    """``table`` without keys set to None and without tables left empty."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        if isinstance(v, dict):
            v = _pruned(v)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            v = [_pruned(x) for x in v]
        if v is not None and v != {}:
            out[k] = v
    return out


def _option_problem(line: str) -> str:
    """One problem line of a SuiteError, with its key path turned into the option that set the key."""
    text = line.strip()
    loc, sep, message = text.partition(": ")
    match = _LOC.fullmatch(loc) if sep else None
    if match is None:
        return text.removeprefix("(top level): ")
    option = _OPTION.get(f"{match['table']}.{match['key']}")
    if "add a [judge] table" in message:
        message += "; with jeval run, give --judge-model MODEL"
    if "add a [user] table" in message:
        message += "; with jeval run, give --user-model MODEL"
    return f"{option}: {message}" if option else f"{loc} (in the suite jeval writes): {message}"


def suite_problems(message: str) -> list[str]:
    """The problems of a SuiteError message (``invalid suite PATH:`` then one ``  key: problem`` a line)."""
    head, _, rest = message.partition("\n")
    if not rest:  # one-line form: ``invalid suite PATH: problem``
        return [head.split(": ", 1)[-1]]
    problems = [_option_problem(line) for line in rest.splitlines() if line.strip()]
    return list(dict.fromkeys(problems))  # one option sets the key of every benchmark: say it once


def validate(text: str, cwd: Path, overrides: Sequence[str] = ()) -> None:
    """Check suite TOML as ``pytest --jeval-config`` would (with the ``--jeval-set`` ``overrides`` pytest
    will get), before anything is written or sent; raise :class:`RunUsageError` with the problems in option
    names."""
    from pytest_jeval.suite.config import SuiteError, parse_suite
    from pytest_jeval.suite.plan import EvalPlan

    with tempfile.TemporaryDirectory(prefix="jeval-run-") as tmp:
        path = Path(tmp) / SUITE_NAME
        try:
            parse_suite(text, path, overrides=overrides)
            path.write_text(text, encoding="utf-8")
            EvalPlan.from_file(path, invocation_dir=cwd, overrides=overrides)
        except SuiteError as exc:
            raise RunUsageError("\n".join(suite_problems(str(exc)))) from None


def _write_atomic(path: Path, text: str) -> None:
    from pytest_jeval.core.files import refuse_special

    refuse_special(path)  # never replace a device node or a FIFO
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _holds(path: Path, text: str) -> bool:
    return path.read_text(encoding="utf-8", errors="replace") == text


def write_suite(output_dir: Path, text: str) -> WrittenSuite:
    """Write the suite as ``output_dir/suite.toml``; the same suite there already is kept as it is.
    A different one is never replaced: this one then goes to ``suite-<digest>.toml`` beside it."""
    output_dir.mkdir(parents=True, exist_ok=True)
    usual = output_dir / SUITE_NAME
    target, note = usual, None
    if usual.exists() and not _holds(usual, text):
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        target = output_dir / f"suite-{digest}.toml"
        note = f"{usual} holds another suite, left as it is; this run's suite is {target.name}"
        if target.exists() and not _holds(target, text):
            raise RunUsageError(f"{target} exists and holds another suite; remove it or choose another --output")
    if not target.exists():
        _write_atomic(target, text)
    return WrittenSuite(target, note)


def prepare_suite(args: argparse.Namespace, benchmarks: Sequence[str], cwd: Path, *,
                  overrides: Sequence[str] = ()) -> tuple[str, Path]:
    """The validated suite text for these options (and ``--jeval-set`` ``overrides``), and the output directory."""
    suite = build_suite(args, benchmarks, cwd)
    text = dumps(suite)
    validate(text, cwd, overrides)
    return text, Path(suite["run"]["output_dir"])
