"""Evaluators, the judge family's framework: the evaluator protocol and registry (:mod:`.registry`), case
kinds and their tolerance rules (:mod:`.cases`), verdicts and probabilities from a judge's reply (:mod:`.probability`).

The built-in evaluators and gold sets are content, in :mod:`pytest_jeval.judge_bench`."""
