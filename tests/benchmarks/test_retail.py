"""The retail benchmark: the database, each tool's rules, the tasks, the tau-bench reward and the users.

The tools are called directly here (no model, no loop); the end-to-end oracle runs
through the plugin are at the bottom of the file.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents import Episode, HarnessError, ToolCallRecord, ToolContext, ToolError
from pytest_jeval.benchmarks.retail import (
    DB_PATH,
    POLICY,
    STOP,
    TOOLS,
    TOOLS_BY_NAME,
    WRITE_TOOLS,
    LLMUser,
    ScriptedUser,
    bench_retail,
    call_tool,
    db_hash,
    fresh_db,
    gold_db,
    make_user,
    missing_outputs,
    read_tasks,
    retail_score,
    task_samples,
    to_sample,
)
from pytest_jeval.benchmarks.retail.users import USER_SYSTEM
from pytest_jeval.core.chat import Messages, Reply
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ScriptStep, ToolCallSpec, script_responder, tool_answer

TASKS_PATH = DB_PATH.parent / "tasks.jsonl"
SAMPLES = {s.id: s for s in task_samples(TASKS_PATH)}
ADDRESS = {"address1": "1 Test Way", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "78702"}


@pytest.fixture
def db() -> dict[str, Any]:
    return fresh_db()


def refused(db: dict[str, Any], name: str, match: str, **arguments: Any) -> None:
    """The call raises ToolError with ``match`` and leaves the database exactly as it was."""
    before = db_hash(db)
    with pytest.raises(ToolError, match=match):
        call_tool(name, arguments, db)
    assert db_hash(db) == before, f"{name} changed the database although it refused"


def order_with(db: dict[str, Any], status: str, source: str | None = None) -> dict[str, Any]:
    """The first order in ``status`` (optionally paid with a ``source`` payment method)."""
    for order in db["orders"].values():
        if order["status"] == status and (source is None or order["payment_history"][0]["payment_method_id"]
                                          .startswith(source)):
            return order  # type: ignore[no-any-return]
    raise AssertionError(f"no {status} order in the database")


def other_variant(db: dict[str, Any], item: dict[str, Any], available: bool = True) -> dict[str, Any]:
    """Another variant of the item's product with the given availability."""
    variants = db["products"][item["product_id"]]["variants"].values()
    return next(v for v in variants if v["item_id"] != item["item_id"] and v["available"] is available)


# --- the database -------------------------------------------------------------------------------------------


def test_database_is_consistent(db: dict[str, Any]) -> None:
    assert (len(db["users"]), len(db["orders"]), len(db["products"])) == (20, 40, 15)
    for order_id, order in db["orders"].items():
        user = db["users"][order["user_id"]]
        assert order_id in user["orders"] and order["order_id"] == order_id
        assert order["payment_history"][0]["payment_method_id"] in user["payment_methods"]
        for item in order["items"]:
            variant = db["products"][item["product_id"]]["variants"][item["item_id"]]
            assert item["price"] == variant["price"] and item["options"] == variant["options"]
    assert sorted(o for u in db["users"].values() for o in u["orders"]) == sorted(db["orders"])


def test_every_episode_gets_its_own_database(tmp_path: Path) -> None:
    sample = SAMPLES["retail-001"]
    first = bench_retail.environment(sample, tmp_path)
    second = bench_retail.environment(sample, tmp_path)
    pristine = db_hash(fresh_db())
    call_tool("cancel_pending_order", {"order_id": "#W6834081", "reason": "no longer needed"}, first)
    first["users"].clear()
    assert db_hash(second) == pristine and db_hash(fresh_db()) == pristine
    gold_db(SAMPLES["retail-013"])  # replaying gold actions never touches the shared copy either
    assert db_hash(fresh_db()) == pristine


def test_db_hash_is_canonical(db: dict[str, Any]) -> None:
    shuffled = json.loads(json.dumps(db, sort_keys=True))
    shuffled["users"] = dict(reversed(list(shuffled["users"].items())))
    assert db_hash(shuffled) == db_hash(db)
    shuffled["orders"]["#W6834081"]["status"] = "cancelled"
    assert db_hash(shuffled) != db_hash(db)


# --- the tools ------------------------------------------------------------------------------------------------


def test_read_only_tools_are_parallel_safe_and_writes_are_not() -> None:
    for t in TOOLS:
        assert t.parallel_safe is (t.name not in WRITE_TOOLS), t.name
    assert len(TOOLS) == 14 and len(WRITE_TOOLS) == 6


def test_reads_never_change_the_database(db: dict[str, Any]) -> None:
    before = db_hash(db)
    user = call_tool("get_user_details", {"user_id": "mei_li_3257"}, db)
    order = call_tool("get_order_details", {"order_id": "#W7645721"}, db)
    product = call_tool("get_product_details", {"product_id": "2323321132"}, db)
    user["orders"].clear()
    order["status"] = "cancelled"
    product["variants"].clear()
    call_tool("list_all_product_types", {}, db)
    call_tool("transfer_to_human_agents", {"summary": "wants a refund"}, db)
    assert db_hash(db) == before


def test_find_user(db: dict[str, Any]) -> None:
    assert call_tool("find_user_id_by_email", {"email": " Mei.Li3595@example.com"}, db) == "mei_li_3257"
    refused(db, "find_user_id_by_email", "User not found", email="mei.li@example.com")
    assert call_tool("find_user_id_by_name_zip", {"first_name": "mei", "last_name": "Li", "zip": "02108"},
                     db) == "mei_li_3257"
    refused(db, "find_user_id_by_name_zip", "User not found", first_name="Mei", last_name="Li", zip="02109")


def test_lookups_refuse_unknown_ids(db: dict[str, Any]) -> None:
    refused(db, "get_user_details", "User not found", user_id="nobody_0000")
    refused(db, "get_order_details", "Order not found", order_id="#W0000000")
    refused(db, "get_product_details", "Product not found", product_id="5072914289")  # an item id
    assert call_tool("get_order_details", {"order_id": "W7645721"}, db)["order_id"] == "#W7645721"
    types = call_tool("list_all_product_types", {}, db)
    assert len(types) == 15 and types["T-Shirt"] == "2323321132"


def test_calculate() -> None:
    db = fresh_db()
    assert call_tool("calculate", {"expression": "(24.5 + 13.25) * 2"}, db) == "75.5"
    assert call_tool("calculate", {"expression": "96 + 135.43"}, db) == "231.43"
    assert call_tool("calculate", {"expression": "-1/3"}, db) == "-0.33"
    for bad, match in [("2 ** 10", "Only numbers"), ("__import__('os')", "Only numbers"), ("1 +", "Not an arithmetic"),
                       ("1/0", "Division by zero"), ("1" * 501, "too long"), ("True + 1", "Only numbers")]:
        refused(db, "calculate", match, expression=bad)


def test_cancel_pending_order_refunds_and_restores_a_gift_card(db: dict[str, Any]) -> None:
    out = call_tool("cancel_pending_order", {"order_id": "#W4325722", "reason": "ordered by mistake"}, db)
    order = db["orders"]["#W4325722"]
    assert out == order and order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {"transaction_type": "refund", "amount": 135.43,
                                            "payment_method_id": "gift_card_8852783"}
    assert db["users"]["aisha_okafor_7812"]["payment_methods"]["gift_card_8852783"]["balance"] == 231.43


@pytest.mark.parametrize("status", ["processed", "delivered", "cancelled"])
def test_only_pending_orders_can_be_cancelled(db: dict[str, Any], status: str) -> None:
    refused(db, "cancel_pending_order", "only pending orders", order_id=order_with(db, status)["order_id"],
            reason="no longer needed")


def test_cancel_reason_comes_from_the_fixed_list(db: dict[str, Any]) -> None:
    refused(db, "cancel_pending_order", "Reason must be one of", order_id="#W6834081", reason="too expensive")


def test_modify_pending_order_address(db: dict[str, Any]) -> None:
    call_tool("modify_pending_order_address", {"order_id": "#W3481598", **ADDRESS}, db)
    assert db["orders"]["#W3481598"]["address"] == ADDRESS
    assert db["users"]["raj_kumar_4105"]["address"] != ADDRESS  # the profile keeps its own
    refused(db, "modify_pending_order_address", "only pending orders", order_id=order_with(db, "processed")["order_id"],
            **ADDRESS)


def test_modify_pending_order_items_charges_the_difference_to_a_gift_card(db: dict[str, Any]) -> None:
    args = {"order_id": "#W5572246", "item_ids": ["7975292311", "6772261344"],
            "new_item_ids": ["9317036191", "7798594239"], "payment_method_id": "gift_card_9886682"}
    call_tool("modify_pending_order_items", args, db)
    order = db["orders"]["#W5572246"]
    assert [i["item_id"] for i in order["items"]][:3] == ["9317036191", "1705063254", "7798594239"]
    assert order["items"][0]["options"] == {"color": "black", "size": "M"} and order["items"][0]["price"] == 22.57
    assert order["payment_history"][-1] == {"transaction_type": "payment", "amount": 0.43,
                                            "payment_method_id": "gift_card_9886682"}
    assert db["users"]["lucas_silva_6823"]["payment_methods"]["gift_card_9886682"]["balance"] == 49.57
    assert order["status"] == "pending (item modified)"
    # once per order: neither items nor the address nor a cancel afterwards
    refused(db, "modify_pending_order_items", "only pending orders",
            **{**args, "item_ids": ["9317036191"], "new_item_ids": ["5072914289"]})
    refused(db, "modify_pending_order_address", "only pending orders", order_id="#W5572246", **ADDRESS)
    refused(db, "cancel_pending_order", "only pending orders", order_id="#W5572246", reason="no longer needed")


def test_modify_pending_order_items_refunds_a_cheaper_variant(db: dict[str, Any]) -> None:
    call_tool("modify_pending_order_items", {"order_id": "#W3838455", "item_ids": ["7798594239"],
                                             "new_item_ids": ["1975274517"], "payment_method_id": "credit_card_6840179"},
              db)
    assert db["orders"]["#W3838455"]["payment_history"][-1] == {
        "transaction_type": "refund", "amount": 7.4, "payment_method_id": "credit_card_6840179"}


@pytest.mark.parametrize(("change", "match"), [
    ({"new_item_ids": ["5072914289"]}, "not a variant of Backpack"),  # a T-shirt
    ({"new_item_ids": ["3942133289"]}, "the same as the old one"),
    ({"item_ids": ["5072914289"], "new_item_ids": ["1286562382"]}, "is not in order"),
    ({"item_ids": ["3942133289", "3942133289"], "new_item_ids": ["6904422549", "6904422549"]}, "is not in order"),
    ({"item_ids": [], "new_item_ids": []}, "item_ids is empty"),
    ({"new_item_ids": ["6904422549", "1786584967"]}, "same length"),
    ({"payment_method_id": "credit_card_6840179"}, "does not belong"),  # Daniel Davis's card
])
def test_modify_pending_order_items_rules(db: dict[str, Any], change: dict[str, Any], match: str) -> None:
    args = {"order_id": "#W1767172", "item_ids": ["3942133289"], "new_item_ids": ["6904422549"],
            "payment_method_id": "credit_card_6032361", **change}
    refused(db, "modify_pending_order_items", match, **args)


def test_new_items_must_be_available(db: dict[str, Any]) -> None:
    order = db["orders"]["#W3838455"]  # tactile tenkeyless keyboard; the clicky tenkeyless is not available
    refused(db, "modify_pending_order_items", "not available", order_id=order["order_id"], item_ids=["6798839755"],
            new_item_ids=["6991253032"], payment_method_id="credit_card_6840179")


def test_a_gift_card_must_cover_the_difference(db: dict[str, Any]) -> None:
    db["users"]["lucas_silva_6823"]["payment_methods"]["gift_card_9886682"]["balance"] = 0.4
    refused(db, "modify_pending_order_items", "less than the price difference", order_id="#W5572246",
            item_ids=["7975292311", "6772261344"], new_item_ids=["9317036191", "7798594239"],
            payment_method_id="gift_card_9886682")


def test_return_delivered_order_items(db: dict[str, Any]) -> None:
    call_tool("return_delivered_order_items", {"order_id": "#W4144261", "item_ids": ["6850136825", "6638928470"],
                                               "payment_method_id": "credit_card_6840179"}, db)
    order = db["orders"]["#W4144261"]
    assert order["status"] == "return requested" and order["return_items"] == ["6638928470", "6850136825"]
    assert order["return_payment_method_id"] == "credit_card_6840179"
    refused(db, "return_delivered_order_items", "only delivered orders", order_id="#W4144261",
            item_ids=["7481268022"], payment_method_id="credit_card_6840179")


def test_a_refund_goes_to_the_original_method_or_a_gift_card(db: dict[str, Any]) -> None:
    # Mia Muller paid #W6609081 with credit_card_4797827; she also has credit_card_3880872 and a gift card
    refused(db, "return_delivered_order_items", "original payment method", order_id="#W6609081",
            item_ids=["4109375940"], payment_method_id="credit_card_3880872")
    refused(db, "return_delivered_order_items", "does not belong", order_id="#W6609081",
            item_ids=["4109375940"], payment_method_id="gift_card_8515173")  # Mei Li's gift card
    call_tool("return_delivered_order_items", {"order_id": "#W6609081", "item_ids": ["4109375940"],
                                               "payment_method_id": "gift_card_7772970"}, db)
    assert db["orders"]["#W6609081"]["return_payment_method_id"] == "gift_card_7772970"


@pytest.mark.parametrize("status", ["pending", "processed", "cancelled"])
def test_only_delivered_orders_are_returned_or_exchanged(db: dict[str, Any], status: str) -> None:
    order = order_with(db, status)
    item = order["items"][0]
    method = order["payment_history"][0]["payment_method_id"]
    refused(db, "return_delivered_order_items", "only delivered orders", order_id=order["order_id"],
            item_ids=[item["item_id"]], payment_method_id=method)
    refused(db, "exchange_delivered_order_items", "only delivered orders", order_id=order["order_id"],
            item_ids=[item["item_id"]], new_item_ids=[other_variant(db, item)["item_id"]], payment_method_id=method)


def test_exchange_delivered_order_items(db: dict[str, Any]) -> None:
    call_tool("exchange_delivered_order_items", {
        "order_id": "#W7439403", "item_ids": ["9010432766", "5252888561"],
        "new_item_ids": ["3987916599", "2130554186"], "payment_method_id": "credit_card_3725080"}, db)
    order = db["orders"]["#W7439403"]
    assert order["status"] == "exchange requested" and order["exchange_price_difference"] == -9.11
    assert order["exchange_items"] == ["5252888561", "9010432766"]
    assert order["exchange_new_items"] == ["2130554186", "3987916599"]
    assert [i["item_id"] for i in order["items"]] == ["3613616755", "9010432766", "5252888561"]  # until it arrives


def test_exchange_rules(db: dict[str, Any]) -> None:
    base = {"order_id": "#W7439403", "item_ids": ["9010432766"], "payment_method_id": "credit_card_3725080"}
    refused(db, "exchange_delivered_order_items", "not a variant of Hiking Boots", **base, new_item_ids=["2130554186"])
    refused(db, "exchange_delivered_order_items", "not available", **base, new_item_ids=["1622070938"])
    refused(db, "exchange_delivered_order_items", "does not belong", **{**base, "payment_method_id": "paypal_1373168"},
            new_item_ids=["3987916599"])


def test_modify_user_address(db: dict[str, Any]) -> None:
    call_tool("modify_user_address", {"user_id": "chen_wang_1106", **ADDRESS}, db)
    assert db["users"]["chen_wang_1106"]["address"] == ADDRESS
    assert db["orders"]["#W6365472"]["address"] != ADDRESS
    refused(db, "modify_user_address", "User not found", user_id="chen_wang", **ADDRESS)


def test_tools_without_the_database_are_a_harness_error() -> None:
    fn = TOOLS_BY_NAME["get_user_details"].fn
    assert fn is not None
    ctx = ToolContext(sample=Sample(id="x", input=""), workspace=Path("."), state=None)
    with pytest.raises(HarnessError, match=r"ctx\.state"):
        fn(user_id="mei_li_3257", ctx=ctx)


# --- the tasks ------------------------------------------------------------------------------------------------


def test_tasks_load_through_the_plugin_unchanged() -> None:
    samples, skipped = load_samples(bench_retail.BENCHMARK, files=[TASKS_PATH])
    assert skipped == 0 and len(samples) >= 12 and len(samples) == bench_retail.BENCHMARK.sample_count
    for s in samples:
        raw = SAMPLES[s.id]
        assert s.target == raw.target and s.metadata == raw.metadata and s.input == raw.input
        assert s.subject == raw.subject and s.subject in {"cancel", "modify", "return", "exchange", "info", "refusal",
                                                          "mixed"}
    rows = {r["id"]: r for r in read_tasks(TASKS_PATH)}
    assert all(SAMPLES[i].target["actions"] == r["actions"] for i, r in rows.items())


def test_every_task_is_well_formed() -> None:
    with_actions = 0
    for sample in SAMPLES.values():
        actions = sample.target["actions"]
        assert all(a["name"] in WRITE_TOOLS for a in actions), sample.id
        assert sample.metadata["user_turns"][-1] == STOP, sample.id
        changed = db_hash(gold_db(sample)) != db_hash(fresh_db())  # raises if a gold action is refused
        assert changed is bool(actions), sample.id
        with_actions += bool(actions)
        messages = bench_retail.prompt(sample)
        assert messages[0]["role"] == "system" and messages[1] == {"role": "user",
                                                                    "content": sample.metadata["user_turns"][0]}
        assert sample.input not in json.dumps(messages)  # the instruction stays hidden from the agent
    assert with_actions >= 10 and sum(len(s.target["actions"]) > 1 for s in SAMPLES.values()) >= 3


@pytest.mark.parametrize(("change", "match"), [
    ({"actions": [{"name": "delete_everything", "arguments": {}}]}, "names no retail tool"),
    ({"actions": [{"arguments": {}}]}, "must be an object with a name"),
    ({"user_turns": []}, "user_turns must start"),
    ({"user_turns": [STOP]}, "user_turns must start"),
    ({"outputs": [12.5]}, "outputs must be a list of strings"),
    ({"instruction": ""}, "instruction must be"),
])
def test_bad_task_rows_are_refused(tmp_path: Path, change: dict[str, Any], match: str) -> None:
    row = {**read_tasks(TASKS_PATH)[0], **change}
    with pytest.raises(ValueError, match=match):
        to_sample(row, 0, load_context())
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DatasetLoadError, match=match):
        load_samples(bench_retail.BENCHMARK, files=[path])


def load_context() -> Any:
    from pytest_jeval.core.benchmark import LoadContext

    return LoadContext(benchmark="retail", subset=None, seed=0, data_dir=None)


def test_a_broken_gold_action_is_an_error_not_a_zero() -> None:
    sample = SAMPLES["retail-001"]
    broken = Sample(id="broken", input="x", target={"actions": [
        {"name": "cancel_pending_order", "arguments": {"order_id": "#W5669256", "reason": "no longer needed"}}],
        "outputs": []}, metadata=sample.metadata)
    with pytest.raises(ValueError, match=r"gold action 0 \(cancel_pending_order\) fails"):
        gold_db(broken)


# --- the reward -------------------------------------------------------------------------------------------------


def episode_after(sample: Sample, actions: list[dict[str, Any]], replies: list[str]) -> Episode:
    """An episode as the loop would leave it: the tools called on its own database, then the replies."""
    state = fresh_db()
    messages: Messages = [*bench_retail.prompt(sample)]
    calls = []
    for i, action in enumerate(actions):
        result = call_tool(action["name"], action["arguments"], state, sample)
        call_id = f"call_{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": action["name"], "arguments": json.dumps(action["arguments"])}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)})
        calls.append(ToolCallRecord(id=call_id, name=action["name"], arguments=json.dumps(action["arguments"]),
                                    turn=i + 1, parsed=action["arguments"], result=json.dumps(result)))
    messages += [{"role": "assistant", "content": text} for text in replies]
    return Episode(messages=messages, tool_calls=calls, state=state, turns=len(actions) + len(replies))


def saying(sample: Sample) -> list[str]:
    return [f"Done. The amount is ${', '.join(sample.target['outputs'])}." if sample.target["outputs"] else "Done."]


@pytest.mark.parametrize("task_id", sorted(SAMPLES))
def test_the_gold_actions_and_outputs_get_reward_one(task_id: str) -> None:
    sample = SAMPLES[task_id]
    score = retail_score(sample, episode_after(sample, sample.target["actions"], saying(sample)))
    assert score.correct is True and score.value == 1.0, score.metadata
    assert score.metadata["db_match"] is True and score.metadata["outputs_missing"] == []
    assert score.metadata["write_calls"] == [a["name"] for a in sample.target["actions"]]


@pytest.mark.parametrize("task_id", sorted(t for t, s in SAMPLES.items() if s.target["actions"]))
def test_skipping_any_gold_action_gets_zero(task_id: str) -> None:
    sample = SAMPLES[task_id]
    actions = sample.target["actions"]
    for skip in range(len(actions)):
        kept = actions[:skip] + actions[skip + 1:]
        score = retail_score(sample, episode_after(sample, kept, saying(sample)))
        assert score.correct is False and score.value == 0.0
        assert score.metadata["db_match"] is False and score.metadata["outputs_missing"] == []


@pytest.mark.parametrize("task_id", sorted(t for t, s in SAMPLES.items() if s.target["outputs"]))
def test_a_missing_output_gets_zero(task_id: str) -> None:
    sample = SAMPLES[task_id]
    score = retail_score(sample, episode_after(sample, sample.target["actions"], ["All done, anything else?"]))
    assert score.correct is False and score.value == 0.0
    assert score.metadata["db_match"] is True and score.metadata["outputs_missing"] == sample.target["outputs"]


def test_an_extra_write_gets_zero_and_a_commuting_order_still_one() -> None:
    sample = SAMPLES["retail-004"]
    extra = [*sample.target["actions"], {"name": "cancel_pending_order",
                                         "arguments": {"order_id": "#W6365472", "reason": "no longer needed"}}]
    assert retail_score(sample, episode_after(sample, extra, ["Done."])).value == 0.0
    swapped = list(reversed(sample.target["actions"]))
    assert retail_score(sample, episode_after(sample, swapped, ["Done."])).value == 1.0


def test_an_episode_without_a_database_gets_zero() -> None:
    sample = SAMPLES["retail-011"]
    episode = episode_after(sample, [], ["Sorry, a processed order cannot be cancelled."])
    assert retail_score(sample, episode).value == 1.0
    episode.state = None
    score = retail_score(sample, episode)
    assert score.value == 0.0 and score.metadata["db_hash"] is None


def test_outputs_match_case_insensitively_without_commas() -> None:
    assert missing_outputs(["1093.34", "Tracking"], ["Your total is $1,093.34", "TRACKING number"]) == []
    assert missing_outputs(["1093.34"], ["Your total is $1093.3"]) == ["1093.34"]
    assert missing_outputs(["1,093.34"], ["1093.34"]) == []
    assert missing_outputs(["x"], []) == ["x"]


def test_only_assistant_messages_count_as_said() -> None:
    sample = SAMPLES["retail-002"]
    episode = episode_after(sample, sample.target["actions"], ["It is cancelled."])
    episode.messages.append({"role": "user", "content": "So my balance is 231.43?"})
    episode.messages.append({"role": "tool", "tool_call_id": "x", "content": "231.43"})
    assert retail_score(sample, episode).metadata["outputs_missing"] == ["231.43"]
    episode.messages.append({"role": "assistant", "content": [{"type": "text", "text": "Yes: 231.43."}]})
    assert retail_score(sample, episode).value == 1.0


# --- the users ---------------------------------------------------------------------------------------------------


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_scripted_user_replays_the_turns_then_stops() -> None:
    user = ScriptedUser(["open", "second", "third", STOP, "never"])
    talk: Messages = [{"role": "user", "content": "open"}, {"role": "assistant", "content": "hi"}]
    assert run(user.next_message(talk)) == "second"
    assert run(user.next_message(talk)) == "second"  # the conversation decides, not a counter
    talk += [{"role": "user", "content": "second"}, {"role": "assistant", "content": "ok"}]
    assert run(user.next_message(talk)) == "third"
    talk += [{"role": "user", "content": "third"}, {"role": "assistant", "content": "done"}]
    assert run(user.next_message(talk)) is None
    talk += [{"role": "user", "content": "?"}, {"role": "assistant", "content": "?"}]
    assert run(user.next_message(talk)) is None  # never past the stop
    assert run(ScriptedUser(["only"]).next_message(talk[:2])) is None  # the turns ran out


class FakeChat:
    """An AsyncChat that answers from a list and keeps what it was sent."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.sent: list[Messages] = []

    async def __call__(self, messages: Messages) -> Reply:
        self.sent.append(copy.deepcopy(messages))
        return Reply(text=self.answers.pop(0), model="user-model")


def test_llm_user_sees_the_instruction_and_the_talk_from_its_side() -> None:
    sample = SAMPLES["retail-002"]
    chat = FakeChat(["It's order #W4325722.", f"  {STOP}", ""])
    user = make_user(sample, chat)
    assert isinstance(user, LLMUser)
    talk: Messages = [{"role": "user", "content": "Hello, I want to cancel."},
                      {"role": "assistant", "content": "Which order?"}]
    assert run(user.next_message(talk)) == "It's order #W4325722."
    sent = chat.sent[0]
    assert sent[0]["role"] == "system" and sample.input in sent[0]["content"] and STOP in sent[0]["content"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[2]["content"] == "Hello, I want to cancel." and sent[3]["content"] == "Which order?"
    assert run(user.next_message(talk)) is None  # ###STOP###
    assert run(user.next_message(talk)) is None  # an empty answer ends the talk too
    assert USER_SYSTEM.count("{instruction}") == 1


def test_without_a_user_model_the_user_is_scripted() -> None:
    sample = SAMPLES["retail-001"]
    user = make_user(sample, None)
    assert isinstance(user, ScriptedUser) and user.turns == sample.metadata["user_turns"]


# --- the plugin --------------------------------------------------------------------------------------------------


def test_benchmark_runs_only_as_an_agent_with_its_tools() -> None:
    b = bench_retail.BENCHMARK
    assert b.backends == ("agent",) and b.agent is not None
    assert b.agent.tools == TOOLS and b.agent.user is make_user and b.agent.environment is bench_retail.environment




# --- through the plugin: a scripted oracle agent on the strict test server ---------------------------------------


def oracle_steps(sample: Sample, skip: int | None = None) -> list[ScriptStep]:
    """A model that authenticates, reads the orders, makes the gold calls one per turn and then says the outputs.

    ``skip`` leaves one gold action out. The last step (the final answer) repeats for every later user turn.
    """
    user_id = sample.metadata["user_id"]
    user_db = fresh_db()["users"][user_id]
    steps: list[ScriptStep] = [tool_answer(
        ToolCallSpec("find_user_id_by_email", {"email": user_db["email"]}),
        ToolCallSpec("get_user_details", {"user_id": user_id}),
        *(ToolCallSpec("get_order_details", {"order_id": o}) for o in user_db["orders"]))]
    for i, action in enumerate(sample.target["actions"]):
        if i != skip:
            steps.append(tool_answer(ToolCallSpec(action["name"], action["arguments"])))
    outputs = ", ".join(sample.target["outputs"])
    steps.append(f"All done. The amount is {outputs}. Anything else?" if outputs else "All done. Anything else?")
    return steps


USER_MODEL = "user-model"


def agent_suite(pytester: pytest.Pytester, server: FakeOpenAIServer, record_ids: list[str], extra: str = "",
                head: str = "") -> Path:
    path = pytester.path / "suite.toml"
    path.write_text(f"""
{head}
[run]
output_dir = "out"
max_retries = 0
request_timeout = 10
cache = false

[[models]]
name = "test-model"
base_url = "{server.base_url}"
api_key = "x"

[[benchmarks]]
name = "retail"
record_ids = {json.dumps(record_ids)}
{extra}
""")
    return path


def records_of(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "out" / "retail_test-model.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_oracle_agent_gets_one_and_skipping_an_action_gets_zero(pytester: pytest.Pytester) -> None:
    full, skipping = SAMPLES["retail-013"], SAMPLES["retail-004"]
    scripts = {full.metadata["user_turns"][0]: oracle_steps(full),
               skipping.metadata["user_turns"][0]: oracle_steps(skipping, skip=1)}
    with FakeOpenAIServer(script_responder(scripts, default="no script")) as server:
        suite = agent_suite(pytester, server, [full.id, skipping.id], extra="repeats = 2")
        result = pytester.runpytest("--jeval-config", str(suite), "-rA")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=2, failed=2)
    records = {r["record_id"]: r for r in records_of(pytester)}
    assert set(records) == {f"{full.id}@1", f"{full.id}@2", f"{skipping.id}@1", f"{skipping.id}@2"}
    for n in (1, 2):
        good, bad = records[f"{full.id}@{n}"], records[f"{skipping.id}@{n}"]
        assert good["is_correct"] is True and good["score"] == 1.0
        assert good["scoring_metadata"]["db_match"] is True and good["scoring_metadata"]["outputs_missing"] == []
        assert good["scoring_metadata"]["write_calls"] == ["modify_pending_order_address",
                                                           "modify_pending_order_items"]
        assert bad["is_correct"] is False and bad["score"] == 0.0 and bad["scoring_metadata"]["db_match"] is False
        assert bad["scoring_metadata"]["write_calls"] == ["modify_user_address"]
        # the scripted user spoke its turns to the end: 1 read turn + the writes + one answer per user turn
        turns = len(full.metadata["user_turns"]) - 1
        assert good["turn_count"] == 1 + 2 + turns and good["agent"]["stop_reason"] == "final"
        reads = 2 + len(fresh_db()["users"][full.metadata["user_id"]]["orders"])
        assert good["agent"]["tool_errors"] == 0 and good["tool_calls"] == reads + 2
    summary = json.loads((pytester.path / "out" / "retail_test-model.jsonl.summary.json").read_text())
    assert summary["pass_hat_k"] == {"1": 0.5, "2": 0.5}
    first = requests[0]["body"]
    assert first["messages"][0] == {"role": "system", "content": POLICY}
    assert {t["function"]["name"] for t in first["tools"]} == set(TOOLS_BY_NAME)
    assert all(full.input not in json.dumps(r["body"]) for r in requests)  # the instruction stays with the user


def test_a_user_model_plays_the_customer(pytester: pytest.Pytester) -> None:
    sample = SAMPLES["retail-002"]
    oracle = script_responder({sample.metadata["user_turns"][0]: oracle_steps(sample)}, default="no script")
    said: list[list[dict[str, Any]]] = []

    def respond(body: dict[str, Any], attempt: int) -> Any:
        if body.get("model") != USER_MODEL:
            return oracle(body, attempt)
        said.append(body["messages"])
        return "Thank you, that's all." if len(said) == 1 else STOP

    with FakeOpenAIServer(respond, models=("test-model", USER_MODEL)) as server:
        head = f'[user]\nmodel = "{USER_MODEL}"\nbase_url = "{server.base_url}"\napi_key = "x"\n'
        suite = agent_suite(pytester, server, [sample.id], head=head)
        result = pytester.runpytest("--jeval-config", str(suite), "-rA")
    assert result.ret == 0, result.stdout.str()
    (record,) = records_of(pytester)
    assert record["is_correct"] is True and record["turn_count"] == 4  # reads, the cancel, two answers
    assert len(said) == 2 and sample.input in said[0][0]["content"]
    assert said[1][-1] == {"role": "user", "content": "All done. The amount is 231.43. Anything else?"}
    assert said[1][-2] == {"role": "assistant", "content": "Thank you, that's all."}


def test_a_bad_tasks_file_is_refused_before_any_request(pytester: pytest.Pytester) -> None:
    row = {**read_tasks(TASKS_PATH)[0], "actions": [{"name": "refund_everything", "arguments": {}}]}
    (pytester.path / "tasks.jsonl").write_text(json.dumps(row) + "\n")
    with FakeOpenAIServer(script_responder({}, default="no script")) as server:
        suite = agent_suite(pytester, server, [row["id"]], extra='data_files = "tasks.jsonl"')
        result = pytester.runpytest("--jeval-config", str(suite))
        assert server.request_count == 0
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*names no retail tool: 'refund_everything'*"])


def test_a_rerun_replays_the_episode_from_the_cache(pytester: pytest.Pytester) -> None:
    sample = SAMPLES["retail-010"]
    with FakeOpenAIServer(script_responder({sample.metadata["user_turns"][0]: oracle_steps(sample)})) as server:
        suite = agent_suite(pytester, server, [sample.id])
        suite.write_text(suite.read_text().replace("cache = false", "cache = true"))
        first = pytester.runpytest("--jeval-config", str(suite))
        sent = server.request_count
        (before,) = records_of(pytester)
        second = pytester.runpytest("--jeval-config", str(suite))
        assert server.request_count == sent > 0
    assert first.ret == second.ret == 0
    (after,) = records_of(pytester)
    assert before["score"] == after["score"] == 1.0
    assert after["scoring_metadata"]["db_hash"] == before["scoring_metadata"]["db_hash"]



def test_jeval_rescore_rebuilds_the_database_from_inline_trajectories(pytester: pytest.Pytester, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_jeval.cli import main
    from pytest_jeval.scoring.registry import call_scorer

    full, skipping = SAMPLES["retail-013"], SAMPLES["retail-004"]
    scripts = {full.metadata["user_turns"][0]: oracle_steps(full),
               skipping.metadata["user_turns"][0]: oracle_steps(skipping, skip=0)}
    with FakeOpenAIServer(script_responder(scripts, default="no script")) as server:
        # repeated runs (ids <task>@<n>) are rescored against their task's sample too
        suite = agent_suite(pytester, server, [full.id, skipping.id], extra="repeats = 2", head="")
        suite.write_text(suite.read_text().replace("cache = false", 'cache = false\ntrajectories = "inline"'))
        assert pytester.runpytest("--jeval-config", str(suite)).ret == 1
        sent = server.request_count
        source = pytester.path / "out" / "retail_test-model.jsonl"
        target = tmp_path / "rescored.jsonl"
        capsys.readouterr()
        assert main(["rescore", str(source), "-o", str(target)]) == 0
        out = capsys.readouterr().out
        assert server.request_count == sent
    assert "0 verdicts changed" in out and "summary fields changed: none" in out, out
    assert target.read_bytes() == source.read_bytes()
    records = {r["record_id"]: r for r in records_of(pytester)}
    assert {rid: r["score"] for rid, r in records.items()} == {
        f"{full.id}@1": 1.0, f"{full.id}@2": 1.0, f"{skipping.id}@1": 0.0, f"{skipping.id}@2": 0.0}
    # the rebuilt database follows the trajectory: a call that failed in the run is not replayed ...
    record = copy.deepcopy(records[f"{full.id}@1"])
    calls = record["trajectory"]["tool_calls"]
    failed = {**calls[-1], "name": "modify_user_address", "error": "invalid arguments (the loop refused them)",
              "parsed": {"user_id": full.metadata["user_id"], **ADDRESS}}
    calls.append(failed)
    assert call_scorer("retail", record, sample=full).value == 1.0
    calls.pop()
    # ... and without its last write the full oracle scores 0
    last_write = max(i for i, c in enumerate(calls) if c["name"] in WRITE_TOOLS)
    del calls[last_write]
    score = call_scorer("retail", record, sample=full)
    assert score.value == 0.0 and score.metadata["db_match"] is False
    # without an inline trajectory the stored verdict stays, marked as such
    del record["trajectory"]
    kept = call_scorer("retail", record, sample=full)
    assert (kept.correct, kept.value, kept.metadata["rescore"]) == (True, 1.0, "stored")
