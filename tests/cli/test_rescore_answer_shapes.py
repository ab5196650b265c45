"""The scorers issue 29 adds (``token_f1``, ``answer_word``, ``answer_line``, ``mcq_multi``) through
``jeval rescore --scorer``: a result file of a custom suite scored again with each, as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli._main import main


def _record(rid: str, answer: str, expected: str) -> dict[str, Any]:
    return {"record_id": rid, "benchmark": "custom", "model": "m", "model_answer": answer, "expected": expected,
            "is_correct": None, "score": None, "error": None, "scoring_metadata": {}}


@pytest.mark.parametrize(("scorer", "rows", "verdicts"), [
    ("token_f1", [("Paris", "Paris, Texas"), ("The Eiffel Tower", "eiffel tower")], [False, True]),
    ("answer_word", [("ANSWER: Yes.", "yes"), ("ANSWER: Yes then more", "yes")], [True, None]),
    ("answer_line", [("ANSWER: New York City\nThat is all.", "new york city"), ("no marker", "x")], [True, None]),
    ("mcq_multi", [("ANSWER: A, C", "A,C"), ("ANSWER: A", "A, C")], [True, False]),
])
def test_rescore_with_each_new_scorer(tmp_path: Path, capsys: pytest.CaptureFixture[str], scorer: str,
                                      rows: list[tuple[str, str]], verdicts: list[bool | None]) -> None:
    source = tmp_path / "custom_m.jsonl"
    source.write_text("".join(json.dumps(_record(f"r{i}", a, e)) + "\n" for i, (a, e) in enumerate(rows)))
    out = tmp_path / "again.jsonl"
    assert main(["rescore", str(source), "--scorer", scorer, "-o", str(out)]) == 0
    assert f"with {scorer!r}" in capsys.readouterr().out
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["is_correct"] for r in records] == verdicts
    if scorer == "token_f1":
        assert records[0]["score"] == pytest.approx(2 / 3)
