"""swebench's grading and tools in the real sandbox, on the fixture repositories (no model, no plugin).

Each verdict comes from the instance's tests run in a fresh checkout under bubblewrap; the same logs are
then graded by the installed ``swebench`` package (``make swebench``), which must agree.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents import ToolContext, ToolError
from pytest_jeval.agents.workspace import make_workspace, remove_workspace
from pytest_jeval.benchmarks._swe import grading, parsers, specs
from pytest_jeval.benchmarks._swe.episode import SweEpisode, environment, finish, gold_steps
from pytest_jeval.benchmarks._swe.evaluate import grade_patch
from pytest_jeval.benchmarks._swe.options import SweOptions
from pytest_jeval.benchmarks._swe.prepare import prepare
from pytest_jeval.benchmarks._swe.tools import bash, python, str_replace
from pytest_jeval.benchmarks.swebench import bench_swebench as bench
from pytest_jeval.benchmarks.swebench.scoring import rescore_record, swebench_score
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.sample import Sample
from tests.support.swe import DATA, REPOS, ROWS, SPECS, require_sandbox, shared_cache

PATCHES = DATA / "patches"


@pytest.fixture(scope="module")
def samples() -> Iterator[dict[str, Sample]]:
    require_sandbox()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JEVAL_SWE_CACHE", str(shared_cache()))
        ctx = LoadContext(benchmark="swebench", subset=None, seed=0, data_dir=DATA,
                          options=SweOptions(repos_dir=REPOS, specs_file=SPECS))
        yield {iid: bench.to_sample(row, 0, ctx) for iid, row in ROWS.items() if "workload" not in row}


def _upstream_report(sample: Sample, log: str, tmp_path: Path) -> dict[str, Any]:
    """4.1.0's ``get_eval_report`` on ``log``, the fixture repository routed to the parser its recipe names."""
    if specs.upstream_constants() is None:
        pytest.fail("the cross-check needs the swebench package: run `make swebench`")
    upstream_grading = specs.upstream_module("swebench.harness.grading")
    upstream_parsers = specs.upstream_module("swebench.harness.log_parsers.python")
    assert upstream_grading is not None and upstream_parsers is not None, "run `make swebench`"
    meta = sample.metadata
    inst, spec = meta["instance"], meta["spec"]
    path = tmp_path / f"{inst['instance_id']}.log"
    path.write_text(log)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(upstream_grading.MAP_REPO_TO_PARSER, inst["repo"], getattr(upstream_parsers, spec["log_parser"]))
        mp.setitem(upstream_grading.MAP_REPO_VERSION_TO_SPECS, inst["repo"], {inst["version"]: {"test_cmd": "pytest"}})
        test_spec = types.SimpleNamespace(instance_id=inst["instance_id"], repo=inst["repo"], version=inst["version"],
                                          FAIL_TO_PASS=inst["fail_to_pass"], PASS_TO_PASS=inst["pass_to_pass"])
        prediction = {"instance_id": inst["instance_id"], "model_patch": "x"}
        report: dict[str, Any] = upstream_grading.get_eval_report(test_spec, prediction, str(path), True)
    return report[inst["instance_id"]]


CASES = [("jeval-fixtures__textkit-1", "gold", grading.FULL), ("jeval-fixtures__textkit-1", "partial", grading.PARTIAL),
         ("jeval-fixtures__textkit-1", "wrong", grading.NO), ("jeval-fixtures__ledger-1", "gold", grading.FULL),
         ("jeval-fixtures__routegraph-1", "gold", grading.FULL)]


@pytest.mark.parametrize(("iid", "which", "expected"), CASES, ids=[f"{i.split('__')[1]}-{w}" for i, w, _ in CASES])
def test_each_patch_gets_upstreams_verdict_on_the_same_log(samples: dict[str, Sample], tmp_path: Path, iid: str,
                                                           which: str, expected: str) -> None:
    sample = samples[iid]
    patch = ROWS[iid]["patch"] if which == "gold" else (PATCHES / f"{iid.split('__')[1]}.{which}.diff").read_text()
    graded = grade_patch(prepare(sample.metadata), patch)
    assert graded.resolution == expected and graded.reason is None, graded.log[-2000:]
    assert graded.applied_with == "git apply --verbose"
    theirs = _upstream_report(sample, graded.log, tmp_path)
    assert theirs["patch_successfully_applied"] and theirs["resolved"] == (expected == grading.FULL)
    assert theirs["tests_status"]["FAIL_TO_PASS"] == graded.report["FAIL_TO_PASS"]  # type: ignore[index]
    assert theirs["tests_status"]["PASS_TO_PASS"] == graded.report["PASS_TO_PASS"]  # type: ignore[index]
    statuses = parsers.parse_log(sample.metadata["spec"]["log_parser"], graded.log)
    report = grading.grade_report(statuses, sample.target["FAIL_TO_PASS"], sample.target["PASS_TO_PASS"])
    assert grading.resolution(report) == expected


def test_a_patch_that_fails_before_the_tests_says_why(samples: dict[str, Sample]) -> None:
    sample = samples["jeval-fixtures__textkit-1"]
    refused = swebench_score(sample, (PATCHES / "textkit-1.edits-tests.diff").read_text(), source="test")
    assert refused.correct is False and refused.extracted == grading.NO
    assert refused.metadata["reason"] == "the patch edits the tests that grade it: tests/test_slug.py"
    empty = swebench_score(sample, "", source="test")
    assert empty.metadata["reason"] == "the patch is empty: nothing was submitted"
    malformed = swebench_score(sample, "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n"
                                       "-a\n+b\n", source="test")
    assert malformed.correct is False and malformed.metadata["reason"].startswith("the patch did not apply")
    assert "patch --batch --fuzz=5 -p1 -i" in malformed.metadata["reason"]  # every method was tried
    prose = swebench_score(sample, None, source="the reply", reply="Change the regular expression.")
    assert prose.metadata["reason"] == "the reply holds no unified diff"


def test_a_record_says_how_it_differs_from_upstream_and_rescores(samples: dict[str, Sample]) -> None:
    sample = samples["jeval-fixtures__textkit-1"]
    score = swebench_score(sample, (PATCHES / "textkit-1.partial.diff").read_text(), source="test")
    meta = score.metadata
    assert meta["resolution"] == grading.PARTIAL and meta["environment"]["recipe"].startswith("specs_file")
    assert any("Ubuntu 22.04" in d for d in meta["deviations"]) and any("bubblewrap" in d for d in meta["deviations"])
    assert meta["statuses"]["tests/test_slug.py::test_strips_edge_separators"] == "FAILED"
    assert grading.START in meta["log_tail"]
    record = {"scoring_metadata": json.loads(json.dumps(meta)), "is_correct": False, "score": 0.0}
    again = rescore_record(record, sample)
    assert (again.correct, again.extracted) == (False, grading.PARTIAL)
    record["scoring_metadata"]["statuses"]["tests/test_slug.py::test_strips_edge_separators"] = "PASSED"
    assert rescore_record(record, sample).extracted == grading.FULL  # the verdict is recomputed from the statuses


@pytest.fixture
def episode(samples: dict[str, Sample]) -> Iterator[tuple[ToolContext, SweEpisode]]:
    sample = samples["jeval-fixtures__textkit-2"]
    workspace = make_workspace()
    try:
        state = environment(sample, workspace)
        yield ToolContext(sample=sample, workspace=workspace, state=state, timeout=120), state
    finally:
        remove_workspace(workspace)


def test_the_tools_work_in_the_checkout_and_the_diff_is_the_submission(episode: tuple[ToolContext, SweEpisode]) -> None:
    ctx, state = episode
    out = bash.fn(command="git log --all --format=%s && python -c 'import textkit; print(textkit.__file__)'", ctx=ctx)
    assert out.startswith("exit status: 0") and "/sandbox/textkit/__init__.py" in out
    # the history ends at the base commit (and upstream's SWE-bench commit): the fix is not there to find
    assert out.split("stdout:\n")[1].splitlines()[:3] == [
        "SWE-bench", "slugify: collapse runs of separators and strip them at the ends",
        "Initial textkit: slugify, truncate, wrap_words"]
    offline = python.fn(code="import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), 3)\n"
                             "    print('online')\nexcept OSError as e:\n    print('offline', e.errno)", ctx=ctx)
    assert "offline" in offline
    with pytest.raises(ToolError, match="occurs 0 times"):
        str_replace.fn(path="textkit/wrap.py", old_str="no such text", new_str="x", ctx=ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        str_replace.fn(path="../etc/passwd", old_str="root", new_str="x", ctx=ctx)
    done = str_replace.fn(path="textkit/wrap.py", old_str="    return text[:width] + ellipsis\n",
                          new_str="    return text[: max(width - len(ellipsis), 0)] + ellipsis[:width]\n", ctx=ctx)
    assert done.startswith("replaced 1 occurrence in textkit/wrap.py (line 8)")
    bash.fn(command="echo 'NOTE = 1' > textkit/notes.py", ctx=ctx)
    finish(state, ctx.workspace)
    assert state.submission_error is None and state.submission is not None
    assert "+    return text[: max(width - len(ellipsis), 0)] + ellipsis[:width]" in state.submission
    assert "b/textkit/notes.py" in state.submission and ".jeval" not in state.submission  # new files; not the harness's
    graded = grade_patch(state.prepared, state.submission)  # type: ignore[arg-type]
    assert graded.resolution == grading.FULL, graded.log[-1500:]


def test_the_oracle_applies_the_gold_patch_with_the_bash_tool(episode: tuple[ToolContext, SweEpisode]) -> None:
    ctx, state = episode
    steps = gold_steps(ctx.sample)
    assert [type(s).__name__ for s in steps] == ["ToolStep", "SayStep"]
    out = bash.fn(ctx=ctx, **steps[0].arguments)  # type: ignore[union-attr]
    assert out.startswith("exit status: 0"), out
    finish(state, ctx.workspace)
    assert state.submission is not None and grade_patch(state.prepared, state.submission).resolution == grading.FULL  # type: ignore[arg-type]
