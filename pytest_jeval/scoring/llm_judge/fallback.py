"""Judge fallbacks: ask the ``[judge]`` model only when the regex scorers find nothing."""

from __future__ import annotations

import dataclasses

from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.chat import EndpointError
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.mcq import extract_choice_letter, score_choice

_EXTRACT_PROMPT = """You are given a multiple-choice question and a model's response to it.
Identify which option letter the response finally chose. Reply with the single letter only
({letters}), or NONE if the response does not commit to any option.

Question:
{question}

Response:
{response}"""


def judge_choice_letter(judge: ModelClient, question: str, response: str, valid: str) -> tuple[str | None, str]:
    """Ask the judge which letter ``response`` chose. Returns (letter or None, the judge's raw reply)."""
    prompt = _EXTRACT_PROMPT.format(letters=", ".join(valid), question=question, response=response)
    reply = judge.chat(prompt, max_tokens=8)
    text = reply.text.strip()
    if text.upper().startswith("NONE"):
        return None, text
    return extract_choice_letter(text, valid), text


def score_choice_with_fallback(
    reply_text: str, gold: str, valid: str, *, question: str, judge: ModelClient | None
) -> Score:
    """Regex extraction first; the judge is asked only when no letter is found. Never guesses."""
    result = score_choice(reply_text, gold, valid)
    if not result.unscored or judge is None:
        return result
    try:
        letter, raw = judge_choice_letter(judge, question, reply_text, valid)
    except EndpointError as exc:
        return dataclasses.replace(result, metadata={**result.metadata, "judge_error": str(exc)})
    meta = {**result.metadata, "extraction": "judge", "judge_output": raw, "candidate_letter": letter}
    if letter is None:
        return dataclasses.replace(result, metadata=meta)
    # scored after all: the regex's unscored reason would contradict the verdict (issue 33)
    regex_reason = meta.pop("unscored_reason", None)
    if regex_reason is not None:
        meta["regex"] = regex_reason
    return Score(correct=letter == gold, extracted=letter, expected=gold, metadata=meta)
