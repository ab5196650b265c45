"""security_scanner: name the vulnerability in a code snippet (CWE and class) and where it is.

Synthetic, shipped as ``data/security_scanner.jsonl`` (30 items: 25 vulnerable snippets in
Python, JavaScript, C and Java, and 5 safe ones). Schema: ``id``, ``language``,
``subject`` (vulnerability family, ``none`` for safe code), ``code``, ``cwes`` (accepted
CWE ids, the first is the canonical one; ``["NONE"]`` for safe code), ``related_cwes``
(parent/child weaknesses worth half credit), ``vuln_class``, ``aliases`` (accepted class
names), ``lines`` (1-based lines of the vulnerable statement(s)), ``note``.

The model answers ``VULNERABILITY: <CWE-id or NONE>``, ``CLASS: <name>`` and
``LINES: <numbers>``. Scoring:

* classification: 1.0 when the first CWE id given is accepted, 0.5 when it is a related
  one, else 0; without any CWE id, 1.0 when the class text names an accepted alias.
* location: the share of the predicted lines that are gold lines (|P ∩ G| / |P|;
  ranges like ``5-7`` are expanded), 0 when no line is given.
* ``score = 0.6 * classification + 0.4 * location``; safe code scores 1.0 for a NONE
  verdict and 0.0 for any reported vulnerability; a NONE verdict on vulnerable code
  scores 0.0.
* ``is_correct`` iff ``score >= 0.75``: the exact weakness and mostly the right lines.
* A reply with neither a verdict line, a CWE id, a NONE statement nor a known class
  name is unscored.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score, labelled_field, summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.text import normalize_text

WEIGHTS = {"classification": 0.6, "location": 0.4}
THRESHOLD = 0.75
#: A range ``a-b`` in a LINES answer is expanded only up to this many lines.
MAX_RANGE = 50

PROMPT = """You are a security reviewer. Find the security vulnerability in the following {language} code, if there is one. Lines are numbered.

```{language}
{numbered}
```

Answer in exactly this format:
VULNERABILITY: <the CWE id, e.g. CWE-79, or NONE if the code has no vulnerability>
CLASS: <the vulnerability class, e.g. Cross-site scripting, or NONE>
LINES: <the number(s) of the vulnerable line(s), comma-separated, or NONE>"""  # noqa: E501 - prompt text kept verbatim

_CWE = re.compile(r"\bCWE[\s_-]*(\d{1,5})\b", re.I)
_NONE = re.compile(
    r"^\W*(none|no|n/?a|safe|secure)\b|no (known |security |obvious )?(vulnerabilit|issue|weakness)|not vulnerable|"
    r"\bis (safe|secure)\b",
    re.I,
)
_RANGE = re.compile(r"(\d+)\s*(?:-|–|to|\.\.)\s*(\d+)")
_LINE_MENTION = re.compile(r"\blines?\s+(\d+(?:\s*(?:-|–|to|,|and)\s*\d+)*)", re.I)


def numbered(code: str) -> str:
    """The code with right-aligned line numbers (``  5 | ...``)."""
    lines = code.rstrip("\n").split("\n")
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One snippet with its gold weakness and lines."""
    cwes = [c.upper() for c in row["cwes"]]
    if cwes != ["NONE"] and not row["lines"]:
        raise ValueError(f"{row['id']}: a vulnerable snippet needs gold lines")
    lines = ", ".join(map(str, row["lines"]))
    gold = "NONE" if cwes == ["NONE"] else f"{cwes[0]} ({row['vuln_class']}) at line(s) {lines}"
    return Sample(
        id=row["id"],
        input=row["code"],
        target=gold,
        subject=row["subject"],
        metadata={
            "language": row["language"],
            "cwes": cwes,
            "related_cwes": [c.upper() for c in row.get("related_cwes") or []],
            "vuln_class": row["vuln_class"],
            "aliases": list(row.get("aliases") or []),
            "lines": list(row["lines"]),
        },
    )


def prompt(sample: Sample) -> str:
    """The numbered snippet and the answer format."""
    return PROMPT.format(language=sample.metadata["language"], numbered=numbered(sample.input))


def parse_lines(text: str | None) -> list[int]:
    """Line numbers from a LINES value: ``5``, ``5, 7``, ``5-7``, ``lines 5 and 9``."""
    if not text or (_NONE.search(text) and not re.search(r"\d", text)):
        return []
    out: list[int] = []
    for a, b in _RANGE.findall(text):
        lo, hi = int(a), int(b)
        if lo <= hi <= lo + MAX_RANGE:
            out.extend(range(lo, hi + 1))
    text = _RANGE.sub(" ", text)
    out.extend(int(n) for n in re.findall(r"\d+", text))
    return sorted(set(out))


def parse_answer(reply: str) -> dict[str, Any]:
    """What the reply claims: ``cwe`` (first CWE id or None), ``none`` (a NONE verdict), ``class`` text, ``lines``."""
    text = strip_reasoning(reply)
    verdict = labelled_field(text, "VULNERABILITY", "CWE", "VULNERABILITY ID")
    klass = labelled_field(text, "CLASS", "VULNERABILITY CLASS", "TYPE", "CATEGORY")
    lines_text = labelled_field(text, "LINES", "LINE", "LINE NUMBERS", "LOCATION")
    source = verdict if verdict is not None else text
    cwes = [f"CWE-{int(n)}" for n in _CWE.findall(source)]
    if not cwes and verdict is not None and klass is not None:
        cwes = [f"CWE-{int(n)}" for n in _CWE.findall(klass)]
    says_none = not cwes and bool(_NONE.search(verdict if verdict is not None else (klass or text.strip()[:200])))
    if lines_text is None and not says_none:
        mentions = _LINE_MENTION.findall(text)
        lines = parse_lines(" ".join(mentions)) if mentions else []
    else:
        lines = parse_lines(lines_text)
    return {
        "cwe": cwes[0] if cwes else None,
        "none": says_none,
        "class": klass if klass is not None else (verdict or ""),
        "lines": lines,
        "has_verdict": verdict is not None,
    }


def _names_alias(text: str, aliases: list[str]) -> bool:
    padded = f" {normalize_text(text)} "
    return any(f" {normalize_text(a)} " in padded for a in aliases if normalize_text(a))


def score_security(reply: str, sample: Sample) -> Score:
    """Composite of classification (0.6) and location (0.4); correct iff >= 0.75."""
    m = sample.metadata
    gold_none = m["cwes"] == ["NONE"]
    got = parse_answer(reply)
    known_class = _names_alias(got["class"], m["aliases"]) if m["aliases"] else False
    if not got["has_verdict"] and got["cwe"] is None and not got["none"] and not known_class:
        return Score.unscorable("no verdict, CWE id or vulnerability class found", expected=sample.target)
    extracted = "NONE" if got["none"] else (
        f"{got['cwe'] or got['class'][:40]} at line(s) {', '.join(map(str, got['lines'])) or '?'}")
    meta = {"predicted_cwe": got["cwe"], "predicted_none": got["none"], "predicted_lines": got["lines"],
            "gold_cwes": m["cwes"], "gold_lines": m["lines"]}
    if gold_none:
        ok = 1.0 if got["none"] else 0.0
        return composite_score({"classification": ok, "location": ok}, WEIGHTS, THRESHOLD,
                               extracted=extracted, expected=sample.target, metadata=meta)
    if got["none"]:
        classification = 0.0
    elif got["cwe"] is not None:
        classification = 1.0 if got["cwe"] in m["cwes"] else 0.5 if got["cwe"] in m["related_cwes"] else 0.0
    else:
        classification = 1.0 if known_class else 0.0
    predicted = set(got["lines"])
    location = len(predicted & set(m["lines"])) / len(predicted) if predicted and not got["none"] else 0.0
    return composite_score({"classification": classification, "location": location}, WEIGHTS, THRESHOLD,
                           extracted=extracted, expected=sample.target, metadata=meta)


BENCHMARK = Benchmark(
    name="security_scanner",
    category="use-case",
    description="Name the vulnerability (CWE, class) and its lines in Python/JS/C/Java snippets, or say NONE",
    bundled_files=("data/security_scanner.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="security_scanner",
    scoring="composite: 0.6 CWE/class + 0.4 line precision; correct >= 0.75",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_security_scanner(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_security(response.text, sample))


@register_scorer("security_scanner", needs_sample=True)
def record_security_scanner(record: dict[str, Any], sample: Sample) -> Score:
    """security_scanner: vulnerability class and line precision."""

    result: Score = score_security(answer_of(record), sample)
    return result
