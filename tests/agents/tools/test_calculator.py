"""The ``calculator`` tool: arithmetic evaluated, everything else refused, blow-ups caught before they happen."""

from __future__ import annotations

import math
import re

import pytest

from pytest_jeval.agents.tool import ToolError
from pytest_jeval.agents.tools import TOOLS, evaluate
from pytest_jeval.agents.tools.calculator import MAX_INT_BITS


def calc(expression: str) -> str:
    fn = TOOLS.get("calculator").fn
    assert fn is not None
    return str(fn(expression=expression))


@pytest.mark.parametrize(("expression", "expected"), [
    ("1 + 2", "3"),
    ("7 / 2", "3.5"),
    ("4 / 2", "2"),  # an integral float prints as an integer
    ("2 ** 10", "1024"),
    ("2 ** -1", "0.5"),
    ("-3 // 2", "-2"),
    ("7 % 3", "1"),
    ("-(2 + 3) * +4", "-20"),
    ("0.1 + 0.2", repr(0.1 + 0.2)),
    ("1_000 * 3", "3000"),
    ("sqrt(2)", repr(math.sqrt(2))),
    ("log(8, 2)", "3"),
    ("log(e)", "1"),
    ("exp(1)", repr(math.e)),
    ("sin(0) + cos(0) + tan(0)", "1"),
    ("2 * pi", repr(2 * math.pi)),
    ("abs(-4.5)", "4.5"),
    ("round(2.567, 2)", "2.57"),
    ("round(2.5)", "2"),
    ("min(3, 1, 2) + max(3, 1, 2)", "4"),
    ("floor(-2.5)", "-3"),
    ("ceil(2.1)", "3"),
    ("2 ** 100", str(2 ** 100)),
    ("1e20", "1e+20"),
    ("  (3 + 4.5) * 2  ", "15"),
])
def test_calculator_evaluates_arithmetic(expression: str, expected: str) -> None:
    assert calc(expression) == expected


@pytest.mark.parametrize(("expression", "named"), [
    ("__import__('os')", "unknown function '__import__'"),
    ("__import__('os').system('true')", "calling attribute access is not allowed"),
    ("().__class__", "attribute access is not allowed"),
    ("()", "a tuple is not allowed"),
    ("(1).__class__", "attribute access is not allowed"),
    ("math.sqrt(4)", "calling attribute access is not allowed"),
    ("x + 1", "unknown name 'x'"),
    ("'a' * 3", "str literal 'a' is not allowed"),
    ("True + 1", "bool literal True is not allowed"),
    ("1j * 2", "complex literal"),
    ("1 << 3", "operator << is not allowed"),
    ("6 & 3", "operator & is not allowed"),
    ("~1", "operator ~ is not allowed"),
    ("not 1", "operator not is not allowed"),
    ("[1, 2]", "a list is not allowed"),
    ("1 < 2", "comparison is not allowed"),
    ("1 if 1 else 2", "if-else is not allowed"),
    ("(lambda: 1)()", "calling lambda is not allowed"),
    ("sqrt(x=4)", "takes no keyword arguments"),
    ("sqrt(1, 2)", "sqrt() takes 1 argument(s), not 2"),
    ("min()", "min() takes 1 to 100 argument(s), not 0"),
    ("max(*[1])", "* arguments are not allowed"),
    ("factorial(10)", "unknown function 'factorial'"),
    ("1 +", "not an arithmetic expression"),
    ("import os", "not an arithmetic expression"),
    ("(-8) ** (1 / 3)", "result of type complex is not a real number"),
    ("sqrt(-1)", "invalid value: math domain error"),
])
def test_calculator_refuses_everything_else(expression: str, named: str) -> None:
    with pytest.raises(ToolError) as info:
        calc(expression)
    assert named in str(info.value)


@pytest.mark.parametrize("expression", ["9**9**9", "2 ** (2 ** 40)", "(-7) ** 10 ** 8", "10 ** 10 ** 10 % 7"])
def test_calculator_refuses_huge_powers_before_computing_them(expression: str) -> None:
    with pytest.raises(ToolError, match="result too large"):
        calc(expression)


@pytest.mark.parametrize(("expression", "named"), [
    (f"2 ** {MAX_INT_BITS + 1}", "result too large"),  # passes the estimate, caught right after
    ("(10 ** 3000) * (10 ** 3000)", "result too large"),
    ("round(1, -1000000)", "needs an integer n with"),
    ("-" * 150 + "1", "nested deeper than 100"),
    ("(" * 250 + "1" + ")" * 250, "not an arithmetic expression: too many nested parentheses"),
    ("1+" * 1500 + "1", "longer than 2000 characters"),
    ("exp(1000)", "out of range"),
    ("1e308 * 10", "out of range"),
    ("sqrt(10 ** 400)", "out of range"),
    ("floor(1e308 * 10)", "out of range"),
])
def test_calculator_guards_against_blowups(expression: str, named: str) -> None:
    with pytest.raises(ToolError) as info:
        calc(expression)
    assert re.search(named, str(info.value))


def test_calculator_still_computes_large_results_under_the_cap() -> None:
    assert calc(f"2 ** {MAX_INT_BITS - 1}") == str(2 ** (MAX_INT_BITS - 1))
    assert evaluate("1 ** 10 ** 12") == 1 and evaluate("(-1) ** (10 ** 12 + 1)") == -1


@pytest.mark.parametrize("expression", ["1 / 0", "1 // 0", "5 % 0", "0 ** -1", "1.5 / (2 - 2)"])
def test_calculator_division_by_zero(expression: str) -> None:
    with pytest.raises(ToolError, match=r"^division by zero$"):
        calc(expression)
