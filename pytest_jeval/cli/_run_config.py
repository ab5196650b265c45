"""``jeval run -c SUITE.toml``: the reference's ``--config``, the suite run as ``pytest --jeval-config`` runs it.

``-b`` and ``-m`` are then not needed: the suite names its benchmarks and models. The options that set a
suite-wide key (``--seed``, ``-w``, ``--wandb-project``, ...; :mod:`pytest_jeval.cli._run_options`), ``-n``
(every benchmark's ``max_samples``) and ``-o`` become ``--jeval-set`` overrides (``-o DIR``:
``--jeval-output DIR``), so the suite file is never rewritten; ``--model-filter TEXT`` keeps the items of the
suite's models whose name contains TEXT (a ``-k`` on their test ids). The options that name a matrix
entry's endpoint or data (``--base-url``, ``--data-files``, ``--agent``, ...) are refused: the suite says those.
Everything is checked as pytest would check it (the suite, the overrides) before pytest starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.cli._run_options import option_of, suite_wide_values
from pytest_jeval.cli._run_suite import RunUsageError, output_target
from pytest_jeval.cli._toml import value as toml_value

#: Options that describe matrix entries: the suite file gives them, so they are refused with ``-c``.
ENTRY_OPTIONS = (
    ("benchmarks", "-b"), ("models", "-m"), ("engine", "--engine"), ("base_url", "--base-url"),
    ("api_key_env", "--api-key-env"), ("data_files", "--data-files"), ("split", "--split"), ("subset", "--subset"),
    ("backend", "--backend"), ("tools", "--tools"), ("agent", "--agent"), ("num_fewshot", "--num-fewshot"),
    ("judge_model", "--judge-model"), ("judge_engine", "--judge-engine"), ("judge_base_url", "--judge-base-url"),
    ("judge_api_key_env", "--judge-api-key-env"), ("user_model", "--user-model"), ("user_engine", "--user-engine"),
    ("user_base_url", "--user-base-url"), ("user_api_key_env", "--user-api-key-env"),
)


def _refused(args: argparse.Namespace) -> list[str]:
    return [f"{option}: not with -c (the suite file sets it; edit the suite, or give --jeval-set KEY=VALUE "
            "after --)" for dest, option in ENTRY_OPTIONS if getattr(args, dest, None) not in (None, [], False)]


def _has_k(passthrough: Sequence[str]) -> bool:
    return any(a == "-k" or (a.startswith("-k") and not a.startswith("--")) for a in passthrough)


def model_filter_expression(models: Sequence[Any], text: str) -> tuple[str, list[str]]:
    """A ``-k`` expression selecting the items of the suite's models whose name contains ``text``
    (an item id holds ``[<model-slug>/<record-id>]``), and those models' keys."""
    chosen = [m for m in models if text in m.name]
    if not chosen:
        raise RunUsageError(f"--model-filter {text!r} matches none of the suite's models "
                            f"({', '.join(m.name for m in models)})")
    return " or ".join(f"[{m.slug}/" for m in chosen), [m.key for m in chosen]


def config_overrides(args: argparse.Namespace, suite: Any, cwd: Path) -> tuple[list[str], dict[str, str]]:
    """The ``--jeval-set`` overrides the options give (and, for each override, the option that gave it)."""
    values = suite_wide_values(args, cwd)
    origin = {key: option_of(key) or key for key in values}
    if args.max_samples is not None:
        for i in range(len(suite.benchmarks)):
            values[f"benchmarks.{i}.max_samples"] = _as_int(args.max_samples)
            origin[f"benchmarks.{i}.max_samples"] = "--max-samples"
    if args.output is not None:
        directory, file = output_target(args.output, cwd)
        if file is not None:
            values["run.output_dir"] = str(directory)
            values["run.output_file"] = str(file)
            origin["run.output_dir"] = origin["run.output_file"] = "--output"
    overrides = [f"{key}={toml_value(value)}" for key, value in values.items()]
    return overrides, {f"{key}={toml_value(value)}": origin[key] for key, value in values.items()}


def _as_int(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


def _problems(message: str, origins: dict[str, str]) -> list[str]:
    """The lines of a suite error, each override it names replaced by the option that gave it."""
    lines = [line.strip() for line in message.splitlines()[1:] if line.strip()] or [message.split(": ", 1)[-1]]
    out = []
    for line in lines:
        for text, option in origins.items():
            key = text.split("=", 1)[0]  # a message names an override by its key (its value never repeated)
            for said in (f"(from --jeval-set {text})", f"(from --jeval-set {key}=…)"):
                line = line.replace(said, f"(from {option})")
        out.append(line)
    return list(dict.fromkeys(out))


def config_command(args: argparse.Namespace, cwd: Path) -> tuple[Path, list[str]]:
    """The suite file and pytest's arguments (after ``--jeval-config SUITE``) for ``jeval run -c``;
    RunUsageError with one problem a line when the options or the suite cannot run."""
    from pytest_jeval.suite.config import SuiteError, load_suite
    from pytest_jeval.suite.plan import EvalPlan

    problems = _refused(args)
    if problems:
        raise RunUsageError("\n".join(problems))
    path = (cwd / Path(args.config).expanduser()).absolute()
    origins: dict[str, str] = {}
    try:
        suite = load_suite(path)
        overrides, origins = config_overrides(args, suite, cwd)
        output_dir = None
        if args.output is not None and output_target(args.output, cwd)[1] is None:
            output_dir = str(output_target(args.output, cwd)[0])
        EvalPlan.from_file(path, invocation_dir=cwd, output_dir=output_dir, overrides=overrides)
    except SuiteError as exc:
        raise RunUsageError("\n".join(_problems(str(exc), origins))) from None
    extra: list[str] = []
    for text in overrides:
        extra += ["--jeval-set", text]
    if output_dir is not None:
        extra += ["--jeval-output", output_dir]
    if args.model_filter is not None:
        if _has_k(args.passthrough):
            raise RunUsageError("--model-filter with -c becomes pytest's -k, and a -k is given after --: "
                                "put both in that one -k")
        expression, _keys = model_filter_expression(suite.models, args.model_filter)
        extra += ["-k", expression]
    return path, extra
