"""GPQA: graduate-level, "Google-proof" four-option science questions.

Hub: ``Idavidrein/gpqa`` (gated CSV), configs ``gpqa_diamond`` (198 rows, the
default), ``gpqa_main`` (448) and ``gpqa_extended`` (546); one split, ``train``.
Pick one with the suite's ``subset`` (the hub config name, e.g. ``subset = "gpqa_main"``);
it is recorded in each sample's metadata. Columns used: ``Question``,
``Correct Answer``, ``Incorrect Answer 1..3``, ``Record ID`` (the record id),
``Subdomain`` (per_subject) and ``High-level domain``.

The dataset lists the correct answer first. The options are therefore SHUFFLED
per record, with a permutation seeded by the suite seed and the record id only
(so it does not depend on ``max_samples``, row order or other records), and the
gold letter is wherever the correct answer lands. The reference never shuffled,
so its gold was always A.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Sequence
from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample
from pytest_jeval.scoring.choice_prompt import MCQ_PROMPT, choice_prompt, score_choice_sample

PROMPT = MCQ_PROMPT

def _clean(value: Any) -> str:
    return str(value).strip() if value is not None else ""


def shuffle_options(
    correct: str, incorrect: Sequence[str], *, seed: int, record_id: str
) -> tuple[tuple[str, ...], str]:
    """The options in a per-record seeded order, and the letter of ``correct`` among them.

    The permutation depends only on ``seed`` and ``record_id``.
    """
    options = [correct, *incorrect]
    digest = hashlib.sha256(f"gpqa\x00{seed}\x00{record_id}".encode()).digest()
    order = list(range(len(options)))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    shuffled = tuple(options[i] for i in order)
    return shuffled, string.ascii_uppercase[order.index(0)]


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One GPQA row with its options shuffled; rows without four non-empty options are skipped."""
    question = str(row["Question"]).strip()
    correct = _clean(row["Correct Answer"])
    incorrect = [_clean(row[f"Incorrect Answer {i}"]) for i in (1, 2, 3)]
    if not question or not correct or not all(incorrect):
        return None
    record_id = str(row.get("Record ID") or "").strip() or ctx.default_id(index)
    options, gold = shuffle_options(correct, incorrect, seed=ctx.seed, record_id=record_id)
    domain = row.get("High-level domain")
    return Sample(
        id=record_id,
        input=question,
        target=gold,
        choices=options,
        subject=(str(row.get("Subdomain") or "").strip() or (str(domain).strip() if domain else None)),
        metadata={"correct_answer": correct, "domain": domain, "subset": ctx.subset or "gpqa_diamond"},
    )


def prompt(sample: Sample) -> str:
    """Question and the shuffled options lettered A-D."""
    return choice_prompt(sample, PROMPT)


BENCHMARK = Benchmark(
    name="gpqa",
    category="reasoning",
    description="GPQA graduate-level science MCQ (diamond/main/extended), options shuffled per record",
    dataset=HubDataset(path="Idavidrein/gpqa", name="gpqa_diamond", split="train", id_column="Record ID"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="mcq",
    scoring="mcq-letter (regex, judge fallback)",
    sample_count=198,
)


def test_gpqa(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The final stated letter equals the gold letter after the shuffle."""
    score(score_choice_sample(sample, response.text, judge, PROMPT))
