"""Code blocks of the docs that tests run as written."""

from __future__ import annotations

import re

from tests.support.paths import REPO


def doc_example(name: str) -> str:
    """The example block ``<!-- example: name -->`` of docs/writing-benchmarks.md."""
    text = (REPO / "docs" / "writing-benchmarks.md").read_text()
    match = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", text, re.S)
    assert match, f"docs/writing-benchmarks.md has no example block for {name}"
    return match.group(1)
