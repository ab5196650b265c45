"""DeepResearch Bench's data and judge prompts, read from a clone of its repository (the suite's ``data_dir``).

Upstream keeps its data in the GitHub repository (github.com/Ayanami0730/deep_research_bench, Apache-2.0), not
on the Hub; ``data_dir`` is a clone (or its ``data/`` folder):

* ``data/prompt_data/query.jsonl``: ``{"id", "topic", "language", "prompt"}``, the 100 tasks (50 ``zh``, 50 ``en``);
* ``data/criteria_data/criteria.jsonl``: ``{"id", "prompt", "dimension_weight", "criterions"}``, per task the four
  dimensions' weights and each one's weighted criteria ``{"criterion", "explanation", "weight"}``;
* ``data/test_data/cleaned_data/reference.jsonl``: ``{"id", "prompt", "article"}``, the reference reports, cleaned
  of citations.

As upstream does, a task's criteria and reference are found by its ``prompt`` text. The judge prompts come from
the clone's ``prompt/score_prompt_{en,zh}.py`` (``generate_merged_score_prompt``) and ``prompt/clean_prompt.py``
(``clean_article_prompt_{en,zh}``), read with :func:`~pytest_jeval.benchmarks._research.upstream.literal`; a clone
without them (or whose file lacks the name) gets this project's own wording (:mod:`.prompts`), which every record
then declares. With a ``fact_fetcher``, FACT's prompts come from the clone's ``utils/{extract,deduplicate,validate}.py``
(:mod:`.fact`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._research.upstream import UpstreamError, literal
from pytest_jeval.benchmarks.liveresearch import prompts
from pytest_jeval.benchmarks.liveresearch.fact import fact_prompts
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.suite.dataset import DatasetLoadError

__all__ = ["FILES", "Templates", "data_root", "read_jsonl", "templates"]

FILES = {
    "query": "prompt_data/query.jsonl",
    "criteria": "criteria_data/criteria.jsonl",
    "reference": "test_data/cleaned_data/reference.jsonl",
}
LAYOUT = ("a clone of github.com/Ayanami0730/deep_research_bench (or its data/ folder): data/prompt_data/query.jsonl, "
          "data/criteria_data/criteria.jsonl and data/test_data/cleaned_data/reference.jsonl")


def data_root(local_dir: Path | None) -> Path:
    """The folder holding ``prompt_data/``, ``criteria_data/`` and ``test_data/`` (the clone's ``data/``)."""
    if local_dir is None:
        raise DatasetLoadError("liveresearch needs its data: set data_dir to " + LAYOUT)
    for root in (local_dir / "data", local_dir):
        if all((root / rel).is_file() for rel in FILES.values()):
            return root
    missing = [rel for rel in FILES.values() if not (local_dir / "data" / rel).is_file()]
    raise DatasetLoadError(f"data_dir {local_dir} lacks data/{', data/'.join(missing)}; it should be {LAYOUT}")


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines file; DatasetLoadError naming the line of a broken one."""
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DatasetLoadError(f"{path}:{n} is not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise DatasetLoadError(f"{path}:{n} is not a JSON object")
            yield row


class Templates(dict[str, str]):
    """The judge prompts by name (``score_en``, ``score_zh``, ``clean_en``, ``clean_zh``), and where each came from."""

    sources: dict[str, str]


def templates(local_dir: Path) -> Templates:
    """The score and clean prompts: the clone's, else this project's own (``sources`` says which, per prompt)."""
    found = Templates()
    found.sources = {}
    wanted = {
        "score_en": ("prompt/score_prompt_en.py", "generate_merged_score_prompt", prompts.SCORE),
        "score_zh": ("prompt/score_prompt_zh.py", "generate_merged_score_prompt", prompts.SCORE),
        "clean_en": ("prompt/clean_prompt.py", "clean_article_prompt_en", prompts.CLEAN),
        "clean_zh": ("prompt/clean_prompt.py", "clean_article_prompt_zh", prompts.CLEAN),
    }
    for key, (rel, name, own) in wanted.items():
        path = local_dir / rel
        why = f"the clone has no {rel}"
        value: Any = None
        if path.is_file():
            try:
                value = literal(path, name)
            except UpstreamError as exc:
                why = str(exc)
        if isinstance(value, str):
            found[key], found.sources[key] = value, f"upstream {rel}:{name}"
        else:
            found[key], found.sources[key] = own, f"pytest-jeval's own wording ({why})"
    return found


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterator[dict[str, Any]]:
    """One row per task of ``query.jsonl`` (in file order, ``language`` filtered by the options), joined with its
    criteria and reference by prompt text; a task without either is an error naming it."""
    if files:
        raise DatasetLoadError("liveresearch reads its data from data_dir (a clone of the repository), "
                               "not from data_files")
    root = data_root(ctx.local_dir)
    assert ctx.local_dir is not None
    clone = root.parent if root != ctx.local_dir else ctx.local_dir
    texts = templates(clone)
    fact: dict[str, str] | None = None
    if getattr(ctx.options, "fact_fetcher", None):
        try:
            fact = fact_prompts(clone)
        except UpstreamError as exc:
            raise DatasetLoadError(f"FACT reads its prompts from the clone: {exc}") from None
    criteria = {row.get("prompt"): row for row in read_jsonl(root / FILES["criteria"])}
    references = {row.get("prompt"): row for row in read_jsonl(root / FILES["reference"])}
    language = getattr(ctx.options, "language", "all")
    for task in read_jsonl(root / FILES["query"]):
        if language != "all" and task.get("language") != language:
            continue
        prompt = task.get("prompt")
        for what, table in (("criteria", criteria), ("reference article", references)):
            if prompt not in table:
                raise DatasetLoadError(f"task {task.get('id')!r} of query.jsonl has no {what} (matched by prompt text)")
        yield {"task": task, "criteria": criteria[prompt], "reference": references[prompt]["article"],
               "templates": dict(texts), "template_sources": dict(texts.sources), "fact_prompts": fact}
