"""pytest-jeval's own hooks (pytest_jeval/hookspecs.py), each implemented by a conftest in a pytester project."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.support.gsm import JevalProject


def _conftest(p: JevalProject, body: str) -> None:
    p.pytester.makeconftest(textwrap.dedent(body))


def test_update_record_edits_each_record_before_it_is_written(jeval_project: JevalProject) -> None:
    p = jeval_project
    _conftest(p, """
        def pytest_jeval_update_record(record, item):
            record["tagged_by"] = item.nodeid.rsplit("[", 1)[-1]
            record["scoring_metadata"]["note"] = {"len": len(record["record_id"])}
    """)
    result = p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-0 or gsm8k-1")
    result.assert_outcomes(passed=1, failed=1)
    records = {r["record_id"]: r for r in p.records()}
    assert set(records) == {"gsm8k-0", "gsm8k-1"}
    for rid, rec in records.items():
        assert rec["tagged_by"] == f"test-model/{rid}]"
        assert rec["scoring_metadata"]["note"] == {"len": len(rid)}


@pytest.mark.slow
def test_update_record_runs_on_xdist_workers(jeval_project: JevalProject) -> None:
    p = jeval_project
    _conftest(p, """
        import os

        def pytest_jeval_update_record(record, item):
            record["worker"] = os.environ.get("PYTEST_XDIST_WORKER")
    """)
    result = p.pytester.runpytest_subprocess("--jeval-config", str(p.suite()), "-n", "2", "-k", "gsm8k-0 or gsm8k-5")
    result.assert_outcomes(passed=2)
    assert {r["worker"] for r in p.records()} <= {"gw0", "gw1"} and len(p.records()) == 2


def test_update_summary_edits_the_written_summaries(jeval_project: JevalProject) -> None:
    p = jeval_project
    _conftest(p, """
        def pytest_jeval_update_summary(summary, records):
            summary["answer_chars"] = sum(len(r["model_answer"] or "") for r in records)
            summary["seen_ids"] = sorted(r["record_id"] for r in records)
    """)
    p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-0 or gsm8k-7")
    records = p.records()
    summary = p.summary()
    assert summary["seen_ids"] == ["gsm8k-0", "gsm8k-7"]
    assert summary["answer_chars"] == sum(len(r["model_answer"]) for r in records) > 0
    aggregate = json.loads((p.pytester.path / "out" / "summary.json").read_text())
    assert aggregate["runs"][0]["seen_ids"] == ["gsm8k-0", "gsm8k-7"]


def test_write_results_replaces_the_writer(jeval_project: JevalProject) -> None:
    p = jeval_project
    _conftest(p, """
        import json
        import pytest

        class MyWriter:
            def __init__(self, config):
                self.config = config
                self.records = []

            def pytest_runtest_logreport(self, report):
                record = getattr(report, "jeval_record", None)
                if record is not None:
                    self.records.append(record)

            def pytest_sessionfinish(self, session):
                path = self.config.rootpath / "mine.json"
                path.write_text(json.dumps(sorted(r["record_id"] for r in self.records)))

        @pytest.hookimpl
        def pytest_jeval_write_results(config, plan):
            return MyWriter(config)
    """)
    result = p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-0 or gsm8k-1 or gsm8k-7")
    result.assert_outcomes(passed=2, failed=1)
    assert json.loads((p.pytester.path / "mine.json").read_text()) == ["gsm8k-0", "gsm8k-1", "gsm8k-7"]
    out = p.pytester.path / "out"
    assert not list(out.glob("*.json*")) and not list(out.glob(".*lock*"))  # no results file (the cache may be there)
    assert "jeval results" not in result.stdout.str()

    resumed = p.pytester.runpytest("--jeval-config", str(p.suite()), "--jeval-resume")
    assert resumed.ret == 4
    resumed.stderr.fnmatch_lines(["*--jeval-resume needs pytest-jeval's results writer*"])
