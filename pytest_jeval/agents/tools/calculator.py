"""``calculator``: arithmetic, parsed from the AST (never ``eval``)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

from pytest_jeval.agents.tool import ToolError, tool
from pytest_jeval.agents.tools import register_tool

MAX_EXPRESSION_CHARS = 2_000
"""Longer expressions are refused before parsing."""
MAX_DEPTH = 100
"""Deepest nesting of operations the evaluator follows."""
MAX_INT_BITS = 10_000
"""Integer results (and intermediate values) above this many bits (about 3,000 digits) are refused."""
MAX_ROUND_DIGITS = 100
"""``round(x, n)`` takes ``|n|`` up to this."""
MAX_ARGS = 100
"""``min``/``max`` take at most this many arguments."""

_BINARY: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", lambda a, b: a + b),
    ast.Sub: ("-", lambda a, b: a - b),
    ast.Mult: ("*", lambda a, b: a * b),
    ast.Div: ("/", lambda a, b: a / b),
    ast.FloorDiv: ("//", lambda a, b: a // b),
    ast.Mod: ("%", lambda a, b: a % b),
    ast.Pow: ("**", lambda a, b: a ** b),
}
_BINARY_NAMES = {ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
                 ast.MatMult: "@"}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: lambda a: +a, ast.USub: lambda a: -a}
_UNARY_NAMES = {ast.Invert: "~", ast.Not: "not"}

_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


def _round(x: Any, ndigits: Any = None) -> Any:
    if ndigits is None:
        return round(x)
    if not isinstance(ndigits, int) or abs(ndigits) > MAX_ROUND_DIGITS:
        raise ToolError(f"round(x, n) needs an integer n with |n| <= {MAX_ROUND_DIGITS}")
    return round(x, ndigits)


_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int]] = {
    # name: (function, fewest arguments, most arguments)
    "sqrt": (math.sqrt, 1, 1),
    "log": (math.log, 1, 2),
    "exp": (math.exp, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
    "min": (min, 1, MAX_ARGS),
    "max": (max, 1, MAX_ARGS),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
}


def evaluate(expression: str) -> int | float:
    """The value of an arithmetic ``expression``; :class:`ToolError` for anything else.

    Allowed: int and float literals, ``+ - * / // % **``, unary ``+``/``-``, parentheses,
    the functions sqrt, log, exp, sin, cos, tan, abs, round, min, max, floor, ceil and the
    constants pi and e. Integers above :data:`MAX_INT_BITS` bits are refused before they
    are computed (``9**9**9``) or right after.
    """
    if not isinstance(expression, str):
        raise ToolError("expression must be a string")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ToolError(f"not an arithmetic expression: {getattr(exc, 'msg', None) or exc}") from None
    try:
        return _eval(tree.body, 0)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("numerical result out of range") from None
    except ValueError as exc:  # math domain errors
        raise ToolError(f"invalid value: {exc}") from None
    except RecursionError:
        raise ToolError("expression nested too deeply") from None


def _eval(node: ast.expr, depth: int) -> int | float:
    if depth > MAX_DEPTH:
        raise ToolError(f"expression nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolError(f"{type(value).__name__} literal {value!r} is not allowed; only numbers")
        return _checked(value)
    if isinstance(node, ast.BinOp):
        op = type(node.op)
        if op not in _BINARY:
            raise ToolError(f"operator {_BINARY_NAMES.get(op, op.__name__)} is not allowed")
        left, right = _eval(node.left, depth + 1), _eval(node.right, depth + 1)
        symbol, fn = _BINARY[op]
        if symbol == "**":
            _guard_power(left, right)
        return _checked(fn(left, right))
    if isinstance(node, ast.UnaryOp):
        uop = type(node.op)
        if uop not in _UNARY:
            raise ToolError(f"operator {_UNARY_NAMES.get(uop, uop.__name__)} is not allowed")
        return _checked(_UNARY[uop](_eval(node.operand, depth + 1)))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ToolError(f"unknown name {node.id!r}; known constants: {', '.join(sorted(_CONSTANTS))}")
    if isinstance(node, ast.Call):
        return _call(node, depth)
    raise ToolError(f"{_describe(node)} is not allowed in an arithmetic expression")


def _call(node: ast.Call, depth: int) -> int | float:
    if not isinstance(node.func, ast.Name):
        raise ToolError(f"calling {_describe(node.func)} is not allowed; only the named functions")
    name = node.func.id
    if name not in _FUNCTIONS:
        raise ToolError(f"unknown function {name!r}; known functions: {', '.join(sorted(_FUNCTIONS))}")
    if node.keywords:
        raise ToolError(f"{name}() takes no keyword arguments")
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        raise ToolError("* arguments are not allowed")
    fn, fewest, most = _FUNCTIONS[name]
    if not fewest <= len(node.args) <= most:
        count = str(fewest) if fewest == most else f"{fewest} to {most}"
        raise ToolError(f"{name}() takes {count} argument(s), not {len(node.args)}")
    args = [_eval(arg, depth + 1) for arg in node.args]
    try:
        return _checked(fn(*args))
    except TypeError as exc:
        raise ToolError(f"{name}(): {exc}") from None


def _guard_power(base: float, exponent: float) -> None:
    """Refuse an integer power whose result would exceed :data:`MAX_INT_BITS` (before computing it)."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
            raise ToolError(f"result too large: {base}**{exponent} has more than {MAX_INT_BITS} bits")


def _checked(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise ToolError(f"result too large: an integer of more than {MAX_INT_BITS} bits")
        return value
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            raise ToolError("numerical result out of range")
        return value
    raise ToolError(f"result of type {type(value).__name__} is not a real number")


def _describe(node: ast.AST) -> str:
    names = {ast.Attribute: "attribute access", ast.Subscript: "indexing", ast.Compare: "comparison",
             ast.BoolOp: "and/or", ast.Lambda: "lambda", ast.IfExp: "if-else", ast.List: "a list",
             ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a comprehension",
             ast.JoinedStr: "an f-string", ast.NamedExpr: ":=", ast.Await: "await", ast.Call: "a call"}
    return names.get(type(node), type(node).__name__)


def format_number(value: float) -> str:
    """Integral values as integers (``2.0`` → ``2``, below 1e16), other floats with ``repr``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


@tool(parallel_safe=True, blocking=False)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly as written and return its value.

    Args:
        expression: Numbers with + - * / // % ** and parentheses, the functions sqrt, log (natural;
            log(x, base)), exp, sin, cos, tan (radians), abs, round, min, max, floor, ceil, and the
            constants pi and e. Example: "(3 + 4.5) * sqrt(2) / 7".
    """
    return format_number(evaluate(expression))


register_tool(calculator)
