"""The LLM evaluators against a scripted chat: choices with probabilities, the prompts they send."""

from __future__ import annotations

import pytest

from tests.support.evaluators import judge, scripted


def test_factuality_choice_with_probabilities() -> None:
    chat, prompts = scripted("The submission adds detail: B", p={"B": 0.7, "C": 0.2, "X": 0.1})
    j = judge("factuality", chat=chat, input="Q?", output="Paris, France's capital", expected="Paris")
    assert j.predicted == "B" and j.distribution["B"] == pytest.approx(0.7 / 0.9) and j.allowed_mass == pytest.approx(0.9)
    assert "[Expert answer]: Paris" in prompts[0] and "(E)" in prompts[0]


def test_llm_reply_outside_labels_keeps_raw_text() -> None:
    chat, _ = scripted("I would rather not say.")
    j = judge("closed_qa", chat=chat, input="Q?", output="A")
    assert j.unscored and j.raw == ("I would rather not say.",) and "none of the labels" in (j.unscored_reason or "")


def test_translation_names_both_languages() -> None:
    chat, prompts = scripted("Minor issues. 3", p={"3": 0.6, "4": 0.3, "2": 0.1})
    j = judge("translation", chat=chat, input="Hello", output="Hallo", source_language="en", target_language="de")
    assert j.predicted == 3 and "from English into German" in prompts[0]


def test_security_possible_agent_goal_answer_correctness_llm_judge_prompts() -> None:
    for name, extra in [("security", {}), ("possible", {}), ("agent_goal", {}), ("answer_correctness", {"expected": "x"}),
                        ("llm_judge", {"criteria": "Be concise."})]:
        chat, prompts = scripted("Fine. 1" if name in ("answer_correctness", "llm_judge") else "Fine. Yes")
        j = judge(name, chat=chat, input="task", output="out", **extra)
        assert j.predicted in (True, 1), name
        assert "out" in prompts[0] and j.probability_source == "no_logprobs"
