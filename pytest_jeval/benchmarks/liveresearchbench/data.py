"""LiveResearchBench's questions, checklists, reference reports and grading protocol data.

* Questions and checklists: the Hub dataset ``Salesforce/LiveResearchBench`` (config ``question_with_checklist``,
  split ``test``: the 80 public questions, CC-BY-NC-4.0), one row per checklist item with ``qid``, ``question``,
  ``checklist``, ``question_no_placeholder``, ``checklist_no_placeholder``; or local ``data_files`` in that schema.
  Rows are grouped by ``qid`` as upstream's ``load_liveresearchbench_dataset`` groups them. By default the static
  ``*_no_placeholder`` texts are used; ``realtime = true`` fills ``{{current_year}}``, ``{{last_year}}`` and
  ``{{date}}`` with the run's date (upstream's ``--use-realtime``).
* The rest comes from a clone of github.com/SalesforceAIResearch/LiveResearchBench (Apache-2.0), the suite's
  ``data_dir``: the reference reports ``data/reference_reports/qid_<qid>_report.md`` (depth's pairwise opponent),
  and the protocols' fixed parts, read from ``liveresearchbench/criteria/`` without running it:
  ``PRESENTATION_QUESTIONS`` (the fixed presentation checklist), ``CONSISTENCY_RUBRIC`` and ``CITATION_RUBRIC``
  (issue counts to scores), ``DEPTH_DIMENSIONS`` (the five depth dimensions), and the judges' prompts, which
  upstream's ``create_*_prompt`` functions build as f-strings (:data:`PROMPT_FUNCTIONS`, read with
  :func:`~pytest_jeval.benchmarks._research.upstream.fstring`). A clone without a prompt function gets this
  project's own wording for that protocol (:mod:`.protocols`), which every record then declares.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._research.upstream import UpstreamError, fstring, literal
from pytest_jeval.core.benchmark import Benchmark, LoadContext
from pytest_jeval.suite.dataset import DatasetLoadError, iter_rows, load_rows

__all__ = ["LAYOUT", "PROMPT_FUNCTIONS", "Protocol", "fill_placeholders", "grouped_rows", "prompt_templates",
           "protocol_data", "read_grouped", "reference_report"]

LAYOUT = ("a clone of github.com/SalesforceAIResearch/LiveResearchBench: data/reference_reports/qid_<qid>_report.md "
          "and liveresearchbench/criteria/{presentation,consistency,citation,depth}.py")
PROTOCOL_FILES = {
    "presentation_questions": ("liveresearchbench/criteria/presentation.py", "PRESENTATION_QUESTIONS"),
    "consistency_rubric": ("liveresearchbench/criteria/consistency.py", "CONSISTENCY_RUBRIC"),
    "citation_rubric": ("liveresearchbench/criteria/citation.py", "CITATION_RUBRIC"),
    "depth_dimensions": ("liveresearchbench/criteria/depth.py", "DEPTH_DIMENSIONS"),
}

_FILLED = frozenset({"query", "report_content", "current_date", "checklist_section"})
PROMPT_FUNCTIONS: dict[str, tuple[str, tuple[str, str | None], tuple[str, str | None], frozenset[str]]] = {
    "presentation": ("liveresearchbench/criteria/presentation.py", ("create_presentation_prompt", "system_prompt"),
                     ("create_presentation_prompt", "user_prompt"), _FILLED),
    "coverage": ("liveresearchbench/criteria/coverage.py", ("create_coverage_prompt", "system_prompt"),
                 ("create_coverage_prompt", "user_prompt"), _FILLED),
    "consistency": ("liveresearchbench/criteria/consistency.py", ("create_consistency_prompt", "system_prompt"),
                    ("create_consistency_prompt", "user_prompt"), _FILLED),
    "citation": ("liveresearchbench/criteria/citation.py", ("create_citation_prompt", "system_prompt"),
                 ("create_citation_prompt", "user_prompt"), _FILLED),
    "depth": ("liveresearchbench/criteria/depth.py", ("create_depth_comparison_prompt", None),
              ("create_depth_user_prompt", None), frozenset({"query", "report_a", "report_b"})),
}
"""Per protocol: the file, the (function, variable) of its system prompt and of its user prompt (``None``: the
function's return value), and the names filled in at grading time."""

Protocol = dict[str, Any]
"""The protocols' fixed parts by name (see :data:`PROTOCOL_FILES`), and ``prompts`` / ``prompt_sources``
(:func:`prompt_templates`)."""


def fill_placeholders(text: str, today: datetime.date) -> str:
    """Upstream's realtime mode: ``{{current_year}}``, ``{{last_year}}`` and ``{{date}}`` from ``today``."""
    for placeholder, value in (("{{current_year}}", str(today.year)), ("{{last_year}}", str(today.year - 1)),
                               ("{{date}}", today.strftime("%B %d, %Y"))):
        text = text.replace(placeholder, value)
    return text


def protocol_data(clone: Path) -> Protocol:
    """The fixed checklist, rubrics and depth dimensions from the clone; DatasetLoadError when one is missing."""
    found: Protocol = {}
    for key, (rel, name) in PROTOCOL_FILES.items():
        try:
            value = literal(clone / rel, name)
        except UpstreamError as exc:
            raise DatasetLoadError(f"liveresearchbench reads its grading protocols from data_dir: {exc}; data_dir "
                                   f"should be {LAYOUT}") from None
        want: type = dict if key in ("presentation_questions", "depth_dimensions") else str
        if not isinstance(value, want) or not value:
            raise DatasetLoadError(f"{clone / rel}: {name} should be a non-empty {want.__name__}")
        found[key] = value
    found["prompts"], found["prompt_sources"] = prompt_templates(clone)
    return found


def prompt_templates(clone: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each protocol's system and user prompt templates from the clone (where it has them), and where each
    protocol's prompts come from: upstream's function, or this project's own wording and why."""
    templates: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    for name, (rel, system, user, fill) in PROMPT_FUNCTIONS.items():
        try:
            templates[name] = {"system": fstring(clone / rel, system[0], system[1], set(fill)),
                               "user": fstring(clone / rel, user[0], user[1], set(fill))}
        except UpstreamError as exc:
            sources[name] = f"pytest-jeval's own wording ({exc})"
            continue
        sources[name] = f"upstream {rel}:{system[0]}()" + (f", {user[0]}()" if user[0] != system[0] else "")
    return templates, sources


def reference_report(clone: Path, qid: str) -> str | None:
    """The reference report of ``qid`` (``qid_<qid>_report.md``), or None when the clone has none."""
    name = qid if qid.startswith("qid_") else f"qid_{qid}"
    path = clone / "data" / "reference_reports" / f"{name}_report.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def grouped_rows(rows: Any, *, realtime: bool, today: datetime.date) -> list[dict[str, Any]]:
    """One ``{"qid", "question", "checklists"}`` per question, in first-seen order (upstream's grouping)."""
    grouped: dict[str, dict[str, Any]] = {}
    for row in iter_rows(rows):
        qid = str(row["qid"])
        if realtime:
            question = fill_placeholders(str(row.get("question") or ""), today)
            item = fill_placeholders(str(row.get("checklist") or ""), today)
        else:
            question = str(row.get("question_no_placeholder") or "")
            item = str(row.get("checklist_no_placeholder") or "")
        entry = grouped.setdefault(qid, {"qid": qid, "question": "", "checklists": []})
        if not entry["question"]:
            entry["question"] = question
        if item:
            entry["checklists"].append(item)
    return list(grouped.values())


def read_grouped(benchmark: Benchmark, files: Sequence[Path], ctx: LoadContext) -> Iterator[dict[str, Any]]:
    """``Benchmark.read_rows`` of ``benchmark``: the Hub rows (or ``data_files``) grouped by question, each with its
    reference report, the protocols' fixed parts and the run's date."""
    if ctx.local_dir is None:
        raise DatasetLoadError(f"liveresearchbench needs data_dir = {LAYOUT}")
    protocol = protocol_data(ctx.local_dir)
    options = ctx.options
    today = (datetime.date.fromisoformat(options.current_date) if getattr(options, "current_date", None)
             else datetime.date.today())
    rows = load_rows(benchmark, files, None, ctx.subset)
    for group in grouped_rows(rows, realtime=bool(getattr(options, "realtime", False)), today=today):
        yield {**group, "reference": reference_report(ctx.local_dir, group["qid"]), "protocol": protocol,
               "today": today.isoformat()}
