"""Judges as scorers: a judge model grades a benchmark reply (not to be confused with
:mod:`pytest_jeval.judge_bench`, which benchmarks the judges themselves).

* :mod:`pytest_jeval.scoring.llm_judge.prompts`: the grader templates (SimpleQA, HLE-style structured
  verdicts, pairwise) and their parsers.
* :mod:`pytest_jeval.scoring.llm_judge.fallback`: multiple choice scored by regex, with the judge asked
  only when no letter is found.

Nothing is imported here, so ``import pytest_jeval.scoring`` never pulls in the model client.
"""

from __future__ import annotations

__all__: list[str] = []
