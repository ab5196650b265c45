"""browser_assistant: web research with fact verification over a bundled, offline set of web pages.

Synthetic, shipped as ``data/``: ``pages/*.html`` (22 pages written for
this set on eight invented topics: official pages, news, blogs, a forum, an archived copy,
a page with a correction; several are outdated or contradict another, so a claim has to be
checked against the most recent authoritative page) and ``questions.jsonl`` (32 questions:
12 look-ups, 14 verifications where a distractor page gives an older or wrong value, 4
multi-hop that combine two pages or compute from them, 2 whose answer no page states).
Schema: ``id``, ``subject`` (lookup | verification | multi-hop | unanswerable),
``question``, ``answer``, ``aliases`` (accepted answers; empty when unanswerable),
``answerable``, ``support`` (the page ids that state the answer), ``contradicted_by`` (pages
that give a wrong or outdated answer) and ``candidates`` (the pages shown in direct mode:
the support, the contradicting pages and unrelated pages of the same topic, in a fixed
order). With ``data_files`` of your own, put a ``pages/`` folder next to the questions file.

Pages are turned into text by :func:`~pytest_jeval.benchmarks.browser_assistant.pages.html_to_text`
(title, headings, paragraphs, list items and table rows; scripts, styles, navigation and
footers dropped), and shown with their id, URL, site and date.

* **direct** (default): the candidate pages are in the prompt.
* **agent** (``backend = "agent"``): the prompt has only the question; the model calls
  ``search_pages(query)`` (the five best keyword matches over the whole bundle: id, title,
  URL, date, a snippet) and ``fetch_page(page)`` (one page's text, by id or URL).
* **agent with a browser** (``backend = "agent"``, ``[benchmarks.options] agent_tools = "browser"``):
  the bundle is served on 127.0.0.1 for each episode (:mod:`.site`: a search page giving the same
  five matches, each page's own HTML under ``/pages/<id>`` with a banner naming its id, URL, site
  and date) and the model has the ``browser_*`` tools (docs/web.md), confined to that site. The
  browser starts on the search page. The pages the site served are the pages fetched.

The model answers ``ANSWER: ...`` and ``SOURCES: <page ids>``. Scoring, as ``doc_qa``:

* answer (1/0): normalised match with an alias (``doc_qa.answer_matches``: equal, or
  contained in an answer of at most 12 tokens); for an unanswerable question the answer
  must say it is not stated.
* citation: F1 of the cited page ids (ids or URLs of bundle pages on the SOURCES line,
  else anywhere in the reply) against ``support``; for an unanswerable question 1.0 when
  nothing is cited.
* ``score = 0.6 * answer + 0.4 * citation``; ``is_correct`` iff ``score >= 0.75``. A reply
  with no text is unscored. ``scoring_metadata`` also records whether a contradicting page
  was cited and, in agent mode, the pages fetched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.agents import AgentSpec, Tool, ToolContext, ToolError, tool
from pytest_jeval.agents.tools.browser import BROWSER_TOOLS, BrowserConfig
from pytest_jeval.benchmarks._citations import set_f1
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score, labelled_field, summarize_composite
from pytest_jeval.benchmarks._web.env import WebEnv, close_env, open_env
from pytest_jeval.benchmarks._web.tasks import require_browser
from pytest_jeval.benchmarks.bench_doc_qa import answer_correct
from pytest_jeval.benchmarks.browser_assistant import site
from pytest_jeval.benchmarks.browser_assistant.pages import PageStore, store_for
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import answer_of, register_scorer

WEIGHTS = {"answer": 0.6, "citation": 0.4}
THRESHOLD = 0.75
BUNDLED_PAGES = Path(__file__).resolve().parent / "data" / "pages"
#: Characters of a page's text in a search result.
SNIPPET_CHARS = 160
SOURCE_LABELS = ("SOURCES", "SOURCE", "CITATIONS", "CITATION", "REFERENCES", "PAGES")

INSTRUCTIONS = """Some pages may be outdated, unreliable or contradict each other: check each claim against the most recent authoritative page before you answer.

Reply in exactly this format:
ANSWER: <a short answer, or "not stated" if no page gives the answer>
SOURCES: <the ids of the pages that support the answer, comma-separated; leave it empty if none>"""  # noqa: E501

DIRECT = """Answer the question using only the web pages below.

Question: {question}

{pages}

{instructions}"""

AGENT = """Answer the question by researching an offline collection of web pages. Use search_pages to find pages and fetch_page to read them; do not answer from memory.

Question: {question}

{instructions}"""  # noqa: E501

BROWSER_SYSTEM = """You are a research assistant operating a real web browser over an offline collection of web pages. Each browser tool returns the page after the action: its URL, its title and its accessibility tree, one element per line as [number] role "name"; name an element by that number or by a selector such as role=link[name="Search"]. Only the collection's site can be reached. Do not answer from memory."""  # noqa: E501

BROWSER_AGENT = """Answer the question by researching the collection in the browser. It is open on the collection's search page: search by keywords, open the pages of the results and read them. Each page shows its page id at the top.

Question: {question}

{instructions}"""  # noqa: E501


class Options(BaseModel):
    """``[benchmarks.options]`` of browser_assistant (they apply to ``backend = "agent"``)."""

    model_config = ConfigDict(extra="forbid")

    agent_tools: Literal["pages", "browser"] = "pages"
    """``pages``: the ``search_pages`` and ``fetch_page`` tools; ``browser``: the ``browser_*`` tools over the
    bundle served on 127.0.0.1 (needs Playwright and Chromium, docs/web.md)."""
    action_timeout: float = Field(10.0, gt=0)
    """Seconds a browser action waits for its element (``browser``)."""
    navigation_timeout: float = Field(15.0, gt=0)
    """Seconds a browser action waits for the page to load (``browser``)."""


def pages_dir(ctx: LoadContext) -> Path:
    """``pages/`` next to the questions file when there is one, else the bundled pages."""
    if ctx.data_dir is not None and (Path(ctx.data_dir) / "pages").is_dir():
        return (Path(ctx.data_dir) / "pages").resolve()
    return BUNDLED_PAGES


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question, checked against the page store (every page it names must exist)."""
    directory = pages_dir(ctx)
    store = store_for(str(directory))
    named = [*row["support"], *row["contradicted_by"], *row["candidates"]]
    missing = [p for p in named if p not in store.pages]
    if missing:
        raise ValueError(f"{row['id']}: pages {missing} are not in {directory}")
    if not set(row["support"]) <= set(row["candidates"]):
        raise ValueError(f"{row['id']}: every support page must be a candidate")
    if bool(row["aliases"]) != bool(row["answerable"]) or bool(row["support"]) != bool(row["answerable"]):
        raise ValueError(f"{row['id']}: an answerable question needs aliases and support, an unanswerable one neither")
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    if options.agent_tools == "browser":
        require_browser(ctx.benchmark)
    return Sample(
        id=row["id"],
        input=row["question"],
        target=row["answer"],
        subject=row["subject"],
        metadata={
            "aliases": list(row["aliases"]),
            "answerable": bool(row["answerable"]),
            "support": list(row["support"]),
            "contradicted_by": list(row["contradicted_by"]),
            "candidates": list(row["candidates"]),
            "pages_dir": str(directory),
            "agent_tools": options.agent_tools,
            "action_timeout": options.action_timeout,
            "navigation_timeout": options.navigation_timeout,
        },
    )


def _store(sample: Sample) -> PageStore:
    return store_for(sample.metadata["pages_dir"])


def prompt(sample: Sample) -> str:
    """The question, then every candidate page as text (direct mode)."""
    store = _store(sample)
    pages = "\n\n".join(f"=== page {i} ===\n{store.pages[pid].render()}"
                        for i, pid in enumerate(sample.metadata["candidates"], 1))
    return DIRECT.format(question=sample.input, pages=pages, instructions=INSTRUCTIONS)


def _browser_mode(sample: Sample) -> bool:
    return sample.metadata.get("agent_tools") == "browser"


def agent_prompt(sample: Sample) -> str | Messages:
    """The question and the answer format; the pages come through the tools (in browser mode, with a system
    prompt on the browser's observations)."""
    if _browser_mode(sample):
        return [{"role": "system", "content": BROWSER_SYSTEM},
                {"role": "user", "content": BROWSER_AGENT.format(question=sample.input, instructions=INSTRUCTIONS)}]
    return AGENT.format(question=sample.input, instructions=INSTRUCTIONS)


def agent_tools(sample: Sample) -> list[Tool]:
    """``search_pages`` and ``fetch_page``, or the browser tools (``agent_tools = "browser"``)."""
    return list(BROWSER_TOOLS) if _browser_mode(sample) else [search_pages, fetch_page]


def environment(sample: Sample, workspace: Path) -> PageStore | WebEnv:
    """The page store; in browser mode a fresh local site over the same pages and a browser confined to it,
    open on the search page."""
    if not _browser_mode(sample):
        return _store(sample)
    directory = sample.metadata["pages_dir"]
    browser = BrowserConfig(allowed_origins=(), action_timeout=sample.metadata["action_timeout"],
                            navigation_timeout=sample.metadata["navigation_timeout"])
    return open_env(apps={"pages": lambda: site.make_app(directory)}, sites={}, site_apps={"PAGES": ("pages", "")},
                    start_url="__PAGES__/", config=browser)


# --------------------------------------------------------------------------- agent tools


@tool(parallel_safe=True)
def search_pages(query: str, ctx: ToolContext) -> list[dict[str, str]]:
    """Search the page collection by keywords; returns up to five pages (id, title, url, date, snippet).

    Args:
        query: Keywords, e.g. "Kelvara bridge toll".
    """
    store: PageStore = ctx.state
    found = store.search(query)
    if not found:
        raise ToolError(f"no page matches {query!r}")
    return [{"id": p.id, "title": p.title, "url": p.url, "date": p.date, "snippet": p.text[:SNIPPET_CHARS]}
            for p in found]


@tool(parallel_safe=True)
def fetch_page(page: str, ctx: ToolContext) -> str:
    """Fetch one page's text by its id or URL.

    Args:
        page: A page id from search_pages (e.g. "kelvara-bridge-authority") or the page's URL.
    """
    store: PageStore = ctx.state
    found = store.get(page)
    if found is None:
        raise ToolError(f"no page {page!r}; use an id or URL returned by search_pages")
    return found.render()


# --------------------------------------------------------------------------- scoring


def cited_pages(text: str, store: PageStore) -> list[str]:
    """Ids of the bundle pages named (by id or URL) in ``text``, in page-id order."""
    low = text.lower()
    out = []
    for pid, page in store.pages.items():
        by_id = re.search(rf"(?<![a-z0-9-]){re.escape(pid)}(?![a-z0-9-])", low) is not None
        if by_id or (page.url and page.url.lower().rstrip("/") in low):
            out.append(pid)
    return out


def parse_reply(reply: str, store: PageStore) -> tuple[str, list[str]]:
    """``(answer text, cited page ids)``: the ANSWER and SOURCES lines (else the first line and every id)."""
    text = strip_reasoning(reply)
    answer = labelled_field(text, "ANSWER", "FINAL ANSWER")
    sources = labelled_field(text, *SOURCE_LABELS)
    if answer is None:
        answer = next((line.strip() for line in text.split("\n") if line.strip()), "")
    cited = cited_pages(sources if sources is not None else text, store)
    for pid in cited:  # an id repeated on the answer line is not part of the answer
        answer = re.sub(rf"[\[(]?{re.escape(pid)}[\])]?", " ", answer, flags=re.I)
    return " ".join(answer.split()), cited


def score_browser(reply: str, sample: Sample, fetched: list[str] | None = None) -> Score:
    """Composite of the answer (0.6) and the citation F1 (0.4); correct iff >= 0.75."""
    m = sample.metadata
    if not strip_reasoning(reply).strip():
        return Score.unscorable("empty reply", expected=sample.target)
    answer, cited = parse_reply(reply, _store(sample))
    ok = answer_correct(answer, m)
    citation = set_f1(set(cited), set(m["support"]))
    meta: dict[str, Any] = {"answer": answer[:300], "cited": cited, "gold_support": m["support"],
                            "cited_contradicting": sorted(set(cited) & set(m["contradicted_by"])),
                            "answerable": m["answerable"]}
    if fetched is not None:
        meta["fetched"] = fetched
        meta["cited_unfetched"] = sorted(set(cited) - set(fetched))
    return composite_score({"answer": 1.0 if ok else 0.0, "citation": citation}, WEIGHTS, THRESHOLD,
                           extracted=f"{answer[:80]} {cited}", expected=f"{sample.target} {m['support']}",
                           metadata=meta)


BENCHMARK = Benchmark(
    name="browser_assistant",
    category="use-case",
    description="Web research with fact verification over a bundled offline page set (given, or fetched by tools)",
    bundled_files=("data/questions.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="browser_assistant",
    scoring="composite: 0.6 normalised answer match + 0.4 cited-page F1; correct >= 0.75",
    sample_count=32,
    summarize_extra=summarize_composite,
    backends=("direct", "agent"),
    options=Options,
    agent=AgentSpec(tools=agent_tools, environment=environment, prompt=agent_prompt, cleanup=close_env),
)


def _fetched(request: pytest.FixtureRequest) -> list[str] | None:
    """The page ids the agent fetched (None in direct mode)."""
    from pytest_jeval.session.collect import plan_key

    plan = request.config.stash.get(plan_key, None)
    name = BENCHMARK.name
    if plan is None or name not in plan.benchmarks or not plan.benchmarks[name].is_agent:
        return None
    episode = request.getfixturevalue("episode")
    if isinstance(episode.state, WebEnv):  # browser mode: the pages the local site served
        return sorted(set(episode.state.apps["pages"].state.db.pages))
    refs = [str((c.parsed or {}).get("page", "")) for c in episode.calls("fetch_page") if c.error is None]
    store = _store(request.getfixturevalue("sample"))
    return sorted({p.id for ref in refs if (p := store.get(ref)) is not None})


def test_browser_assistant(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_browser(response.text if response is not None else "", sample, _fetched(request)))


@register_scorer("browser_assistant", needs_sample=True)
def record_browser_assistant(record: dict[str, Any], sample: Sample) -> Score:
    """browser_assistant: answer match and cited-page F1."""

    result: Score = score_browser(answer_of(record), sample)
    return result
