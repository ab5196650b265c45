"""The ``pairwise`` evaluator: which of two outputs is better, run in both orders to cancel position bias.

Gold and predicted labels are ``"1"`` (the first output is better), ``"2"`` (the
second) or ``"tie"``. Each pair is judged twice: as (output 1 = A, output 2 = B)
and swapped (output 2 = A, output 1 = B). The judge answers ``A``, ``B`` or
``tie``; each order's verdict is mapped back to ``"1"``/``"2"``/``"tie"``.

* **Position-debiased distribution**: the mean of the two orders' mapped
  distributions. Without logprobs, each order counts as a one-hot distribution
  for the decision, and the probability stays null.
* **Prediction**: the label with the highest debiased probability; when the
  highest value is shared (for example the orders disagree, 1 vs 2), ``"tie"``.
* **Position consistency**: whether both orders gave the same mapped verdict;
  recorded per item as ``position_consistent``.

The two outputs come from the ``output_1`` and ``output_2`` columns (LLMBar's
layout) or from ``output`` given as a list of two strings.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pytest_jeval.core.chat import PromptLike
from pytest_jeval.judge_bench.evaluators.code import first_text
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.probability import SOURCE_LOGPROBS, LabelSet, Verdict, combine_sources, read_verdict
from pytest_jeval.scoring.judging.registry import Chat, Evaluator, EvaluatorError, GoldItem, Judgment, register

LABELS = ("1", "2", "tie")
POSITION_LABELS = LabelSet(("A", "B", "tie"), ("A", "B", "tie"))
_MAP = {False: {"A": "1", "B": "2", "tie": "tie"}, True: {"A": "2", "B": "1", "tie": "tie"}}


def pair_of(item: GoldItem) -> tuple[str, str]:
    """The two candidate outputs of a pairwise item."""
    if "output_1" in item.extra and "output_2" in item.extra:
        return first_text(item.extra["output_1"]), first_text(item.extra["output_2"])
    out = item.output
    if isinstance(out, str):
        try:
            out = json.loads(out)
        except ValueError:
            pass
    if isinstance(out, (list, tuple)) and len(out) == 2:
        return first_text(out[0]), first_text(out[1])
    raise EvaluatorError("a pairwise item needs output_1 and output_2 columns, or output as a list of two strings")


def _mapped(verdict: Verdict, swapped: bool) -> tuple[str | None, dict[str, float] | None]:
    table = _MAP[swapped]
    label = table[verdict.value] if verdict.value is not None else None
    dist = None
    if verdict.distribution is not None:
        dist = {table[k]: p for k, p in verdict.distribution.items()}
    return label, dist


def decide(distribution: dict[str, float]) -> str:
    """The label with the highest probability; ``tie`` when the highest value is shared."""
    best = max(distribution.values())
    winners = [label for label in LABELS if abs(distribution.get(label, 0.0) - best) <= 1e-12]
    return winners[0] if len(winners) == 1 else "tie"


@register
class Pairwise(Evaluator):
    """A vs B with a tie option, in both orders, position-debiased."""

    name = "pairwise"
    description = ("Which of two outputs (output_1, output_2) better follows the input: 1, 2 or tie. Every pair is run "
                   "in both orders; the position-debiased probability and position consistency are recorded.")
    uses_model = True
    kinds = ("choice",)
    choice_labels = LABELS
    gold_aliases: ClassVar[dict[str, str]] = {
        "a": "1", "b": "2", "output_1": "1", "output_2": "2", "equal": "tie", "t": "tie"}
    required_columns = ()

    def prompt(self, item: GoldItem, swapped: bool) -> str:
        """The comparison prompt, with the outputs in the given order."""
        first, second = pair_of(item)
        a, b = (second, first) if swapped else (first, second)
        return (
            "You are a fair judge. Compare two responses to the same instruction and decide which one follows the "
            "instruction better: honestly, precisely and helpfully. Do not let the order of the responses, their "
            "length or their style influence you.\n\n"
            f"[Instruction]:\n{item.input}\n\n[Response A]:\n{a}\n\n[Response B]:\n{b}\n\n"
            "Which response is better? Write your answer on the last line as a single word: A, B or tie."
        )

    def first_prompt(self, item: GoldItem, spec: CaseSpec) -> PromptLike | None:
        """The original-order prompt (prefetched); the swapped one is sent by :meth:`run`."""
        return self.prompt(item, swapped=False)

    def run(self, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
        """Judge both orders and combine them."""
        replies = [chat(self.prompt(item, swapped=s)) for s in (False, True)]
        verdicts = [read_verdict(r, POSITION_LABELS) for r in replies]
        raw = [r.text for r in replies]
        mapped = [_mapped(v, s) for v, s in zip(verdicts, (False, True))]
        details: dict[str, Any] = {"order_verdicts": [m[0] for m in mapped],
                                   "order_distributions": [m[1] for m in mapped]}
        if any(label is None for label, _ in mapped):
            bad = "original" if mapped[0][0] is None else "swapped"
            return self.unscored(f"the {bad}-order reply holds none of the labels A, B, tie", raw=raw, **details)
        source = combine_sources(verdicts)
        if source == SOURCE_LOGPROBS:
            dists = [m[1] for m in mapped]
            assert dists[0] is not None and dists[1] is not None
            debiased = {label: (dists[0].get(label, 0.0) + dists[1].get(label, 0.0)) / 2 for label in LABELS}
            masses = [v.allowed_mass for v in verdicts if v.allowed_mass is not None]
            mass: float | None = min(masses) if masses else None
            distribution: dict[str, float] | None = debiased
        else:
            debiased = {label: sum(0.5 for lab, _ in mapped if lab == label) for label in LABELS}
            distribution, mass = None, None
        consistent = mapped[0][0] == mapped[1][0]
        return Judgment(decide(debiased), distribution=distribution, probability_source=source, allowed_mass=mass,
                        raw=tuple(raw), details=details, extra_fields={"position_consistent": consistent})
