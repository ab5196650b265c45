"""``[judge] validate``: the judge proves itself on a gold set before it judges any sample.

At session start (the controller, or the only process), after the endpoints were checked and before
any item runs, :func:`run_gate` runs the ``[judge]`` model on the gold set through the judge-benchmark
machinery (:func:`pytest_jeval.suite.catalog.judge_validator`; every call through the run's scheduler,
so cached and counted by the run budget). Below ``min_kappa`` or ``min_accuracy`` the run stops with a
usage error naming the measured figures and the floor; otherwise :class:`GatePlugin` adds the
validation (its id, source and figures) to the ``judge`` field of every record the judge judged, and
the summary lists it (:func:`pytest_jeval.results.summary.summarize`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_jeval.session.runtime import Runtime

__all__ = ["GatePlugin", "run_gate", "validation_key"]

validation_key = pytest.StashKey[dict[str, Any]]()
"""The judge's validation (``config.stash``, controller): id, source, evaluator, figures, floors."""

#: The judge-benchmark figures a validation keeps (the rest stays in the gate's own records).
FIGURES = ("n", "n_judged", "accuracy", "accuracy_ci", "cohen_kappa", "kappa_weights", "ece", "brier",
           "position_consistency", "errors")


def _validation_id(model: str, entry: Any, files: list[Path], samples: int | None, seed: int) -> str:
    digest = hashlib.sha256()
    for part in (model, str(entry.evaluator), str(entry.kind), json.dumps(entry.scale), str(samples), str(seed)):
        digest.update(part.encode("utf-8") + b"\0")
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


def run_gate(config: pytest.Config, runtime: Runtime) -> dict[str, Any] | None:
    """Validate the judge (see the module docstring); the validation, or None without ``[judge] validate``.

    Raises ``pytest.UsageError`` when the judge falls below a floor or cannot be measured.
    """
    plan = runtime.plan
    judge = plan.suite.judge
    if judge is None or plan.judge_validation is None:
        return None
    from pytest_jeval.calls.client import ModelClient
    from pytest_jeval.suite.catalog import judge_template, judge_validator
    from pytest_jeval.suite.dataset import load_samples

    entry, files = plan.judge_validation
    template, _module = judge_template()
    assert template.configure is not None
    bench = template.configure(entry)
    samples, _skipped = load_samples(bench, files=files, split=entry.split, subset=entry.subset,
                                     seed=plan.suite.run.seed, record_ids=None, max_samples=judge.validate_samples)
    settings = plan.judge_settings()
    assert settings is not None
    endpoint = runtime.endpoint(settings.model, judge=True)
    client = ModelClient(settings.model, endpoint=endpoint, submit=runtime.submit, settings=settings, role="judge")
    records, metrics = judge_validator()(entry, samples, client, workers=min(16, endpoint.max_concurrency))
    errors = sum(1 for r in records if r.get("error") is not None)
    figures = {key: metrics.get(key) for key in FIGURES if key in metrics}
    figures.update(n=len(records), errors=errors)
    validation = {
        "id": _validation_id(settings.model, entry, files, judge.validate_samples, plan.suite.run.seed),
        "judge_model": settings.model,
        "source": judge.gold_set,
        "evaluator": entry.evaluator,
        **figures,
        "min_kappa": judge.min_kappa,
        "min_accuracy": judge.min_accuracy,
    }
    problems = _below_floors(validation, errors)
    if problems:
        measured = (f"accuracy {_fmt(validation.get('accuracy'))}, Cohen's kappa {_fmt(validation.get('cohen_kappa'))}"
                    f", ECE {_fmt(validation.get('ece'))} over {len(records)} gold items ({errors} errored)")
        raise pytest.UsageError(
            f"jeval: the judge {settings.model!r} failed its validation on {judge.gold_set!r} "
            f"({entry.evaluator}): {'; '.join(problems)}. Measured: {measured}. No judged sample was sent.")
    config.stash[validation_key] = validation
    config.pluginmanager.register(GatePlugin(validation), "jeval-judge-gate")
    return validation


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _below_floors(validation: dict[str, Any], errors: int) -> list[str]:
    problems = []
    for key, floor, name in (("cohen_kappa", validation["min_kappa"], "kappa"),
                             ("accuracy", validation["min_accuracy"], "accuracy")):
        if floor is None:
            continue
        value = validation.get(key)
        if value is None:
            problems.append(f"its {name} could not be measured ({errors} of {validation['n']} gold items errored, "
                            f"{validation.get('n_judged')} judged); min_{name} is {floor:g}")
        elif value < floor:
            problems.append(f"{name} {value:.3f} is below min_{name} {floor:g}")
    return problems


class GatePlugin:
    """Controller: the validation goes into the ``judge`` field of each record the judge judged, before it is
    written (the records are built where the items ran; the gate ran here)."""

    def __init__(self, validation: dict[str, Any]) -> None:
        self.validation = {k: v for k, v in validation.items() if k not in ("min_kappa", "min_accuracy")}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Name the validation in a fresh record whose item asked the judge."""
        record = getattr(report, "jeval_record", None)
        if record is None or getattr(report, "jeval_resumed", False):
            return
        judge = record.get("judge")
        if isinstance(judge, dict) and judge.get("model") == self.validation["judge_model"]:
            judge["validation"] = dict(self.validation)
