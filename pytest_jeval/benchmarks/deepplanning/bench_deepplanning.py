"""deepplanning: DeepPlanning's shopping planning (Qwen, 2026): the agent shops with tools, the cart is the answer.

Each case of levels 1-3 (``[benchmarks.options] levels``) gives the agent a shopping request, the
fifteen shopping tools of upstream's schema over the case's own catalogue, user and cart (a fresh copy
per episode), and the level's rules (1: the cheapest products; 2: within a budget; 3: with coupons).
When the agent first answers, it is asked once to check the cart, as upstream's runner does. The case is
correct when the cart holds every ground-truth product and uses every ground-truth coupon in its exact
quantity (upstream's ``case_score``); no judge. The summary reports upstream's figures per level and
the share of cases that ended mid-tool-call (invalid above 10%). With ``domain = "travel"`` the agent
plans a trip with upstream's nine travel tools over the case's database and writes the plan; the
``[judge]`` converts it to upstream's JSON and upstream's commonsense and hard-constraint checks score it
(:mod:`.travel`). See docs/deepplanning.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, HubDataset, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, Episode, HarnessError
from pytest_jeval.agents.spec import AsyncChat, OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks.deepplanning.data import Options, read_case, read_rows, to_sample
from pytest_jeval.benchmarks.deepplanning.scoring import case_score, summarize_shopping
from pytest_jeval.benchmarks.deepplanning.shop import Shop
from pytest_jeval.benchmarks.deepplanning.tools import TOOLS
from pytest_jeval.benchmarks.deepplanning.travel import (
    rescore_travel,
    score_travel,
    summarize_travel,
    travel_environment,
    travel_prompt,
)
from pytest_jeval.benchmarks.deepplanning.travel_tools import TRAVEL_TOOLS
from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer

CART_RULE = ("The shopping cart is the single source of truth: what is in it when you finish is the user's "
             "purchase. Check it with get_cart_info before you answer, then give the final cart, its price and "
             "why this choice is the cheapest that meets every requirement.")
LEVEL_RULES = {
    1: ("Find the products the user needs (types, quantities, and sizes or gender from the user's profile when "
        "the request leaves them open) and put the cheapest combination that meets every requirement in the cart."),
    2: ("Find the products the user needs (types, quantities, and sizes or gender from the user's profile when "
        "the request leaves them open). The user's budget is a hard limit: among the combinations within it, "
        "put the cheapest in the cart. If none fits the budget, put the cheapest combination in the cart and say "
        "that the budget is not enough and what the minimum cost is."),
    3: ("Find the products the user needs (types, quantities, and sizes or gender from the user's profile when "
        "the request leaves them open) and the coupons the user holds, and reach the lowest final price with "
        "products and coupons together; respect the budget if there is one. Coupon rules: a coupon needs the "
        "user to hold enough of it and its price scope to reach its threshold; a cross-store coupon applies to "
        "the whole cart's total, a same-brand coupon only to one brand's subtotal; different coupons stack when "
        "each scope reaches its own threshold, a same-brand discount being taken off the total before a "
        "cross-store coupon is checked. Add the coupons you use to the cart."),
}
CHECK = ("Check whether the items in the cart meet the requirements. If they do not, add what is needed; if "
         "several solutions exist, choose the best. The result is what is in the cart. If the task is complete, "
         "stop.")
TRAVEL_NO_ORACLE = ("deepplanning travel has no gold plan to replay: upstream ships none, and a case's hard "
                    "constraints name only the required train/flight, hotel, restaurant and attractions, not a "
                    "whole itinerary that passes the commonsense checks")
DEVIATIONS = [
    "system-prompts: each level's rules are the project's wording of upstream's level prompts",
    "tool-errors: a refused call is a tool error whose message is upstream's (upstream returns {\"error\": ...})",
]


def _travel(sample: Sample) -> bool:
    return sample.metadata.get("domain") == "travel"


def prompt(sample: Sample) -> Messages:
    """The level's rules as the system prompt, then the user's request (travel: upstream's planning rules)."""
    if _travel(sample):
        return travel_prompt(sample)
    level = int(sample.metadata["level"])
    return [{"role": "system", "content": f"You are a shopping assistant. {LEVEL_RULES[level]} {CART_RULE}"},
            {"role": "user", "content": sample.input}]


class CheckTheCart:
    """Upstream's second phase: after the agent's first answer, one request to check the cart; then done."""

    def __init__(self) -> None:
        self.asked = False

    async def next_message(self, conversation: Messages) -> str | None:
        """The check request once, then None."""
        if self.asked:
            return None
        self.asked = True
        return CHECK


class NoFollowUp:
    """Travel: upstream's runner ends at the agent's first answer."""

    async def next_message(self, conversation: Messages) -> str | None:
        """Nothing more."""
        return None


def make_user(sample: Sample, chat: AsyncChat | None) -> CheckTheCart | NoFollowUp:
    """The scripted check (a ``[user]`` model is not used); none for travel."""
    return NoFollowUp() if _travel(sample) else CheckTheCart()


def environment(sample: Sample, workspace: Path) -> Any:
    """The case's shop, with a fresh copy of its initial cart (travel: the case's database, read afresh)."""
    if _travel(sample):
        return travel_environment(sample)
    return Shop.of(read_case(Path(sample.metadata["case_dir"])))


def tools_of(sample: Sample) -> list[Any]:
    """The shopping tools, or the travel tools for a travel case."""
    return list(TRAVEL_TOOLS) if _travel(sample) else list(TOOLS)


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The ground truth through the tools: each product (in its quantity), then each coupon, then an answer.
    Travel has no gold plan (upstream ships none, and its hard constraints name only some of a plan's
    parts), so the oracle is refused there with that reason."""
    if _travel(sample):
        raise HarnessError(TRAVEL_NO_ORACLE)
    validation = read_case(Path(sample.metadata["case_dir"])).validation
    steps: list[OracleStep] = [
        ToolStep("add_product_to_cart", {"product_id": str(p["product_id"]), "quantity": int(p.get("quantity") or 1)})
        for p in validation.get("ground_truth_products") or [] if p.get("product_id")]
    steps += [ToolStep("add_coupon_to_cart", {"coupon_name": name, "quantity": int(quantity)})
              for name, quantity in (validation.get("ground_truth_coupons") or {}).items()]
    return [*steps, SayStep("The cart holds the products and coupons the request needs.")]


def verdict(target: dict[str, Any], cart: dict[str, Any], *, level: int, completed: bool,
            nothing_passes: bool) -> Score:
    """Upstream's case score of a final cart against the ground truth (see :mod:`.scoring`)."""
    figures = case_score(cart, list(target["products"]), dict(target["coupons"]))
    correct = figures["case_score"] == 1.0
    items = [{"product_id": i.get("product_id"), "quantity": i.get("quantity")} for i in cart.get("items") or []]
    final = {"items": items, "used_coupons": figures["used_coupons"]}
    return Score(correct=correct, value=1.0 if correct else 0.0, extracted=final, expected=target,
                 metadata={"level": level, **figures, "completed": completed, "cart": final,
                           "do_nothing_passes": nothing_passes, "deviations": DEVIATIONS})


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's shopping statistics over the shopping records, its travel metrics over the travel ones."""
    travel = [r for r in records if _travel_record(r)]
    shopping = [r for r in records if not _travel_record(r)]
    return {**(summarize_shopping(shopping) if shopping else {}), **(summarize_travel(travel) if travel else {})}


BENCHMARK = Benchmark(
    name="deepplanning",
    category="agentic",
    description=("DeepPlanning: shop a cart with 15 tools under constraints, budgets and coupons; or plan a trip "
                 "with 9 travel tools, scored by upstream's commonsense and hard-constraint checks"),
    to_sample=to_sample,
    prompt=prompt,
    read_rows=read_rows,
    options=Options,
    data_dir=("upstream's database_level{1,2,3}/ folders or Qwen/DeepPlanning's database_level{1,2,3}.tar.gz; "
              "for travel, upstream's travelplanning/ folder (data/travelplanning_query_<lang>.json and "
              "database/database_<lang>/ or its zip)"),
    dataset=HubDataset(path="Qwen/DeepPlanning", split="train"),
    scorer="deepplanning",
    scoring=("the cart's product ids and coupon quantities cover the ground truth (upstream's case_score); travel: "
             "every commonsense and hard constraint passes (upstream's case_acc)"),
    backends=("agent",),
    summarize_extra=summarize,
    agent=AgentSpec(tools=tools_of, environment=environment, user=make_user, max_turns=800, oracle=gold_steps),
)


def _travel_record(record: dict[str, Any]) -> bool:
    return (record.get("scoring_metadata") or {}).get("domain") == "travel"


def test_deepplanning(sample: Sample, episode: Episode, judge: ModelClient | None, score: ScoreSink) -> None:
    """Correct when the final cart meets the ground truth (travel: when the plan passes every check)."""
    if _travel(sample):
        score(score_travel(sample, episode, judge))
        return
    shop = episode.state
    if not isinstance(shop, Shop):
        raise HarnessError("the episode has no shop")
    target = sample.target
    initial = case_score(read_case(Path(sample.metadata["case_dir"])).cart, list(target["products"]),
                         dict(target["coupons"]))
    score(verdict(target, shop.cart, level=int(sample.metadata["level"]), completed=episode.stop_reason == "final",
                  nothing_passes=initial["case_score"] == 1.0))


@register_scorer("deepplanning")
def record_deepplanning(record: dict[str, Any]) -> Score:
    """deepplanning: the case score again, from the final cart and the ground truth stored in the record."""
    meta = record.get("scoring_metadata") or {}
    if meta.get("domain") == "travel":
        return rescore_travel(record)
    cart, target = meta.get("cart"), record.get("expected")
    if not isinstance(target, dict) or "products" not in target:
        raise ValueError(f"record {record.get('record_id')!r} has no stored ground truth")
    return verdict(target, cart if isinstance(cart, dict) else {}, level=int(meta.get("level") or 0),
                   completed=meta.get("completed") is not False, nothing_passes=bool(meta.get("do_nothing_passes")))
