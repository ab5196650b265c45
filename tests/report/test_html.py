"""The HTML report, opened in a real headless Chromium (Debian's ``chromium`` package).

Chromium is driven over the DevTools protocol with ``aiohttp``'s websocket client
(aiohttp is already a dependency; no browser download, no extra driver). Each
check records the page's console errors, uncaught exceptions and network
requests, then counts SVG elements and types into the search box. One full-page
screenshot is kept as a CI artifact: ``$JEVAL_ARTIFACTS_DIR/report-screenshot.png``,
by default ``results/report-screenshot.png`` in the repository.

Only where chromium is not installed (``make test`` installs it) are these tests skipped.
"""

from __future__ import annotations

import base64
import math
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.report import load_result, write_report
from pytest_jeval.results.reader import judge_view
from pytest_jeval.results.summary import read_records
from pytest_jeval.scoring.metrics import confusion_matrix, reliability_bins
from tests.support.browser import SHOWN, VISIBLE_ROWS, Browser, Page, type_search
from tests.support.gsm import JevalProject
from tests.support.paths import REPO

DATA = Path(__file__).resolve().parents[1] / "data" / "results"
FIXTURES = [DATA / "quickstart_model-a.jsonl", DATA / "quickstart_model-b.jsonl", DATA / "halueval-judge_judge-a.jsonl"]


def artifact_dir() -> Path:
    return Path(os.environ.get("JEVAL_ARTIFACTS_DIR") or REPO / "results")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("Debian's chromium is not installed here (`make test` installs it: apt-get install chromium)")
    b = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


# -- what the page should show, computed from the fixtures independently of the report -----------

def expected_bars() -> int:
    """Per-subject bars: one per (subject, run) pair with records of that subject."""
    return sum(len({r["subject"] for r in read_records(p) if r.get("subject")}) for p in FIXTURES)


def judge_expectations() -> tuple[list[int], list[int]]:
    """Reliability bin counts (probability of being correct, 10 bins) and the gold x predicted counts."""
    records = read_records(FIXTURES[2])
    counts = [b["count"] for b in reliability_bins([r["probability"] for r in records],
                                                   [r["is_correct"] for r in records], n_bins=10)]
    matrix, _ = confusion_matrix([r["predicted"] for r in records], [r["gold"] for r in records], labels=[True, False])
    return counts, matrix.flatten().tolist()


DOM_PROBE = """(() => {
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  return {
    summaryRows: all('#summary-table tbody tr').length,
    bars: all('svg.bars rect.bar').length,
    barsBox: all('svg.bars').map(box),
    bins: all('svg.reliability g.bin').map(g => Number(g.querySelector('text.bin-count').textContent)),
    binData: all('svg.reliability g.bin').map(g => Number(g.getAttribute('data-count'))),
    cells: all('svg.heatmap rect.cell').map(c => Number(c.getAttribute('data-count'))),
    histograms: all('.distribution').map(d => ({
      field: d.getAttribute('data-field'),
      charts: Array.from(d.querySelectorAll('svg.histogram')).map(s => ({
        bins: s.querySelectorAll('rect.hist-bar').length,
        total: Array.from(s.querySelectorAll('rect.hist-bar')).reduce((n, r) => n + Number(r.getAttribute('data-count')), 0),
        box: box(s)}))})),
    sampleRows: all('#samples tbody tr').length,
    firstStatuses: all('#samples tbody tr').slice(0, 3).map(tr => tr.getAttribute('data-status')),
  };
})()"""

async def screenshot(page: Page, path: Path) -> None:
    height = await page.js("document.documentElement.scrollHeight")
    await page.send("Emulation.setDeviceMetricsOverride", width=1280, height=int(height), deviceScaleFactor=1,
                    mobile=False)
    shot = await page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


# -- tests --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(FIXTURES, tmp_path_factory.mktemp("report") / "report.html")


def test_report_is_self_contained(fixture_report: Path) -> None:
    html = fixture_report.read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?!#)""", html), "the report must not load anything"
    assert "default-src 'none'" in html  # and the CSP forbids loading anything at all
    assert "<script src" not in html and "@import" not in html


def test_report_renders_in_chromium(browser: Browser, fixture_report: Path) -> None:
    shot = artifact_dir() / "report-screenshot.png"

    async def scenario(page: Page) -> dict[str, Any]:
        dom = await page.js(DOM_PROBE)
        await screenshot(page, shot)
        return {"dom": dom, "problems": page.problems()}

    found = browser.inspect(fixture_report.as_uri(), scenario)
    assert found["problems"] == []
    dom = found["dom"]
    assert dom["summaryRows"] == 3
    assert dom["bars"] == expected_bars() == 6  # 3 subjects x 2 quickstart runs
    assert all(w > 300 and h > 50 for w, h in dom["barsBox"])  # laid out, not collapsed
    bin_counts, cells = judge_expectations()
    assert dom["bins"] == dom["binData"] == bin_counts and len(bin_counts) == 10 and sum(bin_counts) == 40
    assert dom["cells"] == cells and len(cells) == 4
    by_field = {h["field"]: h["charts"] for h in dom["histograms"]}
    assert set(by_field) == {"latency_seconds", "prompt_tokens", "completion_tokens", "energy_joules"}
    n_values = {"latency_seconds": [12, 11, 40], "prompt_tokens": [12, 11, 40], "completion_tokens": [12, 11, 40],
                "energy_joules": [12, 11]}  # B's errored record has no measurements; the judge no energy
    for field, charts in by_field.items():
        assert [c["total"] for c in charts] == n_values[field]
        bins = max(5, min(30, math.ceil(math.sqrt(max(n_values[field])))))
        assert all(c["bins"] == bins and c["box"][0] > 100 for c in charts)
    assert dom["sampleRows"] == 12 + 12 + 40
    assert dom["firstStatuses"] == ["wrong", "wrong", "wrong"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_search_box_filters_rows(browser: Browser, fixture_report: Path) -> None:
    async def scenario(page: Page) -> dict[str, Any]:
        out = {"atlantis": await type_search(page, "atlantis"),  # case-insensitive
               "two words": await type_search(page, "model-b capital"),
               "nothing": await type_search(page, "no row has this"),
               "cleared": await type_search(page, "")}
        await page.js("(() => { const s = document.getElementById('status-filter'); s.value = 'error';"
                      " s.dispatchEvent(new Event('change')); })()")
        out["errors"] = (await page.js(VISIBLE_ROWS), await page.js(SHOWN))
        out["problems"] = page.problems()
        return out

    found = browser.inspect(fixture_report.as_uri(), scenario)
    assert found.pop("problems") == []
    capital_b = sum(1 for r in read_records(FIXTURES[1]) if "capital" in (r["question"] or ""))
    assert found == {"atlantis": (2, 2), "two words": (capital_b, capital_b), "nothing": (0, 0),
                     "cleared": (64, 64), "errors": (1, 1)}


def test_pytest_option_writes_the_report(jeval_project: JevalProject, browser: Browser) -> None:
    p = jeval_project
    result = p.pytester.runpytest("--jeval-config", str(p.suite(bench_extra="min_accuracy = 0.5")),
                                  "--jeval-report", "reports/run.html")
    result.stdout.fnmatch_lines(["*jeval report: *reports*run.html*"])
    report = p.pytester.path / "reports" / "run.html"
    html = report.read_text()
    assert "gsm8k · test-model" in html and "PASS" in html  # the run and its gate

    async def scenario(page: Page) -> dict[str, Any]:
        return {"rows": await page.js("document.querySelectorAll('#samples tbody tr').length"),
                "statuses": await page.js("Array.from(document.querySelectorAll('#samples tbody tr'))"
                                          ".map(tr => tr.getAttribute('data-status'))"),
                "search": await type_search(page, "gsm8k-3"),
                "problems": page.problems()}

    found = browser.inspect(report.as_uri(), scenario)
    assert found["problems"] == []
    assert found["rows"] == 10
    assert found["statuses"] == ["wrong", "wrong", "unscored", "error"] + ["correct"] * 6
    assert found["search"] == (1, 1)


def test_no_report_without_results(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("--jeval-report", "r.html")
    result.stdout.fnmatch_lines(["*jeval report: not written (no results in this run)*"])
    assert not (pytester.path / "r.html").exists()


def test_judge_plots_without_the_judge_metrics_match_them() -> None:
    # the report draws the summary's reliability and confusion data; computed from the records
    # (when pytest_jeval.judge_bench provides no judge metrics) they must be the same
    with_metrics = load_result(FIXTURES[2])
    without = load_result(FIXTURES[2])
    without.__dict__["summary"] = {k: v for k, v in with_metrics.summary.items()
                                   if k not in ("reliability", "ece", "confusion_matrix")}
    a, b = judge_view(with_metrics), judge_view(without)
    assert a is not None and b is not None
    assert a.bins == b.bins and a.ece == pytest.approx(b.ece)
    assert (a.matrix, a.labels) == (b.matrix, b.labels)
    assert [n for row in a.matrix for n in row] == judge_expectations()[1] and a.labels == [True, False]
    assert judge_view(load_result(FIXTURES[0])) is None
