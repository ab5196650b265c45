"""The documentation site: every page under docs/ is in mkdocs.yml's nav, and ``mkdocs build --strict`` passes.

The strict build also fails on a page left out of the nav and on a broken link or anchor (the
``validation`` block of mkdocs.yml); a build of a copy with one nav line removed and one broken
anchor shows that it does.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"

needs_mkdocs = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers")),
    reason="mkdocs, mkdocs-material or mkdocstrings[python] is not installed (pip install -e '.[docs]')",
)


class _ConfigLoader(yaml.SafeLoader):
    """A safe loader that reads mkdocs.yml's ``!!python/...`` tags (the slugify function) as None."""


_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def load_config(text: str) -> dict[str, Any]:
    """mkdocs.yml as data, its Python tags left unresolved."""
    data = yaml.load(text, Loader=_ConfigLoader)
    assert isinstance(data, dict)
    return data


def nav_pages(nav: Any) -> list[str]:
    """Every page path in a mkdocs nav (nested lists of ``{title: page or section}``)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for entry in nav for page in nav_pages(entry)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    raise AssertionError(f"unexpected nav entry {nav!r}")


def docs_pages() -> set[str]:
    """Every Markdown page under docs/, relative to it."""
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_every_docs_page_is_in_the_nav() -> None:
    pages = nav_pages(load_config(CONFIG.read_text(encoding="utf-8"))["nav"])
    on_disk = docs_pages()
    assert sorted(on_disk - set(pages)) == [], "pages under docs/ missing from mkdocs.yml's nav"
    assert sorted(set(pages) - on_disk) == [], "nav entries of mkdocs.yml with no page under docs/"
    assert len(pages) == len(set(pages)), "a page is listed twice in the nav"


def test_nav_check_sees_a_missing_page() -> None:
    text = CONFIG.read_text(encoding="utf-8")
    line = "      - Telemetry: telemetry.md\n"
    assert line in text
    pages = nav_pages(load_config(text.replace(line, ""))["nav"])
    assert docs_pages() - set(pages) == {"telemetry.md"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module by ``mkdocs build --strict``."""
    out = tmp_path_factory.mktemp("docs") / "site"
    done = build(CONFIG, out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def readme_doc_links(text: str) -> list[tuple[str, str]]:
    """``(page, anchor)`` of every README link into docs/ (anchor empty when there is none)."""
    return [(m[1], m[2] or "") for m in re.finditer(r"\]\(docs/([\w./-]+\.md)(?:#([^)\s]+))?\)", text)]


@pytest.mark.slow
@needs_mkdocs
def test_strict_build_passes(site: Path) -> None:
    assert (site / "index.html").is_file()
    api = (site / "api" / "benchmark" / "index.html").read_text(encoding="utf-8")
    # mkdocstrings rendered the docstrings, not an empty page
    assert 'id="pytest_jeval.core.benchmark.Benchmark"' in api
    assert "Turn one dataset row into a" in api


@needs_mkdocs
def test_readme_links_into_the_docs_resolve(site: Path) -> None:
    # the site's anchors are GitHub's (mkdocs.yml's slugify), so they are the README's on GitHub too
    links = readme_doc_links((ROOT / "README.md").read_text(encoding="utf-8"))
    assert ("index.md", "") in links, "the README links docs/index.md"
    broken = []
    for page, anchor in links:
        html = site / page.removesuffix(".md") / "index.html" if page != "index.md" else site / "index.html"
        if not html.is_file() or (anchor and f'id="{anchor}"' not in html.read_text(encoding="utf-8")):
            broken.append(f"docs/{page}#{anchor}" if anchor else f"docs/{page}")
    assert broken == [], "README links to missing docs pages or anchors"


@pytest.mark.slow
@needs_mkdocs
def test_strict_build_fails_on_an_omitted_page_and_a_broken_anchor(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    text = CONFIG.read_text(encoding="utf-8")
    nav_line = "      - Telemetry: telemetry.md\n"
    assert nav_line in text and "paths: [.]" in text
    text = text.replace(nav_line, "").replace("paths: [.]", f"paths: [{ROOT.as_posix()!r}]")
    config = tmp_path / "mkdocs.yml"
    config.write_text(text, encoding="utf-8")
    index = docs / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n[gone](results.md#no-such-heading)\n", encoding="utf-8")
    done = build(config, tmp_path / "site")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    # warnings, which --strict turns into a failure (mkdocs's own default level for both is INFO)
    warnings = [m for m in re.split(r"\n(?=[A-Z]+ +- )", out) if m.startswith("WARNING")]
    assert any("telemetry.md" in w and "not included in the" in w for w in warnings), out
    assert any("no-such-heading" in w for w in warnings), out
