"""webchorearena: WebChoreArena's evaluator rules case by case, the bundled configs, and a wrong final state on
the real local sites scoring 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents.tools.browser import BrowserSession
from pytest_jeval.benchmarks.webchorearena import evaluators as ev
from pytest_jeval.benchmarks.webchorearena.bench_webchorearena import BENCHMARK, environment, score_episode
from pytest_jeval.benchmarks.webchorearena.tasks import Options, read_rows, to_sample
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.chat import Reply
from pytest_jeval.core.episode import Episode
from tests.support.web import require_browser

DATA = Path(ev.__file__).parent / "data" / "local.raw.json"


def config(**eval_: Any) -> dict[str, Any]:
    return {"task_id": 1, "intent": "q", "start_url": "http://s", "eval": eval_}


@pytest.mark.parametrize(("ref", "pred", "expected"), [
    ("8", "8", 1.0), ("8", '"8"', 1.0), ("Eight", "eight ", 1.0), ("8", "8.", 0.0), ("'a'", "A", 1.0),
])
def test_exact_match_cleans_quotes_case_and_spaces(ref: str, pred: str, expected: float) -> None:
    assert ev.exact_match(ref, pred) == expected


def test_must_include_gives_partial_credit_and_alternatives() -> None:
    c = config(eval_types=["string_match"], reference_answers={"must_include": ["tops: 4", "bottoms: 2"]})
    assert ev.string_match(c, "Tops: 4, bottoms: 3").score == 0.5  # WebChoreArena: the mean, not the product
    assert ev.string_match(c, "tops: 4 and bottoms: 2").score == 1.0
    alt = config(eval_types=["string_match"], reference_answers={"must_include": ["$2,959.63 |OR| $2959.63"]})
    assert ev.string_match(alt, "It is $2959.63").score == 1.0  # the reference is lower-cased first: ' |or| ' splits
    assert ev.string_match(alt, "It is $2,959.6").score == 0.0
    lower = config(eval_types=["string_match"], reference_answers={"must_include": ["a1 |or| b2"]})
    assert ev.string_match(lower, "B2").score == 1.0
    single = config(eval_types=["string_match"], reference_answers={"must_include": ["3"]})
    assert ev.string_match(single, "there are 3.") .score == 1.0 and ev.string_match(single, "there are 13").score == 0.0


def test_url_match_gold_in_pred_with_query_and_alternatives() -> None:
    c = config(eval_types=["url_match"], reference_url="http://h/admin/orders?status=processing&dir=desc",
               url_note="GOLD in PRED")
    assert ev.url_match(c, "http://h/admin/orders/?status=processing&dir=desc&p=2").score == 1.0
    assert ev.url_match(c, "http://h/admin/orders?status=complete&dir=desc").score == 0.0
    assert ev.url_match(c, "http://h/admin/orders/x?status=processing&dir=desc").score == 1.0  # a substring of the path
    either = config(eval_types=["url_match"], reference_url="http://h/a |OR| http://h/b", url_note="GOLD in PRED",
                    **{"or": [{"reference_url": "http://h/c"}]})
    assert [ev.url_match(either, f"http://h/{p}").score for p in "abcd"] == [1.0, 1.0, 1.0, 0.0]
    assert ev.reddit_get_post_url("http://f/f/movies/12/some-title?x=1") == "http://f/f/movies/12/"
    assert ev.reddit_get_post_url("http://f/forums") == "http://f/forums"


class FakePage(ev.PageReader):
    def __init__(self, pages: dict[str, str]) -> None:
        self.pages, self.at = pages, "http://f/f/movies/9/x"

    def url(self) -> str:
        return self.at

    def goto(self, url: str) -> None:
        self.at = url

    def evaluate(self, expression: str) -> Any:
        if "boom" in expression:
            raise RuntimeError("no element")
        return self.pages.get(self.at, "")

    def content(self) -> str:
        return "<p>Tom &amp; Jerry</p>"


def test_program_html_reads_targets_multiplies_and_takes_the_best_alternative() -> None:
    page = FakePage({"http://f/f/movies/9/": "Title A, Title B", "http://h/p": "enabled"})
    c = config(eval_types=["program_html"], program_html=[
        {"url": "func:reddit_get_post_url('__last_url__')", "locator": "document.querySelector('.x').outerText",
         "required_contents": {"must_include": ["title a", "Title C |OR| Title B"]}},
        {"url": "http://h/p", "locator": "document.boom", "required_contents": {"exact_match": "enabled"},
         "or": [{"url": "http://h/p", "locator": "document.x", "required_contents": {"exact_match": "enabled"}}]},
        {"url": "last", "locator": "", "required_contents": {"must_include": ["tom & jerry"]}},
    ])
    outcome = ev.program_html(c, page)
    assert outcome.score == 1.0 and [t["score"] for t in outcome.detail["targets"]] == [1.0, 0.0, 1.0, 1.0]
    c["eval"]["program_html"][0]["required_contents"]["must_include"].append("Title Z")
    assert ev.program_html(c, FakePage({"http://f/f/movies/9/": "Title A, Title B", "http://h/p": "enabled"})).score \
        == pytest.approx(2 / 3)


def test_the_bundled_configs_load_and_every_one_has_gold_steps() -> None:
    require_browser()
    ctx = LoadContext(benchmark="webchorearena", subset=None, seed=0, data_dir=None, options=Options())
    rows = list(read_rows([DATA], ctx))
    samples = [to_sample(r, i, ctx) for i, r in enumerate(rows)]
    assert len(samples) == BENCHMARK.sample_count == len(json.loads(DATA.read_text()))
    kinds = {k for s in samples for k in s.metadata["config"]["eval"]["eval_types"]}
    assert kinds == set(ev.EVAL_TYPES)
    assert all(s.metadata["config"]["jeval_oracle"] for s in samples)
    with pytest.raises(Exception, match="needs the WebArena site"):
        to_sample({"config": {**rows[0]["config"], "sites": ["gitlab"]}, "file": "x.json"}, 0, ctx)


def test_a_wrong_final_state_scores_zero() -> None:
    """Disabling every Kitchen product (not only those out of stock) fails the bulk-edit task."""
    require_browser()
    ctx = LoadContext(benchmark="webchorearena", subset=None, seed=0, data_dir=None, options=Options())
    rows = {r["config"]["task_id"]: r for r in read_rows([DATA], ctx)}
    sample = to_sample(rows[90006], 0, ctx)
    env = environment(sample, Path("/nonexistent"))
    try:
        browser = env.browser
        assert isinstance(browser, BrowserSession)
        admin = env.sites["SHOPPING_ADMIN"]
        for sku in ("SKU-1001", "SKU-1002", "SKU-1003", "SKU-1005"):  # SKU-1003 is in stock: it must stay enabled
            browser.service.call(lambda sku=sku: browser.navigate(f"{admin}/products/{sku}/edit"), 60)
            browser.service.call(lambda: browser.select("#status", "disabled"), 60)
            browser.service.call(lambda: browser.click('role=button[name="Save"]'), 60)
        episode = Episode(replies=[Reply(text="Done.", model="m")], state=env, stop_reason="final")
        result = score_episode(sample, episode)
        assert result.correct is False and result.value == 0.0
        targets = result.metadata["eval"]["program_html"]["targets"]
        assert [t["score"] for t in targets] == [1.0, 1.0, 1.0, 0.0, 1.0]
        state = env.export_state()["shop"]["product"]
        assert sum(p["status"] == "disabled" for p in state) == 4
    finally:
        env.close()


def test_rescore_reads_the_answer_again_and_keeps_program_html_as_stored() -> None:
    from pytest_jeval.scoring.registry import call_scorer

    rows = list(read_rows([DATA], LoadContext(benchmark="webchorearena", subset=None, seed=0, data_dir=DATA.parent,
                                              options=Options())))
    samples = {s.id: s for s in (to_sample(r, i, LoadContext(benchmark="webchorearena", subset=None, seed=0,
                                                               data_dir=None, options=Options()))
                                 for i, r in enumerate(rows)) if s is not None}
    exact = next(s for s in samples.values() if s.metadata["config"]["eval"]["eval_types"] == ["string_match"]
                 and "exact_match" in s.metadata["config"]["eval"]["reference_answers"])
    gold = exact.metadata["config"]["eval"]["reference_answers"]["exact_match"]
    record = {"record_id": exact.id, "model_answer": str(gold), "scoring_metadata": {"stop_reason": "final"}}
    assert call_scorer("webchorearena", record, sample=exact).correct is True
    assert call_scorer("webchorearena", {**record, "model_answer": f"{gold}0"}, sample=exact).correct is False
    html = next(s for s in samples.values() if s.metadata["config"]["eval"]["eval_types"] == ["program_html"])
    stored = {"record_id": html.id, "model_answer": "", "scoring_metadata": {
        "stop_reason": "final", "eval": {"program_html": {"score": 1.0}}}}
    assert call_scorer("webchorearena", stored, sample=html).correct is True  # the pages are gone: the stored score
    assert call_scorer("webchorearena", {**stored, "scoring_metadata": {"stop_reason": "max_turns"}},
                       sample=html).correct is False
