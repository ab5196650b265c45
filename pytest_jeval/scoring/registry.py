"""Scorers by name, as functions of a stored JSONL record: ``(record) -> Score``.

``jeval rescore`` uses this registry to score stored answers again (``model_answer``
against ``expected``) without querying any model. Each built-in benchmark names its
entry in ``Benchmark.scorer``. Generic entries wrap the deterministic scorers of
:mod:`pytest_jeval.scoring`:

* ``numeric``  - :func:`score_numeric`;
* ``mcq``      - :func:`score_choice` with the judge fallback (GPQA, MMLU-Pro, SuperGPQA,
  TruthfulQA MC1); the valid letters come from ``scoring_metadata.valid_letters``, else
  ``A``-``D`` widened to include the expected letter;
* ``math``     - :func:`score_math` (MATH-500);
* ``gaia``     - :func:`score_gaia` with GAIA's judge fallback;
* ``exact``    - :func:`exact_match` (SQuAD normalisation);
* ``contains`` - the expected answer, or one of ``scoring_metadata.accepted``,
  appears as whole words in the answer;
* ``judge``    - the structured judge verdict alone (FRAMES, NaturalReasoning).

Benchmark entries (``quickstart``, ``hle``, ``simpleqa``, ``wildchat``, ``doc_qa``,
``email_triage``, ``security_scanner``, ``humaneval``, ``livecodebench``,
``coding_assistant``) call the benchmark's own scoring function. Those registered
with ``needs_sample=True`` are called as ``fn(record, sample=...)`` with the sample
loaded from the benchmark's data (their scoring needs more than the record holds:
unit tests, passages, option letters).

Judge verdicts: entries registered with ``uses_judge=True`` run the benchmark's scoring
with a :class:`~pytest_jeval.scoring.replay.ReplayJudge` that answers with the judge
replies stored in the record. Where the scoring asks the judge, the record's stored
verdict is kept as it is; with ``reparse_judge=True`` the stored replies are parsed
again by the current parser instead. Deterministic parts (the regex letter, the exact
match) are always recomputed.

Register more with :func:`register_scorer`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ..sample import Sample
from ..score import Score
from .math_equiv import score_math
from .mcq import score_choice
from .numeric import score_numeric
from .replay import ReplayJudge, stored_score
from .text import exact_match

__all__ = ["RecordScorer", "call_scorer", "get_scorer", "register_scorer", "scorer_names", "scorer_needs_sample",
           "scorer_uses_judge"]

RecordScorer = Callable[..., Score]

_REGISTRY: dict[str, RecordScorer] = {}
_NEEDS_SAMPLE: set[str] = set()
_USES_JUDGE: set[str] = set()
_RUNS_CODE: set[str] = set()


_F = TypeVar("_F", bound=RecordScorer)


@overload
def register_scorer(name: str, scorer: None = None, *, needs_sample: bool = ..., uses_judge: bool = ...,
                    runs_code: bool = ...) -> Callable[[_F], _F]: ...


@overload
def register_scorer(name: str, scorer: _F, *, needs_sample: bool = ..., uses_judge: bool = ...,
                    runs_code: bool = ...) -> _F: ...


def register_scorer(name: str, scorer: RecordScorer | None = None, *, needs_sample: bool = False,
                    uses_judge: bool = False, runs_code: bool = False) -> Any:
    """Register ``scorer`` under ``name``; usable as a decorator (``@register_scorer("x")``).

    ``needs_sample``: called as ``scorer(record, sample=Sample)``. ``uses_judge``: takes
    ``reparse_judge: bool`` (see the module docstring). ``runs_code``: takes ``workers: int``,
    the sandbox runs at once (the run's ``max_exec_workers``).
    """

    def add(fn: Any) -> Any:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"a scorer named {name!r} is already registered")
        _REGISTRY[name] = fn
        if needs_sample:
            _NEEDS_SAMPLE.add(name)
        if uses_judge:
            _USES_JUDGE.add(name)
        if runs_code:
            _RUNS_CODE.add(name)
        return fn

    return add(scorer) if scorer is not None else add


def scorer_needs_sample(name: str) -> bool:
    """True when the scorer registered as ``name`` needs the record's :class:`Sample`."""
    return name in _NEEDS_SAMPLE


def scorer_uses_judge(name: str) -> bool:
    """True when the scorer registered as ``name`` replays stored judge replies."""
    return name in _USES_JUDGE


def call_scorer(name: str, record: dict[str, Any], *, sample: Sample | None = None,
                reparse_judge: bool = False, workers: int | None = None) -> Score:
    """Score ``record`` with the scorer registered as ``name``, passing what it takes."""
    fn = get_scorer(name)
    kwargs: dict[str, Any] = {}
    if name in _NEEDS_SAMPLE:
        if sample is None:
            raise ValueError(f"scorer {name!r} needs the sample of record {record.get('record_id')!r}")
        kwargs["sample"] = sample
    if name in _USES_JUDGE:
        kwargs["reparse_judge"] = reparse_judge
    if name in _RUNS_CODE and workers is not None:
        kwargs["workers"] = workers
    return fn(record, **kwargs)


def get_scorer(name: str) -> RecordScorer:
    """The scorer registered as ``name``; KeyError naming the known scorers otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(scorer_names())}") from None


def scorer_names() -> list[str]:
    """Names of the registered scorers, sorted."""
    return sorted(_REGISTRY)


def _answer(record: dict[str, Any]) -> str:
    return str(record.get("model_answer") or "")


def _expected(record: dict[str, Any]) -> str:
    expected = record.get("expected")
    if expected is None:
        raise ValueError(f"record {record.get('record_id')!r} has no expected answer")
    return str(expected)


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    meta = record.get("scoring_metadata")
    return meta if isinstance(meta, dict) else {}


@register_scorer("numeric")
def record_numeric(record: dict[str, Any]) -> Score:
    """The final number of the answer equals the expected number."""
    return score_numeric(_answer(record), _expected(record))


def valid_letters(record: dict[str, Any]) -> str:
    """The option letters of a multiple-choice record (see the module docstring)."""
    stored = _metadata(record).get("valid_letters")
    if isinstance(stored, str) and stored.isalpha() and stored.isascii():
        return stored.upper()
    gold = _expected(record).strip().upper()
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


def _sample_of(record: dict[str, Any]) -> Sample:
    """A sample rebuilt from the record's id, question, expected answer and subject."""
    subject = record.get("subject")
    return Sample(id=str(record.get("record_id")), input=str(record.get("question") or ""), target=_expected(record),
                  subject=subject if isinstance(subject, str) else None)


@register_scorer("mcq", uses_judge=True)
def record_mcq(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """The letter the answer states equals the expected letter; the judge fallback where none is found."""
    from .llm_judge.fallback import score_choice_with_fallback

    answer, gold, valid = _answer(record), _expected(record), valid_letters(record)
    return judged(record, reparse_judge,
                  lambda judge: score_choice_with_fallback(answer, gold, valid, question="", judge=judge))


@register_scorer("math")
def record_math(record: dict[str, Any]) -> Score:
    """The final (boxed) answer is mathematically equal to the expected one."""
    return score_math(_answer(record), _expected(record))


@register_scorer("gaia", uses_judge=True)
def record_gaia(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """GAIA's normalised exact match of the final answer; the judge may overturn a mismatch."""
    from pytest_jeval.benchmarks.bench_gaia import score_gaia_with_fallback

    sample, answer = _sample_of(record), _answer(record)
    return judged(record, reparse_judge, lambda judge: score_gaia_with_fallback(sample, answer, judge))


@register_scorer("bfcl", needs_sample=True)
def record_bfcl(record: dict[str, Any], sample: Sample) -> Score:
    """BFCL's AST rules on the stored calls (``extracted``) against the sample's gold and function docs."""
    from pytest_jeval.benchmarks.bench_bfcl import record_calls, score_calls

    bad = _metadata(record).get("bad_arguments")
    return score_calls(sample, record_calls(record), bad if isinstance(bad, str) else None)


@register_scorer("exact")
def record_exact(record: dict[str, Any]) -> Score:
    """The whole answer equals the expected one after SQuAD normalisation."""
    answer, gold = _answer(record).strip(), _expected(record)
    if not answer:
        return Score.unscorable("empty answer", expected=gold)
    return Score(correct=exact_match(answer, gold), extracted=answer, expected=gold,
                 metadata={"match": "exact"})


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


@register_scorer("contains")
def record_contains(record: dict[str, Any]) -> Score:
    """The expected answer (or an accepted alias) appears as whole words in the answer."""
    answer, gold = _answer(record), _expected(record)
    accepted = _metadata(record).get("accepted")
    golds = [str(g) for g in accepted] if isinstance(accepted, list) and accepted else [gold]
    if not answer.strip():
        return Score.unscorable("empty reply", expected=gold)
    hit = next((g for g in golds if _words(g) in _words(answer)), None)
    return Score(correct=hit is not None, extracted=hit or answer.strip()[:80], expected=gold,
                 metadata={"match": "contains", "accepted": golds})


@register_scorer("judge", uses_judge=True)
def record_judge(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """The structured judge verdict alone (FRAMES, NaturalReasoning); unscored without a judge."""
    from .llm_judge.prompts import structured_score

    question, answer, gold = str(record.get("question") or ""), _answer(record), _expected(record)
    return judged(record, reparse_judge, lambda judge: structured_score(
        judge, question=question, response=answer, correct_answer=gold))


# -- benchmark entries: the benchmark's own scoring function ------------------------------------

@register_scorer("hle", needs_sample=True, uses_judge=True)
def record_hle(record: dict[str, Any], sample: Sample, reparse_judge: bool = False) -> Score:
    """HLE: the letter / exact-match fast path, then the structured judge verdict."""
    from pytest_jeval.benchmarks.bench_hle import score_hle

    answer = _answer(record)
    return judged(record, reparse_judge, lambda judge: score_hle(sample, answer, judge))


@register_scorer("simpleqa", uses_judge=True)
def record_simpleqa(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """SimpleQA: the grader's CORRECT / INCORRECT / NOT_ATTEMPTED (as ``test_simpleqa`` scores it)."""
    from pytest_jeval.benchmarks.bench_simpleqa import grade

    question, answer, gold = str(record.get("question") or ""), _answer(record), _expected(record)

    def scoring(judge: Any) -> Score:
        if judge is None:
            return Score.unscorable("simpleqa needs a [judge] to grade answers", expected=gold)
        result, meta = grade(judge, question, gold, answer)
        if result is None:
            reason = "judge call failed" if "judge_error" in meta else "no grade in the judge's reply"
            return Score(correct=None, expected=gold, metadata={"unscored_reason": reason, **meta},
                         fields={"grade": None})
        return Score(correct=result == "CORRECT", extracted=result, expected=gold, metadata=meta,
                     fields={"grade": result})

    return judged(record, reparse_judge, scoring)


@register_scorer("wildchat", uses_judge=True)
def record_wildchat(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """WildChat: the pairwise verdicts of both orders (the reference reply only shapes the prompt)."""
    from pytest_jeval.benchmarks.bench_wildchat import score_pairwise

    question, answer = str(record.get("question") or ""), _answer(record)

    def scoring(judge: Any) -> Score:
        if judge is None:
            return Score.unscorable("wildchat needs a [judge] for pairwise comparison",
                                    expected="at least a tie with the reference reply")
        result: Score = score_pairwise(judge, question, answer, "")
        return result

    return judged(record, reparse_judge, scoring)


@register_scorer("quickstart", needs_sample=True)
def record_quickstart(record: dict[str, Any], sample: Sample) -> Score:
    """quickstart: numeric, letter or whole-word match by the sample's kind (as ``test_quickstart``)."""
    from pytest_jeval.benchmarks.bench_quickstart import score_text

    kind, answer = sample.metadata.get("kind"), _answer(record)
    if kind == "numeric":
        return score_numeric(answer, sample.target)
    if kind == "choice":
        return score_choice(answer, sample.target, string.ascii_uppercase[: len(sample.choices)])
    result: Score = score_text(answer, sample)
    return result


@register_scorer("doc_qa", needs_sample=True)
def record_doc_qa(record: dict[str, Any], sample: Sample) -> Score:
    """doc_qa: answer match and citation F1."""
    from pytest_jeval.benchmarks.bench_doc_qa import score_doc_qa

    result: Score = score_doc_qa(_answer(record), sample)
    return result


@register_scorer("email_triage", needs_sample=True)
def record_email_triage(record: dict[str, Any], sample: Sample) -> Score:
    """email_triage: category, priority and draft elements."""
    from pytest_jeval.benchmarks.bench_email_triage import score_triage

    result: Score = score_triage(_answer(record), sample)
    return result


@register_scorer("daily_digest", needs_sample=True)
def record_daily_digest(record: dict[str, Any], sample: Sample) -> Score:
    """daily_digest: required items, distractors absent, time order."""
    from pytest_jeval.benchmarks.bench_daily_digest import score_digest

    result: Score = score_digest(_answer(record), sample)
    return result


@register_scorer("morning_brief", needs_sample=True)
def record_morning_brief(record: dict[str, Any], sample: Sample) -> Score:
    """morning_brief: daily_digest's composite times the length factor."""
    from pytest_jeval.benchmarks.bench_morning_brief import score_brief

    result: Score = score_brief(_answer(record), sample)
    return result


@register_scorer("research_mining", needs_sample=True)
def record_research_mining(record: dict[str, Any], sample: Sample) -> Score:
    """research_mining: claim recall and precision, citation F1."""
    from pytest_jeval.benchmarks.bench_research_mining import score_research

    result: Score = score_research(_answer(record), sample)
    return result


@register_scorer("knowledge_base", needs_sample=True)
def record_knowledge_base(record: dict[str, Any], sample: Sample) -> Score:
    """knowledge_base: answer match and retrieved-document F1."""
    from pytest_jeval.benchmarks.bench_knowledge_base import score_knowledge_base

    result: Score = score_knowledge_base(_answer(record), sample)
    return result


@register_scorer("toolcall15", needs_sample=True)
def record_toolcall15(record: dict[str, Any], sample: Sample) -> Score:
    """toolcall15: the scenario's rules on the record's inline trajectory (else the stored verdict)."""
    from pytest_jeval.benchmarks.bench_toolcall15 import rescore_record

    result: Score = rescore_record(record, sample)
    return result


@register_scorer("terminal_tests", needs_sample=True)
def record_terminal_tests(record: dict[str, Any], sample: Sample) -> Score:
    """terminal_lite: the verdict again from the checker's stored exit status, timeout and reward."""
    from pytest_jeval.benchmarks.bench_terminal_lite import rescore_record

    return rescore_record(record, sample)


@register_scorer("security_scanner", needs_sample=True)
def record_security_scanner(record: dict[str, Any], sample: Sample) -> Score:
    """security_scanner: vulnerability class and line precision."""
    from pytest_jeval.benchmarks.bench_security_scanner import score_security

    result: Score = score_security(_answer(record), sample)
    return result


@register_scorer("humaneval", needs_sample=True)
def record_humaneval(record: dict[str, Any], sample: Sample) -> Score:
    """HumanEval: ``check(entry_point)`` on the extracted code, in the sandbox."""
    from pytest_jeval.benchmarks.bench_humaneval import score_humaneval

    result: Score = score_humaneval(_answer(record), sample)
    return result


@register_scorer("livecodebench", needs_sample=True, runs_code=True)
def record_livecodebench(record: dict[str, Any], sample: Sample, workers: int | None = None) -> Score:
    """LiveCodeBench: the public and private tests, in the sandbox (``workers`` at once; default
    the run's default, one per CPU core)."""
    from pytest_jeval.benchmarks._codeexec import exec_workers
    from pytest_jeval.benchmarks.bench_livecodebench import score_livecodebench

    result: Score = score_livecodebench(_answer(record), sample, workers=workers or exec_workers())
    return result


@register_scorer("coding_assistant", needs_sample=True)
def record_coding_assistant(record: dict[str, Any], sample: Sample) -> Score:
    """coding_assistant: the visible and hidden tests, in the sandbox."""
    from pytest_jeval.benchmarks.bench_coding_assistant import score_fix

    result: Score = score_fix(_answer(record), sample)
    return result


@register_scorer("coding_task", needs_sample=True)
def record_coding_task(record: dict[str, Any], sample: Sample) -> Score:
    """coding_task: the hidden tests, in the sandbox."""
    from pytest_jeval.benchmarks.bench_coding_task import score_task

    result: Score = score_task(_answer(record), sample)
    return result


@register_scorer("browser_assistant", needs_sample=True)
def record_browser_assistant(record: dict[str, Any], sample: Sample) -> Score:
    """browser_assistant: answer match and cited-page F1."""
    from pytest_jeval.benchmarks.bench_browser_assistant import score_browser

    result: Score = score_browser(_answer(record), sample)
    return result


@register_scorer("loghub", needs_sample=True)
def record_loghub(record: dict[str, Any], sample: Sample) -> Score:
    """loghub: the ANOMALY / NORMAL verdict against the window's label."""
    from pytest_jeval.benchmarks.bench_loghub import score_loghub

    result: Score = score_loghub(_answer(record), sample)
    return result


@register_scorer("ipw", needs_sample=True)
def record_ipw(record: dict[str, Any], sample: Sample) -> Score:
    """ipw: the item's source scorer."""
    from pytest_jeval.benchmarks.bench_ipw import score_item

    result: Score = score_item(_answer(record), sample)
    return result


@register_scorer("retail", needs_sample=True)
def record_retail(record: dict[str, Any], sample: Sample) -> Score:
    """retail: the tau-bench reward again, the final database rebuilt from the record's inline trajectory."""
    from pytest_jeval.benchmarks._retail.rescore import rescore_retail

    return rescore_retail(record, sample)
