"""``search`` and ``read``: a local document collection as the agent's library, for research without the web.

A benchmark (or a user's own environment) opens a folder of text, Markdown, HTML and PDF files with
:func:`open_corpus` and hands it to the episode as its state (``AgentSpec.environment`` returns the
:class:`Corpus`, or an object with a ``corpus`` attribute); a suite then names the two tools::

    [[benchmarks]]
    name = "liveresearch"
    backend = "agent"
    tools = ["search", "read"]
    [benchmarks.options]
    corpus = "my-corpus/"

``search`` ranks the documents with SQLite FTS5's BM25 and shows each hit's id, title and best passage;
``read`` returns a document's text a page at a time. A web-search tool installed through the
``pytest_jeval.tools`` entry point is named in ``tools`` the same way. See docs/agent-tools.md.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval.agents.tool import HarnessError, ToolContext
from pytest_jeval.agents.tools.corpus.index import (
    SUFFIXES,
    Corpus,
    CorpusError,
    Document,
    Hit,
    extract_text,
    open_corpus,
)

__all__ = ["SUFFIXES", "Corpus", "CorpusError", "Document", "Hit", "corpus_of", "extract_text", "open_corpus"]


def corpus_of(ctx: ToolContext) -> Corpus:
    """The episode's corpus: its state when that is a :class:`Corpus`, else the state's ``corpus`` attribute.

    HarnessError when the episode has none (the suite named ``search`` or ``read`` for a benchmark given no corpus).
    """
    state: Any = ctx.state
    found = state if isinstance(state, Corpus) else getattr(state, "corpus", None)
    if not isinstance(found, Corpus):
        raise HarnessError("the search and read tools need a local corpus, and this episode has none: give the "
                           "benchmark one (for the research benchmarks, [benchmarks.options] corpus = \"folder\")")
    return found


from pytest_jeval.agents.tools.corpus import read, search  # noqa: E402,F401  (each registers its tool)
