"""Judge prompts and verdict parsers shared by the LLM-judged benchmarks.

Three verdict formats are used:

* **Structured verdict** (FRAMES, HLE, GAIA fallback, natural-reasoning): the judge
  writes ``extracted_final_answer: ...``, ``reasoning: ...`` and ``correct: yes|no``.
  :func:`parse_structured_verdict` reads the LAST ``correct:`` line; only when there
  is none does it fall back to bare ``TRUE``/``FALSE`` tokens, and then only when
  exactly one of the two appears. Anything else is "no verdict" (``None``).
* **SimpleQA grade** (OpenAI simple-evals grader): the judge answers ``A`` (CORRECT),
  ``B`` (INCORRECT) or ``C`` (NOT_ATTEMPTED). :func:`parse_simpleqa_grade` never takes
  the first capital letter of the reply (the reference's regex did, so "B" inside any
  word read as a grade).
* **Pairwise verdict** (WildChat): ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``,
  ``[[B>>A]]``. :func:`parse_pairwise_verdict` accepts a reply only when all the
  verdict tokens in it agree (as Arena-Hard does).

Judges are always called through a :class:`~pytest_jeval.calls.client.ModelClient`
(the ``judge`` fixture); this module never builds HTTP requests.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.chat import EndpointError
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.mcq import extract_choice_letter

__all__ = [
    "PAIRWISE_SYSTEM_PROMPT",
    "PAIRWISE_USER_PROMPT",
    "PAIRWISE_VERDICTS",
    "SIMPLEQA_GRADER_TEMPLATE",
    "SIMPLEQA_GRADES",
    "STRUCTURED_VERDICT_PROMPT",
    "StructuredVerdict",
    "judge_structured",
    "pairwise_outcome",
    "parse_pairwise_verdict",
    "parse_simpleqa_grade",
    "parse_structured_verdict",
    "structured_score",
]

# --------------------------------------------------------------------------- structured verdict

STRUCTURED_VERDICT_PROMPT = """Judge whether the following [response] to [question] is correct or not based on the precise and unambiguous [correct_answer] below.

[question]: {question}

[response]: {response}

Your judgement must be in the format and criteria specified below:

extracted_final_answer: The final exact answer extracted from the [response]. Put the extracted answer as 'None' if there is no exact, final answer to extract from the response.

[correct_answer]: {correct_answer}

reasoning: Explain why the extracted_final_answer is correct or incorrect based on [correct_answer], focusing only on if there are meaningful differences between [correct_answer] and the extracted_final_answer. Do not comment on any background to the problem, do not attempt to solve the problem, do not argue for any answer different than [correct_answer], focus only on whether the answers match.{guidance}

correct: Answer 'yes' if extracted_final_answer matches the [correct_answer] given above, or is within a small margin of error for numerical problems. Answer 'no' otherwise, i.e. if there is any inconsistency, ambiguity, non-equivalency, or if the extracted answer is incorrect."""
"""The structured-verdict judge prompt (after the HLE / FRAMES reference judges)."""

_CORRECT_LINE = re.compile(r"^[\s>*_`#\-]*correct[\s*_`]*:[\s*_`\"']*(yes|no)\b", re.IGNORECASE | re.MULTILINE)
_EXTRACTED_LINE = re.compile(r"^[\s>*_`#\-]*extracted_final_answer[\s*_`]*:[\s*_`]*(.*)$", re.IGNORECASE | re.MULTILINE)
_BOOL_TOKEN = re.compile(r"\b(TRUE|FALSE)\b")


@dataclasses.dataclass(frozen=True)
class StructuredVerdict:
    """A parsed structured verdict."""

    correct: bool | None
    """True/False, or None when the reply holds no usable verdict."""
    extracted: str | None
    """The judge's ``extracted_final_answer``, if it gave one."""
    how: str
    """``correct_line``, ``bool_token`` or ``none``."""


def parse_structured_verdict(text: str) -> StructuredVerdict:
    """Read ``correct: yes|no`` (last such line); else a lone ``TRUE``/``FALSE`` token; else no verdict."""
    text = text or ""
    extracted_matches = _EXTRACTED_LINE.findall(text)
    extracted = extracted_matches[-1].strip().strip("*_`").strip() if extracted_matches else None
    lines = _CORRECT_LINE.findall(text)
    if lines:
        return StructuredVerdict(lines[-1].lower() == "yes", extracted or None, "correct_line")
    tokens = set(_BOOL_TOKEN.findall(text))
    if len(tokens) == 1:
        return StructuredVerdict(tokens.pop() == "TRUE", extracted or None, "bool_token")
    return StructuredVerdict(None, extracted or None, "none")


def judge_structured(
    judge: ModelClient,
    *,
    question: str,
    response: str,
    correct_answer: str,
    guidance: str = "",
) -> tuple[StructuredVerdict, dict[str, Any]]:
    """Ask the judge for a structured verdict. Returns the verdict and scoring metadata.

    An endpoint failure gives ``correct=None`` and ``judge_error`` in the metadata.
    """
    prompt = STRUCTURED_VERDICT_PROMPT.format(
        question=question, response=response, correct_answer=correct_answer,
        guidance=("\n\n" + guidance) if guidance else "",
    )
    try:
        reply = judge.chat(prompt)
    except EndpointError as exc:
        return StructuredVerdict(None, None, "none"), {"judge_error": str(exc), "judge_model": judge.name}
    verdict = parse_structured_verdict(reply.text)
    meta = {
        "judge_model": judge.name,
        "judge_output": reply.text,
        "judge_verdict": verdict.correct,
        "judge_parse": verdict.how,
        "judge_extracted": verdict.extracted,
    }
    return verdict, meta


def structured_score(
    judge: ModelClient | None,
    *,
    question: str,
    response: str,
    correct_answer: str,
    guidance: str = "",
    metadata: dict[str, Any] | None = None,
) -> Score:
    """A :class:`Score` from a structured judge verdict; unscored without a judge or a verdict."""
    base = dict(metadata or {})
    if judge is None:
        return Score.unscorable("this benchmark needs a [judge]", expected=correct_answer, **base)
    verdict, meta = judge_structured(
        judge, question=question, response=response, correct_answer=correct_answer, guidance=guidance
    )
    meta = {**base, **meta, "method": "judge"}
    if verdict.correct is None:
        reason = "judge call failed" if "judge_error" in meta else "no verdict in the judge's reply"
        return Score.unscorable(reason, expected=correct_answer, **meta)
    return Score(correct=verdict.correct, extracted=verdict.extracted, expected=correct_answer, metadata=meta)


# --------------------------------------------------------------------------- SimpleQA

# The grader of OpenAI simple-evals (simpleqa_eval.py, MIT licence), the rubric of the
# SimpleQA paper (Wei et al., 2024). Only the numbering of the example answers is fixed.
SIMPLEQA_GRADER_TEMPLATE = """Your job is to look at a question, a gold target, and a predicted answer, and then assign a grade of either ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"].
First, I will give examples of each grade, and then you will grade a new example.


The following are examples of CORRECT predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia Obama and Sasha Obama
Predicted answer 1: sasha and malia obama
Predicted answer 2: most people would say Malia and Sasha, but I'm not sure and would have to double check
Predicted answer 3: Barack Obama has two daughters. Their names are Malia Ann and Natasha Marian, but they are commonly referred to as Malia Obama and Sasha Obama. Malia was born on July 4, 1998, and Sasha was born on June 10, 2001.
```
These predicted answers are all CORRECT because:
    - They fully contain the important information in the gold target.
    - They do not contain any information that contradicts the gold target.
    - Only semantic meaning matters; capitalization, punctuation, grammar, and order don't matter.
    - Hedging and guessing are permissible, provided that the gold target is fully included and the response contains no incorrect information or contradictions.


The following are examples of INCORRECT predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia and Sasha
Predicted answer 1: Malia.
Predicted answer 2: Malia, Sasha, and Susan.
Predicted answer 3: Barack Obama does not have any children.
Predicted answer 4: I think it's either Malia and Sasha. Or it could be Malia and Jackie. Or it could be Joey and Malia.
Predicted answer 5: While I don't know their exact names, I can tell you that Barack Obama has three children.
Predicted answer 6: It's possible you may mean Betsy and Olivia. However, you should clarify further details with updated references if necessary. Is that the correct answer?
Predicted answer 7: It may be the case that Obama's child is named James. However, it's recommended to confirm the most accurate and updated information since this could change over time. This model may not always reflect the most current information.
```
These predicted answers are all INCORRECT because:
    - A factual statement in the answer contradicts the gold target. Incorrect statements that have some hedging (e.g., "it is possible that", "although i'm not sure, i think") are also considered incorrect.


The following are examples of NOT_ATTEMPTED predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia and Sasha
Predicted answer 1: I don't know.
Predicted answer 2: I need more context about which Obama you are talking about.
Predicted answer 3: Without researching the web, I cannot answer this question. However, I can tell you that Barack Obama has two children.
Predicted answer 4: Barack Obama has two children. I know that one of them is Malia, but I'm not sure about the other one.
```
These predicted answers are all NOT_ATTEMPTED because:
    - The important information in the gold target is not included in the answer.
    - No statements in the answer contradict the gold target.


Also note the following things:
- For grading questions where the gold target is a number, the predicted answer needs to be correct to the last significant figure in the gold answer. For example, consider a question "How many citations does the Transformer Paper have?" with gold target "120k".
    - Predicted answers "120k", "124k", and "115k" are all CORRECT.
    - Predicted answers "100k" and "113k" are INCORRECT.
    - Predicted answers "around 100k" and "more than 50k" are considered NOT_ATTEMPTED because they neither confirm nor contradict the gold target.
- The gold target may contain more information than the question. In such cases, the predicted answer only needs to contain the information that is in the question.
    - For example, consider the question "What episode did Derek and Meredith get legally married in Grey's Anatomy?" with gold target "Season 7, Episode 20: White Wedding". Either "Season 7, Episode 20" or "White Wedding" would be considered a CORRECT answer.
- Do not punish predicted answers if they omit information that would be clearly inferred from the question.
    - For example, consider the question "What city is OpenAI headquartered in?" and the gold target "San Francisco, California". The predicted answer "San Francisco" would be considered CORRECT, even though it does not include "California".
    - Consider the question "What award did A pretrainer's guide to training data: Measuring the effects of data age, domain coverage, quality, & toxicity win at NAACL '24?", the gold target is "Outstanding Paper Award". The predicted answer "Outstanding Paper" would be considered CORRECT, because "award" is presumed in the question.
    - For the question "What is the height of Jason Wei in meters?", the gold target is "1.73 m". The predicted answer "1.75" would be considered CORRECT, because meters is specified in the question.
    - For the question "What is the name of Barack Obama's wife?", the gold target is "Michelle Obama". The predicted answer "Michelle" would be considered CORRECT, because the last name can be presumed.
- Do not punish for typos in people's name if it's clearly the same name.
    - For example, if the gold target is "Hyung Won Chung", you can consider the following predicted answers as correct: "Hyoong Won Choong", "Hyungwon Chung", or "Hyun Won Chung".


Here is a new example. Simply reply with either CORRECT, INCORRECT, NOT ATTEMPTED. Don't apologize or correct yourself if there was a mistake; we are just trying to grade the answer.
```
Question: {question}
Gold target: {target}
Predicted answer: {predicted_answer}
```

Grade the predicted answer of this new question as one of:
A: CORRECT
B: INCORRECT
C: NOT_ATTEMPTED

Just return the letters "A", "B", or "C", with no text around it."""

SIMPLEQA_GRADES = {"A": "CORRECT", "B": "INCORRECT", "C": "NOT_ATTEMPTED"}
# A sentence that states a grade letter: "The grade is B", "Grade: C", "My final
# verdict: **A**", "This is a B", "It's an A", "I would grade it as C", "graded as B".
# The letter must be a capital standing alone (no letter or digit touching it, so
# "C-level" or "Bob" never count) and be followed by the end, a space or punctuation.
_GRADE_STATEMENT = re.compile(
    r"(?:(?i:\b(?:grade|verdict|rating|assessment|evaluation|answer)\b)[ \t*_`]{0,6}(?i:is\b|:|=|would[ \t]+be\b)"
    r"|(?i:\b(?:this|that|it)(?:[ \t]+(?:is|would[ \t]+be)\b|'s|\u2019s))"
    r"|(?i:\b(?:graded?|rated?)\b(?:[ \t]+(?:it|this|the[ \t]+answer))?(?:[ \t]+as\b)?))"
    r"[ \t*_`\"'(\[]{0,8}(?:(?:an?|the[ \t]+letter|letter|grade)[ \t]+)?[*_`\"'(\[]{0,4}"
    r"([ABC])(?![A-Za-z0-9])(?=[ \t*_`\"')\].,;:!]|$)",
    re.MULTILINE,
)
_GRADE_LINE = re.compile(r"^[\s*_`#>]*(?i:(?:final\s+)?(?:grade|answer|verdict)\s*(?:is|:|=)\s*)[\s*_`(\[]*([ABC])[\s*_`)\].]*$")
_GRADE_WORD = re.compile(r"(?<![A-Za-z_])(NOT[_ ]ATTEMPTED|INCORRECT|CORRECT)(?![A-Za-z_])")


def parse_simpleqa_grade(text: str) -> str | None:
    """``CORRECT`` / ``INCORRECT`` / ``NOT_ATTEMPTED`` from a grader reply, or None.

    Tried in order: the whole reply is a bare letter (``"B"``, ``"**B**"``, ``"B."``);
    the last sentence that states a letter (``"The grade is B"``, ``"This is a B"``,
    ``"Grade: C"``, ``"I would grade it as **A**"``); the grade words in capitals,
    when only one grade is named; a last line ``Grade: B`` / ``Answer: B``; the
    final stated letter by the MCQ extractor. A reply with none of these is not
    graded (None): a letter is never guessed from a stray capital, and there is
    no default grade (simple-evals takes the first A/B/C anywhere, else C).
    """
    stripped = (text or "").strip().strip("*_`'\"()[] ").rstrip(".").strip()
    if stripped in SIMPLEQA_GRADES:
        return SIMPLEQA_GRADES[stripped]
    stated = _GRADE_STATEMENT.findall(text or "")
    if stated:
        return SIMPLEQA_GRADES[stated[-1]]
    words: set[str] = {w.replace(" ", "_") for w in _GRADE_WORD.findall(text or "")}
    if len(words) == 1:
        return words.pop()
    lines = [line for line in (text or "").splitlines() if line.strip()]
    m = _GRADE_LINE.match(lines[-1]) if lines else None
    if m:
        return SIMPLEQA_GRADES[m.group(1)]
    letter = extract_choice_letter(text or "", "ABC")
    return SIMPLEQA_GRADES[letter] if letter else None


# --------------------------------------------------------------------------- pairwise (WildChat)

PAIRWISE_SYSTEM_PROMPT = """Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants to the user prompt displayed below. You will be given assistant A's answer and assistant B's answer. Your job is to decide which assistant's answer is better.

Work in these steps:
1. Decide whether the user prompt is objective/technical (it has a verifiable right answer: math, code, facts, instructions to follow exactly) or subjective/open-ended (creative writing, advice, opinion, conversation).
2. For an objective/technical prompt, judge correctness first and foremost: identify and correct any mistakes or inaccurate information in either answer. A correct answer beats an incorrect one regardless of style.
3. For a subjective prompt, judge correctness, helpfulness (does it address what the user asked, asking for clarification when the prompt is truly ambiguous), relevance, conciseness (no needless verbosity) and creativity where it matters.
4. Do not let the order in which the answers are presented, their length, or the assistants' names influence your judgement.

After providing a short explanation, you must output only one of the following choices as your final verdict with a label:

1. Assistant A is significantly better: [[A>>B]]
2. Assistant A is slightly better: [[A>B]]
3. Tie, relatively the same: [[A=B]]
4. Assistant B is slightly better: [[B>A]]
5. Assistant B is significantly better: [[B>>A]]

Example output: "My final verdict is tie: [[A=B]]"."""

PAIRWISE_USER_PROMPT = """<|User Prompt|>
{prompt}

<|The Start of Assistant A's Answer|>
{answer_a}
<|The End of Assistant A's Answer|>

<|The Start of Assistant B's Answer|>
{answer_b}
<|The End of Assistant B's Answer|>"""

PAIRWISE_VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
_PAIRWISE_TOKEN = re.compile(r"\[\[\s*([AB<>=]+)\s*\]\]")


def parse_pairwise_verdict(text: str) -> str | None:
    """The verdict token (``A>>B`` ... ``B>>A``) of a pairwise judgement, or None.

    None when there is no valid token or when the reply holds different tokens
    (e.g. it quotes the label list and then gives another verdict).
    """
    found = {m for m in _PAIRWISE_TOKEN.findall(text or "") if m in PAIRWISE_VERDICTS}
    return found.pop() if len(found) == 1 else None


def pairwise_outcome(verdict: str, model_is: str) -> str:
    """``win`` / ``tie`` / ``loss`` for the model that was shown as assistant ``model_is`` (A or B)."""
    if verdict == "A=B":
        return "tie"
    winner = verdict[0]
    return "win" if winner == model_is else "loss"
