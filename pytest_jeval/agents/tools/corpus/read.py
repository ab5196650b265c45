"""``read``: a document of the episode's local corpus, a page at a time."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolError, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.corpus import corpus_of

PAGE_CHARS = 8_000
"""Characters ``read`` returns per call."""


@tool(name="read", parallel_safe=True)
def read_tool(doc_id: str, ctx: ToolContext, offset: int = 0) -> str:
    """Read a document of the local collection by its id (as search shows it), up to 8000 characters from
    offset; the header says where the next page starts.

    Args:
        doc_id: The document's id, e.g. "reports/battery-2024.md".
        offset: The character to start at (0 for the beginning).
    """
    corpus = corpus_of(ctx)
    doc = corpus.documents.get(doc_id.strip())
    if doc is None:
        raise ToolError(f"no document {doc_id!r} in the collection; use an id that search returned")
    if offset < 0 or (offset >= doc.chars and doc.chars):
        raise ToolError(f"offset must be between 0 and {max(doc.chars - 1, 0)}")
    text = corpus.text(doc.doc_id)
    page = text[offset:offset + PAGE_CHARS]
    end = offset + len(page)
    more = f"; next offset {end}" if end < doc.chars else "; end of document"
    return f"[{doc.doc_id}] {doc.title} (characters {offset}-{end} of {doc.chars}{more})\n\n{page}"


register_tool(read_tool)
