"""deepplanning's parts without a model: upstream's case score, the shop's rules, BM25, and the loaders."""

from __future__ import annotations

import json
import math
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks._bm25 import BM25
from pytest_jeval.benchmarks.deepplanning import bench_deepplanning as bench
from pytest_jeval.benchmarks.deepplanning.data import Options, read_case
from pytest_jeval.benchmarks.deepplanning.scoring import case_score, summarize_shopping
from pytest_jeval.benchmarks.deepplanning.shop import Shop, ShopError
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "deepplanning"
CROSS = "Cross-store: ¥30 off every ¥300"
GOLD = ["b2e1d3c2", "d4c3f5a4"]


def cart(*products: str, coupons: dict[str, int] | None = None) -> dict[str, Any]:
    return {"items": [{"product_id": p, "quantity": 1, "price": 1.0} for p in products],
            "used_coupons": [{"coupon_name": n, "quantity": q} for n, q in (coupons or {}).items()]}


def test_case_score_is_upstreams() -> None:
    assert case_score(cart(*GOLD, coupons={CROSS: 2}), GOLD, {CROSS: 2})["case_score"] == 1.0
    wrong = case_score(cart("b2e1d3c2", "e5b4a6f5", coupons={CROSS: 2}), GOLD, {CROSS: 2})  # one wrong product
    assert wrong["case_score"] == 0.0 and wrong["missing_products"] == ["d4c3f5a4"]
    assert wrong["matched_count"] == 2 and wrong["expected_count"] == 3 and wrong["score"] == pytest.approx(2 / 3)
    short = case_score(cart(*GOLD, coupons={CROSS: 1}), GOLD, {CROSS: 2})  # one coupon short
    assert short["case_score"] == 0.0 and short["matched_coupons"] == []
    # upstream does not fail a case for products beyond the ground truth; it reports them
    extra = case_score(cart(*GOLD, "a7f6c8d7", coupons={CROSS: 2}), GOLD, {CROSS: 2})
    assert extra["case_score"] == 1.0 and extra["extra_products"] == ["a7f6c8d7"]
    assert case_score(cart(), GOLD, {})["case_score"] == 0.0


def test_bm25_matches_a_hand_computed_score() -> None:
    index = BM25([["red", "shoe"], ["blue", "shoe"], ["red", "hat", "red"]])
    # 'hat' is in 1 of 3 documents: idf = ln(2.5) - ln(1.5); document 2 has length 3, the mean length is 7/3
    idf = math.log(2.5) - math.log(1.5)
    norm = 1 - 0.75 + 0.75 * 3 / (7 / 3)
    assert index.scores(["hat"]) == pytest.approx([0.0, 0.0, idf * 2.5 / (1 + 1.5 * norm)])
    # a term in more than half the documents gets 0.25 times the mean idf (here 'shoe', in 3 of 4)
    index = BM25([["red", "shoe"], ["blue", "shoe"], ["green", "hat"], ["shoe", "sock"]])
    rare, common = math.log(3.5) - math.log(1.5), math.log(1.5) - math.log(3.5)
    assert index.idf["shoe"] == pytest.approx(0.25 * (5 * rare + common) / 6)


@pytest.fixture
def shop() -> Shop:
    return Shop.of(read_case(DATA / "database_level3" / "case_1"))


def test_the_shops_rules(shop: Shop) -> None:
    assert shop.search("martens ankle boots") == ["b8e7d9c8"]
    assert shop.search("vans canvas sneakers") == []  # every score is below upstream's threshold of 2 here
    assert shop.search("") == []
    assert shop.transport_days("a1f0c2d1", "beijing")["estimated_delivery_days"] == 1  # SC to NC 3, SF -2
    assert shop.transport_days("e5b4a6f5", "guangdong")["estimated_delivery_days"] == 8  # NW to SC 4, remote 2, post 2
    with pytest.raises(ShopError, match="Could not determine a valid province"):
        shop.transport_days("a1f0c2d1", "atlantis")
    with pytest.raises(ShopError, match="Insufficient stock"):
        shop.add_product("f6a5b7e6", 4)
    with pytest.raises(ShopError, match="Some product_ids not found"):
        shop.space(["nope"])
    shop.add_product("b2e1d3c2", 1)
    with pytest.raises(ShopError, match=r"Cart total 289\.0 is insufficient"):
        shop.add_coupon(CROSS, 1)
    shop.add_product("d4c3f5a4", 1)
    with pytest.raises(ShopError, match="User owns 1 of 'Same-brand"):
        shop.add_coupon("Same-brand: ¥25 off every ¥200", 2)
    with pytest.raises(ShopError, match="requires VIP status"):
        shop.user["coupons"]["VIP: ¥200 off every ¥1,000"] = 1
        shop.add_coupon("VIP: ¥200 off every ¥1,000", 1)
    got = shop.add_coupon(CROSS, 2)
    assert got["summary"] == {"total_items_count": 2, "total_price": 748.0 - 60.0}
    shop.remove_coupon(CROSS, 1)
    assert shop.cart["used_coupons"] == [{"coupon_name": CROSS, "quantity": 1}]
    shop.remove_product("b2e1d3c2", 5)
    assert [i["product_id"] for i in shop.cart["items"]] == ["d4c3f5a4"]


def test_each_episode_gets_a_fresh_cart(shop: Shop) -> None:
    shop.add_product("b2e1d3c2", 1)
    assert Shop.of(read_case(DATA / "database_level3" / "case_1")).cart["items"] == []


def test_the_oracle_is_the_ground_truth_through_the_tools() -> None:
    sample = {s.id: s for s in load_samples(bench.BENCHMARK, local_dir=DATA, options=Options(levels=[3]))[0]}
    steps = bench.gold_steps(sample["level3-case_1"])
    assert [(s.name, s.arguments) for s in steps[:-1]] == [  # type: ignore[union-attr]
        ("add_product_to_cart", {"product_id": "b2e1d3c2", "quantity": 1}),
        ("add_product_to_cart", {"product_id": "d4c3f5a4", "quantity": 1}),
        ("add_coupon_to_cart", {"coupon_name": CROSS, "quantity": 2})]


def archived(tmp_path: Path, levels: tuple[int, ...]) -> Path:
    root = tmp_path / "copy"
    (root / "database_zip").mkdir(parents=True)
    for level in levels:
        with tarfile.open(root / "database_zip" / f"database_level{level}.tar.gz", "w:gz") as tar:
            tar.add(DATA / f"database_level{level}", arcname=f"database_level{level}")
    return root


def test_archives_are_read_and_unpacked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = archived(tmp_path, (1, 3))
    got = load_samples(bench.BENCHMARK, local_dir=root, options=Options(levels=[1, 3]))[0]
    assert [s.id for s in got] == ["level1-case_1", "level1-case_2", "level3-case_1"]
    unpacked = sorted(p.name for p in (tmp_path / "cache" / "pytest-jeval" / "deepplanning").iterdir())
    assert len(unpacked) == 2
    load_samples(bench.BENCHMARK, local_dir=root, options=Options(levels=[1, 3]))
    assert sorted(p.name for p in (tmp_path / "cache" / "pytest-jeval" / "deepplanning").iterdir()) == unpacked


def test_bad_input_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DatasetLoadError, match=rf"{tmp_path} holds neither database_level2/ nor "
                                               r"database_level2.tar.gz"):
        load_samples(bench.BENCHMARK, local_dir=tmp_path, options=Options(levels=[2]))
    copy = tmp_path / "copy"
    shutil.copytree(DATA, copy)
    products = copy / "database_level1" / "case_2" / "products.jsonl"
    products.write_text(products.read_text().replace('"name"', '"name', 1))
    with pytest.raises(DatasetLoadError, match=rf"{products} line 1 is malformed"):
        load_samples(bench.BENCHMARK, local_dir=copy, options=Options(levels=[1]))
    products.unlink()
    with pytest.raises(DatasetLoadError, match=rf"{products} is missing"):
        load_samples(bench.BENCHMARK, local_dir=copy, options=Options(levels=[1]))
    validation = copy / "database_level2" / "case_1" / "validation_cases.json"
    validation.write_text(json.dumps({"ground_truth_products": []}))
    with pytest.raises(DatasetLoadError, match=rf"{validation} has no query"):
        load_samples(bench.BENCHMARK, local_dir=copy, options=Options(levels=[2]))
    broken = tmp_path / "broken"
    (broken / "database_zip").mkdir(parents=True)
    (broken / "database_zip" / "database_level1.tar.gz").write_bytes(b"not an archive")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(DatasetLoadError, match=r"is not a readable \.tar\.gz archive"):
        load_samples(bench.BENCHMARK, local_dir=broken, options=Options(levels=[1]))


def test_the_hub_offline_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # read when the libraries are imported: set theirs too
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(DatasetLoadError, match=r"cannot download database_level1.tar.gz of 'Qwen/DeepPlanning'.*"
                                               r"set data_dir"):
        load_samples(bench.BENCHMARK, options=Options(levels=[1]))


def test_options_refuse_an_unknown_domain() -> None:
    with pytest.raises(ValueError, match="shopping"):
        Options(domain="flying")
    with pytest.raises(ValueError, match="levels must be distinct values among 1, 2, 3"):
        Options(levels=[4])


def record(level: int, correct: bool, completed: bool = True, matched: int = 1, expected: int = 1) -> dict[str, Any]:
    return {"is_correct": correct, "error": None, "scoring_metadata": {
        "level": level, "matched_count": matched, "expected_count": expected, "completed": completed,
        "extra_products_count": 0, "do_nothing_passes": False}}


def test_the_summary_per_level_and_the_incomplete_share() -> None:
    records = [record(1, True), record(1, False, matched=1, expected=2), record(3, False, completed=False,
                                                                                 matched=0, expected=3)]
    got = summarize_shopping(records)
    assert got["levels"]["level_1"]["average_case_score"] == 0.5 and got["levels"]["level_1"]["match_rate"] == 2 / 3
    assert got["levels"]["level_3"]["incomplete_rate"] == 1.0 and got["levels"]["level_3"]["valid"] is False
    assert got["shopping"]["total_cases"] == 3 and got["shopping"]["match_rate"] == 2 / 6
    assert got["shopping"]["valid"] is False and got["do_nothing_passes"] == 0


def test_rescoring_needs_only_the_record() -> None:
    from pytest_jeval.results.records import score_fields
    from pytest_jeval.scoring.registry import call_scorer

    target = {"products": GOLD, "coupons": {CROSS: 2}}
    for coupons, correct in (({CROSS: 2}, True), ({CROSS: 1}, False)):
        scored = bench.verdict(target, cart(*GOLD, coupons=coupons), level=3, completed=True, nothing_passes=False)
        record = {"record_id": "level3-case_1", **score_fields(scored, expected=target)}
        again = call_scorer("deepplanning", record)
        assert again.correct is correct and again.metadata == scored.metadata
