"""Prompts read from a user's clone of an upstream repository as templates, never run
(:mod:`pytest_jeval.benchmarks._research.upstream`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_jeval.benchmarks._research.upstream import UpstreamError, fstring, literal, render

SOURCE = textwrap.dedent('''\
    import os

    RUBRIC = """| 100 | 0 |"""
    TABLE = {"a": 1}
    os.system("echo this file is never run")


    def build(query, report, date=None):
        system = f"""Today is {date}.\\n{RUBRIC}"""
        user = f"Q: {query}\\n" f"R: {report}"
        return system, user


    def plain():
        return """A fixed prompt."""


    def attribute(task):
        return f"Task: {task.prompt}"


    def expression(query):
        return f"Q: {query.upper()}"


    def conversion(query):
        return f"Q: {query!r}"


    def unknown(query):
        return f"{query} {TABLE}"


    class Scorer:
        def prompt(self, answer):
            return f"Answer: {answer}"
''')


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.py"
    path.write_text(SOURCE)
    return path


def test_prompts_become_templates_filled_later(module: Path) -> None:
    system = fstring(module, "build", "system", {"date", "query", "report"})
    assert system == ["Today is ", ["date"], ".\n", "| 100 | 0 |"]  # a module literal is put in at once
    assert render(system, {"date": "June 30, 2025"}) == "Today is June 30, 2025.\n| 100 | 0 |"
    user = fstring(module, "build", "user", {"query", "report"})
    assert render(user, {"query": "q?", "report": "r."}) == "Q: q?\nR: r."
    assert fstring(module, "plain", None, set()) == ["A fixed prompt."]
    assert render(fstring(module, "attribute", None, {"task.prompt"}), {"task.prompt": "do it"}) == "Task: do it"
    assert render(fstring(module, "Scorer.prompt", None, {"answer"}), {"answer": "42"}) == "Answer: 42"
    assert literal(module, "TABLE") == {"a": 1}


@pytest.mark.parametrize(("function", "target", "message"), [
    ("expression", None, "a replacement field other than {name} or {name.attribute}"),
    ("conversion", None, "a replacement field other than {name}"),
    ("unknown", None, "uses TABLE, which is neither filled in nor a string"),
    ("build", "nothing", "is not a string or an f-string"),
    ("missing", None, "defines no missing()"),
    ("Other.prompt", None, "defines no Other.prompt()"),
])
def test_anything_else_is_refused(module: Path, function: str, target: str | None, message: str) -> None:
    with pytest.raises(UpstreamError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")
                       .replace(")", r"\)")):
        fstring(module, function, target, {"query"})


def test_a_template_missing_a_value_is_a_key_error(module: Path) -> None:
    with pytest.raises(KeyError):
        render(fstring(module, "build", "user", {"query", "report"}), {"query": "q"})
