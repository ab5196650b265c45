"""LifelongAgentBench's data: the Hub dataset ``csyq/LifelongAgentBench`` (one folder per environment) or
local files in upstream's layout.

Local ``data_files`` may be upstream's processed ``entry_dict.json`` (``{"<sample index>": entry, ...}``,
as the repository's task configs read it), JSON lines of entries, or the Hub's parquet files. An entry
is upstream's dataset item of its environment:

* ``db_bench``: ``instruction``, ``table_info`` (``name``, ``column_info_list``, ``row_list``),
  ``answer_info`` (``md5``, ``direct``, ``sql``), ``skill_list``;
* ``os_interaction``: ``instruction``, ``initialization_command_item``, ``evaluation_info``
  (``ground_truth_command_item``, ``evaluation_command_item``), ``skill_list``;
* ``knowledge_graph``: ``question``, ``entity_dict``, ``action_list``, ``answer_list``, ``skill_list``.

Nested fields stored as JSON text (the Hub's parquet does so for mixed-type rows) are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks.lifelong_agent.db import DbTask, gold_problem, nothing_passes
from pytest_jeval.benchmarks.lifelong_agent.os_tasks import OsTask, os_problem
from pytest_jeval.core.sample import REFUSED
from pytest_jeval.suite.dataset import DatasetLoadError

HUB = "csyq/LifelongAgentBench"
ENVIRONMENTS = ("db_bench", "os_interaction", "knowledge_graph")
ROUNDS = {"db_bench": 3, "os_interaction": 5, "knowledge_graph": 15}
"""Upstream's round limits (``max_round``) per environment."""
KG_REFUSAL = ("knowledge-graph tasks query a live SPARQL endpoint over Freebase (upstream's Virtuoso server); "
              "none runs offline here")
NESTED = ("table_info", "answer_info", "initialization_command_item", "evaluation_info", "skill_list",
          "entity_dict", "action_list", "answer_list")


class Options(BaseModel):
    """``[benchmarks.options]`` of ``lifelong-agent``."""

    model_config = ConfigDict(extra="forbid")

    environment: Literal["db_bench", "os_interaction", "knowledge_graph"] = "db_bench"
    """Which of upstream's environments the sequence is made of (upstream runs one per experiment)."""


def _environment(ctx: LoadContext) -> str:
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    return options.environment


def _decoded(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    for key in NESTED:
        value = out.get(key)
        if isinstance(value, str) and value[:1] in "[{":
            out[key] = json.loads(value)
    return out


def _read_file(path: Path) -> list[dict[str, Any]]:
    """The entries of one local file (``entry_dict.json``, JSON lines, or parquet), each with its ``sample_index``."""
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            import datasets

            table = datasets.load_dataset("parquet", data_files=str(path), split="train")
            return [dict(r) for r in table]
        text = path.read_text(encoding="utf-8")
        if name.endswith(".jsonl"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise DatasetLoadError(f"lifelong-agent: cannot read {path}: {exc}") from None
    if isinstance(data, dict):
        return [{"sample_index": str(key), **value} for key, value in data.items() if isinstance(value, dict)]
    if isinstance(data, list):
        return [r for r in data if isinstance(r, dict)]
    raise DatasetLoadError(f"lifelong-agent: {path} holds neither upstream's entry_dict (an object of entries) "
                           "nor a list of entries")


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """The entries of the chosen environment: from ``data_files``, else from the Hub's folder for it."""
    if files:
        return [row for path in files for row in _read_file(path)]
    environment = _environment(ctx)
    try:
        import datasets

        return [dict(r) for r in datasets.load_dataset(HUB, data_dir=environment, split="train")]
    except Exception as exc:
        raise DatasetLoadError(
            f"cannot load {HUB!r} (data_dir {environment!r}) from the Hugging Face Hub for 'lifelong-agent': "
            f"{type(exc).__name__}: {exc}. If this machine is offline, download the dataset elsewhere and set "
            "data_files to its files (upstream's entry_dict.json, JSON lines or the Hub's parquet)") from exc


def _kind(entry: dict[str, Any]) -> str:
    if "table_info" in entry and "answer_info" in entry:
        return "db_bench"
    if "evaluation_info" in entry:
        return "os_interaction"
    if "entity_dict" in entry or "action_list" in entry:
        return "knowledge_graph"
    raise ValueError("the entry is none of upstream's environments (no table_info/answer_info, evaluation_info "
                     "or entity_dict)")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One task of the chosen environment (entries of another are skipped); a task SQLite or the sandbox
    cannot run, and every knowledge-graph task, is refused with the reason."""
    entry = _decoded(row)
    kind = _kind(entry)
    if kind != _environment(ctx):
        return None
    rid = f"{kind}-{entry.get('sample_index', index)}"
    skills = [str(s) for s in entry.get("skill_list") or ()]
    metadata: dict[str, Any] = {"environment": kind, "skills": skills, "rounds": ROUNDS[kind]}
    if kind == "db_bench":
        task = DbTask.from_row(entry)
        columns = ", ".join(name for name, _ in task.table.columns)
        text = (f"{entry['instruction']}\nThe name of this table is {task.table.name}, and the headers of this "
                f"table are {columns}.")
        metadata.update(entry={"table_info": entry["table_info"], "answer_info": entry["answer_info"]},
                        query=task.is_query)
        problem = gold_problem(task)
        if problem is None:
            metadata["nothing_passes"] = nothing_passes(task)
        target: Any = [list(r) for r in task.direct] if task.direct is not None else {"md5": task.md5}
    elif kind == "os_interaction":
        os_task = OsTask.from_row(entry)
        text = str(entry["instruction"])
        metadata.update(entry={k: entry[k] for k in ("initialization_command_item", "evaluation_info")})
        problem = os_problem(os_task)
        target = "the task's evaluation command exits 0"
    else:
        text = str(entry.get("question") or entry.get("instruction") or "")
        problem = KG_REFUSAL
        target = entry.get("answer_list")
    if problem is not None:
        metadata[REFUSED] = problem
    return Sample(id=rid, input=text, target=target, subject=kind, metadata=metadata)
