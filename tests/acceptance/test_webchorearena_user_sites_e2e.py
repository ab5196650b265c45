"""webchorearena against sites the user brings (``[benchmarks.options] sites``), through the plugin: the test
serves a shop and a forum instance of its own in place of the user's WebArena sites; the oracle's episodes run
on them (no local site is started), the evaluators score 1, and the bulk edit shows in the user's shop.

The user's sites are not reset between tasks (WebChoreArena asks the user to reset them before a run), so the
selected tasks do not change what the others read."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_jeval.benchmarks._web.host import start_app
from pytest_jeval.benchmarks.webchorearena.apps import forum, shop
from tests.support.web import require_browser

SUITE = """
    [run]
    output_dir = "out"
    tool_timeout = 300   # generous: the machine may be busy

    [[models]]
    name = "m"
    base_url = "http://127.0.0.1:9/v1"   # nothing listens: the oracle never calls the model

    [[benchmarks]]
    name = "webchorearena"
    agent = "oracle"
    [benchmarks.options]
    sites = {{ shopping = "{shop}", shopping_admin = "{shop}/admin", reddit = "{forum}" }}
    action_timeout = 120
    navigation_timeout = 120
"""
TASKS = ("task-90001", "task-90003", "task-90006")
"""A count (string_match), the page of a product (url_match) and a bulk edit (program_html)."""


@pytest.mark.slow
def test_the_oracle_runs_on_the_users_sites(pytester: pytest.Pytester) -> None:
    require_browser()
    user_shop, user_forum = start_app("shop", shop.make_app), start_app("forum", forum.make_app)
    try:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(shop=user_shop.base_url,
                                                                               forum=user_forum.base_url)))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider",
                                               "-k", " or ".join(TASKS))
        assert result.ret == 0, result.stdout.str()[-3000:]
        out = pytester.path / "out"
        records = [json.loads(line) for line in (out / "webchorearena_m.jsonl").read_text().splitlines()]
        assert sorted(r["record_id"] for r in records) == list(TASKS)
        assert all(r["is_correct"] is True and r["score"] == 1.0 for r in records)
        trajectories = [json.loads(line) for line in (out / "webchorearena_m.jsonl.trajectories.jsonl").read_text()
                        .splitlines()]
        urls = [c["details"]["url"] for t in trajectories for c in t["tool_calls"] if c.get("details")]
        assert urls and all(u.startswith(user_shop.base_url) for u in urls)  # every step on the user's shop
        products = {p["sku"]: p["status"] for p in user_shop.state.db.export()["product"]}
        assert [products[s] for s in ("SKU-1001", "SKU-1002", "SKU-1003", "SKU-1005")] == [
            "disabled", "disabled", "enabled", "disabled"]  # the bulk edit happened on the user's shop
    finally:
        user_shop.stop()
        user_forum.stop()
