"""``search``: the best matches for a query in the episode's local corpus (SQLite FTS5, BM25)."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolError, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.corpus import corpus_of

MAX_HITS = 20
"""``k`` is at most this."""
MAX_QUERY = 1_000
"""Longer queries are refused."""


@tool(name="search", parallel_safe=True)
def search_tool(query: str, ctx: ToolContext, k: int = 5) -> str:
    """Search the local document collection and return the best-matching documents, best first: each one's id,
    title and most relevant passage. Read a document with the read tool.

    Args:
        query: The words to look for, e.g. "solid-state battery energy density".
        k: How many documents to return (1 to 20).
    """
    if not query.strip():
        raise ToolError("the query is empty")
    if len(query) > MAX_QUERY:
        raise ToolError(f"the query is longer than {MAX_QUERY} characters")
    if not 1 <= k <= MAX_HITS:
        raise ToolError(f"k must be between 1 and {MAX_HITS}")
    corpus = corpus_of(ctx)
    hits = corpus.search(query, k)
    if not hits:
        return f"no document of the {len(corpus)} matches {query!r}"
    lines = [f"{i}. [{h.doc_id}] {h.title}\n   {h.snippet}" for i, h in enumerate(hits, 1)]
    return "\n".join(lines)


register_tool(search_tool)
