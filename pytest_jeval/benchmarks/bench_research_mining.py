"""research_mining: extract the claims that answer a question from a set of abstracts, with citations.

Synthetic, shipped as ``data/research_mining.jsonl`` (30 questions, each over 5-6 short
abstracts of invented studies: invented compounds tested on invented crops, animals and
soils, so only the abstracts can supply the findings). Each set holds the studies that
support the gold claims and three distractors: the same compound in another system (with
another figure), another compound in the same system, and an unrelated methods paper.
Schema: ``id``, ``subject`` (``two claims``, ``replicated``: one claim supported by two
abstracts, ``persistence``: a third claim), ``question``, ``abstracts``
(``[{id, title, text}]``, ids ``A1``...), ``claims`` (``[{claim, keys, support}]``:
``keys`` is a list of groups of alternatives, ``support`` the abstract ids) and
``reference`` (a gold reply).

The model answers one ``CLAIM: <claim> [A2][A5]`` line per claim. Scoring:

* A reply line is a claim when it is labelled ``CLAIM`` (``CLAIM 1:`` too; markdown and
  bullets tolerated); with no such line, every non-empty line is one.
* A claim matches a gold claim when, for every key group, one alternative occurs as whole
  words in the claim's SQuAD-normalised text (citations removed). Lines are matched in
  order, each to the first gold claim it matches that no earlier line took.
* ``recall`` = gold claims matched / gold claims; ``precision`` = claim lines that took a
  gold claim / claim lines (a repeated or unsupported claim lowers it).
* ``citation`` = F1 of the abstract ids cited on the claim lines (``[A3]``, ``[A1, A4]``)
  against the union of the gold claims' support.
* ``score = 0.4 * recall + 0.2 * precision + 0.4 * citation``; ``is_correct`` iff
  ``score >= 0.75``.
* An empty reply is unscored.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._citations import bracketed_ids, set_f1, strip_brackets
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score, summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.text import normalize_text

WEIGHTS = {"recall": 0.4, "precision": 0.2, "citation": 0.4}
THRESHOLD = 0.75

PROMPT = """Read the abstracts below and answer the question by listing the findings they report that answer it.

{abstracts}

Question: {question}

Report only findings about exactly what the question asks; ignore studies of other compounds or other systems.
Write one line per finding, in exactly this format, citing the abstracts that support it:
CLAIM: <the finding, with its figures> [A1][A2]"""

_CLAIM_LINE = re.compile(r"^[ \t>*_#\-]*CLAIM[ \t*_]*(?:\d+[ \t*_]*)?[:=][ \t*_]*(?P<claim>.*)$", re.I | re.M)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question with its abstracts and gold claims."""
    abstracts = [{"id": str(a["id"]), "title": str(a["title"]), "text": str(a["text"])} for a in row["abstracts"]]
    ids = {a["id"] for a in abstracts}
    claims = []
    for c in row["claims"]:
        keys = [[str(alt) for alt in group if normalize_text(str(alt))] for group in c["keys"]]
        support = [str(s) for s in c["support"]]
        if not keys or not all(keys) or not support or not set(support) <= ids:
            raise ValueError(f"{row['id']}: claim {c['claim']!r} needs key groups and support among {sorted(ids)}")
        claims.append({"claim": str(c["claim"]), "keys": keys, "support": support})
    if not claims:
        raise ValueError(f"{row['id']}: no gold claim")
    return Sample(
        id=row["id"],
        input=row["question"],
        target=row["reference"],
        subject=row["subject"],
        metadata={"abstracts": abstracts, "claims": claims},
    )


def prompt(sample: Sample) -> str:
    """The abstracts with their ids, the question and the claim format."""
    abstracts = "\n\n".join(f"[{a['id']}] {a['title']}\n{a['text']}" for a in sample.metadata["abstracts"])
    return PROMPT.format(abstracts=abstracts, question=sample.input)


def claim_lines(reply: str) -> list[str]:
    """The claims of a reply: its ``CLAIM:`` lines, else every non-empty line."""
    text = strip_reasoning(reply)
    found = [m.group("claim").strip() for m in _CLAIM_LINE.finditer(text)]
    if found:
        return [c for c in found if c]
    return [line.strip() for line in text.split("\n") if line.strip()]


def claim_matches(claim: str, keys: list[list[str]]) -> bool:
    """True when every key group has an alternative occurring as whole words in the normalised claim."""
    padded = f" {normalize_text(strip_brackets(claim))} "
    return all(any(f" {normalize_text(alt)} " in padded for alt in group) for group in keys)


def match_claims(lines: list[str], gold: list[dict[str, Any]]) -> list[int | None]:
    """For each line in order, the index of the first gold claim it matches that no earlier line took."""
    taken: set[int] = set()
    out: list[int | None] = []
    for line in lines:
        hit = next((i for i, c in enumerate(gold) if i not in taken and claim_matches(line, c["keys"])), None)
        if hit is not None:
            taken.add(hit)
        out.append(hit)
    return out


def score_research(reply: str, sample: Sample) -> Score:
    """Composite of claim recall (0.4), claim precision (0.2) and citation F1 (0.4); correct iff >= 0.75."""
    gold = sample.metadata["claims"]
    if not strip_reasoning(reply).strip():
        return Score.unscorable("empty reply", expected=sample.target)
    lines = claim_lines(reply)
    matched = match_claims(lines, gold)
    hits = [i for i in matched if i is not None]
    cited = {i for line in lines for i in bracketed_ids(line, "A")}
    support = {s for c in gold for s in c["support"]}
    components = {"recall": len(hits) / len(gold), "precision": len(hits) / len(lines) if lines else 0.0,
                  "citation": set_f1(cited, support)}
    return composite_score(
        components, WEIGHTS, THRESHOLD,
        extracted=f"{len(hits)}/{len(lines)} claims matched, cited {sorted(cited)}",
        expected=sample.target,
        metadata={"claims": [c[:200] for c in lines[:20]], "matched": matched[:20], "cited": sorted(cited),
                  "gold_support": sorted(support),
                  "missing": [c["claim"] for i, c in enumerate(gold) if i not in hits]},
    )


BENCHMARK = Benchmark(
    name="research_mining",
    category="use-case",
    description="Research synthesis over bundled abstracts: extracted claims vs gold claims, with citations",
    bundled_files=("data/research_mining.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="research_mining",
    scoring="composite: 0.4 claim recall + 0.2 claim precision + 0.4 citation F1; correct >= 0.75",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_research_mining(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_research(response.text, sample))


@register_scorer("research_mining", needs_sample=True)
def record_research_mining(record: dict[str, Any], sample: Sample) -> Score:
    """research_mining: claim recall and precision, citation F1."""

    result: Score = score_research(answer_of(record), sample)
    return result
