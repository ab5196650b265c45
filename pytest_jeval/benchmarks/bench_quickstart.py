"""quickstart: a small offline set (arithmetic, facts, multiple choice) for the bundled local model.

The data ships with the package (``data/quickstart.jsonl``); schema: ``id``, ``kind``
(numeric | text | choice), ``subject``, ``question``, ``answer``, ``options``, ``aliases``.
"""

from __future__ import annotations

import re
import string
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.scoring.mcq import score_choice
from pytest_jeval.scoring.numeric import score_numeric
from pytest_jeval.scoring.registry import answer_of, register_scorer


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One quickstart row."""
    return Sample(
        id=row["id"],
        input=row["question"],
        target=row["answer"],
        choices=tuple(row.get("options") or ()),
        subject=row.get("subject"),
        metadata={"kind": row["kind"], "aliases": list(row.get("aliases") or [])},
    )


def prompt(sample: Sample) -> str:
    """A short instruction per kind of question."""
    kind = sample.metadata["kind"]
    if kind == "numeric":
        return f"{sample.input} Answer with just the number."
    if kind == "choice":
        opts = "\n".join(f"{string.ascii_uppercase[i]}) {o}" for i, o in enumerate(sample.choices))
        return f"{sample.input}\n{opts}\nAnswer with the letter of the correct option."
    return f"{sample.input} Answer in a few words."


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


def score_text(reply: str, sample: Sample) -> Score:
    """Correct when the gold answer (or an alias) appears as whole words in the reply."""
    golds = [sample.target, *sample.metadata["aliases"]]
    if not reply.strip():
        return Score.unscorable("empty reply", expected=sample.target)
    hit = next((g for g in golds if _words(g) in _words(reply)), None)
    return Score(correct=hit is not None, extracted=hit or reply.strip()[:80], expected=sample.target,
                 metadata={"match": "contains", "accepted": golds})


BENCHMARK = Benchmark(
    name="quickstart",
    category="mixed",
    description="Offline smoke set: arithmetic, facts, multiple choice",
    bundled_files=("data/quickstart.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="quickstart",
    scoring="numeric / contains / mcq-letter",
    sample_count=36,
)


def test_quickstart(sample: Sample, response: Reply, score: Any) -> None:
    """Score by the item's kind."""
    kind = sample.metadata["kind"]
    if kind == "numeric":
        score(score_numeric(response.text, sample.target))
    elif kind == "choice":
        score(score_choice(response.text, sample.target, string.ascii_uppercase[: len(sample.choices)]))
    else:
        score(score_text(response.text, sample))


@register_scorer("quickstart", needs_sample=True)
def record_quickstart(record: dict[str, Any], sample: Sample) -> Score:
    """quickstart: numeric, letter or whole-word match by the sample's kind (as ``test_quickstart``)."""

    kind, answer = sample.metadata.get("kind"), answer_of(record)
    if kind == "numeric":
        return score_numeric(answer, sample.target)
    if kind == "choice":
        return score_choice(answer, sample.target, string.ascii_uppercase[: len(sample.choices)])
    result: Score = score_text(answer, sample)
    return result
