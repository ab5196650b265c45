"""WebChoreArena's evaluators, written from its evaluation harness's rules (``evaluation_harness/evaluators.py``).

A task's ``eval.eval_types`` lists the evaluators; the task's score is the product of theirs.

* ``string_match`` on the agent's final answer, cleaned (stripped, one pair of enclosing quotes
  removed, lower-cased), for each key of ``reference_answers``:

  - ``exact_match``: the cleaned answer equals the cleaned reference (1 or 0);
  - ``must_include``: a list; each entry scores 1 when its cleaned text is a substring of the answer
    (an entry ``a |or| b`` scores when any alternative is; with a single one-character reference the
    answer is tokenized and the reference must be a token), and the key's score is the **mean** over
    the entries (WebChoreArena's partial credit; WebArena multiplies);
  - ``fuzzy_match``: an LLM judge (the ``[judge]`` model, upstream's prompt) says "correct"; the
    reference ``N/A`` is matched exactly first, then judged against ``string_note``.

* ``url_match`` (``url_note`` "GOLD in PRED"): the page's final URL and each reference (``reference_url``
  split on `` |OR| ``, plus the ``or`` list's alternatives) are cleaned (trailing ``/`` removed,
  lower-cased); a reference scores 1 when one of its ``host+path`` is a substring of the page's
  ``host+path`` and every query parameter it names has one of its values in the page's query;
  the best alternative counts.

* ``program_html``: for each target (with its ``or`` alternatives, best one counts), load ``url``
  (``last``: stay; ``func:reddit_get_post_url('__last_url__')``: the post URL of the final page), read
  the ``locator`` (empty: the page's HTML; ``document....``: a JavaScript expression, after the
  target's ``prep_actions``, an error reading as empty), unescape HTML entities, and compare with
  ``required_contents``: ``exact_match``, or ``must_include`` (each entry, `` |OR| `` alternatives,
  substring after cleaning; the mean over the entries). The task's score multiplies the targets'.

Deviation (declared in every record): upstream tokenizes with nltk's ``word_tokenize`` for a
one-character ``must_include`` reference; here a regex splits words, numbers (with inner ``,``/``.``)
and single punctuation marks, which gives the same tokens for such references except around
abbreviations. A result is 1.0 only when every evaluator gives 1.0 (``correct``); the value keeps the
partial credit.
"""

from __future__ import annotations

import collections
import dataclasses
import html
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

DEVIATIONS = ("one-character must_include references are matched against regex tokens, not nltk's word_tokenize",)

_TOKEN = re.compile(r"\w+(?:[.,']\w+)*|[^\w\s]")


def clean_answer(answer: str) -> str:
    """Stripped, one pair of enclosing quotes removed, lower-cased."""
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in ("'", '"'):
        answer = answer[1:-1]
    elif answer in ("'", '"'):
        answer = ""
    return answer.lower()


def tokenize(text: str) -> list[str]:
    """Words, numbers and single punctuation marks (nltk's ``word_tokenize``, approximated)."""
    return _TOKEN.findall(text)


def exact_match(ref: str, pred: str) -> float:
    """1.0 when the cleaned texts are equal."""
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, tokenize_single: bool = False) -> float:
    """1.0 when the cleaned reference (or one of its ``|or|`` alternatives) is in the cleaned answer."""
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    for sep in (" |or| ", " |OR| "):
        if sep in clean_ref:
            for alt in (r.strip() for r in clean_ref.split(sep)):
                if tokenize_single and len(alt) == 1 and len(tokenize(alt)) == 1:
                    # upstream tests the alternative against its own tokens here: a single character always is one
                    if alt in tokenize(alt):
                        return 1.0
                elif alt in clean_pred:
                    return 1.0
            return 0.0
    if tokenize_single and len(clean_ref) == 1 and len(tokenize(clean_ref)) == 1:
        return float(clean_ref in tokenize(clean_pred))
    return float(clean_ref in clean_pred)


Judge = Callable[[str, str, str], float]
"""``(pred, reference, intent) -> 1.0 | 0.0``: the fuzzy match by an LLM judge."""


class NeedsJudge(Exception):
    """A ``fuzzy_match`` reference and no judge model."""


@dataclasses.dataclass
class Outcome:
    """One evaluator's score and what it looked at."""

    score: float
    detail: dict[str, Any]


def string_match(config: Mapping[str, Any], answer: str, judge: Judge | None = None,
                 ua_judge: Judge | None = None) -> Outcome:
    """The ``string_match`` evaluator on the final answer."""
    pred = clean_answer(answer)
    score = 1.0
    parts: dict[str, float] = {}
    for approach, value in (config["eval"].get("reference_answers") or {}).items():
        if approach == "exact_match":
            part = exact_match(str(value), pred)
            score *= part
        elif approach == "must_include":
            values = list(value)
            part = sum(must_include(str(v), pred, tokenize_single=len(values) == 1) for v in values) / len(values)
            score *= part
        elif approach == "fuzzy_match":
            if value == "N/A":
                part = exact_match("N/A", pred)
                score *= part
                if score != 1:
                    if ua_judge is None:
                        raise NeedsJudge("fuzzy_match (N/A) needs the [judge] model")
                    part = score = ua_judge(pred, str(config["eval"].get("string_note", "")), str(config["intent"]))
            else:
                if judge is None:
                    raise NeedsJudge("fuzzy_match needs the [judge] model")
                reference = "; ".join(value) if isinstance(value, list) else str(value)
                part = judge(pred, reference, str(config["intent"]))
                score *= part
        else:
            raise ValueError(f"unknown reference_answers key {approach!r}")
        parts[approach] = part
    return Outcome(score, {"answer": pred[:500], "parts": parts})


def _clean_url(u: str) -> str:
    return str(u).rstrip("/").lower()


def _split(u: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urllib.parse.urlparse(u)
    return parsed.netloc + parsed.path, urllib.parse.parse_qs(parsed.query)


def url_match(config: Mapping[str, Any], final_url: str) -> Outcome:
    """The ``url_match`` evaluator on the page's final URL."""
    rule = config["eval"].get("url_note", "GOLD in PRED")
    if rule != "GOLD in PRED":
        raise ValueError(f"unknown url_note {rule!r}")
    alternatives = [config["eval"]["reference_url"], *(o["reference_url"] for o in config["eval"].get("or") or [])]
    pred_base, pred_query = _split(_clean_url(final_url))
    scores = []
    for alternative in alternatives:
        refs = [_clean_url(u) for u in str(alternative).split(" |OR| ")]
        bases: list[str] = []
        queries: dict[str, set[str]] = collections.defaultdict(set)
        for ref in refs:
            base, query = _split(ref)
            bases.append(base)
            for k, v in query.items():
                queries[k].update(v)
        base_score = float(any(b in pred_base for b in bases))
        query_score = 1.0
        for k, values in queries.items():
            query_score *= float(any(v in pred_query.get(k, []) for v in values))
        scores.append(base_score * query_score)
    reference = {"reference_url": config["eval"]["reference_url"], "or": list(config["eval"].get("or") or [])}
    return Outcome(max(scores), {"final_url": final_url, "reference": reference})


def reddit_get_post_url(url: str) -> str:
    """The post URL (``scheme://host/f/<forum>/<id>/``) of a forum page's URL; other URLs unchanged."""
    parsed = urllib.parse.urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


_FUNC_URL = re.compile(r"""^func:reddit_get_post_url\(\s*['"]__last_url__['"]\s*\)$""")


class PageReader:
    """What ``program_html`` needs of the browser: the URL, loading a URL, evaluating JavaScript, the HTML."""

    def url(self) -> str:
        raise NotImplementedError

    def goto(self, url: str) -> None:
        raise NotImplementedError

    def evaluate(self, expression: str) -> Any:
        raise NotImplementedError

    def content(self) -> str:
        raise NotImplementedError


def _target_url(target: Mapping[str, Any], page: PageReader) -> str:
    raw = str(target["url"])
    if raw.startswith("func"):
        if not _FUNC_URL.match(raw.strip()):
            raise ValueError(f"unsupported url function {raw!r} (only reddit_get_post_url('__last_url__'))")
        return reddit_get_post_url(page.url())
    return raw


def _select(target: Mapping[str, Any], page: PageReader) -> str:
    locator = str(target["locator"])
    if not locator.strip():
        return page.content()
    if locator.startswith("document.") or locator.startswith("[...document."):
        for prep in target.get("prep_actions") or []:
            try:
                page.evaluate(f"() => {prep}")
            except Exception:
                break
        try:
            value = page.evaluate(f"() => {locator}")
        except Exception:
            return ""
        return str(value) if value else ""
    raise ValueError(f"unsupported locator {locator!r} (func: locators need the WebArena sites' helper functions)")


def program_html(config: Mapping[str, Any], page: PageReader) -> Outcome:
    """The ``program_html`` evaluator: each target's content, read from the page."""
    score = 1.0
    seen: list[dict[str, Any]] = []
    for target in config["eval"].get("program_html") or []:
        alternatives = [target, *(target.get("or") or [])]
        best = 0.0
        for alt in alternatives:
            where = _target_url(alt, page)
            if where != "last":
                page.goto(where)
            selected = html.unescape(_select(alt, page))
            required = alt["required_contents"]
            if "exact_match" in required:
                part = exact_match(str(required["exact_match"]), selected)
            elif "must_include" in required:
                entries = list(required["must_include"])
                part = sum(float(any(must_include(c, selected) for c in str(entry).split(" |OR| ")))
                           for entry in entries) / len(entries)
            else:
                raise ValueError(f"unknown required_contents {sorted(required)}")
            seen.append({"url": where, "selected": selected[:300], "score": part})
            best = max(best, part)
        score *= best
    return Outcome(score, {"targets": seen})


def evaluate(config: Mapping[str, Any], answer: str, page: PageReader | None, final_url: str,
             judge: Judge | None = None, ua_judge: Judge | None = None) -> tuple[float, dict[str, Any]]:
    """The task's score (the product over ``eval_types``) and each evaluator's detail."""
    score = 1.0
    details: dict[str, Any] = {}
    for kind in config["eval"]["eval_types"]:
        if kind == "string_match":
            outcome = string_match(config, answer, judge, ua_judge)
        elif kind == "url_match":
            outcome = url_match(config, final_url)
        elif kind == "program_html":
            if page is None:
                raise ValueError("program_html needs the browser's page")
            outcome = program_html(config, page)
        else:
            raise ValueError(f"eval_type {kind!r} is not supported")
        details[kind] = {"score": outcome.score, **outcome.detail}
        score *= outcome.score
    return score, details


EVAL_TYPES = ("string_match", "url_match", "program_html")


def check_config(config: Mapping[str, Any], where: str) -> None:
    """ValueError naming the task when a config lacks what the evaluators read."""
    missing = [k for k in ("task_id", "intent", "start_url", "eval") if k not in config]
    if missing:
        raise ValueError(f"{where}: the task config lacks {', '.join(missing)}")
    kinds: Sequence[str] = config["eval"].get("eval_types") or []
    unknown = [k for k in kinds if k not in EVAL_TYPES]
    if not kinds or unknown:
        raise ValueError(f"{where}: eval_types must name some of {', '.join(EVAL_TYPES)} (got {list(kinds)})")
