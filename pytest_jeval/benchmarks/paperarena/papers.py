"""The papers of a PaperArena run, from the cache the user provides (``[benchmarks.options] papers``).

PaperArena's dataset has no licence, so nothing of it ships here; the user keeps the papers. For a question about
``<pdf_name>`` the cache may hold, in this order of preference:

1. ``<pdf_name>/auto/<pdf_name>.md``: upstream's parsed paper (its PDF Parser's output folder, ``sampled_jsons``);
2. ``<pdf_name>.md`` (or ``.markdown``): the paper as Markdown;
3. ``<pdf_name>.txt``: the paper as plain text;
4. ``<pdf_name>.pdf``: the paper itself (upstream's ``sampled_papers``), read with ``pdftotext``.

A :class:`Paper` is its text, its sections (Markdown headings, or numbered and named headings in plain text), its
passages for search (about :data:`PASSAGE_CHARS` characters, cut at paragraph ends, each in a section) and its
tables (Markdown pipe tables and HTML ``<table>`` elements) as rows, which the episode writes to CSV files.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import html.parser
import io
import re
import sqlite3
import threading
from pathlib import Path

from pytest_jeval.agents.tools.corpus import CorpusError, extract_text

__all__ = ["PASSAGE_CHARS", "Paper", "PaperError", "find_paper", "load_paper"]

PASSAGE_CHARS = 1_200


class PaperError(ValueError):
    """A paper the cache does not hold, or cannot be read."""


@dataclasses.dataclass(frozen=True)
class Section:
    title: str
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class Passage:
    section: str
    start: int
    text: str


_HEADING = re.compile(
    r"^(?:#{1,6}\s+(?P<md>.+?)\s*#*"                                               # a Markdown heading
    r"|(?P<num>(?:\d+(?:\.\d+)*\.?|[A-Z]\.(?:\d+\.?)*)\s+[A-Z][^\n]{1,80})"        # "3 Results", "A.1 Proofs"
    r"|(?P<named>Abstract|Introduction|Related Work|Conclusions?|References|Acknowledge?ments?|Appendix[^\n]{0,60}"
    r"|Limitations))\s*$", re.MULTILINE)


class _Tables(html.parser.HTMLParser):
    """The rows of every HTML table, cell texts stripped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _pipe_tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.split("\n"), ""]:
        stripped = line.strip()
        if stripped.startswith("|") and stripped.count("|") >= 2:
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                current.append(cells)
        elif current:
            if len(current) > 1:
                tables.append(current)
            current = []
    return tables


@dataclasses.dataclass
class Paper:
    """One paper: its name, text, sections, passages and tables."""

    name: str
    source: str
    """The cache file it was read from."""
    text: str
    sections: list[Section]
    passages: list[Passage]
    tables: list[list[list[str]]]
    _index: sqlite3.Connection | None = None
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    @classmethod
    def from_text(cls, name: str, source: str, text: str) -> Paper:
        heads = [(m.start(), (m.group("md") or m.group("num") or m.group("named")).strip())
                 for m in _HEADING.finditer(text)]
        if not heads or heads[0][0] > 0:
            heads.insert(0, (0, "(start)"))
        sections = [Section(title, start, heads[i + 1][0] if i + 1 < len(heads) else len(text))
                    for i, (start, title) in enumerate(heads)]
        passages: list[Passage] = []
        for section in sections:
            chunk, chunk_start = "", section.start
            pos = section.start
            for para in re.split(r"(\n\s*\n)", text[section.start:section.end]):
                if chunk and len(chunk) + len(para) > PASSAGE_CHARS:
                    passages.append(Passage(section.title, chunk_start, chunk.strip()))
                    chunk, chunk_start = "", pos
                chunk += para
                pos += len(para)
            if chunk.strip():
                passages.append(Passage(section.title, chunk_start, chunk.strip()))
        parser = _Tables()
        parser.feed(text)
        tables = [t for t in parser.tables if t] + _pipe_tables(text)
        return cls(name, source, text, sections, passages, tables)

    def search(self, query: str, k: int) -> list[tuple[Passage, str]]:
        """The ``k`` passages that match ``query`` best (SQLite FTS5, BM25), with their snippets."""
        words = re.findall(r"\w+", query.lower())
        if not words:
            return []
        with self._lock:
            if self._index is None:
                self._index = sqlite3.connect(":memory:", check_same_thread=False)
                self._index.execute("CREATE VIRTUAL TABLE p USING fts5(n UNINDEXED, section, body)")
                self._index.executemany("INSERT INTO p VALUES (?, ?, ?)",
                                        [(i, p.section, p.text) for i, p in enumerate(self.passages)])
            rows = self._index.execute(
                "SELECT n, snippet(p, 2, '[', ']', ' ... ', 40) FROM p WHERE p MATCH ? "
                "ORDER BY bm25(p, 0.0, 1.0, 1.0), n LIMIT ?",
                (" OR ".join(f'"{w}"' for w in dict.fromkeys(words)), k)).fetchall()
        return [(self.passages[int(n)], " ".join(snippet.split())) for n, snippet in rows]

    def section(self, title: str) -> Section | None:
        """The section named ``title``: exactly, else ignoring case, else the first whose title contains it."""
        wanted = title.strip().lower()
        for test in (lambda t: t == title.strip(), lambda t: t.lower() == wanted, lambda t: wanted in t.lower()):
            found = next((s for s in self.sections if test(s.title)), None)
            if found is not None:
                return found
        return None

    def tables_csv(self) -> list[str]:
        """Each table as CSV text."""
        out = []
        for table in self.tables:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows(table)
            out.append(buf.getvalue())
        return out


def find_paper(cache: Path, name: str) -> Path | None:
    """The cache file of paper ``name`` (see the module docstring for the order), or None."""
    for candidate in (cache / name / "auto" / f"{name}.md", cache / f"{name}.md", cache / f"{name}.markdown",
                      cache / f"{name}.txt", cache / f"{name}.pdf"):
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=64)
def _load(path: Path, stamp: tuple[int, int], name: str) -> Paper:
    try:
        if path.suffix.lower() == ".pdf":
            _, text = extract_text(path)
        else:
            text = path.read_text(encoding="utf-8", errors="replace")
    except (CorpusError, OSError) as exc:
        raise PaperError(f"paper {name!r} cannot be read from {path}: {exc}") from None
    return Paper.from_text(name, str(path), text)


def load_paper(cache: Path, name: str) -> Paper:
    """Paper ``name`` from the cache (read once per process while the file is unchanged)."""
    path = find_paper(cache, name)
    if path is None:
        raise PaperError(f"the paper cache {cache} holds no {name!r} (as {name}/auto/{name}.md, {name}.md, "
                         f"{name}.txt or {name}.pdf)")
    info = path.stat()
    return _load(path, (info.st_size, info.st_mtime_ns), name)
