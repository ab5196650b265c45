"""swefficiency's grading: the correctness gate, the speedups, the speedup ratio, the summary.

As SWE-fficiency's ``get_report.py`` defines them: expert speedup = cost before / cost after the expert
patch; model speedup = cost before / cost after the model's patch; a patch that does not apply, or after
which a PASS_TO_PASS test's status does not contain ``PASS`` in the covering tests' run, counts as no edit
(model speedup 1.0); speedup ratio (SR) = model speedup / expert speedup; the summary is the harmonic mean
of SR. Costs are instruction counts (:mod:`.measure`). The record is ``correct`` when the tests still pass
and the model's patch made the workload faster (model speedup above 1 by more than the stated precision);
its score is SR.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.cache import build_once, digest
from pytest_jeval.benchmarks._swe.evaluate import Checkout, apply_patch, precheck, tail
from pytest_jeval.benchmarks._swe.parsers import parse_log
from pytest_jeval.benchmarks._swe.patches import SWEFFICIENCY_APPLY, extract_patch, patch_paths
from pytest_jeval.benchmarks._swe.prepare import HARNESS_ERRORS, Prepared, instance_of, prepare
from pytest_jeval.benchmarks.swefficiency.measure import (
    COST_MEASURE,
    PRECISION,
    Cost,
    MeasureError,
    MeasureUnavailable,
    helper_library,
    measure,
)
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score

__all__ = ["covering_files", "reference_cost", "summarize", "swefficiency_score"]

MEASURE_VERSION = 1
MAX_PATCH_CHARS = 20_000
COVERING = ">>>>> JEVAL_COVERING_TEST"
MEASURE_FAILURES: tuple[type[Exception], ...] = (*HARNESS_ERRORS, MeasureUnavailable, MeasureError)
_TEST_FILE = re.compile(r"^(test.*\.py|.*_test\.py)$")


def covering_files(covering_tests: tuple[str, ...]) -> list[str]:
    """The covering test files upstream runs: test-named Python files (``/testbed/`` paths made relative)."""
    files = []
    for path in covering_tests:
        rel = path[len("/testbed/"):] if path.startswith("/testbed/") else path
        if _TEST_FILE.match(rel.rsplit("/", 1)[-1].lower()) and rel not in files:
            files.append(rel)
    return files


def _prefix(prepared: Prepared) -> str:
    """The recipe's commands upstream runs before its tests and its workload (eval_commands, install)."""
    lines = [*prepared.spec.eval_commands, *([prepared.spec.install] if prepared.spec.install else [])]
    return "".join(f"{line}\n" for line in lines)


def _directive(repo: str, path: str) -> str:
    if repo == "django/django":
        return path.removesuffix(".py").removeprefix("tests/").replace("/", ".")
    return path


def correctness(checkout: Checkout, prepared: Prepared) -> tuple[dict[str, str], list[str], list[str], str]:
    """Run each covering test file with the recipe's test command: ``(statuses, passed, failed, log)``."""
    inst, spec = prepared.instance, prepared.spec
    parts = [f"exec 2>&1\n{_prefix(prepared)}"]
    for path in covering_files(inst.covering_tests):
        parts.append(f"echo '{COVERING} {path}'\n{spec.test_cmd} {shlex.quote(_directive(inst.repo, path))}\n")
    done = checkout.run("".join(parts), timeout=float(prepared.options["test_timeout"]), max_output=8 << 20)
    log = done.stdout
    statuses: dict[str, str] = {}
    for section in log.split(COVERING)[1:]:
        statuses.update(parse_log(spec.log_parser, section))
    passed = [t for t in inst.pass_to_pass if "PASS" in statuses.get(t, "")]
    failed = [t for t in inst.pass_to_pass if "PASS" not in statuses.get(t, "")]
    if done.status == "timeout":
        failed = failed or ["(the covering tests timed out)"]
    return statuses, passed, failed, log


def reference_cost(prepared: Prepared, kind: str, helper: Path) -> Cost:
    """The workload's cost before any patch (``pre``) or after the expert's (``expert``), measured once."""
    inst = prepared.instance
    patch = inst.patch if kind == "expert" else ""
    key = digest(MEASURE_VERSION, str(helper), inst.workload, patch)
    final = Path(f"{prepared.tree.path.parent}.costs") / f"{kind}-{key}"

    def build(folder: Path) -> dict[str, Any]:
        with Checkout(prepared) as checkout:
            if patch:
                method, output = apply_patch(checkout, patch, SWEFFICIENCY_APPLY)
                if method is None:
                    raise MeasureError(f"the expert patch does not apply: {tail(output, 1500)}")
            cost = measure(checkout, inst.workload, helper, prefix=_prefix(prepared),
                           timeout=float(prepared.options["measure_timeout"]))
        return {"cost": cost.as_dict()}

    marker, _ = build_once(final, build, kind=f"cost-{kind}", root=prepared.cache)
    return Cost(**marker["cost"])


def swefficiency_score(sample: Sample, patch: str | None, *, source: str, reply: str | None = None) -> Score:
    """Grade a submission: correctness gate, model speedup, speedup ratio (see the module docstring)."""
    inst = instance_of(sample.metadata)
    base: dict[str, Any] = {"instance_id": inst.instance_id, "repo": inst.repo, "patch_source": source,
                            "cost_measure": COST_MEASURE, "precision": PRECISION, "dataset_speedup": inst.speedup}
    reason = None
    if reply is not None:
        patch = extract_patch(reply)
        reason = "the reply holds no unified diff" if patch is None else None
    reason = reason or precheck(patch, inst.test_patch)
    try:
        prepared = prepare(sample.metadata)
        helper = helper_library(prepared.cache)
        pre, expert = reference_cost(prepared, "pre", helper), reference_cost(prepared, "expert", helper)
    except MEASURE_FAILURES as exc:
        return Score.unscorable(f"the instance could not be prepared or measured: {exc}", **base)
    expert_speedup = pre.instructions / expert.instructions
    meta: dict[str, Any] = {**base, "patch": (patch or "")[:MAX_PATCH_CHARS], "patch_files": patch_paths(patch or ""),
                            "pre": pre.as_dict(), "expert": expert.as_dict(),
                            "expert_speedup": round(expert_speedup, 6),
                            "deviations": [*prepared.deviations(), "speed measured as instructions under callgrind, "
                                           "not upstream's wall time on pinned CPUs"]}
    model: Cost | None = None
    statuses: dict[str, str] = {}
    failed: list[str] = []
    log = ""
    applied = None
    if reason is None:
        assert patch is not None
        try:
            with Checkout(prepared) as checkout:
                applied, output = apply_patch(checkout, patch, SWEFFICIENCY_APPLY)
                if applied is None:
                    reason = f"the patch did not apply: {tail(output, 1500)}"
                else:  # measured first, as the expert's was: on the fresh checkout, before the tests ran
                    try:
                        model = measure(checkout, inst.workload, helper, prefix=_prefix(prepared),
                                        timeout=float(prepared.options["measure_timeout"]))
                    except MeasureError as exc:
                        reason = f"the workload failed after the patch: {tail(str(exc), 1500)}"
                    statuses, _, failed, log = correctness(checkout, prepared)
        except HARNESS_ERRORS as exc:
            return Score.unscorable(f"the patch could not be run: {exc}", **base)
    tests_pass = reason is None and not failed
    raw = pre.instructions / model.instructions if model is not None else 1.0
    speedup = raw if tests_pass else 1.0  # upstream: a failing or unapplied patch counts as no edit
    ratio = speedup / expert_speedup
    if reason is None and failed:
        reason = f"the patch breaks covering tests: {', '.join(failed[:10])}"
    meta.update({
        "applied_with": applied, "reason": reason, "correctness": tests_pass,
        "correctness_failures": failed, "statuses": {t: statuses.get(t, "") for t in inst.pass_to_pass},
        "model": model.as_dict() if model is not None else None, "raw_model_speedup": round(raw, 6),
        "model_speedup": round(speedup, 6), "speedup_ratio": round(ratio, 6), "tests_log_tail": tail(log),
    })
    correct = tests_pass and raw > 1 + PRECISION
    return Score(correct=correct, value=ratio, extracted=round(ratio, 6), expected=1.0, metadata=meta)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Harmonic mean of the speedup ratios (upstream's headline), correctness, and what no edit would score."""
    metas = [r.get("scoring_metadata") or {} for r in records if r.get("error") is None]
    ratios = [float(m["speedup_ratio"]) for m in metas if isinstance(m.get("speedup_ratio"), (int, float))]
    experts = [float(m["expert_speedup"]) for m in metas if isinstance(m.get("expert_speedup"), (int, float))]
    harmonic = len(ratios) / sum(1 / r for r in ratios) if ratios and all(r > 0 for r in ratios) else None
    no_edit = len(experts) / sum(experts) if experts else None  # SR of no edit is 1/expert speedup
    return {
        "speedup_ratio_harmonic_mean": round(harmonic, 6) if harmonic is not None else None,
        "speedup_ratio_count": len(ratios),
        "correctness_rate": round(sum(1 for m in metas if m.get("correctness")) / len(metas), 4) if metas else None,
        "faster_count": sum(1 for r in records if r.get("is_correct") is True),
        "cost_measure": COST_MEASURE,
        "do_nothing_harmonic_mean": round(no_edit, 6) if no_edit is not None else None,
        "do_nothing_note": "an empty or failing patch counts as no edit: model speedup 1.0, SR = 1/expert speedup "
                           "(upstream's rule); it is never correct",
    }

