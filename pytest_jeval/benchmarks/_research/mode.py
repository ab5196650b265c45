"""The research side without the web: closed-book by default, a local corpus, or the tools a suite names.

A research benchmark runs ``direct`` (closed-book: the model answers from what it knows) unless the suite sets
``backend = "agent"``. As an agent it uses the tools the suite names: ``tools = ["search", "read"]`` with
``[benchmarks.options] corpus = "folder"`` gives it the local corpus (:mod:`pytest_jeval.agents.tools.corpus`);
any other tool a package installs (a web search) is named the same way. :func:`research_mode` says which of
these ran; every record carries it as ``research_mode``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from pytest_jeval.agents.tools.corpus import Corpus, CorpusError, open_corpus
from pytest_jeval.core.benchmark import Benchmark
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError
from pytest_jeval.suite.options import SuitePath

__all__ = ["CORPUS_TOOLS", "CorpusOptions", "ResearchState", "check_corpus", "research_environment", "research_mode"]

CORPUS_TOOLS = ("search", "read")
"""The tools that read the local corpus."""


class CorpusOptions(BaseModel):
    """The research options every research benchmark takes."""

    model_config = ConfigDict(extra="forbid")

    corpus: SuitePath | None = None
    """A folder of text, Markdown, HTML and PDF files: the local corpus the ``search`` and ``read`` tools read
    (with ``backend = "agent"`` and ``tools = ["search", "read"]``)."""

    @field_validator("corpus")
    @classmethod
    def _is_folder(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_dir():
            raise ValueError(f"no such folder: {value} (the local corpus is a folder of .txt, .md, .html and .pdf "
                             "files)")
        return value


def check_corpus(options: Any) -> str | None:
    """Build the options' corpus index now (before any request), as a path string for the samples; None without one.

    DatasetLoadError saying what is wrong (an empty folder, a PDF without pdftotext).
    """
    folder = getattr(options, "corpus", None)
    if folder is None:
        return None
    try:
        open_corpus(folder)
    except CorpusError as exc:
        raise DatasetLoadError(f"the local corpus cannot be used: {exc}") from None
    return str(folder)


@dataclasses.dataclass
class ResearchState:
    """An episode's state: its local corpus (None when the suite gave none)."""

    corpus: Corpus | None = None


def research_environment(sample: Sample, workspace: Path) -> ResearchState:
    """``AgentSpec.environment`` of a research benchmark: the sample's corpus (``metadata["corpus"]``), if any."""
    folder = sample.metadata.get("corpus")
    return ResearchState(open_corpus(folder) if folder else None)


def research_mode(entry: Any, bench: Benchmark, sample: Sample) -> dict[str, Any]:
    """How the research side of this item ran: ``{"mode", "tools", "corpus"}``.

    ``mode`` is ``closed-book`` (the direct backend, or an agent without tools), ``local-corpus`` (an agent
    given ``search``/``read`` and a corpus), ``tools`` (an agent with other tools, e.g. an installed web search)
    or ``external-agent`` (an external agent CLI, with the tools it brings).
    """
    backend = entry.backend_kind or ("agent" if entry.agent is not None else bench.backends[0])
    corpus = sample.metadata.get("corpus")
    if backend == "direct":
        return {"mode": "closed-book", "tools": [], "corpus": None}
    if backend != "agent":
        return {"mode": "external-agent", "tools": [], "corpus": None, "backend": backend}
    spec = bench.agent
    tools = list(entry.tools) or list(spec.default_tools if spec is not None else ())
    if not tools:
        return {"mode": "closed-book", "tools": [], "corpus": None}
    if corpus and any(t in CORPUS_TOOLS for t in tools):
        return {"mode": "local-corpus", "tools": tools, "corpus": corpus}
    return {"mode": "tools", "tools": tools, "corpus": corpus}
