"""lifelong-agent's parts without a model: upstream's answer check, SQLite against MySQL's stored gold, the
table hash, the refusals, the loaders and the sequence summary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks.lifelong_agent import bench_lifelong_agent as bench
from pytest_jeval.benchmarks.lifelong_agent.data import Options
from pytest_jeval.benchmarks.lifelong_agent.db import (
    DbTask,
    Table,
    answer_matches,
    gold_problem,
    mysql_text,
    open_table,
    same_rows,
    table_md5,
    table_rows,
)
from pytest_jeval.benchmarks.lifelong_agent.summary import summarize_sequence
from pytest_jeval.core.sample import REFUSED
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "lifelong_agent"


def samples(environment: str) -> dict[str, Any]:
    found, _ = load_samples(bench.BENCHMARK, files=[DATA / environment / "entry_dict.json"],
                            options=Options(environment=environment))  # type: ignore[arg-type]
    return {s.id: s for s in found}


@pytest.mark.parametrize(("answer", "gold", "ok"), [
    ("[('Ann',), ('Cid',)]", [("Ann",), ("Cid",)], True),
    ("[('Cid',), ('Ann',)]", [("Ann",), ("Cid",)], False),  # the rows' order counts
    ("[('Ann',)]", [("Ann",), ("Cid",)], False),
    ("[(Decimal('4000.50'), 'HR')]", [(4000.5, "HR")], True),
    ("[(4000.5000001, 'HR')]", [(4000.5, "HR")], True),  # numbers within 1e-6
    ("[(4000.6, 'HR')]", [(4000.5, "HR")], False),
    ("[(1, \"HR\")]", [(1, "HR")], True),  # one pair of surrounding quotes forgiven
    ("[(1, HR)]", [(1, "HR")], True),
    ("[(1, 'hr')]", [(1, "HR")], False),  # strings exactly
    ("3", [(3,)], True),  # no parentheses: one row
    ("", [], True),
    ("[]", [], True),
    ("[(1, 'a'", [(1, "a")], False),  # unpaired
    ("[('-55',)]", [(-55,)], False),  # upstream's trimming stops one character short
])
def test_answer_check_follows_upstream(answer: str, gold: list[tuple[Any, ...]], ok: bool) -> None:
    assert answer_matches(answer, gold) is ok


def test_the_table_hash_is_upstreams_formula() -> None:
    rows = [("2", "b", None), ("1", "a", "x")]
    row_hashes = sorted(hashlib.md5(t.encode()).hexdigest()[:5] for t in ("2,b", "1,a,x"))  # NULL skipped
    assert table_md5(rows) == hashlib.md5(",".join(row_hashes).encode()).hexdigest()
    assert table_md5([]) is None
    assert mysql_text(4000.5, "DECIMAL(10,2)") == "4000.50" and mysql_text(12.0, "FLOAT") == "12"
    assert same_rows([("1", "a"), ("2", "b")], [("2", "b"), ("1", "a")])
    assert not same_rows([("1", "a")], [("1", "a"), ("1", "a")])


def test_sqlite_tasks_are_checked_against_mysqls_stored_gold() -> None:
    entries = json.loads((DATA / "db_bench" / "entry_dict.json").read_text())
    problems = {key: gold_problem(DbTask.from_row(entry)) for key, entry in entries.items()}
    assert problems["0"] is None and problems["1"] is None and problems["2"] is None and problems["5"] is None
    assert "SQLite cannot run the gold SQL" in str(problems["3"]) and "SUBSTRING_INDEX" in str(problems["3"])
    assert "differ from MySQL's stored answer" in str(problems["4"])
    # a change whose stored md5 SQLite's replay does not give is refused too
    entry = dict(entries["1"], answer_info={**entries["1"]["answer_info"], "md5": "0" * 32})
    assert "does not hash to MySQL's stored md5" in str(gold_problem(DbTask.from_row(entry)))


def test_values_go_in_as_text_and_take_the_columns_affinity() -> None:
    table = Table.from_info(json.loads((DATA / "db_bench" / "entry_dict.json").read_text())["0"]["table_info"])
    conn = open_table(table)
    assert conn.execute("SELECT id, salary FROM employees WHERE id = 2").fetchone() == (2, 4000.5)
    assert table_rows(conn, table)[1] == ("2", "Bob", "HR", "4000.50")


def test_refusals_name_their_reason() -> None:
    db, os_, kg = samples("db_bench"), samples("os_interaction"), samples("knowledge_graph")
    assert sorted(s for s, x in db.items() if REFUSED in x.metadata) == ["db_bench-3", "db_bench-4"]
    assert "needs root for useradd" in os_["os_interaction-2"].metadata[REFUSED]
    assert REFUSED not in os_["os_interaction-0"].metadata
    assert "SPARQL endpoint" in kg["knowledge_graph-0"].metadata[REFUSED]
    # the instruction gets upstream's sentence naming the table and its headers
    assert db["db_bench-0"].input.endswith("The name of this table is employees, and the headers of this table are "
                                           "id, name, department, salary.")
    # entries of another environment are skipped
    assert samples("os_interaction").keys().isdisjoint(db)


def test_local_files_in_each_layout_and_clear_errors(tmp_path: Path) -> None:
    entries = json.loads((DATA / "db_bench" / "entry_dict.json").read_text())
    lines = tmp_path / "db.jsonl"
    lines.write_text("".join(json.dumps({"sample_index": k, **v}) + "\n" for k, v in entries.items()))
    found, _ = load_samples(bench.BENCHMARK, files=[lines], options=Options())
    assert [s.id for s in found] == [f"db_bench-{i}" for i in range(6)]
    broken = tmp_path / "entry_dict.json"
    broken.write_text('{"0": {"instruction": ')
    with pytest.raises(DatasetLoadError, match=rf"lifelong-agent: cannot read {broken}"):
        load_samples(bench.BENCHMARK, files=[broken], options=Options())
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"0": {"instruction": "x", "skill_list": []}}))
    with pytest.raises(DatasetLoadError, match="none of upstream's environments"):
        load_samples(bench.BENCHMARK, files=[odd], options=Options())


def test_the_hub_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # read when the libraries are imported: set theirs too
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(DatasetLoadError, match=r"cannot load 'csyq/LifelongAgentBench' \(data_dir 'db_bench'\).*"
                                               r"set data_files"):
        load_samples(bench.BENCHMARK, options=Options())


def test_the_oracle_answers_and_the_verdicts() -> None:
    db = samples("db_bench")
    steps = bench.gold_steps(db["db_bench-0"])
    assert steps[-1].text == "Final Answer: [('Ann',), ('Cid',)]"  # type: ignore[union-attr]
    assert bench.db_verdict(db["db_bench-0"], "Rows:\nFinal Answer: [('Ann',), ('Cid',)]", 1, None).correct
    # the answer needs a round of its own: after three statements there is none left
    late = bench.db_verdict(db["db_bench-0"], "Final Answer: [('Ann',), ('Cid',)]", 3, None)
    assert late.correct is False and "no round left" in late.metadata["limit"]
    assert bench.db_verdict(db["db_bench-0"], "The names are Ann and Cid.", 1, None).correct is False
    assert all("sqlite-for-mysql" in d for d in bench.db_verdict(db["db_bench-0"], "", 1, None).metadata["deviations"][:1])


def record(position: int, correct: bool | None, error: str | None = None) -> dict[str, Any]:
    return {"record_id": f"r{position}", "is_correct": correct, "error": error,
            "scoring_metadata": {"do_nothing_passes": position == 0},
            "agent": {"memory": {"policy": "recent-successes", "position": position}}}


def test_the_summary_reports_the_sequence_and_its_trend() -> None:
    # out of order on purpose; position 5 errored (left out)
    records = [record(3, True), record(0, False), record(1, False), record(2, True), record(5, None, "boom"),
               record(4, True), record(6, True), record(7, False)]
    got = summarize_sequence(records)
    seq = got["sequence"]
    assert seq["episodes"] == 7 and seq["memory_policy"] == "recent-successes"
    assert seq["early_accuracy"] == pytest.approx(1 / 3)  # positions 0, 1, 2
    assert seq["late_accuracy"] == pytest.approx(3 / 4)  # positions 3, 4, 6, 7
    assert seq["trend"] == pytest.approx(3 / 4 - 1 / 3)
    assert seq["quarter_accuracy"] == [0.0, pytest.approx(1 / 2), 1.0, pytest.approx(1 / 2)]
    assert got["do_nothing_passes"] == 1


def test_rescoring_a_query_needs_only_the_record() -> None:
    from pytest_jeval.results.records import score_fields
    from pytest_jeval.scoring.registry import call_scorer

    db = samples("db_bench")
    for text, correct in (("Final Answer: [('Ann',), ('Cid',)]", True), ("Final Answer: [('Ann',)]", False)):
        scored = bench.db_verdict(db["db_bench-0"], text, 1, None)
        record = {"record_id": "db_bench-0", **score_fields(scored, expected=None)}
        again = call_scorer("lifelong-agent", record)
        assert again.correct is correct and again.metadata == scored.metadata
    change = {"record_id": "db_bench-1", "is_correct": True, "score": 1.0, "scoring_metadata": {"query": False}}
    kept = call_scorer("lifelong-agent", change)
    assert kept.correct is True and "cannot be rebuilt" in kept.metadata["rescore_note"]
