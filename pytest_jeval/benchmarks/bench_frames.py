"""FRAMES: multi-hop factual questions whose answer needs several Wikipedia articles.

Hub: ``google/frames-benchmark`` (one file ``test.tsv``, split ``test``, 824 rows);
schema ``Unnamed: 0`` (the pandas row index), ``Prompt`` (the question),
``Answer`` (the gold), ``wikipedia_link_1`` ... ``wikipedia_link_10``,
``wikipedia_link_11+``, ``reasoning_types`` (e.g.
``"Numerical reasoning | Tabular reasoning | Multiple constraints"``) and
``wiki_links`` (a Python-literal list of the article URLs). Ids are
``frames-<row index>``.

The prompt lists the relevant article URLs, as the reference did (no article
text is retrieved). The ``[judge]`` returns the reference's structured verdict
(``extracted_final_answer: ... / reasoning: ... / correct: yes|no``); the
``correct:`` line decides, with a lone ``TRUE``/``FALSE`` token as the fallback.
Without a judge the items are unscored.

``per_subject`` has one entry per reasoning type: a question with several
types counts in each of them (the record's ``subject`` holds all its types,
joined by `` | ``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample
from pytest_jeval.scoring.llm_judge.prompts import structured_score

PROMPT = """Please answer the question below. You should:

- Return only your answer, which should be a number, or a short phrase with as few words as possible, or a comma separated list of numbers and/or strings.
- If the answer is a number, return only the number without any units unless specified otherwise.
- If the answer is a string, don't include articles, and don't use abbreviations (e.g. for states).
- If the answer is a comma separated list, apply the above rules to each element in the list.
- This question may require multi-hop reasoning across multiple Wikipedia articles.{links}

Here is the question:

{question}"""  # noqa: E501 - prompt text kept verbatim


def reasoning_types(raw: Any) -> list[str]:
    """The reasoning types of a row (``"A | B"`` on the hub), in their listed order."""
    if isinstance(raw, (list, tuple)):
        parts = [str(p) for p in raw]
    else:
        parts = re.split(r"\s*\|\s*", str(raw or ""))
    return [p.strip() for p in parts if p and p.strip()]


def wiki_links(row: dict[str, Any]) -> list[str]:
    """Article URLs: the ``wiki_links`` list, else the ``wikipedia_link_*`` columns."""
    raw = row.get("wiki_links")
    if isinstance(raw, list):
        return [str(x) for x in raw if x]
    if isinstance(raw, str) and raw.strip():
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, (list, tuple)):
            return [str(x) for x in value if x]
    cols = sorted((k for k in row if k.startswith("wikipedia_link_")),
                  key=lambda k: int(re.sub(r"\D", "", k) or 0))
    return [str(row[k]) for k in cols if row[k] not in (None, "")]


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One FRAMES question; subject holds all its reasoning types."""
    types = reasoning_types(row.get("reasoning_types"))
    return Sample(
        id=ctx.default_id(index),
        input=str(row["Prompt"]),
        target=str(row["Answer"]),
        subject=" | ".join(types) if types else None,
        metadata={"reasoning_types": types, "wiki_links": wiki_links(row)},
    )


def prompt(sample: Sample) -> str:
    """The reference's answer instructions, the article URLs, then the question."""
    links = sample.metadata.get("wiki_links") or []
    block = ("\n\nRelevant Wikipedia articles that may help answer this question:\n"
             + "\n".join(f"- {u}" for u in links)) if links else ""
    return PROMPT.format(links=block, question=sample.input)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``per_subject`` by single reasoning type (a question counts in each of its types)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        for t in reasoning_types(r.get("subject")):
            groups.setdefault(t, []).append(r)
    per_type = {}
    for name in sorted(groups):
        rs = groups[name]
        errors = sum(1 for r in rs if r.get("error") is not None)
        answered = len(rs) - errors
        correct = sum(1 for r in rs if r.get("error") is None and r.get("is_correct") is True)
        unscored = sum(1 for r in rs if r.get("error") is None and r.get("is_correct") is None)
        per_type[name] = {
            "accuracy": correct / answered if answered else None,
            "total": float(len(rs)),
            "scored": float(answered - unscored),
            "correct": float(correct),
            "errors": float(errors),
        }
    return {"per_subject": per_type}


BENCHMARK = Benchmark(
    name="frames",
    category="short-answer",
    description="FRAMES multi-hop Wikipedia questions, LLM-judged (structured verdict)",
    dataset=HubDataset(path="google/frames-benchmark", split="test"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="judge",
    scoring="llm-judge (structured verdict)",
    needs_judge=True,
    sample_count=824,
    summarize_extra=summarize,
)


def test_frames(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The judge finds the reply equivalent to the gold answer."""
    score(structured_score(judge, question=sample.input, response=response.text, correct_answer=sample.target))
