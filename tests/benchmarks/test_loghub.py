"""loghub: the generator, the LogHub structured-CSV formats, the label never reaching the prompt, the scoring.

The real-format files are written here, in tmp_path, in LogHub's schemas (HDFS
``LineId,Date,Time,Pid,Level,Component,Content,EventId,EventTemplate`` with
``anomaly_label.csv`` = ``BlockId,Label``; BGL ``LineId,Label,Timestamp,Date,Node,Time,
NodeRepeat,Type,Component,Level,Content,EventId,EventTemplate``) from the generator's lines,
so the tests know every label and can check that flipping the labels changes no prompt.
"""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks import _loghub_gen as gen
from pytest_jeval.benchmarks import bench_loghub as lh
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.bench import serve

BUNDLED = Path(lh.__file__).resolve().parent / "data" / "loghub.jsonl"
HDFS_COLUMNS = ["LineId", "Date", "Time", "Pid", "Level", "Component", "Content", "EventId", "EventTemplate"]
BGL_COLUMNS = ["LineId", "Label", "Timestamp", "Date", "Node", "Time", "NodeRepeat", "Type", "Component", "Level",
               "Content", "EventId", "EventTemplate"]
#: Label values as LogHub's BGL has them (alert categories), each distinctive enough to be searched for.
BGL_LABELS = {"kernel_dtlb": "KERNDTLB", "kernel_mc": "KERNMC", "app_read": "APPREAD", "mount_fail": "KERNMNTF"}


def bundled() -> list[Sample]:
    samples, skipped = load_samples(lh.BENCHMARK, files=[BUNDLED])
    assert skipped == 0
    return samples


def gold(s: Sample) -> str:
    lines = s.metadata["anomalous_lines"] or []
    if s.target == "anomalous":
        return f"VERDICT: ANOMALY\nLINES: {', '.join(map(str, lines))}"
    return "VERDICT: NORMAL\nLINES: NONE"


# --------------------------------------------------------------------------- generator


def test_the_generator_is_deterministic_and_the_bundle_is_its_output(tmp_path: Path) -> None:
    assert gen.generate(7) == gen.generate(7) and gen.generate(7) != gen.generate(8)
    gen.write_jsonl(gen.generate(), tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == BUNDLED.read_bytes()
    assert gen.main([str(tmp_path / "cli.jsonl")]) == 0
    assert (tmp_path / "cli.jsonl").read_bytes() == BUNDLED.read_bytes()


def test_generated_items_are_balanced_and_their_gold_lines_are_the_injected_ones() -> None:
    items = gen.generate()
    assert len(items) == 40 and len({i["id"] for i in items}) == 40
    for system in ("hdfs", "bgl"):
        mine = [i for i in items if i["system"] == system]
        assert sum(i["label"] == "anomalous" for i in mine) == sum(i["label"] == "normal" for i in mine) == 10
    kinds = {i["anomaly_type"] for i in items if i["label"] == "anomalous"}
    assert kinds == set(gen.HDFS_ANOMALIES) | set(gen.BGL_ANOMALIES)
    for item in items:
        bad = item["anomalous_lines"]
        assert bool(bad) == (item["label"] == "anomalous"), item["id"]
        assert all(1 <= n <= len(item["lines"]) for n in bad)
        text = "\n".join(item["lines"])
        if item["label"] == "normal":  # no anomaly marker in a normal window
            assert "FATAL" not in text and "FAILURE" not in text and "Exception" not in text, item["id"]
            assert "Unexpected error" not in text and "Failed to transfer" not in text, item["id"]
    hdfs = items[0]["lines"][0].split(" ", 5)
    assert hdfs[0].isdigit() and len(hdfs[0]) == 6 and hdfs[3] == "INFO" and hdfs[4].endswith(":")


# --------------------------------------------------------------------------- real LogHub formats


def _hdfs_csv(items: list[dict[str, Any]], path: Path, labels: dict[str, str] | None = None) -> dict[str, str]:
    """HDFS_*_structured.csv from the HDFS items (their lines interleaved) and anomaly_label.csv; block -> label."""
    rows, blocks = [], {}
    for item in items:
        block = lh._BLOCK.search(item["lines"][0])
        assert block is not None
        blocks[block.group(0)] = "Anomaly" if item["label"] == "anomalous" else "Normal"
    longest = max(len(i["lines"]) for i in items)
    for k in range(longest):  # interleaved, as sessions are in the real log
        for item in items:
            if k < len(item["lines"]):
                date, time, pid, level, component, content = item["lines"][k].split(" ", 5)
                rows.append([date, time, pid, level, component.rstrip(":"), content])
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HDFS_COLUMNS)
        for n, r in enumerate(rows, 1):
            w.writerow([n, *r, f"E{n % 29 + 1}", "Receiving block <*> src: /<*> dest: /<*>"])
    chosen = labels if labels is not None else blocks
    with (path.parent / "anomaly_label.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["BlockId", "Label"])
        for block, label in chosen.items():
            w.writerow([block, label])
    return blocks


def _bgl_csv(items: list[dict[str, Any]], path: Path, flip: bool = False) -> list[tuple[int, str]]:
    """BGL_*_structured.csv from the BGL items' lines, windows of lh.WINDOW lines; (line id, label) per row."""
    out = []
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(BGL_COLUMNS)
        n = 0
        for item in items:
            for k, line in enumerate(item["lines"], 1):
                n += 1
                ts, date, node, time, repeat, kind, component, level, content = line.split(" ", 8)
                label = BGL_LABELS[item["anomaly_type"]] if k in item["anomalous_lines"] else "-"
                if flip:
                    label = "-" if label != "-" else "KERNDTLB"
                w.writerow([n, label, ts, date, node, time, repeat, kind, component, level, content, "E3", content])
                out.append((n, label))
    return out


def test_hdfs_structured_csv_with_its_label_file(tmp_path: Path) -> None:
    items = [i for i in gen.generate() if i["system"] == "hdfs"]
    csv_path = tmp_path / "HDFS_2k.log_structured.csv"
    blocks = _hdfs_csv(items, csv_path)
    samples, skipped = load_samples(lh.BENCHMARK, files=[csv_path, tmp_path / "anomaly_label.csv"])
    assert skipped == 0 and [s.id for s in samples] == list(blocks)
    for s, item in zip(samples, items):
        assert s.metadata["lines"] == item["lines"]  # the line as the raw log has it, rebuilt from the columns
        assert s.target == item["label"] and s.metadata["anomalous_lines"] is None  # labels are per block
        assert lh.score_loghub(gold(s).split("\nLINES")[0], s).correct is True
    # a block the label file lacks is skipped and counted
    first = next(iter(blocks))
    _hdfs_csv(items, csv_path, labels={b: v for b, v in blocks.items() if b != first})
    samples, skipped = load_samples(lh.BENCHMARK, files=[csv_path, tmp_path / "anomaly_label.csv"])
    assert skipped == 1 and first not in {s.id for s in samples}


def test_bgl_structured_csv_windows(tmp_path: Path) -> None:
    items = [i for i in gen.generate() if i["system"] == "bgl"]
    csv_path = tmp_path / "BGL_2k.log_structured.csv"
    labels = _bgl_csv(items, csv_path)
    samples, _ = load_samples(lh.BENCHMARK, files=[csv_path])
    assert len(samples) == -(-len(labels) // lh.WINDOW)
    all_lines = [line for i in items for line in i["lines"]]
    for w, s in enumerate(samples):
        chunk = labels[w * lh.WINDOW:(w + 1) * lh.WINDOW]
        assert s.id == f"BGL_2k.log_structured-L{chunk[0][0]}"
        assert s.metadata["lines"] == all_lines[w * lh.WINDOW:(w + 1) * lh.WINDOW]
        bad = [k for k, (_, label) in enumerate(chunk, 1) if label != "-"]
        assert s.target == ("anomalous" if bad else "normal") and s.metadata["anomalous_lines"] == bad


def test_no_label_reaches_the_prompt(tmp_path: Path) -> None:
    """Flipping every label changes no prompt, and no label value or column name is in one."""
    items = gen.generate()
    bgl = [i for i in items if i["system"] == "bgl"]
    hdfs = [i for i in items if i["system"] == "hdfs"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _bgl_csv(bgl, tmp_path / "a" / "BGL_structured.csv")
    _bgl_csv(bgl, tmp_path / "b" / "BGL_structured.csv", flip=True)
    blocks = _hdfs_csv(hdfs, tmp_path / "a" / "HDFS_structured.csv")
    flipped = {b: "Normal" if v == "Anomaly" else "Anomaly" for b, v in blocks.items()}
    _hdfs_csv(hdfs, tmp_path / "b" / "HDFS_structured.csv", labels=flipped)
    loaded = {}
    for side in ("a", "b"):
        d = tmp_path / side
        loaded[side], _ = load_samples(lh.BENCHMARK, files=[d / "BGL_structured.csv", d / "HDFS_structured.csv",
                                                             d / "anomaly_label.csv"])
    a, b = loaded["a"], loaded["b"]
    assert [s.id for s in a] == [s.id for s in b] and [s.target for s in a] != [s.target for s in b]
    for sa, sb in zip(a, b):
        assert lh.prompt(sa) == lh.prompt(sb)
        log_block = lh.prompt(sa).split("```")[1]
        for value in [*BGL_LABELS.values(), "Anomaly", "Normal", "Label", "EventTemplate", "anomalous"]:
            assert value not in log_block, (sa.id, value)
    # the bundled items: the prompt is made from the lines alone
    for row in map(json.loads, BUNDLED.read_text().splitlines()):
        s = lh.to_sample(row, 0, None)  # type: ignore[arg-type]
        other = {**row, "label": "normal" if row["label"] == "anomalous" else "anomalous", "anomaly_type": "x",
                 "anomalous_lines": []}
        assert s is not None and lh.prompt(s) == lh.prompt(lh.to_sample(other, 0, None))  # type: ignore[arg-type]
        assert str(row["anomaly_type"]) not in lh.prompt(s) or row["anomaly_type"] is None


@pytest.mark.parametrize(("files", "message"), [
    (["HDFS_structured.csv"], "anomaly_label.csv"),
    (["bad_label/anomaly_label.csv", "HDFS_structured.csv"], "is not Normal or Anomaly"),
    (["notes.txt"], "loghub reads"),
    (["plain.csv"], "no Content column"),
])
def test_unusable_files_are_refused_clearly(tmp_path: Path, files: list[str], message: str) -> None:
    _hdfs_csv([i for i in gen.generate() if i["system"] == "hdfs"][:2], tmp_path / "HDFS_structured.csv")
    (tmp_path / "anomaly_label.csv").unlink()
    (tmp_path / "bad_label").mkdir()
    (tmp_path / "bad_label" / "anomaly_label.csv").write_text("BlockId,Label\nblk_1,Broken\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "plain.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DatasetLoadError, match=message):
        load_samples(lh.BENCHMARK, files=[tmp_path / f for f in files])


def test_a_csv_without_its_label_file_is_a_usage_error_before_any_request(pytester: pytest.Pytester) -> None:
    _hdfs_csv([i for i in gen.generate() if i["system"] == "hdfs"][:2], pytester.path / "HDFS_structured.csv")
    (pytester.path / "anomaly_label.csv").unlink()
    with serve(pytester, lambda prompt: "VERDICT: NORMAL") as project:
        result = project.run("loghub", str(pytester.path / "HDFS_structured.csv"), judge=False)
        assert project.server.requests == []
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "anomaly_label.csv" in "\n".join(result.errlines + result.outlines)


# --------------------------------------------------------------------------- scoring


def test_gold_scores_1_through_the_plugin_and_the_summary_has_the_anomaly_f1(pytester: pytest.Pytester) -> None:
    by_prompt = {lh.prompt(s): gold(s) for s in bundled()}
    with serve(pytester, lambda prompt: by_prompt[prompt]) as project:
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            cache = false

            [[models]]
            name = "test-model"  # a model the test server lists
            base_url = "{project.server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "loghub"
            """))
        result = pytester.runpytest("--jeval-config", str(suite), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=40)
    records = [json.loads(x) for x in (pytester.path / "out" / "loghub_test-model.jsonl").read_text().splitlines()]
    assert len(records) == 40 and all(r["is_correct"] is True and r["score"] == 1.0 for r in records)
    summary = json.loads((pytester.path / "out" / "loghub_test-model.jsonl.summary.json").read_text())
    assert summary["accuracy"] == 1.0 and summary["mean_line_f1"] == 1.0
    assert (summary["anomaly_precision"], summary["anomaly_recall"], summary["anomaly_f1"]) == (1.0, 1.0, 1.0)
    assert summary["confusion"] == {"true_positive": 20, "false_positive": 0, "false_negative": 0,
                                    "true_negative": 20, "unscored": 0}
    assert set(summary["per_subject"]) == {"hdfs", "bgl"}
    # the stored answers score the same again with the registered scorer
    from pytest_jeval.cli import main

    again = pytester.path / "out" / "again.jsonl"
    assert main(["rescore", str(pytester.path / "out" / "loghub_test-model.jsonl"), "-o", str(again)]) == 0
    rescored = [json.loads(x) for x in again.read_text().splitlines()]
    assert len(rescored) == 40 and all(r["is_correct"] is True for r in rescored)


def test_wrong_verdicts_score_0_and_empty_replies_are_unscored() -> None:
    for s in bundled():
        flipped = "VERDICT: NORMAL" if s.target == "anomalous" else "VERDICT: ANOMALY\nLINES: 1"
        result = lh.score_loghub(flipped, s)
        assert result.correct is False and not result.value, s.id
        assert lh.score_loghub("", s).unscored and lh.score_loghub("I am not sure.", s).unscored


def test_item_ids_do_not_depend_on_the_seed() -> None:
    full = [s.id for s in load_samples(lh.BENCHMARK, files=[BUNDLED], seed=1)[0]]
    assert full == [s.id for s in load_samples(lh.BENCHMARK, files=[BUNDLED], seed=2)[0]] == [
        i["id"] for i in gen.generate()]
    a = {s.id: s for s in load_samples(lh.BENCHMARK, files=[BUNDLED], seed=1, max_samples=12)[0]}
    b = {s.id: s for s in load_samples(lh.BENCHMARK, files=[BUNDLED], seed=7, max_samples=12)[0]}
    assert len(a) == len(b) == 12 and set(a) != set(b)
    for rid in set(a) & set(b):
        assert (a[rid].input, a[rid].target, a[rid].metadata) == (b[rid].input, b[rid].target, b[rid].metadata)


def test_verdict_and_line_parsing() -> None:
    s = next(x for x in bundled() if x.id == "hdfs-002")  # write_exception at lines 8 and 9
    assert s.metadata["anomalous_lines"] == [8, 9]
    assert lh.parse_reply("**Verdict:** Anomalous\n**Lines:** 8-9") == ("anomalous", [8, 9])
    assert lh.parse_reply("VERDICT: no anomaly found") == ("normal", None)
    assert lh.parse_reply("Line 8 looks abnormal, but overall this is normal.") == ("normal", None)
    assert lh.parse_reply("<think>NORMAL?</think>It is an ANOMALY.") == ("anomalous", None)
    half = lh.score_loghub("VERDICT: ANOMALY\nLINES: 9, 12", s)
    assert half.correct is True and half.metadata["line_f1"] == 0.5


def _rec(expected: str, predicted: str | None, error: str | None = None) -> dict[str, Any]:
    return {"expected": expected, "error": error, "scoring_metadata": {"predicted": predicted} if predicted else {}}


def test_summary_precision_recall_f1_of_the_anomaly_class() -> None:
    records = [_rec("anomalous", "anomalous"), _rec("anomalous", "anomalous"), _rec("anomalous", "normal"),
               _rec("anomalous", None), _rec("normal", "anomalous"), _rec("normal", "normal"),
               _rec("normal", None), _rec("normal", "normal", error="timeout")]
    summary = lh.summarize_loghub(records)
    # TP 2, FP 1, FN 2 (one said normal, one unscored): P = 2/3, R = 2/4, F1 = 4/7
    assert summary["anomaly_precision"] == round(2 / 3, 4) and summary["anomaly_recall"] == 0.5
    assert summary["anomaly_f1"] == round(4 / 7, 4)
    assert summary["confusion"] == {"true_positive": 2, "false_positive": 1, "false_negative": 2,
                                    "true_negative": 2, "unscored": 2}
    assert lh.summarize_loghub([])["anomaly_f1"] is None
