"""BFCL: spec conversion, loading (data_files, an installed package, no package) and scoring of hand-built episodes.

The data is tests/data/bfcl_synth (BFCL's schema and layout, written for these tests), loaded
through the benchmark's real loading path, ``load_samples``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents import Episode
from pytest_jeval.benchmarks import bench_bfcl
from pytest_jeval.cli import main
from pytest_jeval.core.chat import Reply, ToolCall
from pytest_jeval.core.sample import Sample
from pytest_jeval.scoring.registry import call_scorer
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.bench import MODEL, Project, Router
from tests.support.gsm import outcome_ids

SYNTH = Path(__file__).resolve().parents[1] / "data" / "bfcl_synth" / "data"
STEMS = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
FILES = [SYNTH / f"BFCL_v4_{s}.json" for s in STEMS]
BENCH = bench_bfcl.BENCHMARK


def samples(files: list[Path] = FILES, subset: str | None = None) -> dict[str, Sample]:
    loaded, _ = load_samples(BENCH, files=files, subset=subset)
    return {s.id: s for s in loaded}


def episode(*calls: tuple[str, Any], text: str = "") -> Episode:
    """An episode whose one reply makes ``calls`` (name, arguments as a dict or raw text)."""
    tool_calls = tuple(ToolCall(id=f"call_{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args))
                       for i, (name, args) in enumerate(calls))
    return Episode(replies=[Reply(text=text, model="m", tool_calls=tool_calls)], turns=1)


# -- spec conversion ----------------------------------------------------------------------

def test_bfcl_types_and_names_become_openai_specs() -> None:
    function = {
        "name": "geo.route.plan", "description": "Plan a route.",
        "parameters": {"type": "dict", "required": ["stops"], "properties": {
            "stops": {"type": "array", "items": {"type": "tuple", "items": {"type": "float"}}},
            "options": {"type": "dict", "properties": {"avoid": {"type": "any"}, "speed": {"type": "float"}}},
            "label": {"description": "no type given"},
            "mode": {"type": "string", "enum": ["car", "bike"], "optional": True, "default": "car"},
        }},
    }
    before = json.dumps(function)
    spec = bench_bfcl.openai_function(function)
    assert json.dumps(function) == before  # the BFCL doc is not changed (it is the scoring spec)
    assert spec["name"] == "geo_route_plan" and spec["description"] == "Plan a route."
    params = spec["parameters"]
    assert params["type"] == "object" and params["required"] == ["stops"]
    props = params["properties"]
    assert props["stops"] == {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    assert props["options"]["type"] == "object"
    assert props["options"]["properties"] == {"avoid": {"type": "string"}, "speed": {"type": "number"}}
    assert props["label"] == {"description": "no type given", "type": "string"}
    assert props["mode"] == {"type": "string", "enum": ["car", "bike"], "optional": True, "default": "car"}


def test_names_that_collide_or_the_api_refuses_are_load_errors() -> None:
    doc = {"parameters": {"type": "dict", "properties": {}}}
    with pytest.raises(ValueError, match="both sent as 'a_b'"):
        bench_bfcl.openai_functions([{**doc, "name": "a.b"}, {**doc, "name": "a_b"}])
    with pytest.raises(ValueError, match="must match"):
        bench_bfcl.openai_function({**doc, "name": "get weather"})
    specs, names = bench_bfcl.openai_functions([{**doc, "name": "math.gcd"}, {**doc, "name": "lcm"}])
    assert names == {"math_gcd": "math.gcd", "lcm": "lcm"} and [s["name"] for s in specs] == ["math_gcd", "lcm"]


# -- loading ------------------------------------------------------------------------------

def test_data_files_load_with_their_possible_answers() -> None:
    by_id = samples()
    assert len(by_id) == 10
    assert {s.subject for s in by_id.values()} == set(bench_bfcl.CATEGORIES)
    simple = by_id["simple_python_0"]
    assert simple.subject == "simple" and "Paris" in simple.input
    assert simple.target == [{"weather.get_current": {"city": ["Paris", "Paris, France"], "unit": ["celsius", ""]}}]
    assert bench_bfcl.prompt(simple) == [{"role": "user", "content": simple.input}]
    tools = bench_bfcl.tools(simple)
    assert [t.name for t in tools] == ["weather_get_current"] and all(t.fn is None for t in tools)  # spec-only
    assert tools[0].spec()["function"]["parameters"]["type"] == "object"
    assert by_id["irrelevance_0"].target == []
    assert by_id["parallel_multiple_1"].metadata["names"] == {"calendar_create_event": "calendar.create_event",
                                                            "reminders_set": "reminders.set"}
    assert BENCH.agent is not None and BENCH.agent.execute is False and BENCH.backends == ("agent",)


def test_subset_picks_categories() -> None:
    loaded, skipped = load_samples(BENCH, files=FILES, subset="parallel, irrelevance")
    assert sorted(s.id for s in loaded) == ["irrelevance_0", "irrelevance_1", "parallel_0", "parallel_1"]
    assert skipped == 6
    with pytest.raises(DatasetLoadError, match=r"unknown subset 'live_simple'.*simple, multiple, parallel"):
        load_samples(BENCH, files=FILES, subset="simple,live_simple")


def test_a_question_file_without_its_gold_is_a_load_error(tmp_path: Path) -> None:
    shutil.copy(SYNTH / "BFCL_v4_parallel.json", tmp_path / "mine.json")
    shutil.copy(SYNTH / "BFCL_v4_irrelevance.json", tmp_path / "irr.json")
    with pytest.raises(DatasetLoadError, match=r"needs its gold in .*possible_answer/mine\.json"):
        load_samples(BENCH, files=[tmp_path / "mine.json"])
    loaded, _ = load_samples(BENCH, files=[tmp_path / "irr.json"])  # irrelevance needs no gold
    assert len(loaded) == 2
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "possible_answer" / "mine.json").write_text('{"id": "parallel_0", "ground_truth": '
                                                             '[{"stock.get_price": {"ticker": ["AAPL"]}}]}\n')
    with pytest.raises(DatasetLoadError, match=r"'parallel_1' .* has no ground_truth"):
        load_samples(BENCH, files=[tmp_path / "mine.json"])


def test_rows_outside_the_five_categories_are_refused(tmp_path: Path) -> None:
    row = json.loads((SYNTH / "BFCL_v4_irrelevance.json").read_text().splitlines()[0])
    (tmp_path / "q.json").write_text(json.dumps({**row, "id": "live_simple_3-1-0"}) + "\n")
    with pytest.raises(DatasetLoadError, match="'live_simple_3-1-0' is not in one of the categories"):
        load_samples(BENCH, files=[tmp_path / "q.json"])
    (tmp_path / "q.json").write_text("not json\n")
    with pytest.raises(DatasetLoadError, match="is not BFCL JSON Lines"):
        load_samples(BENCH, files=[tmp_path / "q.json"])


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed ``bfcl_eval`` laid out like the wheel (``bfcl_eval/data/...``), first on sys.path."""
    root = tmp_path / "site"
    (root / "bfcl_eval").mkdir(parents=True)
    (root / "bfcl_eval" / "__init__.py").write_text("")
    shutil.copytree(SYNTH, root / "bfcl_eval" / "data")
    (root / "bfcl_eval" / "data" / "BFCL_v3_parallel.json").write_text("older version, never read\n")
    monkeypatch.delitem(sys.modules, "bfcl_eval", raising=False)
    monkeypatch.syspath_prepend(str(root))
    return root / "bfcl_eval" / "data"


def test_without_data_files_the_installed_package_is_read(fake_package: Path) -> None:
    loaded, skipped = load_samples(BENCH)
    assert len(loaded) == 10 and skipped == 0
    loaded, skipped = load_samples(BENCH, subset="parallel")
    assert [s.id for s in loaded] == ["parallel_0", "parallel_1"] and skipped == 0  # only its file is read
    (fake_package / "BFCL_v4_multiple.json").unlink()
    with pytest.raises(DatasetLoadError, match=r"no BFCL_v<N>_multiple\.json in .*pip install --no-deps bfcl-eval"):
        load_samples(BENCH)


def test_without_the_package_the_message_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # import bfcl_eval now fails, installed or not
    with pytest.raises(DatasetLoadError) as info:
        load_samples(BENCH)
    assert "`pip install --no-deps bfcl-eval`" in str(info.value) and "data_files" in str(info.value)
    assert len(load_samples(BENCH, files=FILES)[0]) == 10  # data_files never need the package


# -- scoring ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def by_id() -> dict[str, Sample]:
    return samples()


@pytest.mark.parametrize(("record", "calls"), [
    ("simple_python_0", [("weather_get_current", {"city": "paris, france"})]),  # optional unit omitted
    ("simple_python_0", [("weather_get_current", {"city": "Paris", "unit": "celsius"})]),
    ("simple_python_1", [("convert_distance", {"value": 12.5, "from_unit": "km", "to_unit": "Miles"})]),
    ("multiple_0", [("math_gcd", {"a": 48, "b": 18})]),
    ("multiple_1", [("hotel_search", {"city": "Rome", "nights": 3, "amenities": ["pool"]})]),
    ("parallel_0", [("stock_get_price", {"ticker": "AAPL"}), ("stock_get_price", {"ticker": "MSFT"})]),
    ("parallel_0", [("stock_get_price", {"ticker": "MSFT"}), ("stock_get_price", {"ticker": "AAPL"})]),
    ("parallel_1", [("geometry_circle_area", {"radius": 3.5}), ("geometry_circle_area", {"radius": 2})]),
    ("parallel_multiple_0", [("text_reverse", {"text": "jeval"}), ("math_add", {"a": 3, "b": 4})]),
    ("parallel_multiple_1", [("reminders_set", {"message": "standup soon", "minutes_before": 10}),
                             ("calendar_create_event", {"title": "Standup", "start": {"hour": 9, "minute": 30}})]),
    ("irrelevance_0", []),
])
def test_right_calls_score_correct(by_id: dict[str, Sample], record: str, calls: list[tuple[str, Any]]) -> None:
    sample = by_id[record]
    result = bench_bfcl.score_bfcl(sample, episode(*calls, text="" if calls else "Shakespeare."))
    assert result.correct is True, result.metadata
    assert result.metadata == {"category": sample.subject, "tool_calls": len(calls), "reason": None,
                               "bad_arguments": None}
    assert result.expected == sample.target
    assert [next(iter(c)) for c in result.extracted] == [sample.metadata["names"].get(n, n) for n, _ in calls]


@pytest.mark.parametrize(("record", "calls", "reason"), [
    ("simple_python_0", [("weather_get_current", {"city": "London"})], "unacceptable value for 'city'"),
    ("simple_python_0", [("weather_get_current", {"city": "Paris", "unit": "kelvin"})], "value for 'unit'"),
    ("simple_python_0", [("weather_get_current", {"city": "Paris", "when": "now"})], "unexpected parameter 'when'"),
    ("simple_python_0", [("weather_get_current", {"unit": "celsius"})], "missing required parameter 'city'"),
    ("simple_python_0", [("weather_get_current", '{"city": "Paris"')], "are not JSON"),
    ("simple_python_0", [("weather_get_current", '["Paris"]')], "not a JSON object"),
    ("simple_python_0", [], "0 calls, expected 1"),  # answered in text
    ("simple_python_1", [("convert_distance", {"value": "12.5", "from_unit": "km", "to_unit": "mi"})],
     "wrong type for 'value'"),
    ("multiple_0", [("math_lcm", {"a": 48, "b": 18})], "wrong function 'math.lcm'"),
    ("parallel_0", [("stock_get_price", {"ticker": "AAPL"})], "1 calls, expected 2"),
    ("parallel_0", [("stock_get_price", {"ticker": "AAPL"}), ("stock_get_price", {"ticker": "AAPL"})],
     "unacceptable value"),
    ("parallel_multiple_1", [("calendar_create_event", {"title": "Standup", "start": {"hour": 9}}),
                             ("reminders_set", {"message": "standup soon", "minutes_before": 10})],
     "unacceptable value for 'start'"),
    ("irrelevance_1", [("currency_convert", {"amount": 1, "source": "EUR", "target": "USD"})],
     "1 tool calls, expected none"),
])
def test_wrong_calls_score_wrong_with_the_reason(by_id: dict[str, Sample], record: str,
                                                 calls: list[tuple[str, Any]], reason: str) -> None:
    result = bench_bfcl.score_bfcl(by_id[record], episode(*calls))
    assert result.correct is False
    assert reason in str(result.metadata["reason"])


def test_an_episode_without_a_reply_is_no_call(by_id: dict[str, Sample]) -> None:
    assert bench_bfcl.score_bfcl(by_id["irrelevance_0"], Episode()).correct is True
    assert bench_bfcl.score_bfcl(by_id["parallel_0"], Episode()).correct is False


# -- end to end through the plugin --------------------------------------------------------

def _script() -> dict[str, list[Any]]:
    """What the scripted model answers to each synthetic question (by a substring of the question)."""
    call = ToolCallSpec
    return {
        "weather in Paris": [tool_answer(call("weather_get_current", {"city": "Paris"}))],
        "12.5 kilometres": [tool_answer(call("convert_distance", {"value": 12.5, "from_unit": "km",
                                                                   "to_unit": "yards"}))],  # wrong unit
        "greatest common divisor": [tool_answer(call("math_gcd", {"a": 48, "b": 18}))],
        "hotel in Rome": [tool_answer(call("hotel_search", '{"city": "Rome", "nights": 3'))],  # malformed
        "AAPL and MSFT": [tool_answer(call("stock_get_price", {"ticker": "MSFT"}),
                                      call("stock_get_price", {"ticker": "AAPL"}))],
        "radius 2 and 3.5": [tool_answer(call("geometry_circle_area", {"radius": 2}),
                                         call("geometry_circle_area", {"radius": 3.5, "units": "m"}))],
        "Add 3 and 4": [tool_answer(call("text_reverse", {"text": "jeval"}), call("math_add", {"a": 3, "b": 4}))],
        "Standup": [tool_answer(call("calendar_create_event", {"title": "Standup", "start": {"hour": 9, "minute": 30}}),
                                call("reminders_set", {"message": "standup soon", "minutes_before": 10}))],
        "Who wrote Hamlet": ["William Shakespeare."],
        "joke about cats": [tool_answer(call("currency_convert", {"amount": 1, "source": "EUR", "target": "USD"}))],
    }


def test_bfcl_runs_end_to_end_through_the_plugin(pytester: pytest.Pytester, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(script_responder(_script(), default="unscripted"), models=(MODEL,)) as server:
        project = Project(pytester, server, Router(lambda _: ""))
        suite = project.suite("bfcl", [str(f) for f in FILES], judge=False, extra='backend = "agent"')
        result = pytester.runpytest("--jeval-config", str(suite), "-rA")
        result.assert_outcomes(passed=7, failed=3)
        assert outcome_ids(result, "failed") == {"simple_python_1", "multiple_1", "irrelevance_1"}
        chats = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 10  # one turn per question: the calls are the answer, never run
    weather = next(b for b in chats if "weather in Paris" in b["messages"][0]["content"])
    assert weather["messages"] == [{"role": "user", "content": "What is the weather in Paris right now, in celsius?"}]
    assert [t["function"]["name"] for t in weather["tools"]] == ["weather_get_current"]
    assert weather["tools"][0]["function"]["parameters"]["properties"]["unit"]["type"] == "string"
    event = next(b for b in chats if "Standup" in b["messages"][0]["content"])
    assert event["tools"][0]["function"]["parameters"]["properties"]["start"]["type"] == "object"  # BFCL "dict"
    records = project.records("bfcl")
    assert records["parallel_0"]["is_correct"] is True and records["parallel_0"]["tool_calls"] == 2
    assert records["parallel_0"]["extracted"] == [{"stock.get_price": {"ticker": "MSFT"}},
                                                  {"stock.get_price": {"ticker": "AAPL"}}]
    assert records["parallel_0"]["agent"]["stop_reason"] == "final"
    assert records["simple_python_1"]["scoring_metadata"]["reason"].startswith("unacceptable value for 'to_unit'")
    assert records["multiple_1"]["scoring_metadata"]["bad_arguments"].startswith("arguments of 'hotel_search' are "
                                                                                 "not JSON")
    summary = project.summary("bfcl")
    assert summary["accuracy"] == pytest.approx(0.7)
    assert {k: v["accuracy"] for k, v in summary["per_subject"].items()} == {
        "simple": 0.5, "multiple": 0.5, "parallel": 1.0, "parallel_multiple": 1.0, "irrelevance": 0.5}
    # jeval rescore scores the stored calls again, with the same verdicts, byte for byte
    source = pytester.path / "out" / f"bfcl_{MODEL}.jsonl"
    target = tmp_path / source.name
    capsys.readouterr()
    assert main(["rescore", str(source), "-o", str(target), "--data", *map(str, FILES)]) == 0
    out = capsys.readouterr().out
    assert "0 verdicts changed" in out and "summary fields changed: none" in out, out
    assert target.read_bytes() == source.read_bytes()
    record = records["multiple_1"]
    assert call_scorer("bfcl", {**record, "scoring_metadata": {}}, sample=samples()["multiple_1"]).metadata[
        "reason"] == "missing required parameter 'city'"  # without the stored bad_arguments, {} is scored


def test_bfcl_without_the_package_is_a_usage_error_before_any_request(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)
    with FakeOpenAIServer(script_responder({}, default="x"), models=(MODEL,)) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(f'[run]\noutput_dir = "out"\n\n[[models]]\nname = "{MODEL}"\n'
                         f'base_url = "{server.base_url}"\napi_key = "x"\n\n[[benchmarks]]\nname = "bfcl"\n')
        result = pytester.runpytest("--jeval-config", str(suite))
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*the BFCL data ships in the PyPI package bfcl-eval*"
                                     "`pip install --no-deps bfcl-eval`*"])
        assert server.requests == []
