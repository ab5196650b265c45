"""The built-in tools a suite names in ``tools = [...]``.

| name | what it does |
|---|---|
| ``calculator`` | arithmetic, parsed from the AST (never ``eval``) |
| ``file_read`` / ``list_files`` / ``file_write`` | the episode's workspace, confined to it |
| ``python`` / ``bash`` | a program in the sandbox, the workspace as its directory, no network |

See docs/agent-tools.md for the arguments and limits of each.
"""

from __future__ import annotations

import ast
import math
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pytest_jeval.agent.tools import HarnessError, Tool, ToolContext, ToolError, tool
from pytest_jeval.agent.workspace import open_in
from pytest_jeval.redact import redact_known

__all__ = ["BUILTIN", "MAX_FILE_READ_BYTES", "MAX_FILE_WRITE_BYTES", "MAX_LISTED", "MAX_PROGRAM_OUTPUT",
           "builtin_tools", "evaluate"]

# ---------------------------------------------------------------------------------------------- calculator

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


# --------------------------------------------------------------------------------------------- file tools

MAX_FILE_READ_BYTES = 64 * 1024
"""``file_read`` returns at most this many bytes of a file (and says how much it left out)."""
MAX_FILE_WRITE_BYTES = 1024 * 1024
"""``file_write`` refuses larger content."""
MAX_LISTED = 1_000
"""``list_files`` lists at most this many entries."""


@tool(parallel_safe=True)
def file_read(path: str, ctx: ToolContext) -> str:
    """Read a text file from the workspace.

    Args:
        path: The file's path relative to the workspace (the working directory), e.g. "data.csv".
    """
    with open_in(ctx.workspace, path, os.O_RDONLY) as (fd, name):
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{name!r} is a directory; use list_files")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{name!r} is not a regular file")
        data = os.read(fd, MAX_FILE_READ_BYTES + 1)
        while len(data) <= MAX_FILE_READ_BYTES and (more := os.read(fd, MAX_FILE_READ_BYTES + 1 - len(data))):
            data += more
    text = data[:MAX_FILE_READ_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_READ_BYTES:
        text += (f"\n[file_read: showed the first {MAX_FILE_READ_BYTES} of {info.st_size} bytes; "
                 "use python to read the rest]")
    return redact_known(text)


@tool(parallel_safe=True)
def list_files(ctx: ToolContext, path: str = ".") -> str:
    """List the entries of a directory in the workspace: directories end in "/", files show their size.

    Args:
        path: The directory relative to the workspace; "." (the default) is the workspace itself.
    """
    with open_in(ctx.workspace, path, os.O_RDONLY | os.O_DIRECTORY) as (fd, name):
        with os.scandir(fd) as entries:
            names = sorted(entry.name for entry in entries)
        lines = []
        for entry in names[:MAX_LISTED]:
            try:
                info = os.lstat(entry, dir_fd=fd)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode):
                lines.append(f"{entry}/")
            elif stat.S_ISLNK(info.st_mode):
                lines.append(f"{entry} -> {os.readlink(entry, dir_fd=fd)}")
            elif stat.S_ISREG(info.st_mode):
                lines.append(f"{entry}  ({info.st_size} bytes)")
            else:
                lines.append(f"{entry}  (special file)")
    if len(names) > MAX_LISTED:
        lines.append(f"[list_files: showed {MAX_LISTED} of {len(names)} entries]")
    return "\n".join(lines) if lines else f"{name}: empty directory"


@tool
def file_write(path: str, content: str, ctx: ToolContext) -> str:
    """Write a text file in the workspace (created, or replaced when it exists; missing directories are made).

    Args:
        path: The file's path relative to the workspace, e.g. "out/result.txt".
        content: The whole text of the file (UTF-8).
    """
    data = content.encode("utf-8", "surrogatepass")
    if len(data) > MAX_FILE_WRITE_BYTES:
        raise ToolError(f"content is {len(data)} bytes; file_write takes at most {MAX_FILE_WRITE_BYTES}")
    with open_in(ctx.workspace, path, os.O_WRONLY | os.O_CREAT, create_parents=True) as (fd, name):
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{name!r} is not a regular file")
        if info.st_nlink > 1:
            raise ToolError(f"{name!r} has other hard links; refused")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return f"wrote {len(data)} bytes to {name}"


# ----------------------------------------------------------------------------------------- sandbox tools

MAX_PROGRAM_OUTPUT = 16 * 1024
"""``python`` and ``bash`` keep at most this many bytes of stdout and of stderr (head and tail)."""
MAX_PROGRAM_CHARS = 100_000
"""Longer code or commands are refused."""
BASH = "/bin/bash"


def _run_sandboxed(ctx: ToolContext, args: list[str], *, executable: str | None, stdin: str | None) -> str:
    from pytest_jeval.sandbox import SandboxError, run_in_workspace  # the sandbox probes on first use

    try:
        result = run_in_workspace(ctx.workspace, args, executable=executable, stdin=stdin, timeout=ctx.timeout,
                                  max_output=MAX_PROGRAM_OUTPUT)
    except SandboxError as exc:
        raise HarnessError(f"the sandbox cannot run: {exc}") from exc
    if result.status == "timeout":
        raise ToolError(f"timed out after {ctx.timeout:g}s" + _streams(result.stdout, result.stderr))
    status = f"exit status: {result.returncode}"
    if result.returncode < 0:
        status += f" (killed by signal {-result.returncode})"
    if result.status == "memory":
        status += " (out of memory)"
    return status + _streams(result.stdout, result.stderr, always=True)


def _streams(stdout: str, stderr: str, *, always: bool = False) -> str:
    parts = []
    for label, text in (("stdout", stdout), ("stderr", stderr)):
        if text or always:
            parts.append(f"\n{label}:\n{text}" if text else f"\n{label}: (empty)")
    return "".join(parts)


def _check_program(text: str, what: str) -> None:
    if "\x00" in text:
        raise ToolError(f"{what} contains a NUL byte")
    if len(text) > MAX_PROGRAM_CHARS:
        raise ToolError(f"{what} is longer than {MAX_PROGRAM_CHARS} characters")


@tool(name="python")
def python_tool(code: str, ctx: ToolContext) -> str:
    """Run a Python 3 program in a sandbox without network and return its exit status, stdout and stderr.
    The working directory is the workspace: open its files by relative path; files written there stay
    for later calls. Print what you want to see.

    Args:
        code: The program's source.
    """
    _check_program(code, "code")
    return _run_sandboxed(ctx, ["-I", "-B", "-u", "-"], executable=None, stdin=code)


@tool(name="bash")
def bash_tool(command: str, ctx: ToolContext) -> str:
    """Run a bash command in a sandbox without network and return its exit status, stdout and stderr.
    The working directory is the workspace; files written there stay for later calls.

    Args:
        command: The command line, run with bash -c.
    """
    _check_program(command, "command")
    return _run_sandboxed(ctx, ["-c", command], executable=BASH, stdin=None)


BUILTIN: Mapping[str, Tool] = MappingProxyType({
    t.name: t for t in (calculator, file_read, list_files, file_write, python_tool, bash_tool)
})
"""Every built-in tool by name."""


def builtin_tools(names: Sequence[str]) -> list[Tool]:
    """The built-in tools ``names`` names, in that order.

    ValueError naming each unknown name (and the known ones), or a name given twice.
    """
    if isinstance(names, str):
        raise ValueError(f"tools must be a list of names, not the string {names!r}")
    unknown = [name for name in names if name not in BUILTIN]
    if unknown:
        raise ValueError(f"unknown tool{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"the built-in tools are: {', '.join(sorted(BUILTIN))}")
    repeated = sorted({name for name in names if list(names).count(name) > 1})
    if repeated:
        raise ValueError(f"tool{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} named twice")
    return [BUILTIN[name] for name in names]
