"""Tools an agent can call: a typed Python function, its JSON schema, and how it is run.

A tool is a plain (sync or async) function whose name, docstring and annotations
give the OpenAI function spec::

    @tool
    def get_order(order_id: str, ctx: ToolContext) -> dict:
        \"\"\"Look up an order.

        Args:
            order_id: The order id, e.g. ``#W0001``.
        \"\"\"
        return ctx.state.orders[order_id]

A parameter annotated :class:`ToolContext` (any name) is not part of the schema: the
loop passes the episode's context there (the sample, its workspace and the
benchmark's environment state). Raise :class:`ToolError` to send the model an error
result; any other exception becomes one too. A result that is not a string is sent
as JSON; a :class:`ToolOutput` sends its text and keeps its details in the trajectory.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, overload

from pytest_jeval.core.sample import Sample


class ToolError(Exception):
    """Raised by a tool: its message is sent to the model as the tool's error result.

    ``details`` (JSON builtins) go to the call's record for the trajectory, as :class:`ToolOutput`'s do.
    """

    def __init__(self, message: str = "", *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details) if details is not None else None


@dataclasses.dataclass(frozen=True)
class ToolOutput:
    """A tool's result with structured details: the model reads ``text``; ``details`` (JSON builtins: a
    browser action's target, the resulting URL, a capped page snapshot) go to the call's
    :class:`~pytest_jeval.core.episode.ToolCallRecord` (``details``), the trajectory and the report."""

    text: str
    """What the model is sent (cut to ``max_tool_output`` like any result)."""
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Facts about the call for the trajectory; never sent to the model."""


class HarnessError(Exception):
    """Raised by a tool when the harness failed, not the call (the sandbox cannot start):
    the episode ends with ``stop_reason = "error"`` and the item is an error."""


class NotRunnable(Exception):
    """Raised by ``AgentSpec.environment`` when the sample cannot run on this machine (its task needs a GPU,
    the network, an unsupported image): the episode ends before any model call with ``stop_reason =
    "not_run"`` and the message as ``Episode.error``, and the benchmark scores it unscored with that reason."""


@dataclasses.dataclass
class ToolContext:
    """What a tool may use besides its arguments."""

    sample: Sample
    """The sample the episode is about."""
    workspace: Path
    """The episode's own directory (made from the sample's attachments, removed afterwards)."""
    state: Any = None
    """The benchmark's per-episode environment state (None when it defines none)."""
    timeout: float = 30.0
    """Seconds this call may take (the per-tool timeout)."""
    network: bool = False
    """Always False: sandboxed tools run without network."""


ToolFunction = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class Tool:
    """A function the model can call."""

    name: str
    """The function name the model uses."""
    description: str
    """What the tool does (the docstring's first paragraph)."""
    parameters: Mapping[str, Any]
    """JSON schema of the arguments (an ``object``)."""
    fn: ToolFunction | None = None
    """The implementation, called with the validated arguments (and the context, if it takes one).
    None for a spec-only tool, whose calls are recorded but not run (BFCL)."""
    context_param: str | None = None
    """The parameter that receives the :class:`ToolContext`, if any."""
    parallel_safe: bool = False
    """Calls of this tool in one reply may run concurrently (no shared state changes)."""
    blocking: bool = True
    """The function blocks (I/O, subprocess): run it on a worker thread, not on the event loop."""
    timeout: float | None = None
    """This tool's own timeout in seconds (default: the suite's ``tool_timeout``)."""

    def spec(self) -> dict[str, Any]:
        """The entry for the request's ``tools`` list."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": dict(self.parameters)},
        }

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_name(name: str) -> str:
    """A function name as the OpenAI API accepts it (``^[a-zA-Z0-9_-]{1,64}$``), else ValueError."""
    if not _NAME.match(name):
        raise ValueError(f"tool name {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$ (the OpenAI API refuses others)")
    return name


def _docstring(fn: ToolFunction) -> tuple[str, dict[str, str]]:
    """The first paragraph of the docstring, and parameter descriptions from its ``Args:`` section."""
    doc = inspect.getdoc(fn) or ""
    parts = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)
    summary = " ".join(parts[0].split()) if parts and parts[0] else ""
    params: dict[str, str] = {}
    match = re.search(r"^(?:Args|Arguments|Parameters):\s*\n(?P<body>(?:[ \t]+.*\n?|\s*\n)+)", doc, re.MULTILINE)
    if match:
        current: str | None = None
        for line in match.group("body").splitlines():
            item = re.match(r"^\s+(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$", line)
            if item and (current is None or len(line) - len(line.lstrip()) <= 8):
                current = item.group(1)
                params[current] = item.group(2).strip()
            elif current is not None and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return summary, params


def json_schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of a parameter annotation (str, int, float, bool, list[...], dict, Literal, Enum, Optional)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        values = list(args)
        schema: dict[str, Any] = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1:
            schema["type"] = json_schema(kinds.pop()).get("type")
        return schema
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            base = json_schema(inner[0])
            return {"anyOf": [base, {"type": "null"}]} if len(inner) < len(args) else base
        return {"anyOf": [json_schema(a) for a in args]}
    if origin in (list, tuple, set, frozenset, typing.Sequence) or annotation in (list, tuple):
        items = json_schema(args[0]) if args else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [m.value for m in annotation]}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
    if annotation in simple:
        return {"type": simple[annotation]}
    raise TypeError(f"cannot express {annotation!r} as a JSON schema; use str, int, float, bool, list, dict or Literal")


def _function_schema(fn: ToolFunction) -> tuple[dict[str, Any], str | None]:
    hints = typing.get_type_hints(fn)
    _, described = _docstring(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_param = None
    for name, param in inspect.signature(fn).parameters.items():
        annotation = hints.get(name, param.annotation)
        if annotation is ToolContext:
            context_param = name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {fn.__name__}: *args and **kwargs cannot be described to the model")
        schema = json_schema(annotation)
        if name in described:
            schema["description"] = described[name]
        if param.default is not inspect.Parameter.empty:
            if param.default is None or isinstance(param.default, (str, int, float, bool)):
                schema["default"] = param.default
        else:
            required.append(name)
        properties[name] = schema
    schema_ = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return schema_, context_param


@overload
def tool(fn: ToolFunction, /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, parallel_safe: bool = False, blocking: bool = True,
    timeout: float | None = None,
) -> Callable[[ToolFunction], Tool]: ...
def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
    blocking: bool = True,
    timeout: float | None = None,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Make a :class:`Tool` of a typed function (usable bare, ``@tool``, or with options, ``@tool(...)``)."""

    def make(f: ToolFunction) -> Tool:
        summary, _ = _docstring(f)
        parameters, context_param = _function_schema(f)
        return Tool(
            name=check_name(name or f.__name__),
            description=description if description is not None else summary,
            parameters=parameters,
            fn=f,
            context_param=context_param,
            parallel_safe=parallel_safe,
            blocking=blocking and not inspect.iscoroutinefunction(f),
            timeout=timeout,
        )

    return make(fn) if fn is not None else make


def spec_tool(spec: Mapping[str, Any]) -> Tool:
    """A spec-only tool from an OpenAI function spec (``{"name", "description", "parameters"}``, or the
    ``{"type": "function", "function": {...}}`` wrapper): offered to the model, never run."""
    inner = spec.get("function", spec) if spec.get("type") == "function" else spec
    return Tool(
        name=str(inner["name"]),
        description=str(inner.get("description", "")),
        parameters=dict(inner.get("parameters") or {"type": "object", "properties": {}}),
        fn=None,
    )
