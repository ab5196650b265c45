"""doc_qa: answer a question from a document of numbered passages, citing the passages used.

Synthetic, shipped as ``data/doc_qa.jsonl`` (30 questions over 10 invented documents, so
world knowledge cannot stand in for reading: 19 look-ups, 4 small computations from one
passage, 4 that combine two passages and 3 whose answer is not in the document). Schema: ``id``,
``subject`` (lookup | arithmetic | multi-hop | unanswerable), ``title``, ``passages``
(``[{id, text}]``, ids from 1), ``question``,
``answer`` (canonical), ``aliases`` (accepted answers; empty when unanswerable),
``answerable``, ``support`` (the gold passage ids; empty when unanswerable).

The model answers ``ANSWER: ...`` and ``CITATIONS: [i], [j]``. Scoring:

* answer (1/0): the answer, normalised SQuAD-style (lower case, no punctuation or
  articles), equals an alias, or contains one as whole words while being at most
  ``MAX_ANSWER_TOKENS`` tokens long (so listing every candidate does not pass). For an
  unanswerable question the answer must say so ("not stated", "not mentioned", "unknown",
  "cannot be determined", ...); for an answerable one such a refusal is wrong.
* citation: F1 between the cited ids C and the gold ids G (precision |C∩G|/|C|, recall
  |C∩G|/|G|); for an unanswerable question 1.0 when nothing is cited, else 0.
  Citations come from the CITATIONS line, else from every ``[n]`` in the reply.
* ``score = 0.6 * answer + 0.4 * citation``; ``is_correct`` iff ``score >= 0.75``: a
  right answer with citations that are at least partly right (citing all passages of a
  document is not enough), never a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._citations import set_f1
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score, labelled_field, summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.text import normalize_text

WEIGHTS = {"answer": 0.6, "citation": 0.4}
THRESHOLD = 0.75
#: An answer longer than this (in normalised tokens) must equal an alias, not just contain it.
MAX_ANSWER_TOKENS = 12

#: Ways of saying the document does not contain the answer (matched on normalised text).
NOT_STATED = (
    "not stated", "not mentioned", "not specified", "not provided", "not given", "not included",
    "does not say", "doesnt say", "does not mention", "doesnt mention", "does not specify",
    "does not state", "doesnt state", "does not contain", "doesnt contain", "not in document",
    "cannot be determined", "cant be determined", "cannot be answered", "cant be answered",
    "unknown", "no information", "not available", "unanswerable", "insufficient information",
    "not enough information", "no answer",
)

PROMPT = """Answer the question using only the document below. Its passages are numbered.

Document: {title}
{passages}

Question: {question}

Reply in exactly this format:
ANSWER: <a short answer, or "not stated" if the document does not contain the answer>
CITATIONS: <the numbers of the passages that support the answer, e.g. [2], [4]; leave it empty if none>"""

_BRACKET = re.compile(r"\[(\d{1,3})\]")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question with its document."""
    ids = [int(p["id"]) for p in row["passages"]]
    support = [int(s) for s in row["support"]]
    if not set(support) <= set(ids):
        raise ValueError(f"{row['id']}: support {support} is not among the passage ids {ids}")
    if bool(row["aliases"]) != bool(row["answerable"]) or bool(support) != bool(row["answerable"]):
        raise ValueError(f"{row['id']}: an answerable question needs aliases and support, an unanswerable one neither")
    return Sample(
        id=row["id"],
        input=row["question"],
        target=row["answer"],
        subject=row["subject"],
        metadata={
            "title": row["title"],
            "passages": [{"id": int(p["id"]), "text": p["text"]} for p in row["passages"]],
            "aliases": list(row["aliases"]),
            "answerable": bool(row["answerable"]),
            "support": support,
        },
    )


def prompt(sample: Sample) -> str:
    """The document with ``[n]`` passage numbers, the question and the answer format."""
    m = sample.metadata
    passages = "\n".join(f"[{p['id']}] {p['text']}" for p in m["passages"])
    return PROMPT.format(title=m["title"], passages=passages, question=sample.input)


def says_not_stated(answer: str) -> bool:
    """True when the answer says the document does not contain it."""
    padded = f" {normalize_text(answer)} "
    return any(f" {phrase} " in padded for phrase in NOT_STATED)


def _contains(tokens: list[str], part: list[str]) -> bool:
    n = len(part)
    return any(tokens[i:i + n] == part for i in range(len(tokens) - n + 1))


def answer_matches(answer: str, aliases: list[str]) -> bool:
    """Normalised equality with an alias, or containment in an answer of at most MAX_ANSWER_TOKENS tokens."""
    tokens = normalize_text(answer).split()
    if not tokens:
        return False
    for alias in aliases:
        gold = normalize_text(alias).split()
        if not gold:
            continue
        if tokens == gold or (len(tokens) <= MAX_ANSWER_TOKENS and _contains(tokens, gold)):
            return True
    return False


def answer_correct(answer: str, metadata: dict[str, Any]) -> bool:
    """An answerable question's answer matches an alias and is no refusal; an unanswerable one's says so.

    ``metadata`` holds ``answerable`` and ``aliases`` (doc_qa, knowledge_base, browser_assistant)."""
    if metadata["answerable"]:
        return answer_matches(answer, metadata["aliases"]) and not says_not_stated(answer)
    return says_not_stated(answer)


def parse_reply(reply: str) -> tuple[str, set[int]]:
    """``(answer text, cited passage ids)`` from a reply."""
    text = strip_reasoning(reply)
    answer = labelled_field(text, "ANSWER", "FINAL ANSWER")
    cites_text = labelled_field(text, "CITATIONS", "CITATION", "SOURCES", "SOURCE", "PASSAGES", "REFERENCES")
    if answer is None:
        answer = next((line.strip() for line in text.split("\n") if line.strip()), "")
    if cites_text is not None:
        cited = {int(n) for n in re.findall(r"\d+", cites_text)}
    else:
        cited = {int(n) for n in _BRACKET.findall(text)}
    answer = _BRACKET.sub(" ", answer).strip()
    return answer, cited


def score_doc_qa(reply: str, sample: Sample) -> Score:
    """Composite of answer correctness (0.6) and citation F1 (0.4); correct iff >= 0.75."""
    m = sample.metadata
    if not strip_reasoning(reply).strip():
        return Score.unscorable("empty reply", expected=sample.target)
    answer, cited = parse_reply(reply)
    ok = answer_correct(answer, m)
    citation = set_f1(cited, set(m["support"]))
    return composite_score(
        {"answer": 1.0 if ok else 0.0, "citation": citation}, WEIGHTS, THRESHOLD,
        extracted=f"{answer[:80]} {sorted(cited)}",
        expected=f"{sample.target} {m['support']}",
        metadata={"answer": answer[:300], "cited": sorted(cited), "gold_support": m["support"],
                  "answerable": m["answerable"]},
    )


BENCHMARK = Benchmark(
    name="doc_qa",
    category="use-case",
    description="Document-grounded QA with passage citations (incl. multi-hop and unanswerable questions)",
    bundled_files=("data/doc_qa.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="doc_qa",
    scoring="composite: 0.6 normalised answer match + 0.4 citation F1; correct >= 0.75",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_doc_qa(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_doc_qa(response.text, sample))


@register_scorer("doc_qa", needs_sample=True)
def record_doc_qa(record: dict[str, Any], sample: Sample) -> Score:
    """doc_qa: answer match and citation F1."""

    result: Score = score_doc_qa(answer_of(record), sample)
    return result
