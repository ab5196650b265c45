"""Benchmarking judges: evaluators scored against gold labels.

A suite entry with ``evaluator = "..."`` and a gold set in ``data_files`` runs the
evaluator on every gold item (one pytest item each) and reports accuracy,
confusion matrix, kappa, MAE, calibration (ECE, Brier, reliability), consistency
across repeats and confidence routing. See docs/judges.md.

Public API:

* :func:`get_evaluator`, :func:`evaluator_names`, :func:`register`, :func:`load_evaluators`,
  :class:`Evaluator`, :class:`CodeEvaluator`, :class:`GoldItem`, :class:`Judgment`,
  :class:`EvaluatorError`, :class:`EvaluatorLoadError`
* :mod:`pytest_jeval.judge_bench.evaluators` (the built-in evaluators, one module per family;
  installed packages add theirs through the ``pytest_jeval.evaluators`` entry-point group)
* :class:`CaseSpec` (case kinds, tolerance rule)
* :func:`read_verdict`, :class:`LabelSet`, :class:`Verdict` (probabilities from logprobs)
* :func:`make_judge_benchmark`, :class:`JudgeSetupError`
* :func:`judge_metrics` (summary block from JSONL records)
* :mod:`pytest_jeval.judge_bench.gold` (converters from public judge datasets to gold sets)
"""

from __future__ import annotations

from pytest_jeval.judge_bench.benchmark import make_judge_benchmark
from pytest_jeval.judge_bench.summary import judge_metrics
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.probability import LOW_MASS_THRESHOLD, LabelSet, Verdict, read_verdict
from pytest_jeval.scoring.judging.registry import (
    CodeEvaluator,
    Evaluator,
    EvaluatorError,
    EvaluatorLoadError,
    GoldItem,
    JudgeSetupError,
    Judgment,
    evaluator_classes,
    evaluator_names,
    get_evaluator,
    load_evaluators,
    register,
)

__all__ = [
    "LOW_MASS_THRESHOLD",
    "CaseSpec",
    "CodeEvaluator",
    "Evaluator",
    "EvaluatorError",
    "EvaluatorLoadError",
    "GoldItem",
    "JudgeSetupError",
    "Judgment",
    "LabelSet",
    "Verdict",
    "evaluator_classes",
    "evaluator_names",
    "get_evaluator",
    "judge_metrics",
    "load_evaluators",
    "make_judge_benchmark",
    "read_verdict",
    "register",
]
