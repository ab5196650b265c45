"""Write tests/data/swebench: three small Python repositories as git bundles, their instances in SWE-bench's
and SWE-fficiency's schemas, install recipes, extra patches for the tests, and the README with checksums.

    python scripts/make_swe_fixtures.py            # rewrites tests/data/swebench

The repositories, their bugs, slow paths and tests were written for this project (Apache-2.0, as the project).
Commit dates and authors are fixed, so the commits (and so the instances' commit ids) come out the same on
every run; the bundles' bytes may differ between git versions, and the README records the ones committed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "swebench"
GITIGNORE = "__pycache__/\n*.egg-info/\n.pytest_cache/\nbuild/\n"
PYPROJECT = textwrap.dedent("""\
    [tool.pytest.ini_options]
    pythonpath = ["."]
    testpaths = ["tests"]
    """)


def d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ------------------------------------------------------------------------------------------------ textkit

TEXTKIT_INIT = d('''
    """textkit: small text utilities."""

    from textkit.slug import slugify
    from textkit.wrap import truncate, wrap_words

    __all__ = ["slugify", "truncate", "wrap_words"]
    __version__ = "1.0.0"
    ''')
SLUG_BUGGY = d('''
    """URL slugs."""

    import re
    import unicodedata


    def slugify(text: str, sep: str = "-") -> str:
        """A lower-case ASCII slug of ``text``: what is not a letter or a digit becomes ``sep``."""
        ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        return re.sub(r"[^a-z0-9]", sep, ascii_text.lower())
    ''')
SLUG_FIXED = SLUG_BUGGY.replace(
    'what is not a letter or a digit becomes ``sep``."""',
    'each run of other characters becomes one ``sep``,\n    and none is left at either end."""').replace(
    '    return re.sub(r"[^a-z0-9]", sep, ascii_text.lower())\n',
    '    slug = re.sub(r"[^a-z0-9]+", sep, ascii_text.lower())\n    return slug.strip(sep)\n')
WRAP_BUGGY = d('''
    """Cutting and wrapping text."""


    def truncate(text: str, width: int, ellipsis: str = "...") -> str:
        """``text`` cut to at most ``width`` characters, ending in ``ellipsis`` when it was cut."""
        if len(text) <= width:
            return text
        return text[:width] + ellipsis


    def wrap_words(text: str, width: int) -> list[str]:
        """Greedy word wrap: lines of at most ``width`` characters (a longer word gets a line of its own)."""
        lines: list[str] = []
        current = ""
        for word in text.split():
            if current and len(current) + 1 + len(word) > width:
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        if current:
            lines.append(current)
        return lines
    ''')
WRAP_FIXED = WRAP_BUGGY.replace(
    "    return text[:width] + ellipsis\n",
    "    if width <= len(ellipsis):\n        return ellipsis[:width]\n"
    "    return text[: width - len(ellipsis)] + ellipsis\n")
TEST_SLUG = d('''
    from textkit import slugify


    def test_lowercases():
        assert slugify("Hello") == "hello"


    def test_custom_separator():
        assert slugify("a b", sep="_") == "a_b"


    def test_accents_are_dropped():
        assert slugify("café") == "cafe"
    ''')
TEST_SLUG_NEW = TEST_SLUG + "\n\n" + d('''


    def test_collapses_repeated_separators():
        assert slugify("rock  &  roll") == "rock-roll"


    def test_strips_edge_separators():
        assert slugify("  Hello, World!  ") == "hello-world"
    ''')
TEST_WRAP = d('''
    from textkit import truncate, wrap_words


    def test_short_text_unchanged():
        assert truncate("abc", 10) == "abc"


    def test_wrap_words():
        assert wrap_words("the quick brown fox", 10) == ["the quick", "brown fox"]
    ''')
TEST_WRAP_NEW = TEST_WRAP + "\n\n" + d('''


    def test_truncate_respects_width():
        assert truncate("abcdefghij", 6) == "abc..."


    def test_truncate_tiny_width():
        assert truncate("abcdef", 2) == ".."
    ''')
COUNT = d('''
    """Counting words."""


    def word_count(text: str) -> int:
        """How many whitespace-separated words ``text`` has."""
        return len(text.split())
    ''')

TEXTKIT = [
    ("Initial textkit: slugify, truncate, wrap_words", "2024-03-01T10:00:00+00:00", {
        ".gitignore": GITIGNORE, "pyproject.toml": PYPROJECT, "README.md": "# textkit\n\nSmall text utilities.\n",
        "textkit/__init__.py": TEXTKIT_INIT, "textkit/slug.py": SLUG_BUGGY, "textkit/wrap.py": WRAP_BUGGY,
        "tests/test_slug.py": TEST_SLUG, "tests/test_wrap.py": TEST_WRAP}),
    ("slugify: collapse runs of separators and strip them at the ends", "2024-03-05T10:00:00+00:00", {
        "textkit/slug.py": SLUG_FIXED, "tests/test_slug.py": TEST_SLUG_NEW}),
    ("truncate: count the ellipsis in the width", "2024-03-09T10:00:00+00:00", {
        "textkit/wrap.py": WRAP_FIXED, "tests/test_wrap.py": TEST_WRAP_NEW}),
    ("Add word_count", "2024-03-12T10:00:00+00:00", {"textkit/count.py": COUNT}),
]

# ------------------------------------------------------------------------------------------------ ledger

LEDGER_SETUP = d('''
    from setuptools import setup

    setup(name="ledger", version="0.3.0", packages=["ledger"])
    ''')
LEDGER_INIT = d('''
    """ledger: amounts and a tiny book of entries."""

    from ledger.amounts import format_amount, parse_amount
    from ledger.book import Ledger

    __all__ = ["Ledger", "format_amount", "parse_amount"]
    ''')
AMOUNTS_BUGGY = d('''
    """Money amounts as Decimals."""

    from decimal import Decimal, InvalidOperation


    def parse_amount(text: str) -> Decimal:
        """``"12.50"`` or ``"$12.50"`` as ``Decimal("12.50")``; ValueError for anything else."""
        cleaned = text.strip().replace("$", "")
        try:
            return Decimal(cleaned)
        except InvalidOperation:
            raise ValueError(f"not an amount: {text!r}") from None


    def format_amount(value: Decimal) -> str:
        """Two decimals with thousands separators."""
        return f"{value:,.2f}"
    ''')
AMOUNTS_FIXED = AMOUNTS_BUGGY.replace(
    '''    """``"12.50"`` or ``"$12.50"`` as ``Decimal("12.50")``; ValueError for anything else."""
    cleaned = text.strip().replace("$", "")
''', '''    """``"12.50"``, ``"$1,212.50"`` or ``"(12.50)"`` (negative) as a Decimal; ValueError for anything else."""
    cleaned = text.strip().replace("$", "").replace(",", "")
    negative = cleaned.startswith("(") and cleaned.endswith(")")
    if negative:
        cleaned = "-" + cleaned[1:-1]
''')
BOOK = d('''
    """A book of dated entries."""

    from dataclasses import dataclass, field
    from decimal import Decimal

    from ledger.amounts import parse_amount


    @dataclass
    class Ledger:
        entries: list[tuple[str, str, Decimal]] = field(default_factory=list)

        def add(self, date: str, description: str, amount: str) -> None:
            self.entries.append((date, description, parse_amount(amount)))

        def balance(self) -> Decimal:
            return sum((amount for _, _, amount in self.entries), Decimal("0"))
    ''')
TEST_AMOUNTS = d('''
    from decimal import Decimal

    import pytest

    from ledger import format_amount, parse_amount


    def test_plain():
        assert parse_amount("12.50") == Decimal("12.50")


    def test_dollar_sign():
        assert parse_amount(" $3.10 ") == Decimal("3.10")


    def test_rejects_garbage():
        with pytest.raises(ValueError):
            parse_amount("twelve")


    def test_format():
        assert format_amount(Decimal("1234.5")) == "1,234.50"
    ''')
TEST_AMOUNTS_NEW = TEST_AMOUNTS + "\n\n" + d('''


    def test_thousands_separator():
        assert parse_amount("$1,212.50") == Decimal("1212.50")


    def test_parenthesised_negative():
        assert parse_amount("(12.00)") == Decimal("-12.00")
    ''')
TEST_BOOK = d('''
    from decimal import Decimal

    from ledger import Ledger


    def test_balance():
        book = Ledger()
        book.add("2024-01-02", "coffee", "3.50")
        book.add("2024-01-03", "refund", "-1.25")
        assert book.balance() == Decimal("2.25")
    ''')

LEDGER = [
    ("Initial ledger", "2024-04-01T09:00:00+00:00", {
        ".gitignore": GITIGNORE, "setup.py": LEDGER_SETUP, "README.md": "# ledger\n",
        "ledger/__init__.py": LEDGER_INIT, "ledger/amounts.py": AMOUNTS_BUGGY, "ledger/book.py": BOOK,
        "tests/test_amounts.py": TEST_AMOUNTS, "tests/test_book.py": TEST_BOOK}),
    ("parse_amount: thousands separators and parenthesised negatives", "2024-04-08T09:00:00+00:00", {
        "ledger/amounts.py": AMOUNTS_FIXED, "tests/test_amounts.py": TEST_AMOUNTS_NEW}),
    ("README: usage", "2024-04-10T09:00:00+00:00", {"README.md": "# ledger\n\n`parse_amount(\"$1,212.50\")`\n"}),
]

# ------------------------------------------------------------------------------------------------ routegraph

RG_INIT = d('''
    """routegraph: an undirected graph, shortest paths and components."""

    from routegraph.graph import Graph
    from routegraph.paths import components, edge_list, shortest_path

    __all__ = ["Graph", "components", "edge_list", "shortest_path"]
    ''')
RG_GRAPH = d('''
    """An undirected graph as adjacency lists (neighbours in the order the edges were added)."""


    class Graph:
        def __init__(self) -> None:
            self._adj: dict[object, list[object]] = {}

        def add_node(self, node: object) -> None:
            self._adj.setdefault(node, [])

        def add_edge(self, a: object, b: object) -> None:
            self.add_node(a)
            self.add_node(b)
            self._adj[a].append(b)
            self._adj[b].append(a)

        def neighbours(self, node: object) -> list[object]:
            return list(self._adj.get(node, ()))

        def nodes(self) -> list[object]:
            return list(self._adj)

        @classmethod
        def grid(cls, width: int, height: int) -> "Graph":
            """A ``width`` x ``height`` grid of ``(x, y)`` nodes, each joined to its right and lower neighbour."""
            g = cls()
            for y in range(height):
                for x in range(width):
                    g.add_node((x, y))
                    if x + 1 < width:
                        g.add_edge((x, y), (x + 1, y))
                    if y + 1 < height:
                        g.add_edge((x, y), (x, y + 1))
            return g
    ''')
PATHS_V0 = d('''
    """Paths and components."""


    def shortest_path(graph, start, goal):
        """The nodes of a shortest path from ``start`` to ``goal`` (breadth first), or None."""
        queue = [[start]]
        visited = [start]
        while queue:
            path = queue.pop(0)
            node = path[-1]
            if node == goal:
                return path
            for nxt in graph.neighbours(node):
                if nxt not in visited:
                    visited.append(nxt)
                    queue.append(path + [nxt])
        return None


    def components(graph):
        """The connected components, as sets of nodes, in the order of their first node."""
        seen = set()
        found = []
        for node in graph.nodes():
            if node in seen or not graph.neighbours(node):
                continue
            part = {node}
            stack = [node]
            while stack:
                for nxt in graph.neighbours(stack.pop()):
                    if nxt not in part:
                        part.add(nxt)
                        stack.append(nxt)
            seen |= part
            found.append(part)
        return found


    def edge_list(graph):
        """Each edge once, as ``(a, b)`` in the order it is first met."""
        edges = []
        for a in graph.nodes():
            for b in graph.neighbours(a):
                if (b, a) not in edges and (a, b) not in edges:
                    edges.append((a, b))
        return edges
    ''')
PATHS_V1 = PATHS_V0.replace("if node in seen or not graph.neighbours(node):", "if node in seen:")
PATHS_V2 = PATHS_V1.replace(d('''
    def shortest_path(graph, start, goal):
        """The nodes of a shortest path from ``start`` to ``goal`` (breadth first), or None."""
        queue = [[start]]
        visited = [start]
        while queue:
            path = queue.pop(0)
            node = path[-1]
            if node == goal:
                return path
            for nxt in graph.neighbours(node):
                if nxt not in visited:
                    visited.append(nxt)
                    queue.append(path + [nxt])
        return None
    '''), d('''
    def shortest_path(graph, start, goal):
        """The nodes of a shortest path from ``start`` to ``goal`` (breadth first), or None."""
        parents = {start: start}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if node == goal:
                path = [node]
                while node != start:
                    node = parents[node]
                    path.append(node)
                return path[::-1]
            for nxt in graph.neighbours(node):
                if nxt not in parents:
                    parents[nxt] = node
                    queue.append(nxt)
        return None
    ''')).replace('"""Paths and components."""\n', '"""Paths and components."""\n\nfrom collections import deque\n')
EDGES_SLOW = """\
    edges = []
    for a in graph.nodes():
        for b in graph.neighbours(a):
            if (b, a) not in edges and (a, b) not in edges:
                edges.append((a, b))
    return edges
"""
EDGES_FAST = """\
    edges = []
    seen = set()
    for a in graph.nodes():
        for b in graph.neighbours(a):
            key = frozenset((a, b))
            if key not in seen:
                seen.add(key)
                edges.append((a, b))
    return edges
"""
PATHS_V3 = PATHS_V2.replace(EDGES_SLOW, EDGES_FAST)
TEST_PATHS = d('''
    from routegraph import Graph, components, edge_list, shortest_path


    def test_shortest_path_on_grid():
        path = shortest_path(Graph.grid(4, 3), (0, 0), (3, 2))
        assert path[0] == (0, 0) and path[-1] == (3, 2) and len(path) == 6


    def test_path_steps_are_edges():
        g = Graph.grid(5, 5)
        path = shortest_path(g, (0, 4), (4, 0))
        assert all(b in g.neighbours(a) for a, b in zip(path, path[1:]))


    def test_no_path():
        g = Graph()
        g.add_edge("a", "b")
        g.add_node("c")
        assert shortest_path(g, "a", "c") is None


    def test_two_components():
        g = Graph()
        g.add_edge(1, 2)
        g.add_edge(3, 4)
        assert components(g) == [{1, 2}, {3, 4}]


    def test_edge_list_counts_each_edge_once():
        assert len(edge_list(Graph.grid(3, 3))) == 12


    def test_edge_list_order():
        g = Graph()
        g.add_edge("a", "b")
        g.add_edge("c", "a")
        assert edge_list(g) == [("a", "b"), ("a", "c")]
    ''')
TEST_PATHS_NEW = TEST_PATHS + "\n\n" + d('''


    def test_isolated_node_is_its_own_component():
        g = Graph()
        g.add_edge(1, 2)
        g.add_node(3)
        assert components(g) == [{1, 2}, {3}]
    ''')
WORKLOAD_PATHS = d('''
    import timeit
    import statistics

    from routegraph import Graph, shortest_path


    def setup():
        global graph
        graph = Graph.grid(20, 20)


    def workload():
        global graph
        _ = shortest_path(graph, (0, 0), (19, 19))


    runtimes = timeit.repeat(workload, number=1, repeat=3, setup=setup)

    print("Mean:", statistics.mean(runtimes))
    print("Std Dev:", statistics.stdev(runtimes))
    ''')
WORKLOAD_EDGES = d('''
    import timeit
    import statistics

    from routegraph import Graph, edge_list


    def setup():
        global graph
        graph = Graph.grid(11, 11)


    def workload():
        global graph
        _ = edge_list(graph)


    runtimes = timeit.repeat(workload, number=1, repeat=3, setup=setup)

    print("Mean:", statistics.mean(runtimes))
    print("Std Dev:", statistics.stdev(runtimes))
    ''')

ROUTEGRAPH = [
    ("Initial routegraph", "2024-05-02T08:00:00+00:00", {
        ".gitignore": GITIGNORE, "pyproject.toml": PYPROJECT, "README.md": "# routegraph\n",
        "routegraph/__init__.py": RG_INIT, "routegraph/graph.py": RG_GRAPH, "routegraph/paths.py": PATHS_V0,
        "tests/test_paths.py": TEST_PATHS}),
    ("components: an isolated node is a component", "2024-05-06T08:00:00+00:00", {
        "routegraph/paths.py": PATHS_V1, "tests/test_paths.py": TEST_PATHS_NEW}),
    ("shortest_path: a deque and a parent map instead of list scans", "2024-05-10T08:00:00+00:00", {
        "routegraph/paths.py": PATHS_V2}),
    ("edge_list: a set of seen edges instead of list scans", "2024-05-14T08:00:00+00:00", {
        "routegraph/paths.py": PATHS_V3}),
    ("README: examples", "2024-05-20T08:00:00+00:00", {"README.md": "# routegraph\n\nSee `shortest_path`.\n"}),
]


ROUTEGRAPH_INSTALL = ("python -c \"import sysconfig; open(sysconfig.get_path('purelib') + '/routegraph-checkout.pth', "
                      "'w').write('/sandbox\\\\n')\"")
"""routegraph's install step: an editable install without pip (a .pth file naming the checkout), quicker than
``pip install -e .`` where the tests measure the workload many times."""


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "jeval fixtures", "GIT_AUTHOR_EMAIL": "fixtures@example.invalid",
           "GIT_COMMITTER_NAME": "jeval fixtures", "GIT_COMMITTER_EMAIL": "fixtures@example.invalid"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def build_repo(root: Path, commits: list[tuple[str, str, dict[str, str]]]) -> list[str]:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    shas = []
    for message, date, files in commits:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message, date=date)
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return shas


def is_test(path: str) -> bool:
    return path.startswith("tests/")


def split_diff(repo: Path, a: str, b: str) -> tuple[str, str]:
    """``(gold patch, test patch)`` of a -> b, split by test folder as SWE-bench splits a pull request."""
    names = git(repo, "diff", "--name-only", a, b).split()
    code = [n for n in names if not is_test(n)]
    tests = [n for n in names if is_test(n)]
    gold = git(repo, "diff", a, b, "--", *code) if code else ""
    test = git(repo, "diff", a, b, "--", *tests) if tests else ""
    return gold, test


def node_ids(repo: Path, sha: str, path: str) -> list[str]:
    text = git(repo, "show", f"{sha}:{path}")
    return [f"{path}::{line[4:].split('(')[0]}" for line in text.splitlines() if line.startswith("def test_")]


def instance(repo_name: str, number: int, repo: Path, base: str, fix: str, version: str, statement: str,
             f2p: list[str], p2p: list[str], created: str, **extra: Any) -> dict[str, Any]:
    gold, test = split_diff(repo, base, fix)
    row = {"repo": repo_name, "instance_id": f"{repo_name.replace('/', '__')}-{number}", "base_commit": base,
           "patch": gold, "test_patch": test, "problem_statement": statement, "hints_text": "",
           "created_at": created, "version": version, "FAIL_TO_PASS": json.dumps(f2p),
           "PASS_TO_PASS": json.dumps(p2p), "environment_setup_commit": base}
    row.update(extra)
    return row


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "repos").mkdir(parents=True)
    (OUT / "patches").mkdir()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tk = build_repo(work / "textkit", TEXTKIT)
        lg = build_repo(work / "ledger", LEDGER)
        rg = build_repo(work / "routegraph", ROUTEGRAPH)
        for name, path in (("textkit", "textkit"), ("ledger", "ledger"), ("routegraph", "routegraph")):
            git(work / path, "bundle", "create", "-q", str(OUT / "repos" / f"jeval-fixtures__{name}.bundle"), "--all")
        slug_tests = "tests/test_slug.py::test_"
        swebench = [
            instance("jeval-fixtures/textkit", 1, work / "textkit", tk[0], tk[1], "1.0",
                     "slugify leaves separators at the ends and repeats them\n\n`slugify('  Hello, World!  ')` "
                     "returns `'--hello--world---'`; it should give `'hello-world'`: one separator per run of "
                     "other characters, none at the ends.",
                     [slug_tests + "collapses_repeated_separators", slug_tests + "strips_edge_separators"],
                     [slug_tests + "lowercases", slug_tests + "custom_separator", slug_tests + "accents_are_dropped"],
                     "2024-03-04T12:00:00Z"),
            instance("jeval-fixtures/textkit", 2, work / "textkit", tk[1], tk[2], "1.0",
                     "truncate returns text longer than width\n\n`truncate('abcdefghij', 6)` returns "
                     "`'abcdef...'` (9 characters). The result should never be longer than `width`, the "
                     "ellipsis included.",
                     ["tests/test_wrap.py::test_truncate_respects_width",
                      "tests/test_wrap.py::test_truncate_tiny_width"],
                     ["tests/test_wrap.py::test_short_text_unchanged", "tests/test_wrap.py::test_wrap_words"],
                     "2024-03-08T12:00:00Z"),
            instance("jeval-fixtures/ledger", 1, work / "ledger", lg[0], lg[1], "0.3",
                     "parse_amount rejects thousands separators and accounting negatives\n\n"
                     "`parse_amount('$1,212.50')` raises ValueError, and so does `parse_amount('(12.00)')`, the "
                     "way statements write -12.00.",
                     ["tests/test_amounts.py::test_thousands_separator",
                      "tests/test_amounts.py::test_parenthesised_negative"],
                     node_ids(work / "ledger", lg[0], "tests/test_amounts.py"),
                     "2024-04-05T12:00:00Z"),
            instance("jeval-fixtures/routegraph", 1, work / "routegraph", rg[0], rg[1], "2.1",
                     "components() drops isolated nodes\n\nA node without edges is a connected component of its "
                     "own, but `components()` leaves it out.",
                     ["tests/test_paths.py::test_isolated_node_is_its_own_component"],
                     node_ids(work / "routegraph", rg[0], "tests/test_paths.py"), "2024-05-05T12:00:00Z"),
        ]
        p2p = node_ids(work / "routegraph", rg[1], "tests/test_paths.py")
        swefficiency = [
            instance("jeval-fixtures/routegraph", 2, work / "routegraph", rg[1], rg[2], "2.1",
                     "Speed up shortest_path: it scans lists for the queue and the visited nodes.", [], p2p,
                     "2024-05-09T12:00:00Z", workload=WORKLOAD_PATHS, covering_tests=["tests/test_paths.py"],
                     speedup=None, single_thread_tests=[], notes=""),
            instance("jeval-fixtures/routegraph", 3, work / "routegraph", rg[2], rg[3], "2.1",
                     "Speed up edge_list: it checks each edge against the whole list.", [],
                     node_ids(work / "routegraph", rg[2], "tests/test_paths.py"),
                     "2024-05-13T12:00:00Z", workload=WORKLOAD_EDGES, covering_tests=["tests/test_paths.py"],
                     speedup=None, single_thread_tests=[], notes=""),
        ]
        patches = extra_patches(work, tk, rg)
    write_jsonl(OUT / "swebench.jsonl", swebench)
    write_jsonl(OUT / "swefficiency.jsonl", swefficiency)
    specs = {
        "jeval-fixtures/textkit": {"1.0": {"python": "3.11", "harness_packages": ["pytest"],
                                           "test_cmd": "pytest --no-header -rA --tb=no -p no:cacheprovider",
                                           "log_parser": "parse_log_pytest"}},
        "jeval-fixtures/ledger": {"0.3": {"python": "3.11", "harness_packages": ["pytest"],
                                          "install": "python -m pip install -e .", "test_cmd": "pytest -rA",
                                          "log_parser": "parse_log_pytest_options"}},
        "jeval-fixtures/routegraph": {"2.1": {"python": "3.11", "harness_packages": ["pytest"],
                                              "install": ROUTEGRAPH_INSTALL,
                                              "test_cmd": "pytest -rA -p no:cacheprovider",
                                              "log_parser": "parse_log_pytest"}},
    }
    (OUT / "specs.json").write_text(json.dumps(specs, indent=2) + "\n")
    for name, text in patches.items():
        (OUT / "patches" / name).write_text(text)
    write_readme()


def extra_patches(work: Path, tk: list[str], rg: list[str]) -> dict[str, str]:
    """Patches the tests submit besides the gold ones (each against its instance's base commit)."""
    out = {}
    repo = work / "textkit"
    git(repo, "checkout", "-q", tk[0])
    slug = repo / "textkit" / "slug.py"
    slug.write_text(SLUG_BUGGY.replace('r"[^a-z0-9]", sep', 'r"[^a-z0-9]+", sep'))
    out["textkit-1.partial.diff"] = git(repo, "diff")
    slug.write_text(SLUG_BUGGY.replace("ascii_text.lower()", "ascii_text"))
    out["textkit-1.wrong.diff"] = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    (repo / "tests" / "test_slug.py").write_text(TEST_SLUG_NEW.replace('== "hello-world"', '!= "hello-world"'))
    out["textkit-1.edits-tests.diff"] = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    repo = work / "routegraph"
    git(repo, "checkout", "-q", rg[1])
    paths = repo / "routegraph" / "paths.py"
    paths.write_text(PATHS_V2.replace("return path[::-1]", "return path"))
    out["routegraph-2.fast-but-wrong.diff"] = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "checkout", "-q", "main")
    git(work / "textkit", "checkout", "-q", "main")
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


README_HEAD = """# SWE-bench-format fixtures: three small repositories written for the tests

Source: written for this project by its authors (no upstream copy), by `scripts/make_swe_fixtures.py`, which
builds the repositories with fixed commit dates and authors, bundles them and writes every file here. Licence:
Apache-2.0, as the project (`pyproject.toml`); not an upstream copy, so no LICENSE file (docs/development.md).

Subset rule: whole (everything the script writes).

Schema source: SWE-bench's instance schema (`princeton-nlp/SWE-bench`: `instance_id, repo, base_commit, patch,
test_patch, problem_statement, hints_text, created_at, version, environment_setup_commit, FAIL_TO_PASS,
PASS_TO_PASS`, the test lists JSON-encoded) in `swebench.jsonl`, and SWE-fficiency's
(`swefficiency/swefficiency`: the same plus `workload`, `covering_tests`, `speedup`, `single_thread_tests`,
`notes`) in `swefficiency.jsonl`. `specs.json` holds their install recipes in SWE-bench's recipe keys plus this
project's `log_parser` and `harness_packages` (pytest is copied from the harness's environment, so the
environments build with no network).

| repository | what it is | instances |
|---|---|---|
| `jeval-fixtures/textkit` | `slugify`, `truncate`, `wrap_words`; no install step | swebench `-1`, `-2` |
| `jeval-fixtures/ledger` | money amounts; `setup.py`, installed with `pip install -e .` | swebench `-1` |
| `jeval-fixtures/routegraph` | a graph: BFS paths, components, edge list | swebench `-1`; swefficiency `-2`, `-3` |

The bugs: textkit-1, separators repeated and left at the ends by `slugify`; textkit-2, `truncate` longer than
its width; ledger-1, `parse_amount` refusing `$1,212.50` and `(12.00)`; routegraph-1, `components` dropping
isolated nodes. The slow paths: routegraph-2, a breadth-first search scanning lists for its queue and visited
nodes; routegraph-3, an edge list checking each edge against the whole list.

Each bundle holds commits after every instance's base commit (the fixes, later work), which a checkout
must not show. `patches/` holds patches the tests submit besides the gold ones: a partial fix and a wrong fix
of textkit-1, one that edits its tests, and a fast shortest path that returns the path reversed
(routegraph-2).

| file | bytes | sha256 |
|---|---|---|
"""


def write_readme() -> None:
    rows = []
    for path in sorted(p for p in OUT.rglob("*") if p.is_file() and p.name != "README.md"):
        data = path.read_bytes()
        rows.append(f"| `{path.relative_to(OUT).as_posix()}` | {len(data)} | {hashlib.sha256(data).hexdigest()} |")
    (OUT / "README.md").write_text(README_HEAD + "\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
