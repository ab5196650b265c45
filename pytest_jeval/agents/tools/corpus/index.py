"""A local document collection, indexed for full-text search with SQLite FTS5 (the standard library's ``sqlite3``).

:func:`open_corpus` reads every text (``.txt``), Markdown (``.md``), HTML (``.html``, ``.htm``) and PDF file
below a folder, turns each into plain text (PDFs with ``pdftotext`` from poppler-utils, HTML without its
scripts, styles and tags) and indexes it once per process: a second call on the same folder with the same
files (names, sizes, modification times) returns the same :class:`Corpus`. The index lives in a private
temporary directory removed when the process exits.

Ranking is SQLite's BM25 (``bm25()`` of FTS5, the title weighted twice the body); a query is its words,
any of which may match (``"w1" OR "w2" ...``), so a question in plain words works as a query.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import html
import html.parser
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

__all__ = ["SUFFIXES", "Corpus", "CorpusError", "Document", "Hit", "extract_text", "open_corpus"]

SUFFIXES = {".txt": "text", ".md": "text", ".markdown": "text", ".html": "html", ".htm": "html", ".pdf": "pdf"}
"""The files a corpus reads, by suffix (case-insensitive); others are ignored."""
PDFTOTEXT_TIMEOUT = 120.0
"""Seconds ``pdftotext`` may take for one file."""
MAX_TITLE = 120


class CorpusError(ValueError):
    """A folder that cannot be a corpus (missing, empty, a PDF without ``pdftotext``); the message says why."""


@dataclasses.dataclass(frozen=True)
class Document:
    """One file of the corpus."""

    doc_id: str
    """Its path relative to the corpus folder, with ``/`` (what ``search`` shows and ``read`` takes)."""
    title: str
    """Its title: the HTML ``<title>`` or first heading, else its first line, else its file name."""
    chars: int
    """Characters of its text."""


@dataclasses.dataclass(frozen=True)
class Hit:
    """One search result."""

    doc_id: str
    title: str
    score: float
    """BM25 relevance (higher is better)."""
    snippet: str
    """The best-matching passage, matched words in ``[...]``."""


class _HTMLText(html.parser.HTMLParser):
    """Text of an HTML page: no scripts or styles, block elements on their own lines."""

    BLOCKS: ClassVar[frozenset[str]] = frozenset({
        "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "table", "ul", "ol",
        "pre", "blockquote", "header", "footer", "title"})
    SKIP: ClassVar[frozenset[str]] = frozenset({"script", "style", "noscript", "template", "svg"})
    VOID: ClassVar[frozenset[str]] = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col",
                                                "embed", "source", "track", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.heading = ""
        self._skip = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")
        if tag not in self.VOID:
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag in self.BLOCKS:
            self.parts.append("\n")
        if tag in self._in:
            del self._in[len(self._in) - 1 - self._in[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        current = self._in[-1] if self._in else ""
        if current == "title":
            self.title += data
            return
        if current in ("h1", "h2") and not self.heading:
            self.heading = data.strip()
        self.parts.append(data)


def _clean(text: str) -> str:
    lines = [re.sub(r"[ \t\f\v]+", " ", line).strip() for line in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _pdf_text(path: Path) -> str:
    exe = shutil.which("pdftotext")
    if exe is None:
        raise CorpusError(f"{path} is a PDF and pdftotext is missing: install poppler-utils "
                          "(apt-get install -y poppler-utils, or `make poppler`)")
    try:
        done = subprocess.run([exe, "-enc", "UTF-8", "-q", str(path), "-"], capture_output=True,
                              timeout=PDFTOTEXT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise CorpusError(f"pdftotext took more than {PDFTOTEXT_TIMEOUT:g}s on {path}") from None
    if done.returncode != 0:
        raise CorpusError(f"pdftotext cannot read {path}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "replace").replace("\f", "\n")


def extract_text(path: Path) -> tuple[str, str]:
    """``(title, text)`` of one corpus file (see the module docstring); CorpusError for a PDF that cannot be read."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise CorpusError(f"{path}: not a corpus file (the suffixes read are {', '.join(sorted(SUFFIXES))})")
    title = ""
    if kind == "pdf":
        text = _pdf_text(path)
    elif kind == "html":
        parser = _HTMLText()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        parser.close()
        text = "".join(parser.parts)
        title = " ".join(html.unescape(parser.title).split()) or parser.heading
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
        heading = re.search(r"^#{1,2}\s+(.+)$", text, re.MULTILINE)
        title = heading.group(1).strip() if heading else ""
    text = _clean(text)
    if not title:
        title = next((line for line in text.split("\n") if line.strip()), path.stem)
    return title[:MAX_TITLE], text


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and Path(name).suffix.lower() in SUFFIXES:
                yield Path(dirpath) / name


def _query(text: str) -> str:
    """An FTS5 query of ``text``'s words, any of which may match."""
    words = re.findall(r"\w+", text.lower())
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


class Corpus:
    """An indexed folder of documents (make one with :func:`open_corpus`); safe to use from several threads."""

    def __init__(self, root: Path, db: Path, documents: dict[str, Document]) -> None:
        self.root = root
        """The corpus folder."""
        self.documents = documents
        """Every document by id, in path order."""
        self._db = sqlite3.connect(db, check_same_thread=False)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.documents)

    def __repr__(self) -> str:
        return f"Corpus({str(self.root)!r}, {len(self)} documents)"

    @classmethod
    def build(cls, root: Path, db: Path) -> Corpus:
        """Read every corpus file below ``root`` into a new index at ``db``."""
        if not root.is_dir():
            raise CorpusError(f"corpus folder {root} does not exist or is not a directory")
        documents: dict[str, Document] = {}
        con = sqlite3.connect(db)
        try:
            con.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, body, "
                        "tokenize = 'unicode61 remove_diacritics 2')")
            for path in _files(root):
                title, text = extract_text(path)
                doc_id = path.relative_to(root).as_posix()
                documents[doc_id] = Document(doc_id, title, len(text))
                con.execute("INSERT INTO docs (doc_id, title, body) VALUES (?, ?, ?)", (doc_id, title, text))
            con.commit()
        finally:
            con.close()
        if not documents:
            raise CorpusError(f"corpus folder {root} holds no {', '.join(sorted(SUFFIXES))} file")
        return cls(root, db, documents)

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` documents that match ``query`` best, best first (none when no word of it occurs)."""
        match = _query(query)
        if not match:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT doc_id, title, bm25(docs, 0.0, 2.0, 1.0) AS rank, "
                "snippet(docs, 2, '[', ']', ' ... ', 32) FROM docs WHERE docs MATCH ? ORDER BY rank, doc_id LIMIT ?",
                (match, k)).fetchall()
        return [Hit(doc_id, title, round(-rank, 4), " ".join(snippet.split())) for doc_id, title, rank, snippet in rows]

    def text(self, doc_id: str) -> str:
        """The whole text of a document; KeyError for an unknown id."""
        if doc_id not in self.documents:
            raise KeyError(doc_id)
        with self._lock:
            row = self._db.execute("SELECT body FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()
        return str(row[0])


_CACHE: dict[tuple[str, str], Corpus] = {}
_CACHE_LOCK = threading.Lock()
_TEMP: list[str] = []


def _signature(root: Path) -> str:
    digest = hashlib.sha256()
    for path in _files(root):
        info = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _remove_temp() -> None:
    for path in _TEMP:
        shutil.rmtree(path, ignore_errors=True)


def open_corpus(root: str | os.PathLike[str]) -> Corpus:
    """The :class:`Corpus` of the folder ``root``, built on first use and reused while its files stay the same."""
    folder = Path(root).expanduser().resolve()
    if not folder.is_dir():
        raise CorpusError(f"corpus folder {folder} does not exist or is not a directory")
    key = (str(folder), _signature(folder))
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is not None:
            return found
        if not _TEMP:
            atexit.register(_remove_temp)
        where = tempfile.mkdtemp(prefix="jeval-corpus-")
        _TEMP.append(where)
        corpus = Corpus.build(folder, Path(where) / "index.sqlite")
        _CACHE[key] = corpus
        return corpus
