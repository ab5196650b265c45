"""Weights & Biases export: one W&B run per (benchmark, model), as the reference's tracker logs one per eval run.

Each run is named ``<benchmark>/<model>``, carries the suite's ``wandb_entity``,
``wandb_tags`` and ``wandb_group`` (no group unless set, as in the reference), and holds:

* ``config``: suite, benchmark, model, category and backend;
* ``summary``: every number of the pair's summary JSON, nested keys joined with ``/``
  (``latency_stats/mean``, ``per_subject/algebra/accuracy``, ``accuracy_ci/low``);
* ``samples``: a ``wandb.Table`` with one row per stored record (:data:`TABLE_COLUMNS`).

W&B's own environment applies as it is (``WANDB_MODE``, ``WANDB_DIR``, ``WANDB_API_KEY``,
``WANDB_BASE_URL``, ...); pytest-jeval never reads the key. Console capture is off
(the run is made after the session, there is nothing of it to capture), and W&B is silent: its banner
stays in its own logs (each run directory's ``logs/``) and pytest's log; the terminal gets one line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_jeval.exports import ExportError, Send

if TYPE_CHECKING:
    from pytest_jeval.exports import ExportPair
    from pytest_jeval.suite.config import Run
    from pytest_jeval.suite.plan import EvalPlan

_LOG = logging.getLogger(__name__)

#: The modules the export needs (the ``pytest-jeval[wandb]`` extra).
MODULES = ("wandb",)

#: The per-sample table's columns: record fields, as stored.
TABLE_COLUMNS = (
    "record_id", "benchmark", "model", "subject", "is_correct", "score", "latency_seconds",
    "prompt_tokens", "completion_tokens", "cost_usd", "error",
)

#: Summary fields that describe the pair rather than measure it (they go to the run's config).
CONFIG_FIELDS = ("benchmark", "category", "backend", "model")


class WandbError(ExportError):
    """``wandb_*`` keys that cannot be used as set."""


@dataclasses.dataclass(frozen=True)
class WandbSettings:
    """The ``[run] wandb_*`` keys, checked."""

    project: str
    entity: str | None
    tags: tuple[str, ...]
    group: str | None
    suite: str


def tag_list(value: str | list[str]) -> tuple[str, ...]:
    """``wandb_tags`` as a tuple: a list as it is, a string split at commas; blanks dropped."""
    parts = value.split(",") if isinstance(value, str) else list(value)
    return tuple(p.strip() for p in parts if p.strip())


def settings_from(run: Run, suite: str) -> WandbSettings | None:
    """The W&B settings of ``[run]``, or None when ``wandb_project`` is unset; raises :class:`WandbError`
    when another ``wandb_*`` key is set without it (never accepted and ignored)."""
    others = [k for k in ("wandb_entity", "wandb_tags", "wandb_group") if getattr(run, k)]
    if not run.wandb_project.strip():
        if others:
            raise WandbError(f"[run] {', '.join(others)} set without wandb_project (the W&B export is off without it)")
        return None
    return WandbSettings(
        project=run.wandb_project.strip(),
        entity=run.wandb_entity.strip() or None,
        tags=tag_list(run.wandb_tags),
        group=run.wandb_group.strip() or None,
        suite=suite,
    )


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def summary_metrics(summary: dict[str, Any]) -> dict[str, float | int]:
    """Every finite number of a summary, nested keys joined with ``/`` (``accuracy_ci`` as ``low`` / ``high``)."""
    out: dict[str, float | int] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}/{key}" if prefix else str(key), inner)
        elif isinstance(value, (list, tuple)):
            names = ("low", "high") if len(value) == 2 and prefix.endswith("_ci") else range(len(value))
            for name, inner in zip(names, value):
                walk(f"{prefix}/{name}", inner)
        else:
            number = _number(value)
            if number is not None:
                out[prefix] = number

    walk("", {k: v for k, v in summary.items() if k not in CONFIG_FIELDS})
    return out


def table_rows(records: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """The per-sample table's rows: :data:`TABLE_COLUMNS` of each record (already redacted)."""
    return [[record.get(column) for column in TABLE_COLUMNS] for record in records]


def export(settings: WandbSettings, pairs: Sequence[ExportPair]) -> str:
    """Log one W&B run per pair; the terminal line (raises whatever W&B raises).

    What W&B prints itself (its banner, its integration notices) goes to this module's log, not to
    pytest's output.
    """
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            return _export(settings, pairs)
    finally:
        for line in printed.getvalue().splitlines():
            if line.strip():
                _LOG.info("%s", line)


def _export(settings: WandbSettings, pairs: Sequence[ExportPair]) -> str:
    import wandb

    names = []
    offline: str | None = None
    try:
        for pair in pairs:
            config = {"suite": settings.suite, **{k: pair.summary.get(k) for k in CONFIG_FIELDS}}
            run = wandb.init(
                project=settings.project,
                entity=settings.entity,
                group=settings.group,
                tags=list(settings.tags) or None,
                name=f"{pair.benchmark}/{pair.model}",
                job_type="eval",
                config=config,
                # silent: W&B's banner (about 11 lines a run) would land in pytest's output; its own logs
                # keep it (the run directory's logs/), the terminal gets the one line below (issue 33)
                settings=wandb.Settings(console="off", silent=True),
            )
            _LOG.info("W&B run %s: %s", run.name, run.dir)
            try:
                table = wandb.Table(columns=list(TABLE_COLUMNS), data=table_rows(pair.records),
                                    allow_mixed_types=True)
                run.log({"samples": table})
                run.summary.update(summary_metrics(pair.summary))
            finally:
                run.finish()
            names.append(run.name or f"{pair.benchmark}/{pair.model}")
            if getattr(run.settings, "mode", None) in ("offline", "dryrun"):
                offline = str(Path(run.dir).parent.parent)
    finally:
        wandb.teardown()
    where = f"{settings.entity}/{settings.project}" if settings.entity else settings.project
    line = f"jeval: W&B: logged {len(names)} run(s) to {where}: {', '.join(names)}"
    return line + (f" (offline, in {offline}: `wandb sync` uploads them)" if offline else "")


class WandbExporter:
    """The ``wandb`` exporter: on when ``[run] wandb_project`` is set."""

    title = "W&B"
    extra = "wandb"
    modules = MODULES
    key = "wandb_project"

    def configure(self, plan: EvalPlan, named: bool) -> Send | None:
        """The sender for the suite's ``wandb_*`` keys; None when ``wandb_project`` is unset."""
        settings = settings_from(plan.suite.run, plan.suite.meta.name or plan.path.stem)
        if settings is None:
            if named:
                raise WandbError("[run] exporters names wandb, which needs wandb_project")
            return None
        return lambda pairs: export(settings, pairs)


EXPORTER = WandbExporter()
"""The ``wandb`` entry of :data:`~pytest_jeval.exports.EXPORTERS`."""
