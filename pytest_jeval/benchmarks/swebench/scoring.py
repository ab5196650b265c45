"""swebench's verdict as a record: the resolution, the per-test statuses, the patch, the log tail, the
deviations from upstream's container; its rescorer and its summary fields."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

from pytest_jeval.benchmarks._swe.envs import os_name
from pytest_jeval.benchmarks._swe.evaluate import grade_patch, precheck, tail
from pytest_jeval.benchmarks._swe.grading import FULL, NO, PARTIAL, grade_report, resolution
from pytest_jeval.benchmarks._swe.patches import extract_patch, patch_paths
from pytest_jeval.benchmarks._swe.prepare import HARNESS_ERRORS, instance_of, prepare
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.replay import stored_score

__all__ = ["expected_statuses", "rescore_record", "summarize", "swebench_score"]

MAX_PATCH_CHARS = 20_000
NOT_RESCORED = "not rescored: the record holds no test statuses (the patch never reached the tests)"


def expected_statuses(statuses: dict[str, str], expected: list[str]) -> dict[str, str]:
    """The statuses the verdict reads: the expected tests', and the ids a cut-off expected id begins."""
    cut = [c for c in expected if c.count("[") > c.count("]")]
    wanted = set(expected)
    return {k: v for k, v in statuses.items() if k in wanted or any(k.startswith(c) for c in cut)}


def swebench_score(sample: Sample, patch: str | None, *, source: str, reply: str | None = None) -> Score:
    """Grade a submission (``reply``: a direct answer, the diff taken from it) as upstream grades it."""
    inst = instance_of(sample.metadata)
    reason: str | None = None
    if reply is not None:
        patch = extract_patch(reply)
        if patch is None:
            reason = "the reply holds no unified diff"
    base = {"instance_id": inst.instance_id, "repo": inst.repo, "version": inst.version, "patch_source": source}
    if reason is None:
        reason = precheck(patch, inst.test_patch)
    if reason is not None:
        return _score(NO, {**base, "reason": reason, "patch": (patch or "")[:MAX_PATCH_CHARS]})
    try:
        prepared = prepare(sample.metadata)
        graded = grade_patch(prepared, patch)
    except HARNESS_ERRORS as exc:
        return Score.unscorable(f"the instance could not be prepared or run: {exc}", expected=FULL, **base)
    expected = [*inst.fail_to_pass, *inst.pass_to_pass]
    meta: dict[str, Any] = {
        **base,
        "resolution": graded.resolution,
        "reason": graded.reason,
        "patch": (patch or "")[:MAX_PATCH_CHARS],
        "patch_truncated": len(patch or "") > MAX_PATCH_CHARS,
        "patch_files": patch_paths(patch or ""),
        "applied_with": graded.applied_with,
        "tests_status": graded.report,
        "statuses": expected_statuses(graded.statuses, expected),
        "status_counts": dict(collections.Counter(graded.statuses.values())),
        "test_exit_code": graded.exit_code,
        "log_tail": tail(graded.log),
        "grading_seconds": round(graded.seconds, 3),
        "environment": {"os": os_name(), "python": prepared.env.python_version,
                        "base_python": prepared.env.base_python, "recipe": prepared.spec.source,
                        "parser": prepared.spec.log_parser, "env_key": prepared.env.key},
        "deviations": prepared.deviations(),
    }
    if graded.unscored is not None:
        return Score.unscorable(graded.unscored, expected=FULL, **meta)
    return _score(graded.resolution, meta)


def _score(res: str, meta: dict[str, Any]) -> Score:
    meta.setdefault("resolution", res)
    return Score(correct=res == FULL, value=1.0 if res == FULL else 0.0, extracted=res, expected=FULL, metadata=meta)


def rescore_record(record: dict[str, Any], sample: Sample) -> Score:
    """The report and resolution again from the stored statuses (the sandbox is not run again); a record
    whose patch never reached the tests keeps its stored verdict, with ``rescore_note`` saying why."""
    meta = dict(record.get("scoring_metadata") or {})
    statuses = meta.get("statuses")
    if not isinstance(statuses, dict) or meta.get("reason") or meta.get("tests_status") is None:
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore_note": NOT_RESCORED})
    inst = instance_of(sample.metadata)
    report = grade_report({str(k): str(v) for k, v in statuses.items()}, inst.fail_to_pass, inst.pass_to_pass)
    res = resolution(report)
    return _score(res, {**meta, "resolution": res, "tests_status": report.as_dict()})


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Resolution counts, and what a do-nothing agent resolves (none: an empty patch is never resolved)."""
    counts = collections.Counter((r.get("scoring_metadata") or {}).get("resolution") for r in records
                                 if r.get("error") is None)
    graded = sum(counts[k] for k in (FULL, PARTIAL, NO))
    return {
        "resolved": counts[FULL],
        "resolution_counts": {"FULL": counts[FULL], "PARTIAL": counts[PARTIAL], "NO": counts[NO]},
        "resolved_rate": round(counts[FULL] / graded, 4) if graded else None,
        "do_nothing_resolves": "0 instances: an empty patch is never resolved (nop scores RESOLVED_NO on each)",
    }
