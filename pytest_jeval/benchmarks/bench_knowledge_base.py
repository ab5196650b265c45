"""knowledge_base: retrieval QA over a document collection; answer and name the documents used.

Synthetic, shipped as ``data/knowledge_base.jsonl``: 36 questions over the internal
knowledge base of an invented company (48 short documents: facilities, IT, fire safety and
business travel for each of 12 sites, ids ``d1``-``d48``; the documents of one kind differ
only in their facts, so the right one has to be found). Each item shows 8 candidate
documents: the gold ones, the same kind of document for other sites, other documents of the
same site, and a few more (28 look-ups, 5 that combine two documents, 3 whose answer no
document holds). Schema: ``id``, ``subject`` (lookup | multi-hop | unanswerable),
``question``, ``answer`` (canonical), ``aliases`` (accepted answers; empty when
unanswerable), ``answerable``, ``support`` (the gold document ids; empty when
unanswerable) and ``docs`` (the candidates, ``[{id, title, text}]``; a document id has the
same text in every item).

The model answers ``ANSWER: ...`` and ``DOCS: [d12], [d30]``. Scoring (the answer rules are
doc_qa's, :func:`pytest_jeval.benchmarks.bench_doc_qa.answer_matches`):

* answer (1/0): the SQuAD-normalised answer equals an alias, or contains one as whole words
  while at most 12 tokens long; for an unanswerable question it must say so ("not stated",
  "unknown", ...), for an answerable one saying so is wrong.
* retrieval: F1 of the named document ids against ``support`` (ids from the ``DOCS`` line,
  else every ``dN`` in the reply); for an unanswerable question 1.0 when none is named, else 0.
* ``score = 0.6 * answer + 0.4 * retrieval``; ``is_correct`` iff ``score >= 0.75`` (a
  right answer with at least partly right documents; never a wrong answer).
* An empty reply is unscored.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._citations import ids_in, set_f1, strip_brackets
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score, labelled_field, summarize_composite
from pytest_jeval.benchmarks.bench_doc_qa import answer_correct
from pytest_jeval.scoring.registry import answer_of, register_scorer

WEIGHTS = {"answer": 0.6, "retrieval": 0.4}
THRESHOLD = 0.75
DOC_LABELS = ("DOCS", "DOCUMENTS", "DOC IDS", "SOURCES", "CITATIONS", "REFERENCES")

PROMPT = """Answer the question using only the knowledge-base documents below. Each has an id in brackets.

{docs}

Question: {question}

Reply in exactly this format:
ANSWER: <a short answer, or "not stated" if no document contains the answer>
DOCS: <the ids of the documents that contain the answer, e.g. [d7], [d21]; leave it empty if none>"""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question with its candidate documents."""
    docs = [{"id": str(d["id"]), "title": str(d["title"]), "text": str(d["text"])} for d in row["docs"]]
    ids = [d["id"] for d in docs]
    support = [str(s) for s in row["support"]]
    if len(set(ids)) != len(ids) or not set(support) <= set(ids):
        raise ValueError(f"{row['id']}: the support {support} must be among the distinct candidate ids {ids}")
    if bool(row["aliases"]) != bool(row["answerable"]) or bool(support) != bool(row["answerable"]):
        raise ValueError(f"{row['id']}: an answerable question needs aliases and support, an unanswerable one neither")
    return Sample(
        id=row["id"],
        input=row["question"],
        target=row["answer"],
        subject=row["subject"],
        metadata={"docs": docs, "aliases": list(row["aliases"]), "answerable": bool(row["answerable"]),
                  "support": support},
    )


def prompt(sample: Sample) -> str:
    """The candidate documents with their ids, the question and the answer format."""
    docs = "\n\n".join(f"[{d['id']}] {d['title']}\n{d['text']}" for d in sample.metadata["docs"])
    return PROMPT.format(docs=docs, question=sample.input)


def parse_reply(reply: str) -> tuple[str, set[str]]:
    """``(answer text, named document ids)`` from a reply."""
    text = strip_reasoning(reply)
    answer = labelled_field(text, "ANSWER", "FINAL ANSWER")
    docs_text = labelled_field(text, *DOC_LABELS)
    if answer is None:
        answer = next((line.strip() for line in text.split("\n") if line.strip()), "")
    named = ids_in(docs_text if docs_text is not None else text, "d")
    return strip_brackets(answer).strip(), named  # "[d12]" on the answer line is not part of the answer


def score_knowledge_base(reply: str, sample: Sample) -> Score:
    """Composite of answer correctness (0.6) and retrieval F1 (0.4); correct iff >= 0.75."""
    m = sample.metadata
    if not strip_reasoning(reply).strip():
        return Score.unscorable("empty reply", expected=sample.target)
    answer, named = parse_reply(reply)
    ok = answer_correct(answer, m)
    retrieval = set_f1(named, set(m["support"]))
    return composite_score(
        {"answer": 1.0 if ok else 0.0, "retrieval": retrieval}, WEIGHTS, THRESHOLD,
        extracted=f"{answer[:80]} {sorted(named)}",
        expected=f"{sample.target} {m['support']}",
        metadata={"answer": answer[:300], "retrieved": sorted(named), "gold_support": m["support"],
                  "answerable": m["answerable"]},
    )


BENCHMARK = Benchmark(
    name="knowledge_base",
    category="use-case",
    description="Retrieval QA over a bundled document collection: the answer and the ids of the documents used",
    bundled_files=("data/knowledge_base.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="knowledge_base",
    scoring="composite: 0.6 normalised answer match + 0.4 retrieved-doc F1; correct >= 0.75",
    sample_count=36,
    summarize_extra=summarize_composite,
)


def test_knowledge_base(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_knowledge_base(response.text, sample))


@register_scorer("knowledge_base", needs_sample=True)
def record_knowledge_base(record: dict[str, Any], sample: Sample) -> Score:
    """knowledge_base: answer match and retrieved-document F1."""

    result: Score = score_knowledge_base(answer_of(record), sample)
    return result
