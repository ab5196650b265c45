"""The ``tool_call_accuracy`` evaluator: BFCL's rules for one call and parallel calls."""

from __future__ import annotations

import json

import pytest

from pytest_jeval.judge_bench.evaluators.tool_calls import check_call, parse_calls
from tests.support.evaluators import judge

SPEC = [{"name": "calculate_triangle_area", "parameters": {"type": "dict", "properties": {
    "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}}, "required": ["base", "height"]}}]
GOLD = [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]


@pytest.mark.parametrize(("output", "ok"), [
    ("calculate_triangle_area(base=10, height=5)", True),
    ("calculate_triangle_area(base=10, height=5, unit='Units')", True),
    ('[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "units"}}]', True),
    ('{"name": "calculate_triangle_area", "arguments": "{\\"base\\": 10, \\"height\\": 5}"}', True),
    ('{"type": "function", "function": {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}}', True),
    ("calculate_triangle_area(base=10)", False),                       # required parameter missing
    ("calculate_triangle_area(base=10, height=6)", False),             # unacceptable value
    ("calculate_triangle_area(base=10, height=5, color='red')", False),  # unknown parameter
    ("calculate_triangle_area(base=10.0, height=5)", False),           # float where the spec says integer
    ("calculate_circle_area(base=10, height=5)", False),               # wrong function
    ("calculate_triangle_area(base=10, height=5); rm -rf /", False),   # not parseable
    ("[calculate_triangle_area(base=10, height=5), calculate_triangle_area(base=10, height=5)]", False),  # count
])
def test_tool_call_rules(output: str, ok: bool) -> None:
    j = judge("tool_call_accuracy", output=output, expected=json.dumps(GOLD), context=json.dumps(SPEC))
    assert j.predicted is ok, j.details


def test_tool_call_bfcl_details() -> None:
    # int accepted for float; optional omitted; dict values; strings standardised
    spec = {"name": "f", "parameters": {"properties": {"x": {"type": "float"}, "opts": {"type": "dict"}, "s": {"type": "string"}},
                                        "required": ["x"]}}
    answer = {"f": {"x": [2.0], "opts": [{"limit": [50], "mode": ["fast", ""]}, ""], "s": ["New York", ""]}}
    assert check_call(("f", {"x": 2, "opts": {"limit": 50}, "s": "new-york"}), answer, spec) is None
    assert check_call(("f", {"x": 2, "opts": {"limit": 51}}), answer, spec) is not None
    assert check_call(("f", {"x": 2, "opts": {"limit": 50, "extra": 1}}), answer, spec) is not None
    assert check_call(("f", {"x": True}), answer, spec) is not None  # a bool is not a number
    # a parameter the spec requires must be present even when the answer lists "" (BFCL checks required first)
    assert "missing required" in (check_call(("f", {}), {"f": {"x": [2.0, ""]}}, spec) or "")
    assert check_call(("f", {"x": "2.0"}), {"f": {"x": [2.0]}}, None, language="java") is None  # source string read as JSON
    assert check_call(("f_g", {}), {"f.g": {}}, None) is None  # "." may be written "_"
    assert parse_calls("[a.b(x=1), c(y=[1, 2])]") == [("a.b", {"x": 1}), ("c", {"y": [1, 2]})]


def test_parallel_calls_match_in_any_order() -> None:
    gold = [{"f": {"x": [1]}}, {"g": {"y": [2]}}]
    assert judge("tool_call_accuracy", output="[g(y=2), f(x=1)]", expected=gold).predicted is True
    assert judge("tool_call_accuracy", output="[g(y=2), f(x=3)]", expected=gold).predicted is False
