"""The local corpus: ``search`` finds the right document for each question, ``read`` gives a document's text (a PDF
through pdftotext), and the tools need a corpus in the episode's state. Data: tests/data/research_corpus/docs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.tools.corpus import Corpus, CorpusError, open_corpus
from pytest_jeval.core.sample import Sample

DOCS = Path(__file__).resolve().parents[1] / "data" / "research_corpus" / "docs"
NEEDS_PDFTOTEXT = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                     reason="pdftotext (poppler-utils, `make poppler`) is not installed")


def ctx(state: object) -> ToolContext:
    return ToolContext(sample=Sample(id="s", input="q"), workspace=Path("/nonexistent"), state=state)


def search(state: object, query: str, k: int = 5) -> str:
    fn = TOOLS.get("search").fn
    assert fn is not None
    return str(fn(query=query, k=k, ctx=ctx(state)))


def read(state: object, doc_id: str, offset: int = 0) -> str:
    fn = TOOLS.get("read").fn
    assert fn is not None
    return str(fn(doc_id=doc_id, offset=offset, ctx=ctx(state)))


@NEEDS_PDFTOTEXT
@pytest.mark.parametrize(("question", "document"), [
    ("Which battery chemistry is safer to install inside a house, and why?", "energy/home-batteries.md"),
    ("How much did London's ULEZ reduce roadside NO2?", "cities/low-emission-zones.html"),
    ("Why did Ofo collapse and what happened to user deposits?", "bike-sharing.txt"),
    ("Do air-source heat pumps still work at -15 degrees Celsius?", "heat-pumps.pdf"),
])
def test_search_finds_the_right_document_for_each_question(question: str, document: str) -> None:
    corpus = open_corpus(DOCS)
    assert corpus.search(question, 1)[0].doc_id == document
    assert search(corpus, question).startswith(f"1. [{document}] ")


@NEEDS_PDFTOTEXT
def test_read_of_a_pdf_gives_its_text() -> None:
    corpus = open_corpus(DOCS)
    text = read(corpus, "heat-pumps.pdf")
    assert text.startswith("[heat-pumps.pdf] Heat pumps in cold climates (characters 0-")
    assert "coefficient of performance (COP) above 2" in text and text.rstrip().endswith("COP near 3.5 all winter.")
    assert "; end of document)" in text


@NEEDS_PDFTOTEXT
def test_html_loses_its_scripts_and_styles_and_pages_continue(tmp_path: Path) -> None:
    corpus = open_corpus(DOCS)
    assert [h.doc_id for h in corpus.search("battery", 5)] == ["energy/home-batteries.md"]  # not the HTML's style
    assert corpus.documents["cities/low-emission-zones.html"].title == "Low-emission zones in European cities, 2015-2024"
    (tmp_path / "long.md").write_text("# Long\n\n" + "word " * 3000)
    page = read(open_corpus(tmp_path), "long.md")
    assert "; next offset 8000)" in page
    second = read(open_corpus(tmp_path), "long.md", 8000)
    assert "(characters 8000-15007 of 15007; end of document)" in second


def test_the_index_is_built_once_and_again_when_a_file_changes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha beta")
    first = open_corpus(tmp_path)
    assert open_corpus(tmp_path) is first
    (tmp_path / "b.md").write_text("# B\n\ngamma")
    second = open_corpus(tmp_path)
    assert second is not first and [h.doc_id for h in second.search("gamma")] == ["b.md"]


def test_bad_corpora_and_bad_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CorpusError, match="does not exist"):
        open_corpus(tmp_path / "nowhere")
    (tmp_path / "notes.csv").write_text("a,b")
    with pytest.raises(CorpusError, match=re.escape("holds no .htm, .html, .markdown, .md, .pdf, .txt file")):
        open_corpus(tmp_path)
    shutil.copy(DOCS / "heat-pumps.pdf", tmp_path / "h.pdf")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no pdftotext on PATH
    with pytest.raises(CorpusError, match="pdftotext is missing: install poppler-utils"):
        open_corpus(tmp_path)
    monkeypatch.undo()
    (tmp_path / "h.pdf").unlink()
    (tmp_path / "x.txt").write_text("x")
    corpus = open_corpus(tmp_path)
    assert isinstance(corpus, Corpus)
    with pytest.raises(ToolError, match=re.escape("no document 'y.txt'")):
        read(corpus, "y.txt")
    with pytest.raises(ToolError, match="k must be between 1 and 20"):
        search(corpus, "x", k=50)
    assert search(corpus, "zebra") == "no document of the 1 matches 'zebra'"
    with pytest.raises(HarnessError, match="need a local corpus"):
        search(None, "x")
    assert search(type("State", (), {"corpus": corpus})(), "x").startswith("1. [x.txt]")  # a state's corpus attribute
