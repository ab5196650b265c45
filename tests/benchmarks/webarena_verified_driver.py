"""Runs webarena-verified's own evaluators on cases read from stdin; prints each case's verdict as JSON.

Run by tests/benchmarks/test_webarena_verified.py with the interpreter of ``.venv-webarena-verified``
(``make webarena-verified``): webarena-verified pins pydantic and more, so it never enters the project's
``.venv``. Nothing of pytest-jeval is imported here, and nothing of webarena-verified in the tests.

Input: ``{"site_url": "http://127.0.0.1:7770", "cases": [...]}``, each case either

* ``{"id", "kind": "string", "expected": [...], "answer": [...]}``: a retrieve task whose
  ``AgentResponseEvaluator`` expects ``retrieved_data = expected`` (a string list; an inner list is a set of
  alternatives), the agent answering ``{"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": answer}``;
* ``{"id", "kind": "url", "expected": url or [alternatives], "final": url, "ignored_query_params_patterns": [...]}``:
  a navigate task whose ``NetworkEventEvaluator`` expects the last navigation to be ``expected`` (``__SHOPPING__``
  rendered to ``site_url``), the trace holding navigations to the site's home page and then to ``final``.

Output: ``{id: {"score": 0.0 | 1.0, "error": str | null, "version": "..."}}``, the score of the evaluator the case
is about (webarena-verified's public ``WebArenaVerifiedEvaluator.evaluate_task(context=...)`` runs the task).
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import sys
from typing import Any

from webarena_verified.api.internal.evaluator import WebArenaVerifiedEvaluator
from webarena_verified.types.config import EnvironmentConfig, WebArenaVerifiedConfig
from webarena_verified.types.eval import TaskEvalContext
from webarena_verified.types.task import WebArenaVerifiedTask
from webarena_verified.types.tracing import NetworkTrace

STRING_SCHEMA = {"type": "array", "items": {"type": "string"}}


def task(evaluators: list[dict[str, Any]]) -> WebArenaVerifiedTask:
    return WebArenaVerifiedTask.model_validate({
        "sites": ["shopping"], "task_id": 1, "intent_template_id": 1, "start_urls": ["__SHOPPING__"],
        "intent": "cross-check", "intent_template": "cross-check", "instantiation_dict": {}, "revision": 1,
        "eval": evaluators})


def navigation(url: str) -> dict[str, Any]:
    """A HAR entry of a page load (GET, accepting HTML, 200)."""
    return {"request": {"method": "GET", "url": url, "headers": [{"name": "Accept", "value": "text/html"}]},
            "response": {"status": 200, "headers": [], "redirectURL": ""}}


def build(case: dict[str, Any], site_url: str) -> tuple[WebArenaVerifiedTask, Any, list[dict[str, Any]], str]:
    """The task, the agent's response, the trace, and the name of the evaluator the case is about."""
    if case["kind"] == "string":
        response = {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": case["answer"]}
        expected = {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": case["expected"]}
        evaluators = [{"evaluator": "AgentResponseEvaluator", "results_schema": STRING_SCHEMA, "expected": expected}]
        return task(evaluators), json.dumps(response), [navigation(site_url + "/")], "AgentResponseEvaluator"
    navigate = {"task_type": "navigate", "status": "SUCCESS", "retrieved_data": None}
    network: dict[str, Any] = {"evaluator": "NetworkEventEvaluator", "expected": {"url": case["expected"]}}
    if case.get("ignored_query_params_patterns"):
        network["ignored_query_params_patterns"] = case["ignored_query_params_patterns"]
    evaluators = [{"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "null"}, "expected": navigate},
                  network]
    trace = [navigation(site_url + "/"), navigation(case["final"])]
    return task(evaluators), json.dumps(navigate), trace, "NetworkEventEvaluator"


def main() -> None:
    logging.disable(logging.CRITICAL)
    given = json.load(sys.stdin)
    site_url = given["site_url"]
    config = WebArenaVerifiedConfig(environments={"shopping": EnvironmentConfig(urls=[site_url])})
    evaluator = WebArenaVerifiedEvaluator(config=config, reader=None)  # type: ignore[arg-type]  # reader: task ids only
    version = importlib.metadata.version("webarena-verified")
    out: dict[str, Any] = {}
    for case in given["cases"]:
        the_task, response, trace, about = build(case, site_url)
        context = TaskEvalContext(task=the_task, agent_response_raw=response,
                                  network_trace=NetworkTrace.from_content(trace), config=config)
        result = evaluator.evaluate_task(context=context)
        mine = [r for r in result.evaluators_results if r.evaluator_name == about]
        errors = [r.error_msg for r in result.evaluators_results if r.error_msg] + (
            [result.error_msg] if result.error_msg else [])
        others_pass = all(r.score == 1.0 for r in result.evaluators_results if r.evaluator_name != about)
        out[case["id"]] = {"score": mine[0].score if mine else None, "error": "; ".join(errors) or None,
                           "others_pass": others_pass, "version": version}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
