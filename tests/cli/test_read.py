"""Malformed input to the ``jeval`` commands: reported with file and line, never a traceback.

Every command (summarize, compare, rescore, report) reads through one validating reader
(``pytest_jeval.results.reader.load_result``). Exit status: 0 clean, 1 lines or a stored
summary skipped, 2 an input that cannot be used (see docs/cli.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli import main
from pytest_jeval.results.reader import read_result_lines, strict_json

DATA = Path(__file__).resolve().parents[1] / "data" / "results"
A = DATA / "quickstart_model-a.jsonl"
B = DATA / "quickstart_model-b.jsonl"

#: (what, raw line bytes, the reason the reader gives)
BAD_LINES: list[tuple[str, bytes, str]] = [
    ("string number", b'{"record_id": "bad-1", "latency_seconds": "fast"}', "latency_seconds is not a number"),
    ("NaN number", b'{"record_id": "bad-2", "score": NaN}', "NaN is not a JSON number"),
    ("infinite number", b'{"record_id": "bad-3", "cost_usd": 1e999}', "out of range"),
    ("deep nesting", b'{"record_id": "bad-4", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    ("invalid UTF-8", b'{"record_id": "bad-5", "model_answer": "\xff\xfe"}', "not valid UTF-8"),
    ("lone surrogate", b'{"record_id": "bad-6", "model_answer": "\\ud800"}', "lone surrogate"),
    ("list as a label", b'{"record_id": "bad-7", "subject": ["a", "b"]}', "subject is not text"),
    ("list as a judge label", b'{"record_id": "bad-8", "gold": [1]}', "gold is not a label"),
    ("bool as a verdict", b'{"record_id": "bad-9", "is_correct": "yes"}', "is_correct is not true, false or null"),
    ("huge number", b'{"record_id": "bad-10", "latency_seconds": 1e30}', "latency_seconds is implausibly large"),
    ("probability out of range", b'{"record_id": "bad-11", "probability": 1.5}', "probability is not in [0, 1]"),
    ("no record id", b'{"benchmark": "quickstart"}', "record_id is missing"),
    ("not an object", b'[1, 2, 3]', "not a record object"),
    ("not JSON", b'{"record_id": ', "not valid JSON"),
]


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def with_bad_lines(tmp_path: Path, source: Path = A, lines: list[bytes] | None = None) -> Path:
    """A copy of ``source`` (and its summary) with the bad lines after its second line."""
    target = tmp_path / source.name
    good = source.read_bytes().splitlines(keepends=True)
    bad = [line + b"\n" for line in (lines if lines is not None else [b for _, b, _ in BAD_LINES])]
    target.write_bytes(b"".join(good[:2] + bad + good[2:]))
    shutil.copy(source.with_name(source.name + ".summary.json"), target.with_name(target.name + ".summary.json"))
    return target


@pytest.mark.parametrize("what, line, reason", BAD_LINES, ids=[w for w, _, _ in BAD_LINES])
def test_reader_names_file_line_and_reason(tmp_path: Path, what: str, line: bytes, reason: str) -> None:
    path = with_bad_lines(tmp_path, lines=[line])
    records, problems = read_result_lines(path)
    assert len(records) == 12  # every good record kept
    assert problems == [f"{path}:3: {problems[0].split(': ', 1)[1]}"]
    assert reason in problems[0] and problems[0].endswith("line skipped")


def test_torn_last_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(A.read_bytes() + b'{"record_id": "torn", "mod')
    records, problems = read_result_lines(path)
    assert len(records) == 12 and problems == [f"{path}:13: an incomplete last line (a killed run?); line skipped"]


def test_strict_json_accepts_what_the_writer_writes() -> None:
    for line in A.read_text().splitlines():
        assert strict_json(line) == json.loads(line)
    assert strict_json('{"a": "\\u00e9\\ud83d\\ude00"}') == {"a": "é😀"}  # a surrogate pair is text


def test_summarize_skips_bad_lines_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_bad_lines(tmp_path)
    code, out, err = run(capsys, "summarize", path)
    assert code == 1
    assert "Total:     12" in out and "Correct:   8" in out  # the good records, as without the bad lines
    for number, (_, _, reason) in enumerate(BAD_LINES, start=3):
        assert f"jeval: warning: {path}:{number}: " in err and reason in err
    assert "Traceback" not in err


def test_compare_skips_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_bad_lines(tmp_path)
    code, out, err = run(capsys, "compare", path, B, "--json", "--resamples", "50")
    assert code == 1
    assert json.loads(out)["shared"] == 11
    assert f"{path}:3:" in err


def test_rescore_refuses_a_file_with_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_bad_lines(tmp_path, lines=[BAD_LINES[0][1]])
    code, _, err = run(capsys, "rescore", path, "--scorer", "numeric")
    assert code == 2
    assert f"{path}:3: latency_seconds is not a number" in err and "nothing was written" in err
    assert list(tmp_path.glob("*rescored*")) == []


def test_report_skips_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_bad_lines(tmp_path)
    code, _out, err = run(capsys, "report", path, "-o", tmp_path / "r.html")
    assert code == 1 and (tmp_path / "r.html").is_file()
    assert f"{path}:9:" in err


def test_judge_labels_must_fit_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge = DATA / "halueval-judge_judge-a.jsonl"
    records = [json.loads(line) for line in judge.read_text().splitlines()]
    records[1]["gold"] = 1e20  # not one of the labels
    records[2]["labels"] = [True, False, "x"]
    records[2]["predicted"] = "x"  # fits its own labels, not the file's
    path = tmp_path / judge.name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = run(capsys, "summarize", path, "--json")
    assert code == 1 and json.loads(out)["total_samples"] == len(records) - 2
    assert f"{path}:2: gold 1e+20 is not one of its labels" in err
    assert f"{path}:3: predicted \"x\" is not one of the file's labels" in err


@pytest.mark.parametrize("text, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a summary object"),
    ('{"started_at": "yesterday"}', "started_at has the wrong type"),
    ('{"benchmark": ["x"]}', "benchmark has the wrong type"),
    ('{"ended_at": NaN}', "not valid JSON"),
])
def test_a_bad_stored_summary_is_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                         reason: str) -> None:
    path = tmp_path / A.name
    shutil.copy(A, path)
    spath = path.with_name(path.name + ".summary.json")
    spath.write_text(text)
    for argv in (["summarize", path], ["compare", path, B, "--resamples", "20"], ["report", path, "-o", tmp_path / "r.html"],
                 ["rescore", path, "--scorer", "numeric"]):
        code, _, err = run(capsys, *argv)
        assert code == 1, (argv, err)
        assert f"{spath}: {reason}" in err and "ignored" in err, err


@pytest.mark.slow
def test_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    path = with_bad_lines(tmp_path)
    for argv in (["summarize", path], ["rescore", path], ["report", tmp_path, "-o", tmp_path / "r.html"]):
        done = subprocess.run([sys.executable, "-m", "pytest_jeval", *map(str, argv)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode in (1, 2), done.stderr
        assert "Traceback" not in done.stderr and f"{path}:3:" in done.stderr


# -- jeval report stays inside the results directory ---------------------------------------------

def results_dir(tmp_path: Path, listed: str) -> Path:
    """A results directory whose summary.json lists ``listed`` as its one run."""
    root = tmp_path / "results"
    root.mkdir()
    shutil.copy(A, root / A.name)
    (root / "summary.json").write_text(json.dumps({"suite": "s", "runs": [{"jsonl": listed}]}))
    return root


@pytest.mark.parametrize("listed", ["../outside.jsonl", "sub/../../outside.jsonl", "ABSOLUTE"])
def test_report_refuses_a_listed_path_outside_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             listed: str) -> None:
    outside = tmp_path / "outside.jsonl"
    shutil.copy(B, outside)
    root = results_dir(tmp_path, str(outside) if listed == "ABSOLUTE" else listed)
    for target in (root, root / "summary.json"):
        code, _, err = run(capsys, "report", target, "-o", tmp_path / "r.html")
        assert code == 2 and "outside" in err and "refused" in err
        assert not (tmp_path / "r.html").exists()


def test_report_refuses_a_symlink_out_of_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.jsonl"
    shutil.copy(B, outside)
    root = results_dir(tmp_path, "linked.jsonl")
    os.symlink(outside, root / "linked.jsonl")
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == 2 and "outside" in err
    (root / "summary.json").unlink()  # the directory's *.jsonl instead
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == 2 and "a link pointing outside" in err


def test_report_ignores_a_summary_linked_from_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = results_dir(tmp_path, A.name)
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"benchmark": "LEAKED", "model": "LEAKED"}))
    os.symlink(outside, root / (A.name + ".summary.json"))
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == 1 and "outside the results directory" in err
    assert "LEAKED" not in (tmp_path / "r.html").read_text()
    # a link that stays inside the directory is fine
    (root / (A.name + ".summary.json")).unlink()
    shutil.copy(A.with_name(A.name + ".summary.json"), root / "kept.json")
    os.symlink(root / "kept.json", root / (A.name + ".summary.json"))
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == 0, err


@pytest.mark.parametrize("text, reason", [
    ("{oops", "not valid JSON"),
    ('{"runs": {"jsonl": "a.jsonl"}}', "runs is not a list"),
    ('{"runs": [{"jsonl": 3}]}', "runs is not a list"),
    ('{"runs": [], "gates": [{"measured": "high"}]}', "gate measured is not a number"),
])
def test_report_on_a_bad_aggregate_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                           reason: str) -> None:
    root = results_dir(tmp_path, A.name)
    (root / "summary.json").write_text(text)
    code, _, err = run(capsys, "report", root, "-o", tmp_path / "r.html")
    assert code == 2 and reason in err


@pytest.mark.parametrize("argv", [
    ["compare", A, B, "--resamples", "0"], ["compare", A, B, "--confidence", "nan"], ["compare", A, B, "--seed", "-1"],
    ["compare", A, B, "--max-listed", "-1"], ["report", A, "--worst", "-3"], ["rescore", A, "--exec-workers", "0"],
])
def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[Any]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    assert exc.value.code == 2 and "error: argument" in capsys.readouterr().err


def test_an_unknown_scorer_is_an_error_naming_the_registered_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "rescore", A, "--scorer", "nope")
    assert code == 2 and "unknown scorer 'nope'" in err
    assert "numeric" in err and "doc_qa" in err  # a generic scorer and a benchmark's own are both named


def test_an_output_that_cannot_be_written_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    code, _, err = run(capsys, "rescore", A, "--scorer", "numeric", "-o", tmp_path / "taken")
    assert code == 2 and "jeval: error:" in err and "taken" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no temporary file left
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "report", A, "-o", tmp_path / "file" / "r.html")
    assert code == 2 and "jeval: error:" in err
