"""An agent episode in the report: a ``<details>`` block (no JavaScript) under its sample row.

The summary line gives the stop reason, turns, tool calls (with the tools' names), tool
errors and wall seconds; opened, it shows the conversation: each message with its role,
the assistant's text and tool calls (arguments pretty-printed when they are JSON), and
each tool result with its error and truncation. Every text is HTML-escaped and capped.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pytest_jeval.core import jsonsafe

#: Characters shown of one text (a message, the arguments of a call, a tool result).
MAX_TEXT = 4000
#: Characters shown of one trajectory's texts; the messages after that are counted, not shown.
MAX_CHARS = 60_000
#: Messages shown of one trajectory.
MAX_MESSAGES = 300
#: Distinct tool names named in the summary line.
MAX_TOOL_NAMES = 8
#: Roles with their own style; others are shown as they are, styled as ``other``.
ROLES = ("system", "user", "assistant", "tool")

CSS = """
tr.trajectory-row > td { border-bottom: 1px solid var(--line); padding-top: 0; }
details.trajectory > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details.trajectory[open] > summary { margin-bottom: 6px; }
.conversation { border-left: 3px solid var(--line); padding-left: 10px; }
.msg { margin: 6px 0; padding: 4px 8px; border-radius: 4px; background: var(--soft); }
.msg.role-assistant { background: #eef4ff; } .msg.role-tool { background: #f3f7f3; }
.msg.tool-error { background: #fff0f0; border-left: 3px solid #c44e52; }
.msg .role { font-size: 12px; font-weight: 600; color: var(--muted); }
.msg .body, .tool-call pre { white-space: pre-wrap; word-break: break-word; font-size: 13px; margin: 2px 0; }
.tool-call { margin: 4px 0 2px 12px; } .tool-call .name { font-family: ui-monospace, monospace; font-weight: 600; }
.tool-call pre { font-family: ui-monospace, monospace; background: #fff; padding: 4px 6px; border-radius: 3px; }
.note { color: #9a6700; font-size: 12px; margin: 2px 0; }
.error-label, .note.error-label { color: #c44e52; font-weight: 600; }
.tool-details { font-size: 12px; margin: 4px 0; } .tool-details .detail { margin-right: 6px; }
.tool-details details.detail > summary { cursor: pointer; color: var(--muted); }
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def content_text(content: Any) -> str:
    """A message's ``content`` as text: a string as it is, the text parts of a list of parts, JSON otherwise."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else _json_text(p)
                         for p in content)
    return _json_text(content)


def pretty_arguments(arguments: Any) -> str:
    """Tool-call arguments: indented JSON when they are (or parse as) a JSON object or list, else as sent."""
    if isinstance(arguments, str):
        try:
            parsed = jsonsafe.loads(arguments)
        except ValueError:
            return arguments
        return _json_text(parsed) if isinstance(parsed, (dict, list)) else arguments
    return _json_text(arguments)


class _Budget:
    """What is left of a trajectory's :data:`MAX_CHARS`."""

    def __init__(self) -> None:
        self.left = MAX_CHARS

    def text(self, value: str, css: str = "body", tag: str = "div") -> str:
        """``value`` escaped in ``<tag class=css>``, cut to :data:`MAX_TEXT` (and the budget) with a note."""
        limit = max(0, min(MAX_TEXT, self.left))
        shown = value[:limit]
        self.left -= len(shown)
        out = f'<{tag} class="{css}">{_e(shown)}</{tag}>'
        if len(value) > limit:
            out += f'<p class="note">… {len(value) - limit:,} more characters not shown</p>'
        return out


def _agent(record: dict[str, Any]) -> dict[str, Any]:
    value = record.get("agent")
    return value if isinstance(value, dict) else {}


def summary_line(record: dict[str, Any], trajectory: dict[str, Any] | None) -> str:
    """``stop final · 2 turns · 1 tool call (add) · 0 tool errors · 0.012 s`` (plain text)."""
    agent = _agent(record)
    calls = (trajectory or {}).get("tool_calls") or []
    turns = agent.get("turns", record.get("turn_count"))
    n_calls = agent.get("tool_calls", record.get("tool_calls"))
    if not _number(n_calls) and trajectory is not None:
        n_calls = len(calls)
    errors = agent.get("tool_errors")
    if not _number(errors) and trajectory is not None:
        errors = sum(1 for c in calls if c.get("error") is not None)
    parts = [f"stop {agent.get('stop_reason') or '?'}",
             f"{turns if _number(turns) else '?'} turns",
             f"{n_calls if _number(n_calls) else '?'} tool calls"]
    names: dict[str, int] = {}
    for c in calls:
        name = str(c.get("name"))
        names[name] = names.get(name, 0) + 1
    if names:
        shown = [n if k == 1 else f"{n} ×{k}" for n, k in list(names.items())[:MAX_TOOL_NAMES]]
        more = f", +{len(names) - MAX_TOOL_NAMES} more" if len(names) > MAX_TOOL_NAMES else ""
        parts[-1] += f" ({', '.join(shown)}{more})"
    parts.append(f"{errors if _number(errors) else '?'} tool errors")
    wall = agent.get("wall_seconds")
    parts.append(f"{wall:.3f} s" if _number(wall) else "? s")
    return "trajectory: " + " · ".join(parts)


def _tool_call(call: Any, budget: _Budget) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return f'<div class="tool-call">{budget.text(_json_text(call), "", "pre")}</div>'
    ident = call.get("id")
    return (f'<div class="tool-call"><span class="name">→ {_e(function.get("name"))}</span>'
            + (f' <span class="muted">id {_e(ident)}</span>' if ident is not None else "")
            + budget.text(pretty_arguments(function.get("arguments")), "args", "pre") + "</div>")


def _tool_notes(call: dict[str, Any]) -> tuple[str, str, bool]:
    """The label suffix, the notes and whether it failed, of a tool result, from its tool-call record."""
    label = f" · {_e(call.get('name'))}" if call.get("name") is not None else ""
    if _number(call.get("duration")):
        label += f" · {call['duration']:.3f} s"
    notes = ""
    if call.get("error") is not None:
        label += ' · <span class="error-label">error</span>'
        notes += f'<p class="note error-label">error: {_e(call["error"])}</p>'
    if call.get("truncated") is True:
        chars = call.get("output_chars")
        size = f"{chars:,} characters" if _number(chars) else "the output"
        notes += f'<p class="note">tool output truncated: {size} cut to its head and tail</p>'
    return label, notes, call.get("error") is not None


def details_block(details: Any, budget: _Budget) -> str:
    """A tool call's structured details (``ToolCallRecord.details``: a browser step's action, target, resulting
    URL, blocked requests, snapshot): short values on one line, long texts and lists folded in ``<details>``."""
    if not isinstance(details, dict) or not details:
        return ""
    inline, folded = [], []
    for key, value in details.items():
        text = value if isinstance(value, str) else _json_text(value)
        if isinstance(value, (str, int, float, bool)) and len(text) <= 200 and "\n" not in text:
            inline.append(f'<span class="detail"><b>{_e(key)}</b>: {_e(text)}</span>')
        else:
            folded.append(f'<details class="detail"><summary>{_e(key)}</summary>{budget.text(text, "args", "pre")}'
                          "</details>")
    head = '<span class="note">tool details</span> '
    return f'<div class="tool-details">{head}{" · ".join(inline)}{"".join(folded)}</div>'


def _message(message: dict[str, Any], pending: dict[str, list[dict[str, Any]]], budget: _Budget) -> str:
    role = str(message.get("role"))
    css = role if role in ROLES else "other"
    label = _e(role)
    notes = ""
    classes = f"msg role-{css}"
    if role == "tool":
        ident = message.get("tool_call_id")
        label += f" · {_e(ident)}" if ident is not None else ""
        queue = pending.get(str(ident)) or []
        if queue:
            call = queue.pop(0)
            suffix, notes, failed = _tool_notes(call)
            notes += details_block(call.get("details"), budget)
            label += suffix
            classes += " tool-error" if failed else ""
    body = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        body.append('<div class="muted">reasoning:</div>' + budget.text(reasoning, "body muted"))
    text = content_text(message.get("content"))
    if text or role != "assistant":
        body.append(budget.text(text))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        body.extend(_tool_call(c, budget) for c in calls)
    return f'<div class="{classes}"><div class="role">{label}</div>{"".join(body)}{notes}</div>'


def _external(external: dict[str, Any], budget: _Budget) -> str:
    """An external agent's process: its command line, exit status, containment and output tails."""
    argv = external.get("argv")
    facts = [f"exit status {_e(external.get('exit_status'))}"]
    if external.get("containment") is not None:
        facts.append(f"containment {_e(external.get('containment'))}")
    if external.get("survivors"):
        facts.append(f"{_e(external.get('survivors'))} process(es) killed after it")
    parts = [f'<div class="msg role-tool"><div class="role">agent process: {"; ".join(facts)}</div>']
    if isinstance(argv, list):
        parts.append(budget.text(" ".join(str(a) for a in argv), "args", "pre"))
    for stream in ("stdout", "stderr"):
        text = external.get(stream)
        if isinstance(text, str) and text:
            cut = " (cut: head and tail kept)" if external.get(f"{stream}_truncated") else ""
            parts.append(f'<div class="note">{stream}{cut}</div>{budget.text(text, "args", "pre")}')
    parts.append("</div>")
    return "".join(parts)


def render(record: dict[str, Any], trajectory: dict[str, Any] | None) -> str:
    """The ``<details>`` block of an agent record (``trajectory`` as ``ResultFile.trajectories`` holds it)."""
    head = f"<summary>{_e(summary_line(record, trajectory))}</summary>"
    agent = _agent(record)
    facts = [f"{key}: {_e(agent[key])}" for key in ("limit", "error") if agent.get(key) is not None]
    out = ['<details class="trajectory">', head, '<div class="conversation">']
    if facts:
        out.append(f'<p class="note">{"; ".join(facts)}</p>')
    if trajectory is None:
        out.append('<p class="muted">No trajectory was stored for this record '
                   '(<code>[run] trajectories = "off"</code>, or its sidecar file is missing).</p>')
        out.append("</div></details>")
        return "".join(out)
    pending: dict[str, list[dict[str, Any]]] = {}
    for call in trajectory.get("tool_calls") or []:
        pending.setdefault(str(call.get("id")), []).append(call)
    budget = _Budget()
    messages = trajectory["messages"]
    for n, message in enumerate(messages):
        if n >= MAX_MESSAGES or budget.left <= 0:
            out.append(f'<p class="note">… {len(messages) - n:,} more messages not shown '
                       "(the report shows the start of long trajectories)</p>")
            break
        out.append(_message(message, pending, budget))
    external = trajectory.get("external")
    if isinstance(external, dict) and budget.left > 0:
        out.append(_external(external, budget))
    unanswered = [c for queue in pending.values() for c in queue]
    if unanswered and budget.left > 0:
        out.append(f'<p class="note">{len(unanswered)} tool call(s) with no tool message in the conversation:</p>')
        for call in unanswered[:MAX_MESSAGES]:
            suffix, notes, failed = _tool_notes(call)
            notes += details_block(call.get("details"), budget)
            css = "msg role-tool tool-error" if failed else "msg role-tool"
            out.append(f'<div class="{css}"><div class="role">tool call {_e(call.get("id"))}{suffix}</div>'
                       f'{budget.text(pretty_arguments(call.get("arguments")), "args", "pre")}'
                       f'{budget.text(str(call.get("result") or ""))}{notes}</div>')
    out.append("</div></details>")
    return "".join(out)
