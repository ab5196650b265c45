"""deepplanning through the plugin: the oracle (the ground truth through the shopping tools) scores 1 on every
test case and nop 0; a model's cart with one wrong product, or one coupon short, scores 0; the agent is
asked once to check its cart; bad input is a usage error naming what is wrong."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "deepplanning"
CROSS = "Cross-store: ¥30 off every ¥300"


def run(pytester: pytest.Pytester, key: str = "", data_dir: str = str(DATA), options: str = "",
        base_url: str = "http://127.0.0.1:9/v1") -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        cache = false

        [[models]]
        name = "m"
        base_url = "{base_url}"

        [[benchmarks]]
        name = "deepplanning"
        data_dir = "{data_dir}"
        {key}
    """) + options)
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    path = pytester.path / "out" / "deepplanning_m.jsonl"
    records = {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())} if path.exists() else {}
    return result, records


def test_oracle_scores_one_on_every_case_and_nop_zero(pytester: pytest.Pytester) -> None:
    result, records = run(pytester, 'agent = "oracle"')
    assert result.ret == 0, result.stdout.str()
    assert len(records) == 4 and all(r["is_correct"] is True for r in records.values())
    summary = json.loads((pytester.path / "out" / "deepplanning_m.jsonl.summary.json").read_text())
    assert summary["shopping"]["average_case_score"] == 1.0 and summary["shopping"]["valid"] is True
    assert set(summary["levels"]) == {"level_1", "level_2", "level_3"}
    result, records = run(pytester, 'agent = "nop"')
    assert len(records) == 4 and all(r["is_correct"] is False for r in records.values())
    summary = json.loads((pytester.path / "out" / "deepplanning_m.jsonl.summary.json").read_text())
    assert summary["do_nothing_passes"] == 0


def add(product: str) -> Any:
    return tool_answer(ToolCallSpec("add_product_to_cart", {"product_id": product}))


def test_a_wrong_product_or_a_coupon_short_scores_zero(pytester: pytest.Pytester,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    scripts = {
        # level 1 case 1: the right sneakers; the model answers, is asked to check, and stops
        "Get me the cheapest one": [add("b2e1d3c2"), tool_answer(ToolCallSpec("get_cart_info", {})),
                                    "Your cart holds the Vans sneakers.", "The cart is complete."],
        # level 1 case 2: the polo, but the wrong shorts
        "cheapest Running Shorts": [add("d4c3f5a4"), add("f6a5b7e6"), "Done.", "Done."],
        # level 3: the right products, one coupon short
        "Use my coupons": [add("b2e1d3c2"), add("d4c3f5a4"),
                           tool_answer(ToolCallSpec("add_coupon_to_cart", {"coupon_name": CROSS, "quantity": 1})),
                           "Done.", "Done."],
        # level 2: the right cart, but it never stops calling tools (max_turns ends it mid-tool-call)
        "My budget is": [add("b8e7d9c8"), add("b2e1d3c2"), tool_answer(ToolCallSpec("get_cart_info", {}))],
    }
    with FakeOpenAIServer(script_responder(scripts)) as server:
        _, records = run(pytester, "max_turns = 5", base_url=server.base_url)
    assert records["level1-case_1"]["is_correct"] is True
    assert records["level1-case_2"]["is_correct"] is False
    assert records["level1-case_2"]["scoring_metadata"]["missing_products"] == ["a7f6c8d7"]
    assert records["level3-case_1"]["is_correct"] is False
    assert records["level3-case_1"]["scoring_metadata"]["used_coupons"] == [{"coupon_name": CROSS, "quantity": 1}]
    level2 = records["level2-case_1"]
    assert level2["is_correct"] is True and level2["scoring_metadata"]["completed"] is False
    summary = json.loads((pytester.path / "out" / "deepplanning_m.jsonl.summary.json").read_text())
    assert summary["levels"]["level_2"]["incomplete_rate"] == 1.0 and summary["levels"]["level_2"]["valid"] is False
    # after its first answer the agent was asked once to check the cart (upstream's second phase)
    bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    checked = [b for b in bodies if "Get me the cheapest one" in b["messages"][1]["content"]]
    assert checked[-1]["messages"][-1]["role"] == "user"
    assert checked[-1]["messages"][-1]["content"].startswith("Check whether the items in the cart")
    assert sum(m["role"] == "user" for m in checked[-1]["messages"]) == 2
    # jeval rescore gives the run's file again, from the records alone
    from pytest_jeval.cli import main

    source, target = pytester.path / "out" / "deepplanning_m.jsonl", pytester.path / "rescored.jsonl"
    capsys.readouterr()
    assert main(["rescore", str(source), "-o", str(target)]) == 0
    assert "0 verdicts changed" in capsys.readouterr().out
    assert target.read_bytes() == source.read_bytes()


@pytest.mark.parametrize(("data_dir", "options", "message"), [
    ("no-such-dir", "", "*benchmarks[[]0[]].data_dir: no such directory: *no-such-dir*"),
    (".", "", "*deepplanning: * holds neither database_level1/ nor database_level1.tar.gz*"),
    (str(DATA), '[benchmarks.options]\ndomain = "travel"\n', "*deepplanning: * holds neither database_en/ nor*"),
    (str(DATA), "[benchmarks.options]\nlevel = 1\n", "*options.level: unknown key; the options of 'deepplanning'*"),
])
def test_bad_input_is_a_usage_error(pytester: pytest.Pytester, data_dir: str, options: str, message: str) -> None:
    result, records = run(pytester, data_dir=data_dir, options=options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not records


def test_a_malformed_case_names_its_file(pytester: pytest.Pytester) -> None:
    import shutil

    copy = pytester.path / "copy"
    shutil.copytree(DATA, copy)
    (copy / "database_level3" / "case_1" / "user_info.json").write_text("{not json")
    result, _ = run(pytester, data_dir=str(copy))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*deepplanning: */database_level3/case_1/user_info.json is malformed*"])
