"""The ``pairwise`` evaluator against a scripted chat: both orders, debiased."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_jeval.core.chat import Reply
from pytest_jeval.judge_bench import CaseSpec, GoldItem, get_evaluator
from pytest_jeval.scoring.judging.registry import EvaluatorError
from tests.support.evaluators import judge, scripted


def test_pairwise_runs_both_orders_and_debiases() -> None:
    # position-biased judge: always "A" with 0.8 -> the orders disagree -> tie, inconsistent
    chat, prompts = scripted("Response A is better. A", p={"A": 0.8, "B": 0.2})
    j = judge("pairwise", chat=chat, input="Write a haiku", output_1="first text", output_2="second text")
    assert len(prompts) == 2
    assert prompts[0].index("first text") < prompts[0].index("second text")
    assert prompts[1].index("second text") < prompts[1].index("first text")
    assert j.details["order_verdicts"] == ["1", "2"] and j.extra_fields["position_consistent"] is False
    assert j.predicted == "tie" and j.distribution == pytest.approx({"1": 0.5, "2": 0.5, "tie": 0.0})
    # consistent judge: prefers output 1 in both orders
    answers = iter(["A", "B"])

    def consistent(prompt: Any) -> Reply:
        return Reply(text=f"Better: {next(answers)}", model="m")

    j = judge("pairwise", chat=consistent, input="q", output=json.dumps(["one", "two"]))
    assert j.predicted == "1" and j.extra_fields["position_consistent"] is True and j.distribution is None
    with pytest.raises(EvaluatorError):
        get_evaluator("pairwise").first_prompt(GoldItem(input="q", output="only one"), CaseSpec.choice(("1", "2", "tie")))
