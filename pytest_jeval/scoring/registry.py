"""Scorers by name, as functions of a stored JSONL record: ``(record) -> Score``.

``jeval rescore`` uses this registry to score stored answers again (``model_answer``
against ``expected``) without querying any model. Each benchmark names its scorer in
``Benchmark.scorer``. This module registers the generic scorers, which wrap the
deterministic scorers of :mod:`pytest_jeval.scoring`:

* ``numeric``  - :func:`score_numeric`;
* ``mcq``      - :func:`score_choice` with the judge fallback (GPQA, MMLU-Pro, SuperGPQA,
  TruthfulQA MC1); the valid letters come from ``scoring_metadata.valid_letters``, else
  ``A``-``D`` widened to include the expected letter;
* ``math``     - :func:`score_math` (MATH-500);
* ``exact``    - :func:`exact_match` (SQuAD normalisation);
* ``contains`` - the expected answer, or one of ``scoring_metadata.accepted``,
  appears as whole words in the answer;
* ``judge``    - the structured judge verdict alone (FRAMES, NaturalReasoning);
* ``token_f1`` - :func:`score_token_f1`: SQuAD token F1, the best over ``expected`` and
  ``scoring_metadata.accepted`` (the record's ``score`` is the F1; correct at 1.0);
* ``answer_word`` / ``answer_line`` - the word / the line after the last ``ANSWER:`` equals
  ``expected`` or an accepted alias;
* ``mcq_multi`` - :func:`score_mcq_multi`: the letter set on the last ``ANSWER:`` line equals the
  expected set (``A, C``); letters from ``scoring_metadata.valid_letters`` as for ``mcq``.

``numeric`` and ``math`` read a percent sign under the convention the run used
(``scoring_metadata.percent``), else ``either``.

A benchmark with its own scoring registers its scorer in its own module with
:func:`register_scorer` (``hle``, ``doc_qa``, ``retail``, ...): the registry never imports a
benchmark; ``jeval rescore`` imports the benchmark a scorer belongs to
(:func:`pytest_jeval.suite.catalog.load_scorer`). Installed packages add scorers through the
``pytest_jeval.scorers`` entry-point group (``name = "package.module:function"``, or a
:class:`RecordScorer`). Those registered with ``needs_sample=True`` are called as
``fn(record, sample=...)`` with the sample loaded from the benchmark's data (their scoring needs
more than the record holds: unit tests, passages, option letters).

Judge verdicts: scorers registered with ``uses_judge=True`` run the benchmark's scoring
with a :class:`~pytest_jeval.scoring.replay.ReplayJudge` that answers with the judge
replies stored in the record (:func:`judged`). Where the scoring asks the judge, the record's
stored verdict is kept as it is; with ``reparse_judge=True`` the stored replies are parsed
again by the current parser instead. Deterministic parts (the regex letter, the exact
match) are always recomputed.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Callable
from typing import Any, TypeVar, overload

from pytest_jeval.core.registry import Registry
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.answers import score_answer_line, score_answer_word, score_mcq_multi, score_token_f1
from pytest_jeval.scoring.math_equiv import score_math
from pytest_jeval.scoring.numeric import PERCENT_CONVENTIONS, PercentConvention, score_numeric
from pytest_jeval.scoring.replay import ReplayJudge, stored_score
from pytest_jeval.scoring.text import exact_match

__all__ = ["SCORERS", "RecordScorer", "answer_of", "call_scorer", "expected_of", "get_scorer", "judged", "metadata_of",
           "register_scorer", "sample_of", "scorer_names", "scorer_needs_sample", "scorer_uses_judge"]

ScorerFunction = Callable[..., Score]
"""``fn(record, **what it takes) -> Score``."""


@dataclasses.dataclass(frozen=True)
class RecordScorer:
    """A scorer of stored records and what it takes besides the record."""

    fn: ScorerFunction
    needs_sample: bool = False
    """Called as ``fn(record, sample=Sample)``."""
    uses_judge: bool = False
    """Takes ``reparse_judge: bool`` (see the module docstring)."""
    runs_code: bool = False
    """Takes ``workers: int``, the sandbox runs at once (the run's ``max_exec_workers``)."""

    def __call__(self, record: dict[str, Any], **kwargs: Any) -> Score:
        return self.fn(record, **kwargs)


def _check(name: str, member: Any) -> RecordScorer:
    if isinstance(member, RecordScorer):
        return member
    if callable(member):
        return RecordScorer(member)
    raise TypeError(f"{member!r} is not a scorer (a function of a record, or a RecordScorer)")


def _same(a: RecordScorer, b: RecordScorer) -> bool:
    return (a.fn.__module__, a.fn.__qualname__) == (b.fn.__module__, b.fn.__qualname__)


SCORERS: Registry[RecordScorer] = Registry("scorers", kind="scorer", check=_check, same=_same)
"""Every scorer by name: the generic ones below, those benchmark modules register, and the
``pytest_jeval.scorers`` entry points."""

_F = TypeVar("_F", bound=ScorerFunction)


@overload
def register_scorer(name: str, scorer: None = None, *, needs_sample: bool = ..., uses_judge: bool = ...,
                    runs_code: bool = ...) -> Callable[[_F], _F]: ...


@overload
def register_scorer(name: str, scorer: _F, *, needs_sample: bool = ..., uses_judge: bool = ...,
                    runs_code: bool = ...) -> _F: ...


def register_scorer(name: str, scorer: ScorerFunction | None = None, *, needs_sample: bool = False,
                    uses_judge: bool = False, runs_code: bool = False) -> Any:
    """Register ``scorer`` under ``name``; usable as a decorator (``@register_scorer("x")``).

    ``needs_sample``: called as ``scorer(record, sample=Sample)``. ``uses_judge``: takes
    ``reparse_judge: bool`` (see the module docstring). ``runs_code``: takes ``workers: int``,
    the sandbox runs at once (the run's ``max_exec_workers``). A name taken by another
    function is a :class:`~pytest_jeval.core.registry.RegistryError`.
    """

    def add(fn: Any) -> Any:
        SCORERS.register(name, RecordScorer(fn, needs_sample=needs_sample, uses_judge=uses_judge,
                                            runs_code=runs_code))
        return fn

    return add(scorer) if scorer is not None else add


def scorer_needs_sample(name: str) -> bool:
    """True when the scorer registered as ``name`` needs the record's :class:`Sample`."""
    return get_scorer(name).needs_sample


def scorer_uses_judge(name: str) -> bool:
    """True when the scorer registered as ``name`` replays stored judge replies."""
    return get_scorer(name).uses_judge


def call_scorer(name: str, record: dict[str, Any], *, sample: Sample | None = None,
                reparse_judge: bool = False, workers: int | None = None) -> Score:
    """Score ``record`` with the scorer registered as ``name``, passing what it takes."""
    scorer = get_scorer(name)
    kwargs: dict[str, Any] = {}
    if scorer.needs_sample:
        if sample is None:
            raise ValueError(f"scorer {name!r} needs the sample of record {record.get('record_id')!r}")
        kwargs["sample"] = sample
    if scorer.uses_judge:
        kwargs["reparse_judge"] = reparse_judge
    if scorer.runs_code and workers is not None:
        kwargs["workers"] = workers
    return scorer(record, **kwargs)


def get_scorer(name: str) -> RecordScorer:
    """The scorer registered as ``name``; a KeyError naming the known scorers otherwise."""
    return SCORERS.get(name)


def scorer_names() -> list[str]:
    """Names of the registered scorers, sorted (a benchmark's own scorer once its module is imported)."""
    return SCORERS.names()


def answer_of(record: dict[str, Any]) -> str:
    """The record's ``model_answer`` as text ("" when missing)."""
    return str(record.get("model_answer") or "")


def expected_of(record: dict[str, Any]) -> str:
    """The record's ``expected`` answer as text; ValueError when the record has none."""
    expected = record.get("expected")
    if expected is None:
        raise ValueError(f"record {record.get('record_id')!r} has no expected answer")
    return str(expected)


def metadata_of(record: dict[str, Any]) -> dict[str, Any]:
    """The record's ``scoring_metadata`` ({} when missing or not an object)."""
    meta = record.get("scoring_metadata")
    return meta if isinstance(meta, dict) else {}


def percent_of(record: dict[str, Any]) -> PercentConvention:
    """The percent convention a record was scored under (``scoring_metadata.percent``), else ``either``."""
    stored = metadata_of(record).get("percent")
    return next((c for c in PERCENT_CONVENTIONS if c == stored), "either")


@register_scorer("numeric")
def record_numeric(record: dict[str, Any]) -> Score:
    """The final number of the answer equals the expected number."""
    return score_numeric(answer_of(record), expected_of(record), percent=percent_of(record))


def valid_letters(record: dict[str, Any]) -> str:
    """The option letters of a multiple-choice record (see the module docstring)."""
    stored = metadata_of(record).get("valid_letters")
    if isinstance(stored, str) and stored.isalpha() and stored.isascii():
        return stored.upper()
    gold = expected_of(record).strip().upper()
    last = string.ascii_uppercase.index(gold) if len(gold) == 1 and gold in string.ascii_uppercase else 3
    return string.ascii_uppercase[: max(4, last + 1)]


def judged(record: dict[str, Any], reparse_judge: bool, scoring: Callable[[Any], Score]) -> Score:
    """``scoring(judge)`` with the record's stored judge replayed; where it asks the judge, the
    stored verdict is kept unless ``reparse_judge`` (see the module docstring)."""
    judge = ReplayJudge.from_record(record)
    result = scoring(judge)
    if judge is not None and judge.calls and not reparse_judge:
        return stored_score(record)
    return result


def sample_of(record: dict[str, Any]) -> Sample:
    """A sample rebuilt from the record's id, question, expected answer and subject."""
    subject = record.get("subject")
    return Sample(id=str(record.get("record_id")), input=str(record.get("question") or ""), target=expected_of(record),
                  subject=subject if isinstance(subject, str) else None)


@register_scorer("mcq", uses_judge=True)
def record_mcq(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """The letter the answer states equals the expected letter; the judge fallback where none is found."""
    from pytest_jeval.scoring.llm_judge.fallback import score_choice_with_fallback

    answer, gold, valid = answer_of(record), expected_of(record), valid_letters(record)
    return judged(record, reparse_judge,
                  lambda judge: score_choice_with_fallback(answer, gold, valid, question="", judge=judge))


@register_scorer("math")
def record_math(record: dict[str, Any]) -> Score:
    """The final (boxed) answer is mathematically equal to the expected one."""
    return score_math(answer_of(record), expected_of(record), percent=percent_of(record))


@register_scorer("exact")
def record_exact(record: dict[str, Any]) -> Score:
    """The whole answer equals the expected one after SQuAD normalisation."""
    answer, gold = answer_of(record).strip(), expected_of(record)
    if not answer:
        return Score.unscorable("empty answer", expected=gold)
    return Score(correct=exact_match(answer, gold), extracted=answer, expected=gold,
                 metadata={"match": "exact"})


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


@register_scorer("contains")
def record_contains(record: dict[str, Any]) -> Score:
    """The expected answer (or an accepted alias) appears as whole words in the answer."""
    answer, gold = answer_of(record), expected_of(record)
    accepted = metadata_of(record).get("accepted")
    golds = [str(g) for g in accepted] if isinstance(accepted, list) and accepted else [gold]
    if not answer.strip():
        return Score.unscorable("empty reply", expected=gold)
    hit = next((g for g in golds if _words(g) in _words(answer)), None)
    return Score(correct=hit is not None, extracted=hit or answer.strip()[:80], expected=gold,
                 metadata={"match": "contains", "accepted": golds})


def golds_of(record: dict[str, Any]) -> list[str]:
    """The expected answer, or the aliases in ``scoring_metadata.accepted`` when the record lists them."""
    accepted = metadata_of(record).get("accepted")
    return [str(g) for g in accepted] if isinstance(accepted, list) and accepted else [expected_of(record)]


@register_scorer("token_f1")
def record_token_f1(record: dict[str, Any]) -> Score:
    """SQuAD token F1 against the expected answer (or the best accepted alias)."""
    return score_token_f1(answer_of(record), golds_of(record))


@register_scorer("answer_word")
def record_answer_word(record: dict[str, Any]) -> Score:
    """The word after the last ``ANSWER:`` equals the expected answer (or an accepted alias)."""
    return score_answer_word(answer_of(record), golds_of(record))


@register_scorer("answer_line")
def record_answer_line(record: dict[str, Any]) -> Score:
    """The line after the last ``ANSWER:`` equals the expected answer (or an accepted alias)."""
    return score_answer_line(answer_of(record), golds_of(record))


@register_scorer("mcq_multi")
def record_mcq_multi(record: dict[str, Any]) -> Score:
    """The letters on the last ``ANSWER:`` line equal the expected set (``A, C``)."""
    return score_mcq_multi(answer_of(record), expected_of(record), valid_letters(record))


@register_scorer("judge", uses_judge=True)
def record_judge(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """The structured judge verdict alone (FRAMES, NaturalReasoning); unscored without a judge."""
    from pytest_jeval.scoring.llm_judge.prompts import structured_score

    question, answer, gold = str(record.get("question") or ""), answer_of(record), expected_of(record)
    return judged(record, reparse_judge, lambda judge: structured_score(
        judge, question=question, response=answer, correct_answer=gold))

