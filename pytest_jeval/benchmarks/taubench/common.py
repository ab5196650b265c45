"""What both domains' tools share: the episode's database, upstream's result encoding, the calculator."""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from typing import Any

from pytest_jeval.agents.tool import HarnessError, Tool, ToolContext, ToolError
from pytest_jeval.benchmarks.taubench.db import Database, TauEnv


def env_of(ctx: ToolContext, domain: str) -> Database:
    """The episode's database (``ctx.state``, a :class:`TauEnv` of ``domain``)."""
    state = ctx.state
    if not isinstance(state, TauEnv) or state.domain != domain:
        raise HarnessError(f"the {domain} tools need the episode's {domain} environment as ctx.state")
    return state.db


def encoded(value: Any) -> str:
    """A result as upstream sends it to the agent: a string as it is, anything else as ``json.dumps``."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
}
_ALLOWED = set("0123456789+-*/(). ")


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ToolError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Tuple):
        raise ToolError("float() argument must be a string or a real number, not 'tuple'")
    raise ToolError("invalid syntax")


def calculate(expression: str, ctx: ToolContext) -> str:
    """Evaluate an arithmetic expression (digits, + - * / ( ) . and spaces); the result rounded to 2 decimals.

    Args:
        expression: The expression, such as '2 + 2'; only numbers, the operators + - * /, parentheses,
            dots and spaces are allowed.
    """
    if not all(char in _ALLOWED for char in expression):
        raise ToolError("Invalid characters in expression")
    try:
        tree = compile(expression, "<string>", "eval", ast.PyCF_ONLY_AST)
    except SyntaxError as exc:
        raise ToolError(str(exc)) from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError as exc:
        raise ToolError(str(exc)) from None
    except OverflowError as exc:
        raise ToolError(str(exc)) from None
    return str(round(float(value), 2))


def transfer_to_human_agents(summary: str, ctx: ToolContext) -> str:
    """Transfer the user to a human agent, with a summary of the user's issue. Transfer only when the user
    explicitly asks for a human agent, or when the policy and the tools cannot solve the user's issue.

    Args:
        summary: A summary of the user's issue.
    """
    return "Transfer successful"


def mutating(tools: dict[str, Tool], names: frozenset[str]) -> frozenset[str]:
    """The names of the tools that change the database (upstream's WRITE tools), checked against ``tools``."""
    unknown = names - set(tools)
    if unknown:
        raise ValueError(f"write tools not defined: {sorted(unknown)}")
    return names
