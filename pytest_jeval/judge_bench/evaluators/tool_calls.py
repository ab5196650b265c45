"""The ``tool_call_accuracy`` evaluator: do the agent's tool calls match the expected calls (BFCL rules)?

The gold ``expected`` is a BFCL ``possible_answer`` ground truth: a list of calls
``{function_name: {param: [acceptable values...]}}``. An empty string ``""``
among the acceptable values means the parameter may be omitted. The optional
``context`` holds the tool specs (BFCL ``function`` list: ``name`` and
``parameters`` with ``properties``/``required``/types).

A predicted call matches an expected call when (BFCL's AST checker rules):

* the function name equals the expected one (``.`` written as ``_`` is accepted);
* every required parameter of the spec is present;
* no parameter appears that the expected call (or the spec) does not know;
* with a spec and ``language = python``, each value has the spec's type (an int is
  accepted for a float; a value of the acceptable values' own type is accepted
  as a variable reference);
* each value is acceptable: strings are compared after removing spaces and
  ``,./-_*^``, lower-casing and turning ``'`` into ``"``; lists element-wise with
  the same string rule; dicts key by key (a key may be missing when ``""`` is
  acceptable for it); lists of dicts position by position; other values by
  equality, where a bool never equals a number;
* every expected parameter that is missing has ``""`` among its acceptable values.

Several calls match when there are as many predicted as expected calls and each
expected call matches a distinct predicted call (any order). For ``java`` and
``javascript`` items (``language`` column) values are source-code strings; a
string is read as JSON when the acceptable values are not strings.

The output may be Python call syntax (``f(a=1)`` or ``[f(a=1), g(b=2)]``), BFCL
JSON (``[{"f": {"a": 1}}]``) or OpenAI style (``{"name": "f", "arguments": {...}}``,
arguments possibly a JSON string; also under ``"function"``). An output that
parses to no call is a False decision.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pytest_jeval.judge_bench.evaluators.code import strip_fence
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.registry import CodeEvaluator, EvaluatorError, GoldItem, Judgment, register

Call = tuple[str, dict[str, Any]]

_PY_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list,
    "tuple": list, "dict": dict, "object": dict, "any": str, "number": float,
}
_STD = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string normalisation: drop spaces and ``,./-_*^``, lower-case, ``'`` -> ``"``."""
    return _STD.sub("", text).lower().replace("'", '"')


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Call):
        return _call_from_ast(node)
    if isinstance(node, ast.Name):
        return node.id
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def _call_from_ast(node: ast.Call) -> dict[str, Any]:
    return {ast.unparse(node.func): {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg}}


def _from_json_obj(obj: Any) -> list[Call]:
    if isinstance(obj, list):
        return [c for o in obj for c in _from_json_obj(o)]
    if not isinstance(obj, dict):
        raise ValueError(f"not a call: {obj!r}")
    if isinstance(obj.get("function"), dict):
        return _from_json_obj(obj["function"])
    name = obj.get("name", obj.get("function"))
    if isinstance(name, str) and ("arguments" in obj or "parameters" in obj or len(obj) == 1 + ("type" in obj)):
        args = obj.get("arguments", obj.get("parameters", {}))
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        if not isinstance(args, dict):
            raise ValueError(f"arguments of {name!r} are not an object")
        return [(name, args)]
    if len(obj) == 1:
        (name, args), = obj.items()
        if isinstance(args, dict):
            return [(str(name), args)]
    raise ValueError(f"not a call: {obj!r}")


def parse_calls(output: Any) -> list[Call]:
    """The calls in an agent output (see the module docstring); ValueError when there are none."""
    if not isinstance(output, str):
        return _from_json_obj(output)
    text = strip_fence(output).strip().strip("'")
    if not text:
        raise ValueError("empty output")
    try:
        return _from_json_obj(json.loads(text))
    except ValueError:
        pass
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"neither JSON nor Python calls: {exc.msg}") from None
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    calls: list[Call] = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise ValueError(f"not a call: {ast.unparse(node)}")
        (name, args), = _call_from_ast(node).items()
        calls.append((name, args))
    return calls


def _same(value: Any, acceptable: Any) -> bool:
    if isinstance(value, bool) or isinstance(acceptable, bool):
        return isinstance(value, bool) and isinstance(acceptable, bool) and value == acceptable
    if isinstance(value, str) and isinstance(acceptable, str):
        return standardize(value) == standardize(acceptable)
    if isinstance(value, (list, tuple)) and isinstance(acceptable, (list, tuple)):
        return len(value) == len(acceptable) and all(_same(v, a) for v, a in zip(value, acceptable))
    if isinstance(value, dict) and isinstance(acceptable, dict):
        return _dict_ok(value, acceptable)
    if isinstance(value, (int, float)) and isinstance(acceptable, (int, float)):
        return value == acceptable
    return type(value) is type(acceptable) and value == acceptable


def _dict_ok(value: dict[str, Any], acceptable: dict[str, Any]) -> bool:
    """A dict value against one acceptable dict whose values are lists of acceptable values."""
    for key, v in value.items():
        options = acceptable.get(key)
        if options is None:
            return False
        options = options if isinstance(options, list) else [options]
        if not any(_same(v, o) for o in options if o != ""):
            return False
    return all(key in value or "" in (opts if isinstance(opts, list) else [opts]) for key, opts in acceptable.items())


def _value_ok(value: Any, acceptable: list[Any], java_like: bool) -> bool:
    if java_like and isinstance(value, str) and any(not isinstance(a, str) for a in acceptable if a != ""):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, tuple):
        value = list(value)
    return any(_same(value, a) for a in acceptable if not (isinstance(a, str) and a == ""))


def _type_ok(value: Any, type_name: str, acceptable: list[Any]) -> bool:
    expected = _PY_TYPES.get(type_name)
    if expected is None:
        return True
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return True
    if isinstance(value, tuple):
        value = list(value)
    if type(value) is expected:
        return True
    given = [a for a in acceptable if a != ""]
    return bool(given) and type(value) is type(given[0])  # a variable reference of the gold's own type


def check_call(call: Call, answer: dict[str, Any], spec: dict[str, Any] | None, language: str = "python") -> str | None:
    """None when ``call`` matches the expected call ``{name: {param: [acceptable]}}``, else the reason."""
    (gold_name, params), = answer.items()
    name, args = call
    if name not in (gold_name, gold_name.replace(".", "_")):
        return f"wrong function {name!r}, expected {gold_name!r}"
    properties = (spec or {}).get("parameters", {}).get("properties", {}) if spec else {}
    required = (spec or {}).get("parameters", {}).get("required", []) if spec else []
    for param in required:
        if param not in args:
            return f"missing required parameter {param!r}"
    java_like = language.lower() in ("java", "javascript", "js")
    for param, value in args.items():
        if param not in params or (spec and param not in properties):
            return f"unexpected parameter {param!r}"
        acceptable = params[param] if isinstance(params[param], list) else [params[param]]
        if spec and not java_like and not _type_ok(value, str(properties[param].get("type", "")), acceptable):
            return f"wrong type for {param!r}: {type(value).__name__}"
        if not _value_ok(value, acceptable, java_like):
            return f"unacceptable value for {param!r}: {value!r}"
    for param, acceptable in params.items():
        if param not in args and "" not in (acceptable if isinstance(acceptable, list) else [acceptable]):
            return f"missing parameter {param!r} (not optional)"
    return None


def match_calls(
    calls: list[Call], answers: list[dict[str, Any]], specs: list[dict[str, Any]], language: str
) -> str | None:
    """None when every expected call matches a distinct predicted call (any order), else the reason."""
    if len(calls) != len(answers):
        return f"{len(calls)} calls, expected {len(answers)}"
    by_name = {s.get("name"): s for s in specs if isinstance(s, dict)}
    reasons: list[str] = []

    def assign(i: int, used: frozenset[int]) -> bool:
        if i == len(answers):
            return True
        spec = by_name.get(next(iter(answers[i])))
        for j, call in enumerate(calls):
            if j in used:
                continue
            reason = check_call(call, answers[i], spec, language)
            if reason is None and assign(i + 1, used | {j}):
                return True
            if reason is not None:
                reasons.append(reason)
        return False

    return None if assign(0, frozenset()) else (reasons[0] if reasons else "no matching call")


def _structured(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise EvaluatorError(f"{what} is not valid JSON: {value[:80]!r}") from None
    return value


@register
class ToolCallAccuracy(CodeEvaluator):
    """Tool name and arguments match the expected calls with BFCL's acceptable-value rules."""

    name = "tool_call_accuracy"
    description = ("Do the tool calls match the expected calls in name and arguments "
                   "(BFCL acceptable values, optional params)?")
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Parse the calls and match them; an unparseable output is a False decision."""
        answers = _structured(item.expected, "expected")
        answers = answers if isinstance(answers, list) else [answers]
        if not answers or not all(isinstance(a, dict) and len(a) == 1 for a in answers):
            raise EvaluatorError("expected must be a list of {function_name: {param: [acceptable values]}}")
        specs = _structured(item.context, "context") if item.context not in (None, "") else []
        specs = specs if isinstance(specs, list) else [specs]
        language = str(item.extra.get("language") or "python")
        try:
            calls = parse_calls(item.output)
        except (ValueError, SyntaxError) as exc:
            return self.decided(False, reason=f"unparseable calls: {exc}")
        reason = match_calls(calls, answers, specs, language)
        return self.decided(reason is None, reason=reason, calls=[{n: a} for n, a in calls])
