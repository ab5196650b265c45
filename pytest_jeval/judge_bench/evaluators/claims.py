"""LLM evaluators with one verdict per line: ``faithfulness`` (claims) and ``chunk_relevance`` (chunks).

Both ask one call for a Yes/No verdict per line and turn the share of Yes into a
level with :meth:`~pytest_jeval.scoring.judging.cases.CaseSpec.level_from_fraction`. When
every verdict has a probability, the level distribution follows from the
per-line probabilities p_i(Yes), taken as independent (Poisson-binomial count of
Yes verdicts, each count k of n mapped to the level of k/n).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_jeval.core.chat import PromptLike
from pytest_jeval.judge_bench.evaluators.code import first_text
from pytest_jeval.judge_bench.evaluators.llm import YES_NO
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.probability import (
    SOURCE_LOGPROBS,
    Verdict,
    combine_sources,
    count_distribution,
    read_line_verdicts,
)
from pytest_jeval.scoring.judging.registry import Chat, Evaluator, GoldItem, Judgment, register

SOURCE_NO_CLAIMS = "no_claims"
SOURCE_NO_CHUNKS = "no_chunks"
_NONE = re.compile(r"(?<![A-Za-z])NONE(?![A-Za-z])", re.IGNORECASE)
_CHUNK_NO = re.compile(r"chunk\s*#?\s*(\d+)", re.IGNORECASE)


def level_judgment(spec: CaseSpec, verdicts: list[Verdict], raw: str, details: dict[str, Any]) -> Judgment:
    """The level from the share of Yes verdicts, with its distribution when every verdict has one."""
    n = len(verdicts)
    yes = sum(1 for v in verdicts if v.value is True)
    level = spec.level_from_fraction(yes / n)
    source = combine_sources(verdicts)
    distribution: dict[Any, float] | None = None
    mass: float | None = None
    if source == SOURCE_LOGPROBS:
        p_yes = [v.distribution[True] for v in verdicts if v.distribution is not None]
        distribution = {lv: 0.0 for lv in spec.labels}
        for k, p in enumerate(count_distribution(p_yes)):
            distribution[spec.level_from_fraction(k / n)] += p
        mass = min(v.allowed_mass for v in verdicts if v.allowed_mass is not None)
    stated = [None if v.distribution is None else v.distribution[True] for v in verdicts]
    details = dict(details, share=yes / n, p_yes=stated)
    return Judgment(level, distribution=distribution, probability_source=source, allowed_mass=mass, raw=(raw,),
                    details=details)


@register
class Faithfulness(Evaluator):
    """Are the claims in the output supported by the context?"""

    name = "faithfulness"
    description = ("Are the claims in the output grounded in the context? Share of supported claims mapped to the "
                   "scale; an output with zero claims is faithful (top level).")
    uses_model = True
    kinds = ("score",)
    default_scale = (0, 1)
    required_columns = ("output", "context")

    def first_prompt(self, item: GoldItem, spec: CaseSpec) -> PromptLike | None:
        """The claim-extraction-and-check prompt."""
        return (
            "Split the OUTPUT into its individual factual claims and check each claim against the CONTEXT.\n"
            "Write one line per claim, in the form:\n<claim> -> Yes   (the context supports the claim)\n"
            "<claim> -> No    (the context does not support the claim)\n"
            "Write nothing else. If the output makes no factual claim at all, write the single word NONE.\n\n"
            f"[CONTEXT]: {first_text(item.context)}\n\n[OUTPUT]: {first_text(item.output)}"
        )

    def run(self, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
        """Score = supported / claims; zero claims gives the top level with no probability (``no_claims``)."""
        prompt = self.first_prompt(item, spec)
        assert prompt is not None
        reply = chat(prompt)
        lines = read_line_verdicts(reply, YES_NO)
        if not lines:
            if _NONE.search(reply.text or ""):
                return Judgment(spec.level_from_fraction(1.0), probability_source=SOURCE_NO_CLAIMS, raw=(reply.text,),
                                details={"claims": [], "share": 1.0})
            return self.unscored("the faithfulness reply lists no claim with a Yes/No verdict and is not NONE",
                                 raw=[reply.text])
        claims = [{"claim": before.rstrip(" -=>:|"), "supported": v.value} for before, v in lines]
        return level_judgment(spec, [v for _, v in lines], reply.text, {"claims": claims})


def chunks_of(context: Any) -> list[str]:
    """Retrieved chunks: a list, a JSON list in a string, or one string as a single chunk."""
    if context is None:
        return []
    if isinstance(context, str):
        try:
            parsed = json.loads(context)
        except ValueError:
            return [context] if context.strip() else []
        context = parsed if isinstance(parsed, list) else [context]
    if isinstance(context, (list, tuple)):
        return [first_text(c) for c in context]
    return [first_text(context)]


@register
class ChunkRelevance(Evaluator):
    """One yes/no relevance probability per retrieved chunk, all in one call."""

    name = "chunk_relevance"
    description = ("Every retrieved chunk in `context` gets its own yes/no probability of being relevant to the input, "
                   "in one call; the score is the share of relevant chunks (precision) mapped to the scale.")
    uses_model = True
    kinds = ("score",)
    default_scale = (0, 1)
    required_columns = ("context",)

    def first_prompt(self, item: GoldItem, spec: CaseSpec) -> PromptLike | None:
        """The per-chunk prompt; None (no call) when there are no chunks."""
        chunks = chunks_of(item.context)
        if not chunks:
            return None
        listed = "\n\n".join(f"[Chunk {i}]\n{c}" for i, c in enumerate(chunks, 1))
        form = "\n".join(f"Chunk {i}: Yes or No" for i in range(1, len(chunks) + 1))
        return (
            f"[QUESTION]: {item.input}\n\nBelow are {len(chunks)} retrieved chunks. For each chunk decide whether it "
            "is relevant to answering the question.\n\n"
            f"{listed}\n\nAnswer with exactly {len(chunks)} lines, one per chunk, in order, and nothing else:\n{form}"
        )

    def run(self, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
        """Precision = relevant chunks / chunks; zero chunks gives the lowest level without a call (``no_chunks``)."""
        chunks = chunks_of(item.context)
        if not chunks:
            return Judgment(spec.level_from_fraction(0.0), probability_source=SOURCE_NO_CHUNKS, details={"chunks": []})
        prompt = self.first_prompt(item, spec)
        assert prompt is not None
        reply = chat(prompt)
        lines = read_line_verdicts(reply, YES_NO)
        numbered: dict[int, Verdict] = {}
        for position, (before, verdict) in enumerate(lines, 1):
            m = _CHUNK_NO.search(before)
            numbered.setdefault(int(m.group(1)) if m else position, verdict)
        if sorted(numbered) != list(range(1, len(chunks) + 1)):
            reason = f"expected a Yes/No verdict for each of {len(chunks)} chunks, got {len(lines)}"
            return self.unscored(reason, raw=[reply.text])
        verdicts = [numbered[i] for i in range(1, len(chunks) + 1)]
        return level_judgment(spec, verdicts, reply.text, {"relevant": [v.value for v in verdicts]})
