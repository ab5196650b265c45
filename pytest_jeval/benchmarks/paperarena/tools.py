"""The tools PaperArena's agent gets over the paper, offline: search within it, read it by section, and run Python
(the built-in ``python`` tool) on its tables, which the episode writes as CSV files to ``tables/``.

They stand in for upstream's PDF Parser (``paper_read``), RAG (``paper_search``), Code Executor and, for tables,
Data Analyzer (``python``). A question may be about another paper the cache holds (cross-paper questions name it):
both paper tools take ``paper``, by default the question's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError, tool
from pytest_jeval.agents.tools.python import python_tool
from pytest_jeval.benchmarks.paperarena.papers import Paper, PaperError, load_paper
from pytest_jeval.core.sample import Sample

__all__ = ["TOOLS", "PaperState", "environment"]

READ_CHARS = 6_000
MAX_HITS = 10


@dataclasses.dataclass
class PaperState:
    """An episode's papers: the cache and the question's paper."""

    cache: Path
    paper: str
    tables: list[str]
    """The workspace files of the question paper's tables."""


def environment(sample: Sample, workspace: Path) -> PaperState:
    """Load the question's paper and write its tables to ``tables/table_<n>.csv`` in the workspace."""
    cache, name = Path(sample.metadata["papers"]), str(sample.metadata["pdf_name"])
    try:
        paper = load_paper(cache, name)
    except PaperError as exc:
        raise HarnessError(str(exc)) from exc
    written = []
    if paper.tables:
        (workspace / "tables").mkdir()
        for n, text in enumerate(paper.tables_csv(), 1):
            rel = f"tables/table_{n}.csv"
            (workspace / rel).write_text(text, encoding="utf-8")
            written.append(rel)
    return PaperState(cache, name, written)


def _paper(ctx: ToolContext, name: str) -> Paper:
    state = ctx.state
    if not isinstance(state, PaperState):
        raise HarnessError("the paper tools need the episode's PaperState")
    try:
        return load_paper(state.cache, name.strip() or state.paper)
    except PaperError as exc:
        raise ToolError(str(exc)) from None


@tool(parallel_safe=True)
def paper_search(query: str, ctx: ToolContext, paper: str = "", k: int = 5) -> str:
    """Search the paper for passages about a query and return the best ones, with their section and offset.

    Args:
        query: The words to look for, e.g. "ablation learning rate Table 3".
        paper: Another paper's name to search instead of the question's paper ("" for the question's paper).
        k: How many passages to return (1 to 10).
    """
    if not 1 <= k <= MAX_HITS:
        raise ToolError(f"k must be between 1 and {MAX_HITS}")
    found = _paper(ctx, paper)
    hits = found.search(query, k)
    if not hits:
        return f"no passage of {found.name!r} matches {query!r}"
    return "\n\n".join(f"{i}. [section: {p.section}; offset {p.start}] {snippet}" for i, (p, snippet) in
                       enumerate(hits, 1))


@tool(parallel_safe=True)
def paper_read(ctx: ToolContext, section: str = "", paper: str = "", offset: int = 0) -> str:
    """Read the paper: without a section, its list of sections and tables; with one, that section's text
    (6000 characters at a time; offset continues a long section).

    Args:
        section: A section title as listed (e.g. "4 Experiments"), or "" for the list of sections.
        paper: Another paper's name to read instead of the question's paper ("" for the question's paper).
        offset: Characters to skip from the start of the section.
    """
    found = _paper(ctx, paper)
    state = ctx.state
    if not section.strip():
        lines = [f"{found.name}: {len(found.text)} characters, {len(found.sections)} sections:"]
        lines += [f"- {s.title} ({s.end - s.start} characters)" for s in found.sections]
        if isinstance(state, PaperState) and found.name == state.paper and state.tables:
            lines.append(f"Tables as CSV files in the working directory (read them with python): "
                         f"{', '.join(state.tables)}")
        return "\n".join(lines)
    part = found.section(section)
    if part is None:
        raise ToolError(f"no section {section!r}; the sections are: {', '.join(s.title for s in found.sections)}")
    text = found.text[part.start:part.end]
    if offset < 0 or (offset >= len(text) and text):
        raise ToolError(f"offset must be between 0 and {max(len(text) - 1, 0)}")
    page = text[offset:offset + READ_CHARS]
    end = offset + len(page)
    more = f"; next offset {end}" if end < len(text) else "; end of section"
    return f"[{part.title}] characters {offset}-{end} of {len(text)}{more}\n\n{page}"


TOOLS = (paper_search, paper_read, python_tool)
"""The agent's tools: the two paper tools and the sandboxed ``python``."""
