"""AMA-Bench's answer parsing, token F1 and judge, with upstream's semantics (``utils/evaluation_metrics.py``,
``utils/extract_final_answer.py``, ``src/memory_interface.py``), written here.

* The answer: the text after ``Answer[1]:`` (its first line), else after ``##Answer:``, else the whole
  reply, with ``<think>...</think>`` blocks removed.
* Token F1: both texts lower-cased, punctuation and the articles a/an/the removed, split on whitespace;
  the harmonic mean of token precision and recall over the multiset of common tokens (1.0 when both are
  empty, 0.0 when one is).
* The judge is asked whether the predicted answer is correct against the reference (factual
  correctness, completeness, relevance), with the task's type, episode and description as context,
  and answers yes or no; the **last** whole-word yes or no in its reply (thinking removed) is the
  verdict. A reply with neither is *unscored* here (upstream falls back to F1: a deviation every record
  states), and a failed judge call is unscored, never wrong.
"""

from __future__ import annotations

import re
from collections import Counter

THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def normalize(text: str) -> str:
    """Lower-case, punctuation and articles removed, whitespace collapsed (upstream's ``normalize_text``)."""
    text = re.sub(r"[^\w\s]", " ", text.lower())
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def token_f1(predicted: str, gold: str) -> float:
    """Token-level F1 of two texts after :func:`normalize`."""
    pred, ref = normalize(predicted).split(), normalize(gold).split()
    if not pred and not ref:
        return 1.0
    if not pred or not ref:
        return 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def final_answer(reply: str) -> str:
    """The answer in a reply (see the module docstring)."""
    slot = re.search(r"Answer\[1\]:\s*(.+?)$", reply, re.DOTALL)
    text = THINK.sub("", f"##Answer: {slot.group(1).strip()}" if slot else reply).strip()
    if "##Answer:" in text:
        return text.split("##Answer:")[1].strip().split("\n")[0].strip()
    return text


def judge_prompt(question: str, reference: str, predicted: str, *, task_type: str = "", episode_id: str = "",
                 task: str = "") -> str:
    """The judge's prompt (upstream's questions and context, in the project's words)."""
    context = "\n".join(line for line in (f"Task type: {task_type}" if task_type else "",
                                          f"Episode: {episode_id}" if episode_id else "",
                                          f"Task: {task}" if task else "") if line)
    return (
        "You judge answers about an agent's trajectory. Given a question, a reference answer and a predicted "
        "answer, decide whether the predicted answer is correct: factually right against the reference, "
        "complete, and relevant to the question.\n\n"
        + (context + "\n\n" if context else "")
        + f"Question: {question}\n\nReference answer: {reference}\n\nPredicted answer: {predicted}\n\n"
        "Is the predicted answer correct? Reply with only \"yes\" or \"no\", nothing else."
    )


def parse_verdict(reply: str) -> bool | None:
    """The judge's verdict: the last whole-word yes or no (thinking removed); None when it gives neither."""
    text = THINK.sub("", reply).strip().lower()
    yes = [m.start() for m in re.finditer(r"\byes\b", text)]
    no = [m.start() for m in re.finditer(r"\bno\b", text)]
    last_yes, last_no = (yes[-1] if yes else -1), (no[-1] if no else -1)
    if last_yes == last_no:
        return None
    return last_yes > last_no
