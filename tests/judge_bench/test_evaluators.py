"""Evaluator unit tests: the registry, every code evaluator, and the LLM evaluators against a scripted chat."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.core.chat import Reply, TokenLogprob
from pytest_jeval.judge_bench import CaseSpec, GoldItem, JudgeSetupError, evaluator_classes, get_evaluator
from pytest_jeval.judge_bench.evaluators.code import json_equal, trajectory_similarity
from pytest_jeval.judge_bench.evaluators.sql import QueryTimeout, build_database, has_top_level_order_by, run_query
from pytest_jeval.judge_bench.evaluators.tool_calls import check_call, parse_calls
from pytest_jeval.scoring.judging.registry import EvaluatorError, Judgment

DATA = Path(__file__).resolve().parents[2] / "pytest_jeval" / "judge_bench" / "data"


def judge(name: str, kind: str | None = None, scale: list[float] | None = None,
          chat: Callable[[Any], Reply] | None = None, **item: Any) -> Judgment:
    ev = get_evaluator(name)
    spec = ev.spec(kind, scale)
    fields = {k: item.pop(k) for k in ("input", "output", "expected", "context", "criteria", "data_dir") if k in item}
    fields.setdefault("input", "q")
    return ev.run(GoldItem(extra=item, **fields), spec, chat)  # type: ignore[arg-type]


# -- registry ------------------------------------------------------------------------------------
#: The built-in evaluators as of this writing: none may disappear (new ones are welcome; their
#: properties are checked for every registered evaluator in tests/acceptance/test_installed_packages.py).
BUILTIN_MINIMUM = {
    "exact_match", "classification", "numeric", "json_match", "sql", "tool_call_accuracy", "trajectory",
    "factuality", "closed_qa", "security", "possible", "translation", "answer_correctness", "faithfulness",
    "chunk_relevance", "agent_goal", "llm_judge", "pairwise"}


def test_registry_declares_kinds_and_scales() -> None:
    classes = evaluator_classes()
    assert BUILTIN_MINIMUM <= set(classes), f"missing evaluators: {sorted(BUILTIN_MINIMUM - set(classes))}"
    assert get_evaluator("factuality").spec(None, None) == CaseSpec.choice("ABCDE")
    assert get_evaluator("llm_judge").spec(None, None).scale == (0, 4)
    assert get_evaluator("translation").spec("score", [1, 5]).labels == (1, 2, 3, 4, 5)
    assert get_evaluator("faithfulness").spec(None, None).scale == (0, 1)
    for name in BUILTIN_MINIMUM:
        cls = classes[name]
        assert cls.description, name
        assert cls.uses_model == (name not in {"exact_match", "classification", "numeric", "json_match", "sql",
                                               "tool_call_accuracy", "trajectory"}), name


@pytest.mark.parametrize(("name", "kind", "scale", "key"), [
    ("no_such_judge", None, None, "evaluator"),
    ("exact_match", "score", None, "kind"),
    ("exact_match", None, [0, 4], "scale"),
    ("llm_judge", None, [0, 4, 5], "scale"),
    ("llm_judge", None, [4, 0], "scale"),
    ("llm_judge", None, [0, 2.5], "scale"),
])
def test_setup_errors_name_the_key(name: str, kind: str | None, scale: list[float] | None, key: str) -> None:
    with pytest.raises(JudgeSetupError) as info:
        get_evaluator(name).spec(kind, scale)
    assert info.value.key == key


# -- code evaluators ----------------------------------------------------------------------------
def test_exact_match_normalises_whitespace_and_case_only() -> None:
    assert judge("exact_match", output="  New\n York ", expected="new york").predicted is True
    assert judge("exact_match", output="New York.", expected="new york").predicted is False
    j = judge("exact_match", output="x", expected="y")
    assert j.predicted is False and j.distribution is None and j.probability_source == "deterministic"


def test_classification_compares_labels() -> None:
    assert judge("classification", output=" Positive. ", expected="positive").predicted is True
    assert judge("classification", output="negative", expected="positive").predicted is False
    assert judge("classification", output="", expected="positive").predicted is False


def test_numeric() -> None:
    assert judge("numeric", output="So the total is $1,450,000.", expected="1450000").predicted is True
    assert judge("numeric", output="0.333333333", expected="1/3").predicted is True
    assert judge("numeric", output="1450001", expected="1450000").predicted is False
    assert judge("numeric", output="no number here", expected="3").predicted is False
    with pytest.raises(EvaluatorError):
        judge("numeric", output="3", expected="three")


def test_json_match() -> None:
    assert judge("json_match", output='```json\n{"b": [1, 2], "a": 1.0}\n```', expected={"a": 1, "b": [1, 2]}).predicted is True
    assert judge("json_match", output='{"b": [2, 1], "a": 1}', expected='{"a": 1, "b": [1, 2]}').predicted is False
    assert judge("json_match", output="{not json", expected="{}").predicted is False
    assert not json_equal(True, 1) and json_equal(1, 1.0) and not json_equal({"a": None}, {})
    with pytest.raises(EvaluatorError):
        judge("json_match", output="{}", expected="{broken")


def test_trajectory_similarity_formula() -> None:
    assert trajectory_similarity([], []) == 1.0
    assert trajectory_similarity(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert trajectory_similarity(["a", "c"], ["a", "b", "c"]) == pytest.approx(1 - 1 / 3)
    assert trajectory_similarity(["x", "y"], ["a", "b", "c", "d"]) == 0.0
    steps = json.dumps([{"tool": "search"}, {"tool": "Open"}, {"tool": "answer"}])
    j = judge("trajectory", scale=[0, 4], output="1. search\n2. open\n3. answer", expected=steps)
    assert j.predicted == 4 and j.details["similarity"] == 1.0
    j = judge("trajectory", scale=[0, 4], output=["search", "answer"], expected=steps)
    assert j.details["similarity"] == pytest.approx(2 / 3) and j.predicted == 3  # round_half_up(2.67)
    assert judge("trajectory", output=["search"], expected=steps).predicted == 0  # 0-1 scale: 1/3 -> 0


# -- sql -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_database(DATA / "shop.sql", cache_dir=tmp_path_factory.mktemp("sqlcache"))


def test_database_is_built_once_from_the_script(shop_db: Path, tmp_path: Path) -> None:
    assert shop_db.suffix == ".sqlite" and run_query(shop_db, "SELECT COUNT(*) FROM customers") == [(5,)]
    assert build_database(DATA / "shop.sql", cache_dir=shop_db.parent) == shop_db


def test_sql_read_only_and_time_limit(shop_db: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        run_query(shop_db, "DELETE FROM orders")
    assert run_query(shop_db, "SELECT COUNT(*) FROM orders") == [(6,)]
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    with pytest.raises(QueryTimeout):
        run_query(shop_db, slow, timeout=0.2)


def test_order_by_detection() -> None:
    assert has_top_level_order_by("SELECT a FROM t ORDER BY a")
    assert not has_top_level_order_by("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert not has_top_level_order_by("SELECT 'order by' FROM t -- order by a")


def test_sql_equivalence(shop_db: Path) -> None:
    db = str(shop_db)
    same_set = judge("sql", output="SELECT name FROM customers WHERE city='London' ORDER BY name DESC",
                     expected="SELECT name FROM customers WHERE city = 'London'", database=db)
    assert same_set.predicted is True and same_set.details["ordered"] is False
    wrong_order = judge("sql", output="SELECT name FROM products ORDER BY price DESC",
                        expected="SELECT name FROM products ORDER BY price", database=db)
    assert wrong_order.predicted is False
    broken = judge("sql", output="SELEC name FROM products", expected="SELECT name FROM products", database=db)
    assert broken.predicted is False and "syntax" in broken.details["output_error"]
    dupes = judge("sql", output="SELECT city FROM customers", expected="SELECT DISTINCT city FROM customers", database=db)
    assert dupes.predicted is False  # result sets are compared as multisets
    with pytest.raises(EvaluatorError, match="expected query fails"):
        judge("sql", output="SELECT 1", expected="SELECT nope FROM nowhere", database=db)
    with pytest.raises(EvaluatorError, match="no database"):
        judge("sql", output="SELECT 1", expected="SELECT 1")


def test_sql_database_path_relative_to_the_gold_file() -> None:
    j = judge("sql", output="SELECT COUNT(*) FROM products", expected="SELECT 6", database="shop.sql", data_dir=str(DATA))
    assert j.predicted is True


# -- tool calls ----------------------------------------------------------------------------------
SPEC = [{"name": "calculate_triangle_area", "parameters": {"type": "dict", "properties": {
    "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}}, "required": ["base", "height"]}}]
GOLD = [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]


@pytest.mark.parametrize(("output", "ok"), [
    ("calculate_triangle_area(base=10, height=5)", True),
    ("calculate_triangle_area(base=10, height=5, unit='Units')", True),
    ('[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "units"}}]', True),
    ('{"name": "calculate_triangle_area", "arguments": "{\\"base\\": 10, \\"height\\": 5}"}', True),
    ('{"type": "function", "function": {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}}', True),
    ("calculate_triangle_area(base=10)", False),                       # required parameter missing
    ("calculate_triangle_area(base=10, height=6)", False),             # unacceptable value
    ("calculate_triangle_area(base=10, height=5, color='red')", False),  # unknown parameter
    ("calculate_triangle_area(base=10.0, height=5)", False),           # float where the spec says integer
    ("calculate_circle_area(base=10, height=5)", False),               # wrong function
    ("calculate_triangle_area(base=10, height=5); rm -rf /", False),   # not parseable
    ("[calculate_triangle_area(base=10, height=5), calculate_triangle_area(base=10, height=5)]", False),  # count
])
def test_tool_call_rules(output: str, ok: bool) -> None:
    j = judge("tool_call_accuracy", output=output, expected=json.dumps(GOLD), context=json.dumps(SPEC))
    assert j.predicted is ok, j.details


def test_tool_call_bfcl_details() -> None:
    # int accepted for float; optional omitted; dict values; strings standardised
    spec = {"name": "f", "parameters": {"properties": {"x": {"type": "float"}, "opts": {"type": "dict"}, "s": {"type": "string"}},
                                        "required": ["x"]}}
    answer = {"f": {"x": [2.0], "opts": [{"limit": [50], "mode": ["fast", ""]}, ""], "s": ["New York", ""]}}
    assert check_call(("f", {"x": 2, "opts": {"limit": 50}, "s": "new-york"}), answer, spec) is None
    assert check_call(("f", {"x": 2, "opts": {"limit": 51}}), answer, spec) is not None
    assert check_call(("f", {"x": 2, "opts": {"limit": 50, "extra": 1}}), answer, spec) is not None
    assert check_call(("f", {"x": True}), answer, spec) is not None  # a bool is not a number
    # a parameter the spec requires must be present even when the answer lists "" (BFCL checks required first)
    assert "missing required" in (check_call(("f", {}), {"f": {"x": [2.0, ""]}}, spec) or "")
    assert check_call(("f", {"x": "2.0"}), {"f": {"x": [2.0]}}, None, language="java") is None  # source string read as JSON
    assert check_call(("f_g", {}), {"f.g": {}}, None) is None  # "." may be written "_"
    assert parse_calls("[a.b(x=1), c(y=[1, 2])]") == [("a.b", {"x": 1}), ("c", {"y": [1, 2]})]


def test_parallel_calls_match_in_any_order() -> None:
    gold = [{"f": {"x": [1]}}, {"g": {"y": [2]}}]
    assert judge("tool_call_accuracy", output="[g(y=2), f(x=1)]", expected=gold).predicted is True
    assert judge("tool_call_accuracy", output="[g(y=2), f(x=3)]", expected=gold).predicted is False


# -- LLM evaluators against a scripted chat ------------------------------------------------------
def scripted(*texts: str, p: dict[str, float] | None = None) -> tuple[Callable[[Any], Reply], list[Any]]:
    """A chat that answers ``texts`` in turn; ``p`` gives top logprobs at every label-like last token."""
    prompts: list[Any] = []

    def chat(prompt: Any) -> Reply:
        text = texts[len(prompts) % len(texts)]
        prompts.append(prompt)
        if p is None:
            return Reply(text=text, model="m")
        head, _, last = text.rpartition(" ")
        top = tuple((k, math.log(v)) for k, v in p.items())
        tokens = ((TokenLogprob(head + " ", 0.0),) if head else ()) + (TokenLogprob(last, dict(top).get(last, -1.0), top),)
        return Reply(text=text, model="m", logprobs=tokens)

    return chat, prompts


def test_factuality_choice_with_probabilities() -> None:
    chat, prompts = scripted("The submission adds detail: B", p={"B": 0.7, "C": 0.2, "X": 0.1})
    j = judge("factuality", chat=chat, input="Q?", output="Paris, France's capital", expected="Paris")
    assert j.predicted == "B" and j.distribution["B"] == pytest.approx(0.7 / 0.9) and j.allowed_mass == pytest.approx(0.9)
    assert "[Expert answer]: Paris" in prompts[0] and "(E)" in prompts[0]


def test_llm_reply_outside_labels_keeps_raw_text() -> None:
    chat, _ = scripted("I would rather not say.")
    j = judge("closed_qa", chat=chat, input="Q?", output="A")
    assert j.unscored and j.raw == ("I would rather not say.",) and "none of the labels" in (j.unscored_reason or "")


def test_translation_names_both_languages() -> None:
    chat, prompts = scripted("Minor issues. 3", p={"3": 0.6, "4": 0.3, "2": 0.1})
    j = judge("translation", chat=chat, input="Hello", output="Hallo", source_language="en", target_language="de")
    assert j.predicted == 3 and "from English into German" in prompts[0]


def test_security_possible_agent_goal_answer_correctness_llm_judge_prompts() -> None:
    for name, extra in [("security", {}), ("possible", {}), ("agent_goal", {}), ("answer_correctness", {"expected": "x"}),
                        ("llm_judge", {"criteria": "Be concise."})]:
        chat, prompts = scripted("Fine. 1" if name in ("answer_correctness", "llm_judge") else "Fine. Yes")
        j = judge(name, chat=chat, input="task", output="out", **extra)
        assert j.predicted in (True, 1), name
        assert "out" in prompts[0] and j.probability_source == "no_logprobs"


def test_faithfulness_claims_and_zero_claims() -> None:
    chat, _ = scripted("Paris is in France -> Yes\nParis has 90 million people -> No\nIt is a capital -> Yes")
    j = judge("faithfulness", scale=[0, 4], chat=chat, output="...", context="Paris is the capital of France.")
    assert [c["supported"] for c in j.details["claims"]] == [True, False, True]
    assert j.details["share"] == pytest.approx(2 / 3) and j.predicted == 3
    none_chat, _ = scripted("NONE")
    j = judge("faithfulness", chat=none_chat, output="Hello!", context="ctx")
    assert j.predicted == 1 and j.details["claims"] == [] and j.probability_source == "no_claims" and j.distribution is None
    bad_chat, _ = scripted("I do not know what to do.")
    assert judge("faithfulness", chat=bad_chat, output="o", context="c").unscored


def test_faithfulness_level_distribution_from_claim_probabilities() -> None:
    text = "A -> Yes\nB -> No"
    probs = [(0.9, "Yes"), (0.4, "No")]  # P(yes) per claim
    tokens: list[TokenLogprob] = []
    for line, (p_yes, word) in zip(("A -> ", "\nB -> "), probs):
        tokens.append(TokenLogprob(line, 0.0))
        tokens.append(TokenLogprob(word, math.log(p_yes if word == "Yes" else 1 - p_yes),
                                   (("Yes", math.log(p_yes)), ("No", math.log(1 - p_yes)))))

    def chat(prompt: Any) -> Reply:
        return Reply(text=text, model="m", logprobs=tuple(tokens))

    j = judge("faithfulness", chat=chat, output="o", context="c")
    # 0-1 scale: level 1 when the share of supported claims is >= 0.5, i.e. at least one of two
    assert j.predicted == 1 and j.probability_source == "logprobs"
    assert j.distribution == pytest.approx({0: 0.1 * 0.6, 1: 1 - 0.1 * 0.6})


def test_chunk_relevance_one_call_per_item() -> None:
    chat, prompts = scripted("Chunk 1: Yes\nChunk 2: No\nChunk 3: Yes\nChunk 4: No")
    j = judge("chunk_relevance", chat=chat, input="What is X?", context=json.dumps(["a", "b", "c", "d"]))
    assert len(prompts) == 1 and j.details["relevant"] == [True, False, True, False] and j.predicted == 1
    assert judge("chunk_relevance", scale=[0, 4], chat=chat, input="q", context=["a", "b", "c", "d"]).predicted == 2
    short, _ = scripted("Chunk 1: Yes")
    assert judge("chunk_relevance", chat=short, input="q", context=["a", "b"]).unscored
    j = judge("chunk_relevance", chat=None, input="q", context=[])
    assert j.predicted == 0 and j.probability_source == "no_chunks"


def test_pairwise_runs_both_orders_and_debiases() -> None:
    # position-biased judge: always "A" with 0.8 -> the orders disagree -> tie, inconsistent
    chat, prompts = scripted("Response A is better. A", p={"A": 0.8, "B": 0.2})
    j = judge("pairwise", chat=chat, input="Write a haiku", output_1="first text", output_2="second text")
    assert len(prompts) == 2
    assert prompts[0].index("first text") < prompts[0].index("second text")
    assert prompts[1].index("second text") < prompts[1].index("first text")
    assert j.details["order_verdicts"] == ["1", "2"] and j.extra_fields["position_consistent"] is False
    assert j.predicted == "tie" and j.distribution == pytest.approx({"1": 0.5, "2": 0.5, "tie": 0.0})
    # consistent judge: prefers output 1 in both orders
    answers = iter(["A", "B"])

    def consistent(prompt: Any) -> Reply:
        return Reply(text=f"Better: {next(answers)}", model="m")

    j = judge("pairwise", chat=consistent, input="q", output=json.dumps(["one", "two"]))
    assert j.predicted == "1" and j.extra_fields["position_consistent"] is True and j.distribution is None
    with pytest.raises(EvaluatorError):
        get_evaluator("pairwise").first_prompt(GoldItem(input="q", output="only one"), CaseSpec.choice(("1", "2", "tie")))
