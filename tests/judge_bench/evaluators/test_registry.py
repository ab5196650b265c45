"""The built-in evaluators: registered with their kinds and scales; setup errors name the key."""

from __future__ import annotations

import pytest

from pytest_jeval.judge_bench import CaseSpec, JudgeSetupError, evaluator_classes, get_evaluator

#: The built-in evaluators as of this writing: none may disappear (new ones are welcome; their
#: properties are checked for every registered evaluator in tests/acceptance/test_installed_packages.py).
BUILTIN_MINIMUM = {
    "exact_match", "classification", "numeric", "json_match", "sql", "tool_call_accuracy", "trajectory",
    "factuality", "closed_qa", "security", "possible", "translation", "answer_correctness", "faithfulness",
    "chunk_relevance", "agent_goal", "llm_judge", "pairwise"}


def test_registry_declares_kinds_and_scales() -> None:
    classes = evaluator_classes()
    assert BUILTIN_MINIMUM <= set(classes), f"missing evaluators: {sorted(BUILTIN_MINIMUM - set(classes))}"
    assert get_evaluator("factuality").spec(None, None) == CaseSpec.choice("ABCDE")
    assert get_evaluator("llm_judge").spec(None, None).scale == (0, 4)
    assert get_evaluator("translation").spec("score", [1, 5]).labels == (1, 2, 3, 4, 5)
    assert get_evaluator("faithfulness").spec(None, None).scale == (0, 1)
    for name in BUILTIN_MINIMUM:
        cls = classes[name]
        assert cls.description, name
        assert cls.uses_model == (name not in {"exact_match", "classification", "numeric", "json_match", "sql",
                                               "tool_call_accuracy", "trajectory"}), name


@pytest.mark.parametrize(("name", "kind", "scale", "key"), [
    ("no_such_judge", None, None, "evaluator"),
    ("exact_match", "score", None, "kind"),
    ("exact_match", None, [0, 4], "scale"),
    ("llm_judge", None, [0, 4, 5], "scale"),
    ("llm_judge", None, [4, 0], "scale"),
    ("llm_judge", None, [0, 2.5], "scale"),
])
def test_setup_errors_name_the_key(name: str, kind: str | None, scale: list[float] | None, key: str) -> None:
    with pytest.raises(JudgeSetupError) as info:
        get_evaluator(name).spec(kind, scale)
    assert info.value.key == key
