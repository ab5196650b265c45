"""The claim evaluators against a scripted chat: faithfulness and chunk relevance."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from pytest_jeval.core.chat import Reply, TokenLogprob
from tests.support.evaluators import judge, scripted


def test_faithfulness_claims_and_zero_claims() -> None:
    chat, _ = scripted("Paris is in France -> Yes\nParis has 90 million people -> No\nIt is a capital -> Yes")
    j = judge("faithfulness", scale=[0, 4], chat=chat, output="...", context="Paris is the capital of France.")
    assert [c["supported"] for c in j.details["claims"]] == [True, False, True]
    assert j.details["share"] == pytest.approx(2 / 3) and j.predicted == 3
    none_chat, _ = scripted("NONE")
    j = judge("faithfulness", chat=none_chat, output="Hello!", context="ctx")
    assert j.predicted == 1 and j.details["claims"] == [] and j.probability_source == "no_claims" and j.distribution is None
    bad_chat, _ = scripted("I do not know what to do.")
    assert judge("faithfulness", chat=bad_chat, output="o", context="c").unscored


def test_faithfulness_level_distribution_from_claim_probabilities() -> None:
    text = "A -> Yes\nB -> No"
    probs = [(0.9, "Yes"), (0.4, "No")]  # P(yes) per claim
    tokens: list[TokenLogprob] = []
    for line, (p_yes, word) in zip(("A -> ", "\nB -> "), probs):
        tokens.append(TokenLogprob(line, 0.0))
        tokens.append(TokenLogprob(word, math.log(p_yes if word == "Yes" else 1 - p_yes),
                                   (("Yes", math.log(p_yes)), ("No", math.log(1 - p_yes)))))

    def chat(prompt: Any) -> Reply:
        return Reply(text=text, model="m", logprobs=tuple(tokens))

    j = judge("faithfulness", chat=chat, output="o", context="c")
    # 0-1 scale: level 1 when the share of supported claims is >= 0.5, i.e. at least one of two
    assert j.predicted == 1 and j.probability_source == "logprobs"
    assert j.distribution == pytest.approx({0: 0.1 * 0.6, 1: 1 - 0.1 * 0.6})


def test_chunk_relevance_one_call_per_item() -> None:
    chat, prompts = scripted("Chunk 1: Yes\nChunk 2: No\nChunk 3: Yes\nChunk 4: No")
    j = judge("chunk_relevance", chat=chat, input="What is X?", context=json.dumps(["a", "b", "c", "d"]))
    assert len(prompts) == 1 and j.details["relevant"] == [True, False, True, False] and j.predicted == 1
    assert judge("chunk_relevance", scale=[0, 4], chat=chat, input="q", context=["a", "b", "c", "d"]).predicted == 2
    short, _ = scripted("Chunk 1: Yes")
    assert judge("chunk_relevance", chat=short, input="q", context=["a", "b"]).unscored
    j = judge("chunk_relevance", chat=None, input="q", context=[])
    assert j.predicted == 0 and j.probability_source == "no_chunks"
