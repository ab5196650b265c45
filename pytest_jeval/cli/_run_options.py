"""The reference's ``run`` options that set a suite-wide key, and what each stands for here.

The reference (``jarvis eval run`` / ``python -m openjarvis.evals run``) takes these options; each is
accepted with its meaning, mapped to the suite key it stands for (:data:`SUITE_WIDE`), so the written
suite (or, with ``-c``, the ``--jeval-set`` overrides) says what the run used. Where pytest-jeval's
meaning differs, the help says so: ``-w``/``--max-workers`` and ``--concurrency`` bound requests in
flight per endpoint from one pytest process (``-n N`` after ``--`` adds processes), not threads or
parallel agent queries; ``--query-timeout`` bounds an agent episode (the reference's: a query of its
agentic runner), a direct call being bounded by ``[run] request_timeout`` per attempt.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any


@dataclasses.dataclass(frozen=True)
class SuiteWide:
    """One option that sets one suite key (``table.key``) for the whole run."""

    flags: tuple[str, ...]
    dest: str
    key: str
    help: str
    kind: str = "text"
    """``text``, ``int``, ``number``, ``flag`` (``--x/--no-x``) or ``path`` (made absolute)."""
    metavar: str | None = None


def _int(text: str | None) -> int | str | None:
    try:
        return None if text is None else int(text)
    except ValueError:
        return text  # the suite's validation says what is wrong


def _num(text: str | None) -> float | str | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return text


SUITE_WIDE: tuple[SuiteWide, ...] = (
    SuiteWide(("--seed",), "seed", "run.seed", "[run] seed: seed of the -n subset and of option shuffles "
              "(default 42), as the reference's dataset-shuffling seed; the request's seed is [defaults] seed",
              "int", "N"),
    SuiteWide(("--temperature",), "temperature", "defaults.temperature", "[defaults] temperature (default 0)",
              "number", "T"),
    SuiteWide(("--max-tokens",), "max_tokens", "defaults.max_tokens", "[defaults] max_tokens: output tokens per "
              "answer (default 2048)", "int", "N"),
    SuiteWide(("--concurrency",), "concurrency", "run.max_concurrency", "[run] max_concurrency: requests in flight "
              "per endpoint from one pytest process (default 32). Differs from the reference's --concurrency "
              "(parallel agent queries of its agentic runner): here every benchmark, direct or agent, shares it",
              "int", "N"),
    SuiteWide(("-w", "--max-workers"), "max_workers", "run.max_workers", "[run] max_workers: the reference's "
              "worker count, taken here as requests in flight per endpoint from one pytest process (used when "
              "--concurrency is not given); for more processes give -n N after --", "int", "N"),
    SuiteWide(("--query-timeout",), "query_timeout", "run.episode_timeout", "[run] episode_timeout: wall-clock "
              "seconds per agent episode (default 600; the reference's is per query of its agentic runner); "
              "a direct call is bounded by [run] request_timeout per attempt", "number", "SECONDS"),
    SuiteWide(("--episode-mode",), "episode_mode", "run.episode_mode", "[run] episode_mode: run each benchmark "
              "that keeps a memory as one sequence per model, each episode remembering earlier ones "
              "(docs/agents.md)", "flag"),
    SuiteWide(("--telemetry",), "telemetry", "run.telemetry", "[run] telemetry: GPU energy, power and "
              "utilisation around model calls (NVML; docs/telemetry.md)", "flag"),
    SuiteWide(("--gpu-metrics",), "gpu_metrics", "run.gpu_metrics", "[run] gpu_metrics: the reference's GPU "
              "metric polling, the same NVML sampling as --telemetry", "flag"),
    SuiteWide(("--wandb-project",), "wandb_project", "run.wandb_project", "[run] wandb_project: log one W&B run "
              "per (benchmark, model) at the end (pytest-jeval[wandb]; docs/exports.md)", metavar="NAME"),
    SuiteWide(("--wandb-entity",), "wandb_entity", "run.wandb_entity", "[run] wandb_entity", metavar="NAME"),
    SuiteWide(("--wandb-tags",), "wandb_tags", "run.wandb_tags", "[run] wandb_tags: comma-separated",
              metavar="A,B"),
    SuiteWide(("--wandb-group",), "wandb_group", "run.wandb_group", "[run] wandb_group", metavar="NAME"),
    SuiteWide(("--sheets-id",), "sheets_id", "run.sheets_spreadsheet_id", "[run] sheets_spreadsheet_id: append "
              "one row per (benchmark, model) to this Google Sheet (pytest-jeval[sheets]; docs/exports.md)",
              metavar="ID"),
    SuiteWide(("--sheets-worksheet",), "sheets_worksheet", "run.sheets_worksheet", "[run] sheets_worksheet "
              "(default Results)", metavar="NAME"),
    SuiteWide(("--sheets-creds",), "sheets_creds", "run.sheets_credentials_path", "[run] sheets_credentials_path: "
              "a service-account JSON key file (written as an absolute path)", "path", "FILE"),
)


def add_suite_wide(p: argparse.ArgumentParser) -> None:
    """Add every :data:`SUITE_WIDE` option to ``p``."""
    for option in SUITE_WIDE:
        if option.kind == "flag":
            p.add_argument(*option.flags, dest=option.dest, action=argparse.BooleanOptionalAction, default=None,
                           help=option.help)
        else:
            p.add_argument(*option.flags, dest=option.dest, default=None, metavar=option.metavar or "TEXT",
                           help=option.help)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="the reference's debug logging: pytest -v (a line per sample) and --log-cli-level=DEBUG "
                        "(log records shown live)")


def suite_wide_values(args: argparse.Namespace, cwd: Path) -> dict[str, Any]:
    """The suite keys (``table.key``) the suite-wide options given set, with their values
    (numbers that do not parse stay text, so the suite's validation reports them)."""
    out: dict[str, Any] = {}
    for option in SUITE_WIDE:
        raw = getattr(args, option.dest, None)
        if raw is None:
            continue
        if option.kind == "int":
            out[option.key] = _int(raw)
        elif option.kind == "number":
            out[option.key] = _num(raw)
        elif option.kind == "path":
            out[option.key] = str((cwd / Path(raw).expanduser()).absolute())
        else:
            out[option.key] = raw
    return out


def option_of(key: str) -> str | None:
    """The option that sets suite key ``key`` (``run.seed`` -> ``--seed``), or None."""
    for option in SUITE_WIDE:
        if option.key == key:
            return option.flags[-1]
    return None


def verbose_args(args: argparse.Namespace) -> list[str]:
    """pytest's arguments for ``-v``/``--verbose``."""
    return ["-v", "--log-cli-level=DEBUG"] if getattr(args, "verbose", False) else []
