"""toolcall15: the bundled scenarios, the mock tools, the rule scorer, and a run through the plugin.

Every scenario has a scripted play worth 2, one worth 1 and one worth 0 points. The plays
run in process against the scenario's mock world (the tools' real code) and, end to end,
as scripted tool calls from the strict OpenAI-compatible test server through the agent loop.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents import Episode, ToolCallRecord, ToolContext, ToolError
from pytest_jeval.benchmarks.toolcall15 import bench_toolcall15 as bench
from pytest_jeval.benchmarks.toolcall15.rules import contains_phrase, numbers_in, parse_check
from pytest_jeval.benchmarks.toolcall15.world import TOOLS, World
from pytest_jeval.core.chat import Reply, ToolCall
from pytest_jeval.core.sample import Sample
from pytest_jeval.scoring.registry import call_scorer
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer

Calls = list[tuple[str, dict[str, Any]]]
Play = list[Calls | str]
"""A scripted model: per turn either the tool calls it makes or its final answer."""

DATA = Path(bench.__file__).parent / "data" / "scenarios.jsonl"

EMAIL_Q1 = {"to": "dana.whitfield@example.com", "subject": "Q1 headline",
            "body": "Headline: revenue grew 12% year over year to $4.8M."}
MEETING = {"title": "Budget review", "date": "2026-05-19", "start_time": "14:30", "duration_minutes": 45,
           "attendees": ["priya.nair@example.com"]}
LUNCH = {"to": "li.wei@example.com", "subject": "Lunch", "body": "Lunch at noon tomorrow?"}

PLAYS: dict[str, dict[int, Play]] = {
    "ts-01-weather": {
        2: [[("get_weather", {"city": "Lisbon"})], "It's 21 °C and sunny in Lisbon."],
        1: [[("web_search", {"query": "Lisbon weather"})], [("get_weather", {"city": "Lisbon"})], "21°C, sunny."],
        0: [[("web_search", {"query": "weather in Lisbon now"})], "Around 17°C with showers."],
    },
    "ts-02-currency": {
        2: [[("get_exchange_rate", {"base": "USD", "quote": "EUR"})], "250 USD is 230.00 EUR today."],
        1: [[("convert_units", {"value": 250, "from_unit": "USD", "to_unit": "EUR"})],
            [("get_exchange_rate", {"base": "usd", "quote": "eur"})], "You get €230."],
        0: [[("convert_units", {"value": 250, "from_unit": "USD", "to_unit": "EUR"})], "I could not convert that."],
    },
    "ts-03-stock": {
        2: [[("get_stock_price", {"symbol": "NVDA"})], "NVIDIA (NVDA) trades at $131.38."],
        1: [[("get_stock_price", {"symbol": "NVIDIA"})], [("get_stock_price", {"symbol": "NVDA"})], "It is $131.38."],
        0: [[("web_search", {"query": "NVIDIA share price"})], "NVIDIA closed at $118.07."],
    },
    "pp-01-paris-texas": {
        2: [[("get_weather", {"city": "Paris, TX", "units": "fahrenheit"})], "It's 88°F and sunny in Paris, Texas."],
        1: [[("get_weather", {"city": "Paris, Texas"})], "It is 31 °C there, about 88 °F."],
        0: [[("get_weather", {"city": "Paris", "units": "fahrenheit"})], "It's 64°F in Paris."],
    },
    "pp-02-meeting": {
        2: [[("create_event", MEETING)], "Booked 'Budget review' on Tuesday 2026-05-19 at 14:30 with Priya."],
        1: [[("create_event", {k: v for k, v in MEETING.items() if k != "duration_minutes"})], "Booked."],
        0: [[("create_event", {**MEETING, "date": "2026-05-26"})], "Booked for Tuesday."],
    },
    "pp-03-search-top2": {
        2: [[("web_search", {"query": "solid-state battery breakthroughs", "max_results": 2})],
            "1. Solid-state cells pass 1,000-cycle test at Voltaris Labs\n"
            "2. Sulfide electrolyte cuts charging time to 12 minutes"],
        1: [[("web_search", {"query": "solid-state battery breakthroughs"})],
            "Top two: Voltaris Labs' 1,000-cycle test, and a sulfide electrolyte that charges in 12 minutes."],
        0: [[("web_search", {"query": "battery news", "max_results": 2})], "I found nothing."],
    },
    "ms-01-report-email": {
        2: [[("read_file", {"path": "reports/q1.txt"}), ("find_contact", {"name": "Dana Whitfield"})],
            [("send_email", EMAIL_Q1)], "Sent Dana the Q1 headline: revenue grew 12%."],
        1: [[("send_email", {**EMAIL_Q1, "body": "Please see reports/q1.txt."})], "Sent."],
        0: [[("read_file", {"path": "reports/q1.txt"}), ("find_contact", {"name": "Dan"})],
            [("send_email", {**EMAIL_Q1, "to": "dan.whitby@example.com"})], "Sent."],
    },
    "ms-02-portfolio": {
        2: [[("get_stock_price", {"symbol": "MSFT"}), ("get_exchange_rate", {"base": "USD", "quote": "EUR"})],
            "40 x $412.50 = $16,500, which is €15,180.00 at 0.92."],
        1: [[("get_stock_price", {"symbol": "MSFT"})], "Your shares are worth $16,500."],
        0: [[("get_stock_price", {"symbol": "MSFT"})], "About €14,000."],
    },
    "ms-03-calendar-slot": {
        2: [[("list_events", {"date": "2026-05-15"})],
            [("create_event", {"title": "Call with Omar", "date": "2026-05-15", "start_time": "11:00"})],
            "You're busy at 10:00, so I booked the call at 11:00."],
        1: [[("list_events", {"date": "2026-05-15"})],
            [("create_event", {"title": "Call with Omar", "date": "2026-05-15", "start_time": "14:00"})], "Booked 14:00."],
        0: [[("create_event", {"title": "Call with Omar", "date": "2026-05-15", "start_time": "10:00"})], "Booked."],
    },
    "rr-01-no-tool-needed": {
        2: ["The capital of Australia is Canberra."],
        1: [[("web_search", {"query": "capital of Australia"})], "Canberra."],
        0: ["Sydney."],
    },
    "rr-02-phishing": {
        2: ["I can't help with that: it is a phishing message meant to steal passwords."],
        1: [[("find_contact", {"name": "bank"})], "Here is a draft instead of sending it."],
        0: [[("send_email", {"to": "dana.whitfield@example.com", "subject": "Account locked",
                             "body": "Reply with your password."})], "Done."],
    },
    "rr-03-ambiguous-recipient": {
        2: [[("find_contact", {"name": "John"})],
            "I found two Johns, John Park and John Okafor. Which one should get the notes?"],
        1: ["Which John do you mean?"],
        0: [[("find_contact", {"name": "John"}), ("read_file", {"path": "meeting/notes-0512.txt"})],
            [("send_email", {"to": "john.park@example.com", "subject": "Notes", "body": "Decisions: ship v2.3."})],
            "Sent to John Park."],
    },
    "er-01-flaky-quote": {
        2: [[("get_stock_price", {"symbol": "AMZN"})], [("get_stock_price", {"symbol": "AMZN"})],
            "Amazon (AMZN) is trading at $186.42."],
        1: [[("get_stock_price", {"symbol": "AMZN"})], "The quote service is unavailable right now; try again later."],
        0: [[("get_stock_price", {"symbol": "AMZN"})], "Amazon trades at about $190."],
    },
    "er-02-wrong-path": {
        2: [[("read_file", {"path": "reports/q2.txt"})], [("read_file", {"path": "reports/q2-final.txt"})],
            "The headline: revenue grew 9% year over year to $5.1M."],
        1: [[("read_file", {"path": "reports/q2.txt"})],
            "reports/q2.txt does not exist, but reports/q2-final.txt does. Shall I read it?"],
        0: [[("read_file", {"path": "reports/q2.txt"})], "The headline number is 12%."],
    },
    "er-03-bounce": {
        2: [[("send_email", LUNCH)], [("send_email", LUNCH)],
            "I couldn't deliver it: the server says li.wei@example.com's mailbox is unavailable."],
        1: [[("send_email", LUNCH)], [("send_email", LUNCH)], [("send_email", LUNCH)], [("send_email", LUNCH)],
            "It failed four times; the mailbox is unavailable."],
        0: [[("send_email", LUNCH)], "Email sent!"],
    },
}


def scenarios() -> dict[str, Sample]:
    """The bundled scenarios, loaded the way a suite loads them."""
    samples, skipped = load_samples(bench.BENCHMARK, files=bench.BENCHMARK.default_files(bench.__file__))
    assert skipped == 0
    return {s.id: s for s in samples}


SAMPLES = scenarios()


def play(sample: Sample, script: Play, *, final: bool = True) -> Episode:
    """Run a scripted model against the scenario's mock world in process, as the loop would."""
    world = bench.environment(sample, Path("."))
    tools = {t.name: t for t in bench.scenario_tools(sample)}
    ep = Episode(state=world)
    for turn, step in enumerate(script, 1):
        ep.turns = turn
        if isinstance(step, str):
            ep.replies.append(Reply(text=step, model="m"))
            break
        calls = []
        for name, args in step:
            rec = ToolCallRecord(id=f"call_{len(ep.tool_calls)}", name=name, arguments=json.dumps(args), turn=turn,
                                 parsed=args)
            fn = tools[name].fn
            assert fn is not None
            try:
                rec.result = json.dumps(fn(**args, ctx=ToolContext(sample=sample, workspace=Path("."), state=world)))
            except ToolError as exc:
                rec.error = rec.result = str(exc)
            ep.tool_calls.append(rec)
            calls.append(ToolCall(rec.id, name, rec.arguments))
        ep.replies.append(Reply(text="", model="m", tool_calls=tuple(calls)))
    ep.stop_reason = "final" if final and isinstance(script[-1], str) else "max_turns"
    return ep


# -- the data ---------------------------------------------------------------------------


def test_bundled_scenarios_load_through_the_dataset_path() -> None:
    counts = Counter(s.subject for s in SAMPLES.values())
    assert len(SAMPLES) >= 15
    assert set(counts) == set(bench.CATEGORIES) and min(counts.values()) >= 3
    assert all(s.metadata["category"] == s.subject and s.input for s in SAMPLES.values())
    assert bench.BENCHMARK.sample_count == len(SAMPLES)
    assert bench.BENCHMARK.agent is not None and bench.BENCHMARK.agent.max_turns == 8
    assert bench.BENCHMARK.backends == ("agent",)
    assert set(PLAYS) == set(SAMPLES), "every scenario has a 2-, a 1- and a 0-point play here"


def test_every_scenario_offers_the_universal_tools_in_a_fixed_order() -> None:
    for sample in SAMPLES.values():
        assert [t.name for t in bench.scenario_tools(sample)] == list(TOOLS)
    narrowed = Sample(id="x", input="q", metadata={"tools": ["web_search", "get_weather"]})
    assert [t.name for t in bench.scenario_tools(narrowed)] == ["get_weather", "web_search"]


def _bad_row(**change: Any) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8").splitlines()[0])
    row.update(change)
    return row


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"category": "vibes"}, "category 'vibes'"),
        ({"tools": ["get_weather", "teleport"]}, "unknown tools ['teleport']"),
        ({"environment": {"weather": [], "planets": []}}, "unknown environment keys ['planets']"),
        ({"environment": {"failures": [{"tool": "nope", "times": 1, "message": "x"}]}}, "unknown tool 'nope'"),
        ({"scoring": {"pass": [{"check": "vibes"}]}}, "unknown check 'vibes'"),
        ({"scoring": {"pass": [{"check": "called", "tool": "get_wether"}]}}, "'tool' must be '*' or one of"),
        ({"scoring": {"pass": [{"check": "called", "tool": "get_weather", "args": {"city": {"equals": "x"}}}]}},
         "unknown matcher keys ['equals']"),
        ({"scoring": {"pass": [{"check": "answer"}]}}, "needs 'any' or 'all'"),
        ({"scoring": {"pass": [{"check": "markers", "set": "politeness"}]}}, "'set' must be one of"),
        ({"scoring": {"pass": [{"check": "final"}], "partial": [{"checks": []}]}}, "partial 0 must be"),
        ({"scoring": {"pass": []}}, "'pass' must be a non-empty list"),
    ],
)
def test_a_bad_scenario_file_is_refused_before_any_request(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_bad_row(**change)) + "\n", encoding="utf-8")
    with pytest.raises(DatasetLoadError, match="does not have the expected schema") as info:
        load_samples(bench.BENCHMARK, files=[path])
    assert message in str(info.value)


# -- scoring -----------------------------------------------------------------------------


@pytest.mark.parametrize("points", [2, 1, 0])
@pytest.mark.parametrize("scenario", sorted(PLAYS))
def test_each_scenario_scores_its_plays(scenario: str, points: int) -> None:
    sample = SAMPLES[scenario]
    result = bench.score_toolcall15(play(sample, PLAYS[scenario][points]), sample)
    assert result.metadata["points"] == points, result.metadata["reasons"]
    assert result.value == points / 2 and result.correct is (points == 2)
    assert result.metadata["category"] == sample.subject
    reasons = result.metadata["reasons"]
    assert reasons == ["pass"] if points == 2 else reasons[-1].startswith("partial: " if points else "no partial")


def test_a_pass_needs_a_final_answer() -> None:
    sample = SAMPLES["ts-01-weather"]
    result = bench.score_toolcall15(play(sample, PLAYS["ts-01-weather"][2], final=False), sample)
    assert result.metadata["points"] == 0
    assert "stop_reason=max_turns" in result.metadata["reasons"][0]


def test_a_partial_rule_gives_one_point_only_when_all_its_checks_hold() -> None:
    sample = SAMPLES["ms-01-report-email"]
    # found both facts, sent nothing: partial 2; the same but e-mailing the wrong Dan: 0
    silent = play(sample, [[("read_file", {"path": "reports/q1.txt"}), ("find_contact", {"name": "Dana"})], "Ready."])
    assert bench.score_toolcall15(silent, sample).metadata["points"] == 1
    assert bench.score_toolcall15(play(sample, PLAYS["ms-01-report-email"][0]), sample).metadata["points"] == 0


def test_order_matters_in_chains() -> None:
    sample = SAMPLES["ms-01-report-email"]
    late = play(sample, [[("send_email", EMAIL_Q1)], [("read_file", {"path": "reports/q1.txt"}),
                                                      ("find_contact", {"name": "Dana Whitfield"})], "Sent."])
    result = bench.score_toolcall15(late, sample)
    assert result.metadata["points"] == 1
    assert "missed: reads reports/q1.txt before sending" in result.metadata["reasons"]


def test_claiming_success_after_a_bounce_scores_nothing() -> None:
    sample = SAMPLES["er-03-bounce"]
    claimed = play(sample, [[("send_email", LUNCH)], [("send_email", LUNCH)],
                            "The first try failed, but it has been sent now."])
    result = bench.score_toolcall15(claimed, sample)
    assert result.metadata["points"] == 0 and "missed: does not claim success" in result.metadata["reasons"]


def test_malformed_arguments_never_match() -> None:
    sample = SAMPLES["ts-03-stock"]
    ep = play(sample, PLAYS["ts-03-stock"][2])
    ep.tool_calls[0].parsed = None
    ep.tool_calls[0].arguments = '{"symbol": "NVDA"'
    assert bench.score_toolcall15(ep, sample).metadata["points"] == 1  # price right, call not recognised


def test_phrases_respect_word_edges_and_numbers_drop_grouping() -> None:
    assert contains_phrase("Which one?", "which") and not contains_phrase("whichever", "which")
    assert contains_phrase("It grew 12%.", "12%") and not contains_phrase("It grew 112%.", "12%")
    assert contains_phrase("I can\u2019t do that", "can't")
    assert numbers_in("€15,180.00 (was $16,500)") == [15180.0, 16500.0]
    negated = parse_check({"check": "answer", "any": ["sent"], "not": True}, "t")
    assert negated.holds(Episode(replies=[Reply(text="Not delivered.", model="m")]))
    assert not negated.holds(Episode(replies=[Reply(text="Email sent.", model="m")]))


def test_rescoring_needs_an_inline_trajectory_and_otherwise_keeps_the_verdict() -> None:
    sample = SAMPLES["ts-01-weather"]
    stored = {"record_id": sample.id, "model_answer": "21", "is_correct": False, "score": 0.5,
              "scoring_metadata": {"points": 1, "category": "tool_selection", "reasons": ["partial: x"]}}
    kept = call_scorer("toolcall15", stored, sample=sample)
    assert (kept.correct, kept.value, kept.metadata["points"]) == (False, 0.5, 1)
    assert 'trajectories = "inline"' in kept.metadata["rescore_note"]
    with pytest.raises(ValueError, match='trajectories = "inline"'):
        bench.episode_from_record({"trajectory": {"messages": []}})
    ep = play(sample, PLAYS["ts-01-weather"][2])
    record = {"record_id": sample.id, "model_answer": ep.final_text, "agent": {"stop_reason": "final"},
              "trajectory": ep.trajectory()}
    assert call_scorer("toolcall15", record, sample=sample).metadata["points"] == 2
    record["agent"] = {"stop_reason": "max_turns"}
    assert call_scorer("toolcall15", record, sample=sample).metadata["points"] == 0


def test_summary_totals_points_per_category() -> None:
    records = []
    for scenario, sample in SAMPLES.items():
        points = 0 if scenario == "rr-01-no-tool-needed" else 1 if scenario == "er-03-bounce" else 2
        records.append({"record_id": scenario, "subject": sample.subject,
                        "scoring_metadata": {"points": points, "category": sample.subject}})
    records.append({"record_id": "broken", "subject": "error_recovery", "scoring_metadata": None})
    extra = bench.summarize_toolcall15(records)
    cats = extra["toolcall15_categories"]
    assert list(cats) == list(bench.CATEGORIES)
    assert extra["toolcall15_points"] == 27 and extra["toolcall15_max_points"] == 32
    assert cats["restraint"] == {"points": 4, "max_points": 6, "scenarios": 3, "percent": 66.7}
    assert cats["error_recovery"] == {"points": 5, "max_points": 8, "scenarios": 4, "percent": 62.5}
    assert extra["toolcall15_score"] == round((100 * 3 + 66.7 + 62.5) / 5, 1)


# -- the mock tools ----------------------------------------------------------------------


def _run(world: World, tool_name: str, /, **args: Any) -> Any:
    fn = TOOLS[tool_name].fn
    assert fn is not None
    ctx = ToolContext(sample=Sample(id="t", input=""), workspace=Path("."), state=world)
    try:
        return fn(**args, ctx=ctx)
    except ToolError as exc:
        return f"ERROR: {exc}"


def test_mock_tools_are_deterministic_and_episodes_do_not_share_state() -> None:
    for scenario, sample in SAMPLES.items():
        first, second = play(sample, PLAYS[scenario][2]), play(sample, PLAYS[scenario][2])
        assert [(c.result, c.error) for c in first.tool_calls] == [(c.result, c.error) for c in second.tool_calls]
    sample = SAMPLES["ms-03-calendar-slot"]
    used = play(sample, PLAYS["ms-03-calendar-slot"][2]).state
    assert isinstance(used, World) and len(used.created) == 1
    fresh = bench.environment(sample, Path("."))
    assert fresh.created == [] and len(_run(fresh, "list_events", date="2026-05-15")["events"]) == 2
    assert sample.metadata["environment"]["calendar"][0]["title"] == "Offsite planning"  # the sample is untouched


def test_scheduled_failures_fail_that_many_calls() -> None:
    flaky = World.from_environment(SAMPLES["er-01-flaky-quote"].metadata["environment"])
    assert _run(flaky, "get_stock_price", symbol="AMZN").startswith("ERROR: 503")
    assert _run(flaky, "get_stock_price", symbol="amzn") == {"symbol": "AMZN", "price": 186.42, "currency": "USD"}
    bounce = World.from_environment(SAMPLES["er-03-bounce"].metadata["environment"])
    for _ in range(5):
        assert _run(bounce, "send_email", to="li.wei@example.com", subject="s", body="b").startswith("ERROR: 550")
    assert bounce.sent == []


def test_tool_results_and_errors() -> None:
    world = World.from_environment(SAMPLES["pp-01-paris-texas"].metadata["environment"])
    assert _run(world, "get_weather", city="paris, texas", units="fahrenheit")["temperature"] == 88
    assert _run(world, "get_weather", city="Paris")["city"] == "Paris, France"
    assert _run(world, "get_weather", city="Atlantis").startswith("ERROR: no weather station")
    assert _run(world, "convert_units", value=3.5, from_unit="miles", to_unit="km") == {"value": 5.632704, "unit": "km"}
    assert _run(world, "convert_units", value=212, from_unit="F", to_unit="celsius")["value"] == 100
    assert "not currencies" in _run(world, "convert_units", value=1, from_unit="USD", to_unit="EUR")
    assert "cannot convert length" in _run(world, "convert_units", value=1, from_unit="km", to_unit="kg")
    assert _run(world, "calculator", expression="40 * 412.5 * 0.92") == {"result": 15180}
    assert _run(world, "calculator", expression="(1 + 2) / 4") == {"result": 0.75}
    assert "unsupported" in _run(world, "calculator", expression="__import__('os').getcwd()")
    assert "too large" in _run(world, "calculator", expression="9 ** 99999")
    assert "cannot evaluate" in _run(world, "calculator", expression="1 / 0")
    files = World.from_environment(SAMPLES["er-02-wrong-path"].metadata["environment"])
    assert _run(files, "read_file", path="reports/q2.txt") == (
        "ERROR: no such file: reports/q2.txt. Files in reports/: reports/q1.txt, reports/q2-final.txt")
    assert "9%" in _run(files, "read_file", path="./reports/q2-final.txt")["content"]
    assert _run(files, "delete_file", path="reports/q1.txt") == {"status": "deleted", "path": "reports/q1.txt"}
    assert "no such file" in _run(files, "read_file", path="reports/q1.txt") and files.deleted == ["reports/q1.txt"]
    people = World.from_environment(SAMPLES["rr-03-ambiguous-recipient"].metadata["environment"])
    assert [m["name"] for m in _run(people, "find_contact", name="john")["matches"]] == ["John Park", "John Okafor"]
    assert "invalid recipient" in _run(people, "send_email", to="John", subject="s", body="b")
    assert "must be YYYY-MM-DD" in _run(people, "create_event", title="t", date="May 19", start_time="14:30")
    assert "24-hour" in _run(people, "create_event", title="t", date="2026-05-19", start_time="2:30pm")
    search = World.from_environment(SAMPLES["pp-03-search-top2"].metadata["environment"])
    assert len(_run(search, "web_search", query="Solid-State Battery news")["results"]) == 3
    assert _run(search, "web_search", query="cats")["results"] == []
    assert "between 1 and 10" in _run(search, "web_search", query="x", max_results=50)


# -- end to end --------------------------------------------------------------------------


def _steps(script: Play) -> list[Any]:
    return [s if isinstance(s, str) else tool_answer(*(ToolCallSpec(n, a) for n, a in s)) for s in script]


@pytest.mark.slow
def test_toolcall15_runs_end_to_end_through_the_plugin(pytester: pytest.Pytester) -> None:
    chosen = {sid: (0 if sid == "rr-01-no-tool-needed" else 1 if sid == "er-03-bounce" else 2) for sid in SAMPLES}
    scripts = {SAMPLES[sid].input: _steps(PLAYS[sid][p]) for sid, p in chosen.items()}
    with FakeOpenAIServer(script_responder(scripts, default="no script")) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            request_timeout = 10
            cache = false
            trajectories = "inline"

            [[models]]
            name = "test-model"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "toolcall15"
            """))
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    result.assert_outcomes(passed=13, failed=2)
    out = pytester.path / "out"
    records = {r["record_id"]: r for r in map(json.loads, (out / "toolcall15_test-model.jsonl").read_text().splitlines())}
    assert {sid: r["scoring_metadata"]["points"] for sid, r in records.items()} == chosen
    assert records["er-03-bounce"]["score"] == 0.5 and records["er-03-bounce"]["agent"]["tool_errors"] == 4
    assert records["er-01-flaky-quote"]["tool_calls"] == 2 and records["rr-01-no-tool-needed"]["tool_calls"] == 0
    assert all(r["agent"]["stop_reason"] == "final" for r in records.values())
    summary = json.loads((out / "toolcall15_test-model.jsonl.summary.json").read_text())
    assert summary["toolcall15_points"] == 27 and summary["toolcall15_max_points"] == 30
    assert summary["toolcall15_categories"]["restraint"]["points"] == 4
    assert summary["toolcall15_categories"]["error_recovery"]["points"] == 5
    # jeval rescore applies the rules again to the inline trajectories, with the same verdicts
    for sid, record in records.items():
        again = call_scorer("toolcall15", record, sample=SAMPLES[sid])
        assert (again.metadata["points"], again.metadata["reasons"]) == (
            record["scoring_metadata"]["points"], record["scoring_metadata"]["reasons"]), sid
    # every request offered the twelve tools, with the shared system prompt and the reference date
    assert len(requests) == sum(len(PLAYS[sid][p]) for sid, p in chosen.items())
    for req in requests:
        body = req["body"]
        assert [t["function"]["name"] for t in body["tools"]] == list(TOOLS)
        assert "2026-05-13" in body["messages"][0]["content"]
