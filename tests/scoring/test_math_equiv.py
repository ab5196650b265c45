"""LaTeX answer extraction and equivalence, including all of MATH-500."""

from __future__ import annotations

import collections
import json
import pathlib
import re
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pytest_jeval.scoring import _symbolic
from pytest_jeval.scoring.math_equiv import (
    compare_math,
    final_math_answer,
    last_boxed,
    math_equal,
    normalize_latex,
    score_math,
)

MATH500 = pathlib.Path(__file__).resolve().parents[1] / "data" / "math500" / "test.jsonl"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),  # the reference cut this at the first "}"
        ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}"),
        ("first \\boxed{1}, then \\boxed{2}", "2"),
        ("\\fbox{x^{2}}", "x^{2}"),
        ("\\boxed 5$", "5"),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),  # escaped braces are not group braces
        ("\\boxed{3} and an unclosed \\boxed{4", "3"),
        ("\\boxed { 7 }", "7"),
        ("no box here", None),
        ("", None),
    ],
)
def test_last_boxed(text: str, expected: str | None) -> None:
    assert last_boxed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final Answer: The final answer is $5$. I hope it is correct.", "5"),
        ("The answer is 3.5.", "3.5"),
        ("Thus the answer is $\\frac{1}{2}$.", "\\frac{1}{2}"),
        ("Answer: x = 4", "x = 4"),
        ("... \\boxed{9} and the answer is 3", "9"),  # a box wins
        ("I do not know.", None),
    ],
)
def test_final_math_answer(text: str, expected: str | None) -> None:
    assert final_math_answer(text) == expected


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\tfrac12", "\\frac{1}{2}"),
        ("\\frac 59", "\\frac{5}{9}"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})"),
        ("90^\\circ", "90"),
        ("90^{\\circ}", "90"),
        ("10,\\!080", "10,080"),
        ("\\$32,\\!348", "32,348"),
        ("864 \\mbox{ inches}^2", "864"),
        ("5.4 \\text{ cents}", "5.4"),
        ("\\frac{270}7\\text{ degrees}", "\\frac{270}{7}"),
        ("\\text{Evelyn}", "Evelyn"),
        ("\\text{(C)}", "C"),
        ("x = 5", "5"),
        ("x \\in [-2,7]", "[-2,7]"),
        ("11\\sqrt2", "11\\sqrt{2}"),
        (".35625", "0.35625"),
        ("5 cm", "5"),
        ("2m", "2m"),  # a bare single letter may be a variable, not metres
        ("42.", "42"),
        ("50\\%", "50"),
    ],
)
def test_normalize_latex(raw: str, normalized: str) -> None:
    assert normalize_latex(raw) == normalized


@pytest.mark.parametrize(
    ("pred", "gold", "method"),
    [
        ("\\dfrac{3}{4}", "\\frac34", "string"),
        ("evelyn", "\\text{Evelyn}", "string"),
        ("0.5", "\\frac12", "numeric"),
        ("10080", "10,\\!080", "numeric"),
        ("137.5", "137 \\frac{1}{2}", "numeric"),
        ("(x-1)(x+1)", "x^2-1", "symbolic"),
        ("2+\\sqrt{3}", "\\sqrt{3}+2", "symbolic"),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", "symbolic"),
    ],
)
def test_math_equal_methods(pred: str, gold: str, method: str) -> None:
    assert compare_math(pred, gold)[:2] == (True, method)
    assert math_equal(pred, gold)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [("11", "10"), ("0.5", "\\frac13"), ("(3,4)", "(3,4]"), ("x^2+1", "x^2-1"), ("", "1"),
     ("9^{9^{9^9}}", "2")],
)
def test_math_not_equal(pred: str, gold: str) -> None:
    assert not math_equal(pred, gold)


def test_symbolic_step_works_in_worker_threads() -> None:
    # math-verify's signal-based timeouts would raise outside the main thread.
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda pair: compare_math(*pair), [("(a+1)^2", "a^2+2a+1"), ("a^2", "a^3")]))
    assert results == [(True, "symbolic", "equal"), (False, "symbolic", "different")]


def test_symbolic_time_bound_kills_a_stuck_worker(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stuck = tmp_path / "stuck_worker.py"
    stuck.write_text(textwrap.dedent("""
        import sys, time
        print('{"ready": true, "error": null}', flush=True)
        for line in sys.stdin:
            time.sleep(3600)
    """))
    monkeypatch.setattr(_symbolic, "WORKER_SCRIPT", str(stuck))
    pool = _symbolic._Pool(1)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as ex:
        outcome = ex.submit(pool.compare, "x", "y", 1.0).result()
    assert outcome == "timeout"
    assert time.monotonic() - start < 60  # start-up plus the 1 s bound, not the hour the worker sleeps
    assert pool.idle == []  # the stuck worker was killed, not reused


def test_symbolic_unavailable_without_math_verify(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "no_math_verify.py"
    broken.write_text('print(\'{"ready": false, "error": "math-verify is not installed"}\', flush=True)\n')
    monkeypatch.setattr(_symbolic, "WORKER_SCRIPT", str(broken))
    pool = _symbolic._Pool(1)
    assert pool.compare("x", "y", 1.0) == "unavailable"
    assert pool.compare("x", "z", 1.0) == "unavailable"  # remembered: no new process per call


def test_score_math_metadata() -> None:
    score = score_math("We get $\\boxed{\\dfrac{1}{2}}$.", "\\frac12")
    assert score.correct is True and score.extracted == "\\dfrac{1}{2}"
    assert score.metadata == {"extracted": "\\dfrac{1}{2}", "normalized_pred": "\\frac{1}{2}",
                              "normalized_gold": "\\frac{1}{2}", "method": "string"}
    symbolic = score_math("\\boxed{(x-1)(x+1)}", "x^2-1")
    assert symbolic.correct is True
    assert symbolic.metadata["method"] == "symbolic" and symbolic.metadata["symbolic_outcome"] == "equal"
    unscored = score_math("No idea, sorry.", "3")
    assert unscored.correct is None and unscored.metadata["unscored_reason"] == "no final answer found"


def rerender(answer: str) -> str:
    """The gold as a model might write it: \\dfrac, extra spaces, \\left( ... \\right)."""
    out = answer.replace("\\frac", "\\dfrac")
    out = re.sub(r"(?<!\\left)\(", r"\\left(", out)
    out = re.sub(r"(?<!\\right)\)", r"\\right)", out)
    out = re.sub(r"\s*([,=+])\s*", r" \1  ", out)
    return "  " + out.replace(" ", "  ") + " "


@pytest.fixture(scope="module")
def math500() -> list[dict]:
    with MATH500.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_math500_rerendered_gold_scores_500_of_500(math500: list[dict]) -> None:
    assert len(math500) == 500
    failures, methods = [], collections.Counter()
    for row in math500:
        gold = row["answer"]
        variant = rerender(gold)
        if "\\frac" in gold:
            assert "\\dfrac" in variant
        if "(" in gold:
            assert "\\left(" in variant
        reply = f"Some reasoning, a wrong \\boxed{{0}} draft ... so the answer is $\\boxed{{{variant}}}$."
        score = score_math(reply, gold)
        if score.correct is not True:
            failures.append((gold, variant))
        methods[score.metadata["method"]] += 1
    assert failures == []
    # Normalisation alone absorbs this formatting noise, which keeps scoring fast.
    assert methods == {"string": 500}


def test_math500_off_by_one_integers_score_zero(math500: list[dict]) -> None:
    integers = [row["answer"] for row in math500 if re.fullmatch(r"-?\d+", row["answer"])]
    assert len(integers) > 300
    scores = [score_math(f"so the answer is $\\boxed{{{int(gold) + 1}}}$.", gold) for gold in integers]
    assert [s.expected for s in scores if s.correct is not False] == []
    assert {s.metadata["method"] for s in scores} == {"numeric"}  # decided without the symbolic step


def test_worker_script_runs_standalone() -> None:
    # The worker must not import pytest_jeval (it runs as a plain script).
    source = pathlib.Path(_symbolic.WORKER_SCRIPT).read_text()
    assert "pytest_jeval" not in source.replace("``pytest_jeval``", "")
    assert pathlib.Path(sys.executable).exists()
